"""Every sample of one latency metric, sorted once, with the request behind each.

A run of 100,000 requests × 200 chunks has 20 M ITL samples. They are put in ascending order once,
here; every block after that (the whole run, each bucket, a threshold's filter, a bootstrap) reads
order statistics from that order (metrics.latency.aggregate) instead of sorting a subset again.

ITL per token is *weighted*: gap j, split evenly over the k_j tokens of the chunk that ends it, is one
entry of value gap_j / k_j standing for k_j equal samples. The percentiles are those of the sample that
repeats each entry k_j times (docs/metrics.md), without materialising the repeats.

Gap samples are sorted as integers: the nanosecond gap (scaled so that gap/k orders exactly, see
`_sort_key`) in the high bits and the request index in the low bits, so one integer sort orders the
values and carries their owners along. Where the bits do not fit (gaps of hours with a million
requests) an argsort does the same, slower.

Per-request moments (sample count, sum, and sum of squared deviations from the request's own mean) are
computed before sorting; the mean and standard deviation of any set of requests combine them exactly
(Chan's parallel formula), so no block re-sums 20 M values.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.units import NS_PER_S

IntArray = npt.NDArray[np.int64]
OwnerArray = npt.NDArray[np.int32]
CountArray = npt.NDArray[np.int32]  # tokens per chunk, weights
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(slots=True)
class Moments:
    """Per request: how many samples (Σ weights), their sum, and Σ w·(v − request mean)²."""

    weight: FloatArray
    total: FloatArray
    m2: FloatArray


@dataclass(slots=True)
class Samples:
    """`values` ascending (seconds, or unitless), `owner[j]` = request index, `weights[j]` = how many
    samples entry j stands for (None: one each; never 0)."""

    values: FloatArray
    owner: OwnerArray
    moments: Moments
    weights: CountArray | None = None

    @property
    def n_requests(self) -> int:
        return int(self.moments.weight.shape[0])

    @classmethod
    def per_request(cls, values: FloatArray) -> Samples:
        """One sample per request where the value is defined (NaN = no sample)."""
        values = np.asarray(values, dtype=np.float64)
        defined = ~np.isnan(values)
        owner = np.flatnonzero(defined)
        order = np.argsort(values[owner], kind="stable")
        moments = Moments(defined.astype(np.float64), np.where(defined, values, 0.0), np.zeros(values.shape[0]))
        return cls(values[owner][order], owner[order].astype(np.int32), moments)

    @classmethod
    def from_gaps(cls, ns: IntArray, off: IntArray, tokens: CountArray | None = None, *, reuse: bool = False) -> Samples:
        """Gap samples in integer ns, request i owning `ns[off[i]:off[i + 1]]`.

        With `tokens` (k_j of each gap), entry j is gap_j / k_j counted k_j times; k_j = 0 gives no sample.
        `reuse`: `ns` is not needed afterwards and its memory becomes the sorted values (no copy).
        """
        n = off.shape[0] - 1
        owner = np.repeat(np.arange(n, dtype=np.int32), np.diff(off))
        if tokens is not None and bool((tokens == 1).all()):
            tokens = None
        moments = _gap_moments(ns, off, tokens)
        if tokens is None:
            values, own, _ = _sort(ns, owner, None, n, reuse)
            return cls(values, own, moments)
        keep = tokens > 0
        if not keep.all():
            ns, owner, tokens = ns[keep], owner[keep], tokens[keep]
        values, own, w = _sort(ns, owner, tokens, n)
        return cls(values, own, moments, w)


def _segment_sums(x: FloatArray, off: IntArray) -> FloatArray:
    """Σ x over each request's slice off[i]:off[i + 1] (0 for an empty slice)."""
    counts = np.diff(off)
    out = np.zeros(counts.shape[0])
    has = counts > 0
    if has.any():
        out[has] = np.add.reduceat(x, off[:-1][has])
    return out


_SLICE = 1 << 20  # samples per slice when computing moments: small temporaries


def _gap_moments(ns: IntArray, off: IntArray, tokens: CountArray | None) -> Moments:
    """Per-request moments of gap samples (CSR), a slice of whole requests at a time."""
    n = off.shape[0] - 1
    weight, total, m2 = np.zeros(n), np.zeros(n), np.zeros(n)
    first = 0
    while first < n:
        last = int(np.searchsorted(off, off[first] + _SLICE, side="right")) - 1
        last = min(max(last, first + 1), n)  # at least one request, even a huge one
        lo, hi = int(off[first]), int(off[last])
        sub = off[first : last + 1] - lo
        k = None if tokens is None else np.maximum(tokens[lo:hi], 0)
        if k is None:
            seconds = ns[lo:hi] / NS_PER_S
        else:  # gap / k, then seconds: the arithmetic of derive.itl_token_ns (k = 0: no sample, 0 here)
            seconds = np.divide(ns[lo:hi], k, out=np.zeros(hi - lo), where=k > 0) / NS_PER_S
        w, t, m = _moments(seconds, k, sub)
        weight[first:last], total[first:last], m2[first:last] = w, t, m
        first = last
    return Moments(weight, total, m2)


