"""A run's engine steps as the reference server recorded them (engine_steps.jsonl, loadgen.run.engine_steps).

The server timed each step and knows what it computed (prefill tokens and their context, decoding
sequences and the KV tokens they read), so these steps need no reconstruction from chunk times
(loadgen.predict.steps): a long prompt's earlier prefill chunks are in them, and a step where nothing
decoded has its duration too. `read_engine_steps` gives them as `Step`s, or None when the run has no such
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
        steps = []
        for row in lines[1:]:
            d, p, pc, dec, kv = (row[i] for i in at)
            if not (isinstance(d, int | float) and d > 0):
                raise ValueError(f"a step of duration {d!r}")
            steps.append(Step(StepFeatures(int(p), float(pc), int(dec), int(kv)), float(d)))
    except (OSError, ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"{path} is malformed ({type(exc).__name__}: {exc})") from None
    return steps
