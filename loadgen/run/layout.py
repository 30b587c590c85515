"""What a run directory's main files are called and how a run's spec reads as metric settings.

Light on purpose: a run imports this before its first request is sent, while the machinery that turns
records into result files (loadgen.run.outputs, pyarrow among it) is imported only after the last one.
"""

from __future__ import annotations

from loadgen.spec import RunSpec
from metrics import SLO
from metrics.results import RECORDS_FILE as RECORDS_FILE
from metrics.results import RUN_FILE as RUN_FILE
from metrics.results import RUN_SCHEMA_VERSION as RUN_SCHEMA_VERSION
from metrics.summary import DEFAULT_OUTPUT_EDGES, DEFAULT_PROMPT_EDGES, SummaryConfig


def summary_config_of(spec: RunSpec, schedule_end: float | None, *, slo: SLO | None = None) -> SummaryConfig:
    """The metric settings of a run (`slo`, a parsed SLO, replaces the spec's)."""
    m, load = spec.metrics, spec.load
    return SummaryConfig(slo=slo if slo is not None else m.slo, warmup_s=load.warmup_s, cooldown_s=load.cooldown_s,
                         schedule_end_s=schedule_end,
                         prompt_bucket_edges=m.prompt_bucket_edges or DEFAULT_PROMPT_EDGES,
                         output_bucket_edges=m.output_bucket_edges or DEFAULT_OUTPUT_EDGES,
                         cache_full_ratio=m.cache_full_ratio, absent_cache_is_zero=m.absent_cache_is_zero,
                         stall_threshold_s=m.stall_threshold_s, lag_threshold_s=m.lag_threshold_s)
