"""Sampler version 2: every input of a batch distinct within its variant, small classes
covered exhaustively (issue 17, item 4).

Version 1 (``sampler.py``) draws each variant's fields with replacement: a class with two
members (+0 and -0) gets its whole share of a batch, so a 60 s ``run`` of sinpi checked the
same four patterns 76 million times.  Here every variant of ``classes.py`` is an *index
space*: its members are numbered 0 .. S-1 by the mixed-radix value of their fields (S =
the product of the fields' range sizes, ``variant_size``), and a batch takes

* **all S members once** where the variant's share of the batch reaches S ("exhausted"),
  the share left over going to the variants that still have members not taken, in their
  proportions (``allocate``); where every variant of the recipe is exhausted the rest goes
  to ``random_bits`` of the argument's kind, and only when that too is exhausted (binary16
  batches of more than 2**16 rows) are members repeated;
* otherwise **distinct members** numbered by a keyed bijection of 0 .. S-1 (``Stream``:
  multiply / add / xor-shift rounds on the next power of two, cycle-walked into [0, S)),
  continuing from where the same stream stopped, so the parts of one unit (several
  recipes) never take a member twice either.

Distinct *field tuples* are not always distinct *patterns* (two variants or classes may
build the same value: 1.0 is a boundary, a power of two and an integer); the stats count
distinct patterns exactly (``strategies.distinct_class_counts``).

Each of ``lanes`` lane positions (vector width) is sampled on its own stream, so a vector
built-in meets every member of a small class in every lane.  Deterministic: numpy
``PCG64`` generators and the bijection's keys come from the recipe's seed (or the stream's).
"""
from __future__ import annotations

import zlib
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from fuzzfarm.formats import FloatFormat

from strategies._internal.classes import (
    FLOAT_BY_NAME, INT_BY_NAME, Params, Variant, field_dtype, variants_for,
)

__all__ = ["variant_size", "allocate", "Stream", "Take", "Segment", "LanePlan", "plan_distinct",
           "realize", "realize_at", "sample_distinct", "permute", "mix64", "GOLDEN"]

U64 = np.uint64
#: Variants of at most this many members keep their whole member table in memory.
TABLE_LIMIT = 1 << 16
#: Multipliers of the bijection's rounds (odd: invertible modulo any power of two):
#: splitmix64's increment and finalizer multipliers, which ``mix64`` uses too.
_MULTIPLIERS = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB)
#: splitmix64's increment (the golden ratio's 64 bits): ``mix64(key + row * GOLDEN)``
GOLDEN = U64(_MULTIPLIERS[0])


def mix64(z: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer on uint64 values (wrapping arithmetic): the hash of the
    counter-based draws -- a conversion part's sources (``strategies.conversions``) and
    version 3's ties (``sampler.tie_hash``); the device's kernels compute it bit for
    bit."""
    with np.errstate(over="ignore"):
        z = (z ^ (z >> U64(30))) * U64(_MULTIPLIERS[1])
        z = (z ^ (z >> U64(27))) * U64(_MULTIPLIERS[2])
    return z ^ (z >> U64(31))


def variant_size(v: Variant, fmt: FloatFormat, params: Params) -> int:
    """The number of members (field tuples) of variant ``v`` under ``params``: the product
    of its fields' range sizes (1 for a variant without fields, e.g. +-true_min's sign
    alone is one field: 2)."""
    s = 1
    for f in v.fields(fmt, params):
        s *= f.hi - f.lo + 1
    return s


def allocate(n: int, probs: np.ndarray, sizes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Rows per variant (int64, like ``probs``) for a batch of ``n`` rows: multinomial in
    ``probs`` (normalized here), then every count above its variant's size (``sizes``,
    int64 or object ints) capped there and the excess dealt again, multinomially, among
    the variants below their size, until none is left or every variant is full.  The sum
    is ``min(n, sizes.sum())``."""
    p = np.asarray(probs, dtype=np.float64)
    p = p / p.sum()
    cap = np.array([min(int(s), n) for s in sizes], dtype=np.int64)
    counts = rng.multinomial(n, p).astype(np.int64)
    while True:
        excess = int(np.maximum(counts - cap, 0).sum())
        counts = np.minimum(counts, cap)
        room = counts < cap
        if excess == 0 or not room.any():
            return counts
        q = np.where(room, p, 0.0)
        if q.sum() <= 0:                      # room only where the recipe weighs 0
            return counts
        counts = counts + rng.multinomial(excess, q / q.sum())


