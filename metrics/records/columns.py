"""Records as columns: one numpy array per field, chunk times flattened CSR-style (the layout and its builder).

A run of 100,000 requests × 200 chunks is 20 M chunk times; holding them as Python lists inside
RequestRecord objects costs gigabytes and seconds, so everything downstream works on this frame:

- per-request columns of length n (times as int64 ns with a `has_*` mask where a time may be absent;
  token counts as float64 with NaN for "not known", exact for any realistic count);
- chunk columns of length Σ K_i, request i owning `chunk_ns[chunk_off[i]:chunk_off[i + 1]]`.

Two builders feed it (metrics.records.frame): `frame_from_records` (RequestRecord objects, e.g. a live run)
and `frame_from_jsonl` (metrics.records.jsonl: records.jsonl lines straight to columns, never materialising
RequestRecord objects; lines that are not records, as metrics.records.record_check defines them, are
skipped). Both go through `Columns`, so they agree by construction; metrics.records.frame_arrow builds the
same frame from an Arrow table. This module imports neither builder, so the line reader can use it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from metrics.records.answer_columns import AnswerRow, answer_fields

if TYPE_CHECKING:
    from metrics.results import Json

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

STATUS_CODES: dict[str, int] = {"ok": 0, "error": 1, "cancelled": 2}
OK, ERROR, CANCELLED = 0, 1, 2
# Final-chunk server figures summarised under summary["server"] when present.
SERVER_PHASES: tuple[str, ...] = ("queue_s", "prefill_s", "decode_s")


@dataclass(slots=True)
class RequestFrame:
    """Column view of a run's records (see module docstring for the layout)."""

    ids: IntArray
    intended_ns: IntArray
    sent_ns: IntArray
    has_sent: BoolArray
    closed_ns: IntArray
    has_closed: BoolArray
    status: npt.NDArray[np.int8]
    error_kind: list[str | None]
    output_tokens: FloatArray
    output_estimated: BoolArray
    prompt_tokens: FloatArray
    prompt_estimated: BoolArray
    prompt_target: FloatArray
    cached_tokens: FloatArray
    token_source: list[str]
    tokens_known: BoolArray  # chunk_tokens was reported; otherwise chunk_tok holds 1 per chunk
    chunk_off: IntArray
    chunk_ns: IntArray
    chunk_tok: npt.NDArray[np.int32]
    server_s: FloatArray  # per chunk, NaN where the server did not stamp the request; empty when none was
    has_server: BoolArray
    session: FloatArray  # the conversation of each turn (--turns), NaN for a lone request
    turn: FloatArray  # 1-based turn within it, NaN for a lone request
    server_phases: dict[str, FloatArray] = field(default_factory=dict)
    tags: dict[str, list[str | None]] = field(default_factory=dict)
    # How each request ended, as the server said it (metrics.summary.failures): the failure's message and
    # HTTP status, the finish_reason, and the max_tokens it asked for (NaN: none).
    error_message: list[str | None] = field(default_factory=list)
    http_status: list[int | None] = field(default_factory=list)
    finish_reason: list[str | None] = field(default_factory=list)
    output_target: FloatArray = field(default_factory=lambda: np.zeros(0))
    model: list[str | None] = field(default_factory=list)  # the model each request named (None: not recorded)
    # Reasoning and tool calls (metrics.records.answer_columns): stamps in ns as float64, NaN where absent.
    reasoning_ns: FloatArray = field(default_factory=lambda: np.zeros(0))
    answer_ns: FloatArray = field(default_factory=lambda: np.zeros(0))
    tool_call_ns: FloatArray = field(default_factory=lambda: np.zeros(0))
    tool_call_done_ns: FloatArray = field(default_factory=lambda: np.zeros(0))
    reasoning_tokens: FloatArray = field(default_factory=lambda: np.zeros(0))  # NaN: unknown
    reasoning_source: list[str | None] = field(default_factory=list)
    tool_calls: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    images: FloatArray = field(default_factory=lambda: np.zeros(0))  # image inputs per request (0: none)

    @property
    def n(self) -> int:
        return int(self.ids.shape[0])

    @property
    def chunk_count(self) -> IntArray:
        """K per request."""
        return np.diff(self.chunk_off)


