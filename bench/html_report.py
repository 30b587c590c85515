"""Time and size of `goodput report --html` on large synthetic runs (default 10,000 and 100,000 requests ×
200 chunks; targets at 100,000: ≤ 10 s and report.html ≤ 8 MB).

    .venv/bin/python bench/html_report.py --requests 10000 100000 --chunks 200 --repeat 3

Writes records.jsonl as bench/report_scale.py does (Poisson arrivals, running-usage token counts, 1%
failures), then runs `goodput report DIR --quiet` with and without `--html` in child processes, interleaved,
`--repeat` times each after one uncounted pass; prints wall times, each child's peak resident memory,
report.html's size, and the HTML report's own time in process (from the frame and ITL samples the
summary was built from, as `goodput report --html` does), with its slowest stages.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report_scale import machine_reference, make_records  # a sibling script, not a package

PROBE = ("import resource, sys; from loadgen.cli import run_cli; code = run_cli(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr); sys.exit(code)")

IN_PROCESS = """
import cProfile, io, pstats, sys, time
from pathlib import Path
from exporters.html.run_data import gap_samples
from exporters.html.write import read_frame
from loadgen.run import write_run_report
run_dir = Path(sys.argv[1])
frame = read_frame(run_dir)
gaps = gap_samples(frame)
profile = cProfile.Profile()
t0 = time.perf_counter()
profile.enable()
write_run_report(run_dir, path=run_dir / "inprocess.html", frame=frame, gaps=gaps)
profile.disable()
print(f"  HTML report alone (frame and ITL samples given): {time.perf_counter() - t0:.2f} s")
out = io.StringIO()
pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats("exporters/html", 12)
print("\\n".join("  " + line for line in out.getvalue().splitlines() if "exporters/html" in line))
"""


def report(run_dir: Path, *extra: str) -> tuple[float, float]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE, "report", str(run_dir), "--quiet", *extra],
                          check=True, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - t0, int(done.stderr.strip().splitlines()[-1]) / 2**20  # KiB → GiB


def measure(requests: int, chunks: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run_dir = Path(tmp)
        t0 = time.perf_counter()
        make_records(run_dir / "records.jsonl", requests, chunks)
        size = (run_dir / "records.jsonl").stat().st_size
        print(f"{requests:,} records × {chunks} chunks ({size / 2**20:.0f} MiB) written in {time.perf_counter() - t0:.1f} s")
        report(run_dir)  # uncounted: writes the outputs, settles the file in the page cache
        plain, html = [], []
        for _ in range(repeat):  # interleaved: both see the same machine
            plain.append(report(run_dir))
            html.append(report(run_dir, "--html"))
        for name, runs in (("goodput report", plain), ("goodput report --html", html)):
            walls = [w for w, _ in runs]
            print(f"  {name}: wall median {statistics.median(walls):.2f} s (runs: "
                  f"{', '.join(f'{w:.2f}' for w in walls)}), peak RSS {max(p for _, p in runs):.2f} GiB")
        print(f"  report.html: {(run_dir / 'report.html').stat().st_size / 1e6:.2f} MB")
        subprocess.run([sys.executable, "-c", IN_PROCESS, str(run_dir)], check=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--chunks", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(machine_reference())
    for n in args.requests:
        measure(n, args.chunks, args.repeat)


if __name__ == "__main__":
    main()
