"""Tokenizers, chat templates and the streaming detokenizer (UTF-8 and stop-string hold-back)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from refserver.api.detokenize import IncrementalDetokenizer, OutputText
from refserver.model.config import TINY_SPECIAL_IDS, tiny_config
from refserver.text.chat_template import load_chat_template, render_byte_chat
from refserver.text.tokenizer import (
    BOS_ID,
    BYTE_SPECIALS,
    BYTE_VOCAB_SIZE,
    EOS_ID,
    ByteTokenizer,
    HFTokenizer,
    TokenizerConfig,
    load_tokenizer,
    read_tokenizer_config,
    save_byte_tokenizer,
)


def test_byte_vocab_matches_the_tiny_model() -> None:
    assert tiny_config().vocab_size == BYTE_VOCAB_SIZE
    for name, token_id in TINY_SPECIAL_IDS.items():
        assert BYTE_SPECIALS[token_id - 256] == f"<|{name}|>"
    assert (TINY_SPECIAL_IDS["bos"], TINY_SPECIAL_IDS["eos"]) == (BOS_ID, EOS_ID)


def test_byte_tokenizer_roundtrip_and_specials() -> None:
    tok = ByteTokenizer()
    ids = tok.encode("<|user|>héllo<|eos|>", add_bos=True)
    assert ids == [BOS_ID, TINY_SPECIAL_IDS["user"], *"héllo".encode(), EOS_ID]
    assert tok.decode(ids) == "héllo"
    assert tok.decode(list("é".encode())[:1]) == "\ufffd"
    assert tok.stop_token_ids == [EOS_ID]


def test_byte_chat_template() -> None:
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]
    assert render_byte_chat(messages) == "<|bos|><|system|>be brief<|user|>hi<|assistant|>"
    template = load_chat_template(None, ByteTokenizer())
    assert template.render(messages) == render_byte_chat(messages)
    assert not template.add_bos


def test_detokenizer_holds_back_split_characters() -> None:
    detok = IncrementalDetokenizer(ByteTokenizer())
    pieces = [detok.push([b]) for b in "a€b".encode()]
    assert pieces == ["a", "", "", "€", "b"]
    assert detok.push([0xE2]) == ""
    assert detok.flush() == "\ufffd"


def test_output_text_credits_tokens_to_the_text_that_carries_them() -> None:
    out = OutputText(ByteTokenizer(), [])
    pieces = [out.add([b]) for b in "€!".encode()]
    assert [(p.text, p.tokens) for p in pieces] == [("", 0), ("", 0), ("€", 3), ("!", 1)]
    out.add([EOS_ID])
    tail = out.finish()
    assert (tail.text, tail.tokens) == ("", 1)
    assert out.num_tokens == 5


def test_stop_string_split_over_tokens() -> None:
    out = OutputText(ByteTokenizer(), ["END", "xy"])
    sent = ""
    for b in b"abcEN":
        piece = out.add([b])
        sent += piece.text
        assert not piece.stopped
    assert sent == "abc"  # "EN" might start "END": held back
    piece = out.add([ord("D")])
    assert piece.stopped and piece.text == ""
    assert out.add([ord("z")]).stopped
    assert out.text == "abc"
    tail = out.finish()
    assert tail.text == "" and tail.tokens == 1  # "D": its text was the stop string
    assert out.num_tokens == 6  # what came after the stop is not output


def test_stop_string_not_checked_before_min_tokens() -> None:
    out = OutputText(ByteTokenizer(), ["b"], min_tokens=3)
    assert not out.add([ord("a")]).stopped
    assert not out.add([ord("b")]).stopped
    piece = out.add([ord("b")])
    assert piece.stopped


@pytest.fixture
def hf_dir(tmp_path: Path) -> Path:
    """A tiny byte-level BPE tokenizer trained here, saved like a HF model directory."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, special_tokens=["<s>", "</s>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(["hello world", "hello there", "the world"] * 20, trainer=trainer)
    tok.save(str(tmp_path / "tokenizer.json"))
    return tmp_path


def test_hf_tokenizer_with_jinja_template(hf_dir: Path) -> None:
    template_src = "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}"
    template_src += "{% if add_generation_prompt %}[assistant]{% endif %}"
    config = {"bos_token": "<s>", "eos_token": {"content": "</s>"}, "chat_template": template_src}
    (hf_dir / "tokenizer_config.json").write_text(json.dumps(config))
    tok = load_tokenizer(hf_dir)
    assert isinstance(tok, HFTokenizer)
    eos_id = tok.stop_token_ids[0]
    assert eos_id == tok.encode("</s>", add_bos=False)[0]
    template = load_chat_template(hf_dir, tok)
    text = template.render([{"role": "user", "content": "hello"}])
    assert text == "<s>[user]hello</s>[assistant]"
    ids = tok.encode(text, add_bos=template.add_bos)
    assert ids[0] == tok.encode("<s>", add_bos=False)[0]
    assert tok.decode(ids) == "[user]hello[assistant]"


def test_hf_tokenizer_without_template_uses_plain(hf_dir: Path) -> None:
    tok = load_tokenizer(hf_dir)
    template = load_chat_template(hf_dir, tok)
    assert template.name == "plain"
    assert template.render([{"role": "user", "content": "hi"}]) == "<|user|>\nhi\n<|assistant|>\n"


def test_hf_detokenizer_holds_back_split_characters(hf_dir: Path) -> None:
    tok = load_tokenizer(hf_dir)
    ids = tok.encode("é!", add_bos=False)
    assert len(ids) == 3  # 'é' was never seen in training: two byte tokens
    detok = IncrementalDetokenizer(tok)
    assert [detok.push([i]) for i in ids] == ["", "é", "!"]


def test_missing_tokenizer_json_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"tokenizer\.json"):
        load_tokenizer(tmp_path)


def test_saved_byte_tokenizer_matches_the_in_memory_one(tmp_path: Path) -> None:
    save_byte_tokenizer(tmp_path)
    hf = load_tokenizer(tmp_path)
    byte = ByteTokenizer()
    text = "<|bos|><|user|>héllo wörld €😀 \x00\x7f\n\t<|assistant|>"
    assert hf.encode(text, add_bos=False) == byte.encode(text, add_bos=False)
    assert hf.encode("plain", add_bos=True) == byte.encode("plain", add_bos=True)
    assert hf.decode(byte.encode(text, add_bos=False)) == byte.decode(byte.encode(text, add_bos=False))
    assert hf.stop_token_ids == [EOS_ID]
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi é"}, {"role": "tool", "content": "t"}]
    assert load_chat_template(tmp_path, hf).render(messages) == render_byte_chat(messages)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, TokenizerConfig()),
        ({"bos_token": "<s>", "eos_token": {"content": "</s>"}, "chat_template": "{{ x }}"},
         TokenizerConfig("<s>", "</s>", "{{ x }}")),
        ({"chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "D"}]},
         TokenizerConfig(chat_template="D")),
        ({"chat_template": [{"name": "tool_use", "template": "T"}], "eos_token": 5}, TokenizerConfig()),
        ({"chat_template": "  \n", "bos_token": {"id": 1}}, TokenizerConfig()),
    ],
)
def test_tokenizer_config_is_read_into_its_fields(tmp_path: Path, config: dict[str, object],
                                                  expected: TokenizerConfig) -> None:
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    assert read_tokenizer_config(tmp_path) == expected
