"""Synthetic images, made from the run's seed and the request: the same seed gives the same bytes.

An image is a grid of seeded random colour blocks (at most 32 × 32 blocks, scaled up without smoothing:
cheap to make and to encode, and as costly for a server's vision encoder as a photo of its size). Its
identity (the request's index and the image's place in it, or its slot in `--image-pool`) is written into
the first block values, so two requests never carry the same image by accident: PNG keeps them exactly,
and JPEG's quantisation leaves blocks of one colour near their value. A PNG of fewer than 8 pixels (a
JPEG of fewer than 3) has room for only part of it.

Encoding happens in Pillow's C code, which lets go of the GIL: `attach.ImageWorkload` builds images in a
thread ahead of the schedule.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field

import numpy as np

from loadgen.seeds import item_rng
from loadgen.workload.images.spec import Choice, ImageSpec, parse_image_count, parse_image_size

GRID = 32  # blocks per side, at most
JPEG_QUALITY = 90
MIME = {"png": "image/png", "jpeg": "image/jpeg"}
# Streams of item_rng words, apart from a request's own (seed, index) stream.
_DRAW_STREAM = 2_000_003  # how many images a request has, their sizes, their pool slots
_PIXEL_STREAM = 2_000_029  # one unique image's pixels
_POOL_STREAM = 2_000_039  # one pool slot's size and pixels
_POOL_BIT = 1 << 63  # identities of pool images, apart from those of unique ones


@dataclass(frozen=True, slots=True)
class Picture:
    """One image as sent: its `image_url` URL (a data URL, or a URL passed through), its pixels
    (width × height; 0 when unknown) and its encoded bytes (0 for a URL that is not fetched)."""

    url: str
    pixels: int
    nbytes: int


def encode_image(width: int, height: int, fmt: str, rng: np.random.Generator, identity: int) -> bytes:
    """The encoded bytes of one synthetic image.

    A PNG is a palette image (one byte per pixel, which Pillow stores without per-row filtering: ~3x
    faster to encode than RGB); its palette's red channel is the entry's index, so different block
    values are different colours. A JPEG is an RGB image (JPEG has no palettes)."""
    from PIL import Image

    grid_w, grid_h = min(GRID, width), min(GRID, height)
    channels = 1 if fmt == "png" else 3
    grid = rng.integers(0, 256, size=grid_h * grid_w * channels, dtype=np.uint8)
    stamp = np.frombuffer(identity.to_bytes(8, "little"), dtype=np.uint8)[: grid.size]
    grid[: stamp.size] = stamp
    if fmt == "png":
        small = Image.frombytes("P", (grid_w, grid_h), grid.tobytes())
        palette = rng.integers(0, 256, size=(256, 3), dtype=np.uint8)
        palette[:, 0] = np.arange(256, dtype=np.uint8)
        small.putpalette(palette.tobytes())
    else:
        small = Image.frombytes("RGB", (grid_w, grid_h), grid.tobytes())
    image = small.resize((width, height), Image.Resampling.NEAREST)
    out = io.BytesIO()
    if fmt == "png":
        image.save(out, "PNG", compress_level=1)
    else:
        image.save(out, "JPEG", quality=JPEG_QUALITY)
    return out.getvalue()


def data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


@dataclass(slots=True)
class ImageMaker:
    """The images of request `index` (`pictures`), a pure function of (spec, seed, index)."""

    spec: ImageSpec
    seed: int
    _pool: dict[int, Picture] = field(default_factory=dict)
    _counts: Choice = field(init=False)
    _sizes: Choice = field(init=False)

    def __post_init__(self) -> None:
        self._counts = parse_image_count(self.spec.count)
        self._sizes = parse_image_size(self.spec.size)

    def pictures(self, index: int) -> list[Picture]:
        rng = item_rng(self.seed, _DRAW_STREAM, index)
        n = self._counts.sample(rng)[0]
        out = []
        for k in range(n):
            if self.spec.pool:
                out.append(self.pooled(int(rng.integers(self.spec.pool))))
                continue
            width, height = self._sizes.sample(rng)
            pixels = item_rng(self.seed, _PIXEL_STREAM, index, k)
            out.append(self._picture(width, height, pixels, index * 128 + k + 1))
        return out

    def warm(self) -> None:
        """Load Pillow and its encoder for this format (its first use costs ~0.1 s)."""
        encode_image(1, 1, self.spec.format, np.random.default_rng(0), 0)

    def pooled(self, slot: int) -> Picture:
        """Pool slot `slot`'s image (made once; its size drawn from the slot's own generator)."""
        picture = self._pool.get(slot)
        if picture is None:
            rng = item_rng(self.seed, _POOL_STREAM, slot)
            width, height = self._sizes.sample(rng)
            picture = self._picture(width, height, rng, _POOL_BIT | slot)
            self._pool[slot] = picture
        return picture

    def _picture(self, width: int, height: int, rng: np.random.Generator, identity: int) -> Picture:
        data = encode_image(width, height, self.spec.format, rng, identity)
        return Picture(data_url(data, MIME[self.spec.format]), width * height, len(data))
