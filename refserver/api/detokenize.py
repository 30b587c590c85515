"""Streaming token ids → text pieces, holding back what is not yet safe to send.

Two reasons to hold text back:
- an incomplete UTF-8 sequence (a byte-level token can split a character): the decoded window ends in
  U+FFFD; it is sent once the next token completes it (or as U+FFFD when the stream ends);
- a possible start of a stop string: the last `len(longest stop) - 1` characters wait until they can
  no longer begin one.

Tokens are credited to the piece that finally carries their text, so the `n` of every chunk adds up
to `completion_tokens`; tokens whose text is empty (eos) are credited by `finish`.
"""

from __future__ import annotations

from dataclasses import dataclass

from refserver.text import Tokenizer

_REPLACEMENT = "\ufffd"


@dataclass(slots=True)
class Piece:
    text: str
    tokens: int  # output tokens credited to this piece
    stopped: bool = False  # a stop string was found: `text` ends just before it


class IncrementalDetokenizer:
    """Decodes a small window around new tokens (vLLM's prefix/read offsets) instead of the whole output."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self._tokenizer = tokenizer
        self._ids: list[int] = []
        self._prefix_offset = 0  # window start: context so that merges/spaces decode as in the full text
        self._read_offset = 0  # tokens before this are already turned into text

    def push(self, new_ids: list[int]) -> str:
        """Text completed by `new_ids` ('' while an incomplete character is held back)."""
        self._ids.extend(new_ids)
        known = self._tokenizer.decode(self._ids[self._prefix_offset : self._read_offset])
        full = self._tokenizer.decode(self._ids[self._prefix_offset :])
        if full.endswith(_REPLACEMENT) or len(full) < len(known):
            return ""
        self._prefix_offset = self._read_offset
        self._read_offset = len(self._ids)
        return full[len(known) :]

    def flush(self) -> str:
        """Whatever is still held back, incomplete characters as U+FFFD."""
        known = self._tokenizer.decode(self._ids[self._prefix_offset : self._read_offset])
        full = self._tokenizer.decode(self._ids[self._prefix_offset :])
        self._prefix_offset = self._read_offset = len(self._ids)
        return full[len(known) :]


class OutputText:
    """Applies the UTF-8 hold-back, stop strings and min_tokens to one request's output."""

    def __init__(self, tokenizer: Tokenizer, stop: list[str], *, min_tokens: int = 0) -> None:
        self._detok = IncrementalDetokenizer(tokenizer)
        self._stop = stop
        self._hold = max((len(s) for s in stop), default=1) - 1
        self._min_tokens = min_tokens
        self._buffer = ""  # decoded text not yet sent
        self._uncredited = 0  # tokens whose text has not been sent yet
        self.num_tokens = 0  # all output tokens seen
        self.text = ""  # everything sent so far
        self.stopped = False
        self.stop_string: str | None = None  # the stop string that ended the output

    def add(self, new_ids: list[int]) -> Piece:
        if self.stopped:
            return Piece("", 0, stopped=True)
        self.num_tokens += len(new_ids)
        self._uncredited += len(new_ids)
        self._buffer += self._detok.push(new_ids)
        if self._stop and self.num_tokens >= self._min_tokens:
            cut = self._find_stop()
            if cut is not None:
                self.stopped = True
                piece = self._emit(self._buffer[:cut])
                self._buffer = ""
                return Piece(piece.text, piece.tokens, stopped=True)
        safe = len(self._buffer) - self._hold
        return self._emit(self._buffer[:safe]) if safe > 0 else Piece("", 0)

    def finish(self) -> Piece:
        """The held-back rest, and every token not yet credited (e.g. eos)."""
        if not self.stopped:
            self._buffer += self._detok.flush()
        return self._emit(self._buffer, final=True)

    def _find_stop(self) -> int | None:
        hits = [(i, s) for i, s in ((self._buffer.find(s), s) for s in self._stop) if i >= 0]
        if not hits:
            return None
        cut, self.stop_string = min(hits)
        return cut

    def _emit(self, text: str, *, final: bool = False) -> Piece:
        self._buffer = self._buffer[len(text) :]
        tokens = self._uncredited if text or final else 0
        self._uncredited -= tokens
        self.text += text
        return Piece(text, tokens, stopped=self.stopped)
