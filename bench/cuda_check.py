"""The reference server's GPU path, checked on a machine with a CUDA GPU (nothing here runs in CI).

1. The engine's own tests on the GPU: tests/refserver/test_engine_equivalence.py with
   GOODPUT_TEST_DEVICE=cuda (greedy output of the paged, batched engine equals a full recompute, under
   preemption and prefix-cache hits too).
2. `goodput serve --device cuda` with the tiny model (bfloat16, the GPU default) under `goodput run`.
3. The same with a ~1B-parameter random Llama (made here with transformers, the byte tokenizer) under
   a closed-loop load, so the batched decode step does real work on the GPU.

Each served case prints the run's request accounting and latency percentiles, and the server's own
step timings from /metrics. Usage (from the repository root, on the GPU machine):

    python3 -m bench.cuda_check --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

LISTEN = re.compile(r"listening on (http://\S+)")


def sh(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    print("$", " ".join(cmd), flush=True)
    return subprocess.run(cmd, text=True, **kw)  # type: ignore[call-overload, no-any-return]


def goodput(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from loadgen.cli import main; sys.exit(main())", *args]


def big_model_dir(directory: Path, device: str) -> Path:
    """A random Llama of about 1B parameters (16 layers, hidden 2048, GQA 32/8) with the byte tokenizer."""
    import torch
    import transformers

    from refserver.model import tiny_config
    from refserver.text.tokenizer import save_byte_tokenizer

    c = tiny_config()
    cfg = transformers.LlamaConfig(
        vocab_size=c.vocab_size, hidden_size=2048, intermediate_size=5632, num_hidden_layers=16,
        num_attention_heads=32, num_key_value_heads=8, head_dim=64, max_position_embeddings=4096,
        rms_norm_eps=c.rms_norm_eps, bos_token_id=c.bos_token_id, eos_token_id=c.eos_token_id,
        tie_word_embeddings=False,
    )  # fmt: skip
    torch.manual_seed(0)
    with torch.device(device):
        hf = transformers.LlamaForCausalLM(cfg).to(torch.bfloat16)
    hf.save_pretrained(str(directory))
    save_byte_tokenizer(directory)
    return directory


def served_case(name: str, serve_args: list[str], run_args: list[str], out: Path) -> dict[str, object]:
    log = (out / f"{name}-server.log").open("w")
    server = subprocess.Popen(goodput("serve", "--port", "0", *serve_args), stdout=subprocess.PIPE,
                              stderr=log, text=True)
    result: dict[str, object] = {"case": name}
    try:
        assert server.stdout is not None
        deadline = time.monotonic() + 240
        url = None
        while url is None and time.monotonic() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            print(f"[{name} server] {line.rstrip()}", flush=True)
            m = LISTEN.search(line)
            url = m.group(1) if m else None
        if url is None:
            result["error"] = "server did not start (see its log)"
            return result
        run_dir = out / f"{name}-run"
        proc = sh(goodput("run", "--url", url, "--output", str(run_dir), "--overwrite", *run_args),
                  capture_output=True, timeout=300)
        print(proc.stdout[-6000:], proc.stderr[-3000:], sep="\n", flush=True)
        result["exit"] = proc.returncode
        summary_path = run_dir / "summary.json"
        if summary_path.exists():
            result["summary"] = json.loads(summary_path.read_text())
        metrics = sh(["curl", "-s", f"{url}/metrics"], capture_output=True, timeout=30).stdout
        (out / f"{name}-metrics.txt").write_text(metrics)
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--skip-tests", action="store_true")
    parser.add_argument("--skip-big", action="store_true", help="only the tiny model")
    parser.add_argument("--device", default="cuda", help="torch device for the server and the tests")
    args = parser.parse_args()
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    import torch

    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, cuda {torch.version.cuda}, "
          f"device {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'none'}", flush=True)
    results: list[dict[str, object]] = []
    if not args.skip_tests:
        env = {**os.environ, "GOODPUT_TEST_DEVICE": args.device}
        proc = sh([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                   "tests/refserver/test_engine_equivalence.py"], env=env, capture_output=True, timeout=400)
        print(proc.stdout[-4000:], proc.stderr[-2000:], flush=True)
        results.append({"case": f"engine tests on {args.device}", "exit": proc.returncode})
    load = ["--prompt-tokens", "uniform:64:512", "--output-tokens", "64", "--slo", "ttft=500ms",
            "--slo", "tpot=50ms", "--seed", "1"]
    results.append(served_case(f"tiny-{args.device}", ["--device", args.device],
                               ["--requests", "300", "--rate", "30", *load], out))
    if not args.skip_big:
        big = big_model_dir(out / "big-model", args.device)
        serve = ["--device", args.device, "--model", str(big), "--dtype", "bfloat16",
                 "--max-num-batched-tokens", "2048", "--max-num-seqs", "64"]
        results.append(served_case(f"big-{args.device}", serve,
                                   ["--requests", "256", "--concurrency", "32", *load], out))
    for r in results:
        s = r.pop("summary", None)
        if isinstance(s, dict):
            r["requests"] = s.get("requests")
            r["latency"] = {k: s.get("latency", {}).get(k, {}) for k in ("ttft_s", "tpot_s", "e2e_s")}
            r["goodput"] = s.get("goodput")
    (out / "cuda_check.json").write_text(json.dumps(results, indent=1, default=str))
    print(json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
