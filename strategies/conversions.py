"""The inputs of an explicit conversion's work units (the table of conversions is
``edgecases.conversions``, the verdict ``fuzzfarm.verdict.conversions``): ``special_inputs``
(the boundary values of the source and destination ranges, each rounding's ties, NaNs and
infinities) and ``inputs`` (seeded draws: those boundaries' neighbours and random
patterns), as arrays of the source type's buffer dtype.
"""
from __future__ import annotations

import zlib
from functools import lru_cache
from typing import Iterable, NamedTuple

import mpmath
import numpy as np

from edgecases.conversions import INT_TYPES, Conversion, int_range, type_dtype
from fuzzfarm.formats import FloatFormat
from fuzzfarm.rounding import round_to_bits
from strategies._internal.distinct import GOLDEN, mix64

__all__ = ["special_inputs", "inputs", "counter_inputs", "counter_inputs_at", "counter_shape",
           "counter_key", "pool_patterns", "CounterShape", "COUNTER_RECIPE"]


# --------------------------------------------------------------------------- inputs
def _to_float_bits(targets: Iterable[tuple[int, int]], fmt: FloatFormat,
                   steps: int = 1) -> list[int]:
    """For each exact target ``man * 2**exp``: the patterns of ``fmt`` just below and just
    above it (the target itself when representable) and ``steps`` more on each side."""
    out = []
    with mpmath.workprec(256):
        for man, exp in targets:
            v = mpmath.mpf(man) * mpmath.ldexp(1, exp)
            for mode in ("rtn", "rtp"):
                b = round_to_bits(v, fmt, mode)
                out.append(b)
                sign, mag = b & fmt.sign_mask, b & fmt.abs_mask
                for k in range(1, steps + 1):
                    delta = -k if mode == "rtn" else k
                    if v < 0:
                        delta = -delta
                    m = mag + delta
                    if 0 <= m <= fmt.pos_inf:
                        out.append(sign | m)
    return out


def _float_specials(fmt: FloatFormat) -> list[int]:
    s = fmt.sign_mask
    pos = [0, 1, 2, 3, fmt.min_normal - 1, fmt.min_normal, fmt.min_normal + 1,
           fmt.min_normal >> 1, fmt.bits_of(1.0), fmt.max_finite, fmt.max_finite - 1,
           fmt.pos_inf, fmt.default_qnan, fmt.default_qnan | 1, fmt.exp_mask | 1,
           fmt.exp_mask | (fmt.quiet_bit - 1), fmt.exp_mask | (fmt.quiet_bit >> 1),
           fmt.abs_mask, fmt.exp_mask | fmt.quiet_bit | (fmt.quiet_bit >> 1)]
    return pos + [s | b for b in pos]


def _int_targets_for_float_src(conv: Conversion, S: FloatFormat) -> list[tuple[int, int]]:
    """Exact targets (man, exp) of a float->int conversion."""
    t = []
    for k in range(-4, 5):
        t += [(k, 0), (2 * k + 1, -1), (4 * k + 1, -2), (4 * k + 3, -2)]
    lo, hi = int_range(conv.dst)
    for b in (lo, hi):
        t += [(b, 0), (b - 1, 0), (b + 1, 0), (2 * b - 1, -1), (2 * b + 1, -1)]
    width = INT_TYPES[conv.dst][0]
    for e in sorted({S.precision - 1, S.precision, S.precision + 1, 24, 53, width - 1, width}):
        for d in (-1, 0, 1):
            t += [((1 << e) + d, 0), (-(1 << e) + d, 0)]
        t += [((1 << (e + 1)) + 1, -1), ((1 << (e + 1)) - 1, -1)]
    return t


