"""How a run sizes its prompts (`--prompt-sizing`), decided once the target is up and before run.json.

- `counter`: the workload's own counter (`--tokenizer`: words, bytes or a tokenizer.json).
- `tokenize`: the server's tokenize endpoint teaches a word table (loadgen.http.send.probe.learn_table): exact
  synthetic prompts on servers that split text at spaces before merging.
- `calibrate`: a few `max_tokens: 1` probes fit tokens per word and the template's overhead.
- `auto`: the counter for the embedded server (bytes: exact) and whenever `--tokenizer` is given;
  otherwise tokenize, else calibrate, else the words counter with a warning (none when the server cannot
  be reached at all: the run's own error says that).

The choice is one line on stderr (with `--quiet` only when it is a warning; the local counter too, named)
and `resolved.prompt_sizing` in run.json (a calibration with the probes the server refused, and why); the workload is rebuilt with
the learnt counter (the schedule and a trace's parse are kept).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from loadgen.http import public_url
from loadgen.http.api import api_for
from loadgen.http.send import (
    ProbeFailed,
    ProbesRefused,
    ServerSilent,
    ServerUnreachable,
    calibrate,
    learn_table,
    tokenize_url,
)
from loadgen.run.setup import RunSetup
from loadgen.types import ClientConfig
from loadgen.workload import RatioCounter, TableCounter, TokenCounter

if TYPE_CHECKING:
    from metrics.results import JsonObject

T = TypeVar("T")

SIZING_LIMIT_S = 60.0  # every probe of the sizing together; a probe that times out ends the probing


class SizingDetail(TypedDict, total=False):
    """What run.json's `resolved.prompt_sizing` says besides the method; each method sets its own keys, in
    the order written (an error key may be present and null: that probe was not tried)."""

    counter: str  # the counter's name: words | bytes | tokenizer.json's path | the learnt table's or ratio's
    endpoint: str  # tokenize: the endpoint's public URL
    tokens_per_word: float  # calibrate
    chat_template_tokens: int | None  # tokenize, calibrate: the chat template's tokens around one message
    probes: int  # calibrate: probes fitted
    probes_rejected: int
    probe_rejections: list[str]
    max_model_len: int  # tokenize: the context, as the tokenize endpoint says
    tokenize_error: str | None
    calibrate_error: str | None


class SizingJson(SizingDetail, total=False):
    """run.json's `resolved.prompt_sizing`: the method first, then its detail."""

    method: str


@dataclass(slots=True)
class Sizing:
    method: str  # counter | tokenize | calibrate
    counter: TokenCounter | None  # learnt from the server; None: the workload's own
    detail: SizingDetail = field(default_factory=lambda: SizingDetail())
    line: str | None = None  # what the console says about it (stderr; under --quiet only a warning)
    warning: bool = False

    def to_json(self) -> SizingJson:
        return {"method": self.method, **self.detail}


def resolve_sizing(setup: RunSetup, client: ClientConfig) -> Sizing:
    """RuntimeError (exit 1) when the sizing asked for explicitly cannot be had."""
    w, target = setup.spec.workload, setup.spec.target
    local = w.token_counter(target.embedded)
    wanted = w.prompt_sizing
    if wanted == "counter" or (wanted == "auto" and (target.embedded or w.tokenizer != "auto")):
        return Sizing("counter", None, {"counter": local}, counter_line(local, embedded=target.embedded,
                                                                         tokenizer=w.tokenizer))
    chat = api_for(client.endpoint).chat_template  # the prompt is rendered with the model's chat template
    tokenize_error = calibrate_error = None
    deadline = time.monotonic() + SIZING_LIMIT_S
    silent: ServerSilent | None = None
    if wanted in ("auto", "tokenize"):
        try:
            seen: JsonObject = {}
            table = _bounded(learn_table(client.base_url, client.model, chat=chat, api_key=client.api_key,
                                         headers=client.extra_headers, seen=seen), deadline)
            return _tokenized(table, client, seen.get("max_model_len"))
        except ProbeFailed as exc:
            tokenize_error = str(exc)
            silent = exc if isinstance(exc, ServerSilent) else None
            if isinstance(exc, ServerUnreachable) and wanted == "auto":  # the run's own error will say it
                return Sizing("counter", None, {"counter": local, "tokenize_error": tokenize_error})
            if wanted == "tokenize":
                raise RuntimeError(f"--prompt-sizing tokenize: the server has no usable tokenize endpoint "
                                   f"({tokenize_error}); use --prompt-sizing calibrate or --tokenizer") from None
    try:
        if silent is not None and wanted == "auto":  # a server that did not answer is not asked again
            raise ServerSilent("not tried: the server did not answer the tokenize probe")
        ratio = _bounded(calibrate(client.base_url, client.model, chat=chat, api_key=client.api_key,
                                   headers=client.extra_headers, extra_body=client.extra_body,
                                   endpoint=client.endpoint), deadline)
        return _calibrated(ratio, tokenize_error)
    except ProbeFailed as exc:
        calibrate_error = str(exc)
        if isinstance(exc, ProbesRefused) and wanted == "auto":
            line = (f"goodput: warning: the server refused every request that sizes prompts ({calibrate_error}), "
                    "so prompts are sized by counting words; the run's requests may be refused alike")
            return Sizing("counter", None, {"counter": local, "tokenize_error": tokenize_error,
                                            "calibrate_error": calibrate_error}, line, warning=True)
        if isinstance(exc, ServerUnreachable) and wanted == "auto":
            return Sizing("counter", None, {"counter": local, "calibrate_error": calibrate_error})
        if wanted == "calibrate":
            raise RuntimeError(f"--prompt-sizing calibrate: the probe requests could not size prompts "
                               f"({calibrate_error}); use --tokenizer") from None
    line = (f"goodput: warning: prompts are sized by counting words, not tokens (tokenize: "
            f"{tokenize_error}; calibration: {calibrate_error}); prompt lengths will be approximate: pass "
            "--tokenizer with the model's tokenizer.json")
    return Sizing("counter", None, {"counter": local, "tokenize_error": tokenize_error,
                                    "calibrate_error": calibrate_error}, line, warning=True)


