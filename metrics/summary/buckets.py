"""Bucket dimensions: which bucket each request falls in, per dimension.

- `prompt_tokens`: P in [edge_i, edge_{i+1}) → `"512-2k"`; the last is open (`"32k+"`); P unknown →
  `"unknown"`. Default edges 0/128/512/2k/8k/32k.
- `output_tokens`: N, the same way; default edges 0/64/256/1k/4k.
- `cache`: `none` (C = 0), `partial`, `full` (C/P ≥ full_ratio, default 0.9), `unknown` (the server
  did not report C — absent is not zero, unless the caller says so because the server, like vLLM, omits
  the field when it is 0).
- `turn`: a conversation turn's number (`--turns`): `1`, `2`, `3-4`, `5-8`, `9+`; a turn that ended in a
  tool call (an agent loop's step) is `tool` whatever its number; a request that is no turn is `unknown`.
  Only runs with turns have this dimension.
- `model`: the model each request named (a `--model` mix, a dataset's or trace's rows); a record that
  names none is `unknown`. Only runs where more than one model ran have this dimension.
- `images`: image inputs per request (`--images`, a dataset's images): `0`, `1`, `2`, `3-4`, `5-8`, `9+`.
  Only runs where some request carried an image have this dimension.
- `tag:<key>`: one dimension per workload tag key (scenario, tenant, ...); a request without the key
  is `"(none)"`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.latency import ended_in_tool_call
from metrics.records import RequestFrame
from metrics.units import token_label

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

DEFAULT_PROMPT_EDGES: tuple[int, ...] = (0, 128, 512, 2048, 8192, 32768)
DEFAULT_OUTPUT_EDGES: tuple[int, ...] = (0, 64, 256, 1024, 4096)
UNKNOWN = "unknown"
NO_TAG = "(none)"
CACHE_CLASSES: tuple[str, ...] = ("none", "partial", "full", UNKNOWN)
# Turn buckets: turn t falls in the last edge <= t (doubling widths: later turns are rarer).
TURN_EDGES: tuple[int, ...] = (1, 2, 3, 5, 9)
TOOL_TURN = "tool"  # a turn whose answer was a tool call (metrics.latency.answer.ended_in_tool_call)
TURN_LABELS: tuple[str, ...] = ("1", "2", "3-4", "5-8", "9+", TOOL_TURN, UNKNOWN)
# Image buckets: a count n falls in the last edge <= n.
IMAGE_EDGES: tuple[int, ...] = (0, 1, 2, 3, 5, 9)
IMAGE_LABELS: tuple[str, ...] = ("0", "1", "2", "3-4", "5-8", "9+")


@dataclass(slots=True)
class Dimension:
    """Labels in display order and, per request, the index of its label."""

    name: str
    labels: list[str]
    codes: IntArray


def check_edges(edges: Sequence[int], what: str) -> tuple[int, ...]:
    """Edges must be non-empty, non-negative integers, strictly increasing."""
    values = tuple(int(e) for e in edges)
    if not values:
        raise ValueError(f"{what} bucket edges must not be empty")
    if values[0] < 0 or any(b <= a for a, b in itertools.pairwise(values)):
        raise ValueError(f"{what} bucket edges must be non-negative and strictly increasing, got {list(values)}")
    return values


def range_labels(edges: Sequence[int]) -> list[str]:
    """`(0, 128, 2048)` → `["0-128", "128-2k", "2k+"]`; a first edge above 0 adds `"<first"` in front."""
    labels = [f"<{token_label(edges[0])}"] if edges[0] > 0 else []
    labels += [f"{token_label(lo)}-{token_label(hi)}" for lo, hi in itertools.pairwise(edges)]
    labels.append(f"{token_label(edges[-1])}+")
    return [*labels, UNKNOWN]


def range_codes(values: FloatArray, edges: Sequence[int]) -> IntArray:
    """Index into `range_labels(edges)` for each value (NaN → the trailing `unknown`)."""
    shift = 0 if edges[0] > 0 else -1  # without a "<first" bucket, [e0, e1) is label 0
    codes = np.searchsorted(np.asarray(edges, dtype=np.float64), values, side="right") + shift
    unknown = len(edges) + (1 if edges[0] > 0 else 0)
    return np.where(np.isnan(values), unknown, codes).astype(np.int64)


def prompt_dimension(frame: RequestFrame, edges: Sequence[int]) -> Dimension:
    edges = check_edges(edges, "prompt")
    return Dimension("prompt_tokens", range_labels(edges), range_codes(frame.prompt_tokens, edges))


def output_dimension(frame: RequestFrame, edges: Sequence[int]) -> Dimension:
    edges = check_edges(edges, "output")
    return Dimension("output_tokens", range_labels(edges), range_codes(frame.output_tokens, edges))


def cache_classes(
    cached: FloatArray, prompt: FloatArray, *, full_ratio: float, absent_is_zero: bool
) -> IntArray:
    """Index into CACHE_CLASSES per request. With P unknown, a hit above zero counts as partial."""
    if not 0.0 < full_ratio <= 1.0:
        raise ValueError(f"cache full ratio must be in (0, 1], got {full_ratio}")
    c = np.where(np.isnan(cached), 0.0, cached) if absent_is_zero else cached
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = c / prompt
    codes = np.full(c.shape[0], 1, dtype=np.int64)  # partial
    codes[c == 0] = 0
    codes[(c > 0) & (ratio >= full_ratio)] = 2
    codes[np.isnan(c)] = 3
    return codes


def cache_dimension(frame: RequestFrame, *, full_ratio: float, absent_is_zero: bool) -> Dimension:
    codes = cache_classes(
        frame.cached_tokens, frame.prompt_tokens, full_ratio=full_ratio, absent_is_zero=absent_is_zero
    )
    return Dimension("cache", list(CACHE_CLASSES), codes)


def turn_codes(turns: FloatArray) -> IntArray:
    """Index into TURN_LABELS per request (NaN or a turn below 1 → `unknown`)."""
    codes = np.searchsorted(np.asarray(TURN_EDGES, dtype=np.float64), turns, side="right") - 1
    unknown = np.isnan(turns) | (codes < 0)
    return np.where(unknown, len(TURN_LABELS) - 1, codes).astype(np.int64)


def turn_dimensions(frame: RequestFrame) -> list[Dimension]:
    """The `turn` dimension when some request is a conversation turn; none otherwise."""
    is_turn = ~np.isnan(frame.turn)
    if not is_turn.any():
        return []
    codes = turn_codes(frame.turn)
    codes[is_turn & ended_in_tool_call(frame)] = TURN_LABELS.index(TOOL_TURN)
    return [Dimension("turn", list(TURN_LABELS), codes)]


def model_dimensions(frame: RequestFrame) -> list[Dimension]:
    """The `model` dimension when more than one model ran (labels sorted, `unknown` last); none otherwise."""
    names = sorted({m for m in frame.model if m is not None})
    if len(names) < 2:
        return []
    labels = [*names, UNKNOWN] if UNKNOWN not in names else names
    index = {label: i for i, label in enumerate(labels)}
    codes = np.array([index[UNKNOWN if m is None else m] for m in frame.model], dtype=np.int64)
    return [Dimension("model", labels, codes)]


def image_codes(images: FloatArray) -> IntArray:
    """Index into IMAGE_LABELS per request (a count below 0 or unknown reads as 0)."""
    counts = np.where(np.isnan(images) | (images < 0), 0.0, images)
    return (np.searchsorted(np.asarray(IMAGE_EDGES, dtype=np.float64), counts, side="right") - 1).astype(np.int64)


def image_dimensions(frame: RequestFrame) -> list[Dimension]:
    """The `images` dimension when some request carried an image; none otherwise."""
    if frame.images.shape[0] != frame.n or not (frame.images > 0).any():
        return []
    return [Dimension("images", list(IMAGE_LABELS), image_codes(frame.images))]


def tag_dimensions(frame: RequestFrame) -> list[Dimension]:
    """One dimension per tag key, labels sorted (requests without the key last, as `(none)`)."""
    dims = []
    for key, values in sorted(frame.tags.items()):
        present = sorted({v for v in values if v is not None})
        labels = [*present, NO_TAG]
        index = {label: i for i, label in enumerate(labels)}
        codes = np.array([index[NO_TAG if v is None else v] for v in values], dtype=np.int64)
        dims.append(Dimension(f"tag:{key}", labels, codes))
    return dims
