"""Tokenizers of the reference server: a byte-level one built in memory (the default) and HF `tokenizer.json`.

The default vocabulary matches the tiny random-weight model: ids 0..255 are the raw bytes, followed by
a few special tokens (`BYTE_SPECIALS`). So `BYTE_VOCAB_SIZE == 261`, `BOS_ID == 256`, `EOS_ID == 257`.
Special tokens are written in text as `<|name|>` and encoded as their single id; decoding skips them.

Byte-level tokens can split a UTF-8 character across tokens; `decode` then yields U+FFFD for the
incomplete tail, which is what the streaming detokenizer (`refserver.api.detokenize`) holds back on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from metrics.results import Json

# Order fixes the ids: BYTE_SPECIALS[i] has id 256 + i. It matches refserver.model.config.TINY_SPECIAL_IDS
# (the tiny model's vocabulary; a test keeps the two equal). Never reorder.
BYTE_SPECIALS: tuple[str, ...] = ("<|bos|>", "<|eos|>", "<|system|>", "<|user|>", "<|assistant|>")
BOS_ID = 256
EOS_ID = 257
BYTE_VOCAB_SIZE = 256 + len(BYTE_SPECIALS)


class Tokenizer(Protocol):
    """What the HTTP layer needs from a tokenizer."""

    @property
    def vocab_size(self) -> int: ...

    @property
    def bos_token(self) -> str | None: ...

    @property
    def eos_token(self) -> str | None: ...

    @property
    def stop_token_ids(self) -> list[int]:
        """Ids that end generation unless `ignore_eos` (eos; HF configs may list several)."""
        ...

    def encode(self, text: str, *, add_bos: bool) -> list[int]:
        """Token ids of `text`; special tokens written as text become their ids."""
        ...

    def decode(self, ids: list[int]) -> str:
        """Text of `ids`, special tokens skipped, incomplete UTF-8 as U+FFFD."""
        ...


class ByteTokenizer:
    """256 byte tokens + `BYTE_SPECIALS`: no merges, so the token count of a text is its UTF-8 length."""

    def __init__(self) -> None:
        self._special_ids = {tok: 256 + i for i, tok in enumerate(BYTE_SPECIALS)}
        self._special_re = re.compile("(" + "|".join(re.escape(t) for t in BYTE_SPECIALS) + ")")

    @property
    def vocab_size(self) -> int:
        return BYTE_VOCAB_SIZE

    @property
    def bos_token(self) -> str | None:
        return BYTE_SPECIALS[0]

    @property
    def eos_token(self) -> str | None:
        return BYTE_SPECIALS[1]

    @property
    def stop_token_ids(self) -> list[int]:
        return [EOS_ID]

    def encode(self, text: str, *, add_bos: bool) -> list[int]:
        ids = [BOS_ID] if add_bos else []
        for part in self._special_re.split(text):
            special = self._special_ids.get(part)
            if special is not None:
                ids.append(special)
            elif part:
                ids.extend(part.encode("utf-8"))
        return ids

    def decode(self, ids: list[int]) -> str:
        return bytes(i for i in ids if 0 <= i < 256).decode("utf-8", errors="replace")


class HFTokenizer:
    """A `tokenizer.json` loaded with the `tokenizers` library, plus eos/bos from the model directory."""

    def __init__(self, model_dir: Path) -> None:
        from tokenizers import Tokenizer as _RawTokenizer

        path = model_dir / "tokenizer.json"
        if not path.is_file():
            raise FileNotFoundError(f"{path} not found: --model needs a HF directory with tokenizer.json")
        self._tok = _RawTokenizer.from_file(str(path))
        self.config = read_tokenizer_config(model_dir)
        self._bos = self.config.bos_token
        self._eos = self.config.eos_token
        self._stop_ids = self._find_stop_ids(model_dir)

    def _find_stop_ids(self, model_dir: Path) -> list[int]:
        ids: list[int] = []
        if self._eos is not None and (eos_id := self._tok.token_to_id(self._eos)) is not None:
            ids.append(int(eos_id))
        # config.json / generation_config.json may list several (e.g. Llama 3's <|eot_id|>).
        for name in ("generation_config.json", "config.json"):
            value = _read_json(model_dir / name).get("eos_token_id")
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, int) and item not in ids:
                    ids.append(item)
        return ids

    @property
    def vocab_size(self) -> int:
        return int(self._tok.get_vocab_size(with_added_tokens=True))

    @property
    def bos_token(self) -> str | None:
        return self._bos

    @property
    def eos_token(self) -> str | None:
        return self._eos

    @property
    def stop_token_ids(self) -> list[int]:
        return list(self._stop_ids)

    def encode(self, text: str, *, add_bos: bool) -> list[int]:
        # The post-processor adds bos where the tokenizer is configured to; chat templates already
        # write bos as text, so they encode without it.
        return list(self._tok.encode(text, add_special_tokens=add_bos).ids)

    def decode(self, ids: list[int]) -> str:
        return str(self._tok.decode(ids, skip_special_tokens=True))


@dataclass(frozen=True, slots=True)
class TokenizerConfig:
    """What is read of a model directory's `tokenizer_config.json` (all None when there is none)."""

    bos_token: str | None = None
    eos_token: str | None = None
    chat_template: str | None = None  # a string, or of a list of named ones the "default"; None when blank


