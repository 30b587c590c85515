"""The cost of requests with images (`--images`), and whether it moves dispatch lag.

    .venv/bin/python bench/images.py --images 4 --image-size 1024x1024 --rate 20 --duration 15 --repeat 3

Part 1, in this process: the time to build one request's images (ImageMaker.pictures: the seeded
pixels, Pillow's encoding, base64) for PNG and JPEG, and the time to encode its JSON body
(loadgen.http.payload.encode_body, which runs between the wake-up and the send), as medians over
`--build-requests` requests.

Part 2: `goodput run` processes (open loop, Poisson) against the paced SSE server of
`client_throughput.py` in its own process, alternating runs without and with images (`--repeat` pairs),
each request streaming `--output-tokens` chunks one every `--interval-ms`. Prints each run's dispatch
lag (d − a from summary.json) and the medians of the runs of each kind.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from dispatch_lag import start_server  # noqa: E402


def build_costs(args: argparse.Namespace) -> None:
    from loadgen.http.payload import encode_body
    from loadgen.types import ClientConfig, WorkItem
    from loadgen.workload.images.attach import add_pictures
    from loadgen.workload.images.spec import ImageSpec
    from loadgen.workload.images.synth import ImageMaker

    config = ClientConfig(base_url="http://127.0.0.1:1", model="bench")
    for fmt in ("png", "jpeg"):
        maker = ImageMaker(ImageSpec(count=args.images, size=args.image_size, format=fmt), seed=0)
        maker.warm()
        build, body, sizes = [], [], []
        for i in range(args.build_requests):
            t0 = time.perf_counter()
            pictures = maker.pictures(i)
            t1 = time.perf_counter()
            item = add_pictures(WorkItem(messages=[{"role": "user", "content": "x " * 64}], max_tokens=50), pictures)
            t2 = time.perf_counter()
            sizes.append(len(encode_body(item, config)))
            body.append(time.perf_counter() - t2)
            build.append(t1 - t0)
        print(f"{fmt}: {args.images} x {args.image_size} per request: build p50 {statistics.median(build) * 1e3:.1f} ms"
              f" (max {max(build) * 1e3:.1f}), body encode p50 {statistics.median(body) * 1e3:.2f} ms"
              f" (max {max(body) * 1e3:.2f}), body {statistics.median(sizes) / 1e3:.0f} kB")


def one_run(port: int, images: bool, args: argparse.Namespace, out: Path) -> dict[str, float]:
    goodput = str(Path(sys.executable).with_name("goodput"))
    cmd = [goodput, "run", "--url", f"http://127.0.0.1:{port}", "--model", "bench", "--arrival", "poisson",
           "--rate", str(args.rate), "--duration", f"{args.duration}s", "--output-tokens", str(args.output_tokens),
           "--prompt-tokens", "64", "--extra-body", json.dumps({"interval_us": int(args.interval_ms * 1000)}),
           "--server-metrics", "none", "--quiet", "--no-html", "--output", str(out)]
    if images:
        cmd += ["--images", args.images, "--image-size", args.image_size, "--image-format", args.image_format,
                "--image-pool", args.image_pool]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    summary = json.loads((out / "summary.json").read_text())
    lag = summary["latency"]["dispatch_lag_s"]
    return {"sent": summary["requests"]["sent"], "failed": summary["requests"]["failed"],
            "p50_ms": lag["p50"] * 1e3, "p99_ms": lag["p99"] * 1e3, "max_ms": lag["max"] * 1e3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", default="4")
    ap.add_argument("--image-size", default="1024x1024")
    ap.add_argument("--image-format", default="png")
    ap.add_argument("--image-pool", default="0")
    ap.add_argument("--build-requests", type=int, default=30)
    ap.add_argument("--rate", type=float, default=20.0)
    ap.add_argument("--duration", type=float, default=15.0)
    ap.add_argument("--output-tokens", type=int, default=50)
    ap.add_argument("--interval-ms", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    build_costs(args)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        proc, port = start_server(tmp)
        try:
            runs: dict[bool, list[dict[str, float]]] = {False: [], True: []}
            for r in range(args.repeat):
                for images in (False, True):
                    res = one_run(port, images, args, tmp / f"run-{r}-{images}")
                    runs[images].append(res)
                    kind = f"{args.images} x {args.image_size} {args.image_format}" if images else "no images"
                    kind += f" pool {args.image_pool}" if images and args.image_pool != "0" else ""
                    print(f"  {kind:>26}: sent {res['sent']:.0f} failed {res['failed']:.0f}  lag p50"
                          f" {res['p50_ms']:.2f} ms  p99 {res['p99_ms']:.2f} ms  max {res['max_ms']:.1f} ms", flush=True)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    for images in (False, True):
        rs = runs[images]
        maxes = ", ".join(f"{r['max_ms']:.1f}" for r in rs)
        print(f"{'images' if images else 'text only'}: lag p50 {statistics.median(r['p50_ms'] for r in rs):.2f} ms,"
              f" p99 {statistics.median(r['p99_ms'] for r in rs):.2f} ms (medians of {len(rs)} runs),"
              f" max per run {maxes} ms")


if __name__ == "__main__":
    main()
