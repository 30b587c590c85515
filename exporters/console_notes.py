"""The console lines that say how far a run's figures can be trusted: request counts that add up,
warnings (failures, content-less successes, prompts off their target) and notes on estimated figures.

Every function reads a section of the summary's typed view (metrics.results.summary_view), which parsed
summary.json once, tolerating keys it does not know or that are missing (an older summary, or a section
another version adds to): each prints what it can.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from exporters.token_notes import tokenizer_disagreement
from exporters.workload_notes import prompt_cause

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Goodput, Requests, Run, Tokens

ERROR_RATE_WARNING = 0.05  # warn when more than this share of the measured requests failed
PROMPT_ERROR_WARNING = 0.10  # warn when the median |P − target| / target exceeds this

# How ITL per token split each gap, when not from per-chunk counts the server reported.
_ITL_BASIS = {
    "one_token_per_chunk": "each chunk counted as one token (the server reported no per-chunk token counts)",
    "one_token_per_event": "one token per stream event, empty events included (the server reported no counts)",
    "split_by_tokenizer": "each chunk's tokens counted by tokenizing its text (the server reported only a total)",
    "split_by_text_length": "the reported total spread over the chunks in proportion to their text length",
    "mixed": "the bases differ between requests",
}


def requests_line(req: Requests) -> str:
    """`records = sent + never_sent` and `records = ok + failed + cancelled`, both spelled out."""
    sent, never = req.sent, req.never_sent
    records = req.records if req.records is not None else sent  # schema 1: `sent` meant every record
    if req.records is None:
        sent = records - never
    ok, failed, cancelled = req.succeeded, req.failed_count(), req.cancelled
    line = f"requests: {records} = {sent} sent + {never} never sent"
    before = [("failed", req.failed_before_send), ("cancelled", req.cancelled_before_send)]
    if never and any(n for _, n in before):
        line += " (" + ", ".join(f"{name} {n}" for name, n in before if n) + " before sending)"
    lost = req.lost_with_worker
    if lost:  # whether they were sent is not known: their worker died with them
        line += f" + {lost} lost with a worker (in flight or never sent)"
    line += f"  |  {records} = ok {ok} + failed {failed} + cancelled {cancelled}"
    if req.planned_cancels:  # metrics.summary.cancels: the client's own, as planned
        line += f" ({req.planned_cancels} as planned by --cancel-rate)"
    if req.errors:
        line += "  |  errors: " + ", ".join(f"{k}={v}" for k, v in req.errors.items())
    return line


def goodput_line(good: Goodput, rate: str, attainment: str) -> str:
    slo = good.slo
    given = ", ".join(f"{k}={v}" for k, v in slo.items() if v is not None) if slo is not None else ""
    why = f"SLO {given}" if given else "no SLO given: every successful request with content counts as good"
    left_out = good.excluded_planned_cancels
    if left_out:
        why += f"; {left_out} planned cancellations and the turns they ended left out"
    return (f"goodput: {rate} req/s  attainment {attainment}"
            f"  ({good.good or 0}/{good.measured or 0} good; {why})")


def error_warning(req: Requests) -> str | None:
    """A warning when more than ERROR_RATE_WARNING of the measured requests failed (as `errors:rate`)."""
    measured, failed = req.in_window, req.in_window_failed
    if not measured or failed / measured <= ERROR_RATE_WARNING:
        return None
    ok = req.in_window_ok
    tail = ("no measured request succeeded, so there are no latency figures" if ok == 0
            else f"latencies describe only the {ok} that succeeded")
    return (f"WARNING: {failed} of {measured} measured requests failed ({failed / measured:.1%}"
            f" > {ERROR_RATE_WARNING:.0%}); {tail}")


def content_warning(req: Requests) -> str | None:
    """Successes that streamed no content: counted ok, never good, no latency samples."""
    empty = req.ok_without_content
    if not empty:
        return None
    return (f"WARNING: {empty} of {req.in_window_ok} successful measured requests streamed no content"
            " (a finish_reason but no text): they count as ok but never as good, and add no latency samples")


def prompt_warning(tokens: Tokens, run: Run) -> str | None:
    """A warning when the median relative prompt-length error exceeds PROMPT_ERROR_WARNING."""
    accuracy = tokens.prompt_accuracy
    p50 = accuracy.abs_rel_error_p50 if accuracy is not None else None
    if accuracy is None or p50 is None or p50 <= PROMPT_ERROR_WARNING:
        return None
    mean = accuracy.mean_error_tokens
    mean_text = f", mean error {mean:+.0f} tokens" if mean is not None else ""
    return (f"WARNING: prompts missed their target length: median error {p50:.0%} of the target over"
            f" {_requests(accuracy.count)} requests (server-counted{mean_text}); {prompt_cause(run)}")


def _requests(n: int | None) -> str:
    return "?" if n is None else str(n)


def image_note(tokens: Tokens) -> str | None:
    """Requests with images: their prompt tokens hold the server's image tokens, which the client does not
    estimate, so they are left out of the prompt-length check."""
    imaged = tokens.image_requests
    if not imaged:
        return None
    estimated = " (and a client-counted ~ prompt holds no image tokens)" if tokens.prompt_estimated else ""
    return (f"note: {imaged} of {_requests(tokens.requests)} requests carried images: their prompt tokens are the"
            f" server's count, image tokens included{estimated}; the prompt-length check leaves them out")


def _basis_text(basis: str | dict[str, int] | None) -> str | None:
    if isinstance(basis, str) and basis:
        return basis
    if isinstance(basis, dict) and basis:
        return ", ".join(f"{k} {v}" for k, v in basis.items())
    return None


def estimate_notes(tokens: Tokens) -> list[str]:
    """Why figures marked `~` are estimates, and how ITL per token was split when not reported."""
    notes = []
    requests = _requests(tokens.requests)
    out_est = tokens.output_estimated
    if out_est:
        basis = _basis_text(tokens.output_estimate_basis)
        if basis is None:  # the token sources say how each request's k_j (and so N = Σk_j) was counted
            sources = _basis_text(tokens.token_source)
            basis = f"not recorded; token sources {sources}" if sources else "not recorded"
        notes.append(f"note: ~ output tokens are estimates for {out_est} of {requests} requests (no usage from"
                     f" the server; basis: {basis}); TPOT divides by them")
        notes += filter(None, [tokenizer_disagreement(tokens)])
    prompt_est = tokens.prompt_estimated
    if prompt_est:
        notes.append(f"note: ~ prompt tokens are the client's count for {prompt_est} of {requests} requests"
                     " (no usage from the server)")
    notes += filter(None, [image_note(tokens)])
    basis = tokens.itl_token_basis
    if basis is not None and basis != "reported":
        how = _ITL_BASIS.get(basis, f"basis: {basis}")
        per_request = _basis_text(tokens.itl_token_bases)
        if basis == "mixed" and per_request:
            how += f" (requests per basis: {per_request})"
        notes.append(f"note: ITL per token (summary itl_token_s) is not from reported per-chunk counts: {how}")
    return notes


def estimated_marks(tokens: Tokens) -> tuple[str, str]:
    """The marks for output tok/s and total tok/s: `~` when any of their tokens were estimated."""
    out = "~" if tokens.output_estimated else ""
    total = "~" if out or tokens.prompt_estimated else ""
    return out, total