def _moments(seconds: FloatArray, k: CountArray | None, off: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weight, sum, Σ w·(v − mean)²) per request of samples in CSR layout (k: weights, None = 1 each;
    `seconds` is 0 where k is 0)."""
    counts = np.diff(off)
    weight = counts.astype(np.float64) if k is None else _segment_sums(k.astype(np.float64), off)
    total = _segment_sums(seconds if k is None else seconds * k, off)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(weight > 0, total / weight, 0.0)
    dev = seconds - np.repeat(mean, counts)
    dev *= dev
    if k is not None:
        dev *= k
    return weight, total, _segment_sums(dev, off)


def _sort_key(ns: IntArray, k: CountArray | None, owner_bits: int, reuse: bool) -> tuple[IntArray, int, int] | None:
    """An int64 key whose order is the order of ns / k, with room for k and the owner in the low bits.

    Values g/k with k ≤ K differ by at least 1/K² when they differ, so ⌊g·2^f / k⌋ with 2^f ≥ K²
    keeps their order exactly (equal values get equal keys), and g = ⌈key·k / 2^f⌉ recovers the gap.
    Returns (key without the low bits, f, bits for k), or None when it does not fit in 63 bits.
    """
    if ns.size == 0 or int(ns.min()) < 0:
        return None if ns.size else (ns.copy(), 0, 0)
    k_max = 1 if k is None else int(k.max())
    k_bits = 0 if k is None else k_max.bit_length()
    f = (k_max * k_max - 1).bit_length()  # 2^f ≥ K²
    if int(ns.max()).bit_length() + f + k_bits + owner_bits > 63:
        return None
    if k is None:
        return (ns, 0, 0) if reuse and ns.flags.writeable and ns.flags.c_contiguous else (ns.copy(), 0, 0)
    key = np.left_shift(ns, f)
    np.floor_divide(key, k, out=key)
    return key, f, k_bits


def _sort(
    ns: IntArray, owner: OwnerArray, k: CountArray | None, n: int, reuse: bool = False
) -> tuple[FloatArray, OwnerArray, CountArray | None]:
    """Ascending values (seconds) of ns / k with their owners and weights (`reuse`: sort in ns itself)."""
    owner_bits = max(n - 1, 1).bit_length()
    found = _sort_key(ns, k, owner_bits, reuse)
    if found is None and k is not None and ns.size and int(ns.min()) >= 0:
        # Usually a few chunks with many tokens make K too large for the key: sort those apart, merge.
        small = k <= _largest_k(int(ns.max()).bit_length(), owner_bits)
        if small.any() and not small.all():
            big = ~small
            return _merge(_sort(ns[small], owner[small], k[small], n), _argsorted(ns[big], owner[big], k[big]))
    if found is None:  # does not fit: an argsort of the float values, same result
        return _argsorted(ns, owner, k)
    key, f, k_bits = found
    if k is not None:
        key <<= k_bits
        key |= k
    key <<= owner_bits
    key |= owner
    key.sort()
    own = np.empty(key.shape[0], dtype=np.int32)
    np.bitwise_and(key, (1 << owner_bits) - 1, out=own, casting="unsafe")
    key >>= owner_bits
    w = None
    if k is not None:
        w = np.empty(key.shape[0], dtype=np.int32)
        np.bitwise_and(key, (1 << k_bits) - 1, out=w, casting="unsafe")
        key >>= k_bits
        # g = ⌈key·k / 2^f⌉, exact in integers; then the same float arithmetic as before sorting.
        key *= w
        key += (1 << f) - 1
        key >>= f
    # The key's memory becomes the values, a slice at a time (a whole-array in-place cast would make
    # numpy copy the key first).
    seconds = key.view(np.float64)
    for lo in range(0, key.shape[0], _SLICE):
        hi = lo + _SLICE
        np.true_divide(key[lo:hi], NS_PER_S if w is None else w[lo:hi], out=seconds[lo:hi])
    if w is not None:
        seconds /= NS_PER_S
    return seconds, own, w


def _argsorted(ns: IntArray, owner: OwnerArray, k: CountArray | None) -> tuple[FloatArray, OwnerArray, CountArray | None]:
    """`_sort` by an argsort of the float values (any range, slower)."""
    per = ns / NS_PER_S if k is None else ns / k / NS_PER_S
    order = np.argsort(per, kind="stable")
    return per[order], owner[order], None if k is None else k[order]


def _largest_k(value_bits: int, owner_bits: int) -> int:
    """The largest token count K whose fixed-point key still fits beside the owner (0: none)."""
    best = 0
    for k_bits in range(1, 32):
        if value_bits + 2 * k_bits + k_bits + owner_bits <= 63:  # 2^(2·k_bits) ≥ K² for K < 2^k_bits
            best = (1 << k_bits) - 1
    return best


Sorted = tuple[FloatArray, OwnerArray, CountArray | None]


def _merge(a: Sorted, b: Sorted) -> Sorted:
    """Two ascending weighted sample runs as one (b's entries after a's equal ones)."""
    a_values, a_owner, a_w = a
    b_values, b_owner, b_w = b
    at = np.searchsorted(a_values, b_values, side="right") + np.arange(b_values.shape[0])
    from_b = np.zeros(a_values.shape[0] + b_values.shape[0], dtype=np.bool_)
    from_b[at] = True
    out = []
    for x, y in ((a_values, b_values), (a_owner, b_owner), (a_w, b_w)):
        assert x is not None and y is not None  # weighted runs only
        merged = np.empty(from_b.shape[0], dtype=x.dtype)
        merged[at] = y
        merged[~from_b] = x
        out.append(merged)
    return out[0], out[1], out[2]
