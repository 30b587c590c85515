"""The `tokens` section: how many tokens, how they were counted, and how well the workload hit its
prompt-length targets.

All figures are over the measured requests that completed (status "ok"), like the throughputs.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from metrics.records import RequestFrame

if TYPE_CHECKING:  # the views are imported where a summary is made: a run imports this before its first request
    from metrics.results import PrefixCacheShare, PromptAccuracy, Spread, Tokens

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


# token_source → how the k_j behind ITL per token were obtained. A source not listed here that came
# with per-chunk counts is taken as reported (records only ever held the sources of metrics.records.record).
_ITL_BASIS: dict[str, str] = {
    "usage_delta": "reported",
    "server": "reported",
    "final_split_by_tokenizer": "split_by_tokenizer",
    "estimate_tokenizer": "split_by_tokenizer",
    "final_split_by_text_length": "split_by_text_length",
    "estimate_token_events": "one_token_per_event",
    "estimate_token_events_tokenizer_low": "one_token_per_event",
    "estimate_token_events_tokenizer_high": "one_token_per_event",
    "estimate": "one_token_per_chunk",
}
# token_source → how N was estimated, for the requests whose output_tokens is an estimate.
_OUTPUT_ESTIMATE_BASIS: dict[str, str] = {
    "estimate_tokenizer": "tokenizer",
    "estimate_token_events": "one_token_per_event",
    # one token per event although a tokenizer was given, because it counted fewer / far more
    "estimate_token_events_tokenizer_low": "one_token_per_event_tokenizer_low",
    "estimate_token_events_tokenizer_high": "one_token_per_event_tokenizer_high",
    "estimate": "one_token_per_chunk",
    "server": "server_chunk_counts",
}


def itl_token_bases(frame: RequestFrame, include: BoolArray) -> dict[str, int]:
    """Requests per basis of ITL per token: `reported` (the server counted each chunk), `split_by_tokenizer`,
    `split_by_text_length`, `one_token_per_event` or `one_token_per_chunk` (then ITL per token is the
    per-chunk ITL). A request without content chunks (e.g. `final_only`) has no ITL and no basis."""
    with_chunks = include & (frame.chunk_count > 0)
    rows = zip(frame.token_source, frame.tokens_known.tolist(), with_chunks.tolist(), strict=True)
    bases = Counter(
        _ITL_BASIS.get(src, "reported") if known else "one_token_per_chunk" for src, known, keep in rows if keep
    )
    return dict(sorted(bases.items()))


def itl_token_basis(frame: RequestFrame, include: BoolArray) -> str | None:
    """The one basis of ITL per token (see `itl_token_bases`), `mixed` when requests differ, None when
    there is no request."""
    bases = itl_token_bases(frame, include)
    if not bases:
        return None
    return next(iter(bases)) if len(bases) == 1 else "mixed"


def output_estimate_bases(frame: RequestFrame, include: BoolArray) -> dict[str, int]:
    """Requests whose N is an estimate, per estimate: `tokenizer` (the received text tokenized with the
    run's tokenizer), `one_token_per_event` (empty token events included), `one_token_per_event_tokenizer_low`
    / `_high` (one per event because the run's tokenizer counted fewer / far more, loadgen.http.chunk_tokens),
    `one_token_per_chunk` (older records), `server_chunk_counts` (the server's per-chunk counts summed,
    no final usage)."""
    rows = zip(frame.token_source, (include & frame.output_estimated).tolist(), strict=True)
    bases = Counter(_OUTPUT_ESTIMATE_BASIS.get(src, src) for src, keep in rows if keep)
    return dict(sorted(bases.items()))


def _summary3(values: FloatArray) -> Spread:
    from metrics.results import Spread

    if values.size == 0:
        return Spread()
    p50, p99 = np.percentile(values, [50, 99])
    return Spread(float(values.mean()), float(p50), float(p99))


def _accuracy(frame: RequestFrame, use: BoolArray, later: BoolArray | None = None,
              imaged: BoolArray | None = None) -> PromptAccuracy:
    """The figures over `use`; `later` and `imaged` (when any): the later turns' own figures, the requests
    left out for their images."""
    from metrics.results import PromptAccuracy

    target = frame.prompt_target[use]
    error = frame.prompt_tokens[use] - target
    positive = target > 0
    return PromptAccuracy(
        count=int(use.sum()),
        mean_error_tokens=float(error.mean()) if error.size else None,
        abs_error_tokens=_summary3(np.abs(error)),
        abs_rel_error=_summary3(np.abs(error[positive]) / target[positive]),
        later_turns=_accuracy(frame, later) if later is not None and later.any() else None,
        image_requests=int(imaged.sum()) if imaged is not None and imaged.any() else None,
    )


def prompt_accuracy(frame: RequestFrame, include: BoolArray) -> PromptAccuracy:
    """Error P − target over requests with a target and a server-reported P (not an estimate).

    Relative error is |P − target| / target (targets of 0 are left out of it). The figures are over the
    prompts the workload sized entirely (single requests and first turns); a conversation's later turns,
    whose prompts hold the answers as streamed, are `later_turns`, compared with the prompt each sent (the
    history as the server counted it, plus the new message's target).
    Requests that carried images are left out: the server's count holds the image tokens, which the
    client neither sizes nor counts (`image_requests` says how many were left out).
    """
    use = include & ~np.isnan(frame.prompt_target) & ~np.isnan(frame.prompt_tokens) & ~frame.prompt_estimated
    imaged = use & image_requests(frame)
    use &= ~imaged
    later = use & (frame.turn > 1)  # NaN (a lone request) compares False
    return _accuracy(frame, use & ~later, later, imaged)


def image_requests(frame: RequestFrame) -> BoolArray:
    """Which requests carried at least one image."""
    if frame.images.shape[0] != frame.n:
        return np.zeros(frame.n, dtype=np.bool_)
    return np.asarray(frame.images > 0)


def cache_share(frame: RequestFrame, include: BoolArray) -> PrefixCacheShare:
    """Prompt tokens served from the prefix cache over the included requests that reported both P and C:
    `cached_tokens` / `prompt_tokens` is the measured hit ratio (None when no request reported both)."""
    both = include & ~np.isnan(frame.prompt_tokens) & ~np.isnan(frame.cached_tokens)
    prompt = float(frame.prompt_tokens[both].sum())
    cached = float(frame.cached_tokens[both].sum())
    from metrics.results import PrefixCacheShare

    return PrefixCacheShare(int(both.sum()), int(prompt), int(cached), cached / prompt if prompt > 0 else None)


def tokens_section(frame: RequestFrame, include: BoolArray) -> Tokens:
    from metrics.results import Tokens

    n_out = frame.output_tokens[include]
    p = frame.prompt_tokens[include]
    c = frame.cached_tokens[include]
    sources = Counter(src for src, keep in zip(frame.token_source, include.tolist(), strict=True) if keep)
    return Tokens(
        requests=int(include.sum()),
        output_tokens=int(np.nansum(n_out)),
        prompt_tokens=int(np.nansum(p)),
        cached_tokens=int(np.nansum(c)),
        output_estimated=int(frame.output_estimated[include].sum()),
        prompt_estimated=int((frame.prompt_estimated[include] & ~np.isnan(p)).sum()),
        prompt_unknown=int(np.isnan(p).sum()),
        image_requests=int(image_requests(frame)[include].sum()),
        cached_unknown=int(np.isnan(c).sum()),
        token_source=dict(sorted(sources.items())),
        output_estimate_basis=output_estimate_bases(frame, include),
        itl_token_basis=itl_token_basis(frame, include),
        itl_token_bases=itl_token_bases(frame, include),
        prompt_accuracy=prompt_accuracy(frame, include),
        prefix_cache=cache_share(frame, include),
    )
