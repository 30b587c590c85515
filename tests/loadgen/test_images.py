"""Synthetic images (`--images`): their options, their bytes (decoded with Pillow), their reuse from a
pool, and how they ride on a request."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from loadgen.spec.sections import WorkloadSpec
from loadgen.types import WorkItem
from loadgen.workload.build import build_workload
from loadgen.workload.images.attach import ImageWorkload, add_pictures
from loadgen.workload.images.spec import ImageSpec, parse_image_count, parse_image_size
from loadgen.workload.images.synth import ImageMaker, Picture
from loadgen.workload.lengths import parse_length


def decode(url: str) -> tuple[str, Image.Image, bytes]:
    head, _, payload = url.partition(",")
    data = base64.b64decode(payload, validate=True)
    image = Image.open(io.BytesIO(data))
    image.load()
    return head, image, data


def image_urls(item: WorkItem) -> list[str]:
    assert item.messages is not None
    return [p["image_url"]["url"] for m in item.messages if isinstance(m["content"], list)
            for p in m["content"] if p["type"] == "image_url"]


@pytest.mark.parametrize(("fmt", "pil_format", "mime"), [("png", "PNG", "image/png"), ("jpeg", "JPEG", "image/jpeg")])
def test_images_decode_to_the_requested_size_and_format(fmt: str, pil_format: str, mime: str) -> None:
    maker = ImageMaker(ImageSpec(count="3", size="96x40", format=fmt), seed=7)
    pictures = maker.pictures(5)
    assert len(pictures) == 3
    for picture in pictures:
        head, image, data = decode(picture.url)
        assert head == f"data:{mime};base64"
        assert image.format == pil_format
        assert image.size == (96, 40)
        assert image.mode == ("P" if fmt == "png" else "RGB")  # a PNG is a palette image: cheaper to encode
        assert picture.pixels == 96 * 40
        assert picture.nbytes == len(data)


def test_one_seed_gives_the_same_bytes_and_items_never_share_an_image() -> None:
    spec = ImageSpec(count="2", size="32x32")
    first = [ImageMaker(spec, seed=3).pictures(i) for i in range(50)]
    again = [ImageMaker(spec, seed=3).pictures(i) for i in reversed(range(50))][::-1]
    assert first == again
    urls = [p.url for pictures in first for p in pictures]
    assert len(set(urls)) == len(urls) == 100  # across items and within one
    other_seed = {p.url for i in range(50) for p in ImageMaker(spec, seed=4).pictures(i)}
    assert not other_seed & set(urls)


def test_tiny_images_still_differ_by_item() -> None:
    """The request's index is written into the pixels: even 4x2 images of 200 requests cannot collide."""
    maker = ImageMaker(ImageSpec(count="1", size="4x2"), seed=0)
    pixels = [decode(maker.pictures(i)[0].url)[1].convert("RGB").tobytes() for i in range(200)]
    assert len(set(pixels)) == 200


def test_count_and_size_distributions_are_followed() -> None:
    maker = ImageMaker(ImageSpec(count="0:1,2:1", size="uniform:16x8:40x24"), seed=1)
    counts = []
    for i in range(200):
        pictures = maker.pictures(i)
        counts.append(len(pictures))
        for p in pictures:
            width, height = decode(p.url)[1].size
            assert 16 <= width <= 40 and 8 <= height <= 24
    assert set(counts) == {0, 2}
    assert 60 < counts.count(0) < 140  # weights 1:1 over 200 draws (binomial sd ~7)


def test_weighted_sizes() -> None:
    maker = ImageMaker(ImageSpec(count="1", size="8x8:3,16x16:1"), seed=2)
    sizes = [decode(maker.pictures(i)[0].url)[1].size for i in range(400)]
    assert set(sizes) == {(8, 8), (16, 16)}
    assert 250 < sizes.count((8, 8)) < 350  # p = 0.75 over 400 draws (sd ~9)


def test_a_pool_reuses_k_distinct_images() -> None:
    maker = ImageMaker(ImageSpec(count="2", size="24x24", pool=3), seed=5)
    urls = [p.url for i in range(60) for p in maker.pictures(i)]
    assert len(set(urls)) == 3
    assert [maker.pooled(s).url for s in range(3)] == [ImageMaker(maker.spec, seed=5).pooled(s).url for s in range(3)]
    fresh = {p.url for i in range(60) for p in ImageMaker(ImageSpec(count="2", size="24x24"), seed=5).pictures(i)}
    assert not fresh & set(urls)  # pool images are not any request's own image


def test_images_ride_after_the_last_user_message_text() -> None:
    item = WorkItem(messages=[{"role": "system", "content": "sys"}, {"role": "user", "content": "look"}],
                    prompt="sys\nlook", prompt_tokens_counted=5)
    pictures = [Picture("data:image/png;base64,AAAA", 100, 3), Picture("https://example.test/cat.jpg", 0, 0)]
    out = add_pictures(item, pictures)
    assert out.messages == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": [{"type": "text", "text": "look"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                                     {"type": "image_url", "image_url": {"url": "https://example.test/cat.jpg"}}]},
    ]
    assert (out.images, out.image_pixels, out.image_bytes) == (2, 100, 3)
    assert item.messages is not None and item.messages[1]["content"] == "look"  # the original is untouched
    assert out.prompt_tokens_counted == 5  # the client counts the text only


