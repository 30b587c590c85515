"""Everything Prometheus around one `goodput run`: the live endpoint, the server scraper, the final push
and `metrics.prom`. `session` calls `RunExporters.start` before dispatch, `attach` once the runner exists,
and `finish` after the last request; each step is a no-op for the parts the user did not ask for.
`metrics.prom` is always written.

With workers (`--workers N`, `--ray`) the same exporters run in the parent: `attach` takes the coordinator
that receives every worker's records (loadgen.workers.coordinator) as it would take a runner, so the live
endpoint, metrics.prom and the push describe the whole run; `add_collector` adds the per-worker series
(loadgen.workers.metrics). The Pushgateway gets that folded run once, in the run's one group.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from metrics.results import SERVER_SECTION_FILE as SECTION_FILE

if TYPE_CHECKING:  # the real imports happen when a run starts, so `goodput --help` stays fast
    from prometheus_client.registry import Collector

    from exporters.prometheus import LiveConfig, PushLoop
    from loadgen.dispatch import RecordHook, RunState
    from loadgen.spec import PrometheusSpec
    from loadgen.workload import Arrival
    from metrics import SLO
    from metrics.latency import Samples
    from metrics.records import RequestFrame
    from metrics.results import Json, JsonObject
    from metrics.server import ServerPrometheusJSON
    from metrics.summary import SummaryConfig

AUTO, NONE = "auto", "none"


class RecordSource(Protocol):
    """What hands the exporters finished records and live counters: the runner, or with workers the
    coordinator that receives their records (loadgen.workers.coordinator)."""

    hooks: list[RecordHook]
    state: RunState


@dataclass(frozen=True, slots=True)
class PromOptions:
    """The run's Prometheus options, as checked in its spec (see `prom_options`)."""

    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    metrics_linger_s: float = 0.0  # keep serving the final values this long, for a last scrape
    pushgateway: str | None = None
    pushgateway_job: str = "goodput"
    pushgateway_user: str | None = None
    pushgateway_password: str | None = field(default=None, repr=False)  # never shown
    pushgateway_interval_s: float = 0.0  # 0: push once, at the end
    pushgateway_delete: bool = False
    server_metrics: str = AUTO  # auto | none | URL
    server_metrics_interval_s: float = 5.0
    scrape: tuple[str, ...] = ()  # --scrape NAME=URL: GPU telemetry (loadgen.run.gpu_scrape)


def prom_options(spec: PrometheusSpec, pushgateway_password: str | None) -> PromOptions:
    """The run's Prometheus options from its spec, where they were parsed and checked (loadgen/spec: the
    credentials split out of --pushgateway there too); the password is a secret, kept out of the spec."""
    return PromOptions(metrics_port=spec.metrics_port, metrics_host=spec.metrics_host,
                       metrics_linger_s=spec.metrics_linger_s, pushgateway=spec.pushgateway,
                       pushgateway_job=spec.pushgateway_job, pushgateway_user=spec.pushgateway_user,
                       pushgateway_password=pushgateway_password, pushgateway_interval_s=spec.pushgateway_interval_s,
                       pushgateway_delete=spec.pushgateway_delete, server_metrics=spec.server_metrics,
                       server_metrics_interval_s=spec.server_metrics_interval_s, scrape=spec.scrape)


def server_metrics_url(setting: str, base_url: str) -> str | None:
    """The server's /metrics as `--server-metrics` names it: None for `none`, next to the API for `auto`."""
    from loadgen.run.scrape import metrics_url_for

    return None if setting == NONE else metrics_url_for(base_url) if setting == AUTO else setting


def _warn(message: str) -> None:
    from loadgen.redact import redact  # a server's or a Pushgateway's answer may quote a credential

    print(f"goodput: warning: {redact(message)}", file=sys.stderr)


def start_exporters(opts: PromOptions, config: SummaryConfig, *, run_id: str, model: str, arrival: Arrival,
                    base_url: str) -> RunExporters:
    """The run's exporters, started against `base_url` (call before the first request)."""
    open_loop_rate = arrival.rate if arrival.open_loop and arrival.kind != "ramp" else None
    exporters = RunExporters.create(opts, config, run_id=run_id, model=model, load=str(arrival),
                                    offered_rps=open_loop_rate,
                                    # The summary's own window end, so both count the same requests.
                                    schedule_end_s=config.schedule_end_s)
    exporters.start(base_url)
    return exporters


