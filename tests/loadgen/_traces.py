"""Small trace files written by the tests (never downloaded): Mooncake JSONL, Azure and BurstGPT CSV."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any


def write_mooncake(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def reuse_rows(n: int, *, gap_ms: int = 150, seed: int = 1, output: int = 8) -> list[dict[str, Any]]:
    """A Mooncake-style trace with known reuse: four documents of up to three shared blocks, each request
    reading one of them to some depth and adding blocks of its own, its last block partial."""
    rng = random.Random(seed)
    rows = []
    own = 1000
    for i in range(n):
        doc, depth = rng.randrange(4), rng.randint(1, 3)
        ids = [doc * 10 + j for j in range(depth)]
        for _ in range(rng.randint(0, 2)):
            ids.append(own)
            own += 1
        rows.append({"timestamp": i * gap_ms, "input_length": 512 * len(ids) - rng.randint(0, 300),
                     "output_length": output, "hash_ids": ids})
    return rows


def write_azure(path: Path, rows: list[tuple[str, int, int]]) -> Path:
    lines = ["TIMESTAMP,ContextTokens,GeneratedTokens", *(f"{t},{c},{g}" for t, c, g in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_burstgpt(path: Path, rows: list[tuple[float, int, int]]) -> Path:
    lines = ["Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type",
             *(f"{t},ChatGPT,{i},{o},{i + o},Conversation log" for t, i, o in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path
