"""The client's per-chunk decode work alone, tree against tree: CPU per content chunk of a chat stream.

    .venv/bin/python bench/chunk_decode.py --variant before=TREE --rounds 7 --chunks 20000

One SSE body of `--chunks` chat chunks as vLLM streams them (one token each, running usage), split into
reads of 8 events, is fed through `StreamBody.read` (SSE parsing, the chunk accumulator) and the record's
`fill` (token accounting and, where the tree has it, the output kinds), in a fresh subprocess per tree
and round, the trees alternated. Each round's figure is process CPU time per chunk; the table shows the
minimum and median over rounds (CPU time, so a loaded machine slows both trees alike more than it skews
one). A narrower view than `run_path.py` (no network, no event loop): it isolates the decoding, which is
what a change to the stream decoders can make slower.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import sys, time, orjson
from loadgen.http.body import StreamBody
from loadgen.http.chunks import ChunkAccumulator
from metrics.records.record import RequestRecord

chunks, per_read, streams = int(sys.argv[1]), 8, 20
def event(i):
    obj = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
           "choices": [{"index": 0, "delta": {"content": " word"}, "logprobs": None, "finish_reason": None}],
           "usage": {"prompt_tokens": 16, "total_tokens": 17 + i, "completion_tokens": i + 1}}
    return b"data: " + orjson.dumps(obj) + b"\n\n"
per_stream = chunks // streams
events = [event(i) for i in range(per_stream)]
reads = [b"".join(events[i:i + per_read]) for i in range(0, per_stream, per_read)]
reads[-1] += b"data: [DONE]\n\n"

class Watch:  # what StreamBody asks of the watchdog: a place for the last read's time, and stop()
    last_read_ns = 0
    def stop(self): pass
def one():
    record = RequestRecord(id=0, intended_ns=0, sent_ns=0)
    acc = ChunkAccumulator()
    body = StreamBody(record, acc, Watch(), 0, max_event_bytes=1 << 20, max_response_bytes=1 << 30)
    t = 1
    for raw in reads:
        t += 1000
        if body.read(raw, t):
            break
    acc.fill(record)
    assert len(record.chunk_ns) == per_stream and record.token_source == "usage_delta"
one()
start = time.process_time_ns()
for _ in range(streams):
    one()
print(json.dumps((time.process_time_ns() - start) / (per_stream * streams)))
""".replace("import sys, time, orjson", "import json, sys, time, orjson")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=TREE")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--chunks", type=int, default=20_000)
    args = ap.parse_args()
    trees = {"this": str(ROOT), **{v.split("=", 1)[0]: v.split("=", 1)[1] for v in args.variant}}
    ns: dict[str, list[float]] = {name: [] for name in trees}
    for r in range(args.rounds):
        order = list(trees.items())
        order = order[r % len(order):] + order[:r % len(order)]
        for name, tree in order:
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.chunks)], cwd=tree, check=True,
                                 capture_output=True, text=True, env={"PYTHONPATH": tree})
            ns[name].append(json.loads(out.stdout))
    print(f"{'tree':>8} {'min ns/chunk':>13} {'median':>8}  rounds")
    for name, values in ns.items():
        print(f"{name:>8} {min(values):13.0f} {statistics.median(values):8.0f}  "
              + " ".join(f"{v:.0f}" for v in values))


if __name__ == "__main__":
    main()