def test_the_workload_gives_each_request_its_images_whatever_the_prefetch_did() -> None:
    spec = WorkloadSpec(prompt_tokens=parse_length("16"), images=ImageSpec(count="1:1,2:1", size="20x10", format="jpeg"))
    workload: Any = build_workload(spec, seed=9, embedded=True)
    assert isinstance(workload, ImageWorkload)
    in_order = [workload.item(i) for i in range(30)]
    maker = ImageMaker(spec.images, seed=9)
    for i in (29, 3, 17, 0, 12):  # out of order: the prefetch guesses wrong, the items do not change
        assert image_urls(workload.item(i)) == [p.url for p in maker.pictures(i)] == image_urls(in_order[i])
    for item in in_order:
        assert item.images == len(image_urls(item)) in (1, 2)
        assert item.image_pixels == 200 * item.images
        assert item.prompt_tokens_target == 16
    workload.close()
    assert image_urls(workload.item(4)) == image_urls(in_order[4])  # closed: built in place
    assert workload.describe()["images"] == {"count": "1:1,2:1", "size": "20x10", "format": "jpeg", "pool": 0}


def test_no_images_leaves_the_workload_alone() -> None:
    assert not isinstance(build_workload(WorkloadSpec(), seed=0, embedded=True), ImageWorkload)


@pytest.mark.parametrize(("text", "expected"), [
    ("0", ((0,),)), ("4", ((4,),)), ("1,3", ((1,), (3,))), ("0:0.5,2:0.5", ((0,), (2,))),
])
def test_count_forms(text: str, expected: tuple[tuple[int, ...], ...]) -> None:
    assert parse_image_count(text).values == expected


@pytest.mark.parametrize(("text", "message"), [
    ("x", "--images: bad value 'x'; use N, uniform:LO:HI or VALUE:WEIGHT"),
    ("-1", "--images: '-1' is out of range: 0 to 64"),
    ("65", "out of range"),
    ("uniform:3:1", "bad value"),
    ("1:-1,2:1", "weights in '1:-1,2:1' must be non-negative"),
    ("1:0", "positive sum"),
    ("1:nan", "non-negative"),
])
def test_bad_counts(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_image_count(text)
    assert message in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(("text", "message"), [
    ("512", "--image-size: bad value '512'; use WxH"),
    ("0x10", "out of range: each side 1 to 8192"),
    ("10x9000", "out of range"),
    ("uniform:64x64:32x32", "bad value"),
    ("axb", "bad value"),
])
def test_bad_sizes(text: str, message: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_image_size(text)
    assert message in str(info.value)


def test_size_forms() -> None:
    assert parse_image_size("1024x768").values == ((1024, 768),)
    assert parse_image_size("512X512:0.7,1024x1024:0.3").weights == (0.7, 0.3)
    uniform = parse_image_size("uniform:256x128:1024x512")
    assert uniform.uniform and uniform.values == ((256, 128), (1024, 512))


def test_a_lost_request_is_accounted_without_making_its_images() -> None:
    spec = WorkloadSpec(prompt_tokens=parse_length("8"), images=ImageSpec(count="2", size="16x16"))
    workload: Any = build_workload(spec, seed=1, embedded=True)
    made: list[int] = []
    workload.maker = _Counting(workload.maker, made)
    item = workload.text_item(500)
    assert item.images == 0 and item.prompt_tokens_target == 8 and made == []
    assert workload.item(501).images == 2 and 501 in made


class _Counting:
    def __init__(self, maker: ImageMaker, made: list[int]) -> None:
        self.maker, self.made, self.spec = maker, made, maker.spec

    def pictures(self, index: int) -> list[Picture]:
        self.made.append(index)
        return self.maker.pictures(index)


def test_the_image_options_survive_print_config_and_run_json() -> None:
    from loadgen.cli.run import run_defaults
    from loadgen.spec.build import build_spec, spec_values
    from loadgen.spec.run_spec import RunSpec

    values = {**run_defaults(), "images": "0:0.5,2:0.5", "image_size": "uniform:64x48:128x96",
              "image_format": "JPEG", "image_pool": 5}
    spec = build_spec(values)[0]
    assert spec.workload.images == ImageSpec(count="0:0.5,2:0.5", size="uniform:64x48:128x96", format="jpeg", pool=5)
    assert build_spec({**run_defaults(), **spec_values(spec)})[0] == spec
    assert RunSpec.from_json(spec.to_json()) == spec
    assert RunSpec.from_json({"workload": {}}).workload.images == ImageSpec()  # a run.json from before images


def test_a_worker_process_gets_the_workload_pickled_and_makes_the_same_images() -> None:
    import pickle

    spec = WorkloadSpec(prompt_tokens=parse_length("8"), images=ImageSpec(count="1:1,3:1", size="12x12", pool=0))
    workload: Any = build_workload(spec, seed=4, embedded=True)
    clone = pickle.loads(pickle.dumps(workload))  # what loadgen.workers sends each worker process
    clone.prime([5, 9, 13])  # a worker's first requests (loadgen.workers.core)
    for i in (5, 9, 13, 2):
        assert clone.item(i) == workload.item(i)
    clone.close()
    workload.close()


def test_a_model_mix_with_images_keeps_the_image_prefetch_and_names_each_model() -> None:
    """The mix goes inside the image wrapper: the workers' priming and the lost-request path (found by
    `hasattr` on the outer workload) still reach the image maker, and every request names its model."""
    from loadgen.workload.models import parse_models

    spec = WorkloadSpec(prompt_tokens=parse_length("16"), images=ImageSpec(count="1", size="8x8", format="png"))
    mix = parse_models("a,b")
    workload: Any = build_workload(spec, seed=3, embedded=True, models=mix)
    assert isinstance(workload, ImageWorkload) and hasattr(workload, "prime") and hasattr(workload, "text_item")
    items = [workload.item(i) for i in range(20)]
    assert [item.model for item in items] == [mix.draw(3, i) for i in range(20)]
    assert {item.model for item in items} == {"a", "b"} and all(item.images == 1 for item in items)
    assert workload.text_item(5).model == items[5].model and workload.text_item(5).images == 0
    workload.close()
