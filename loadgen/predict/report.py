"""What predict.json says besides its points: the workload and load predicted (the run spec's own JSON,
so a measured directory's run.json compares with it key for key), the server model used, and the console's
lines on the --measured directories (what differs from the prediction, and the capacity's error)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from loadgen.predict.measured import setting_text, workload_keys
from loadgen.predict.step_model import PARAMS, StepModel
from loadgen.spec import RunSpec
from metrics.results import Json, JsonObject, MeasuredComparison, ParamFit, ServerModelInfo, json_object


def workload_text(workload: Mapping[str, Json]) -> str:
    """'prompt tokens 1024, output tokens 32' (the WORKLOAD_KEYS settings that are set and apply)."""
    parts = [f"{name} {setting_text(workload[key])}" for key, name in workload_keys(workload)
             if workload.get(key) not in (None, 0, False, [])]
    return ", ".join(parts) or "synthetic"


def _section(data: JsonObject, name: str) -> JsonObject:
    """A section of the run spec's JSON (an object, as RunSpec.to_json writes every section), copied."""
    value = data[name]
    if not isinstance(value, dict):
        raise TypeError(f"the run spec's {name} is not an object")
    return json_object(value)


def prediction_context(spec: RunSpec, model: StepModel, path: Path) -> tuple[JsonObject, str, ServerModelInfo]:
    """predict.json's `spec` (the workload and load sections of the run spec), `workload` and `model`."""
    data = spec.to_json()
    workload, load = _section(data, "workload"), _section(data, "load")
    limits = model.limits
    info = ServerModelInfo(
        str(path), "overlapped" if model.overlap else "additive",
        {n: ParamFit(getattr(model, n), model.std_err.get(n)) for n in PARAMS},
        {"max_num_seqs": limits.max_num_seqs, "max_num_batched_tokens": limits.max_num_batched_tokens,
         "block_size": limits.block_size, "num_blocks": limits.num_blocks,
         "prefix_caching": limits.enable_prefix_caching})
    return {"workload": workload, "load": load}, workload_text(workload), info


def measured_lines(entries: Sequence[MeasuredComparison]) -> list[str]:
    """The console's lines on each --measured directory: a WARNING for each workload setting that differs,
    a note for what is not compared, and the capacity's error."""
    lines = []
    for e in entries:
        for d in e.workload_differences:
            lines.append(f"WARNING: {e.label} measured another workload than the one predicted ({d})")
        lines += [f"note: {n}" for n in e.notes]
        cap = e.capacity
        if cap and cap.error_pct is not None:
            lines.append(f"{e.label}: measured capacity {cap.measured.rate or 0.0:.3g} req/s, predicted "
                         f"{cap.predicted.rate:.3g} ({cap.error_pct:+.1f} %)")
    return lines
