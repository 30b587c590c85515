"""Workloads: what each request asks. Item i is a pure function of (seed, i), so runs are reproducible
and any number of requests can be drawn without building them all up front.

- synthetic: prompt and output token lengths from distributions (`loadgen.workload.lengths`), random text of that
  length (`loadgen.workload.text`), optionally a shared-prefix mode: G groups, each with a common system prompt of
  L tokens, the group drawn with given weights (exercises prefix caching; the group becomes a tag).
- jsonl: one chat request per line: `{"messages": [...], "max_tokens"?: int, "tags"?: {str: str},
  "model"?: str, "tools"?: [...], "tool_choice"?: str}` (or `"prompt": str`), optionally with
  `"images": [path or URL, ...]` (loadgen.workload.images.dataset).
- sharegpt: ShareGPT JSON: the first human turn is the prompt, the answer's length the target output
  (an entry's `image`, LLaVA-style, goes with its prompt).
Datasets are drawn in a seeded shuffled order, wrapping around when more requests are sent than it holds.
A dataset's prompt has no target length (`prompt_tokens_target` None): it is what the file says, and only
the run's count of it is kept (the prompt-length check of summary.json then has nothing to compare).

A row is refused with its line when it is not one of these (its messages are checked by
loadgen.workload.rows), when its `max_tokens` or its prompt's count is over MAX_TOKENS, or when the line
is longer than MAX_BODY_BYTES (loadgen.workload.bounds).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from loadgen.quoting import printable
from loadgen.seeds import item_rng
from loadgen.types import ContentPart, Message, WorkItem, WorkloadDescription
from loadgen.workload.bounds import MAX_BODY_BYTES, MAX_TOKENS, check_tokens
from loadgen.workload.images import (
    ImageFiles,
    add_pictures,
    resolve_parts,
    row_references,
    strip_placeholders,
)
from loadgen.workload.lengths import LengthDist
from loadgen.workload.models import row_model
from loadgen.workload.rows import (
    DatasetRow,
    ShareGPTTurn,
    checked_messages,
    is_row,
    is_turn,
    row_images,
    row_tools,
)
from loadgen.workload.text import Counter, TokenCounter, fit_text


class Workload(Protocol):
    def item(self, index: int) -> WorkItem: ...

    def describe(self) -> WorkloadDescription: ...


def _flatten(messages: list[Message]) -> str:
    return "\n".join(_text(m.get("content", "")) for m in messages)


def _text(content: str | list[ContentPart] | None) -> str:
    """A message's text: its content, or the text parts of a list of content parts (images have none)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def template_tokens(counter: Counter, messages: list[Message]) -> int | None:
    """The chat template's estimated overhead for these messages under the run's counter; None: unknown."""
    return counter.template_tokens(messages) if isinstance(counter, TokenCounter) else None


