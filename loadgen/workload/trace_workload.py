"""Requests of a trace replay (`--trace`): each trace request's input and output lengths, its prompt made
when it is about to be sent (a 100,000-request trace costs nothing up front).

Mooncake traces name their prompts' blocks (`hash_ids`, one per `block_tokens` tokens): block h is the
same text wherever it appears, drawn from the seed and h alone, so two requests holding h at the same
position send the same tokens there and the server's prefix cache sees the trace's real reuse. A
request's last block is the head of its block's text (its remaining tokens, cut at a word: what the cut
leaves short is made up by the request's own words, so the prompt has exactly `input_length` tokens
under the run's counter); tokens beyond the named blocks, and every prompt of a trace without block ids,
are unique to the request. How exact the shared
tokens are depends on the token counter: see `loadgen.workload.text` (blocks).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from loadgen.seeds import item_rng
from loadgen.types import Message, WorkItem, WorkloadDescription
from loadgen.workload.text import TokenCounter
from loadgen.workload.traces import Trace

BLOCK_CACHE = 4096  # block texts kept (a block is reused by the requests that share it, close in time)
_BLOCK_STREAM = 7_340_033  # seeds block texts apart from per-request text
_PAD_STREAM = 7_340_047


@dataclass(slots=True)
class TraceWorkload:
    trace: Trace
    rows: npt.NDArray[np.int64]  # the trace request of each item (the schedule's window and caps)
    seed: int
    counter: TokenCounter
    tags: dict[str, str] = field(default_factory=dict)
    _blocks: OrderedDict[int, str] = field(default_factory=OrderedDict)

    def item(self, index: int) -> WorkItem:
        row = int(self.rows[index])
        want = int(self.trace.input_tokens[row])
        text = self._prompt(row, want)
        messages: list[Message] = [{"role": "user", "content": text}]
        counted = self.counter(text)
        return WorkItem(messages=messages, prompt=text, max_tokens=max(1, int(self.trace.output_tokens[row])),
                        prompt_tokens_target=want, prompt_tokens_counted=counted,
                        template_tokens=self.counter.template_tokens(messages), tags=dict(self.tags),
                        model=self.trace.models[row] if self.trace.models is not None else None)

    def _prompt(self, row: int, want: int) -> str:
        blocks = self.trace.blocks(row)
        parts: list[str] = []
        have = 0
        size = self.trace.block_tokens
        if blocks is not None:
            for h in blocks.tolist():
                if have >= want:
                    break
                text = self._block(h)
                take = min(size, want - have)
                if take < size:  # the head of the block: cut at a word, so it may hold fewer tokens
                    text = self.counter.head(text, take)
                    take = min(self.counter(text), take)
                parts.append(text)
                have += take
        if have < want:  # tokens the trace names no block for, or that a cut block fell short of: the request's own
            rng = item_rng(self.seed, _PAD_STREAM, row)
            parts.append(self.counter.fit_block(want - have, rng))
        return "".join(parts)

    def _block(self, h: int) -> str:
        text = self._blocks.get(h)
        if text is None:
            text = self.counter.fit_block(self.trace.block_tokens, item_rng(self.seed, _BLOCK_STREAM, h))
            self._blocks[h] = text
            if len(self._blocks) > BLOCK_CACHE:
                self._blocks.popitem(last=False)
        else:
            self._blocks.move_to_end(h)
        return text

    def describe(self) -> WorkloadDescription:
        out: WorkloadDescription = {"kind": "trace", "format": self.trace.format, "path": self.trace.path,
                               "requests_in_file": self.trace.n, "requests": int(self.rows.size),
                               "token_counter": self.counter.name}
        if self.trace.hash_ids is not None:
            out["block_tokens"] = self.trace.block_tokens
        return out
