"""Chunks of several tokens (a byte-level or BPE detokenizer holding back a split character or word) are
split into one token each before the steps are rebuilt: calibrate fits runs whose every request has some,
as the reference server's tiny model sends (half its chunks carry 2-4 tokens); it found no step in them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from loadgen.cli.commands import run_cli
from loadgen.predict.expand import one_token_per_chunk
from loadgen.predict.step_model import load_model
from metrics.records.record import RequestRecord
from tests.predict.test_calibrate_cli import TRUE, _records, _write_run


def _held_back(r: RequestRecord, rng: np.random.Generator) -> RequestRecord:
    """The record as a server holding back tokens sends it: groups of 1-3 tokens, each sent with its last."""
    ends, j = [], 0
    while j < len(r.chunk_ns):
        j = min(len(r.chunk_ns), j + int(rng.choice([1, 1, 2, 3])))
        ends.append(j - 1)
    sizes = np.diff([-1, *ends]).tolist()
    assert r.server_chunk_s is not None
    return dataclasses.replace(r, chunk_ns=[r.chunk_ns[e] for e in ends], chunk_tokens=sizes,
                               server_chunk_s=[r.server_chunk_s[e] for e in ends])


def test_tokens_are_spread_evenly_over_their_chunk_gap() -> None:
    r = RequestRecord(id=0, intended_ns=0, sent_ns=0, chunk_ns=[10, 13, 14, 17], chunk_tokens=[2, 3, 1, 3],
                      server_chunk_s=[1.0, 1.3, 1.4, 1.7])
    split = one_token_per_chunk(r)
    assert split.chunk_ns == [9, 10, 11, 12, 13, 14, 15, 16, 17] and split.chunk_tokens == [1] * 9
    assert split.server_chunk_s == pytest.approx([0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7])
    whole = dataclasses.replace(r, chunk_tokens=[1, 1, 1, 1])
    assert one_token_per_chunk(whole) is whole


def test_calibrate_fits_runs_whose_chunks_carry_several_tokens(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    runs = [_write_run(tmp_path / f"r{rate}", [_held_back(r, rng) for r in _records(rate, 120, seed)])
            for seed, rate in enumerate((5, 20, 40))]
    out = tmp_path / "server-model.json"
    code = run_cli(["calibrate", *map(str, runs), "--max-num-seqs", "32", "--max-num-batched-tokens", "2048",
                    "--num-blocks", "8000", "--fix", "prefill_ctx_s=0", "--output", str(out)])
    assert code == 0
    fitted = load_model(out)
    assert fitted.fixed_s + fitted.memory_s == pytest.approx(TRUE.fixed_s, rel=0.10)
    assert fitted.decode_seq_s == pytest.approx(TRUE.decode_seq_s, rel=0.20)
