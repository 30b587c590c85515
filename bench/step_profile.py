"""Time the reference engine's steps on a device: prefill steps and decode-only steps at a batch size.

    python3 -m bench.step_profile --device cuda --batch 32 [--profile]

Builds the synchronous engine on the tiny model (or --model DIR), adds --batch requests with --prompt
tokens each, and reports the median wall time of prefill steps and of decode-only steps (each step
synchronised with the device), and with --profile the top operators by host time of a few decode steps.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default=None)
    parser.add_argument("--dtype", default=None)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--prompt", type=int, default=256)
    parser.add_argument("--output", type=int, default=64)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--sdpa", choices=["server", "cudnn"], default="server",
                        help="server: attention backends as the server sets them (cuDNN's off on CUDA); "
                        "cudnn: cuDNN's allowed again, as before that setting")
    args = parser.parse_args()
    import torch

    from refserver.engine.config import EngineConfig
    from refserver.engine.llm_engine import LLMEngine
    from refserver.engine.runner import TorchModelRunner
    from refserver.engine.types import SamplingParams
    from refserver.model import load_model, tiny_model

    if args.model:
        model = load_model(args.model, dtype=args.dtype, device=args.device)
    else:
        model = tiny_model(0, dtype=args.dtype, device=args.device)
    config = EngineConfig(num_blocks=4096, block_size=16, max_num_batched_tokens=2048, max_num_seqs=256)
    engine = LLMEngine(TorchModelRunner(model, num_blocks=4096, block_size=16, seed=0), config)
    if args.sdpa == "cudnn":
        torch.backends.cuda.enable_cudnn_sdp(True)
    params = SamplingParams(max_tokens=args.output, temperature=0.0, ignore_eos=True)
    for i in range(args.batch):
        engine.add_request(f"r{i}", [(i * 7 + j) % 250 for j in range(args.prompt)], params)
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    prefill: list[float] = []
    decode: list[float] = []
    step = 0
    while engine.has_unfinished():
        t0 = time.perf_counter()
        events = engine.step()
        sync()
        dt = time.perf_counter() - t0
        new = sum(len(e.new_token_ids) for _, e in events)
        (decode if new == args.batch else prefill).append(dt)  # every sequence got a token: no prefill left
        step += 1
        if args.profile and step == 20:
            from torch.profiler import ProfilerActivity, profile

            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if args.device.startswith("cuda") else [])
            with profile(activities=acts) as prof:
                for _ in range(5):
                    engine.step()
                sync()
            key = "self_cuda_time_total" if args.device.startswith("cuda") else "self_cpu_time_total"
            print(prof.key_averages().table(sort_by=key, row_limit=18, max_name_column_width=40))
    def med(xs: list[float]) -> str:
        return f"{statistics.median(xs) * 1e3:.2f} ms" if xs else "-"

    print(f"device {args.device} batch {args.batch} prompt {args.prompt}: {len(prefill)} prefill steps median "
          f"{med(prefill)}; {len(decode)} decode steps median {med(decode)}")

if __name__ == "__main__":
    main()
