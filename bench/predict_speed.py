"""How long `goodput predict` takes as a process: 10 rates × 10,000 requests (256-token prompts, 128 output
tokens, Poisson arrivals) on a server model like bench/predict_ground_truth.py's calibration (90.3 ms per
step, 19 µs per prefill token, 64 sequences, 512 tokens per step, 4,000 blocks of 16, prefix caching on),
saturated from about 5.5 req/s.

Each variant is a source tree run with this interpreter (`PYTHONPATH=TREE`), runs alternated A, B, A, B...
so that they share the machine's load; per run: wall time, CPU time of the process (user + sys) and the
load average. The predictions (predict.json's points) of every run must be equal: the variants are compared
only if they predict the same thing.

    .venv/bin/python bench/predict_speed.py --variant before=/tmp/tree-before --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODEL = {
    "schema_version": 1, "fixed_s": 0.0903, "memory_s": 0.0, "prefill_s": 1.9e-5, "prefill_ctx_s": 0.0,
    "decode_seq_s": 6e-6, "decode_kv_s": 0.0, "overlap": False,
    "limits": {"max_num_seqs": 64, "max_num_batched_tokens": 512, "block_size": 16, "num_blocks": 4000,
               "enable_prefix_caching": True, "chunked_prefill": True},
    "std_err": {"fixed_s": 0.0011, "prefill_s": 5e-6, "decode_seq_s": 7e-6}, "fit": {},
}
MAIN = "import sys; from loadgen.cli import main; sys.argv[0] = 'goodput'; sys.exit(main())"


def run_once(tree: Path, args: argparse.Namespace, work: Path, tag: str) -> dict[str, float]:
    out = work / f"predict-{tag}.json"
    cmd = [sys.executable, "-c", MAIN, "predict", "--server-model", str(work / "server-model.json"),
           "--rates", args.rates, "--requests", str(args.requests), "--prompt-tokens", str(args.prompt_tokens),
           "--output-tokens", str(args.output_tokens), "--json", str(out)]
    if args.jobs is not None:
        cmd += ["--jobs", str(args.jobs)]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    load = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, cwd=work, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu, "load": load, "points": json.loads(out.read_text())["points"]}


def version(tree: Path) -> str:
    try:
        return subprocess.run(["git", "-C", str(tree), "describe", "--always", "--dirty"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "(not a git tree)"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=TREE",
                    help="another source tree to alternate with this one (repeatable)")
    ap.add_argument("--rates", default="1,2,3,4,5,6,7,8,9,10")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--prompt-tokens", type=int, default=256)
    ap.add_argument("--output-tokens", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=None, help="goodput predict --jobs (default: its own, one per CPU)")
    args = ap.parse_args()
    trees = {"this": ROOT} | {v.split("=", 1)[0]: Path(v.split("=", 1)[1]).resolve() for v in args.variant}
    print(f"python {platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs, "
          f"{platform.processor() or platform.machine()}")
    for name, tree in trees.items():
        print(f"  {name}: {tree} at {version(tree)}")
    jobs = "" if args.jobs is None else f" --jobs {args.jobs}"
    print(f"goodput predict --rates {args.rates} --requests {args.requests} --prompt-tokens {args.prompt_tokens} "
          f"--output-tokens {args.output_tokens}{jobs}")
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "server-model.json").write_text(json.dumps(MODEL))
        for i in range(args.repeat):
            for name, tree in trees.items():
                r = run_once(tree, args, work, f"{name}-{i}")
                results[name].append(r)
                print(f"  run {i + 1} {name:>8}: wall {r['wall_s']:6.1f} s  cpu {r['cpu_s']:6.1f} s  "
                      f"load average {r['load']:.1f}", flush=True)
    reference = next(iter(results.values()))[0]["points"]
    same = all(r["points"] == reference for rs in results.values() for r in rs)
    print(f"predictions identical across runs and variants: {same}")
    for name, rs in results.items():
        print(f"{name:>8}: median wall {statistics.median(r['wall_s'] for r in rs):.1f} s, "
              f"median cpu {statistics.median(r['cpu_s'] for r in rs):.1f} s over {len(rs)} runs")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
