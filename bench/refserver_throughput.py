"""Reference server under concurrency: aggregate output tokens/s, TTFT and ITL at 1, 8 and 32 streams.

A minimal closed-loop httpx load loop (not the load generator: this measures the server). Each level
runs `concurrency` streams back to back for `--seconds`; aggregate tokens/s = output tokens of the
requests finished in the level ÷ the level's wall time. ITL = gaps between consecutive content chunks
as this client saw them, pooled over requests (one sample per gap). Each level is repeated and the
median of the repeats is reported (machines here are shared and noisy).

Usage:
  .venv/bin/python bench/refserver_throughput.py                      # starts `python -m refserver --port 0`
  .venv/bin/python bench/refserver_throughput.py --server-args "--device cuda --num-blocks 4096"
  .venv/bin/python bench/refserver_throughput.py --url http://127.0.0.1:8000 --model NAME --no-ignore-eos
  .venv/bin/python bench/refserver_throughput.py --export-tiny /tmp/tiny   # the tiny model as a HF directory
  .venv/bin/python bench/refserver_throughput.py --transformers /tmp/tiny  # `transformers serve` on it
  .venv/bin/python bench/refserver_throughput.py --compare-transformers /tmp/tiny --no-ignore-eos --temperature 0

`--export-tiny DIR` saves the default tiny model (seed 0) with transformers' `save_pretrained` and the
byte tokenizer as `tokenizer.json` (`refserver.tokenizer.save_byte_tokenizer`), so other servers run
the very same weights and token ids; `--server-args "--model DIR"` runs it on the reference server.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import orjson

from metrics.latency.stats import stats_block

_LISTENING = re.compile(r"listening on (http://\S+)")


@dataclass
class LevelResult:
    concurrency: int
    wall_s: float = 0.0
    requests: int = 0
    failed: int = 0
    output_tokens: int = 0
    ttft_s: list[float] = field(default_factory=list)
    itl_s: list[float] = field(default_factory=list)

    @property
    def tokens_per_s(self) -> float:
        return self.output_tokens / self.wall_s if self.wall_s > 0 else 0.0


def _is_content(event: dict[str, object]) -> bool:
    choices = event.get("choices")
    if not isinstance(choices, list) or not choices:
        return False
    first = choices[0]
    delta = first.get("delta") if isinstance(first, dict) else None
    if isinstance(delta, dict):
        return bool(delta.get("content") or delta.get("reasoning_content"))
    return isinstance(first, dict) and bool(first.get("text"))


async def _one_request(client: httpx.AsyncClient, body: dict[str, object], result: LevelResult) -> None:
    sent = time.perf_counter()
    chunk_times: list[float] = []
    tokens: int | None = None
    async with client.stream("POST", "/v1/chat/completions", json=body) as response:
        if response.status_code != 200:
            await response.aread()
            result.failed += 1
            return
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            event = orjson.loads(line[6:])
            if _is_content(event):
                chunk_times.append(time.perf_counter())
            usage = event.get("usage")
            if isinstance(usage, dict) and isinstance(usage.get("completion_tokens"), int):
                tokens = usage["completion_tokens"]
    if not chunk_times:
        result.failed += 1
        return
    result.requests += 1
    result.output_tokens += tokens if tokens is not None else len(chunk_times)
    result.ttft_s.append(chunk_times[0] - sent)
    result.itl_s.extend(np.diff(chunk_times).tolist())


async def run_level(url: str, body: dict[str, object], concurrency: int, seconds: float) -> LevelResult:
    result = LevelResult(concurrency)
    limits = httpx.Limits(max_connections=concurrency + 4, max_keepalive_connections=concurrency + 4)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(600.0), limits=limits) as client:
        start = time.perf_counter()
        deadline = start + seconds

        async def stream_loop() -> None:
            while time.perf_counter() < deadline:
                await _one_request(client, body, result)

        await asyncio.gather(*(stream_loop() for _ in range(concurrency)))
        result.wall_s = time.perf_counter() - start
    return result


def export_tiny(directory: str, seed: int = 0) -> None:
    import transformers

    from refserver.model import tiny_config, tiny_model
    from refserver.tokenizer import save_byte_tokenizer

    ours = tiny_model(seed, dtype="float32", device="cpu")
    c = tiny_config()
    hf_config = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, intermediate_size=c.intermediate_size,
        num_hidden_layers=c.num_layers, num_attention_heads=c.num_heads, num_key_value_heads=c.num_kv_heads,
        head_dim=c.head_dim, max_position_embeddings=c.max_position_embeddings, rms_norm_eps=c.rms_norm_eps,
        rope_parameters={"rope_type": "default", "rope_theta": c.rope_theta}, bos_token_id=c.bos_token_id, eos_token_id=c.eos_token_id,
        tie_word_embeddings=c.tie_word_embeddings,
    )  # fmt: skip
    hf = transformers.LlamaForCausalLM(hf_config)
    hf.load_state_dict(ours.state_dict())
    hf.save_pretrained(directory)
    save_byte_tokenizer(directory)


@contextmanager
def transformers_server(model_dir: str, port: int) -> Iterator[str]:
    exe = str(Path(sys.executable).with_name("transformers"))
    cmd = [exe, "serve", model_dir, "--continuous-batching", "--device", "cpu", "--host", "127.0.0.1",
           "--port", str(port)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300.0
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"transformers serve exited with {proc.returncode}")
            try:
                if httpx.get(f"{url}/health", timeout=2.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("transformers serve did not become healthy")
            time.sleep(0.5)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=60)


@contextmanager
def refserver(server_args: str) -> Iterator[str]:
    cmd = [sys.executable, "-m", "refserver", "--port", "0", *shlex.split(server_args)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            match = _LISTENING.search(line)
            if match:
                break
        else:
            raise RuntimeError(f"refserver exited with {proc.wait()}")
        yield match.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1000:.2f}"


def _median_stat(samples: Iterator[list[float]], key: str) -> float | None:
    """Median over repeats of one percentile; None when no repeat had a sample (never 0)."""
    values = [v for v in (stats_block(s)[key] for s in samples) if v is not None]
    return statistics.median(values) if values else None


def report(levels: list[list[LevelResult]]) -> None:
    print("| streams | output tok/s (median) | tok/s per stream | TTFT p50 ms | ITL p50 ms | ITL p99 ms | requests | failed |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for repeats in levels:
        c = repeats[0].concurrency
        tps = statistics.median(r.tokens_per_s for r in repeats)
        ttft = _median_stat((r.ttft_s for r in repeats), "p50")
        itl50 = _median_stat((r.itl_s for r in repeats), "p50")
        itl99 = _median_stat((r.itl_s for r in repeats), "p99")
        requests = sum(r.requests for r in repeats)
        failed = sum(r.failed for r in repeats)
        print(f"| {c} | {tps:.0f} | {tps / c:.1f} | {_ms(ttft)} | {_ms(itl50)} | {_ms(itl99)} | {requests} | {failed} |")


def request_body(args: argparse.Namespace) -> dict[str, object]:
    body: dict[str, object] = {
        "model": args.model,
        "messages": [{"role": "user", "content": "x" * args.prompt_chars}],
        "max_tokens": args.max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if args.ignore_eos:
        body["ignore_eos"] = True
    if args.temperature is not None:
        body["temperature"] = args.temperature
    return body


async def measure(url: str, args: argparse.Namespace, repeats: int) -> list[list[LevelResult]]:
    """Per concurrency level, `repeats` results (after a short warm-up: first passes, connections)."""
    body = request_body(args)
    await run_level(url, body, 1, min(args.seconds, 2.0))
    levels = []
    for concurrency in (int(c) for c in args.concurrency.split(",")):
        levels.append([await run_level(url, body, concurrency, args.seconds) for _ in range(repeats)])
    return levels


def compare_with_transformers(args: argparse.Namespace) -> None:
    """Alternate the two servers round by round, each alone on the machine while it is measured."""
    model_dir = args.compare_transformers
    args.model = model_dir
    ours: list[list[list[LevelResult]]] = []
    theirs: list[list[list[LevelResult]]] = []
    for _ in range(args.repeats):
        with refserver(f"--model {shlex.quote(model_dir)}") as url:
            ours.append(asyncio.run(measure(url, args, 1)))
        with transformers_server(model_dir, args.transformers_port) as url:
            theirs.append(asyncio.run(measure(url, args, 1)))
    for name, rounds in (("reference server (--model DIR)", ours), ("transformers serve --continuous-batching", theirs)):
        print(f"\n{name}")
        report([[r[level][0] for r in rounds] for level in range(len(rounds[0]))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", help="an OpenAI-compatible server; default: start the reference server")
    parser.add_argument("--server-args", default="", help="extra options for `python -m refserver`")
    parser.add_argument("--model", default="goodput-tiny")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--seconds", type=float, default=8.0, help="duration of each level")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--prompt-chars", type=int, default=32)
    parser.add_argument("--temperature", type=float, default=None)
    parser.add_argument("--no-ignore-eos", dest="ignore_eos", action="store_false")
    parser.add_argument("--export-tiny", metavar="DIR", help="save the tiny model as a HF directory and exit")
    parser.add_argument("--transformers", metavar="DIR", help="benchmark `transformers serve` on this directory")
    parser.add_argument("--transformers-port", type=int, default=8765)
    parser.add_argument(
        "--compare-transformers", metavar="DIR", help="alternate refserver --model DIR and transformers serve DIR"
    )
    args = parser.parse_args()
    if args.compare_transformers:
        compare_with_transformers(args)
        return
    if args.export_tiny:
        export_tiny(args.export_tiny)
        return
    if args.transformers:
        with transformers_server(args.transformers, args.transformers_port) as url:
            args.model = args.transformers
            report(asyncio.run(measure(url, args, args.repeats)))
        return
    if args.url:
        report(asyncio.run(measure(args.url, args, args.repeats)))
        return
    with refserver(args.server_args) as url:
        report(asyncio.run(measure(url, args, args.repeats)))


if __name__ == "__main__":
    main()
