"""Prompt text of a target token count, and counting tokens on the client.

The count that matters is the server's `usage.prompt_tokens` (what the model saw after its chat
template); the client can only aim. Three counters:
- `words`: one token per word from a list of short, common English words, each of which is a single
  token in the usual BPE vocabularies (Llama, Qwen, Mistral, GPT); no tokenizer needed.
- `bytes`: one token per byte, as the bundled reference server's default byte-level tokenizer counts.
- a local `tokenizer.json` path: exact, through the `tokenizers` library.
How close each lands is measured on every run against the server's count (summary `tokens.prompt_accuracy`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

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


def count_words(text: str) -> int:
    return len(text.split())


def count_bytes(text: str) -> int:
    return len(text.encode("utf-8"))


def hf_counter(path: str) -> Counter:
    """Exact counts with a local Hugging Face `tokenizer.json` (special tokens not added)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ValueError("--tokenizer PATH needs the 'tokenizers' package (pip install 'goodput[server]')") from exc
    if not Path(path).is_file():
        raise ValueError(f"tokenizer file not found: {path}")
    tok = Tokenizer.from_file(path)
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def make_counter(spec: str) -> tuple[str, Counter]:
    """`words`, `bytes` or a path to tokenizer.json → (name, counter)."""
    if spec == "words":
        return "words", count_words
    if spec == "bytes":
        return "bytes", count_bytes
    return f"tokenizer:{Path(spec).name}", hf_counter(spec)


def random_words(n: int, rng: np.random.Generator) -> str:
    idx = rng.integers(0, len(WORDS), size=n)
    return " ".join(WORDS[i] for i in idx)


def text_of_tokens(target: int, rng: np.random.Generator, counter_name: str, counter: Counter) -> str:
    """Random text whose count under `counter` is `target` (or as close as the tokenizer allows)."""
    if target <= 0:
        return ""
    if counter_name == "words":
        return random_words(target, rng)
    if counter_name == "bytes":
        text = random_words(target // 3 + 2, rng)  # words average over 3 bytes with their space
        while len(text) < target:
            text += " " + random_words(target // 3 + 2, rng)
        return text[:target]
    # A real tokenizer: start from one word per token and correct by the measured difference.
    words = random_words(target, rng).split()
    for _ in range(8):
        text = " ".join(words)
        diff = counter(text) - target
        if diff == 0:
            return text
        if diff > 0:
            words = words[: max(1, len(words) - diff)]
        else:
            words += random_words(-diff, rng).split()
    return " ".join(words)
