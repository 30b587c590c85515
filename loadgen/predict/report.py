"""What predict.json says besides its points: the workload and load predicted (the run spec's own JSON,
so a measured directory's run.json compares with it key for key), the server model used, and the console's
lines on the --measured directories (what differs from the prediction, and the capacity's error)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadgen.predict.measured import WORKLOAD_KEYS, setting_text
from loadgen.predict.step_model import PARAMS, StepModel
from loadgen.spec import RunSpec


def workload_text(workload: dict[str, Any]) -> str:
    """'prompt tokens 1024, output tokens 32' (the WORKLOAD_KEYS settings that are set)."""
    parts = [f"{name} {setting_text(workload[key])}" for key, name in WORKLOAD_KEYS
             if workload.get(key) not in (None, 0, False, [])]
    return ", ".join(parts) or "synthetic"


def prediction_context(spec: RunSpec, model: StepModel, path: Path) -> dict[str, Any]:
    """predict.json's `spec` (the workload and load sections of the run spec) and `model`."""
    data = spec.to_json()
    return {
        "spec": {"workload": data["workload"], "load": data["load"]},
        "workload": workload_text(data["workload"]),
        "model": {"path": str(path), "form": "overlapped" if model.overlap else "additive",
                  "params": {n: {"value": getattr(model, n), "std_err": model.std_err.get(n)} for n in PARAMS},
                  "limits": {"max_num_seqs": model.limits.max_num_seqs,
                             "max_num_batched_tokens": model.limits.max_num_batched_tokens,
                             "block_size": model.limits.block_size, "num_blocks": model.limits.num_blocks,
                             "prefix_caching": model.limits.enable_prefix_caching}},
    }


def measured_lines(entries: list[dict[str, Any]]) -> list[str]:
    """The console's lines on each --measured directory: a WARNING for each workload setting that differs,
    a note for what is not compared, and the capacity's error."""
    lines = []
    for e in entries:
        for d in e["workload_differences"]:
            lines.append(f"WARNING: {e['label']} measured another workload than the one predicted ({d})")
        lines += [f"note: {n}" for n in e["notes"]]
        cap = e.get("capacity")
        if cap and cap["error_pct"] is not None:
            lines.append(f"{e['label']}: measured capacity {cap['measured']['rate']:.3g} req/s, predicted "
                         f"{cap['predicted']['rate']:.3g} ({cap['error_pct']:+.1f} %)")
    return lines
