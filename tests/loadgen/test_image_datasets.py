"""Images a dataset carries: JSONL rows' `images`/`image` (paths inside the dataset's folder, URLs passed
through, data URLs), LLaVA-style ShareGPT entries, and the one-line errors for images that cannot be sent."""

from __future__ import annotations

import base64
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from loadgen.workload.counters import make_counter
from loadgen.workload.sources import load_jsonl, load_sharegpt


def png(path: Path, size: tuple[int, int], colour: tuple[int, int, int] = (10, 200, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, colour).save(buffer, "PNG")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())
    return buffer.getvalue()


def jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def parts(item: Any) -> list[dict[str, Any]]:
    content = item.messages[-1]["content"]
    assert isinstance(content, list)
    return list(content)


COUNTER = make_counter("words")[1]


def test_jsonl_rows_carry_paths_urls_and_data_urls(tmp_path: Path) -> None:
    data = png(tmp_path / "img" / "a.png", (30, 20))
    inline = "data:image/png;base64," + base64.b64encode(data).decode()
    path = jsonl(tmp_path / "d.jsonl", [
        {"prompt": "what is this", "images": ["img/a.png", "https://example.test/b.jpg"]},
        {"messages": [{"role": "user", "content": "and this"}], "image": inline},
        {"prompt": "no image"},
    ])
    first, second, third = load_jsonl(path, COUNTER, {})
    assert parts(first) == [
        {"type": "text", "text": "what is this"},
        {"type": "image_url", "image_url": {"url": inline}},  # the file, inline
        {"type": "image_url", "image_url": {"url": "https://example.test/b.jpg"}},  # passed through, not fetched
    ]
    assert (first.images, first.image_pixels, first.image_bytes) == (2, 600, len(data))
    assert first.prompt_tokens_counted == 3  # the text alone
    assert parts(second)[1] == {"type": "image_url", "image_url": {"url": inline}}
    assert (second.images, second.image_pixels, second.image_bytes) == (1, 600, len(data))
    assert third.images == 0 and third.messages == [{"role": "user", "content": "no image"}]


def test_sharegpt_image_entries_lose_their_placeholder(tmp_path: Path) -> None:
    png(tmp_path / "coco" / "1.png", (8, 8))
    path = tmp_path / "llava.json"
    path.write_text(json.dumps([
        {"id": "1", "image": "coco/1.png", "conversations": [
            {"from": "human", "value": "<image>\nWhat is in the picture?"}, {"from": "gpt", "value": "A square."}]},
        {"id": "2", "conversations": [{"from": "human", "value": "Text <image> only"}, {"from": "gpt", "value": "ok"}]},
    ]))
    with_image, text_only = load_sharegpt(str(path), COUNTER, {})
    content = parts(with_image)
    assert content[0] == {"type": "text", "text": "What is in the picture?"}
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert (with_image.images, with_image.image_pixels) == (1, 64)
    assert text_only.messages == [{"role": "user", "content": "Text <image> only"}]  # no image: left as written


@pytest.mark.parametrize(("ref", "make", "message"), [
    ("img/missing.png", None, "image 'img/missing.png': no such file in"),
    ("../outside.png", "outside", "the path leads out of the dataset file's folder"),
    ("/etc/hostname", None, "give paths relative to the dataset file's folder, not absolute ones"),
    ("img/notes.png", "text", "not an image Pillow can read"),
    ("data:image/png;base64,@@@", None, "the data URL is not valid base64"),
    ("data:text/plain;base64,aGk=", None, "a data URL must be data:image/...;base64,..."),
    ("img/link.png", "link", "the path leads out of the dataset file's folder"),
])
def test_images_that_cannot_be_sent_are_one_line_errors_naming_the_row(
        tmp_path: Path, ref: str, make: str | None, message: str) -> None:
    root = tmp_path / "data"
    (root / "img").mkdir(parents=True)
    if make == "outside":
        png(tmp_path / "outside.png", (4, 4))
    elif make == "text":
        (root / "img" / "notes.png").write_text("not a picture")
    elif make == "link":
        png(tmp_path / "secret.png", (4, 4))
        os.symlink(tmp_path / "secret.png", root / "img" / "link.png")
    path = jsonl(root / "d.jsonl", [{"prompt": "ok"}, {"prompt": "look", "images": [ref]}])
    with pytest.raises(ValueError) as info:
        load_jsonl(path, COUNTER, {})
    text = str(info.value)
    assert text.startswith(f"{path}:2: image ")
    assert message in text
    assert "\n" not in text


def test_images_must_be_strings(tmp_path: Path) -> None:
    path = jsonl(tmp_path / "d.jsonl", [{"prompt": "look", "images": [3]}])
    with pytest.raises(ValueError, match=r"d.jsonl:1: 'images' must be a list of paths or URLs"):
        load_jsonl(path, COUNTER, {})


def test_one_file_is_read_once_for_every_row_naming_it(tmp_path: Path) -> None:
    png(tmp_path / "a.png", (5, 5))
    path = jsonl(tmp_path / "d.jsonl", [{"prompt": f"q{i}", "images": ["a.png", "./a.png"]} for i in range(3)])
    items = load_jsonl(path, COUNTER, {})
    urls = {p["image_url"]["url"] for item in items for p in parts(item) if p["type"] == "image_url"}
    assert len(urls) == 1
    assert all(item.images == 2 and item.image_pixels == 50 for item in items)


def test_conversations_refuse_rows_with_images_rather_than_drop_them(tmp_path: Path) -> None:
    from loadgen.workload.conversations import load_jsonl_conversations, load_sharegpt_conversations

    path = jsonl(tmp_path / "c.jsonl", [{"messages": [{"role": "user", "content": "a"}]},
                                        {"messages": [{"role": "user", "content": "b"}], "images": ["x.png"]}])
    with pytest.raises(ValueError, match=r"c.jsonl:2: images in conversations \(--turns\) are not supported"):
        load_jsonl_conversations(path, COUNTER, {})
    sharegpt = tmp_path / "s.json"
    sharegpt.write_text(json.dumps([{"image": "x.png", "conversations": [{"from": "human", "value": "<image> hi"}]}]))
    with pytest.raises(ValueError, match=r"s.json: conversation 1: images in conversations"):
        load_sharegpt_conversations(str(sharegpt), COUNTER, {})


def test_image_parts_already_in_a_rows_messages_are_resolved_and_counted(tmp_path: Path) -> None:
    data = png(tmp_path / "p.png", (6, 7))
    messages = [{"role": "user", "content": [{"type": "text", "text": "compare"},
                                             {"type": "image_url", "image_url": {"url": "p.png", "detail": "low"}},
                                             {"type": "image_url", "image_url": "https://example.test/q.png"}]}]
    path = jsonl(tmp_path / "d.jsonl", [{"messages": messages}, {"messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "../p.png"}}]}]}])
    with pytest.raises(ValueError, match=r"d.jsonl:2: image '../p.png': the path leads out"):
        load_jsonl(path, COUNTER, {})
    path = jsonl(tmp_path / "d.jsonl", [{"messages": messages}])
    (item,) = load_jsonl(path, COUNTER, {})
    content = parts(item)
    assert content[1] == {"type": "image_url", "image_url": {
        "url": "data:image/png;base64," + base64.b64encode(data).decode(), "detail": "low"}}
    assert content[2] == {"type": "image_url", "image_url": {"url": "https://example.test/q.png"}}
    assert (item.images, item.image_pixels, item.image_bytes) == (2, 42, len(data))
    assert item.prompt == "compare" and item.prompt_tokens_counted == 1  # the text parts only
