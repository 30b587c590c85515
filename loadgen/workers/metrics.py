"""Per-worker series on the run's one /metrics endpoint (and in metrics.prom and the push), beside the run's
own families, which the parent folds from every worker's records exactly as a single process does.

    goodput_worker_up{worker}                               1 while the worker runs or finished, 0 once lost
    goodput_worker_in_flight_requests{worker}               as the worker last reported it
    goodput_worker_requests_dispatched_total{worker}        requests it started (a lost worker: its records)
    goodput_worker_requests_total{worker}                   its records that reached the run (lost ones included)
    goodput_worker_lost_requests_total{worker}              its requests recorded as lost (worker_lost)
    goodput_worker_dispatch_lag_p99_seconds{worker}         over its last 1000 sent requests

Summed over `worker`, the request counters equal the run's: sum(goodput_worker_requests_total) =
sum(goodput_requests_total) = summary.json `requests.records`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from loadgen.workers.coordinator import Coordinator


class WorkerMetrics(Collector):
    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    def collect(self) -> Iterator[Metric]:
        labels = ["worker"]
        up = GaugeMetricFamily("goodput_worker_up", "1 while the worker runs or after it finished; 0 once it "
                               "was lost.", labels=labels)
        in_flight = GaugeMetricFamily("goodput_worker_in_flight_requests", "Requests the worker has in flight.",
                                      labels=labels)
        dispatched = CounterMetricFamily("goodput_worker_requests_dispatched", "Requests the worker started "
                                         "(a lost worker: its records, lost ones included).", labels=labels)
        finished = CounterMetricFamily("goodput_worker_requests", "The worker's records that reached the run, "
                                       "lost requests included.", labels=labels)
        lost = CounterMetricFamily("goodput_worker_lost_requests", "The worker's requests recorded as lost.",
                                   labels=labels)
        lag = GaugeMetricFamily("goodput_worker_dispatch_lag_p99_seconds", "p99 of actual minus intended send "
                                "time over the worker's most recent requests.", labels=labels)
        for index, view in enumerate(self.coordinator.workers):
            led = view.ledger
            key = [str(index)]
            up.add_metric(key, 0.0 if led.lost else 1.0)
            in_flight.add_metric(key, 0.0 if led.lost else float(led.in_flight))
            dispatched.add_metric(key, float(led.records if led.lost else led.sent))
            finished.add_metric(key, float(led.records))
            lost.add_metric(key, float(led.lost_records))
            lags = np.fromiter(list(view.lags_ns), dtype=np.int64)
            if lags.size:
                lag.add_metric(key, float(np.percentile(lags, 99)) / 1e9)
        yield from (up, in_flight, dispatched, finished, lost, lag)
