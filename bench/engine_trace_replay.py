"""The torch engine alone (LLMEngine stepped in a loop: no HTTP, no event loop, no client) fed the prefix-reuse
trace of bench/predict_ground_truth_torch.py at a rate, on the wall clock: what its steps take when nothing
but the engine runs in the process, to tell the engine's behaviour from the serving path's and the machine's.

    nice -n 10 .venv/bin/python bench/engine_trace_replay.py --rate 3 --seconds 15

Prompts are random byte tokens, one 512-token block per hash id of the trace (so requests of one document
share its blocks as the served trace's do); the limits are the torch ground truth's (32 sequences, 512 tokens
per step, 800 blocks, prefix caching on). Prints the step-time percentiles, the preemptions, the most
sequences running, and the step times by the number of sequences sampled in the step.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.predict_workloads import prefix_trace_rows


def prompts(rate: float, seconds: float) -> list[tuple[float, list[int], int]]:
    """(arrival s, prompt token ids, output tokens) of the trace's first rate × seconds requests."""
    rng = random.Random(1)
    blocks: dict[int, list[int]] = {}
    out: list[tuple[float, list[int], int]] = []
    for i, row in enumerate(prefix_trace_rows(int(rate * seconds))):
        hash_ids, length, output = row["hash_ids"], row["input_length"], row["output_length"]
        assert isinstance(hash_ids, list) and isinstance(length, int) and isinstance(output, int)
        ids = [t for h in hash_ids for t in blocks.setdefault(h, [rng.randrange(3, 250) for _ in range(512)])]
        out.append((i / rate, ids[:length], output))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=3.0)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--num-blocks", type=int, default=800)
    args = parser.parse_args(argv)
    import torch

    from refserver.engine.config import EngineConfig
    from refserver.engine.factory import build_llm_engine
    from refserver.engine.types import SamplingParams

    torch.set_num_threads(1)
    engine = build_llm_engine(EngineConfig(device="cpu", dtype="float32", num_blocks=args.num_blocks,
                                           max_num_seqs=32, max_num_batched_tokens=512))
    todo = prompts(args.rate, args.seconds)
    by_sampled: dict[int, list[float]] = defaultdict(list)
    steps: list[float] = []
    most = 0
    print("load average " + ", ".join(f"{v:.1f}" for v in os.getloadavg()), flush=True)
    t0 = time.perf_counter()
    i = 0
    while i < len(todo) or engine.has_unfinished():
        now = time.perf_counter() - t0
        while i < len(todo) and todo[i][0] <= now:
            engine.add_request(f"r{i}", todo[i][1], SamplingParams(max_tokens=todo[i][2], ignore_eos=True),
                               t0 + todo[i][0])
            i += 1
        if not engine.has_unfinished():
            time.sleep(0.001)
            continue
        start = time.perf_counter()
        events = engine.step()
        steps.append(time.perf_counter() - start)
        by_sampled[len(events)].append(steps[-1])
        most = max(most, len(engine.scheduler.running))
    ms = np.array(steps) * 1e3
    print(f"{len(todo)} requests at {args.rate} req/s: {len(steps)} steps, p50 {np.median(ms):.1f} ms, "
          f"p90 {np.percentile(ms, 90):.1f} ms, max {ms.max():.1f} ms; {engine.scheduler.num_preemptions} "
          f"preemptions; at most {most} running; {time.perf_counter() - t0:.1f} s")
    for n, times in sorted(by_sampled.items()):
        print(f"  {n:2d} sampled: {len(times):4d} steps, median {np.median(times) * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