def add_server_section(out: Path, summary: JsonObject,
                       section: ServerPrometheusJSON | JsonObject | None) -> None:
    """Put the scraped server figures under summary["server"]["prometheus"] and rewrite summary.json.

    `goodput report` can call it with `load_server_section(out)`: the section is kept in its own file
    because the scrapes cannot be rebuilt from records.jsonl.
    """
    from metrics.results import json_object, write_summary

    if section is None:
        return
    server = summary.setdefault("server", {})
    if not isinstance(server, dict):
        raise TypeError(f"summary.json's server section is not an object: {server!r}")
    server["prometheus"] = json_object(section)
    write_summary(out, summary)


def load_server_section(out: Path) -> JsonObject | None:
    """The `server.prometheus` section a run saved, or None."""
    import json

    from metrics.results import json_object

    path = out / SECTION_FILE
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    return json_object(data) if isinstance(data, dict) else None


def rebuild_textfile(out: Path, frame: RequestFrame, run: Mapping[str, Json],
                     gap_samples: tuple[Samples, Samples] | None = None, *, slo: SLO | None = None) -> Path:
    """metrics.prom from a run's records (for `goodput report`, given the frame and, if at hand, the
    sorted ITL samples it already built): the same families as the run wrote, without the live-only
    in-flight and sent series; `slo` replaces the run's SLOs."""
    from exporters.prometheus import write_textfile
    from loadgen.run.outputs import run_summary_config
    from metrics.results import TEXTFILE, RunDocument

    config = run_summary_config(RunDocument.from_json(run), slo=slo)
    exporters = RunExporters.create(PromOptions(server_metrics=NONE), config, run_id=out.name,
                                    model=str(run.get("model", "")), load=str(run.get("load", "")),
                                    offered_rps=None, schedule_end_s=config.schedule_end_s)
    exporters.metrics.fold(frame, gap_samples)
    return write_textfile(out / TEXTFILE, exporters.metrics.registry)