def _bounded(probe: Coroutine[Any, Any, T], deadline: float) -> T:
    """Run one probing step within what is left of the sizing's time (ServerSilent past it)."""
    async def run() -> T:
        try:
            return await asyncio.wait_for(probe, max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise ServerSilent(f"the sizing probes took more than {SIZING_LIMIT_S:g} s") from None

    return asyncio.run(run())


def _tokenized(table: TableCounter, client: ClientConfig, max_model_len: object = None) -> Sizing:
    url = public_url(tokenize_url(client.base_url))
    overhead = table.template.one_message
    detail: SizingDetail = {"counter": table.name, "endpoint": url, "chat_template_tokens": overhead}
    if isinstance(max_model_len, int) and not isinstance(max_model_len, bool) and max_model_len > 0:
        detail["max_model_len"] = max_model_len  # the context, as the tokenize endpoint says (run.json)
    shown = f", chat template {overhead} tokens" if overhead is not None else ""
    return Sizing("tokenize", table, detail, f"goodput: prompts sized with the server's tokenizer ({url}{shown})")


def counter_line(counter: str, *, embedded: bool, tokenizer: str) -> str:
    """What the console says when the run's own counter sizes the prompts."""
    if tokenizer != "auto":
        why = "--tokenizer"
    elif embedded:
        why = "the embedded server's own tokenizer: exact"
    else:
        why = "--prompt-sizing counter"
    return f"goodput: prompts sized with the local token counter '{counter}' ({why})"


def _rejections(ratio: RatioCounter) -> str:
    """The probes the server refused, counted by answer, the first one's reason, and what that leaves the
    fit."""
    if not ratio.rejected:
        return ""
    reasons = [r.removeprefix("a probe request answered ") for r in ratio.rejected]
    answers = Counter(r.partition(": ")[0] for r in reasons)
    counted = ", ".join(f"{answer} × {n}" for answer, n in answers.most_common())
    said = reasons[0].partition(": ")[2]
    first = f"; the first said: {said}" if said else ""
    reach = f", so the fit covers prompts up to {ratio.longest_words} words" if ratio.longest_words else ""
    return f"; {len(reasons)} were rejected ({counted}{first}){reach}"


def _calibrated(ratio: RatioCounter, tokenize_error: str | None) -> Sizing:
    overhead = ratio.template.one_message
    detail: SizingDetail = {"counter": ratio.name, "tokens_per_word": ratio.tokens_per_word, "chat_template_tokens": overhead,
              "probes": ratio.probes, "probes_rejected": len(ratio.rejected),
              "probe_rejections": list(ratio.rejected), "tokenize_error": tokenize_error}
    why = f"no tokenize endpoint ({tokenize_error}); " if tokenize_error else ""
    shown = f", chat template {overhead} tokens" if overhead is not None else ""
    sent = ratio.probes + len(ratio.rejected)
    line = (f"goodput: {why}prompts sized by calibration: {ratio.tokens_per_word:.3f} tokens per word{shown}, "
            f"fitted on {ratio.probes} of {sent} probe requests (max_tokens=1){_rejections(ratio)}")
    return Sizing("calibrate", ratio, detail, line)
