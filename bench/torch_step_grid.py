"""How the torch reference engine's decode step time follows what it reads: the runner (the tiny model, one
torch thread, float32 on the CPU) timed on decode-only batches of D sequences, all at one context (`@C`)
or spread over 100-1,500 tokens (`spread`), and the step model's decode terms (loadgen.predict.step_model:
fixed + D, K = Σ context) fitted to them by least squares, with each batch's residual.

    .venv/bin/python bench/torch_step_grid.py [--reps 7] [--tree DIR]

`--tree DIR` times another checkout's runner (e.g. an earlier commit's) with this script. An engine whose
decode attention is padded to the batch's longest context costs a spread batch what it costs the uniform
one at the longest context, which no fit in D and K holds.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

DECODES = (1, 4, 8, 16, 24, 31)
CONTEXTS: tuple[int | str, ...] = (200, 600, 1040, 1430, "spread")
BLOCK = 16
BLOCKS = 800


def grid(runner: Any, seq_cls: Any, item_cls: Any, batch_cls: Any, params: Any, reps: int,
         rng: random.Random) -> list[tuple[str, list[float], float]]:
    """(label, [D, K, D × the longest context], median seconds) per batch of the grid."""

    def item(ctx: int, n: int) -> Any:
        table = [rng.randrange(BLOCKS) for _ in range(-(-ctx // BLOCK))]
        s = seq_cls.new("r", [rng.randrange(256) for _ in range(ctx)], params, 0.0)
        return item_cls(s, s.token_ids[ctx - n:ctx], ctx - n, table, True)

    rows = []
    for d in DECODES:
        for c in CONTEXTS:
            ctxs = [rng.randint(100, 1500) for _ in range(d)] if c == "spread" else [int(c)] * d
            batch = batch_cls([item(x, 1) for x in ctxs])
            runner.execute(batch)
            times = []
            for _ in range(reps):
                t0 = time.perf_counter()
                runner.execute(batch)
                times.append(time.perf_counter() - t0)
            label = f"D {d}@{c}"
            rows.append((label, [float(d), float(sum(ctxs)), float(d * max(ctxs))], statistics.median(times)))
            print(f"{label:12s} K {int(sum(ctxs)):6d}  D x longest {d * max(ctxs):6d}  {rows[-1][2] * 1e3:7.2f} ms",
                  flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.tree.resolve()))
    import torch

    from refserver.engine.runner import TorchModelRunner
    from refserver.engine.runner_base import ScheduledBatch, ScheduledSeq
    from refserver.engine.sequence import Sequence as Seq
    from refserver.engine.types import SamplingParams
    from refserver.model import tiny_model

    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, runner from {args.tree}", flush=True)
    runner = TorchModelRunner(tiny_model(0, dtype="float32", device="cpu"), num_blocks=BLOCKS, block_size=BLOCK)
    rows = grid(runner, Seq, ScheduledSeq, ScheduledBatch, SamplingParams(max_tokens=64, ignore_eos=True),
                args.reps, random.Random(0))
    y = np.array([t for _, _, t in rows])
    for name, cols in (("D, K", [0, 1]), ("D, D x longest", [0, 2])):
        x = np.array([[1.0, *(f[i] for i in cols)] for _, f, _ in rows])
        theta, *_ = np.linalg.lstsq(x, y, rcond=None)
        rel = np.abs(y - x @ theta) / y
        print(f"fit in {name}: " + ", ".join(f"{v:.3g}" for v in theta) + f" s; |residual| / time: median "
              f"{np.median(rel):.1%}, max {rel.max():.1%} ({rows[int(rel.argmax())][0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
