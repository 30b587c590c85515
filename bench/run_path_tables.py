"""The tables `bench/run_path.py` prints: one row per run or per case (medians), and the fitted cost model."""

from __future__ import annotations

from bench.run_path_figures import fit_cost

COLUMNS = [("requests", "reqs", ".0f"), ("chunks", "chunks", ".0f"), ("cpu_s", "cpu s", ".2f"),
           ("win_us_per_chunk", "win µs/chk", ".1f"), ("win_us_per_request", "win µs/req", ".0f"),
           ("startup_s", "start s", ".3f"), ("startup_cpu_s", "start cpu", ".3f"),
           ("first_sent_s", "1st sent s", ".3f"),
           ("lag_p50_ms", "lag p50", ".3f"), ("lag_p99_ms", "lag p99", ".3f"), ("lag_max_ms", "lag max", ".1f"),
           ("err_p50_ms", "err p50", ".3f"), ("err_p99_ms", "err p99", ".3f"), ("abs_err_p99_ms", "|err|p99", ".3f"),
           ("server_us_per_chunk", "srv µs/chk", ".1f"), ("server_late_p99_ms", "srv late99", ".2f"),
           ("failed", "failed", ".0f"), ("load1", "load1", ".2f")]


def row(label: str, r: dict[str, float]) -> str:
    return f"{label:>16} " + " ".join(f"{format(r[k], fmt):>{max(len(h), 7)}}" for k, h, fmt in COLUMNS)


def header() -> str:
    return f"{'case':>16} " + " ".join(f"{h:>{max(len(h), 7)}}" for _, h, _ in COLUMNS)


def print_fits(runs: list[dict[str, float]]) -> None:
    a, b, c = fit_cost([r["cpu_s"] for r in runs], [r["requests"] for r in runs], [r["chunks"] for r in runs])
    print(f"whole process: cpu = {a:.3f} s + {b * 1e6:.0f} µs/request + {c * 1e6:.1f} µs/chunk "
          f"({len(runs)} runs, least squares)")
    e, b2, c2 = fit_cost([r["win_cpu_s"] for r in runs], [r["win_requests"] for r in runs],
                         [r["win_chunks"] for r in runs], intercept=[r["win_s"] for r in runs])
    print(f"steady window: cpu = {e * 1e3:.1f} ms/s + {b2 * 1e6:.0f} µs/request + {c2 * 1e6:.1f} µs/chunk")


FLOOR_COLUMNS = [("us_per_chunk", "µs/chk", ".1f"), ("us_per_request", "µs/req", ".0f"),
                 ("lag_p50_ms", "lag p50", ".3f"), ("lag_p99_ms", "lag p99", ".3f"), ("err_p50_ms", "err p50", ".3f"),
                 ("err_p99_ms", "err p99", ".3f"), ("abs_err_p99_ms", "|err|p99", ".3f")]


def floor_row(label: str, r: dict[str, float]) -> str:
    return f"{label:>9} " + " ".join(f"{format(r[k], fmt):>{max(len(h), 7)}}" for k, h, fmt in FLOOR_COLUMNS)
