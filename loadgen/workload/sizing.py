"""Counting tokens as a remote server does, learnt from the server before the run (`--prompt-sizing`).

- `TableCounter` (`tokenize`): the server's tokenize endpoint counted every word of the synthetic
  vocabulary (`loadgen.workload.text.WORDS`) once, at the start of a text and after a space, and the chat
  template's overhead for a few message shapes. Prompts are drawn word by word and finished with words
  whose counts add up to the target exactly, so a synthetic prompt has exactly the tokens asked for
  whenever the server's tokenizer splits text at spaces before merging (byte-level and the usual BPE
  tokenizers); text made of other words (a dataset, an assistant's answer) is estimated per character.
- `RatioCounter` (`calibrate`): a straight line fitted to `usage.prompt_tokens` of a few probe
  requests (`max_tokens: 1`) of known numbers of words: tokens per word and the chat template's fixed
  overhead. Synthetic prompts land within the spread of word lengths of their target.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from loadgen.workload.text import WORDS, Messages, TokenCounter, random_words


@dataclass(frozen=True, slots=True)
class TemplateCost:
    """The chat template's tokens: for one user message, each system message more, and each
    (assistant, user) pair more; None where the server could not say."""

    one_message: int | None = None
    per_system: float = 0.0
    per_pair: float = 0.0

    def of(self, messages: Messages) -> int | None:
        if self.one_message is None or not messages:
            return None
        systems = sum(1 for m in messages if m.get("role") in ("system", "developer"))
        others = max(len(messages) - systems - 1, 0)
        return round(self.one_message + self.per_system * systems + self.per_pair * others / 2)


class TableCounter(TokenCounter):
    """Counts from a table of per-word token counts (see the module docstring)."""

    def __init__(self, name: str, first: Mapping[str, int], spaced: Mapping[str, int], template: TemplateCost,
                 tokens_per_char: float) -> None:
        self.name = name
        self.first = dict(first)  # a word at the start of a text
        self.spaced = dict(spaced)  # " word" after another word
        self.template = template
        self.tokens_per_char = tokens_per_char
        self._vocab = [w for w in WORDS if w in self.first and w in self.spaced and self.spaced[w] > 0]
        if not self._vocab:
            raise ValueError("the tokenize endpoint counted none of the words")
        self._costs = np.array([self.spaced[w] for w in self._vocab], dtype=np.int64)
        self._by_cost: dict[int, list[str]] = {}
        for w in self._vocab:
            self._by_cost.setdefault(self.spaced[w], []).append(w)
        self._max_cost = int(self._costs.max())

    def _estimate(self, word: str, spaced: bool) -> int:
        return max(1, round((len(word) + spaced) * self.tokens_per_char))

    def __call__(self, text: str) -> int:
        words = text.split()
        if not words:
            return 0
        spaced = self.spaced
        total = 0
        start = 1 if not text[:1].isspace() else 0
        if start:
            w = words[0]
            total += self.first[w] if w in self.first else self._estimate(w, False)
        for w in words[start:]:
            cost = spaced.get(w)
            total += cost if cost is not None else self._estimate(w, True)
        return total

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        if target <= 0:
            return "", 0
        fits = [w for w in self._vocab if self.first[w] <= target] or self._vocab
        exact = [w for w in fits if self._reachable(target - self.first[w])]  # small targets: not every first word
        candidates = exact or fits
        first = candidates[int(rng.integers(len(candidates)))]
        rest = self._spaced_words(target - self.first[first], rng)
        text = " ".join([first, *rest])
        return text, self(text)

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        words = self._spaced_words(target, rng)
        return " " + " ".join(words) if words else ""

    def head(self, block: str, tokens: int) -> str:
        out: list[str] = []
        total = 0
        for w in block.split():
            cost = self.spaced.get(w, self._estimate(w, True))
            if total + cost > tokens:
                break
            out.append(w)
            total += cost
        return " " + " ".join(out) if out else ""

    def _spaced_words(self, target: int, rng: np.random.Generator) -> list[str]:
        """Words whose spaced counts add up to `target` exactly when the table allows it."""
        words: list[str] = []
        remaining = target
        while remaining > 2 * self._max_cost:
            draw = rng.integers(len(self._vocab), size=max(8, remaining // (2 * self._max_cost)))
            for i in draw.tolist():
                if remaining <= 2 * self._max_cost:
                    break
                words.append(self._vocab[i])
                remaining -= int(self._costs[i])
        return words + self._finish(remaining, rng)

    def _reachable(self, remaining: int) -> bool:
        """Whether spaced words can add up to exactly `remaining` (above twice the largest cost they always can
        for a table with the usual spread of costs)."""
        if remaining == 0 or remaining > 2 * self._max_cost or remaining in self._by_cost:
            return True
        return any(remaining - c in self._by_cost for c in self._by_cost)

    def _finish(self, remaining: int, rng: np.random.Generator) -> list[str]:
        if remaining <= 0:
            return []
        if remaining in self._by_cost:
            pool = self._by_cost[remaining]
            return [pool[int(rng.integers(len(pool)))]]
        costs = sorted(self._by_cost)
        for a in costs:  # two words, when one cannot do it
            b = remaining - a
            if b in self._by_cost:
                pa, pb = self._by_cost[a], self._by_cost[b]
                return [pa[int(rng.integers(len(pa)))], pb[int(rng.integers(len(pb)))]]
        fitting = [c for c in costs if c < remaining]
        if not fitting:
            return []
        pool = self._by_cost[fitting[-1]]
        return [pool[int(rng.integers(len(pool)))], *self._finish(remaining - fitting[-1], rng)]

    def template_tokens(self, messages: Messages) -> int | None:
        return self.template.of(messages)


class RatioCounter(TokenCounter):
    """Tokens = round(tokens_per_word × words); the chat template's overhead from the same fit."""

    def __init__(self, tokens_per_word: float, template: TemplateCost, *, probes: int,
                 rejected: tuple[str, ...] = (), longest_words: int | None = None) -> None:
        if not tokens_per_word > 0:
            raise ValueError(f"a calibration needs a positive number of tokens per word, got {tokens_per_word}")
        self.tokens_per_word = tokens_per_word
        self.template = template
        self.probes = probes  # the probe requests the fit used
        self.rejected = rejected  # why each other probe failed (the server's answer, one line each)
        self.longest_words = longest_words  # the longest prompt the fit saw, in words
        self.name = f"calibrated:{tokens_per_word:.3f}_tokens_per_word"

    def __call__(self, text: str) -> int:
        return round(self.tokens_per_word * len(text.split()))

    def _words_for(self, target: int) -> int:
        return max(1, round(target / self.tokens_per_word)) if target > 0 else 0

    def fit(self, target: int, rng: np.random.Generator) -> tuple[str, int]:
        n = self._words_for(target)
        text = random_words(n, rng) if n else ""
        return text, self(text)

    def fit_block(self, target: int, rng: np.random.Generator) -> str:
        n = self._words_for(target)
        return " " + random_words(n, rng) if n else ""

    def head(self, block: str, tokens: int) -> str:
        words = block.split()[: self._words_for(tokens)]
        return " " + " ".join(words) if words else ""

    def template_tokens(self, messages: Messages) -> int | None:
        return self.template.of(messages)


def fit_line(words: list[int], extra_messages: list[int], tokens: list[int]) -> tuple[float, float, float]:
    """Least squares tokens ≈ a + b·words + e·extra_messages → (a, b, e); e is 0 when every probe had one
    message."""
    x = np.column_stack([np.ones(len(words)), np.asarray(words, dtype=np.float64),
                         np.asarray(extra_messages, dtype=np.float64)])
    if not any(extra_messages):
        x = x[:, :2]
    coef, *_ = np.linalg.lstsq(x, np.asarray(tokens, dtype=np.float64), rcond=None)
    a, b = float(coef[0]), float(coef[1])
    e = float(coef[2]) if coef.size > 2 else 0.0
    return a, b, e