def _float_targets_for_float_dst(D: FloatFormat) -> list[tuple[int, int]]:
    """Exact targets of a float->float narrowing: D's boundaries and ties."""
    p, emax, emin = D.precision, D.emax, D.emin
    t = []
    top = (1 << (emax + 1)) - (1 << (emax + 1 - p))          # max finite of D
    tie_inf = (1 << (emax + 1)) - (1 << (emax - p))          # halfway to 2**(emax+1)
    for v in (top, tie_inf, 1 << (emax + 1)):
        t.append((v, 0))
    sub_q = emin - p + 1                                     # exponent of true_min
    for man in (1, 2, 3, (1 << (p - 1)) - 1, 1 << (p - 1), (1 << (p - 1)) + 1):
        t.append((man, sub_q))                               # subnormals, min normal
    for man in (1, 3, 5, (1 << p) - 1, (1 << p) + 1):
        t.append((man, sub_q - 1))                           # ties below / around min normal
    for k in range(3):
        one = 1 << (p + k)
        t += [(one + 1, -(p + k)), (one + 3, -(p + k)), (2 * one + 1, -(p + k + 1))]
    for e in sorted({p, p + 1, 24, 25, 53, 54}):
        t += [((1 << e) + 1, 0), ((1 << e) - 1, 0), ((1 << e) + 3, 0)]
    return t + [(-m, e) for m, e in t]


