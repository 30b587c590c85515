"""Dispatching one run from several processes: worker processes on this host (`goodput run --workers N`) or
Ray actors on a cluster's nodes (`--ray`). See docs/scale-out.md."""