class RunExporters:
    def __init__(self, opts: PromOptions, live: LiveConfig) -> None:
        from exporters.prometheus import MetricsServer, PushTarget, RunMetrics

        self.opts = opts
        self.metrics = RunMetrics(live)
        self.write_errors: list[OSError] = []
        self.server: MetricsServer | None = None
        self.scraper: Any = None
        self.gpu: Any = None  # loadgen.run.gpu_scrape.GpuScrapers, with --scrape
        self.pusher: PushLoop | None = None
        self.push_target = None if opts.pushgateway is None else PushTarget(
            url=opts.pushgateway, job=opts.pushgateway_job, run_id=live.run_id,
            username=opts.pushgateway_user, password=opts.pushgateway_password)
        self._server_section: ServerPrometheusJSON | None = None

    @classmethod
    def create(cls, opts: PromOptions, config: SummaryConfig, *, run_id: str, model: str, load: str,
               offered_rps: float | None, schedule_end_s: float | None) -> RunExporters:
        from exporters.prometheus import LiveConfig

        slo = config.slo
        live = LiveConfig(run_id=run_id, slo=slo, prompt_bucket_edges=tuple(config.prompt_bucket_edges),
                          cache_full_ratio=config.cache_full_ratio, absent_cache_is_zero=config.absent_cache_is_zero,
                          warmup_s=config.warmup_s, cooldown_s=config.cooldown_s, schedule_end_s=schedule_end_s,
                          lag_threshold_s=config.lag_threshold_s, offered_rps=offered_rps, model=model, load=load)
        return cls(opts, live)

    def start(self, base_url: str) -> None:
        """Before the first request: the server's 'before' scrape and the live endpoint."""
        import httpx

        from exporters.prometheus import PushLoop, serve_metrics
        from loadgen.http import public_url, scrub_userinfo
        from loadgen.run.scrape import ServerScraper, scrape_failure

        opts = self.opts
        url = server_metrics_url(opts.server_metrics, base_url)
        if url is not None:
            scraper = ServerScraper(url, interval_s=opts.server_metrics_interval_s)
            try:
                scraper.start()
                self.scraper = scraper
            except (httpx.HTTPError, ValueError, OSError) as exc:  # no server metrics, never a failed run
                scraper.abort()
                scraper.failures.append(scrape_failure(exc))
                self._server_section = scraper.section()
                if opts.server_metrics != AUTO:
                    _warn(scrub_userinfo(f"cannot scrape server metrics at {public_url(url)}: {scrape_failure(exc)}"))
        if opts.scrape:
            from loadgen.run.gpu_scrape import GpuScrapers
            from loadgen.spec import parse_scrape_targets

            self.gpu = GpuScrapers(parse_scrape_targets(opts.scrape), interval_s=opts.server_metrics_interval_s)
            for line in self.gpu.start():  # an endpoint that does not answer is a warning, never a failed run
                _warn(scrub_userinfo(line))
        if opts.metrics_port is not None:
            self.server = serve_metrics(self.metrics.registry, port=opts.metrics_port, host=opts.metrics_host)
            print(f"live metrics: {self.server.url}", file=sys.stderr)
        if self.push_target is not None and opts.pushgateway_interval_s > 0:
            self.pusher = PushLoop(self.push_target, self.metrics.registry, opts.pushgateway_interval_s)
            self.pusher.start()

    def attach(self, runner: RecordSource) -> None:
        """Feed the instruments from the runner: every finished record, and its live counters."""
        runner.hooks.append(self.metrics.observe)
        self.metrics.state = runner.state

    def add_collector(self, collector: Collector) -> None:
        """More series on the live endpoint, in metrics.prom and in the push (per-worker series)."""
        self.metrics.registry.register(collector)

    def finish(self, out: Path) -> ServerPrometheusJSON | None:
        """After the last request: the 'after' scrape, metrics.prom, the final push. Returns the
        `server.prometheus` section (None when server metrics were off). A file that cannot be written
        does not stop the others or the push: the errors are left in `write_errors`."""
        from exporters.prometheus import delete, push, write_textfile
        from metrics.results import TEXTFILE

        failed: list[OSError] = []

        def best_effort(write: Callable[[], object]) -> None:  # a full disk must not skip the rest, nor the push
            try:
                write()
            except OSError as exc:
                failed.append(exc)

        if self.scraper is not None:
            self.scraper.stop()
            best_effort(lambda: self.scraper.save(out) if self.scraper is not None else None)
            self._server_section = self.scraper.section()
        if self.gpu is not None:
            self.gpu.stop()
            best_effort(lambda: self.gpu.save(out) if self.gpu is not None else None)
        if self._server_section is not None:
            from metrics.results import write_json

            section = self._server_section
            best_effort(lambda: write_json(out / SECTION_FILE, section))
        if self.pusher is not None:
            self.pusher.stop()
        best_effort(lambda: write_textfile(out / TEXTFILE, self.metrics.registry))
        if self.push_target is not None:
            try:
                if self.opts.pushgateway_delete:
                    delete(self.push_target)
                else:
                    push(self.push_target, self.metrics.registry)
            except RuntimeError as exc:
                _warn(str(exc))
        self.write_errors = failed
        return self._server_section

    def linger(self) -> None:
        """Keep the live endpoint up with the final values for `metrics_linger_s` (Ctrl-C ends it)."""
        import time

        if self.server is not None and self.opts.metrics_linger_s > 0:
            print(f"live metrics: serving final values for {self.opts.metrics_linger_s:g} s", file=sys.stderr)
            with contextlib.suppress(KeyboardInterrupt):
                time.sleep(self.opts.metrics_linger_s)

    def close(self) -> None:
        """Stop whatever still runs (also after a failure); safe to call twice."""
        if self.scraper is not None:
            self.scraper.abort()
        if self.gpu is not None:
            self.gpu.abort()
        if self.pusher is not None:
            self.pusher.stop()
        if self.server is not None:
            self.server.stop()
            self.server = None
