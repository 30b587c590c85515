"""Counting with a local Hugging Face `tokenizer.json` (`--tokenizer PATH`): exact prompt lengths, output
tokens estimated from received text, and the chat template's overhead when the model directory has one.

Exact prompts: random words long enough (at the vocabulary's tokens-per-word rate) are encoded once; the text up to the end of token `target`
(from the encoding's character offsets) is the candidate. A BPE tokenizer re-encodes a prefix cut at a
token boundary to the same tokens, so the candidate usually counts exactly `target`; when it does not
(a tokenizer that merges across the cut), the cuts one to four tokens either side are tried, then
up to four fresh draws of words, and the closest count wins.
"""

from __future__ import annotations

import bisect
import functools
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from loadgen.workload.text import WORDS, Messages, TokenCounter, random_words

_NEARBY_CUTS = (-1, 1, -2, 2, -3, 3, -4, 4)
_REDRAWS = 4


@functools.lru_cache(maxsize=8)
def _load(path: str, _mtime_ns: int) -> Any:
    from tokenizers import Tokenizer

    return Tokenizer.from_file(path)


class TokenizerCounter(TokenCounter):
    """Exact counts with a `tokenizer.json` (special tokens not added)."""

    is_tokenizer = True

    def __init__(self, path: str) -> None:
        try:
            import tokenizers  # noqa: F401
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ValueError("--tokenizer PATH needs the 'tokenizers' package (pip install 'goodput[server]')") from exc
        file = Path(path)
        if not file.is_file():
            raise ValueError(f"tokenizer file not found: {path}")
        try:
            self._tok = _load(str(file.resolve()), os.stat(file).st_mtime_ns)
        except Exception as exc:  # the tokenizers library raises plain Exception for a bad file
            raise ValueError(f"cannot read tokenizer {path}: {exc}") from None
        self.name = f"tokenizer:{file.name}"
        self._dir = file.parent if file.name == "tokenizer.json" else None
        self._template: Any = None  # refserver.text.chat_template.ChatTemplate, loaded on first use
        self._overhead: dict[tuple[str, ...], int | None] = {}
        self._tokens_per_word = max(self(" ".join(WORDS)), 1) / len(WORDS)  # of this vocabulary

    def __call__(self, text: str) -> int:
        return len(self._tok.encode(text, add_special_tokens=False).ids)

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        if target <= 0:
            return "", 0
        best = self._fit_once(target, rng)
        for _ in range(_REDRAWS):  # rare: the words drawn cannot be cut to `target`; other words may
            if best[1] == target:
                break
            candidate = self._fit_once(target, rng)
            if abs(candidate[1] - target) < abs(best[1] - target):
                best = candidate
        return best

    def _fit_once(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        # Words enough for a little more than `target` tokens: encoding cost grows with the text, and a
        # small vocabulary takes several tokens per word. A fixed rate, so item i stays a function of (seed, i).
        text = random_words(math.ceil(target / self._tokens_per_word * 1.05) + 2, rng)
        encoding = self._tok.encode(text, add_special_tokens=False)
        for _ in range(64):  # bounded: a tokenizer that maps words to nothing must not hang the run
            if len(encoding.ids) >= target:
                break
            text += " " + random_words(target - len(encoding.ids), rng)
            encoding = self._tok.encode(text, add_special_tokens=False)
        if len(encoding.ids) < target:
            return text, len(encoding.ids)
        offsets = encoding.offsets
        best = text[: offsets[target - 1][1]]
        best_count = self(best)
        for step in _NEARBY_CUTS:
            if best_count == target:
                break
            at = target - 1 + step
            if 0 <= at < len(offsets):
                candidate = text[: offsets[at][1]]
                count = self(candidate)
                if abs(count - target) < abs(best_count - target):
                    best, best_count = candidate, count
        return best, best_count

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        """A space, then words, cut at the end of token `target`: a cut inside a word still encodes the same
        before the next block's leading space (the tokenizer splits at spaces before merging)."""
        if target <= 0:
            return ""
        text = " " + random_words(math.ceil(target / self._tokens_per_word * 1.05) + 2, rng)
        for _ in range(64):
            encoding = self._tok.encode(text, add_special_tokens=False)
            if len(encoding.ids) >= target:
                return text[: encoding.offsets[target - 1][1]]
            text += " " + random_words(target - len(encoding.ids) + 1, rng)
        return text

    def head(self, block: str, tokens: int) -> str:
        if tokens <= 0:
            return ""
        offsets = self._tok.encode(block, add_special_tokens=False).offsets
        return block if tokens >= len(offsets) else block[: offsets[tokens - 1][1]]

    def piece_tokens(self, pieces: Sequence[str]) -> list[int] | None:
        """The whole text encoded once; each token belongs to the piece in which its text ends (the
        chunk that completed it), so Σ equals the whole text's count."""
        out = [0] * len(pieces)
        if not pieces:
            return out
        bounds: list[int] = []
        at = 0
        for piece in pieces:
            at += len(piece)
            bounds.append(at)
        last = len(pieces) - 1
        for _, end in self._tok.encode("".join(pieces), add_special_tokens=False).offsets:
            out[min(bisect.bisect_left(bounds, end), last)] += 1
        return out

    def template_tokens(self, messages: Messages) -> int | None:
        """Tokens of the rendered chat minus those of the contents, per sequence of roles (the first
        conversation of each shape measures it). Known only when the tokenizer file is a model
        directory's `tokenizer.json` and that directory holds a chat template."""
        roles = tuple(str(m.get("role", "")) for m in messages)
        if roles not in self._overhead:
            self._overhead[roles] = self._measure_overhead(messages)
        return self._overhead[roles]

    def _measure_overhead(self, messages: Messages) -> int | None:
        template = self._chat_template()
        contents: list[str] = [c for m in messages if isinstance(c := m.get("content"), str)]
        if template is None or len(contents) != len(messages):
            return None
        try:
            rendered = template.render([{"role": str(m.get("role", "")), "content": c}
                                        for m, c in zip(messages, contents, strict=True)])
        except Exception:  # a template that rejects this conversation: overhead unknown, never a crash
            return None
        total = len(self._tok.encode(rendered, add_special_tokens=template.add_bos).ids)
        return total - sum(self(c) for c in contents)

    def _chat_template(self) -> Any:
        if self._template is None and self._dir is not None:
            self._template = _load_template(self._dir) or False
        return self._template or None


def _load_template(model_dir: Path) -> Any:
    """The model directory's own Jinja chat template, rendered as the reference server renders it."""
    try:
        from refserver.text import HFTokenizer, load_chat_template, read_tokenizer_config
    except ImportError:  # pragma: no cover - the package ships with loadgen
        return None
    try:
        has_template = read_tokenizer_config(model_dir).chat_template is not None or (
            model_dir / "chat_template.jinja").is_file()
        if not has_template:
            return None
        template = load_chat_template(model_dir, HFTokenizer(model_dir))
    except Exception:  # jinja2 missing, a broken config or template: the overhead stays unknown
        return None
    return template if template.name == "jinja" else None
