"""Sizing prompts with the server: the word table a tokenize endpoint teaches (exact), the calibrated
ratio (close), and what each learns from the reference server."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from loadgen.http.send.probe import ProbeFailed, calibrate, learn_table, tokenize_url
from loadgen.workload.sizing import RatioCounter, TableCounter, TemplateCost, fit_line
from loadgen.workload.text import WORDS, count_bytes
from tests.refserver.fake_engine import make_app, serve_in_thread
from tests.servers.scripted import closed_port


def byte_table() -> TableCounter:
    """What the reference server's tokenizer would teach: one token per byte."""
    return TableCounter("t", {w: len(w) for w in WORDS}, {w: len(w) + 1 for w in WORDS}, TemplateCost(3, 1, 2), 1.0)


@pytest.mark.parametrize("target", [3, 7, 50, 256, 1000, 4096])
def test_a_table_fits_prompts_of_exactly_the_target(target: int) -> None:
    table = byte_table()
    for seed in range(10):
        text, count = table.fit(target, np.random.default_rng([seed, target]))
        assert count_bytes(text) == count == target, text
        block = table.fit_block(target, np.random.default_rng(seed))
        assert block.startswith(" ") and count_bytes(block) == target == table(block)
        assert count_bytes(table.head(block, target // 2)) <= target // 2


def test_a_table_estimates_words_it_does_not_know_per_character() -> None:
    table = byte_table()
    assert table("the zyzzyva") == 3 + 8 and table(" the") == 4
    assert table.template_tokens([{"role": "user"}]) == 3
    assert table.template_tokens([{"role": "system"}, {"role": "user"}, {"role": "assistant"}, {"role": "user"}]) == 6


def test_a_line_fit_recovers_overhead_and_ratio() -> None:
    words = [10, 20, 40, 80, 30]
    extra = [0, 0, 0, 0, 2]
    tokens = [round(7 + 1.5 * w + 3 * e) for w, e in zip(words, extra, strict=True)]
    a, b, e = fit_line(words, extra, tokens)
    assert (a, b, e) == pytest.approx((7, 1.5, 3))
    ratio = RatioCounter(b, TemplateCost(round(a), e, 2 * e), probes=5)
    text, count = ratio.fit(300, np.random.default_rng(0))
    assert count == 300 and len(text.split()) == 200
    assert ratio.template_tokens([{"role": "user"}] * 3) == 7 + 6


@pytest.mark.parametrize(("base", "url"), [
    ("http://h:8000", "http://h:8000/tokenize"), ("http://h:8000/v1", "http://h:8000/tokenize"),
    ("http://h/prefix/v1/", "http://h/prefix/tokenize"),
])
def test_the_tokenize_endpoint_sits_beside_v1(base: str, url: str) -> None:
    assert tokenize_url(base) == url


@pytest.fixture(scope="module")
def reference() -> Iterator[str]:
    with serve_in_thread(make_app()) as url:
        yield url


@pytest.fixture(scope="module")
def without_tokenize() -> Iterator[str]:
    with serve_in_thread(make_app(tokenize_endpoint=False)) as url:
        yield url


async def test_the_reference_server_teaches_its_byte_counts(reference: str) -> None:
    table = await learn_table(reference, "goodput-tiny", chat=True)
    assert all(table.first[w] == len(w) and table.spaced[w] == len(w) + 1 for w in WORDS)
    assert table.template == TemplateCost(3, 1, 2) and table.tokens_per_char == pytest.approx(1.0)


async def test_calibration_fits_the_reference_servers_counts(without_tokenize: str) -> None:
    with pytest.raises(ProbeFailed, match="HTTP 404"):
        await learn_table(without_tokenize, "goodput-tiny", chat=True)
    ratio = await calibrate(without_tokenize, "goodput-tiny", chat=True)  # its served name: another one is a 404
    mean_word = np.mean([len(w) + 1 for w in WORDS])  # bytes per word with its space
    assert ratio.tokens_per_word == pytest.approx(mean_word, rel=0.1)
    assert ratio.probes == 11 and ratio.template.one_message is not None


async def test_calibration_needs_a_server_that_answers() -> None:
    with closed_port() as port, pytest.raises(ProbeFailed):
        await calibrate(f"http://127.0.0.1:{port}", "m", chat=True)