@dataclass(slots=True)
class SyntheticWorkload:
    prompt: LengthDist
    output: LengthDist
    seed: int
    counter_name: str
    counter: Counter
    prefix_groups: int = 0
    prefix_tokens: int = 0
    prefix_weights: list[float] | None = None
    tags: dict[str, str] = field(default_factory=dict)
    _prefixes: list[tuple[str, int]] = field(default_factory=list)  # (text, its count) per group

    def __post_init__(self) -> None:
        if self.prefix_groups:
            if self.prefix_weights is not None and len(self.prefix_weights) != self.prefix_groups:
                raise ValueError(f"--prefix-weights needs {self.prefix_groups} numbers, got {len(self.prefix_weights)}")
            if self.prefix_weights is not None and (min(self.prefix_weights) < 0 or sum(self.prefix_weights) <= 0):
                raise ValueError("--prefix-weights must be non-negative with a positive sum")
            self._prefixes = [
                fit_text(self.prefix_tokens, item_rng(self.seed, 1_000_003, g),
                         self.counter_name, self.counter)
                for g in range(self.prefix_groups)
            ]

    def item(self, index: int) -> WorkItem:
        rng = item_rng(self.seed, index)
        n_prompt = self.prompt.sample_one(rng)
        n_out = self.output.sample_one(rng)
        tags = dict(self.tags)
        messages: list[Message] = []
        target = counted = 0
        drawn = self.group_prefix(rng)
        if drawn is not None:
            group, prefix, prefix_count = drawn
            messages.append({"role": "system", "content": prefix})
            tags["prefix_group"] = str(group)
            target, counted = self.prefix_tokens, prefix_count
        text, count = fit_text(n_prompt, rng, self.counter_name, self.counter)
        messages.append({"role": "user", "content": text})
        return WorkItem(messages=messages, prompt=_flatten(messages), max_tokens=n_out,
                        prompt_tokens_target=target + n_prompt, prompt_tokens_counted=counted + count,
                        template_tokens=template_tokens(self.counter, messages), tags=tags)

    def group_prefix(self, rng: np.random.Generator) -> tuple[int, str, int] | None:
        """Shared-prefix mode: a group drawn by weight, its system prompt and that prompt's count."""
        if not self.prefix_groups:
            return None
        p = None
        if self.prefix_weights is not None:
            w = np.asarray(self.prefix_weights, dtype=np.float64)
            p = w / w.sum()
        group = int(rng.choice(self.prefix_groups, p=p))
        prefix, prefix_count = self._prefixes[group]
        return group, prefix, prefix_count

    def describe(self) -> WorkloadDescription:
        out: WorkloadDescription = {"kind": "synthetic", "prompt_tokens": str(self.prompt),
                               "output_tokens": str(self.output), "token_counter": self.counter_name,
                               "chat_template_tokens": self.item(0).template_tokens}
        if self.prefix_groups:
            out["prefix"] = {"groups": self.prefix_groups, "tokens": self.prefix_tokens,
                             "weights": self.prefix_weights}
        return out


@dataclass(slots=True)
class DatasetWorkload:
    """Requests taken from a file, in a seeded shuffled order."""

    kind: str
    path: str
    entries: list[WorkItem]
    seed: int
    default_output: LengthDist
    _order: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        if not self.entries:
            raise ValueError(f"{self.path}: no usable requests in the file")
        self._order = np.random.default_rng(self.seed).permutation(len(self.entries))

    def item(self, index: int) -> WorkItem:
        base = self.entries[int(self._order[index % len(self.entries)])]
        max_tokens = base.max_tokens
        if max_tokens is None:
            max_tokens = self.default_output.sample_one(item_rng(self.seed, index))
        return WorkItem(messages=base.messages, prompt=base.prompt, max_tokens=max_tokens,
                        min_tokens=base.min_tokens, prompt_tokens_target=base.prompt_tokens_target,
                        prompt_tokens_counted=base.prompt_tokens_counted, template_tokens=base.template_tokens,
                        tags=dict(base.tags), model=base.model, images=base.images,
                        image_pixels=base.image_pixels, image_bytes=base.image_bytes, tools=base.tools,
                        tool_choice=base.tool_choice)

    def describe(self) -> WorkloadDescription:
        return {"kind": self.kind, "path": self.path, "requests_in_file": len(self.entries)}


def read_dataset_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read dataset {printable(path, 1000)}: {exc}") from None


def jsonl_rows(path: str) -> Iterator[tuple[str, DatasetRow]]:
    """Each non-blank line of a JSONL dataset as (`PATH:LINE`, its object); ValueError naming the line when
    it is not a JSON object."""
    for lineno, line in enumerate(read_dataset_text(path).splitlines(), 1):
        if not line.strip():
            continue
        where = f"{printable(path, 1000)}:{lineno}"
        if len(line) > MAX_BODY_BYTES:
            raise ValueError(f"{where}: the line is longer than the {MAX_BODY_BYTES:,}-byte limit of a request")
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{where}: invalid JSON ({exc.msg})") from None
        except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
            raise ValueError(f"{where}: invalid JSON ({printable(str(exc))})") from None
        if not is_row(row):
            raise ValueError(f"{where}: each line must be a JSON object")
        yield where, row


def row_messages(row: DatasetRow) -> object:
    """A dataset row's `messages`, or its `prompt` as one user message (unchecked: the caller checks)."""
    messages = row.get("messages")
    prompt = row.get("prompt")
    if messages is None and isinstance(prompt, str):
        return [{"role": "user", "content": prompt}]
    return messages


