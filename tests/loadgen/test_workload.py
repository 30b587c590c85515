from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from loadgen.workload.lengths import parse_length
from loadgen.workload.sources import DatasetWorkload, SyntheticWorkload, load_jsonl, load_sharegpt
from loadgen.workload.text import count_bytes, count_words, text_of_tokens


def synthetic(**kw: object) -> SyntheticWorkload:
    args: dict[str, object] = {"prompt": parse_length("100"), "output": parse_length("20"), "seed": 3,
                               "counter_name": "words", "counter": count_words}
    args.update(kw)
    return SyntheticWorkload(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(("spec", "lo", "hi"), [("7", 7, 7), ("uniform:5:9", 5, 9), ("normal:50:5", 20, 80),
                                                ("lognormal:100:0.3", 20, 500)])
def test_length_distributions(spec: str, lo: int, hi: int) -> None:
    draws = parse_length(spec).sample(2000, np.random.default_rng(0))
    assert draws.min() >= lo and draws.max() <= hi and draws.dtype == np.int64
    if spec.startswith("uniform"):
        assert set(draws.tolist()) == {5, 6, 7, 8, 9}
    if spec.startswith("lognormal"):
        assert np.median(draws) == pytest.approx(100, rel=0.05)


@pytest.mark.parametrize("spec", ["7", "1", "uniform:5:9", "normal:50:5", "normal:1:3", "lognormal:100:0.3"])
def test_sample_one_draws_what_sample_draws(spec: str) -> None:
    dist = parse_length(spec)
    for seed in range(50):
        one, many = np.random.default_rng(seed), np.random.default_rng(seed)
        assert dist.sample_one(one) == int(dist.sample(1, many)[0])
        assert one.random() == many.random()  # the generator left in the same state


@pytest.mark.parametrize("spec", ["0", "-3", "1.5", "uniform:9:5", "poisson:4:1", "normal:5", "abc", "uniform:a:b"])
def test_bad_lengths(spec: str) -> None:
    with pytest.raises(ValueError):
        parse_length(spec)


@pytest.mark.parametrize("target", [1, 7, 128, 1000])
def test_text_hits_target_for_words_and_bytes(target: int) -> None:
    rng = np.random.default_rng(target)
    assert count_words(text_of_tokens(target, rng, "words", count_words)) == target
    assert count_bytes(text_of_tokens(target, rng, "bytes", count_bytes)) == target


def test_synthetic_items_are_reproducible_and_distinct() -> None:
    w = synthetic()
    a, b = w.item(0), w.item(1)
    assert a == synthetic().item(0)
    assert a.messages != b.messages
    assert a.max_tokens == 20 and a.prompt_tokens_target == 100
    assert a.messages is not None and count_words(a.messages[-1]["content"]) == 100


def test_shared_prefix_groups() -> None:
    w = synthetic(prefix_groups=3, prefix_tokens=40, prefix_weights=[1.0, 0.0, 1.0])
    items = [w.item(i) for i in range(60)]
    groups = {it.tags["prefix_group"] for it in items}
    assert groups == {"0", "2"}  # weight 0 never drawn
    same = [it for it in items if it.tags["prefix_group"] == "0"]
    assert same[0].messages is not None and same[1].messages is not None
    assert same[0].messages[0] == same[1].messages[0]  # the common system prompt
    assert same[0].messages[1] != same[1].messages[1]
    assert all(it.prompt_tokens_target == 140 for it in items)


def test_prefix_weights_must_match_groups() -> None:
    with pytest.raises(ValueError, match="--prefix-weights needs 2"):
        synthetic(prefix_groups=2, prefix_tokens=4, prefix_weights=[1.0])


def test_jsonl_dataset(tmp_path: Path) -> None:
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "one two three"}], "max_tokens": 5,
                             "tags": {"scenario": "chat"}}) + "\n\n" + json.dumps({"prompt": "four five"}) + "\n")
    items = load_jsonl(str(p), count_words, {"tenant": "a"})
    assert [i.prompt_tokens_counted for i in items] == [3, 2] and {i.prompt_tokens_target for i in items} == {None}
    assert items[0].tags == {"tenant": "a", "scenario": "chat"} and items[1].max_tokens is None
    w = DatasetWorkload("jsonl", str(p), items, seed=0, default_output=parse_length("9"))
    drawn = [w.item(i) for i in range(4)]
    assert sorted(d.max_tokens or 0 for d in drawn) == [5, 5, 9, 9]  # wraps around the file


@pytest.mark.parametrize(("line", "msg"), [("{not json", "invalid JSON"), ("[1]", "JSON object"),
                                           ('{"messages": []}', "messages"),
                                           ('{"prompt": "x", "max_tokens": 0}', "max_tokens")])
def test_bad_jsonl_names_the_line(tmp_path: Path, line: str, msg: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"prompt": "ok"}\n' + line + "\n")
    with pytest.raises(ValueError, match=f"bad.jsonl:2: .*{msg}"):
        load_jsonl(str(p), count_words, {})


def test_sharegpt(tmp_path: Path) -> None:
    data = [
        {"conversations": [{"from": "human", "value": "a b c"}, {"from": "gpt", "value": "d e f g"}]},
        {"conversations": [{"from": "gpt", "value": "no human"}]},
        {"conversations": [{"from": "system", "value": "s"}, {"from": "human", "value": "x y"},
                           {"from": "gpt", "value": "z"}]},
        {"id": "no conversations"},
    ]
    p = tmp_path / "sg.json"
    p.write_text(json.dumps(data))
    items = load_sharegpt(str(p), count_words, {})
    assert [(i.prompt_tokens_counted, i.max_tokens) for i in items] == [(3, 4), (2, 1)]
    assert {i.prompt_tokens_target for i in items} == {None}  # a dataset has no target length


def test_unreadable_dataset(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot read dataset"):
        load_jsonl(str(tmp_path / "missing.jsonl"), count_words, {})
    with pytest.raises(ValueError, match="no usable requests"):
        DatasetWorkload("jsonl", "x", [], seed=0, default_output=parse_length("1"))
