"""Images on a request: chat content parts on its last user message, and their totals on the WorkItem.

`ImageWorkload` wraps a workload of single requests with `--images`. The runner builds each request
before its send instant (loadgen.dispatch.runner: in a batch ahead of the wait), so images never cost time
between a wake-up and its send; building them still takes the event loop's thread, where streams are
read. So the images of the next PREFETCH requests are made in a background thread while the loop waits
(Pillow encodes without holding the GIL): by the time request i is prepared, its images are usually
ready (the first PREFETCH are made while the run starts). What a request carries does not depend on the
prefetch (it is a pure function of the seed and the index); a request the prefetch did not foresee is built
in place.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import replace
from typing import Any, TypedDict

from loadgen.types import ContentPart, Message, WorkItem, WorkloadDescription
from loadgen.workload.images.synth import ImageMaker, Picture

PREFETCH = 8  # requests whose images are made ahead
THREADS = 2  # threads that make them (Pillow encodes without the GIL: two encode at once on two cores)


def image_part(picture: Picture) -> ContentPart:
    return {"type": "image_url", "image_url": {"url": picture.url}}


def with_pictures(messages: list[Message], pictures: list[Picture]) -> list[Message]:
    """`messages` with the images as content parts after the last user message's text (a user message
    of images alone is added when there is none). The messages given are not changed."""
    if not pictures:
        return messages
    parts = [image_part(p) for p in pictures]
    last = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "user"), None)
    if last is None:
        return [*messages, {"role": "user", "content": parts}]
    content = messages[last].get("content")
    if isinstance(content, list):
        message: Message = {**messages[last], "content": [*content, *parts]}
    else:
        text = content if isinstance(content, str) else ""
        message = {**messages[last], "content": [{"type": "text", "text": text}, *parts]}
    return [*messages[:last], message, *messages[last + 1:]]


def add_pictures(item: WorkItem, pictures: list[Picture]) -> WorkItem:
    """`item` with `pictures` attached and counted in its image totals."""
    if not pictures:
        return item
    messages: list[Message] = item.messages if item.messages else [{"role": "user", "content": item.prompt or ""}]
    return replace(item, messages=with_pictures(messages, pictures), images=item.images + len(pictures),
                   image_pixels=item.image_pixels + sum(p.pixels for p in pictures),
                   image_bytes=item.image_bytes + sum(p.nbytes for p in pictures))


class _State(TypedDict):
    """What a pickled ImageWorkload carries (a worker process's copy)."""

    inner: Any  # as ImageWorkload holds it: loadgen.workload.sources.Workload
    maker: ImageMaker


class ImageWorkload:
    """Any workload of single requests, with synthetic images on each (`--images`)."""

    def __init__(self, inner: Any, maker: ImageMaker) -> None:
        self.inner = inner  # loadgen.workload.sources.Workload
        self.maker = maker
        self._start()
        self.prime(range(PREFETCH))  # the first requests' images are made while the run starts

    def _start(self) -> None:
        self._pending: dict[int, Future[list[Picture]]] = {}
        self._last: int | None = None
        self._lock = threading.Lock()
        # Pillow's import and its first encode load its plugins (~0.1 s): done now, not on the way to a send.
        self.maker.warm()
        self._executor: ThreadPoolExecutor | None = ThreadPoolExecutor(max_workers=THREADS,
                                                                       thread_name_prefix="goodput-images")

    def __getstate__(self) -> _State:
        """A worker process gets the workload pickled: the threads and what they hold stay here."""
        return {"inner": self.inner, "maker": self.maker}

    def __setstate__(self, state: _State) -> None:
        self.inner, self.maker = state["inner"], state["maker"]
        self._start()  # a worker primes its own first requests (`prime`): they are not 0, 1, 2, ...

    def prime(self, indices: Iterable[int]) -> None:
        """Start making these requests' images now (the first ones a dispatcher will ask for)."""
        with self._lock:
            if self._executor is None:
                return
            for index in indices:
                if index not in self._pending:
                    self._pending[index] = self._executor.submit(self.maker.pictures, index)

    def item(self, index: int) -> WorkItem:
        pictures = self._take(index)
        return add_pictures(self.inner.item(index), pictures)

    def text_item(self, index: int) -> WorkItem:
        """Request `index` without its images (what a lost request's record needs: tags and targets)."""
        item: WorkItem = self.inner.item(index)
        return item

    def _take(self, index: int) -> list[Picture]:
        step = index - self._last if self._last is not None and index > self._last else 1
        self._last = index
        with self._lock:
            future = self._pending.pop(index, None)
            for stale in [i for i in self._pending if i < index]:
                self._pending.pop(stale).cancel()
            if self._executor is None:  # closed
                return future.result() if future is not None else self.maker.pictures(index)
            for ahead in range(index + step, index + step * (PREFETCH + 1), step):
                if ahead not in self._pending:
                    self._pending[ahead] = self._executor.submit(self.maker.pictures, ahead)
        return future.result() if future is not None else self.maker.pictures(index)

    def close(self) -> None:
        with self._lock:
            for future in self._pending.values():
                future.cancel()
            self._pending.clear()
            if self._executor is not None:
                self._executor.shutdown(wait=False, cancel_futures=True)
                self._executor = None

    def describe(self) -> WorkloadDescription:
        inner: WorkloadDescription = self.inner.describe()
        out = inner.copy()
        spec = self.maker.spec
        out["images"] = {"count": spec.count, "size": spec.size, "format": spec.format, "pool": spec.pool}
        return out
