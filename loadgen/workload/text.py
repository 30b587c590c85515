"""Prompt text of a target token count, and counting tokens on the client.

The count that matters is the server's `usage.prompt_tokens` (what the model saw after its chat
template); the client can only aim. Three counters (`--tokenizer`):
- `words`: one token per word from a list of short, common English words, each of which is a single
  token in the usual BPE vocabularies (Llama, Qwen, Mistral, GPT); no tokenizer needed. Exact in words,
  an approximation in tokens: it is no tokenizer, so it never estimates a server's output tokens.
- `bytes`: one token per UTF-8 byte, as the bundled reference server's default byte-level tokenizer
  counts; exact for that server, chat template included.
- a local `tokenizer.json` path: exact, through the `tokenizers` library (`loadgen.workload.tokenizer_counter`).
Against a remote server without `--tokenizer`, the server itself sizes prompts (loadgen.workload.sizing:
its tokenize endpoint, or a calibration).
How close each lands is measured on every run against the server's count (summary `tokens.prompt_accuracy`).

Blocks (`fit_block`, `head`): text that concatenates without changing its tokens, for prompts that must
share tokens at the same positions (a trace's hash ids). A block starts with a space and ends at a word
boundary, so a tokenizer that splits text at spaces before merging (the byte tokenizer, and the BPE
tokenizers of Llama 3, Qwen, GPT and Mistral) never merges across two blocks; with one that does not
(SentencePiece without pre-tokenization) a block boundary may shift by a token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from loadgen.types import Message

WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had by "
    "but not what all were we when your can said there use an each which she do how their if will up other "
    "about out many then them these so some her would make like him into time has look two more write go "
    "see number no way could people my than first water been call who its now find long down day did get "
    "come made may part over new sound take only little work know place year live me back give most very "
    "after thing our just name good sentence man think say great where help through much before line right "
    "too mean old any same tell boy follow came want show also around form three small set put end does "
    "another well large must big even such because turn here why ask went men read need land different home "
    "us move try kind hand picture again change off play spell air away animal house point page letter "
    "mother answer found study still learn should world high every near add food between own below country "
    "plant last school father keep tree never start city earth eye light thought head under story saw left "
    "few while along might close something seem next hard open example begin life always those both paper "
    "together got group often run important until children side feet car mile night walk white sea began "
    "grow took river four carry state once book hear stop without second later miss idea enough eat face"
).split()

Counter = Callable[[str], int]
Messages = Sequence[Message]


def count_words(text: str) -> int:
    return len(text.split())


def count_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def random_words(n: int, rng: np.random.Generator) -> str:
    idx = rng.integers(0, len(WORDS), size=n)
    return " ".join([WORDS[i] for i in idx.tolist()])  # plain ints index 3× faster than numpy's


class TokenCounter:
    """The run's way of counting tokens. Callable as a `Counter`; the methods say what else it can do."""

    name = "counter"
    is_tokenizer = False  # counts as the server's tokenizer would, so fit to estimate its output tokens

    def __call__(self, text: str) -> int:
        raise NotImplementedError

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        """Random text of `target` tokens (or as close as the counter allows) and its count."""
        text = _fit_by_bisection(target, rng, self)
        return text, self(text)

    def piece_tokens(self, pieces: Sequence[str]) -> list[int] | None:
        """Tokens of `"".join(pieces)` attributed to each piece (Σ = the whole text's count); None
        when this counter is no tokenizer."""
        return None

    def template_tokens(self, messages: Messages) -> int | None:
        """Tokens the server's chat template adds around these messages; None when unknown."""
        return None

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        """A block of `target` tokens (or as close as the counter allows): a space, then whole words."""
        words = _fit_by_bisection(target, rng, lambda text: self(" " + text))
        return " " + words if words else ""

    def head(self, block: str, tokens: int) -> str:
        """The start of a block made by `fit_block` that counts `tokens` (or as close as it allows)."""
        words = block.split()
        lo, hi = 0, len(words)  # count(lo words) <= tokens, found by bisection on a count that grows with words
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self(" " + " ".join(words[:mid])) <= tokens:
                lo = mid
            else:
                hi = mid - 1
        return " " + " ".join(words[:lo]) if lo else ""


