"""Prompt lengths: exact with a local tokenizer, the counters' claims checked, the count of what was
built carried to the client, and the chat template's overhead where it is known."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loadgen.workload.counters import make_counter
from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import SyntheticWorkload, load_jsonl
from loadgen.workload.text import (
    ByteCounter,
    WordCounter,
    count_bytes,
    count_words,
    fit_text,
    text_of_tokens,
)
from tests.loadgen._tiny_tokenizer import CHAT_TEMPLATE, byte_level_bpe, metaspace_bpe


@pytest.fixture(scope="module")
def byte_bpe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return byte_level_bpe(tmp_path_factory.mktemp("bytebpe"), chat_template=True)


@pytest.fixture(scope="module")
def metaspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return metaspace_bpe(tmp_path_factory.mktemp("metaspace"))


def _reference_count(path: Path, text: str) -> int:
    """Counted by the tokenizers library directly, not through the code under test."""
    from tokenizers import Tokenizer

    return len(Tokenizer.from_file(str(path)).encode(text, add_special_tokens=False).ids)


def test_the_tiny_tokenizer_splits_words_into_several_tokens(byte_bpe: Path) -> None:
    # The shape that made word-based sizing several times too long: the test would prove nothing otherwise.
    text = text_of_tokens(64, np.random.default_rng(0), "words", count_words)
    assert _reference_count(byte_bpe, " " + text) > 2 * 64


@pytest.mark.parametrize("target", [1, 2, 16, 64, 256, 1000])
@pytest.mark.parametrize("kind", ["byte_level", "metaspace"])
def test_a_local_tokenizer_gives_exact_lengths(kind: str, target: int, byte_bpe: Path, metaspace: Path) -> None:
    path = byte_bpe if kind == "byte_level" else metaspace
    name, counter = make_counter(str(path))
    for seed in range(5):
        text, count = fit_text(target, np.random.default_rng([seed, target]), name, counter)
        assert _reference_count(path, text) == count == target, (seed, text[:60])


def test_synthetic_items_with_a_tokenizer_are_exact_and_carry_their_count(byte_bpe: Path) -> None:
    name, counter = make_counter(str(byte_bpe))
    w = SyntheticWorkload(parse_length("uniform:8:300"), parse_length("4"), seed=1, counter_name=name,
                          counter=counter, prefix_groups=2, prefix_tokens=40)
    for i in range(20):
        item = w.item(i)
        assert item.messages is not None and item.prompt_tokens_target is not None
        system, user = (m["content"] for m in item.messages)
        assert _reference_count(byte_bpe, system) == 40
        assert _reference_count(byte_bpe, user) == item.prompt_tokens_target - 40
        assert item.prompt_tokens_counted == item.prompt_tokens_target


def test_chat_template_overhead_is_measured_from_the_model_directory(byte_bpe: Path) -> None:
    name, counter = make_counter(str(byte_bpe))
    w = SyntheticWorkload(parse_length("50"), parse_length("4"), seed=0, counter_name=name, counter=counter)
    item = w.item(0)
    assert item.messages is not None
    # The ChatML-like template written by hand: what the server would tokenize.
    rendered = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in item.messages)
    rendered += "<|im_start|>assistant\n"
    assert "im_start" in CHAT_TEMPLATE
    expected = _reference_count(byte_bpe, rendered) - 50
    assert item.template_tokens == expected > 0
    assert w.describe()["chat_template_tokens"] == expected


def test_no_template_overhead_without_a_template(metaspace: Path) -> None:
    name, counter = make_counter(str(metaspace))  # a directory without tokenizer_config.json
    w = SyntheticWorkload(parse_length("10"), parse_length("4"), seed=0, counter_name=name, counter=counter)
    assert w.item(0).template_tokens is None
    words = SyntheticWorkload(parse_length("10"), parse_length("4"), seed=0, counter_name="words",
                              counter=WordCounter())
    assert words.item(0).template_tokens is None


def test_bytes_counter_matches_the_reference_servers_prompt_count() -> None:
    """With --tokenizer bytes, counted + template overhead is what the bundled server counts."""
    from refserver.text.chat_template import render_byte_chat
    from refserver.text.tokenizer import ByteTokenizer

    counter = ByteCounter()
    w = SyntheticWorkload(parse_length("uniform:1:200"), parse_length("4"), seed=2, counter_name="bytes",
                          counter=counter, prefix_groups=3, prefix_tokens=17)
    for i in range(10):
        item = w.item(i)
        assert item.messages is not None and item.prompt_tokens_counted is not None
        assert item.template_tokens is not None
        server_count = len(ByteTokenizer().encode(render_byte_chat(item.messages), add_bos=False))
        assert item.prompt_tokens_counted + item.template_tokens == server_count
        assert item.prompt_tokens_counted == item.prompt_tokens_target  # exact in bytes


@pytest.mark.parametrize("target", [1, 5, 64, 999])
def test_words_and_bytes_counters_are_exact_with_a_prefix(target: int) -> None:
    for counter_name, counter, count in (("words", WordCounter(), count_words), ("bytes", ByteCounter(), count_bytes)):
        w = SyntheticWorkload(parse_length(str(target)), parse_length("4"), seed=target, counter_name=counter_name,
                              counter=counter, prefix_groups=1, prefix_tokens=7)
        item = w.item(0)
        assert item.messages is not None
        assert sum(count(m["content"]) for m in item.messages) == target + 7 == item.prompt_tokens_counted


def test_a_plain_counting_function_converges_instead_of_oscillating() -> None:
    # Three "tokens" per word: the old builder, assuming about one token per word, overshot.
    def three_per_word(text: str) -> int:
        return 3 * len(text.split())

    for target in (3, 30, 300, 301):
        text, count = fit_text(target, np.random.default_rng(target), "custom", three_per_word)
        assert count == three_per_word(text)
        assert abs(count - target) <= 1  # as close as a three-token granularity allows


def test_dataset_items_carry_their_count_and_template(tmp_path: Path, byte_bpe: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text('{"messages": [{"role": "user", "content": "the quick brown fox"}]}\n')
    _, counter = make_counter(str(byte_bpe))
    (item,) = load_jsonl(str(p), counter, {})
    assert item.prompt_tokens_counted == _reference_count(byte_bpe, "the quick brown fox")
    assert item.prompt_tokens_target is None  # a dataset's prompt is what the file says: no target length
    assert item.template_tokens is not None and item.template_tokens > 0


def test_bad_tokenizer_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="tokenizer file not found"):
        make_counter(str(tmp_path / "missing.json"))
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not a tokenizer")
    with pytest.raises(ValueError, match="cannot read tokenizer"):
        make_counter(str(bad))


def test_items_with_a_tokenizer_do_not_depend_on_what_was_built_before(byte_bpe: Path) -> None:
    def workload() -> SyntheticWorkload:
        name, counter = make_counter(str(byte_bpe))
        return SyntheticWorkload(parse_length("uniform:5:500"), parse_length("4"), seed=9, counter_name=name,
                                 counter=counter)

    busy = workload()
    for i in range(8):
        busy.item(i)
    assert busy.item(3) == workload().item(3)
