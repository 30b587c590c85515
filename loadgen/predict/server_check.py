"""The server's own metrics beside the fit (docs/capacity-predict.md, Calibrate against vLLM).

Per run, three comparisons of what the server measured with what the fitted model and the chunk times say:

- decode time per output token: the server's (loadgen.predict.server_run.decode_per_token), the model's
  (Σ D·step_s / Σ D over the run's timed steps: every decoding sequence waits one step per token) and the
  chunk times' (Σ D·measured step / Σ D). The chunk times time these steps already, so it is a check only:
  a gap says the client's clock distorts the steps (a saturated client, chunks the server coalesced).
- mean prefill time: the server's (first scheduled to first token) and the model's over the run's requests
  (loadgen.predict.prefill). The chunk times never time a step in which nothing decodes, so a
  run whose prefills rarely share a step with decodes cannot identify prefill_s (nor prefill_ctx_s) from
  them; the server's mean can: `prefill_aggregate` makes it one row of the fit (loadgen.predict.calibrate),
  weighted √ of the distinct steps its requests' prefills span (a burst's requests share their steps). When
  the server counted other requests than the chunk times can use (requests that were not streamed one token
  per chunk, other traffic), the check says so. When the runs' rows are exactly as many as the parameters
  they identify, the model's mean equals the server's by construction: the check is marked `fitted`.
- the batch: the mean of vllm:num_requests_running (and waiting) over the busy scrapes made while the
  run's requests were in flight (busy: the gauge or the steps show a request), and the batch the steps
  imply at the same instants (steps.batch_at).
"""

from __future__ import annotations

import math

import numpy as np

from loadgen.predict.calibrate import Aggregate
from loadgen.predict.fit_json import BatchCheck, PrefillCheck, ServerCheck
from loadgen.predict.prefill import Prefills
from loadgen.predict.server_run import ServerRun
from loadgen.predict.step_model import StepFeatures, StepModel
from loadgen.predict.steps import Step, batch_at, chunk_times_s
from metrics.records import RequestRecord


def prefill_aggregate(prefills: Prefills, server: ServerRun | None) -> Aggregate | None:
    """The run's server-measured mean prefill time as a fit row over its requests' prefill steps."""
    if server is None or server.prefill_mean_s is None or not prefills.per_request:
        return None
    return Aggregate(tuple(f for steps in prefills.per_request for f in steps), len(prefills.per_request),
                     server.prefill_mean_s, prefills.steps)


def decode_per_token_s(steps: list[Step], model: StepModel | None = None) -> float | None:
    """Σ D·step / Σ D: measured step durations, or the model's when given."""
    weights = np.array([s.features.decode_seqs for s in steps], dtype=np.float64)
    if weights.sum() == 0:
        return None
    times = np.array([model.step_s(s.features) if model is not None else s.duration_s for s in steps])
    return float(weights @ times / weights.sum())


def prefill_mean_s(model: StepModel, prefills: list[tuple[StepFeatures, ...]]) -> float | None:
    if not prefills:
        return None
    return float(np.mean([sum(model.step_s(f) for f in steps) for steps in prefills]))


def in_flight_window(records: list[RequestRecord]) -> tuple[float, float] | None:
    """From the first usable request's send to its last token, seconds on the records' clock."""
    spans = [(r.sent_ns / 1e9, float(t[-1])) for r in records
             if (t := chunk_times_s(r)) is not None and r.sent_ns is not None]
    if not spans:
        return None
    return min(a for a, _ in spans), max(b for _, b in spans)


def batch_check(records: list[RequestRecord], server: ServerRun) -> BatchCheck | None:
    window = in_flight_window(records)
    if window is None:
        return None
    samples = [g for g in server.gauges if window[0] <= g.t_s <= window[1]]
    implied = batch_at(records, [g.t_s for g in samples])
    busy = [(g, n) for g, n in zip(samples, implied, strict=True) if g.running > 0 or n > 0]
    if not busy:
        return None
    waiting = [g.waiting for g, _ in busy if g.waiting is not None]
    return {"scrapes": len(busy), "running": float(np.mean([g.running for g, _ in busy])),
            "waiting": float(np.mean(waiting)) if waiting else None, "steps_imply": float(np.mean([n for _, n in busy]))}


def server_check(model: StepModel, steps: list[Step], prefills: list[tuple[StepFeatures, ...]],
                 records: list[RequestRecord], server: ServerRun, *, fitted: bool = False) -> ServerCheck:
    """One run's comparison (module docstring); a figure the server did not give is None. `fitted`: the
    run's mean prefill time is a row of a fit with no more rows than the parameters it identifies (marked
    so only where the model does meet it)."""
    modelled = prefill_mean_s(model, prefills)
    met = fitted and modelled is not None and server.prefill_mean_s is not None and \
        math.isclose(modelled, server.prefill_mean_s, rel_tol=1e-6)  # a parameter held at 0 may miss it
    prefill: PrefillCheck = {"server": server.prefill_mean_s, "model": modelled,
                               "server_requests": server.prefill_count, "requests": len(prefills), "fitted": met}
    if server.prefill_mean_s is not None and server.prefill_count != len(prefills):
        prefill["note"] = (f"the server timed {server.prefill_count:.0f} prefills, the chunk times place "
                           f"{len(prefills)}: the means are over different requests")
    return {
        "decode_per_token_s": {"server": server.decode_per_token_s, "model": decode_per_token_s(steps, model),
                               "chunks": decode_per_token_s(steps)},
        "prefill_mean_s": prefill,
        "queue_mean_s": server.queue_mean_s,
        "batch": batch_check(records, server),
    }


def _ms(value: float | None) -> str:
    return f"{value * 1e3:.2f} ms" if value is not None else "n/a"


def check_line(check: ServerCheck) -> str:
    """One console line of a run's server check."""
    dec, pre, batch = check["decode_per_token_s"], check["prefill_mean_s"], check["batch"]
    parts = [f"server decode/token {_ms(dec['server'])} (model {_ms(dec['model'])}, chunks {_ms(dec['chunks'])})",
             f"prefill {_ms(pre['server'])} " + ("(fitted)" if pre.get("fitted") else f"(model {_ms(pre['model'])})"),
             f"queue {_ms(check['queue_mean_s'])}"]
    if batch is not None:
        waiting = f", waiting {batch['waiting']:.1f}" if batch["waiting"] is not None else ""
        parts.append(f"running {batch['running']:.1f} (steps imply {batch['steps_imply']:.1f}, "
                     f"{batch['scrapes']} busy scrapes{waiting})")
    if pre.get("note"):
        parts.append(pre["note"])
    return "; ".join(parts)
