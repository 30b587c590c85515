"""The console lines about the prompts a run sent and what the server's prefix cache made of them: why
prompts missed their target length, a server that reports no cached-token counts, and a cache that was
already warm for a workload whose prompts share nothing.

Each function reads the summary's typed view (`tokens`, `run`: metrics.results.summary_view) and
tolerates missing keys, like exporters.console_notes, whose warnings these join.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the summary's view is imported where a summary is read, not at start-up
    from metrics.results import Run, Tokens


# A synthetic workload built without shared prefixes (no --prefix-groups, no --turns) shares only the
# chat template's leading tokens between prompts: when more than this share of the prompt tokens beyond
# those came from cache, the server had seen the prompts before.
WARM_CACHE_WARNING = 0.25
CACHE_REPORT_FLAGS = "vLLM: --enable-prompt-tokens-details; SGLang: --enable-cache-report"


def _sizing(run: Run) -> tuple[str | None, str | None]:
    """(the counter that sized the prompts, how it was chosen: counter | tokenize | calibrate) as run.json
    records them; None where it does not say."""
    counter = run.workload.token_counter or run.resolved.sizing_counter
    return counter, run.resolved.sizing_method


def prompt_cause(run: Run) -> str:
    """What the prompt-length warning says about the cause: the counter that sized the prompts, named,
    and what to do about it. The server's own tokenizer is never the one blamed."""
    counter, method = _sizing(run)
    if method == "tokenize" or counter == "server_tokenize":
        return ("prompts were sized with the server's own tokenizer (its tokenize endpoint), so the gap is what"
                " the server adds to or counts differently in what was sent (chat template, text outside the"
                " synthetic vocabulary): compare prompt_tokens_target with prompt_tokens in records.jsonl")
    if counter is None:
        return ("the run does not record how its prompts were sized: pass --tokenizer with the model's"
                " tokenizer.json for exact prompt lengths")
    if counter.startswith("tokenizer:"):
        return (f"prompts were sized with the '{counter}' token counter: check that it is the served model's"
                " tokenizer (the chat template's tokens add to every prompt)")
    if method == "calibrate" or counter.startswith("calibrated:"):
        return (f"prompts were sized by calibration ('{counter}'), which estimates the server's count: pass"
                " --tokenizer with the model's tokenizer.json for exact prompt lengths")
    return (f"prompts were sized with the '{counter}' token counter, which does not count tokens the way the"
            " server does: pass --tokenizer with the model's tokenizer.json for exact prompt lengths")


def absent_cache_note(tokens: Tokens) -> str | None:
    """One line when no request's cached-token count came back: the server was not asked to report it."""
    requests = tokens.requests or 0
    if not requests or tokens.cached_unknown < requests:
        return None
    return ("note: the server reported no cached-token count for any request (usage.prompt_tokens_details"
            f".cached_tokens absent), so prefix-cache hits are unknown; start it with the flag that reports"
            f" them ({CACHE_REPORT_FLAGS})")


def warm_cache_warning(tokens: Tokens, run: Run) -> str | None:
    """A warning when a synthetic workload that shares no prefixes found its prompts in the server's
    cache: an earlier run with the same seed sent the same prompts."""
    workload = run.workload
    if workload.kind != "synthetic" or workload.prefix or workload.cache_bust:
        return None
    share = tokens.prefix_cache
    ratio = share.cached_ratio
    prompt = share.prompt_tokens
    if ratio is None or not prompt:
        return None
    # What a fresh server can serve from cache here: the chat template's leading tokens, the same on
    # every request (a long template on short prompts is a large share of them).
    template = workload.chat_template_tokens or run.resolved.sizing_chat_template_tokens
    beyond = (share.cached_tokens - template * share.requests) / prompt
    if beyond <= WARM_CACHE_WARNING:
        return None
    seed_text = f" --seed {run.seed}" if run.seed is not None else " seed"
    return (f"WARNING: the server's prefix cache served {ratio:.0%} of the prompt tokens"
            f" ({share.cached_tokens} of {share.prompt_tokens}), though this"
            " workload's prompts share no prefix: the server has seen these prompts before (a run with the"
            f" same{seed_text} sends the same prompts), so TTFT reads a warm cache; pass --cache-bust for a"
            " cold cache, or another --seed")


def prediction_note(tokens: Tokens, run: Run) -> str | None:
    """A trace replay's measured cached share beside the share predicted before the run, with the block
    size the prediction used and where it came from (loadgen.run.cache_prediction)."""
    rate = run.resolved.predicted_hit_rate
    if rate is None:
        return None
    measured = tokens.prefix_cache.cached_ratio
    shown = f"{measured:.1%}" if measured is not None else "unknown (no cached counts)"
    return (f"note: prefix cache: measured {shown} of prompt tokens served from cache; predicted {rate:.1%}"
            f" for this replay ({run.resolved.predicted_blocks})")


def cache_lines(tokens: Tokens, run: Run) -> list[str]:
    """The console's lines about the prefix cache: the warm-cache warning, the prediction, the absent-count
    note."""
    lines = (warm_cache_warning(tokens, run), prediction_note(tokens, run), absent_cache_note(tokens))
    return [line for line in lines if line is not None]
