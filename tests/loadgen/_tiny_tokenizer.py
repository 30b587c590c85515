"""Small tokenizers trained in the test process (never downloaded), written as a model directory.

`byte_level_bpe`: GPT-2-style byte-level BPE with a small vocabulary, so most common English words take
several tokens: the shape that made word-based prompt sizing five times too long.
`metaspace_bpe`: SentencePiece-style BPE (`▁` marks word starts), the other common family.
"""

from __future__ import annotations

import json
from pathlib import Path

SENTENCES = [
    "the quick brown fox jumps over the lazy dog while the cat sleeps in the warm sun",
    "a small model reads a long story about people who live near the river and the sea",
    "tokens are pieces of words and some words are one piece while others need many",
    "every request asks for an answer and the server streams it back one chunk at a time",
    "numbers like 12 and 345 and marks like , . ! ? appear in text as well",
]

# A ChatML-like template: what a server would wrap around the messages (two special tokens per turn).
CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
SPECIALS = ["<|im_start|>", "<|im_end|>"]


def byte_level_bpe(directory: Path, *, vocab_size: int = 320, chat_template: bool = False) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=SPECIALS, show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    return _save(tok, directory, chat_template)


def metaspace_bpe(directory: Path, *, vocab_size: int = 200) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    letters = sorted(set("".join(SENTENCES)) | set("abcdefghijklmnopqrstuvwxyz") - {" "})
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=["<unk>"], initial_alphabet=letters,
                                  show_progress=False)
    tok.train_from_iterator(SENTENCES, trainer)
    return _save(tok, directory, False)


def _save(tok: object, directory: Path, chat_template: bool) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokenizer.json"
    tok.save(str(path))  # type: ignore[attr-defined]
    if chat_template:
        config = {"chat_template": CHAT_TEMPLATE, "eos_token": "<|im_end|>"}
        (directory / "tokenizer_config.json").write_text(json.dumps(config))
    return path
