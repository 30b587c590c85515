"""The workload against the server's context: `max_model_len`, as vLLM's (and the reference server's)
`GET /v1/models` entry gives it (listed when no `--model` is given), else its `POST /tokenize` answer (when
prompts are sized with it). A request whose prompt and output cannot fit is refused by the server
(HTTP 400) after it was sent; a run made of such requests is refused here, before the first one, in one
line naming the option or the trace's line (exit 2).

What is checked is what the workload states in tokens: a trace's `input_length + output_length` (each
request of the schedule), a synthetic workload's `--prefix-tokens + --prompt-tokens + --output-tokens`
(fixed and uniform lengths at their largest; a normal or lognormal one at its median, since a few long
draws failing is part of such a workload), and `--output-tokens` alone for a dataset (its prompts are
counted by the client, not by the server's tokenizer). Nothing is checked when the server does not say.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from loadgen.workload import LengthDist, highest_length, shown_length

if TYPE_CHECKING:
    from loadgen.run.models import ServedModel
    from loadgen.run.setup import RunSetup

_SOURCE = "the server's max_model_len"


class ContextTooSmall(RuntimeError):
    """The workload asks for more tokens than the server's context holds (a usage error: exit 2)."""


def max_model_len(entries: list[ServedModel] | None, model: str) -> int | None:
    """The model's `max_model_len` from the `/v1/models` entries; None when the server does not say."""
    entry = next((e for e in entries or () if e.id == model), None)
    return entry.max_model_len if entry is not None else None


def check_context(setup: RunSetup, model: str, entries: list[ServedModel] | None,
                  known: int | None = None) -> None:
    """ContextTooSmall for a workload that cannot fit the model's context (see the module doc). `known`: the
    context as the server's tokenize endpoint said it, for a run that listed no models (`--model`)."""
    limit = max_model_len(entries, model) or known
    if limit is None:
        return
    w = setup.spec.workload
    if setup.trace is not None and setup.schedule is not None and setup.schedule.rows is not None:
        _check_trace(setup, limit)
    elif w.dataset is not None:
        if _typical(w.output_tokens) >= limit:
            raise ContextTooSmall(f"--output-tokens {shown_length(w.output_tokens)}: {_SOURCE} is {limit} "
                                  "(prompt and output together)")
    else:
        need = w.prefix_tokens + _typical(w.prompt_tokens) + _typical(w.output_tokens)
        if need > limit:
            prefix = f"--prefix-tokens {w.prefix_tokens} + " if w.prefix_tokens else ""
            raise ContextTooSmall(f"{prefix}--prompt-tokens {shown_length(w.prompt_tokens)} + --output-tokens "
                                  f"{shown_length(w.output_tokens)} is {need:,.0f} tokens; {_SOURCE} is {limit}")


def _typical(dist: LengthDist) -> float:
    """The largest length of a fixed or uniform distribution; the median of a normal or lognormal one."""
    return highest_length(dist) if dist.kind in ("fixed", "uniform") else dist.a


def _check_trace(setup: RunSetup, limit: int) -> None:
    trace, schedule = setup.trace, setup.schedule
    assert trace is not None and schedule is not None and schedule.rows is not None
    rows = schedule.rows
    total = trace.input_tokens[rows] + trace.output_tokens[rows]
    over = np.flatnonzero(total > limit)
    if over.size:
        row = int(rows[over[0]])
        raise ContextTooSmall(f"{trace.where(row)}: input_length {int(trace.input_tokens[row])} + output_length "
                              f"{int(trace.output_tokens[row])} is over {_SOURCE}, {limit} "
                              f"({over.size} of the {rows.size} requests to send are)")