def read_tokenizer_config(model_dir: Path) -> TokenizerConfig:
    raw = _read_json(model_dir / "tokenizer_config.json")
    return TokenizerConfig(bos_token=_token_text(raw.get("bos_token")), eos_token=_token_text(raw.get("eos_token")),
                           chat_template=_template_text(raw.get("chat_template")))


def _template_text(value: object) -> str | None:
    """`chat_template` is a string or a list of {"name", "template"}, of which "default" is the chat one."""
    if isinstance(value, list):
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default")
    return value if isinstance(value, str) and value.strip() else None


def _read_json(path: Path) -> Mapping[str, Json]:
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def _token_text(value: object) -> str | None:
    """`tokenizer_config.json` writes special tokens as a string or as {"content": ...}."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    return None


def load_tokenizer(model_dir: str | Path | None) -> Tokenizer:
    """The byte tokenizer when no model directory is given, else the directory's `tokenizer.json`."""
    if model_dir is None:
        return ByteTokenizer()
    return HFTokenizer(Path(model_dir))


# The byte chat template (refserver.text.chat_template.render_byte_chat) in Jinja, for other servers.
BYTE_CHAT_TEMPLATE_JINJA = (
    "{{ bos_token }}{% for m in messages %}"
    "{% set role = {'developer': 'system', 'tool': 'user'}.get(m['role'], m['role']) %}"
    "<|{{ role }}|>{{ m['content'] }}{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _byte_to_unicode() -> dict[int, str]:
    """The byte-level BPE convention (GPT-2): printable bytes stand for themselves, the others are
    shifted to code points from 256 up, so every byte is one visible character."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    table = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + shifted)
            shifted += 1
    return table


def save_byte_tokenizer(directory: str | Path) -> None:
    """Write the default byte tokenizer as a HF `tokenizer.json` + `tokenizer_config.json` (with the byte
    chat template), so the tiny model saved with `save_pretrained` runs unchanged on other servers.
    Loaded back (by `HFTokenizer` or transformers) it yields the same ids as `ByteTokenizer`."""
    from tokenizers import Tokenizer as _RawTokenizer
    from tokenizers import decoders, models, pre_tokenizers, processors

    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    vocab = {char: b for b, char in _byte_to_unicode().items()}
    tok = _RawTokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.add_special_tokens(list(BYTE_SPECIALS))
    # Plain prompts get bos like ByteTokenizer.encode(add_bos=True); chat templates write it themselves.
    tok.post_processor = processors.TemplateProcessing(
        single=f"{BYTE_SPECIALS[0]} $A", special_tokens=[(BYTE_SPECIALS[0], BOS_ID)]
    )
    tok.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BYTE_SPECIALS[0],
        "eos_token": BYTE_SPECIALS[1],
        "add_bos_token": False,
        "chat_template": BYTE_CHAT_TEMPLATE_JINJA,
        "model_max_length": 4096,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
