"""Turning records into every output of a run. `goodput run` and `goodput report` share this, so a report
rebuilt from `records.jsonl` is the same as the one the run wrote.

`run.json` is written when a run starts (its `RunSpec`, what was resolved at start such as the target and
where the measurement window ends, the anchor wall time) and again when it ends; `records.jsonl` grows as
requests finish. Together they are enough to rebuild everything else. A run.json of schema 1 (a
`settings` mapping instead of the spec) is still read.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from exporters import write_records_parquet, write_summary_csv
from loadgen.run.layout import RECORDS_FILE as RECORDS_FILE
from loadgen.run.layout import RUN_FILE as RUN_FILE
from loadgen.run.layout import summary_config_of
from loadgen.run.roofline import RooflineSpecJSON, roofline_section, roofline_spec
from loadgen.spec import RunSpec
from metrics import SLO, parse_slo
from metrics.latency import Samples
from metrics.records import (
    InputReport,
    RequestFrame,
    copy_records,
    frame_from_table,
    read_jsonl_frame,
    read_records_checked,
)
from metrics.results import RECORDS_PARQUET_FILE, SUMMARY_CSV_FILE, write_summary
from metrics.results import read_run as read_run
from metrics.summary import SummaryConfig, summarize_frame

if TYPE_CHECKING:
    from metrics.results import Json, JsonObject, RunDocument


def summary_config(settings: Mapping[str, Json], slo: SLO) -> SummaryConfig:
    """The metric settings a run was made with (a schema-1 run.json's `settings`, or defaults), as the
    metrics package wants them; ValueError names a setting of the wrong type."""
    d = SummaryConfig(slo=slo)
    get = settings.get
    return SummaryConfig(
        slo=slo, warmup_s=_number(get("warmup_s"), "warmup_s", d.warmup_s),
        cooldown_s=_number(get("cooldown_s"), "cooldown_s", d.cooldown_s),
        schedule_end_s=_number(get("schedule_end_s"), "schedule_end_s", d.schedule_end_s),
        prompt_bucket_edges=_edges(get("prompt_bucket_edges"), "prompt_bucket_edges", d.prompt_bucket_edges),
        output_bucket_edges=_edges(get("output_bucket_edges"), "output_bucket_edges", d.output_bucket_edges),
        cache_full_ratio=_number(get("cache_full_ratio"), "cache_full_ratio", d.cache_full_ratio),
        absent_cache_is_zero=_flag(get("absent_cache_is_zero"), "absent_cache_is_zero", d.absent_cache_is_zero),
        stall_threshold_s=_number(get("stall_threshold_s"), "stall_threshold_s", d.stall_threshold_s),
        lag_threshold_s=_number(get("lag_threshold_s"), "lag_threshold_s", d.lag_threshold_s))

_N = TypeVar("_N", float, float | None)


def _number(value: object, key: str, default: _N) -> float | _N:
    if value is None:
        return default
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    raise ValueError(f"run.json: settings.{key} must be a number, got {value!r}")


def _flag(value: object, key: str, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise ValueError(f"run.json: settings.{key} must be true or false, got {value!r}")


def _edges(value: object, key: str, default: Sequence[int]) -> Sequence[int]:
    if not value:
        return default
    if isinstance(value, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        return tuple(value)
    raise ValueError(f"run.json: settings.{key} must be a list of integers, got {value!r}")


def stored_slo(run: RunDocument) -> SLO | None:
    """The SLO items stored in a run's `settings` (schema 1; on schema 2, what `goodput report --slo` judged
    it with), parsed: the edge where a run directory's SLO text is read back. None when there are none."""
    items = run.settings_slo
    if not items:
        return None
    if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"run.json: settings.slo must be a list of SLO items, got {items!r}")
    return parse_slo([str(i) for i in items])


def run_summary_config(run: RunDocument, *, slo: SLO | None = None) -> SummaryConfig:
    """The metric settings of a run from its run.json: the spec (schema 2) or the settings (schema 1).
    `slo` replaces the run's SLOs (a re-judgement)."""
    if not run.has_spec:
        stored = stored_slo(run)  # checked even when replaced, as a schema-1 run.json always was
        return summary_config(dict(run.settings or {}), slo if slo is not None else stored or SLO())
    if slo is None:
        slo = stored_slo(run)  # `goodput report --slo` on a schema-2 run
    return summary_config_of(RunSpec.from_json(run.spec), run.schedule_end_s, slo=slo)


def run_roofline(run: RunDocument) -> RooflineSpecJSON | None:
    """The deployment a run's roofline floors are computed for, if any."""
    return roofline_spec(run.roofline)


