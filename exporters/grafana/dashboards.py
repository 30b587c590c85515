"""The two shipped Grafana dashboards: the load generator's own metrics, and a vLLM-compatible server's.

Both use only a Prometheus datasource variable, so they import into any Grafana. The server dashboard
uses vLLM's metric names (which the reference server copies), with the older vLLM spellings as an
`or` fallback where they differ.
"""

from __future__ import annotations

from exporters.grafana.build import Layout, dashboard, quantile_targets, query_variable, relabel, target
from exporters.grafana.model import Dashboard

RATE = "$__rate_interval"
LG = 'job=~"$job", scenario=~"$scenario", prompt_bucket=~"$prompt_bucket", cache=~"$cache"'
LG_STATUS = 'job=~"$job", scenario=~"$scenario"'
VLLM = 'job=~"$job", model_name=~"$model_name"'


def _rate(metric: str, selector: str, by: str = "") -> str:
    group = f" by ({by})" if by else ""
    return f"sum{group} (rate({metric}{{{selector}}}[{RATE}]))"


def loadgen_dashboard() -> Dashboard:
    good, evaluated = _rate("goodput_good_requests_total", LG), _rate("goodput_evaluated_requests_total", LG)
    lay = Layout()
    lay.row("Goodput and SLO attainment")
    lay.stat("SLO attainment", f"{good} / {evaluated}", unit="percentunit",
             description="Good requests / measured requests (inside the SLO; failures count as not good).")
    lay.stat("Goodput", good, unit="reqps", description="Requests per second that succeeded within every SLO.")
    lay.stat("In flight", 'sum(goodput_in_flight_requests{job=~"$job"})')
    lay.stat("Dispatch lag p99", f"histogram_quantile(0.99, sum by (le) (rate(goodput_dispatch_lag_seconds_bucket{{{LG}}}[{RATE}])))",
             unit="s", description="Late sends; above ~10 ms the client itself is the bottleneck.")
    lay.timeseries("Goodput vs offered vs dispatched", [
        target(good, "goodput (good req/s)"),
        target('sum(goodput_offered_rate_requests_per_second{job=~"$job"})', "offered (configured)"),
        target(f'sum(rate(goodput_requests_dispatched_total{{job=~"$job"}}[{RATE}]))', "dispatched"),
        target(_rate("goodput_requests_total", LG_STATUS), "finished"),
        # finished − sent, not sent="false" alone: 0 rather than "no data" when every request was sent
        # (and `or vector(0)` when none was)
        target(_rate("goodput_requests_total", LG_STATUS) + " - ("
               + _rate("goodput_requests_total", LG_STATUS + ', sent="true"') + " or vector(0))", "never sent"),
    ], unit="reqps", description="Dispatched = finished + in flight; finished = sent + never sent (failed or "
                                 "cancelled before the request was written).")
    lay.timeseries("SLO attainment by prompt bucket", [
        target(f"{_rate('goodput_good_requests_total', LG, 'prompt_bucket')} / "
               f"{_rate('goodput_evaluated_requests_total', LG, 'prompt_bucket')}", "{{prompt_bucket}}"),
    ], unit="percentunit", defaults={"min": 0, "max": 1})
    lay.row("Latency")
    lay.timeseries("TTFT", quantile_targets("goodput_ttft_seconds_bucket", LG), unit="s",
                   description="Time to first content chunk, from the actual send.")
    lay.timeseries("TTFT p99 by prompt bucket",
                   quantile_targets("goodput_ttft_seconds_bucket", LG, by="prompt_bucket", qs=(0.99,)), unit="s")
    lay.timeseries("ITL per chunk and per token", [
        *quantile_targets("goodput_itl_seconds_bucket", LG, qs=(0.5, 0.99)),
        *(relabel(t, f"per token {t['legendFormat']}")
          for t in quantile_targets("goodput_itl_per_token_seconds_bucket", LG, qs=(0.5, 0.99))),
    ], unit="s", description="Gap-weighted (per chunk) and token-weighted (gap / tokens in the chunk).")
    lay.timeseries("TPOT", quantile_targets("goodput_tpot_seconds_bucket", LG), unit="s",
                   description="Per request: (last − first content chunk) / (N − 1); request-weighted.")
    lay.timeseries("E2E", quantile_targets("goodput_e2e_seconds_bucket", LG), unit="s")
    lay.timeseries("TTFT p99 by cache-hit class",
                   quantile_targets("goodput_ttft_seconds_bucket", LG, by="cache", qs=(0.99,)), unit="s")
    lay.row("Throughput, errors, client")
    lay.timeseries("Tokens/s", [
        target(_rate("goodput_output_tokens_total", LG), "output"),
        target(_rate("goodput_prompt_tokens_total", LG), "prompt"),
        target(_rate("goodput_cached_prompt_tokens_total", LG), "prompt, from prefix cache"),
    ], unit="short")
    lay.timeseries("Requests by status", [target(_rate("goodput_requests_total", LG_STATUS, "status"), "{{status}}")],
                   unit="reqps")
    lay.timeseries("Errors by kind", [
        target(_rate("goodput_requests_total", f'{LG_STATUS}, status!="ok"', "error_kind"), "{{error_kind}}"),
    ], unit="reqps")
    lay.timeseries("Dispatch lag", quantile_targets("goodput_dispatch_lag_seconds_bucket", LG, qs=(0.5, 0.99)),
                   unit="s")
    lay.timeseries("In flight", [target('sum(goodput_in_flight_requests{job=~"$job"})', "in flight")])
    lay.timeseries("Prefix-cache hit ratio (client view)", [
        target(f"{_rate('goodput_cached_prompt_tokens_total', LG)} / {_rate('goodput_prompt_tokens_total', LG)}",
               "cached / prompt tokens"),
    ], unit="percentunit")
    _reasoning_row(lay)
    variables = [
        query_variable("job", "Job", "label_values(goodput_requests_total, job)"),
        query_variable("scenario", "Scenario", 'label_values(goodput_requests_total{job=~"$job"}, scenario)'),
        query_variable("prompt_bucket", "Prompt tokens",
                       'label_values(goodput_evaluated_requests_total{job=~"$job"}, prompt_bucket)'),
        query_variable("cache", "Cache hits", 'label_values(goodput_evaluated_requests_total{job=~"$job"}, cache)'),
    ]
    return dashboard(uid="goodput-loadgen", title="goodput — load generator",
                     description="Client-side TTFT / ITL / TPOT / E2E, goodput and SLO attainment of goodput runs.",
                     tags=["goodput", "llm", "load-test"], variables=variables, layout=lay)


