"""`--model` mixes: parsing (a single name kept as written), the per-request draw (its documented rule, its
shares, its independence from the prompts), one model per conversation, and a row's own model."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from loadgen.cli import run_cli
from loadgen.workload.conversations import load_jsonl_conversations
from loadgen.workload.lengths import parse_length
from loadgen.workload.models import MixedSessions, MixedWorkload, ModelMix, parse_models
from loadgen.workload.sessions import DatasetSessions, SyntheticSessions
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, load_jsonl
from loadgen.workload.text import WordCounter, count_words
from loadgen.workload.think import parse_think_time
from loadgen.workload.trace_workload import TraceWorkload
from loadgen.workload.traces import load_trace


def synthetic(seed: int = 3) -> SyntheticWorkload:
    return SyntheticWorkload(parse_length("uniform:20:60"), parse_length("uniform:5:30"), seed, "words", count_words)


@pytest.mark.parametrize("name", ["llama3:8b", "name:7", "org/model:v2", "base:0.6", "meta-llama/Llama-3.1-8B"])
def test_a_single_name_is_sent_as_written(name: str) -> None:
    assert parse_models(name) == ModelMix((name,), (1.0,))


def test_lists_take_equal_shares_or_their_weights() -> None:
    assert parse_models("a,b,c").shares == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    mix = parse_models("base:0.6, lora-a:0.3 ,lora-b:0.1")
    assert mix.names == ("base", "lora-a", "lora-b") and mix.shares == pytest.approx((0.6, 0.3, 0.1))
    assert parse_models("a:3,b:1").shares == pytest.approx((0.75, 0.25))  # weights need not sum to 1
    # A name that ends in :NUMBER takes an explicit weight; a name with a non-numeric tail needs none.
    assert parse_models("phi3:3.8:1,llama3:8b:1").names == ("phi3:3.8", "llama3:8b")
    assert parse_models("llama3:8b,qwen2:7b").names == ("llama3:8b", "qwen2:7b")


@pytest.mark.parametrize(("text", "says"), [
    ("a,,b", "needs a name"), (":0.5,b:0.5", "needs a name"), ("a:0,b:1", "must be a positive number"),
    ("a:-1,b:2", "must be a positive number"), ("a:1e999,b:1", "must be a positive number"),
    ("a:0.5,b", "a weight or none"), ("a,b,a", "listed twice"),
])
def test_malformed_lists_are_refused(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_models(text)


def test_a_malformed_list_is_a_one_line_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = run_cli(["run", "--model", "base:0.6,lora-a:0", "--requests", "1", "--output", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "the weight of 'lora-a' must be a positive number" in err[0], err
    assert not (tmp_path / "r").exists()


def by_rule(mix: ModelMix, seed: int, index: int) -> str:
    """The documented rule, from numpy itself: u from default_rng([seed, 5_000_011, index]), the first
    model whose cumulative share exceeds u."""
    u = np.random.default_rng([seed, 5_000_011, index]).random()
    edges = np.cumsum(mix.weights) / sum(mix.weights)
    return mix.names[int(np.searchsorted(edges, u, side="right"))]


def test_each_request_model_follows_the_documented_rule() -> None:
    mix = parse_models("base:0.6,lora-a:0.3,lora-b:0.1")
    workload = MixedWorkload(synthetic(seed=11), mix, 11)
    drawn = [workload.item(i).model for i in range(500)]
    expected = [by_rule(mix, 11, i) for i in range(500)]
    assert drawn == expected
    assert Counter(drawn) == Counter(expected) and set(drawn) == set(mix.names)


@pytest.mark.parametrize(("text", "seed"), [("base:0.6,lora-a:0.3,lora-b:0.1", 0), ("a,b,c,d", 7), ("x:9,y:1", 42)])
def test_shares_converge_to_the_weights(text: str, seed: int) -> None:
    mix = parse_models(text)
    n = 8_000
    counts = Counter(mix.draw(seed, i) for i in range(n))
    for name, share in zip(mix.names, mix.shares, strict=True):
        # 4.5 standard deviations of a binomial share: a wrong share (or a biased draw) fails.
        assert abs(counts[name] / n - share) < 4.5 * np.sqrt(share * (1 - share) / n), (name, counts)


def test_a_mix_changes_no_prompt_length_or_tag() -> None:
    plain, mixed = synthetic(seed=5), MixedWorkload(synthetic(seed=5), parse_models("a,b"), 5)
    for i in range(50):
        a, b = plain.item(i), mixed.item(i)
        assert (a.messages, a.max_tokens, a.prompt_tokens_target, a.tags) == (b.messages, b.max_tokens,
                                                                               b.prompt_tokens_target, b.tags)
        assert a.model is None and b.model in ("a", "b")


def test_a_conversation_keeps_one_model_drawn_per_session() -> None:
    sessions = SyntheticSessions(synthetic(seed=2), parse_length("uniform:2:4"), parse_think_time("0"))
    mix = parse_models("a:0.5,b:0.5")
    mixed = MixedSessions(sessions, mix, 2)
    models = [mixed.session(i).model for i in range(200)]
    assert models == [by_rule(mix, 2, i) for i in range(200)]
    assert mixed.session(3).turns == sessions.session(3).turns  # the conversation itself unchanged


def test_a_dataset_row_keeps_its_own_model(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"prompt": "hello there", "model": "lora-z"}) + "\n"
                    + json.dumps({"prompt": "general kenobi"}) + "\n")
    items = load_jsonl(str(path), count_words, {})
    assert [i.model for i in items] == ["lora-z", None]
    mixed = MixedWorkload(DatasetWorkload("jsonl", str(path), items, 1, parse_length("4")), parse_models("a,b"), 1)
    for i in range(20):
        item = mixed.item(i)
        assert item.model == "lora-z" if item.prompt == "hello there" else item.model in ("a", "b")
    path.write_text(json.dumps({"prompt": "x", "model": ""}) + "\n")
    with pytest.raises(ValueError, match=r"rows.jsonl:1: 'model' must be a non-empty string"):
        load_jsonl(str(path), count_words, {})


def test_a_dataset_conversation_keeps_its_own_model(tmp_path: Path) -> None:
    path = tmp_path / "chats.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}], "model": "lora-c"}) + "\n")
    conversations = load_jsonl_conversations(str(path), count_words, {})
    assert conversations[0].model == "lora-c"
    counter = WordCounter()
    sessions = DatasetSessions("jsonl", str(path), conversations, 0, parse_length("2"), parse_think_time("0"),
                               parse_length("4"), counter)
    assert MixedSessions(sessions, parse_models("a,b"), 0).session(0).model == "lora-c"


def test_a_trace_row_keeps_its_own_model(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    rows = [{"timestamp": 200, "input_length": 8, "output_length": 2, "model": "lora-b"},
            {"timestamp": 100, "input_length": 8, "output_length": 2}]  # sorted by time: row 1 comes first
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    trace = load_trace(str(path), "mooncake")
    assert trace.models == (None, "lora-b")
    workload = TraceWorkload(trace, np.arange(2), 0, WordCounter())
    assert [workload.item(i).model for i in range(2)] == [None, "lora-b"]
    path.write_text(json.dumps({"timestamp": 1, "input_length": 8, "output_length": 2, "model": 3}) + "\n")
    with pytest.raises(ValueError, match=r"trace.jsonl:1: 'model' must be a non-empty string"):
        load_trace(str(path), "mooncake")
