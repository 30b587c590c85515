"""A run's engine steps as the reference server recorded them (engine_steps.jsonl, loadgen.run.engine_steps).

The server timed each step and knows what it computed (prefill tokens and their context, decoding
sequences and the KV tokens they read), so these steps need no reconstruction from chunk times
(loadgen.predict.steps): a long prompt's earlier prefill chunks are in them, and a step where nothing
decoded has its duration too. A step's time is its duration plus the next step's lead (the engine loop's
time between two busy steps: what a step costs beyond its own work, which the next step waits for), as a
chunk's time measures it. `read_engine_steps` gives them as `Step`s, or None when the run has no such
file; a file of the wrong shape is one ValueError naming it.
"""

from __future__ import annotations

import json
from pathlib import Path

from loadgen.predict.step_model import StepFeatures
from loadgen.predict.steps import Step
from metrics.results import ENGINE_STEPS_FILE

NEEDED = ("duration_s", "prefill_tokens", "prefill_ctx", "decode_seqs", "kv_tokens")


def read_engine_steps(run_dir: Path) -> list[Step] | None:
    path = run_dir / ENGINE_STEPS_FILE
    if not path.is_file():
        return None
    try:
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        fields = lines[0]["fields"]
        at = [fields.index(name) for name in NEEDED]
        seq, lead = fields.index("seq"), fields.index("lead_s")
        rows = lines[1:]
        steps = []
        for j, row in enumerate(rows):
            d, p, pc, dec, kv = (row[i] for i in at)
            if not (isinstance(d, int | float) and d > 0):
                raise ValueError(f"a step of duration {d!r}")
            nxt = rows[j + 1] if j + 1 < len(rows) else None
            if nxt is not None and nxt[seq] == row[seq] + 1 and isinstance(nxt[lead], int | float):
                d += max(0.0, float(nxt[lead]))
            steps.append(Step(StepFeatures(int(p), float(pc), int(dec), int(kv)), float(d)))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"{path} is malformed ({type(exc).__name__}: {exc})") from None
    return steps