def row_max_tokens(value: Any, where: str) -> int | None:
    """A row's `max_tokens`: absent, or a whole number from 1 to MAX_TOKENS."""
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{where}: 'max_tokens' must be a positive integer")
    if value is not None:
        check_tokens(value, where, "max_tokens")
    return value


def row_tags(row: DatasetRow, where: str, tags: dict[str, str]) -> dict[str, str]:
    """The run's tags with the row's own `tags` on top."""
    own = row.get("tags", {})
    if not isinstance(own, dict):
        raise ValueError(f"{where}: 'tags' must be an object of strings")
    return {**tags, **{str(k): str(v) for k, v in own.items()}}


def sharegpt_conversations(path: str) -> list[list[ShareGPTTurn]]:
    """The `conversations` lists of a ShareGPT JSON file (entries that have none are left out); ValueError
    when the file is not ShareGPT data."""
    return [turns for turns, _ in sharegpt_entries(path)]


def sharegpt_entries(path: str) -> list[tuple[list[ShareGPTTurn], DatasetRow]]:
    """`sharegpt_conversations`, each with its whole entry (which may name an `image`)."""
    try:
        data = json.loads(read_dataset_text(path))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{printable(path, 1000)}: invalid JSON ({exc.msg} at line {exc.lineno})") from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits, nesting too deep
        raise ValueError(f"{printable(path, 1000)}: invalid JSON ({printable(str(exc))})") from None
    if not isinstance(data, list):
        raise ValueError(f"{printable(path, 1000)}: ShareGPT data must be a JSON list of conversations")
    out = []
    for entry in data:
        turns = entry.get("conversations") if is_row(entry) else None
        if isinstance(turns, list):
            assert is_row(entry)
            out.append(([t for t in turns if is_turn(t)], entry))
    return out


def load_jsonl(path: str, counter: Counter, tags: dict[str, str]) -> list[WorkItem]:
    items: list[WorkItem] = []
    files = ImageFiles(path)
    for where, row in jsonl_rows(path):
        messages = checked_messages(row_messages(row), where,
                                    "needs 'messages' (a non-empty list of {role, content}) or 'prompt'")
        max_tokens = row_max_tokens(row.get("max_tokens"), where)
        merged = row_tags(row, where, tags)
        messages, inline = resolve_parts(messages, files, where)
        tools, tool_choice = row_tools(row, where)
        text = _flatten(messages)
        count = counter(text)
        check_tokens(count, where, "the prompt's token count")
        item = WorkItem(messages=messages, prompt=text, max_tokens=max_tokens,
                        prompt_tokens_target=None, prompt_tokens_counted=count,
                        template_tokens=template_tokens(counter, messages), tags=merged,
                        model=row_model(row.get("model"), where), images=len(inline),
                        image_pixels=sum(p.pixels for p in inline), image_bytes=sum(p.nbytes for p in inline),
                        tools=tools, tool_choice=tool_choice)
        items.append(add_pictures(item, files.pictures(row_references(row_images(row), where), where)))
    return items


def load_sharegpt(path: str, counter: Counter, tags: dict[str, str]) -> list[WorkItem]:
    items: list[WorkItem] = []
    files = ImageFiles(path)
    for number, (turns, entry) in enumerate(sharegpt_entries(path), 1):
        first = next((i for i, t in enumerate(turns) if t.get("from") == "human"), None)
        if first is None:
            continue
        prompt = turns[first].get("value")
        answer = next((t.get("value") for t in turns[first + 1:] if t.get("from") in ("gpt", "assistant")), None)
        if not isinstance(prompt, str) or not prompt or not isinstance(answer, str) or not answer:
            continue
        where = f"{printable(path, 1000)}: conversation {number}"
        refs = row_references(row_images(entry), where)
        prompt = strip_placeholders(prompt) if refs else prompt
        messages: list[Message] = [{"role": "user", "content": prompt}]
        count = counter(prompt)
        check_tokens(count, where, "the prompt's token count")
        item = WorkItem(messages=messages, prompt=prompt, max_tokens=min(MAX_TOKENS, max(1, counter(answer))),
                        prompt_tokens_target=None, prompt_tokens_counted=count,
                        template_tokens=template_tokens(counter, messages), tags=dict(tags))
        items.append(add_pictures(item, files.pictures(refs, where)))
    return items
