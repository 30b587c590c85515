"""Ground truth for `goodput capacity`: brute force on the sim engine against the search.

The sim engine (`goodput serve --engine sim`) steps at roofline-model times, so its SLO attainment at a
given load is (nearly) a property of the model, GPU preset and workload, the same on every server
process. This bench measures it by brute force, a fine grid of rates (`goodput sweep`), and runs
`goodput capacity` against an identical server at the same time:

- the grid's bracket, by the search's own rule (each grid point's 95 % Wilson interval of attainment):
  g_fail, the lowest grid rate shown to fall short of the target, and g_pass, the highest grid rate
  below it shown to meet it;
- the search must claim a rate below g_fail and no lower than g_pass / (1 + its --tolerance) (it stops
  once its own bracket is that narrow, so it may land that far below a grid point), and spend at most
  a third of the grid's requests;
- neither may exceed `goodput plan`'s roofline upper bound on requests/s for the workload.

The grid is split over several servers that run side by side (each sim server is a separate process
whose steps are sleeps, so they hardly compete for CPU); the search gets a server of its own.

    .venv/bin/python bench/capacity_ground_truth.py                    # the full-size run (a few minutes)
    .venv/bin/python bench/capacity_ground_truth.py --grid 10:40:1 --point-duration 3s --servers 4

tests/bench/test_capacity_ground_truth.py runs a smaller configuration of the same functions.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from anywhere
    sys.path.insert(0, str(ROOT))

from loadgen.cli.plan import build_plan  # noqa: E402
from loadgen.run import embedded_server  # noqa: E402
from metrics.capacity_search.proportion import wilson_interval  # noqa: E402

GOODPUT = str(Path(sys.executable).with_name("goodput"))


@dataclass(frozen=True, slots=True)
class Workload:
    """The deployment and the traffic: what the sim simulates and what every point sends."""

    sim_model: str = "Llama-3.1-8B"
    sim_gpu: str = "L4"  # a small GPU: steps of ~70 ms, a capacity of ~27 requests/s at this shape
    prompt_tokens: int = 256
    output_tokens: int = 8
    slo: tuple[str, ...] = ("ttft=500ms",)
    target: float = 0.9
    arrival: str = "constant"  # deterministic arrivals: the attainment curve of a deterministic server
    lag_threshold: str = "100ms"  # a busy machine's scheduling hiccups are not client saturation

    def server_args(self) -> list[str]:
        # No prefix caching: synthetic prompts share text, and cache hits would make the curve depend
        # on which prompts a server has seen before.
        return ["--engine", "sim", "--sim-model", self.sim_model, "--sim-gpu", self.sim_gpu, "--no-prefix-caching"]

    def load_args(self) -> list[str]:
        return ["--arrival", self.arrival, "--tokenizer", "bytes", "--ignore-eos",
                "--prompt-tokens", str(self.prompt_tokens), "--output-tokens", str(self.output_tokens),
                *(f"--slo={s}" for s in self.slo), "--lag-threshold", self.lag_threshold,
                "--server-metrics", "none", "--quiet"]


@dataclass(frozen=True, slots=True)
class GridPoint:
    rate: float
    good: int
    measured: int
    sent: int
    saturated: bool

    @property
    def attainment(self) -> float:
        return self.good / self.measured if self.measured else 0.0


@dataclass(slots=True)
class Outcome:
    grid: list[GridPoint]
    grid_requests: int
    g_pass: float | None
    g_fail: float | None
    capacity: dict[str, Any]  # capacity.json's `capacity`
    plan_bound_rps: float
    tolerance: float
    problems: list[str] = field(default_factory=list)


def grid_rates(lo: float, hi: float, step: float) -> list[float]:
    count = round((hi - lo) / step) + 1
    return [round(lo + i * step, 6) for i in range(count)]


@contextlib.contextmanager
def sim_servers(count: int, workload: Workload) -> Iterator[list[str]]:
    """`count` identical sim servers on free loopback ports, stopped afterwards (also on failure)."""
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(embedded_server(workload.server_args())) for _ in range(count)]


def sweep_command(url: str, rates: Sequence[float], workload: Workload, point_duration: str, out: Path) -> list[str]:
    return [GOODPUT, "sweep", "--url", url, "--rates", ",".join(f"{r:g}" for r in rates),
            "--point-duration", point_duration, "--output", str(out), *workload.load_args()]


def capacity_command(url: str, workload: Workload, point_duration: str, search: Sequence[str], out: Path) -> list[str]:
    return [GOODPUT, "capacity", "--url", url, "--attainment", str(workload.target), "--point-duration",
            point_duration, "--output", str(out), *workload.load_args(), *search]


def read_grid(sweep_dirs: Sequence[Path]) -> list[GridPoint]:
    points = []
    for d in sweep_dirs:
        doc = json.loads((d / "sweep.json").read_text())
        for p in doc["points"]:
            row = p["row"]
            points.append(GridPoint(rate=float(p["plan"]["value"]), good=int(row["good"] or 0),
                                    measured=int(row["measured"] or 0), sent=int(row["sent"] or 0),
                                    saturated=bool(row["client_saturated"])))
    return sorted(points, key=lambda g: g.rate)


def grid_bracket(points: Sequence[GridPoint], target: float, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """(g_pass, g_fail) by the search's own rule, the Wilson interval of each grid point's attainment at
    `confidence`: g_fail is the lowest grid rate *shown* to fall short (its interval below the target),
    g_pass the highest grid rate below it shown to meet it (its interval above). Between them lie the grid
    points whose attainment is too close to the target for their requests to tell."""
    intervals = [(p.rate, wilson_interval(p.good, p.measured, confidence)) for p in points if p.measured]
    failing = [rate for rate, (_, hi) in intervals if hi < target]
    g_fail = min(failing) if failing else None
    shown = [rate for rate, (lo, _) in intervals if lo >= target and (g_fail is None or rate < g_fail)]
    return (max(shown) if shown else None), g_fail


def plan_bound(workload: Workload) -> float:
    """`goodput plan`'s roofline upper bound on requests/s for the workload's shape."""
    plan = build_plan(model=workload.sim_model, gpu=workload.sim_gpu, tp=1, dtype="bf16", kv_dtype=None, block_size=16,
                      prompt_tokens=workload.prompt_tokens, output_tokens=workload.output_tokens, concurrency=1)
    return float(plan["throughput_bound"]["requests_per_s"])


def _wait(procs: Sequence[subprocess.Popen[str]], timeout_s: float) -> None:
    for proc in procs:
        _, err = proc.communicate(timeout=timeout_s)
        if proc.returncode != 0:
            raise RuntimeError(f"{proc.args!r} exited {proc.returncode}: {err[-2000:]}")


def measure(workload: Workload, *, rates: Sequence[float], grid_servers: int, point_duration: str,
            search: Sequence[str], tolerance: float, out: Path, timeout_s: float = 1800) -> Outcome:
    """The grid over `grid_servers` servers and the search on one more, all at once; the checks."""
    out.mkdir(parents=True, exist_ok=True)
    with sim_servers(grid_servers + 1, workload) as urls:
        shares = [list(rates[i::grid_servers]) for i in range(grid_servers)]
        sweep_dirs = [out / f"grid-{i}" for i in range(grid_servers)]
        procs = [subprocess.Popen(sweep_command(url, share, workload, point_duration, d), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
                 for url, share, d in zip(urls, shares, sweep_dirs, strict=False)]
        procs.append(subprocess.Popen(capacity_command(urls[-1], workload, point_duration,
                                                       [*search, "--tolerance", f"{tolerance:g}"], out / "capacity"),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
        try:
            _wait(procs, timeout_s)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
    grid = read_grid(sweep_dirs)
    g_pass, g_fail = grid_bracket(grid, workload.target)
    capacity = json.loads((out / "capacity" / "capacity.json").read_text())["capacity"]
    outcome = Outcome(grid=grid, grid_requests=sum(p.sent for p in grid), g_pass=g_pass, g_fail=g_fail,
                      capacity=capacity, plan_bound_rps=plan_bound(workload), tolerance=tolerance)
    outcome.problems = check(outcome)
    return outcome


def check(o: Outcome) -> list[str]:
    """What the search must satisfy against the grid and the roofline (empty: all of it)."""
    problems = []
    cap = o.capacity.get("rate")
    if o.g_pass is None or o.g_fail is None:
        problems.append(f"the grid does not bracket the capacity (pass {o.g_pass}, fail {o.g_fail}): widen it")
        return problems
    if any(p.saturated for p in o.grid if o.g_pass <= p.rate <= o.g_fail):
        problems.append("the client saturated at the grid's knee: the ground truth is not trustworthy here")
    if cap is None:
        problems.append(f"the search claimed no capacity ({o.capacity.get('status')}: {o.capacity.get('reason')})")
    else:
        if cap >= o.g_fail:
            problems.append(f"the search claimed {cap:g} req/s, not below the grid's failing {o.g_fail:g}")
        if cap < o.g_pass / (1 + o.tolerance):
            problems.append(f"the search claimed {cap:g} req/s, below the grid's passing {o.g_pass:g} by more than "
                            f"its tolerance {o.tolerance:g}")
        if cap > o.plan_bound_rps:
            problems.append(f"the capacity {cap:g} req/s exceeds the roofline bound {o.plan_bound_rps:.3g}")
    if o.g_pass > o.plan_bound_rps:
        problems.append(f"the grid passed {o.g_pass:g} req/s, above the roofline bound {o.plan_bound_rps:.3g}")
    if o.capacity["requests"] * 3 > o.grid_requests:
        problems.append(f"the search spent {o.capacity['requests']} requests, more than a third of the grid's "
                        f"{o.grid_requests}")
    return problems


def report(o: Outcome) -> str:
    lines = ["rate    n     attainment  client", "------  ----  ----------  ------"]
    for p in o.grid:
        lines.append(f"{p.rate:<6g}  {p.measured:<4d}  {p.attainment:10.3f}  {'saturated' if p.saturated else 'ok'}")
    cap = o.capacity
    lines += [
        f"grid: {len(o.grid)} points, {o.grid_requests} requests; bracket [{o.g_pass}, {o.g_fail}] req/s",
        f"search: capacity {cap.get('rate')} req/s, bracket upper {cap.get('upper')}, status {cap.get('status')}, "
        f"{cap['points']} points, {cap['requests']} requests ({cap['requests'] / max(o.grid_requests, 1):.0%} of the grid)",
        f"roofline bound (goodput plan): {o.plan_bound_rps:.3g} req/s",
        "checks: " + ("all passed" if not o.problems else "; ".join(o.problems)),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-tokens", type=int, default=Workload().output_tokens)
    parser.add_argument("--grid", default="10:40:0.5", help="LO:HI:STEP requests/s of the brute-force grid")
    parser.add_argument("--servers", type=int, default=4, help="sim servers the grid is spread over")
    parser.add_argument("--point-duration", default="6s")
    parser.add_argument("--min-rate", default="10")
    parser.add_argument("--max-rate", default="50")
    parser.add_argument("--tolerance", type=float, default=0.05)
    parser.add_argument("--output", type=Path, default=Path("runs/capacity-ground-truth"))
    args = parser.parse_args(argv)
    lo, hi, step = (float(x) for x in args.grid.split(":"))
    outcome = measure(Workload(output_tokens=args.output_tokens), rates=grid_rates(lo, hi, step), grid_servers=args.servers,
                      point_duration=args.point_duration, tolerance=args.tolerance, out=args.output,
                      search=["--min-rate", args.min_rate, "--max-rate", args.max_rate])
    print(report(outcome))
    return 1 if outcome.problems else 0


if __name__ == "__main__":
    sys.exit(main())