def _bits_for(size: int) -> int:
    return max(1, (int(size) - 1).bit_length())


def _rounds(x: np.ndarray, k: int, keys) -> np.ndarray:
    """One pass of the bijection of [0, 2**k) keyed by ``keys`` (uint64 values), in
    uint32 arithmetic where k <= 32 (the same function: everything is modulo 2**k)."""
    t = np.uint32 if k <= 32 else U64
    mod = (1 << (32 if k <= 32 else 64)) - 1
    mask = t((1 << k) - 1)
    shift = t(k // 2 + 1)
    x = x.astype(t, copy=False)
    for m, key in zip(_MULTIPLIERS, keys):
        x = x * t(m & mod)
        x += t(key & mod)
        x &= mask
        x ^= x >> shift
    return x.astype(U64, copy=False)


def permute(j: np.ndarray, size: int, keys) -> np.ndarray:
    """A keyed bijection of [0, ``size``) applied to ``j`` (uint64 values below size):
    rounds of odd multiplication, addition and xor-shift on the next power of two (each
    invertible there), cycle-walked until the value falls below ``size`` (at most twice
    on average)."""
    k = _bits_for(size)
    y = _rounds(np.asarray(j, dtype=U64), k, keys)
    if size >= (1 << 64):                      # the whole of uint64: nothing to walk
        return y
    lim = U64(size)
    bad = np.flatnonzero(y >= lim)
    while bad.size:
        z = _rounds(y[bad], k, keys)
        y[bad] = z
        bad = bad[z >= lim]
    return y


class Stream:
    """Where each variant's distinct numbering stands: every index space (keyed by
    ``key``: argument, lane, class, variant) has its own bijection (keys and start point
    derived from ``seed``) and the count of members already taken from it."""

    def __init__(self, seed: int):
        self.seed = int(seed)
        self.used: dict = {}

    def left(self, key: tuple, size: int) -> int:
        """Members of ``key``'s space not yet taken."""
        return int(size) - self.used.get(key, 0)

    def plan(self, key: tuple, size: int, count: int) -> "Take":
        """Reserve the next ``count`` members of ``key``'s space of ``size`` members: a
        ``Take`` naming them (``Take.numbers`` gives them)."""
        used = self.used.get(key, 0)
        self.used[key] = used + count
        if used == 0 and count == size:
            return Take(int(size), int(count), None, (0, 0, 0))
        salt = zlib.crc32(repr(key).encode())
        state = np.random.SeedSequence([self.seed & ((1 << 63) - 1), salt]).generate_state(
            4, np.uint64)
        start = int(state[3]) % int(size)
        return Take(int(size), int(count), (start + used) % int(size),
                    tuple(int(s) for s in state[:3]))

    def take(self, key: tuple, size: int, count: int) -> np.ndarray:
        """The next ``count`` distinct member numbers (uint64) of ``key``'s space of
        ``size`` members; all of them in order where one call takes the whole space."""
        return self.plan(key, size, count).numbers()


class Take(NamedTuple):
    """``count`` members of an index space of ``size``: member i (0 <= i < count) is
    number ``permute((first + i) mod size, size, keys)``, or simply i where ``first`` is
    None (the whole space taken at once, in order).  Pure integers: the device generator
    (fuzzfarm.device.generate) computes the same numbers."""

    size: int
    count: int
    first: int | None
    keys: tuple

    def numbers(self) -> np.ndarray:
        """The member numbers (uint64, shape (count,))."""
        if self.first is None:
            return np.arange(self.size, dtype=U64)
        return self.numbers_at(np.arange(self.count, dtype=U64))

    def numbers_at(self, k: np.ndarray) -> np.ndarray:
        """The numbers of members ``k`` (uint64 values below count) of the take."""
        k = np.asarray(k, dtype=U64)
        if self.first is None:
            return k.copy()
        room = self.size - self.first               # 1 .. size
        if room >= 1 << 64:                         # first 0 of the whole uint64 space
            j = k
        else:
            j = np.where(k < U64(room), k + U64(self.first), k - U64(room))
        return permute(j, self.size, list(self.keys))


def _unrank(idx: np.ndarray, v: Variant, fmt: FloatFormat, params: Params) -> dict:
    """Field arrays (in ``field_dtype``) of the members numbered ``idx`` (uint64): the
    first field varies fastest."""
    out = {}
    rest = idx
    for f in v.fields(fmt, params):
        span = f.hi - f.lo + 1
        if span >= (1 << 64):                   # a whole 64-bit field: the rest is it
            digit, rest = rest, np.zeros_like(rest)
        elif span & (span - 1) == 0:            # a power of two: bits, not division
            digit, rest = rest & U64(span - 1), rest >> U64(span.bit_length() - 1)
        else:
            digit, rest = rest % U64(span), rest // U64(span)
        if f.lo >= 0:
            out[f.name] = (digit + U64(f.lo)).astype(field_dtype(f), copy=False)
        else:
            out[f.name] = digit.astype(np.int64) + np.int64(f.lo)
    if not out:                                  # no fields: one member
        out["_"] = np.zeros(idx.shape, dtype=U64)
    return out


@lru_cache(maxsize=512)
def _table(kind: str, cls: str, name: str, fmt: FloatFormat, params: Params) -> np.ndarray:
    """Every member of a small variant, by number (uint64 for float patterns, int64 for
    int values)."""
    v = _variant(kind, cls, name, params)
    size = variant_size(v, fmt, params)
    out = np.asarray(v.build(_unrank(np.arange(size, dtype=U64), v, fmt, params), fmt, params))
    out.setflags(write=False)
    return out


def _variant(kind: str, cls: str, name: str, params: Params) -> Variant:
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    return next(v for v in variants_for(table[cls], params) if v.name == name)


def _members(kind: str, v: Variant, idx: np.ndarray, fmt: FloatFormat, params: Params,
             size: int) -> np.ndarray:
    if size <= TABLE_LIMIT:
        return _table(kind, v.cls, v.name, fmt, params)[idx.astype(np.intp)]
    return np.asarray(v.build(_unrank(idx, v, fmt, params), fmt, params))


class Segment(NamedTuple):
    """The members one variant gives a lane's batch: ``take`` of variant ``variant``
    (class ``variant.cls``) of argument kind ``kind``."""

    kind: str
    variant: Variant
    take: Take


class LanePlan(NamedTuple):
    """How one lane's ``n`` values are made (``plan_distinct``): the segments'
    members concatenated in order, cycled to length ``n`` where ``repeat`` (every
    member taken: ``np.resize``), then row i takes concatenated value
    ``permute(i, n, shuffle)`` (no shuffle where n <= 1)."""

    n: int
    segments: tuple
    repeat: bool
    shuffle: tuple | None


def plan_distinct(kind: str, weights, n: int, rng: np.random.Generator, fmt: FloatFormat,
                  params: Params, stream: Stream, key: tuple) -> LanePlan:
    """The plan of ``sample_distinct`` (same arguments; advances ``rng`` and ``stream``
    exactly as it does): which members of which variants, and the mixing bijection's
    keys.  Integers only: realized by ``realize`` (numpy) or on the device."""
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    variants, probs, sizes = [], [], []

    def add(cls_name, weight):
        vs = variants_for(table[cls_name], params)
        vt = sum(v.weight for v in vs)
        for v in vs:
            s = stream.left(key + (v.cls, v.name), variant_size(v, fmt, params))
            variants.append(v)
            probs.append(weight * v.weight / vt)
            sizes.append(max(0, s))

    for name, w in weights:
        if w > 0:
            add(name, w)
    counts = allocate(n, np.asarray(probs), sizes, rng) if variants else np.zeros(0, np.int64)
    short = n - int(counts.sum())
    if short > 0:                               # every weighted variant exhausted: spill
        have = {v.cls for v in variants}
        if "random_bits" not in have:
            add("random_bits", 1.0)
            counts = np.append(counts, 0)
        i = next(k for k, v in enumerate(variants) if v.cls == "random_bits")
        extra = min(short, int(sizes[i]) - int(counts[i]))
        counts[i] += extra
    segments = []
    for v, c in zip(variants, counts):
        if c == 0:
            continue
        size = variant_size(v, fmt, params)
        segments.append(Segment(kind, v, stream.plan(key + (v.cls, v.name), size, int(c))))
    total = sum(s.take.count for s in segments)
    keys = tuple(int(k) for k in rng.integers(0, 1 << 63, size=3, dtype=np.int64))
    return LanePlan(int(n), tuple(segments), total < n, keys if n > 1 else None)


def realize(plan: LanePlan, fmt: FloatFormat, params: Params) -> np.ndarray:
    """The values of ``plan`` (``fmt.uint`` patterns for a float argument, int32 for an
    int one; shape (plan.n,))."""
    kind = plan.segments[0].kind if plan.segments else "float"
    out_dtype = fmt.uint if kind == "float" else np.int32
    parts = [_members(s.kind, s.variant, s.take.numbers(), fmt, params, s.take.size)
             for s in plan.segments]
    got = np.concatenate(parts).astype(out_dtype) if parts else np.zeros(0, out_dtype)
    n = plan.n
    if got.size < n:                            # nothing left anywhere: repeat members
        got = np.resize(got, n) if got.size else np.zeros(n, out_dtype)
    if plan.shuffle is None:
        return got
    return got[permute(np.arange(n, dtype=U64), n, list(plan.shuffle)).astype(np.intp)]


def realize_at(plan: LanePlan, rows: np.ndarray, fmt: FloatFormat, params: Params) -> np.ndarray:
    """``realize(plan, fmt, params)[rows]`` without making the other rows: ``rows``
    (integers in 0 .. plan.n - 1) are mapped through the mixing bijection to their
    segment and member, and only those members are built."""
    kind = plan.segments[0].kind if plan.segments else "float"
    out = np.zeros(np.shape(rows), fmt.uint if kind == "float" else np.int32)
    rows = np.asarray(rows, dtype=U64).ravel()
    counts = np.array([s.take.count for s in plan.segments], dtype=np.int64)
    total = int(counts.sum())
    if rows.size == 0 or total == 0:
        return out
    p = rows if plan.shuffle is None else permute(rows, plan.n, list(plan.shuffle))
    p = p.astype(np.int64) % total if plan.repeat else p.astype(np.int64)
    ends = np.cumsum(counts)
    seg = np.searchsorted(ends, p, side="right")
    flat = out.reshape(-1)
    for s in np.flatnonzero(np.bincount(seg, minlength=1)):
        at = np.flatnonzero(seg == s)
        segment = plan.segments[s]
        k = (p[at] - (ends[s] - counts[s])).astype(U64)
        idx = segment.take.numbers_at(k)
        flat[at] = _members(segment.kind, segment.variant, idx, fmt, params, segment.take.size)
    return out


def sample_distinct(kind: str, weights, n: int, rng: np.random.Generator, fmt: FloatFormat,
                    params: Params, stream: Stream, key: tuple) -> np.ndarray:
    """``n`` values of one argument kind ('float': ``fmt.uint`` patterns, 'int': int32)
    drawn from the class table in ``weights``' proportions (module docstring: capped at
    each variant's members left in ``stream``, distinct within a variant, spilling into
    random_bits), in an order mixed by a keyed bijection.  ``key`` names the argument and
    lane inside ``stream``.  ``realize(plan_distinct(...))``."""
    plan = plan_distinct(kind, weights, n, rng, fmt, params, stream, key)
    if not plan.segments:
        return np.zeros(n, fmt.uint if kind == "float" else np.int32)
    return realize(plan, fmt, params)
