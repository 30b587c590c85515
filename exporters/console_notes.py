"""The console lines that say how far a run's figures can be trusted: request counts that add up,
warnings (failures, content-less successes, prompts off their target) and notes on estimated figures.

Every function reads a `summary.json` dict and tolerates keys it does not know or that are missing
(an older summary, or a section another version adds to), printing what it can.
"""

from __future__ import annotations

from typing import Any

from exporters.token_notes import tokenizer_disagreement
from exporters.workload_notes import prompt_cause

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


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def requests_line(req: dict[str, Any]) -> str:
    """`records = sent + never_sent` and `records = ok + failed + cancelled`, both spelled out."""
    sent = _int(req.get("sent"))
    never = _int(req.get("never_sent"))
    records = _int(req.get("records")) if "records" in req else sent  # schema 1: `sent` meant every record
    if "records" not in req:
        sent = records - never
    ok, failed, cancelled = (_int(req.get(k)) for k in ("succeeded", "failed", "cancelled"))
    line = f"requests: {records} = {sent} sent + {never} never sent"
    before = [(k, _int(req.get(f"{k}_before_send"))) for k in ("failed", "cancelled")]
    if never and any(n for _, n in before):
        line += " (" + ", ".join(f"{name} {n}" for name, n in before if n) + " before sending)"
    lost = _int(req.get("lost_with_worker"))
    if lost:  # whether they were sent is not known: their worker died with them
        line += f" + {lost} lost with a worker (in flight or never sent)"
    line += f"  |  {records} = ok {ok} + failed {failed} + cancelled {cancelled}"
    if _int(req.get("planned_cancels")):  # metrics.summary.cancels: the client's own, as planned
        line += f" ({_int(req.get('planned_cancels'))} as planned by --cancel-rate)"
    errors = req.get("errors")
    if isinstance(errors, dict) and errors:
        line += "  |  errors: " + ", ".join(f"{k}={v}" for k, v in errors.items())
    return line


def goodput_line(good: dict[str, Any], rate: str, attainment: str) -> str:
    slo = good.get("slo")
    given = ", ".join(f"{k}={v}" for k, v in slo.items() if v is not None) if isinstance(slo, dict) else ""
    why = f"SLO {given}" if given else "no SLO given: every successful request with content counts as good"
    left_out = _int(good.get("excluded_planned_cancels"))
    if left_out:
        why += f"; {left_out} planned cancellations and the turns they ended left out"
    return (f"goodput: {rate} req/s  attainment {attainment}"
            f"  ({good.get('good', 0)}/{good.get('measured', 0)} good; {why})")


def error_warning(req: dict[str, Any]) -> str | None:
    """A warning when more than ERROR_RATE_WARNING of the measured requests failed (as `errors:rate`)."""
    measured, failed = _int(req.get("in_window")), _int(req.get("in_window_failed"))
    if not measured or failed / measured <= ERROR_RATE_WARNING:
        return None
    ok = _int(req.get("in_window_ok"))
    tail = ("no measured request succeeded, so there are no latency figures" if ok == 0
            else f"latencies describe only the {ok} that succeeded")
    return (f"WARNING: {failed} of {measured} measured requests failed ({failed / measured:.1%}"
            f" > {ERROR_RATE_WARNING:.0%}); {tail}")


def content_warning(req: dict[str, Any]) -> str | None:
    """Successes that streamed no content: counted ok, never good, no latency samples."""
    empty = _int(req.get("ok_without_content"))
    if not empty:
        return None
    return (f"WARNING: {empty} of {_int(req.get('in_window_ok'))} successful measured requests streamed no content"
            " (a finish_reason but no text): they count as ok but never as good, and add no latency samples")


def prompt_warning(tokens: dict[str, Any], run: dict[str, Any]) -> str | None:
    """A warning when the median relative prompt-length error exceeds PROMPT_ERROR_WARNING."""
    accuracy = tokens.get("prompt_accuracy")
    rel = accuracy.get("abs_rel_error") if isinstance(accuracy, dict) else None
    p50 = rel.get("p50") if isinstance(rel, dict) else None
    if not isinstance(p50, int | float) or p50 <= PROMPT_ERROR_WARNING:
        return None
    assert isinstance(accuracy, dict)
    mean = accuracy.get("mean_error_tokens")
    mean_text = f", mean error {mean:+.0f} tokens" if isinstance(mean, int | float) else ""
    return (f"WARNING: prompts missed their target length: median error {p50:.0%} of the target over"
            f" {accuracy.get('count', '?')} requests (server-counted{mean_text}); {prompt_cause(run)}")


def image_note(tokens: dict[str, Any]) -> str | None:
    """Requests with images: their prompt tokens hold the server's image tokens, which the client does not
    estimate, so they are left out of the prompt-length check."""
    imaged = _int(tokens.get("image_requests"))
    if not imaged:
        return None
    estimated = " (and a client-counted ~ prompt holds no image tokens)" if _int(tokens.get("prompt_estimated")) else ""
    return (f"note: {imaged} of {tokens.get('requests', '?')} requests carried images: their prompt tokens are the"
            f" server's count, image tokens included{estimated}; the prompt-length check leaves them out")


def _basis_text(basis: Any) -> str | None:
    if isinstance(basis, str) and basis:
        return basis
    if isinstance(basis, dict) and basis:
        return ", ".join(f"{k} {v}" for k, v in basis.items())
    return None


def estimate_notes(tokens: dict[str, Any]) -> list[str]:
    """Why figures marked `~` are estimates, and how ITL per token was split when not reported."""
    notes = []
    requests = tokens.get("requests", "?")
    out_est = _int(tokens.get("output_estimated"))
    if out_est:
        basis = _basis_text(tokens.get("output_estimate_basis"))
        if basis is None:  # the token sources say how each request's k_j (and so N = Σk_j) was counted
            sources = _basis_text(tokens.get("token_source"))
            basis = f"not recorded; token sources {sources}" if sources else "not recorded"
        notes.append(f"note: ~ output tokens are estimates for {out_est} of {requests} requests (no usage from"
                     f" the server; basis: {basis}); TPOT divides by them")
        notes += filter(None, [tokenizer_disagreement(tokens)])
    prompt_est = _int(tokens.get("prompt_estimated"))
    if prompt_est:
        notes.append(f"note: ~ prompt tokens are the client's count for {prompt_est} of {requests} requests"
                     " (no usage from the server)")
    notes += filter(None, [image_note(tokens)])
    basis = tokens.get("itl_token_basis")
    if isinstance(basis, str) and basis != "reported":
        how = _ITL_BASIS.get(basis, f"basis: {basis}")
        per_request = _basis_text(tokens.get("itl_token_bases"))
        if basis == "mixed" and per_request:
            how += f" (requests per basis: {per_request})"
        notes.append(f"note: ITL per token (summary itl_token_s) is not from reported per-chunk counts: {how}")
    return notes


def estimated_marks(tokens: dict[str, Any]) -> tuple[str, str]:
    """The marks for output tok/s and total tok/s: `~` when any of their tokens were estimated."""
    out = "~" if _int(tokens.get("output_estimated")) else ""
    total = "~" if out or _int(tokens.get("prompt_estimated")) else ""
    return out, total
