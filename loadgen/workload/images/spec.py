"""`--images`, `--image-size`, `--image-format`, `--image-pool`: what images each request carries.

Counts and sizes take the forms of the other distributions, plus a weighted choice (as `--model` mixes do):

- `--images`: `N` (0 = none), `uniform:LO:HI` (whole numbers, both ends included), or a choice
  `0:0.5,1:0.3,4:0.2` (VALUE:WEIGHT, comma-separated; `1,4` weighs them equally).
- `--image-size`: `WxH`, `uniform:WxH:WxH` (width and height each drawn between the two corners), or a
  choice `512x512:0.7,1024x1024:0.3`.

ImageSpec keeps the text as given (run.json, `--print-config`) and checks it on construction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

IMAGE_FORMATS = ("png", "jpeg")
MAX_IMAGES = 64  # per request
MAX_IMAGE_SIDE = 8192  # pixels
MAX_POOL = 100_000
_COUNT_FORMS = "N, uniform:LO:HI or VALUE:WEIGHT,... (e.g. 0:0.5,2:0.5)"
_SIZE_FORMS = "WxH, uniform:WxH:WxH or WxH:WEIGHT,... (e.g. 512x512:0.7,1024x1024:0.3)"


@dataclass(frozen=True, slots=True)
class Choice:
    """A discrete distribution: `values[i]` with probability `weights[i]` (normalised); `uniform` draws
    each coordinate between `values[0]` and `values[1]` instead."""

    values: tuple[tuple[int, ...], ...]
    weights: tuple[float, ...] = ()
    uniform: bool = False

    def sample(self, rng: np.random.Generator) -> tuple[int, ...]:
        if self.uniform:
            lo, hi = self.values
            return tuple(int(rng.integers(a, b, endpoint=True)) for a, b in zip(lo, hi, strict=True))
        if len(self.values) == 1:
            return self.values[0]
        w = np.asarray(self.weights, dtype=np.float64)
        return self.values[int(rng.choice(len(self.values), p=w / w.sum()))]

    @property
    def most(self) -> tuple[int, ...]:
        """The largest value of each coordinate any draw can give."""
        return tuple(max(v[i] for v in self.values) for i in range(len(self.values[0])))


def _parse(text: str, value: type[int] | str, flag: str, forms: str) -> Choice:
    """`N`/`WxH`, `uniform:A:B` or a weighted list; `value` is int (counts) or "size"."""
    def one(part: str) -> tuple[int, ...]:
        if value == "size":
            w, sep, h = part.strip().lower().partition("x")
            if not sep:
                raise ValueError
            return (int(w), int(h))
        return (int(part.strip()),)

    raw = str(text).strip()
    try:
        if raw.startswith("uniform:"):
            lo_text, hi_text = raw.removeprefix("uniform:").split(":")
            lo, hi = one(lo_text), one(hi_text)
            if any(a > b for a, b in zip(lo, hi, strict=True)):
                raise ValueError
            return Choice((lo, hi), uniform=True)
        values, weights = [], []
        for entry in raw.split(","):
            part, sep, weight = entry.partition(":")
            values.append(one(part))
            weights.append(float(weight) if sep else 1.0)
    except ValueError:
        raise ValueError(f"{flag}: bad value {text!r}; use {forms}") from None
    if not all(math.isfinite(w) and w >= 0 for w in weights) or sum(weights) <= 0:
        raise ValueError(f"{flag}: weights in {text!r} must be non-negative with a positive sum")
    return Choice(tuple(values), tuple(weights))


def parse_image_count(text: str) -> Choice:
    """`--images` → a distribution of images per request (0 to MAX_IMAGES)."""
    dist = _parse(text, int, "--images", _COUNT_FORMS)
    if any(not 0 <= v[0] <= MAX_IMAGES for v in dist.values):
        raise ValueError(f"--images: {text!r} is out of range: 0 to {MAX_IMAGES} images per request")
    return dist


def parse_image_size(text: str) -> Choice:
    """`--image-size` → a distribution of (width, height), each side 1 to MAX_IMAGE_SIDE pixels."""
    dist = _parse(text, "size", "--image-size", _SIZE_FORMS)
    if any(not 1 <= side <= MAX_IMAGE_SIDE for v in dist.values for side in v):
        raise ValueError(f"--image-size: {text!r} is out of range: each side 1 to {MAX_IMAGE_SIDE} pixels")
    return dist


@dataclass(frozen=True, slots=True)
class ImageSpec:
    """Synthetic images on every request (`count` "0": none). `pool` K > 0: images are drawn from K
    distinct ones (reuse, which a server's multimodal cache can serve); 0: every image is unique."""

    count: str = "0"
    size: str = "512x512"
    format: str = "png"
    pool: int = 0

    def __post_init__(self) -> None:
        counts = parse_image_count(self.count)
        parse_image_size(self.size)
        if self.format not in IMAGE_FORMATS:
            raise ValueError(f"--image-format must be png or jpeg, got {self.format!r}")
        if not 0 <= self.pool <= MAX_POOL:
            raise ValueError(f"--image-pool must be from 0 to {MAX_POOL:,}, got {self.pool}")
        if self.pool and counts.most == (0,):
            raise ValueError("--image-pool draws the images of --images: it needs --images above 0")

    @property
    def enabled(self) -> bool:
        return parse_image_count(self.count).most != (0,)