def _reasoning_row(lay: Layout) -> None:
    """Reasoning models and tool calls (docs/metrics.md#reasoning-and-tool-calls); empty panels for runs
    where no request reasoned or called a tool (the families are not exported then)."""
    lay.row("Reasoning and tool calls")
    lay.timeseries("TTFO", quantile_targets("goodput_ttfo_seconds_bucket", LG), unit="s",
                   description="Time to the first answer token or tool call, from the actual send: what a user waits "
                               "for from a reasoning model (TTFT counts the first thinking token).")
    lay.timeseries("Reasoning time", quantile_targets("goodput_reasoning_time_seconds_bucket", LG), unit="s",
                   description="From the first reasoning token to the first answer token.")
    lay.timeseries("Reasoning and answer tokens/s", [
        target(_rate("goodput_reasoning_tokens_total", LG), "reasoning"),
        target(_rate("goodput_answer_tokens_total", LG), "answer"),
    ], unit="short", description="Output tokens spent thinking and answering (where the reasoning count is known).")
    lay.timeseries("Reasoning tokens per request",
                   quantile_targets("goodput_reasoning_tokens_per_request_bucket", LG, qs=(0.5, 0.99)), unit="short")
    lay.timeseries("Tool calls/s", [target(_rate("goodput_tool_calls_total", LG), "tool calls")], unit="short")
    lay.timeseries("Time to tool call", [
        *(relabel(t, f"first delta {t['legendFormat']}")
          for t in quantile_targets("goodput_tool_call_seconds_bucket", LG, qs=(0.5, 0.99))),
        *(relabel(t, f"complete {t['legendFormat']}")
          for t in quantile_targets("goodput_tool_call_done_seconds_bucket", LG, qs=(0.5, 0.99))),
    ], unit="s", description="From the send to the first tool-call delta, and to the call's arguments complete.")