_ROW = (
    "ids", "intended_ns", "sent_ns", "closed_ns", "status", "error_kind", "output_tokens", "output_estimated",
    "prompt_tokens", "prompt_estimated", "prompt_target", "cached_tokens", "token_source", "tokens_known",
    "has_server", "k", "phases", "tags", "session", "turn", "error_message", "http_status", "finish_reason",
    "output_target", "model", "answer", "images",
)


class Columns:
    """Accumulates one request at a time: a tuple of scalars per request (transposed once at the end)
    and chunk values written straight into growable flat buffers (100k small arrays would fragment the
    heap and cost more than the JSON parse itself)."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []
        self.used = 0
        self.chunk_ns = np.zeros(1024, dtype=np.int64)
        self.chunk_tok = np.ones(1024, dtype=np.int32)
        self.server_s: FloatArray | None = None  # made at the first stamped request

    def add(
        self,
        *,
        rid: int,
        intended_ns: int,
        sent_ns: int | None,
        closed_ns: int | None,
        status: str,
        error_kind: str | None,
        chunk_ns: Sequence[int],
        chunk_tokens: Sequence[int] | None,
        token_source: str,
        output_tokens: int | None,
        output_estimated: bool,
        prompt_tokens: int | None,
        prompt_estimated: bool,
        prompt_target: int | None,
        cached_tokens: int | None,
        server_chunk_s: Sequence[float] | None,
        server: Mapping[str, Json] | None,
        tags: Mapping[str, str | None] | None,
        session: int | None = None,
        turn: int | None = None,
        error_message: str | None = None,
        http_status: int | None = None,
        finish_reason: str | None = None,
        output_target: int | None = None,
        model: str | None = None,
        answer: AnswerRow | None = None,  # metrics.records.answer_columns.answer_row
        images: int | None = None,
    ) -> None:
        code = STATUS_CODES.get(status)
        if code is None:
            raise ValueError(f"record {rid}: unknown status {status!r} (expected ok, error or cancelled)")
        k = len(chunk_ns)
        start, end = self.used, self.used + k
        if end > self.chunk_ns.shape[0]:
            self._grow(end)
        self.chunk_ns[start:end] = chunk_ns
        if chunk_tokens is not None:
            if len(chunk_tokens) != k:
                raise ValueError(f"record {rid}: {len(chunk_tokens)} chunk_tokens for {k} chunk_ns")
            if not (isinstance(chunk_tokens, list) and chunk_tokens.count(1) == k):
                self.chunk_tok[start:end] = chunk_tokens  # the buffer already holds ones
        stamped = server_chunk_s is not None and k > 0
        if server_chunk_s is not None and k > 0:
            if len(server_chunk_s) != k:
                raise ValueError(f"record {rid}: {len(server_chunk_s)} server_chunk_s for {k} chunk_ns")
            if self.server_s is None:
                self.server_s = np.full(self.chunk_ns.shape[0], np.nan)
            self.server_s[start:end] = server_chunk_s
        self.used = end
        if output_tokens is None:
            # The client always fills N; a hand-made record may not: fall back to Σk_j, an estimate.
            output_tokens, output_estimated = int(self.chunk_tok[start:end].sum()), True
        phases = tuple(_number(server.get(p)) for p in SERVER_PHASES) if server else None
        self.rows.append((
            rid, intended_ns, sent_ns, closed_ns, code, error_kind, output_tokens, output_estimated,
            prompt_tokens, prompt_estimated, prompt_target, cached_tokens, token_source,
            chunk_tokens is not None, stamped, k, phases, tags, session, turn, error_message, http_status,
            finish_reason, output_target, model, answer, images,
        ))

    def _grow(self, needed: int) -> None:
        size = max(needed, 2 * self.chunk_ns.shape[0])
        self.chunk_ns = _grown(self.chunk_ns, size, 0)
        self.chunk_tok = _grown(self.chunk_tok, size, 1)
        if self.server_s is not None:
            self.server_s = _grown(self.server_s, size, np.nan)

    def build(self) -> RequestFrame:
        c = dict(zip(_ROW, map(list, zip(*self.rows, strict=True)), strict=True)) if self.rows else {n: [] for n in _ROW}
        chunk_off = np.concatenate(([0], np.cumsum(c["k"], dtype=np.int64))).astype(np.int64)
        check_chunk_order(self.chunk_ns[: self.used], chunk_off, c["ids"])
        tags: list[dict[str, str]] = [t or {} for t in c["tags"]]
        keys = sorted({key for t in tags for key, value in t.items() if value is not None})  # a tag never set is none
        no_phases = (np.nan,) * len(SERVER_PHASES)
        phases = np.array([p or no_phases for p in c["phases"]], dtype=np.float64).reshape(-1, len(SERVER_PHASES))
        return RequestFrame(
            ids=np.array(c["ids"], dtype=np.int64),
            intended_ns=np.array(c["intended_ns"], dtype=np.int64),
            sent_ns=np.array([-1 if v is None else v for v in c["sent_ns"]], dtype=np.int64),
            has_sent=np.array([v is not None for v in c["sent_ns"]], dtype=np.bool_),
            closed_ns=np.array([-1 if v is None else v for v in c["closed_ns"]], dtype=np.int64),
            has_closed=np.array([v is not None for v in c["closed_ns"]], dtype=np.bool_),
            status=np.array(c["status"], dtype=np.int8),
            error_kind=c["error_kind"],
            output_tokens=_floats(c["output_tokens"]),
            output_estimated=np.array(c["output_estimated"], dtype=np.bool_),
            prompt_tokens=_floats(c["prompt_tokens"]),
            prompt_estimated=np.array(c["prompt_estimated"], dtype=np.bool_),
            prompt_target=_floats(c["prompt_target"]),
            cached_tokens=_floats(c["cached_tokens"]),
            token_source=c["token_source"],
            tokens_known=np.array(c["tokens_known"], dtype=np.bool_),
            chunk_off=chunk_off,
            chunk_ns=_trimmed(self.chunk_ns, self.used),
            chunk_tok=_trimmed(self.chunk_tok, self.used),
            server_s=np.zeros(0) if self.server_s is None else _trimmed(self.server_s, self.used),
            has_server=np.array(c["has_server"], dtype=np.bool_),
            session=_floats(c["session"]),
            turn=_floats(c["turn"]),
            server_phases={p: phases[:, i].copy() for i, p in enumerate(SERVER_PHASES)},
            tags={key: [t.get(key) for t in tags] for key in keys},
            error_message=c["error_message"],
            http_status=c["http_status"],
            finish_reason=c["finish_reason"],
            output_target=_floats(c["output_target"]),
            model=c["model"],
            **answer_fields(c["answer"]),
            images=np.nan_to_num(_floats(c["images"])),
        )


def _number(value: Json) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan


def check_chunk_order(chunk_ns: IntArray, chunk_off: IntArray, ids: list[int]) -> None:
    """Chunk times must not go backwards within a request (one monotonic clock)."""
    if chunk_ns.shape[0] < 2:
        return
    backwards = chunk_ns[1:] < chunk_ns[:-1]
    starts = chunk_off[1:-1]
    starts = starts[(starts > 0) & (starts < chunk_ns.shape[0])]
    backwards[starts - 1] = False  # the step from one request's last chunk to the next one's first
    if backwards.any():
        where = int(np.flatnonzero(backwards)[0])
        owner = int(np.searchsorted(chunk_off, where, side="right") - 1)
        raise ValueError(f"record {ids[owner]}: chunk_ns goes backwards (times must be non-decreasing)")


def _floats(values: list[int | None]) -> FloatArray:
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _trimmed(array: Any, size: int) -> Any:
    """Shrink in place (realloc, no second copy of a 160 MB column)."""
    array.resize(size, refcheck=False)
    return array


def _grown(array: Any, size: int, fill: float) -> Any:
    bigger = np.full(size, fill, dtype=array.dtype)
    bigger[: array.shape[0]] = array
    return bigger