def _int_targets(conv: Conversion) -> list[int]:
    """Integer landmarks of an int source (filtered to its range later)."""
    vals = {0, 1, -1, 2, -2, 3, -3}
    for t in INT_TYPES:
        lo, hi = int_range(t)
        for b in (lo, hi):
            vals |= {b - 1, b, b + 1}
    for e in (7, 8, 15, 16, 24, 31, 32, 53, 63, 64):
        for d in (-1, 0, 1):
            vals |= {(1 << e) + d, -(1 << e) + d}
    D = conv.dst_format
    if D is not None:
        p = D.precision
        width = INT_TYPES[conv.src][0]
        for e in sorted({p - 1, p, p + 1, p + 2, 24, 25, 53, 54, width - 2, width - 1}):
            q = 1 << max(e + 1 - p, 0)   # spacing of D in [2**e, 2**(e+1))
            base = 1 << e
            for off in (0, q // 2, q, q + q // 2, 3 * q + q // 2):
                for d in (-1, 0, 1):
                    vals |= {base + off + d, -(base + off + d), base - off + d}
        top = (1 << (D.emax + 1)) - (1 << (D.emax + 1 - p))
        tie = (1 << (D.emax + 1)) - (1 << (D.emax - p))
        for v in (top, tie, 1 << (D.emax + 1)):
            for d in (-1, 0, 1):
                vals |= {v + d, -(v + d)}
    return sorted(vals)


@lru_cache(maxsize=None)
def _special_pool(conv: Conversion) -> tuple:
    S = conv.src_format
    if S is not None:
        bits = _float_specials(S)
        if conv.dst in INT_TYPES:
            bits += _to_float_bits(_int_targets_for_float_src(conv, S), S)
        else:
            D = conv.dst_format
            targets = [(k, 0) for k in range(-3, 4)] + [(2 * k + 1, -1) for k in range(-3, 3)]
            if D.precision < S.precision:
                targets += _float_targets_for_float_dst(D)
            bits += _to_float_bits(targets, S)
        return tuple(dict.fromkeys(int(b) & ((1 << S.bits) - 1) for b in bits))
    lo, hi = int_range(conv.src)
    return tuple(v for v in _int_targets(conv) if lo <= v <= hi)


def special_inputs(conv: Conversion) -> np.ndarray:
    """A compact deterministic pool of landmark sources (``conv.src_dtype``, no
    duplicates): for a float source ±0, subnormal and normal boundaries, ±1, the largest
    finite value, ±inf, quiet and signaling NaNs with various payloads, small integers and
    the ties between them, the destination's range ends and their neighbours (as source
    values: the patterns just below and above each end, ±0.5 and ±1 beyond it), 2**p±1
    and 2**24±1, 2**53±1, and for a narrowing the destination's overflow threshold, its
    ties and subnormal boundary; for an integer source 0, ±1, every integer type's ends
    and neighbours, powers of two and ±1, and the destination format's ties and overflow
    threshold."""
    pool = _special_pool(conv)
    if conv.src_format is not None:
        return np.asarray(pool, dtype=np.uint64).astype(conv.src_dtype)
    if INT_TYPES[conv.src][1]:
        return np.asarray(pool, dtype=np.int64).astype(conv.src_dtype)
    return np.asarray(pool, dtype=np.uint64).astype(conv.src_dtype)


def _ordered(vals: np.ndarray, type_name: str) -> np.ndarray:
    """Integers of ``type_name`` mapped monotonically onto uint64 [0, 2**bits)."""
    bits, signed = INT_TYPES[type_name]
    u = vals.astype(np.int64).view(np.uint64) if signed else vals.astype(np.uint64)
    if signed:
        u = (u + np.uint64(1 << (bits - 1))) & np.uint64((1 << bits) - 1) if bits < 64 \
            else u ^ np.uint64(1 << 63)
    return u


def _unordered(u: np.ndarray, type_name: str) -> np.ndarray:
    bits, signed = INT_TYPES[type_name]
    dt = type_dtype(type_name)
    if not signed:
        return u.astype(dt)
    if bits == 64:
        return (u ^ np.uint64(1 << 63)).view(np.int64)
    return (u.astype(np.int64) - (1 << (bits - 1))).astype(dt)


def _random_uint(rng, n: int, bits: int) -> np.ndarray:
    if bits == 64:
        return rng.integers(0, 1 << 64, size=n, dtype=np.uint64, endpoint=False)
    return rng.integers(0, 1 << bits, size=n, dtype=np.uint64)


def _neighbours(conv: Conversion, base: np.ndarray, rng) -> np.ndarray:
    """Each element moved by 1..4 steps up or down (float: on the magnitude, keeping the
    sign; int: in value, saturating at the type's ends)."""
    n = base.size
    k = rng.integers(1, 5, size=n).astype(np.uint64)
    down = rng.random(n) < 0.5
    S = conv.src_format
    if S is not None:
        b = base.astype(np.uint64)
        sign, mag = b & np.uint64(S.sign_mask), b & np.uint64(S.abs_mask)
        mag = np.where(down, np.where(mag >= k, mag - k, 0),
                       np.minimum(mag + k, np.uint64(S.abs_mask)))
        return (sign | mag).astype(S.uint)
    top = np.uint64((1 << INT_TYPES[conv.src][0]) - 1)
    u = _ordered(base, conv.src)
    u = np.where(down, np.where(u >= k, u - k, 0), np.where(u <= top - k, u + k, top))
    return _unordered(u.astype(np.uint64), conv.src)


def _structured(conv: Conversion, n: int, rng) -> np.ndarray:
    """Random sources aimed at the conversion: in and around the destination's range,
    with ties of the destination's rounding."""
    S, D = conv.src_format, conv.dst_format
    if n == 0:
        return np.zeros(0, conv.src_dtype)
    if S is not None and D is None:                      # float -> int
        lo, hi = int_range(conv.dst)
        dbits = INT_TYPES[conv.dst][0]
        half = n // 2
        # integer part uniform over the range (and 2 beyond), plus a fraction
        k = _unordered(_random_uint(rng, half, dbits), conv.dst).astype(np.float64)
        k += rng.integers(-2, 3, size=half) * (rng.random(half) < 0.05)
        frac = rng.choice(np.array([0.0, 0.5, -0.5, 0.25, 0.75, 1.5, -1.5]), size=half)
        with np.errstate(over="ignore"):
            a = (k + frac).astype(S.float).view(S.uint)
        # exponent window: binades from 2**-2 to just beyond the destination's width
        m = n - half
        e = rng.integers(-2, min(dbits + 2, S.emax) + 1, size=m)
        frac_bits = _random_uint(rng, m, S.frac_bits)
        b = ((e + S.emax).astype(np.uint64) << np.uint64(S.frac_bits)) | frac_bits
        b |= np.where(rng.random(m) < 0.5, np.uint64(S.sign_mask), np.uint64(0))
        return np.concatenate([a, b.astype(S.uint)])
    if S is not None:                                    # float -> float
        if D.precision < S.precision:
            e = rng.integers(D.emin - D.precision - 2, D.emax + 2, size=n)
        else:
            e = rng.integers(S.emin - 1, S.emax + 1, size=n)
        biased = np.clip(e + S.emax, 0, 2 * S.emax).astype(np.uint64)
        frac_bits = _random_uint(rng, n, S.frac_bits)
        drop = S.precision - D.precision
        if drop > 0:  # force ties (and their neighbours) of D's precision on half of them
            tie = np.uint64(1 << (drop - 1))
            low = np.uint64((1 << drop) - 1)
            delta = rng.integers(-1, 2, size=n).astype(np.int64)
            forced = ((frac_bits & ~low) | tie).astype(np.int64) + delta
            forced = np.clip(forced, 0, (1 << S.frac_bits) - 1).astype(np.uint64)
            frac_bits = np.where(rng.random(n) < 0.5, forced, frac_bits)
        b = (biased << np.uint64(S.frac_bits)) | frac_bits
        b |= np.where(rng.random(n) < 0.5, np.uint64(S.sign_mask), np.uint64(0))
        return b.astype(S.uint)
    # integer source: log-uniform magnitudes, ties of the float destination
    bits, signed = INT_TYPES[conv.src]
    mbits = bits - 1 if signed else bits
    length = rng.integers(0, mbits + 1, size=n).astype(np.uint64)
    raw = _random_uint(rng, n, 64)
    mask = np.where(length >= 64, np.uint64(2**64 - 1),
                    (np.uint64(1) << np.minimum(length, np.uint64(63))) - np.uint64(1))
    top = np.where(length > 0, np.uint64(1) << (np.maximum(length, np.uint64(1)) - np.uint64(1)),
                   np.uint64(0))
    mag = (raw & mask) | top
    if D is not None:
        drop = length.astype(np.int64) - D.precision
        has = drop > 0
        d = np.maximum(drop, 1).astype(np.uint64)
        low = (np.uint64(1) << d) - np.uint64(1)
        tie = np.uint64(1) << (d - np.uint64(1))
        forced = (mag & ~low) | tie
        use = has & (rng.random(n) < 0.5)
        mag = np.where(use, forced, mag)
    if not signed:
        return mag.astype(conv.src_dtype)
    neg = rng.random(n) < 0.5
    v = np.where(neg, -(mag.astype(np.int64)), mag.astype(np.int64))
    return v.astype(conv.src_dtype)


def inputs(conv: Conversion, n: int, seed: int) -> np.ndarray:
    """``n`` source values (``conv.src_dtype``; float sources as bit patterns) biased to
    the conversion's boundaries, deterministic in (``conv``, ``seed``).

    About a quarter are landmarks of ``special_inputs`` (all of them when n is at least
    twice the pool), a quarter their neighbours (1 to 4 steps away), a quarter structured
    random values (float->int: integers over the destination's range and beyond with
    fractions 0, ±0.5, 0.25, 0.75, ±1.5, and random values of the binades up to the
    destination's width; float->float: random values of the destination's exponent range,
    half of them ties of its precision or their neighbours; int sources: log-uniform
    magnitudes, half with a tie of the destination float's precision), and the rest
    uniform random bit patterns; shuffled.  Raises ValueError for n < 0.
    """
    if n < 0:
        raise ValueError(f"n={n!r} is negative; give the number of inputs wanted")
    rng = np.random.default_rng([int(seed) % (1 << 64), zlib.crc32(conv.id.encode())])
    pool = special_inputs(conv)
    n1 = n2 = n3 = n // 4
    if n1 >= 2 * pool.size:
        a = np.concatenate([pool, rng.choice(pool, n1 - pool.size)])
    else:
        a = rng.choice(pool, n1, replace=n1 > pool.size) if n1 else pool[:0]
    b = _neighbours(conv, rng.choice(pool, n2), rng) if n2 else pool[:0]
    c = _structured(conv, n3, rng)
    width = 8 * conv.src_dtype.itemsize
    d = _random_uint(rng, n - n1 - n2 - n3, width)
    if conv.src_format is None and INT_TYPES[conv.src][1]:
        d = _unordered(d, conv.src)
    out = np.concatenate([a.astype(conv.src_dtype), b.astype(conv.src_dtype),
                          c.astype(conv.src_dtype), d.astype(conv.src_dtype)])
    rng.shuffle(out)
    return out


# --------------------------------------------------------------------------- counter-based
#: The recipe version of a conversion unit's part whose inputs are ``counter_inputs``: an
#: integer-only function of (key, row) that the device makes too
#: (fuzzfarm.device.conversion_generate); version 1 (no "v" in the recipe) is ``inputs``.
COUNTER_RECIPE = 2

_M64 = (1 << 64) - 1
#: Constants that separate the draws of one row (r1, r2, r3 from r0).
_SALTS = (np.uint64(0xD1B54A32D192ED03), np.uint64(0x8CB92BA72F3D8DD7),
          np.uint64(0xABC98388FB8FAC03))


class CounterShape(NamedTuple):
    """What ``counter_inputs`` needs of a conversion, as integers (the device kernel's
    arguments): ``kind`` 0 float->int, 1 float->float, 2 an integer source (int->float,
    int->int); the source's width
    ``bits`` and for a float source its fraction bits ``m`` and bias ``bias`` (0 for an
    integer source, ``signed`` for it); the structured draws' exponent window
    ``e_lo .. e_lo + e_count - 1`` (float sources), the fraction bits ``drop`` a narrowing
    loses (ties forced there), the destination's precision ``p`` (int->float ties), the
    integer source's magnitude bits ``mbits``."""

    kind: int
    bits: int
    m: int
    bias: int
    signed: int
    e_lo: int
    e_count: int
    drop: int
    p: int
    mbits: int


@lru_cache(maxsize=None)
def counter_shape(conv: Conversion) -> CounterShape:
    """The ``CounterShape`` of ``conv`` (any explicit conversion)."""
    S, D = conv.src_format, conv.dst_format
    if S is not None and D is None:             # float -> int
        dbits = INT_TYPES[conv.dst][0]
        hi = min(dbits + 2, S.emax)
        return CounterShape(0, S.bits, S.frac_bits, S.emax, 0, -2, hi + 3, 0, 0, 0)
    if S is not None:                           # float -> float
        if D.precision < S.precision:
            lo = D.emin - D.precision - 2
            return CounterShape(1, S.bits, S.frac_bits, S.emax, 0, lo, D.emax + 2 - lo,
                                S.precision - D.precision, 0, 0)
        lo = S.emin - 1
        return CounterShape(1, S.bits, S.frac_bits, S.emax, 0, lo, S.emax + 1 - lo, 0, 0, 0)
    bits, signed = INT_TYPES[conv.src]
    # int->int: the int->float draws without forced ties (a precision of 64 bits drops none)
    return CounterShape(2, bits, 0, 0, int(signed), 0, 0, 0,
                        64 if D is None else D.precision, bits - 1 if signed else bits)


def counter_key(conv: Conversion, seed: int) -> int:
    """The 64-bit key of a part's rows: its seed mixed with the conversion's id."""
    z = np.array([(int(seed) * 0x9E3779B97F4A7C15 + zlib.crc32(conv.id.encode())) & _M64],
                 np.uint64)
    return int(mix64(z)[0])


def pool_patterns(conv: Conversion) -> np.ndarray:
    """``special_inputs(conv)`` as uint64 patterns (pool size,) of the source's width (two's
    complement: int8 -1 is 0xff): the landmark pool ``counter_inputs_at`` and the device's
    generator index."""
    pool = special_inputs(conv)
    width = 8 * pool.dtype.itemsize
    return pool.view(np.dtype(f"u{pool.dtype.itemsize}")).astype(np.uint64) & np.uint64(
        (1 << width) - 1)


def _shl(one_bits: np.ndarray) -> np.ndarray:
    """2**k for uint64 k in 0 .. 63."""
    return np.uint64(1) << one_bits


def counter_inputs_at(conv: Conversion, seed: int, n: int, rows) -> np.ndarray:
    """The sources at ``rows`` (int array, each in 0 .. n - 1) of a part of ``n`` inputs
    drawn with ``seed`` (``conv.src_dtype``; float sources as bit patterns): an integer-only
    function of (``counter_key``, row), the device's (``fuzzfarm/device/conversion_generate.cl``)
    bit for bit.

    The first rows are the landmarks of ``special_inputs`` in order, every one, where n is
    at least twice the pool; every other row draws r0 .. r3 (splitmix64 of the key and the
    row) and is, by r0's two low bits: a landmark (r0 >> 8 modulo the pool), one of its
    neighbours (1 to 4 steps up or down: floats on the magnitude keeping the sign, integers
    in value, saturating), a structured value, or a uniform pattern of the source's width.
    Structured: float->int, a value of the binades 2**-2 .. 2**(width + 2) (capped at the
    format's) with a random sign and fraction, half of them with the fraction below the
    units forced to an integer, a tie (1/2), 1/2 +- 1 ULP, 1/4 or 3/4; float->float, a value
    of the destination's exponent range and a little beyond (narrowing; half of them a tie
    of the destination's precision or its neighbour) or of the source's (widening);
    int->float, a log-uniform magnitude, half with a tie of the destination's precision,
    a random sign for a signed type; int->int, the same magnitudes without ties.  Raises ValueError for n < 0 or a row outside
    0 .. n - 1."""
    rows = np.asarray(rows, np.int64)
    if n < 0:
        raise ValueError(f"n={n!r} is negative; give the number of inputs wanted")
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must lie in 0 .. {n - 1}")
    sh = counter_shape(conv)
    pool = pool_patterns(conv)
    P = np.uint64(pool.size)
    u = rows.astype(np.uint64)
    with np.errstate(over="ignore"):
        r0 = mix64(np.uint64(counter_key(conv, seed)) + (u + np.uint64(1)) * GOLDEN)
    r1 = mix64(r0 ^ _SALTS[0])
    r2 = mix64(r1 ^ _SALTS[1])
    r3 = mix64(r2 ^ _SALTS[2])
    wmask = np.uint64((1 << sh.bits) - 1) if sh.bits < 64 else np.uint64(_M64)
    member = pool[((r0 >> np.uint64(8)) % P).astype(np.int64)]
    out = np.where((r0 & np.uint64(3)) == 0, member, r3 & wmask)
    near = _neighbour(sh, member, r0, wmask)
    out = np.where((r0 & np.uint64(3)) == 1, near, out)
    out = np.where((r0 & np.uint64(3)) == 2, _structured_counter(sh, r1, r2), out)
    head = pool.size if n >= 2 * pool.size else 0
    first = rows < head
    out[first] = pool[rows[first]]
    out = out.astype(np.dtype(f"u{conv.src_dtype.itemsize}"))
    return out.view(conv.src_dtype)


def counter_inputs(conv: Conversion, n: int, seed: int) -> np.ndarray:
    """``n`` sources of a part drawn with ``seed``: ``counter_inputs_at`` at every row."""
    return counter_inputs_at(conv, seed, n, np.arange(n, dtype=np.int64))


def _neighbour(sh: CounterShape, b: np.ndarray, r0: np.ndarray, wmask) -> np.ndarray:
    k = np.uint64(1) + ((r0 >> np.uint64(2)) & np.uint64(3))
    down = ((r0 >> np.uint64(4)) & np.uint64(1)) == 1
    if sh.kind != 2:                                    # a float source: the magnitude
        sign = b & np.uint64(1 << (sh.bits - 1))
        am = np.uint64((1 << (sh.bits - 1)) - 1)
        mag = b & am
        with np.errstate(over="ignore"):
            mag = np.where(down, np.where(mag >= k, mag - k, np.uint64(0)),
                           np.where(mag <= am - k, mag + k, am))
        return sign | mag
    half = np.uint64(1 << (sh.bits - 1)) if sh.signed else np.uint64(0)
    with np.errstate(over="ignore"):
        o = (b + half) & wmask                          # in value order
        o = np.where(down, np.where(o >= k, o - k, np.uint64(0)),
                     np.where(o <= wmask - k, o + k, wmask))
        return (o + half) & wmask


def _structured_counter(sh: CounterShape, r1: np.ndarray, r2: np.ndarray) -> np.ndarray:
    one = np.uint64(1)
    if sh.kind == 2:                                    # int -> float
        length = r1 % np.uint64(sh.mbits + 1)
        full = length >= np.uint64(64)
        mask = np.where(full, np.uint64(_M64),
                        _shl(np.minimum(length, np.uint64(63))) - one)
        top = np.where(length > 0, _shl(np.maximum(length, one) - one), np.uint64(0))
        mag = (r2 & mask) | top
        drop = length.astype(np.int64) - sh.p
        d = np.clip(drop, 1, 63).astype(np.uint64)
        tie = (mag & ~(_shl(d) - one)) | _shl(d - one)
        mag = np.where((drop > 0) & (((r1 >> np.uint64(32)) & one) == 1), tie, mag)
        if not sh.signed:
            return mag
        wmask = np.uint64((1 << sh.bits) - 1) if sh.bits < 64 else np.uint64(_M64)
        with np.errstate(over="ignore"):
            negv = (~mag + one) & wmask
        return np.where(((r1 >> np.uint64(33)) & one) == 1, negv, mag)
    fmask = np.uint64((1 << sh.m) - 1)
    e = np.int64(sh.e_lo) + (r1 % np.uint64(sh.e_count)).astype(np.int64)
    biased = np.clip(e + sh.bias, 0, 2 * sh.bias).astype(np.uint64)
    frac = r2 & fmask
    if sh.kind == 0:                                    # float -> int: forced fractions
        z = np.clip(sh.m - e, 1, 63).astype(np.uint64)  # fraction bits below the units
        halfb = _shl(z - one)
        pick = (r1 >> np.uint64(33)) % np.uint64(6)
        pattern = np.select(
            [pick == 0, pick == 1, pick == 2, pick == 3, pick == 4],
            [np.uint64(0), halfb, halfb + one, halfb - one, halfb >> one],
            halfb | (halfb >> one))
        forced = (frac & ~(_shl(z) - one)) | pattern
        use = (((r1 >> np.uint64(32)) & one) == 1) & (e >= 0) & (e < sh.m)
        frac = np.where(use, forced, frac)
    elif sh.drop > 0:                                   # a narrowing: ties of D
        drop = np.uint64(sh.drop)
        low = (one << drop) - one
        delta = ((r1 >> np.uint64(32)) % np.uint64(3)).astype(np.int64) - 1
        forced = (((frac & ~low) | (one << (drop - one))).astype(np.int64) + delta)
        forced = np.clip(forced, 0, int(fmask)).astype(np.uint64)
        frac = np.where(((r1 >> np.uint64(34)) & one) == 1, forced, frac)
    sign = ((r1 >> np.uint64(40)) & one) << np.uint64(sh.bits - 1)
    return sign | (biased << np.uint64(sh.m)) | frac