def _tune_memory() -> None:
    """Keep numpy and Arrow off transparent huge pages for the few large arrays of a report.

    Summarising a large run allocates and frees 100 MB-scale arrays in turn. Backed by huge pages, a fresh
    one can stall in the kernel (compaction, or in a VM that hands free pages back to its host,
    refaulting them): measured here (bench/README.md), numpy's huge-page advice cost up to 0.4 s per
    160 MB array, and Arrow's default mimalloc pool, which uses huge pages, spent 0.2–3.1 s of system
    time parsing a 327 MiB records.jsonl where the system allocator spent 0.4–0.7 s. The TLB savings are
    small for a few linear passes. numpy: its documented NUMPY_MADVISE_HUGEPAGE=0, set at run time;
    Arrow: the system memory pool. Process-wide; it runs for a report or at the end of a run.
    """
    import numpy._core.multiarray as multiarray
    import pyarrow as pa

    setter = getattr(multiarray, "_set_madvise_hugepage", None)
    if setter is not None:
        setter(False)
    pa.set_memory_pool(pa.system_memory_pool())


@dataclass(slots=True)
class Outputs:
    """What writing a run's outputs produced: the summary, and the frame and sorted gap samples behind
    it (so metrics.prom can be rebuilt without deriving them again)."""

    summary: JsonObject
    frame: RequestFrame
    gap_samples: tuple[Samples, Samples]  # ITL, ITL per token
    input: InputReport  # what reading records.jsonl found (also summary["input"])
    run: RunDocument  # run.json as the summary was built from it


def write_outputs(out_dir: Path, run: Mapping[str, Json]) -> JsonObject:
    """Write summary.json, summary.csv and records.parquet from records.jsonl; return the summary.

    Always from the file (never from records held in memory), so `goodput report` rebuilds exactly
    what the run wrote. Lines that are not records are left out of every output and accounted for in
    summary["input"] (metrics.records.record_check), whichever reader read the file.
    """
    return build_outputs(out_dir, run).summary


def _arrow_table(records: Path) -> tuple[Any, InputReport | None]:
    """Arrow's parse of the records and its report; (None, None) when Arrow cannot read them."""
    import pyarrow as pa

    try:
        return read_records_checked(records)
    except pa.ArrowException:  # lines Arrow cannot type consistently: the line-by-line reader copes
        return None, None


def _frame(records: Path, table: Any) -> RequestFrame | None:
    import pyarrow as pa

    if table is not None:
        try:
            return frame_from_table(table)
        except pa.ArrowException:  # a column Arrow typed in a way the frame cannot read: the line reader copes
            pass
    return None


@contextmanager
def _records_only(records: Path, report: InputReport) -> Iterator[Path]:
    """records.jsonl itself when nothing in it was skipped; else a temporary copy of its records alone, so
    that records.parquet, whichever way it is written, holds exactly the records the summary counts."""
    if not report.skipped:
        yield records
        return
    fd, name = tempfile.mkstemp(dir=records.parent, prefix=f".{records.name}.", suffix=".records.tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            copy_records(records, report, out)
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def build_outputs(out_dir: Path, run: Mapping[str, Json], *, slo: SLO | None = None) -> Outputs:
    """`write_outputs`, keeping what the summary was derived from; `slo` replaces the run's SLOs."""
    import pyarrow as pa

    from metrics.results import RunDocument  # the view of run.json, loaded after the run's last request

    doc = RunDocument.from_json(run)
    _tune_memory()
    records = out_dir / RECORDS_FILE
    table, report = _arrow_table(records)  # one parse (Arrow, every core) serves the frame and records.parquet
    pa.default_memory_pool().release_unused()  # the parser's scratch memory, back before summarising
    frame = None
    if report is None:  # Arrow could not read the file: line by line, the same lines skipped for the same reasons
        frame, report = read_jsonl_frame(records)
    with _records_only(records, report) as source:
        if table is None and source != records:  # the records alone may well be typable where the file was not
            table, _ = _arrow_table(source)
        # records.parquet is written on a second thread (Arrow's writer releases the GIL) while this one
        # summarises; the table is dropped as soon as both are done with it.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet") as pool:
            parquet = pool.submit(write_records_parquet, out_dir / RECORDS_PARQUET_FILE, source, table)
            if frame is None:
                frame = _frame(records, table)
            if frame is None:
                frame, _ = read_jsonl_frame(records)
            del table
            summary, per = summarize_frame(frame, run_summary_config(doc, slo=slo), dict(run))
            parquet_error = parquet.exception()  # summary.json and summary.csv are written whatever happened
    pa.default_memory_pool().release_unused()
    from metrics.results import json_object  # the summary's JSON types, loaded with the summary

    summary["input"] = json_object(report.to_json())
    spec = run_roofline(doc)
    if spec:
        summary["roofline"] = json_object(roofline_section(summary, spec))
    write_summary(out_dir, summary)
    write_summary_csv(out_dir / SUMMARY_CSV_FILE, summary)
    if parquet_error is not None:
        raise parquet_error
    return Outputs(summary, frame, (per.samples["itl_s"], per.samples["itl_token_s"]), report, doc)
