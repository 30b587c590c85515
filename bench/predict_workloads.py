"""The workloads of the predictor's ground truth (bench/predict_ground_truth.py and its torch version): a
synthetic prompt/output mix, and a Mooncake-format trace with prefix reuse written here (never downloaded)."""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Mix:
    """A workload as `goodput run` options (`args`) and as run_defaults values (`values`)."""

    label: str
    options: tuple[str, ...]
    settings: dict[str, object] = field(default_factory=dict)

    def args(self) -> list[str]:
        return list(self.options)

    def values(self) -> dict[str, object]:
        return dict(self.settings)


def synthetic(prompt_tokens: str, output_tokens: str, *, cache_bust: bool = True) -> Mix:
    """Synthetic lengths; with `cache_bust` (a unique prefix per request) no prompt hits the prefix cache,
    not even one repeated by the next point of a sweep or capacity search (every point has the same seed)."""
    options = ("--prompt-tokens", prompt_tokens, "--output-tokens", output_tokens, *(("--cache-bust",) * cache_bust))
    label = f"prompt {prompt_tokens}, output {output_tokens}"
    return Mix(label, options, {"prompt_tokens": prompt_tokens, "output_tokens": output_tokens,
                                "cache_bust": cache_bust})


def trace_mix(path: Path) -> Mix:
    return Mix(f"trace {path.name}", ("--trace", str(path)), {"trace": str(path)})


def prefix_trace_rows(n: int, *, docs: int = 4, doc_blocks: int = 2, output: int = 32,
                      seed: int = 7) -> list[dict[str, object]]:
    """One request a second; each reads one of `docs` shared documents of `doc_blocks` 512-token blocks,
    then one block of its own cut by up to 256 tokens (1,280-1,536 prompt tokens, two thirds or more of them
    a shared prefix). Evenly spaced, so a capacity probe's first seconds of the trace, rescaled, offer
    exactly its rate (a Poisson trace's first 20 s offer the mean rate only to within ±10 %)."""
    rng = random.Random(seed)
    rows: list[dict[str, object]] = []
    for i in range(n):
        doc = rng.randrange(docs)
        ids = [doc * 100 + j for j in range(doc_blocks)] + [10_000 + i]
        rows.append({"timestamp": 1000 * i, "input_length": 512 * len(ids) - rng.randint(0, 256),
                     "output_length": output, "hash_ids": ids})
    return rows


def write_prefix_trace(path: Path, n: int, **kwargs: object) -> Path:
    rows = prefix_trace_rows(n, **kwargs)  # type: ignore[arg-type]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path
