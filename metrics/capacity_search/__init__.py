"""The capacity search: the highest request rate whose SLO attainment is shown, with stated confidence, to
meet a target. Pure arithmetic over probes (`search.py`) and proportion intervals (`proportion.py`); the
load generator runs the probes (`loadgen/sweep/`)."""
