"""Conversation datasets replayed turn by turn (`--dataset FILE --turns N`).

- ShareGPT JSON: each human turn is one turn (sent with the real history), the gpt answer after it gives
  that turn's `max_tokens` (its length under the run's counter); a system entry joins the next turn.
- JSONL, one conversation per line, either
  `{"turns": [{"messages": [...], "max_tokens": 64}, ...], "tags": {...}, "model"?: str}` (each turn's messages are
  what it adds: usually one user message), or
  `{"messages": [...], "max_tokens"?: n, "tags"?: {...}}` with several user messages: each user message
  closes a turn (with the system or tool messages before it), and the assistant message after it gives
  that turn's `max_tokens` (the line's `max_tokens` serves a last turn no answer follows).
The file's assistant messages are never sent: the answers the server streams take their place. A row
that names images (`images`, `image`) is refused: conversations are sent as text.
"""

from __future__ import annotations

from typing import Any

from loadgen.quoting import printable, quoted
from loadgen.types import Message
from loadgen.workload.bounds import MAX_TOKENS
from loadgen.workload.images import row_references
from loadgen.workload.models import row_model
from loadgen.workload.rows import DatasetRow, checked_messages, row_images
from loadgen.workload.sessions import Session, Turn
from loadgen.workload.sources import (
    jsonl_rows,
    row_max_tokens,
    row_messages,
    row_tags,
    sharegpt_entries,
)
from loadgen.workload.text import Counter

_USER_SIDE = frozenset({"system", "developer", "user", "tool"})


def _content(message: Message) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def _turn(messages: list[Message], max_tokens: int | None, counter: Counter) -> Turn:
    count = sum(counter(_content(m)) for m in messages)
    return Turn(messages=messages, max_tokens=max_tokens, target=None, counted=count)  # a file's text: no target


def load_sharegpt_conversations(path: str, counter: Counter, tags: dict[str, str]) -> list[Session]:
    out: list[Session] = []
    for number, (entries, entry) in enumerate(sharegpt_entries(path), 1):
        _no_images(entry, f"{printable(path, 1000)}: conversation {number}")
        turns: list[Turn] = []
        pending: list[Message] = []
        for e in entries:
            value = e.get("value")
            if not isinstance(value, str) or not value:
                continue
            who = e.get("from")
            if who == "system":
                pending.append({"role": "system", "content": value})
            elif who == "human":
                turns.append(_turn([*pending, {"role": "user", "content": value}], None, counter))
                pending = []
            elif who in ("gpt", "assistant") and turns and turns[-1].max_tokens is None:
                turns[-1].max_tokens = min(MAX_TOKENS, max(1, counter(value)))
        if turns:
            out.append(Session(turns, dict(tags)))
    return out


def _no_images(row: DatasetRow, where: str) -> None:
    """Conversations are sent as text: a row's images would be left out without a word."""
    if row_references(row_images(row), where):
        raise ValueError(f"{where}: images in conversations (--turns) are not supported; without --turns each "
                         "prompt is sent with its images")


def _messages(value: object, where: str) -> list[Message]:
    return checked_messages(value, where, "needs 'messages' (a non-empty list of {role, content})")


def _max_tokens(value: Any, where: str) -> int | None:
    return row_max_tokens(value, where)


def load_jsonl_conversations(path: str, counter: Counter, tags: dict[str, str]) -> list[Session]:
    out: list[Session] = []
    for where, row in jsonl_rows(path):
        _no_images(row, where)
        merged = row_tags(row, where, tags)
        if "turns" in row:
            turns = _listed_turns(row["turns"], where, counter)
        else:
            turns = _split_turns(_messages(row_messages(row), where), _max_tokens(row.get("max_tokens"), where),
                                 where, counter)
        out.append(Session(turns, merged, row_model(row.get("model"), where)))
    return out


def _listed_turns(value: Any, where: str, counter: Counter) -> list[Turn]:
    if not isinstance(value, list) or not value:
        raise ValueError(f"{where}: 'turns' must be a non-empty list of {{messages, max_tokens}}")
    turns = []
    for i, t in enumerate(value, 1):
        if not isinstance(t, dict):
            raise ValueError(f"{where}: turn {i} must be an object with 'messages'")
        turns.append(_turn(_messages(t.get("messages"), f"{where} turn {i}"),
                           _max_tokens(t.get("max_tokens"), f"{where} turn {i}"), counter))
    return turns


def _split_turns(messages: list[Message], last_max: int | None, where: str, counter: Counter) -> list[Turn]:
    turns: list[Turn] = []
    pending: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            if turns and turns[-1].max_tokens is None:
                turns[-1].max_tokens = min(MAX_TOKENS, max(1, counter(_content(m))))
            continue
        pending.append(m)
        if role == "user":
            turns.append(_turn(pending, None, counter))
            pending = []
        elif role not in _USER_SIDE:
            raise ValueError(f"{where}: unknown role {quoted(role)}")
    if not turns:
        raise ValueError(f"{where}: a conversation needs at least one user message")
    if turns[-1].max_tokens is None:
        turns[-1].max_tokens = last_max
    return turns