def server_dashboard() -> Dashboard:
    lay = Layout()
    lay.row("Latency (server clock)")
    lay.timeseries("TTFT", quantile_targets("vllm:time_to_first_token_seconds_bucket", VLLM), unit="s")
    lay.timeseries("Inter-token latency", [
        target(f"histogram_quantile({q}, sum by (le) (rate(vllm:inter_token_latency_seconds_bucket{{{VLLM}}}[{RATE}]))"
               f" or sum by (le) (rate(vllm:time_per_output_token_seconds_bucket{{{VLLM}}}[{RATE}])))", f"p{q * 100:g}")
        for q in (0.5, 0.9, 0.99)], unit="s")
    lay.timeseries("E2E request latency", quantile_targets("vllm:e2e_request_latency_seconds_bucket", VLLM), unit="s")
    lay.timeseries("Queue / prefill / decode p90", [
        *(relabel(t, name) for name, metric in (
            ("queue", "vllm:request_queue_time_seconds_bucket"),
            ("prefill", "vllm:request_prefill_time_seconds_bucket"),
            ("decode", "vllm:request_decode_time_seconds_bucket"))
          for t in quantile_targets(metric, VLLM, qs=(0.9,))),
    ], unit="s")
    lay.row("Load and cache")
    lay.timeseries("Requests running / waiting", [
        target(f"sum(vllm:num_requests_running{{{VLLM}}})", "running"),
        target(f"sum(vllm:num_requests_waiting{{{VLLM}}})", "waiting"),
    ])
    lay.timeseries("KV-cache usage", [
        target(f"avg(vllm:kv_cache_usage_perc{{{VLLM}}} or vllm:gpu_cache_usage_perc{{{VLLM}}})", "KV blocks used"),
    ], unit="percentunit", defaults={"min": 0, "max": 1})
    lay.timeseries("Prefix-cache hit rate", [
        target(f"{_rate('vllm:prefix_cache_hits_total', VLLM)} / {_rate('vllm:prefix_cache_queries_total', VLLM)}",
               "hit tokens / queried tokens"),
    ], unit="percentunit", defaults={"min": 0, "max": 1})
    lay.timeseries("Preemptions/s", [target(_rate("vllm:num_preemptions_total", VLLM), "preemptions")])
    lay.row("Throughput")
    lay.timeseries("Tokens/s", [
        target(_rate("vllm:generation_tokens_total", VLLM), "generation"),
        target(_rate("vllm:prompt_tokens_total", VLLM), "prompt"),
    ])
    lay.timeseries("Finished requests by reason", [
        target(_rate("vllm:request_success_total", VLLM, "finished_reason"), "{{finished_reason}}"),
    ], unit="reqps")
    lay.timeseries("Prompt / generation length p50", [
        *(relabel(t, name) for name, metric in (
            ("prompt tokens", "vllm:request_prompt_tokens_bucket"),
            ("generation tokens", "vllm:request_generation_tokens_bucket"))
          for t in quantile_targets(metric, VLLM, qs=(0.5,))),
    ])
    variables = [
        query_variable("job", "Job", "label_values(vllm:num_requests_running, job)"),
        query_variable("model_name", "Model", 'label_values(vllm:num_requests_running{job=~"$job"}, model_name)'),
    ]
    return dashboard(uid="goodput-vllm-server", title="goodput — vLLM-compatible server",
                     description="Server-side metrics under vLLM's names: vLLM, and goodput's reference server.",
                     tags=["goodput", "llm", "vllm"], variables=variables, layout=lay)
