"""Option values (from flags and a config file, see `loadgen.spec.options`) → a `RunSpec` and its `Secrets`.

`build_spec` takes them checked (`loadgen.spec.values.OptionValues`; a raw layer is checked first), parses
every value once into its typed form and lets the sections check the rest, so any
mistake is found before a request is sent and is reported in one line naming the flag. `spec_values` is
its inverse (what `--print-config` writes): `build_spec(spec_values(spec))` gives `spec` back. The options
whose spec field is their value or a standard conversion of it are made from their declarations
(`loadgen.spec.derived`); this module holds the code of the others.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loadgen.secrets import Secrets, is_secret_header, split_server_args
from loadgen.spec.agent_options import tool_values
from loadgen.spec.codecs import key_values
from loadgen.spec.derived import derived_options, make, section_values
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
from loadgen.workload import parse_arrival
from loadgen.workload.images import ImageSpec
from metrics.gate import Threshold, parse_threshold


def build_spec(values: OptionValues | Mapping[str, OptionValue]) -> tuple[RunSpec, Secrets]:
    """Every option of `goodput run` (see `OPTIONS`) → (spec, secrets); SpecError names what is wrong."""
    v = values if isinstance(values, OptionValues) else OptionValues.parse(values)
    try:
        headers, secret_headers = _headers(v.header or [])
        push_url, push_user, push_password = _pushgateway(v)
        server_args, secret_server_args = split_server_args(list(v.server_arg or ()))
        url, secret_url = _url(v.url, v.endpoint)
        # The sections in order (a value's parse error comes before those of the options after it).
        target = make(TargetSpec, section_values(v, "target"), url=url, server_args=tuple(server_args))
        request = make(RequestSpec, section_values(v, "request"), headers=tuple(headers),
                       secret_headers=tuple(n for n, _ in secret_headers), **tool_values(v))
        workload = make(WorkloadSpec, section_values(v, "workload"), images=_images(v))
        load = _load(v)
        scale = make(ScaleSpec, section_values(v, "scale"))
        timeouts = make(Timeouts, section_values(v, "timeouts"))
        metrics = make(MetricsSpec, section_values(v, "metrics"), roofline=_roofline(v))
        outputs = make(OutputSpec, section_values(v, "outputs"))
        prometheus = make(PrometheusSpec, section_values(v, "prometheus"), pushgateway=push_url,
                          pushgateway_user=push_user)
        spec = RunSpec(target=target, request=request, workload=workload, load=load, scale=scale, timeouts=timeouts,
                       metrics=metrics, outputs=outputs, prometheus=prometheus, gate=_gate(v))
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
    fields = section_values(v, "load")  # duration_s first, as always parsed after the arrival
    requests = v.requests  # checked by LoadSpec
    if fields["duration_s"] is None and requests is None and not replay:
        requests = DEFAULT_REQUESTS
    return make(LoadSpec, fields, arrival=arrival, requests=requests)


def _headers(values: Sequence[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    plain: list[tuple[str, str]] = []
    secret: list[tuple[str, str]] = []
    for name, value in key_values(values, "--header", ":").items():
        (secret if is_secret_header(name) else plain).append((name, value))
    return plain, secret


def _images(v: OptionValues) -> ImageSpec:
    return ImageSpec(count=str(v.images).strip(), size=str(v.image_size).strip(),
                     format=str(v.image_format).strip().lower(), pool=v.image_pool)


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
    return make(GateSpec, section_values(v, "gate"), thresholds=tuple(thresholds), abort_thresholds=tuple(abort))


# --- the inverse: a spec as option values -----------------------------------------------------------


def spec_values(spec: RunSpec) -> dict[str, OptionValue]:
    """The option values that build this spec (secrets excluded): `--print-config` writes these. The options
    made from their declarations alone come from `loadgen.spec.derived`; these are the others."""
    t, r, w, ld, m, p, g = spec.target, spec.request, spec.workload, spec.load, spec.metrics, spec.prometheus, spec.gate
    a = ld.arrival
    roof = m.roofline
    return {
        **derived_options(spec),
        "url": t.url, "server_arg": list(t.server_args),
        "images": w.images.count, "image_size": w.images.size, "image_format": w.images.format,
        "image_pool": w.images.pool,
        "arrival": a.kind, "rate": a.rate if (a.open_loop and a.kind != "trace") or a.rate else None,
        "rate_end": a.rate_end if a.kind == "ramp" else None, "burstiness": a.burstiness,
        "concurrency": a.concurrency if not a.open_loop else None, "requests": ld.requests,
        "tools": r.tools, "tool_choice": r.tool_choice,
        "header": [f"{k}: {val}" for k, val in r.headers],
        "threshold": [(th.text, th in g.abort_thresholds) if th in g.abort_thresholds else th.text for th in g.thresholds],
        "abort_on_fail": False,
        "pushgateway": p.pushgateway, "pushgateway_user": p.pushgateway_user,
        "model_config": roof.model_config if roof else None, "gpu": roof.gpu if roof else None,
        "tp": roof.tp if roof else 1, "weight_dtype": roof.weight_dtype if roof else "bf16",
        "api_key": None, "pushgateway_password": None,
    }
