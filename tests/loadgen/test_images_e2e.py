"""`goodput run --images` end to end against the reference server (sim engine): each request carries its
seeded images, its record their totals, its prompt tokens the server's count with the image tokens in it,
and the summary an `images` bucket dimension."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadgen.cli import run_cli
from refserver.api.images import IMAGE_TOKENS

TEMPLATE_TOKENS = 3  # the reference server's byte chat template around one user message


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    from loadgen.run.embedded import embedded_server

    with embedded_server(["--engine=sim"]) as url:
        yield url


def _run(server: str, out: Path, capsys: pytest.CaptureFixture[str], *extra: str
         ) -> tuple[dict[str, Any], list[dict[str, Any]], str]:
    code = run_cli(["run", "--url", server, "--requests", "8", "--rate", "40", "--prompt-tokens", "32",
                    "--output-tokens", "4", "--tokenizer", "bytes", "--ignore-eos", "--quiet", "--no-html",
                    "--server-metrics", "none", "--seed", "11", *extra, "--output", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    records = sorted((json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()),
                     key=lambda r: r["id"])
    return json.loads((out / "summary.json").read_text()), records, err


def test_a_run_with_images(server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ("--images", "0:1,2:1", "--image-size", "48x32", "--image-format", "jpeg")
    summary, records, err = _run(server, tmp_path / "a", capsys, *args)
    assert all(r["status"] == "ok" for r in records)
    counts = [r["images"] for r in records]
    assert set(counts) == {0, 2}
    for r in records:
        assert r["image_pixels"] == r["images"] * 48 * 32
        assert (r["image_bytes"] > 0) == (r["images"] > 0)
        assert r["prompt_tokens"] == r["prompt_tokens_target"] + TEMPLATE_TOKENS + IMAGE_TOKENS * r["images"]
        assert r["prompt_tokens_estimated"] is False
    buckets = {b["label"]: b["measured"] for b in summary["buckets"] if b["dimension"] == "images"}
    assert buckets == {"0": counts.count(0), "2": counts.count(2)}
    assert summary["tokens"]["prompt_accuracy"]["image_requests"] == counts.count(2)
    assert summary["tokens"]["prompt_accuracy"]["count"] == counts.count(0)
    assert "prompts missed their target length" not in err
    run = json.loads((tmp_path / "a" / "run.json").read_text())
    assert run["spec"]["workload"]["images"] == {"count": "0:1,2:1", "size": "48x32", "format": "jpeg", "pool": 0}

    _, again, _ = _run(server, tmp_path / "b", capsys, *args)  # one seed: the same images, byte for byte sizes
    assert [(r["images"], r["image_bytes"]) for r in again] == [(r["images"], r["image_bytes"]) for r in records]


@pytest.mark.parametrize(("args", "message"), [
    (["--images", "2", "--endpoint", "completions"], "--images needs a chat endpoint"),
    (["--images", "two"], "--images: bad value 'two'"),
    (["--images", "1", "--image-format", "gif"], "--image-format must be png or jpeg"),
    (["--image-pool", "4"], "--image-pool draws the images of --images"),
])
def test_bad_image_options_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                            message: str) -> None:
    code = run_cli(["run", "--url", "http://127.0.0.1:9", *args, "--output", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert not (tmp_path / "r" / "records.jsonl").exists()


def test_dataset_images_on_the_completions_endpoint_are_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4)).save(buffer, "PNG")
    (tmp_path / "a.png").write_bytes(buffer.getvalue())
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"prompt": "look", "images": ["a.png"]}) + "\n" + json.dumps({"prompt": "hi"}) + "\n")
    code = run_cli(["run", "--url", "http://127.0.0.1:9", "--endpoint", "completions", "--dataset", str(data),
                    "--output", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{data}: 1 requests carry images, which need a chat endpoint" in err