class WordCounter(TokenCounter):
    name = "words"

    def __call__(self, text: str) -> int:
        return count_words(text)

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        return (random_words(target, rng), target) if target > 0 else ("", 0)

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        return " " + random_words(target, rng) if target > 0 else ""

    def head(self, block: str, tokens: int) -> str:
        return " " + " ".join(block.split()[:tokens]) if tokens > 0 else ""


class ByteCounter(TokenCounter):
    """The reference server's default byte tokenizer: one token per byte; its chat template is known."""

    name = "bytes"
    is_tokenizer = True

    def __init__(self) -> None:
        self._overhead: dict[int, int | None] = {}

    def __call__(self, text: str) -> int:
        return count_bytes(text)

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        if target <= 0:
            return "", 0
        text = random_words(target // 3 + 2, rng)  # words average over 3 bytes with their space
        while len(text) < target:
            text += " " + random_words(target // 3 + 2, rng)
        return text[:target], target  # WORDS are ASCII: one byte per character

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        # One byte per token: a block may end inside a word, and still never merges with the next.
        return (" " + self.fit(target, rng)[0])[:target] if target > 0 else ""

    def head(self, block: str, tokens: int) -> str:
        return block[: max(tokens, 0)]

    def piece_tokens(self, pieces: Sequence[str]) -> list[int] | None:
        return [count_bytes(p) for p in pieces]

    def template_tokens(self, messages: Messages) -> int | None:
        # The byte template wraps each message in one role token whatever its content, so the
        # overhead depends on the number of messages only; measured on the server's own code.
        n = len(messages)
        if n not in self._overhead:
            self._overhead[n] = _byte_template_overhead(n)
        return self._overhead[n]


def _byte_template_overhead(n_messages: int) -> int | None:
    try:
        from refserver.text import ByteTokenizer, render_byte_chat
    except ImportError:  # pragma: no cover - the package ships with loadgen
        return None
    content = "x"
    rendered = render_byte_chat([{"role": "user", "content": content}] * n_messages)
    return len(ByteTokenizer().encode(rendered, add_bos=False)) - n_messages * count_bytes(content)


def fit_text(target: int, rng: np.random.Generator, counter_name: str, counter: Counter) -> tuple[str, int]:
    """Random text whose count under `counter` is `target` (or as close as it allows), and that count."""
    if target <= 0:
        return "", 0
    if isinstance(counter, TokenCounter):
        return counter.fit(target, rng)
    if counter_name in ("words", "bytes"):
        return (WordCounter() if counter_name == "words" else ByteCounter()).fit(target, rng)
    text = _fit_by_bisection(target, rng, counter)
    return text, counter(text)


def text_of_tokens(target: int, rng: np.random.Generator, counter_name: str, counter: Counter) -> str:
    """Random text whose count under `counter` is `target` (or as close as the counter allows)."""
    return fit_text(target, rng, counter_name, counter)[0]


def _fit_by_bisection(target: int, rng: np.random.Generator, counter: Counter) -> str:
    """For a counter that can only count: the number of words whose text counts closest to `target`.

    A count that is non-decreasing in the number of words (any tokenizer that splits at spaces) makes
    the bisection find the best prefix; ties go to the shorter text.
    """
    if target <= 0:
        return ""
    words = random_words(target, rng).split()
    while counter(" ".join(words)) < target:
        words += random_words(len(words), rng).split()
    lo, hi = 0, len(words)  # count(words[:lo]) < target <= count(words[:hi])
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if counter(" ".join(words[:mid])) < target:
            lo = mid
        else:
            hi = mid
    below = " ".join(words[:lo])
    above = " ".join(words[:hi])
    return below if lo and target - counter(below) <= counter(above) - target else above
