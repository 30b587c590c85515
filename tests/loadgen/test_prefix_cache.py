"""The predicted prefix-cache hit rate of a trace: worked by hand on a small trace, and equal to what the
reference server's own block manager caches for the prompts goodput synthesises."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadgen.workload.counters import make_counter
from loadgen.workload.prefix_cache import predict_hits
from loadgen.workload.trace_workload import TraceWorkload
from loadgen.workload.traces import load_trace
from tests.loadgen._traces import reuse_rows, write_azure, write_mooncake

ROWS = [
    {"timestamp": 0, "input_length": 1000, "output_length": 1, "hash_ids": [1, 2]},
    {"timestamp": 1, "input_length": 1000, "output_length": 1, "hash_ids": [1, 2]},  # all of r0: 62 blocks
    {"timestamp": 2, "input_length": 700, "output_length": 1, "hash_ids": [1, 3]},  # block 1 only
    {"timestamp": 3, "input_length": 100, "output_length": 1, "hash_ids": [2]},  # block 2 after another prefix
    {"timestamp": 4, "input_length": 1100, "output_length": 1, "hash_ids": [1, 2, 4]},  # 1, and 488 of 2
]


def test_the_unbounded_prediction_worked_by_hand(tmp_path: Path) -> None:
    trace = load_trace(str(write_mooncake(tmp_path / "t.jsonl", ROWS)))
    p = predict_hits(trace, block_size=16)
    assert p.prompt_tokens == 3900
    assert p.cached_tokens == 992 + 512 + 0 + 992  # 16·⌊min(M, P − 1)/16⌋ per request
    assert p.hit_rate == pytest.approx(2496 / 3900)
    assert predict_hits(trace, block_size=512).cached_tokens == 512 + 512 + 512  # never the last token's block


def test_a_small_lru_cache_forgets_the_deepest_blocks_first(tmp_path: Path) -> None:
    trace = load_trace(str(write_mooncake(tmp_path / "t.jsonl", ROWS[:2])))
    # r0 fills 64 blocks of 16 (32 + 31 for its prompt, 1 for its output); 40 keep only its first block
    assert predict_hits(trace, block_size=16, cache_blocks=40).cached_tokens == 512
    assert predict_hits(trace, block_size=16, cache_blocks=64).cached_tokens == 992
    assert predict_hits(trace, block_size=16, cache_blocks=10).cached_tokens == 0


def test_a_trace_without_blocks_predicts_no_hits(tmp_path: Path) -> None:
    trace = load_trace(str(write_azure(tmp_path / "a.csv", [("2024-01-01 00:00:00", 100, 5)] * 3)))
    p = predict_hits(trace, block_size=16)
    assert p.cached_tokens == 0 and p.prompt_tokens == 300 and p.hit_rate == 0.0


@pytest.mark.parametrize("block_size", [16, 32, 100])
def test_the_prediction_is_what_the_reference_servers_block_manager_caches(tmp_path: Path, block_size: int) -> None:
    """The synthesised prompts (byte counter), served one after another by the reference server's own
    BlockManager: the cached tokens it reports are the prediction, request by request in total."""
    from refserver.engine.block_manager import BlockManager
    from refserver.engine.sequence import Sequence
    from refserver.engine.types import SamplingParams

    trace = load_trace(str(write_mooncake(tmp_path / "t.jsonl", reuse_rows(60))))
    work = TraceWorkload(trace, np.arange(trace.n), 0, make_counter("bytes")[1])
    manager = BlockManager(100_000, block_size)
    cached = 0
    for i in range(trace.n):
        prompt = list(str(work.item(i).prompt).encode())
        seq = Sequence.new(str(i), prompt, SamplingParams(max_tokens=1), 0.0)
        ids, hashes = manager.find_cached_prefix(prompt)
        cached += len(ids) * block_size
        manager.allocate(seq, ids, hashes, len(prompt) + 1)
        seq.append_token(7)
        seq.num_computed_tokens = len(prompt) + 1
        manager.cache_full_blocks(seq)
        manager.free(seq)
    assert predict_hits(trace, block_size=block_size).cached_tokens == cached > 0
