"""Images a dataset's rows carry: a JSONL row's `images` (a list) or `image` (one, or a list), the
`image_url` content parts of its messages (OpenAI's form), and a ShareGPT entry's `image` (LLaVA-style data: the human turn's `<image>` placeholders are removed from the
text; the images go after it).

Each reference is one of:
- an `http://` or `https://` URL: passed through as the `image_url` (the server fetches it; goodput
  does not, so its pixels and bytes are recorded as 0);
- a `data:image/...;base64,` URL: sent as it is (decoded once, to check it and count its pixels);
- a path, relative to the dataset file's folder: read once when the dataset is loaded and sent inline
  as a data URL. A path must stay inside that folder once resolved (no `..` out of it, no absolute path,
  no symbolic link that leads out): a dataset file names only its own images, never another file of
  the machine running the test.
A reference that is missing, unreadable or not an image is refused before anything is sent, with the
row's file and line.
"""

from __future__ import annotations

import base64
import binascii
import io
from pathlib import Path
from typing import Any

from loadgen.quoting import printable, quoted
from loadgen.types import ContentPart, Message
from loadgen.workload.images.synth import Picture, data_url

IMAGE_PLACEHOLDER = "<image>"


def row_references(value: object, where: str) -> list[str]:
    """The image references of a row: its `images` or `image` (`value`), a string or a list of strings."""
    if value is None:
        return []
    refs = [value] if isinstance(value, str) else value
    if not isinstance(refs, list) or not all(isinstance(r, str) and r.strip() for r in refs):
        raise ValueError(f"{where}: 'images' must be a list of paths or URLs (or 'image' one of them)")
    return [r.strip() for r in refs]


def resolve_parts(messages: list[Message], files: ImageFiles, where: str) -> tuple[list[Message], list[Picture]]:
    """A row's messages with the URL of each `image_url` content part it already holds resolved as a
    reference (a path becomes a data URL), and the images they carry."""
    pictures: list[Picture] = []
    out = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append(message)
            continue
        parts: list[ContentPart] = []
        for part in content:
            if part["type"] != "image_url":
                parts.append(part)
                continue
            value = part.get("image_url", "")
            url = value if isinstance(value, str) else value["url"]
            picture = files.picture(url.strip(), where)
            pictures.append(picture)
            parts.append({**part, "image_url": {"url": picture.url} if isinstance(value, str) else {**value, "url": picture.url}})
        out.append({**message, "content": parts})
    return out, pictures


class ImageFiles:
    """Resolves a dataset's image references (each file read once)."""

    def __init__(self, dataset: str) -> None:
        self.root = Path(dataset).resolve().parent
        self._cache: dict[str, Picture] = {}

    def pictures(self, refs: list[str], where: str) -> list[Picture]:
        return [self.picture(ref, where) for ref in refs]

    def picture(self, ref: str, where: str) -> Picture:
        cached = self._cache.get(ref)
        if cached is None:
            cached = self._cache[ref] = self._load(ref, f"{where}: image {quoted(ref)}")
        return cached

    def _load(self, ref: str, where: str) -> Picture:
        lower = ref[:16].lower()
        if lower.startswith(("http://", "https://")):
            return Picture(ref, 0, 0)
        if lower.startswith("data:"):
            head, sep, payload = ref.partition(",")
            if not sep or not head.lower().startswith("data:image/") or not head.lower().endswith(";base64"):
                raise ValueError(f"{where}: a data URL must be data:image/...;base64,...")
            try:
                data = base64.b64decode(payload, validate=True)
            except (binascii.Error, ValueError):
                raise ValueError(f"{where}: the data URL is not valid base64") from None
            width, height, _ = _inspect(data, where)
            return Picture(ref, width * height, len(data))
        path = self._resolve(ref, where)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ValueError(f"{where}: cannot read it ({exc.strerror or exc})") from None
        width, height, mime = _inspect(data, where)
        return Picture(data_url(data, mime), width * height, len(data))

    def _resolve(self, ref: str, where: str) -> Path:
        given = Path(ref)
        if given.is_absolute():
            raise ValueError(f"{where}: give paths relative to the dataset file's folder, not absolute ones")
        path = (self.root / given).resolve()
        if not path.is_relative_to(self.root):
            raise ValueError(f"{where}: the path leads out of the dataset file's folder {printable(str(self.root))}")
        if not path.is_file():
            raise ValueError(f"{where}: no such file in {printable(str(self.root))}")
        return path


def _inspect(data: bytes, where: str) -> tuple[int, int, str]:
    """(width, height, MIME type) of encoded image bytes; ValueError when Pillow cannot read them."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            width, height = image.size
            mime = Image.MIME.get(image.format or "", "")
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ValueError(f"{where}: not an image Pillow can read ({printable(str(exc))})") from None
    if not mime.startswith("image/"):
        raise ValueError(f"{where}: not an image Pillow can read (format {image.format})")
    return width, height, mime


def strip_placeholders(text: str) -> str:
    """A LLaVA-style prompt without its `<image>` placeholders (the images are sent as parts)."""
    return text.replace(IMAGE_PLACEHOLDER, "").strip() if IMAGE_PLACEHOLDER in text else text


def check_endpoint(workload: Any, endpoint: str) -> None:
    """ValueError when a dataset's rows carry images and the endpoint is completions (a text prompt: the
    images would be left out without a word)."""
    while not hasattr(workload, "entries") and hasattr(workload, "inner"):
        workload = workload.inner
    entries = getattr(workload, "entries", None)
    if endpoint != "completions" or not entries:
        return
    rows = sum(1 for item in entries if item.images)
    if rows:
        raise ValueError(f"{printable(workload.path, 1000)}: {rows} requests carry images, which need a chat endpoint"
                         " (a completions prompt is text only)")
