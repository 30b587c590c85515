"""The `tokens` section: how many tokens, how they were counted, and how well the workload hit its
prompt-length targets.

All figures are over the measured requests that completed (status "ok"), like the throughputs.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import numpy.typing as npt

from metrics.frame import RequestFrame

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


def itl_token_basis(frame: RequestFrame, include: BoolArray) -> str | None:
    """Where ITL-per-token's k_j came from: `reported` per chunk, `one_token_per_chunk`, or `mixed`."""
    known = frame.tokens_known[include]
    if known.size == 0:
        return None
    if known.all():
        return "reported"
    return "one_token_per_chunk" if not known.any() else "mixed"


def _summary3(values: FloatArray) -> dict[str, float | None]:
    if values.size == 0:
        return {"mean": None, "p50": None, "p99": None}
    p50, p99 = np.percentile(values, [50, 99])
    return {"mean": float(values.mean()), "p50": float(p50), "p99": float(p99)}


def prompt_accuracy(frame: RequestFrame, include: BoolArray) -> dict[str, Any]:
    """Error P − target over requests with a target and a server-reported P (not an estimate).

    Relative error is |P − target| / target (targets of 0 are left out of it).
    """
    use = include & ~np.isnan(frame.prompt_target) & ~np.isnan(frame.prompt_tokens) & ~frame.prompt_estimated
    target = frame.prompt_target[use]
    error = frame.prompt_tokens[use] - target
    positive = target > 0
    return {
        "count": int(use.sum()),
        "mean_error_tokens": float(error.mean()) if error.size else None,
        "abs_error_tokens": _summary3(np.abs(error)),
        "abs_rel_error": _summary3(np.abs(error[positive]) / target[positive]),
    }


def tokens_section(frame: RequestFrame, include: BoolArray) -> dict[str, Any]:
    n_out = frame.output_tokens[include]
    p = frame.prompt_tokens[include]
    c = frame.cached_tokens[include]
    sources = Counter(src for src, keep in zip(frame.token_source, include.tolist(), strict=True) if keep)
    return {
        "requests": int(include.sum()),
        "output_tokens": int(np.nansum(n_out)),
        "prompt_tokens": int(np.nansum(p)),
        "cached_tokens": int(np.nansum(c)),
        "output_estimated": int(frame.output_estimated[include].sum()),
        "prompt_estimated": int((frame.prompt_estimated[include] & ~np.isnan(p)).sum()),
        "prompt_unknown": int(np.isnan(p).sum()),
        "cached_unknown": int(np.isnan(c).sum()),
        "token_source": dict(sorted(sources.items())),
        "itl_token_basis": itl_token_basis(frame, include),
        "prompt_accuracy": prompt_accuracy(frame, include),
    }
