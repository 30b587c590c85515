"""Per-step engine overhead of the reference server: scheduler + bookkeeping, excluding the forward.

Run: .venv/bin/python bench/engine_overhead.py   (CPU, tiny model; prints medians of 3 runs)
`LLMEngine.overhead_s` accumulates each step's schedule + postprocess time (everything but runner.execute).
"""

from __future__ import annotations

import statistics
import time

from metrics.model.config import ModelConfig
from refserver.engine.config import EngineConfig
from refserver.engine.llm_engine import LLMEngine
from refserver.engine.runner import TorchModelRunner
from refserver.engine.runner_base import ScheduledBatch
from refserver.engine.types import SamplingParams
from refserver.model import tiny_config, tiny_model


class FillerRunner:
    """Computes nothing: isolates the engine's own cost per step."""

    def __init__(self, num_blocks: int) -> None:
        self._num_blocks = num_blocks

    @property
    def model_config(self) -> ModelConfig:
        return tiny_config()

    @property
    def num_blocks(self) -> int:
        return self._num_blocks

    def execute(self, batch: ScheduledBatch) -> list[int]:
        return [65] * batch.num_samples


def decode_steps(engine: LLMEngine, batch: int, prompt_len: int = 100, out: int = 200) -> tuple[float, float]:
    """(overhead µs/step, whole step µs) over the decode phase of `batch` concurrent sequences."""
    params = SamplingParams(max_tokens=out, temperature=0.0, ignore_eos=True)
    for i in range(batch):
        engine.add_request(f"r{i}", [(i * 7 + j) % 256 for j in range(prompt_len)], params)
    engine.step()  # the prefill (budget covers every prompt)
    s0, o0, t0 = engine.num_steps, engine.overhead_s, time.perf_counter()
    while engine.has_unfinished():
        engine.step()
    steps = engine.num_steps - s0
    return (engine.overhead_s - o0) / steps * 1e6, (time.perf_counter() - t0) / steps * 1e6


def main() -> None:
    import torch

    torch.set_num_threads(1)  # as build_engine does for the tiny model on CPU
    model = tiny_model(0, device="cpu")
    cfg = dict(num_blocks=2048, block_size=16, max_num_batched_tokens=8192, max_num_seqs=64)
    for batch in (1, 16, 64):
        filler = [decode_steps(LLMEngine(FillerRunner(2048), EngineConfig(**cfg)), batch) for _ in range(3)]
        torch_runs = [
            decode_steps(LLMEngine(TorchModelRunner(model, num_blocks=2048, block_size=16), EngineConfig(**cfg)), batch)
            for _ in range(3)
        ]
        over = statistics.median(o for o, _ in filler)
        t_over = statistics.median(o for o, _ in torch_runs)
        t_step = statistics.median(s for _, s in torch_runs)
        print(f"batch {batch:3d}: engine overhead {over:6.1f} µs/step ({over / batch:5.2f} µs/seq) [filler runner]; "
              f"tiny torch: overhead {t_over:6.1f} µs, step {t_step / 1e3:6.2f} ms, {batch / t_step * 1e6:7.0f} tok/s")


if __name__ == "__main__":
    main()
