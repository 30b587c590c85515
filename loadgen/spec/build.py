"""Option values (from flags and a config file, see `loadgen.spec.options`) → a `RunSpec` and its `Secrets`.

`build_spec` takes them checked (`loadgen.spec.values.OptionValues`; a raw layer is checked first), parses
every value once into its typed form and lets the sections check the rest, so any
mistake is found before a request is sent and is reported in one line naming the flag. `spec_values` is
its inverse (what `--print-config` writes): `build_spec(spec_values(spec))` gives `spec` back.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from loadgen.secrets import Secrets, is_secret_header, split_server_args
from loadgen.spec.agent_options import agent_values, tool_values
from loadgen.spec.fail_limit import parse_fail_limit
from loadgen.spec.run_spec import RunSpec
from loadgen.spec.sections import (
    DEFAULT_RATE,
    DEFAULT_REQUESTS,
    ENDPOINTS,
    GateSpec,
    LoadSpec,
    MetricsSpec,
    OutputSpec,
    PrometheusSpec,
    RequestSpec,
    RooflineSpec,
    ScaleSpec,
    SpecError,
    TargetSpec,
    WorkloadSpec,
)
from loadgen.spec.values import OptionValue, OptionValues
from loadgen.types import Timeouts
from loadgen.workload import (
    LengthDist,
    format_duration,
    parse_arrival,
    parse_duration_flag,
    parse_length,
    parse_think_time,
    plain_number,
)
from loadgen.workload.images import ImageSpec
from metrics import SLO, parse_slo
from metrics.gate import Threshold, parse_threshold


def build_spec(values: OptionValues | Mapping[str, OptionValue]) -> tuple[RunSpec, Secrets]:
    """Every option of `goodput run` (see `OPTIONS`) → (spec, secrets); SpecError names what is wrong."""
    v = values if isinstance(values, OptionValues) else OptionValues.parse(values)
    try:
        headers, secret_headers = _headers(v.header or [])
        push_url, push_user, push_password = _pushgateway(v)
        server_args, secret_server_args = split_server_args(list(v.server_arg or ()))
        url, secret_url = _url(v.url, v.endpoint)
        spec = RunSpec(
            target=TargetSpec(url=url, model=v.model or None, endpoint=v.endpoint,
                              server_args=tuple(server_args)),
            request=RequestSpec(ignore_eos=v.ignore_eos, min_tokens=v.min_tokens, temperature=v.temperature,
                                usage=v.usage, continuous_usage=v.continuous_usage,
                                extra_body=_extra_body(v.extra_body),
                                headers=tuple(headers), secret_headers=tuple(n for n, _ in secret_headers),
                                max_connections=v.max_connections, **tool_values(v)),
            workload=WorkloadSpec(dataset=v.dataset and str(v.dataset), dataset_format=v.dataset_format,
                                  prompt_tokens=parse_length(str(v.prompt_tokens)),
                                  output_tokens=parse_length(str(v.output_tokens)),
                                  prefix_groups=v.prefix_groups, prefix_tokens=v.prefix_tokens,
                                  prefix_weights=_weights(v.prefix_weights),
                                  tags=tuple(_pairs(v.tag or [], "--tag", "=").items()), tokenizer=v.tokenizer,
                                  prompt_sizing=v.prompt_sizing,
                                  turns=parse_length(str(v.turns)) if v.turns is not None else None,
                                  think_time=parse_think_time(str(v.think_time)),
                                  trace=v.trace and str(v.trace), trace_format=v.trace_format,
                                  cache_bust=v.cache_bust, images=_images(v), **agent_values(v),
                                  cancel_rate=v.cancel_rate, cancel_after=v.cancel_after and str(v.cancel_after)),
            load=_load(v),
            scale=ScaleSpec(workers=_workers(v.workers), ray=v.ray or None, ray_placement=v.ray_placement,
                            on_worker_failure=v.on_worker_failure),
            timeouts=Timeouts(*(_duration(value, k, positive=True) for value, k in (
                (v.timeout_connect, "timeout_connect"), (v.timeout_first_byte, "timeout_first_byte"),
                (v.timeout_between_chunks, "timeout_between_chunks"), (v.timeout_total, "timeout_total")))),
            metrics=MetricsSpec(slo=parse_slo(list(v.slo or [])),
                                stall_threshold_s=_req_duration(v.stall_threshold, "stall_threshold"),
                                lag_threshold_s=_req_duration(v.lag_threshold, "lag_threshold"),
                                prompt_bucket_edges=_edges(v.prompt_buckets, "--prompt-buckets"),
                                output_bucket_edges=_edges(v.output_buckets, "--output-buckets"),
                                cache_full_ratio=v.cache_full_ratio, absent_cache_is_zero=v.absent_cache_is_zero,
                                roofline=_roofline(v)),
            outputs=OutputSpec(output=v.output and str(v.output), overwrite=v.overwrite, quiet=v.quiet,
                               html=v.html),
            prometheus=PrometheusSpec(
                metrics_port=v.metrics_port, metrics_host=v.metrics_host,
                metrics_linger_s=_req_duration(v.metrics_linger, "metrics_linger"), pushgateway=push_url,
                pushgateway_job=v.pushgateway_job, pushgateway_user=push_user,
                pushgateway_interval_s=_req_duration(v.pushgateway_interval, "pushgateway_interval"),
                pushgateway_delete=v.pushgateway_delete, server_metrics=v.server_metrics,
                server_metrics_interval_s=_req_duration(v.server_metrics_interval, "server_metrics_interval"),
                scrape=tuple(v.scrape)),
            gate=_gate(v),
        )
    except SpecError:
        raise
    except ValueError as exc:  # the parsers' own one-line messages
        raise SpecError(str(exc)) from None
    return spec, Secrets(api_key=v.api_key or None, pushgateway_password=push_password or None,
                         headers=tuple(secret_headers), url=secret_url, server_args=tuple(secret_server_args))


def _pushgateway(v: OptionValues) -> tuple[str | None, str | None, str | None]:
    """The Pushgateway URL without credentials, its user and its password (a secret)."""
    if v.pushgateway is None:
        return None, v.pushgateway_user, v.pushgateway_password
    from exporters.prometheus import PushTarget, credentials_out_of_url

    url, user, password = credentials_out_of_url(v.pushgateway, v.pushgateway_user, v.pushgateway_password)
    PushTarget(url=url, job=v.pushgateway_job, username=user, password=password)  # ValueError: a usage error
    return url, user, password


def _duration(value: str | None, param: str, *, positive: bool = False) -> float | None:
    if value is None:
        return None
    seconds = parse_duration_flag(str(value), "--" + param.replace("_", "-"))
    if positive and seconds <= 0:
        raise SpecError(f"--{param.replace('_', '-')} must be greater than 0, got {value!r}")
    return seconds


def _req_duration(value: str, param: str) -> float:
    seconds = _duration(value, param)
    if seconds is None:
        raise SpecError(f"--{param.replace('_', '-')} needs a value")
    return seconds


def _url(url: str | None, endpoint: str) -> tuple[str | None, str | None]:
    """(the URL as it may be stored, the URL as given when that differs: it carries credentials or a query)."""
    if url is None:
        return None, None
    from loadgen.http import public_url
    from loadgen.http.api import endpoint_url

    endpoint_url(url, endpoint if endpoint in ENDPOINTS else "chat")  # ValueError: a usage error
    shown = public_url(url)
    return (url, None) if shown == url else (shown, url)


def _load(v: OptionValues) -> LoadSpec:
    rate = v.rate
    replay = v.trace is not None
    if replay:  # the trace's own timestamps; --rate, when given, rescales its mean rate
        if v.arrival not in ("poisson", "trace"):
            raise SpecError(f"--trace dispatches at the trace's own timestamps: --arrival {v.arrival} does not "
                            "apply (--rate rescales the trace's mean rate)")
        arrival = parse_arrival("trace", rate=rate, burstiness=1.0, rate_end=None, concurrency=None)
    else:
        if rate is None and v.arrival != "concurrency":
            rate = DEFAULT_RATE
        arrival = parse_arrival(v.arrival, rate=rate, burstiness=v.burstiness, rate_end=v.rate_end,
                                concurrency=v.concurrency)
    duration_s = _duration(v.duration, "duration", positive=True)
    requests = v.requests  # checked by LoadSpec
    if duration_s is None and requests is None and not replay:
        requests = DEFAULT_REQUESTS
    return LoadSpec(arrival=arrival, duration_s=duration_s, requests=requests,
                    warmup_s=_req_duration(v.warmup, "warmup"), cooldown_s=_req_duration(v.cooldown, "cooldown"),
                    seed=v.seed, grace_s=_req_duration(v.grace, "grace"), time_scale=v.time_scale,
                    trace_start_s=_req_duration(v.trace_start, "trace_start"),
                    trace_duration_s=_duration(v.trace_duration, "trace_duration", positive=True),
                    max_failed=str(parse_fail_limit(v.max_failed)), keep_going=bool(v.keep_going))


def _workers(value: str) -> int | None:
    """`--workers N|auto`: a count, or None for auto."""
    text = str(value).strip().lower()
    if text == "auto":
        return None
    try:
        return int(text)
    except ValueError:
        raise SpecError(f"--workers expects a number of workers or auto, got {value!r}") from None


def _pairs(values: Sequence[str], flag: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values:
        key, found, val = str(item).partition(sep)
        if not found or not key.strip():
            raise SpecError(f"{flag} expects KEY{sep}VALUE, got {item!r}")
        out[key.strip()] = val.strip()
    return out


def _headers(values: Sequence[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    plain: list[tuple[str, str]] = []
    secret: list[tuple[str, str]] = []
    for name, value in _pairs(values, "--header", ":").items():
        (secret if is_secret_header(name) else plain).append((name, value))
    return plain, secret


def _extra_body(text: str | None) -> str | None:
    if not text:
        return None
    try:
        extra = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"--extra-body is not valid JSON: {exc.msg}") from None
    if not isinstance(extra, dict):
        raise SpecError("--extra-body must be a JSON object")
    return json.dumps(extra, separators=(",", ":"), ensure_ascii=False) if extra else None


def _images(v: OptionValues) -> ImageSpec:
    return ImageSpec(count=str(v.images).strip(), size=str(v.image_size).strip(),
                     format=str(v.image_format).strip().lower(), pool=v.image_pool)


def _weights(text: str | None) -> tuple[float, ...] | None:
    if not text:
        return None
    try:
        return tuple(float(w) for w in str(text).split(","))
    except ValueError:
        raise SpecError(f"--prefix-weights expects comma-separated numbers, got {text!r}") from None


def _edges(text: str | None, flag: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        edges = tuple(int(x) for x in str(text).split(",") if x.strip())
    except ValueError:
        raise SpecError(f"{flag} expects comma-separated integers, got {text!r}") from None
    if not edges or list(edges) != sorted(set(edges)) or edges[0] < 0:
        raise SpecError(f"{flag} must be increasing non-negative integers, got {text!r}")
    return edges


def _roofline(v: OptionValues) -> RooflineSpec | None:
    if v.model_config is None and v.gpu is None:
        return None
    if v.model_config is None or v.gpu is None:
        raise SpecError("--model-config and --gpu go together (roofline floors need both)")
    return RooflineSpec(model_config=v.model_config, gpu=v.gpu, tp=v.tp, weight_dtype=v.weight_dtype)


def _gate(v: OptionValues) -> GateSpec:
    thresholds: list[Threshold] = []
    abort: list[Threshold] = []
    for entry in v.threshold or []:
        text, entry_abort = (entry, False) if isinstance(entry, str) else entry
        t = parse_threshold(text)
        thresholds.append(t)
        if entry_abort or v.abort_on_fail:
            abort.append(t)
    if v.abort_on_fail and not thresholds:
        raise SpecError("--abort-on-fail, --baseline, --junit and --markdown need thresholds (--threshold or --config)")
    return GateSpec(thresholds=tuple(thresholds), abort_thresholds=tuple(abort),
                    abort_delay_s=_duration(v.abort_delay, "abort_delay"),
                    abort_interval_s=_duration(v.abort_interval, "abort_interval"),
                    baseline=v.baseline and str(v.baseline), junit=v.junit and str(v.junit),
                    markdown=v.markdown and str(v.markdown))


# --- the inverse: a spec as option values -----------------------------------------------------------


def _length(dist: LengthDist) -> str:
    return str(dist)  # the user's own numbers: `uniform:64:256`, never `uniform:64.0:256.0`


def _slo_items(slo: SLO) -> list[str]:
    names = {"ttft_s": "ttft", "tpot_s": "tpot", "e2e_s": "e2e", "itl_max_s": "itl_max", "fluidity_min": "fluidity",
             "fluidity_prefill_deadline_s": "fluidity_prefill", "fluidity_decode_deadline_s": "fluidity_decode",
             "ttfo_s": "ttfo"}
    out = []
    for name, value in slo.to_dict().items():
        if value is not None:
            out.append(f"{names[name]}={value!r}" if name == "fluidity_min" else f"{names[name]}={format_duration(value)}")
    return out


def spec_values(spec: RunSpec) -> dict[str, OptionValue]:
    """The option values that build this spec (secrets excluded): `--print-config` writes these."""
    t, r, w, ld, m, o, p, g = (spec.target, spec.request, spec.workload, spec.load, spec.metrics, spec.outputs,
                               spec.prometheus, spec.gate)
    sc = spec.scale
    a = ld.arrival
    roof = m.roofline
    dur = format_duration
    return {
        "url": t.url, "model": t.model, "endpoint": t.endpoint, "server_arg": list(t.server_args),
        "dataset": w.dataset, "dataset_format": w.dataset_format, "prompt_tokens": _length(w.prompt_tokens),
        "output_tokens": _length(w.output_tokens), "prefix_groups": w.prefix_groups, "prefix_tokens": w.prefix_tokens,
        "prefix_weights": ",".join(map(plain_number, w.prefix_weights)) if w.prefix_weights is not None else None,
        "tag": [f"{k}={val}" for k, val in w.tags], "tokenizer": w.tokenizer, "prompt_sizing": w.prompt_sizing,
        "turns": _length(w.turns) if w.turns is not None else None, "think_time": str(w.think_time),
        "trace": w.trace, "trace_format": w.trace_format, "cache_bust": w.cache_bust,
        "images": w.images.count, "image_size": w.images.size, "image_format": w.images.format,
        "image_pool": w.images.pool,
        "tool_latency": str(w.tool_latency), "tool_result_tokens": _length(w.tool_result_tokens),
        "max_tool_turns": w.max_tool_turns,
        "cancel_rate": w.cancel_rate, "cancel_after": w.cancel_after,
        "arrival": a.kind, "rate": a.rate if (a.open_loop and a.kind != "trace") or a.rate else None,
        "rate_end": a.rate_end if a.kind == "ramp" else None, "burstiness": a.burstiness,
        "concurrency": a.concurrency if not a.open_loop else None,
        "duration": dur(ld.duration_s) if ld.duration_s is not None else None, "requests": ld.requests,
        "warmup": dur(ld.warmup_s), "cooldown": dur(ld.cooldown_s), "seed": ld.seed, "grace": dur(ld.grace_s),
        "time_scale": ld.time_scale, "trace_start": dur(ld.trace_start_s),
        "trace_duration": dur(ld.trace_duration_s) if ld.trace_duration_s is not None else None,
        "max_failed": ld.max_failed, "keep_going": ld.keep_going,
        "workers": "auto" if sc.workers is None else str(sc.workers), "ray": sc.ray,
        "ray_placement": sc.ray_placement, "on_worker_failure": sc.on_worker_failure,
        "ignore_eos": r.ignore_eos, "min_tokens": r.min_tokens, "temperature": r.temperature, "usage": r.usage,
        "continuous_usage": r.continuous_usage, "extra_body": r.extra_body, "tools": r.tools,
        "tool_choice": r.tool_choice,
        "header": [f"{k}: {val}" for k, val in r.headers], "max_connections": r.max_connections,
        "slo": _slo_items(m.slo),
        "threshold": [(th.text, th in g.abort_thresholds) if th in g.abort_thresholds else th.text for th in g.thresholds],
        "baseline": g.baseline, "abort_on_fail": False,
        "abort_delay": dur(g.abort_delay_s) if g.abort_delay_s is not None else None,
        "abort_interval": dur(g.abort_interval_s) if g.abort_interval_s is not None else None,
        "junit": g.junit, "markdown": g.markdown,
        "stall_threshold": dur(m.stall_threshold_s), "lag_threshold": dur(m.lag_threshold_s),
        "prompt_buckets": ",".join(map(str, m.prompt_bucket_edges)) if m.prompt_bucket_edges else None,
        "output_buckets": ",".join(map(str, m.output_bucket_edges)) if m.output_bucket_edges else None,
        "cache_full_ratio": m.cache_full_ratio, "absent_cache_is_zero": m.absent_cache_is_zero,
        "output": o.output, "overwrite": o.overwrite, "quiet": o.quiet, "html": o.html,
        "metrics_port": p.metrics_port, "metrics_host": p.metrics_host, "metrics_linger": dur(p.metrics_linger_s),
        "pushgateway": p.pushgateway, "pushgateway_job": p.pushgateway_job, "pushgateway_user": p.pushgateway_user,
        "pushgateway_interval": dur(p.pushgateway_interval_s), "pushgateway_delete": p.pushgateway_delete,
        "server_metrics": p.server_metrics, "server_metrics_interval": dur(p.server_metrics_interval_s),
        "scrape": list(p.scrape),
        **{k: dur(s) if s is not None else None for k, s in (
            ("timeout_connect", spec.timeouts.connect_s), ("timeout_first_byte", spec.timeouts.first_byte_s),
            ("timeout_between_chunks", spec.timeouts.between_chunks_s), ("timeout_total", spec.timeouts.total_s))},
        "model_config": roof.model_config if roof else None, "gpu": roof.gpu if roof else None,
        "tp": roof.tp if roof else 1, "weight_dtype": roof.weight_dtype if roof else "bf16",
        "api_key": None, "pushgateway_password": None,
    }
