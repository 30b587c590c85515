"""`goodput run` as a measuring instrument: the one command line every server gets, what its summary says.

Two servers compared through this module receive the same request bodies: `run_command` builds the
command from the scenario and the shared settings alone, and only `--url` and `--output` differ
between servers. The figures are read back from the run's summary.json, as a user would read them.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Scenario:
    concurrency: int
    prompt_tokens: int
    output_tokens: int
    duration_s: float

    @property
    def label(self) -> str:
        return f"c{self.concurrency}-p{self.prompt_tokens}-o{self.output_tokens}"


@dataclass(frozen=True, slots=True)
class Shared:
    """Settings identical for every server: the model name in the body, tokenizer, seed, sampling."""

    goodput: str  # path of the `goodput` executable
    model: str
    tokenizer: str
    seed: int = 0
    temperature: float = 0.0
    ignore_eos: bool = False


def run_command(shared: Shared, scenario: Scenario, url: str, output: Path) -> list[str]:
    """A closed-loop run at the scenario's concurrency for its duration. `--server-metrics none` so no
    server gets extra scrapes the other does not; `--quiet` so the console costs nothing."""
    return [
        shared.goodput, "run",
        "--url", url,
        "--model", shared.model,
        "--arrival", "concurrency",
        "--concurrency", str(scenario.concurrency),
        "--duration", f"{scenario.duration_s:g}s",
        "--prompt-tokens", str(scenario.prompt_tokens),
        "--output-tokens", str(scenario.output_tokens),
        "--tokenizer", shared.tokenizer,
        "--seed", str(shared.seed),
        "--temperature", f"{shared.temperature:g}",
        "--ignore-eos" if shared.ignore_eos else "--no-ignore-eos",
        "--server-metrics", "none",
        "--quiet",
        "--output", str(output),
    ]  # fmt: skip


@dataclass(slots=True)
class RunFigures:
    """What one run's summary.json says, in the units the tables print."""

    output_tok_s: float
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    tpot_p50_ms: float | None
    tpot_p99_ms: float | None
    itl_token_p99_ms: float | None
    ok: int
    failed: int
    prompt_tokens_mean: float | None
    output_tokens_mean: float | None
    chunks_per_request: float | None
    outputs: dict[int, tuple[int | None, str | None]]  # request id -> (output tokens, finish reason)


def _ms(block: dict[str, Any], key: str) -> float | None:
    value = block.get(key)
    return None if value is None else float(value) * 1000.0


def read_run(directory: Path) -> RunFigures:
    summary = json.loads((directory / "summary.json").read_text())
    latency, tokens, requests = summary["latency"], summary["tokens"], summary["requests"]
    outputs: dict[int, tuple[int | None, str | None]] = {}
    chunks = 0
    with (directory / "records.jsonl").open() as lines:
        for line in lines:
            record = json.loads(line)
            if record.get("status") == "ok":
                outputs[int(record["id"])] = (record.get("output_tokens"), record.get("finish_reason"))
                chunks += len(record.get("chunk_ns") or [])
    n = int(tokens.get("requests") or 0)
    return RunFigures(
        output_tok_s=float(summary["throughput"]["output_tokens_per_s"] or 0.0),
        ttft_p50_ms=_ms(latency["ttft_s"], "p50"),
        ttft_p99_ms=_ms(latency["ttft_s"], "p99"),
        tpot_p50_ms=_ms(latency["tpot_s"], "p50"),
        tpot_p99_ms=_ms(latency["tpot_s"], "p99"),
        itl_token_p99_ms=_ms(latency["itl_token_s"], "p99"),
        ok=int(requests["succeeded"]),
        failed=int(requests["failed"]) + int(requests["cancelled"]),
        prompt_tokens_mean=tokens["prompt_tokens"] / n if n else None,
        output_tokens_mean=tokens["output_tokens"] / n if n else None,
        chunks_per_request=chunks / len(outputs) if outputs else None,
        outputs=outputs,
    )


def alternating_order(servers: Sequence[str], rounds: int) -> list[tuple[int, str]]:
    """A B A B …: every round runs each server once, in the same order, so slow drifts of the machine
    fall on both alike and each server's runs are spread over the whole session."""
    return [(r, s) for r in range(rounds) for s in servers]


def median(values: Sequence[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def ratio(ours: float | None, theirs: float | None) -> float | None:
    return None if ours is None or not theirs else ours / theirs


def agreement(
    a: dict[int, tuple[int | None, str | None]], b: dict[int, tuple[int | None, str | None]]
) -> tuple[int, int]:
    """(request ids both servers completed, of which with the same output length and finish reason).
    Request i carries the same prompt on every server (same seed), so greedy decoding of the same
    weights should end alike; a low share means the servers did not run the same model or prompts."""
    common = sorted(set(a) & set(b))
    return len(common), sum(a[i] == b[i] for i in common)


def fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def figures_table(name_runs: Sequence[tuple[str, Sequence[RunFigures]]]) -> list[str]:
    """Markdown rows: per server the medians over its runs (and each run's tok/s)."""
    rows = [
        "| server | output tok/s (median) | runs | TTFT p50 / p99 ms | TPOT p50 / p99 ms | ITL/token p99 ms "
        "| prompt tok | output tok | chunks/req | ok / failed |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, runs in name_runs:

        def m(attr: str, runs: Sequence[RunFigures] = runs) -> float | None:
            return median([getattr(r, attr) for r in runs])

        each = ", ".join(fmt(r.output_tok_s) for r in runs)
        rows.append(
            f"| {name} | {fmt(m('output_tok_s'))} | {each} | {fmt(m('ttft_p50_ms'))} / {fmt(m('ttft_p99_ms'))} "
            f"| {fmt(m('tpot_p50_ms'), 1)} / {fmt(m('tpot_p99_ms'), 1)} | {fmt(m('itl_token_p99_ms'), 1)} "
            f"| {fmt(m('prompt_tokens_mean'), 1)} | {fmt(m('output_tokens_mean'), 1)} | {fmt(m('chunks_per_request'), 1)} "
            f"| {sum(r.ok for r in runs)} / {sum(r.failed for r in runs)} |"
        )
    return rows
