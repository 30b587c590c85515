"""How many concurrent simulated sequences one sim-engine process sustains with step pacing on plan.

    .venv/bin/python bench/sim_pacing.py --concurrency 64,256,512,1024 --output-tokens 64 --repeat 3

For each concurrency N: an AsyncLLMEngine with the sim runner (default Llama-3.1-8B on H100-SXM), N
streaming consumers on the event loop (as the HTTP layer would have), N requests of `--prompt-tokens`
that all decode together for `--output-tokens`. Per step the runner records how much later than a
back-to-back plan the step ended (`Pacing.errors_s`: sleep overshoot, plus any gap between steps the
engine's own scheduling and event delivery made too long to chain). Reported over the decode steps
(all N sequences running): p50 / p99 / max pacing error, planned step time, and the share of engine
time spent outside the runner, and the process's CPU seconds per wall second (load-independent: how
much of one core simulating N sequences takes). N is "sustained" when p99 error ≤ 1 ms. Medians over `--repeat` runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import time

from refserver.engine import EngineConfig, SamplingParams, build_engine
from refserver.engine.async_engine import AsyncLLMEngine
from refserver.engine.sim_runner import SimModelRunner, SimOptions


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


async def run_once(n: int, prompt_tokens: int, output_tokens: int, options: SimOptions) -> dict[str, float]:
    engine = build_engine(EngineConfig(runner="sim", sim=options, max_num_seqs=n, max_waiting=n,
                                       max_num_batched_tokens=max(8192, prompt_tokens)))
    assert isinstance(engine, AsyncLLMEngine)
    runner = engine.engine.runner
    assert isinstance(runner, SimModelRunner)
    await engine.start()

    async def consume(i: int) -> int:
        prompt = [32 + (i * 31 + j) % 90 for j in range(prompt_tokens)]  # distinct: no prefix sharing
        count = 0
        async for event in engine.generate(f"r{i}", prompt, SamplingParams(max_tokens=output_tokens,
                                                                            ignore_eos=True)):
            count += len(event.new_token_ids)
        return count

    try:
        start, cpu_start = time.perf_counter(), time.process_time()
        counts = await asyncio.gather(*(consume(i) for i in range(n)))
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    finally:
        await engine.stop()
    assert all(c == output_tokens for c in counts)
    pacing = runner.pacing
    # Decode steps: the last output_tokens − 1 steps, when every sequence is past its prefill.
    steps = output_tokens - 1
    errors = pacing.errors_s()[-steps:]
    planned = list(pacing.planned_s)[-steps:]
    llm = engine.engine
    return {
        "p50_error_ms": 1e3 * _pct(errors, 0.5),
        "p99_error_ms": 1e3 * _pct(errors, 0.99),
        "max_error_ms": 1e3 * max(errors),
        "planned_step_ms": 1e3 * statistics.median(planned),
        "engine_overhead_ms": 1e3 * llm.overhead_s / max(llm.num_steps, 1),
        "wall_s": wall,
        "cpu_share": cpu / wall,  # process CPU seconds per wall second (all threads): < 1 leaves headroom
        "tokens_per_s": n * output_tokens / wall,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--concurrency", default="64,256,512,1024")
    ap.add_argument("--prompt-tokens", type=int, default=128)
    ap.add_argument("--output-tokens", type=int, default=64)
    ap.add_argument("--model", default="Llama-3.1-8B")
    ap.add_argument("--gpu", default="H100-SXM")
    ap.add_argument("--efficiency", type=float, default=0.75)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--gc-freeze", action="store_true",
                    help="gc.freeze() and a higher gen-0 threshold first: gen-2 collections over hundreds of "
                         "live sequences pause every thread for 10+ ms")
    args = ap.parse_args()
    if args.gc_freeze:
        gc.freeze()
        gc.set_threshold(50_000, 20, 1000)
    options = SimOptions(model=args.model, gpu=args.gpu, efficiency=args.efficiency)
    print(f"sim {args.model} on {args.gpu}, efficiency {args.efficiency}, prompt {args.prompt_tokens}, "
          f"output {args.output_tokens}, gc {'frozen' if args.gc_freeze else 'default'}; medians of {args.repeat} runs")
    print(f"{'N':>6} {'planned step':>13} {'err p50':>9} {'err p99':>9} {'err max':>9} {'engine ovh/step':>16} "
          f"{'tokens/s':>10} {'cpu/wall':>9}  sustained")
    for n in (int(x) for x in args.concurrency.split(",")):
        runs = [asyncio.run(run_once(n, args.prompt_tokens, args.output_tokens, options)) for _ in range(args.repeat)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        print(f"{n:>6} {med['planned_step_ms']:>10.2f} ms {med['p50_error_ms']:>6.3f} ms {med['p99_error_ms']:>6.3f} ms "
              f"{med['max_error_ms']:>6.2f} ms {med['engine_overhead_ms']:>13.2f} ms {med['tokens_per_s']:>10,.0f} {med['cpu_share']:>9.2f}  "
              f"{'yes' if med['p99_error_ms'] <= 1.0 else 'no'}")


if __name__ == "__main__":
    main()
