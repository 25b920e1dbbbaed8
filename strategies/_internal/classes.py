"""The input classes: the ONE definition shared by the element strategies and the sampler.

A *class* (``FLOAT_CLASSES``, ``INT_VALUE_CLASSES``) is a named kind of input such as
"subnormal" or "snan".  It is made of *variants* (``true_min``, ``single_bit``, ``random``
...), each with an integer weight inside its class, a list of integer *fields* with
inclusive ranges, and a vectorized ``build`` that turns arrays of field values into bit
patterns.  Both consumers read this table and nothing else:

* the hypothesis element strategies (``elements.py``) draw each field with
  ``st.integers(lo, hi)`` and call ``build`` on arrays of length one;
* the numpy sampler (``sampler.py``) draws each field with ``Generator.integers(lo, hi)``
  for all values of a variant at once and calls the same ``build``.

So the two cannot drift apart: a class is changed here, for both.  Each class also has a
vectorized ``contains`` predicate (what the class *is*, judged from the bits), used by the
tests to prove that every generated value belongs to the class that claims it.

Float ``build`` functions return ``uint64`` arrays holding ``fmt`` patterns (sign included);
int ``build`` functions return ``int64`` arrays already inside the int32 range.  Field
arrays arrive as ``uint64`` (``lo >= 0``) or ``int64`` (``lo < 0``).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np

from fuzzfarm.formats import FloatFormat

__all__ = [
    "FLOAT_CLASSES", "INT_VALUE_CLASSES", "NAN_PAYLOADS", "Field", "Variant", "ClassDef",
    "Params", "FLOAT_DEFS", "INT_DEFS", "boundary_table", "int_landmarks", "variants_for",
    "field_dtype", "draw_dtype", "INT32_MIN", "INT32_MAX",
]

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1

#: NaN payload patterns a recipe (or ``float_bits``) may pin; "mixed" draws all of them.
#: They name the variants of the "qnan" and "snan" classes.
NAN_PAYLOADS = ("mixed", "canonical", "one", "all_ones", "single_bit", "random")

U64 = np.uint64
I64 = np.int64


@dataclass(frozen=True)
class Field:
    """One integer field of a variant, drawn uniformly from ``lo..hi`` (inclusive) by the
    sampler and with ``st.integers(lo, hi)`` (which shrinks toward 0, or ``lo``) by
    hypothesis."""

    name: str
    lo: int
    hi: int


def field_dtype(f: Field):
    """The dtype a ``build`` function receives the field in."""
    return U64 if f.lo >= 0 else I64


def draw_dtype(f: Field):
    """The narrowest dtype to draw the field in (32-bit bounded draws are ~4x faster)."""
    if f.lo >= 0:
        return np.uint32 if f.hi < (1 << 32) else U64
    return np.int32 if (f.lo >= INT32_MIN and f.hi <= INT32_MAX) else I64


@dataclass(frozen=True)
class Params:
    """Knobs a recipe turns: the unbiased-exponent window of the "normal" class (``None``:
    the format's whole normal range) and the NaN payload pattern (``NAN_PAYLOADS``)."""

    exponent_window: tuple[int, int] | None = None
    nan_payload: str = "mixed"


FieldsFn = Callable[[FloatFormat, Params], tuple[Field, ...]]
BuildFn = Callable[[dict, FloatFormat, Params], np.ndarray]


@dataclass(frozen=True)
class Variant:
    """One way of producing members of a class; ``weight`` is relative to its siblings."""

    cls: str
    name: str
    weight: int
    fields: FieldsFn
    build: BuildFn


@dataclass(frozen=True)
class ClassDef:
    name: str
    kind: str                 # 'float' | 'int'
    doc: str
    variants: tuple[Variant, ...]
    contains: Callable[[np.ndarray, FloatFormat], np.ndarray]


# ---------------------------------------------------------------- bit-level helpers

def _sign_field() -> Field:
    return Field("sign", 0, 1)


def _pack(sign: np.ndarray, mag: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """OR the sign bit (0/1 array) into magnitude patterns; returns uint64."""
    return mag.astype(U64) | (sign.astype(U64) << U64(fmt.bits - 1))


def _normal_mag(e: np.ndarray, frac: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Magnitude pattern of 2**e * 1.frac (e unbiased, emin <= e <= emax)."""
    return ((e.astype(I64) + fmt.emax).astype(U64) << U64(fmt.frac_bits)) | frac.astype(U64)


def _mag_of_f64(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Magnitude patterns (uint64) of nonnegative float64 values rounded to ``fmt`` (RTE)."""
    return np.asarray(values, dtype=np.float64).astype(fmt.float).view(fmt.uint).astype(U64)


def _one(fmt: FloatFormat) -> int:
    return fmt.emax << fmt.frac_bits


def _mag(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    return np.asarray(bits).astype(U64) & U64(fmt.abs_mask)


def _values(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """float64 values (exact for non-NaN patterns; NaNs come out as NaN)."""
    b = np.asarray(bits).astype(fmt.uint)
    with np.errstate(invalid="ignore"):
        return b.view(fmt.float).astype(np.float64)


def _finite(bits, fmt):
    return _mag(bits, fmt) < U64(fmt.exp_mask)


# ---------------------------------------------------------------- landmark tables

def _near_one_span(fmt: FloatFormat) -> int:
    return 1 << (fmt.frac_bits // 2 + 1)


def _big_k_bits(fmt: FloatFormat) -> int:
    """k*pi/2 stays below 2**(p-2), where ulps are <= 1/2 (far below pi/2)."""
    return min(20, fmt.frac_bits - 1)


@lru_cache(maxsize=None)
def boundary_table(fmt: FloatFormat) -> tuple[tuple[str, int], ...]:
    """The "boundary" class: ``(name, positive pattern)`` rows, simplest first.

    The format's landmarks (1, 0.5, 2, min normal, max finite, true min, max subnormal) and
    their 1-ulp neighbours, then the overflow/underflow thresholds of exp, exp2, exp10 and
    of squaring (ln, log2, log10 and sqrt of max finite, min normal and true min, rounded to
    ``fmt``) with their 1-ulp neighbours.  The sampler gives each row either sign.
    """
    one = _one(fmt)
    half = one - (1 << fmt.frac_bits)
    two = one + (1 << fmt.frac_bits)
    rows = [
        ("one", one), ("half", half), ("two", two),
        ("min_normal", fmt.min_normal), ("max_finite", fmt.max_finite),
        ("true_min", fmt.true_min), ("max_subnormal", fmt.min_normal - 1),
        ("one-ulp", one - 1), ("one+ulp", one + 1), ("half-ulp", half - 1),
        ("half+ulp", half + 1), ("two-ulp", two - 1), ("two+ulp", two + 1),
        ("min_normal+ulp", fmt.min_normal + 1), ("max_subnormal-ulp", fmt.min_normal - 2),
        ("max_finite-ulp", fmt.max_finite - 1), ("true_min+ulp", fmt.true_min + 1),
    ]
    vmax = float(fmt.value(fmt.max_finite))
    vmin = float(fmt.value(fmt.min_normal))
    vtiny = float(fmt.value(fmt.true_min))
    derived = [
        ("ln_max_finite", math.log(vmax)), ("ln_min_normal", -math.log(vmin)),
        ("ln_true_min", -math.log(vtiny)),
        ("log2_overflow", float(fmt.emax + 1)), ("log2_true_min", float(fmt.frac_bits - fmt.emin)),
        ("log2_underflow", float(fmt.frac_bits - fmt.emin + 1)),
        ("log10_max_finite", math.log10(vmax)), ("log10_true_min", -math.log10(vtiny)),
        ("sqrt_max_finite", math.sqrt(vmax)), ("sqrt_min_normal", math.sqrt(vmin)),
        ("sqrt_true_min", math.sqrt(vtiny)),
    ]
    for name, v in derived:
        m = int(_mag_of_f64(np.array([v]), fmt)[0])
        rows += [(name, m), (name + "-ulp", m - 1), (name + "+ulp", m + 1)]
    seen, out = set(), []
    for name, m in rows:
        if m not in seen and 0 < m < fmt.exp_mask:
            seen.add(m)
            out.append((name, m))
    return tuple(out)


@lru_cache(maxsize=None)
def _boundary_array(fmt: FloatFormat) -> np.ndarray:
    return np.array([m for _, m in boundary_table(fmt)], dtype=U64)


@lru_cache(maxsize=None)
def int_landmarks(fmt: FloatFormat) -> tuple[int, ...]:
    """Exponent landmarks for int arguments (ldexp k, pown/rootn n), positive, from ``fmt``:
    p-1, p, emax, emax+1, -emin, 1-emin, the true-min exponent p-1-emin, 2*emax,
    emax-emin, emax-emin+p (ldexp(true_min, k) overflows), and the int width 32.
    For binary32: 23, 24, 127, 128, 126, 127, 149, 254, 253, 277, 32."""
    p, emax, emin = fmt.precision, fmt.emax, fmt.emin
    raw = (p - 1, p, emax, emax + 1, -emin, 1 - emin, p - 1 - emin, 2 * emax, emax - emin,
           emax - emin + p, 32)
    return tuple(dict.fromkeys(raw))


#: int "extreme" values, simplest first.
_INT_EXTREMES = (0, 1, -1, 2, -2, INT32_MAX, INT32_MIN, INT32_MAX - 1, INT32_MIN + 1)


# ---------------------------------------------------------------- float classes
# Each builder takes (fields, fmt, params) and returns uint64 patterns.

def _b_zero(f, fmt, p):
    return _pack(f["sign"], np.zeros_like(f["sign"]), fmt)


def _b_inf(f, fmt, p):
    return _pack(f["sign"], np.full(f["sign"].shape, fmt.exp_mask, dtype=U64), fmt)


def _const(mag_of_fmt: Callable[[FloatFormat], int]) -> BuildFn:
    def build(f, fmt, p):
        return _pack(f["sign"], np.full(f["sign"].shape, mag_of_fmt(fmt), dtype=U64), fmt)
    return build


def _signed(*fields: Callable[[FloatFormat, Params], Field]) -> FieldsFn:
    def fn(fmt, p):
        return (_sign_field(),) + tuple(g(fmt, p) for g in fields)
    return fn


# subnormal
def _b_sub_single(f, fmt, p):
    return _pack(f["sign"], U64(1) << f["k"], fmt)


def _b_sub_frac(f, fmt, p):
    return _pack(f["sign"], f["frac"], fmt)


# normal (exponent window from params)
def _window(fmt: FloatFormat, p: Params) -> tuple[int, int]:
    if p.exponent_window is None:
        return fmt.emin, fmt.emax
    lo, hi = p.exponent_window
    lo = min(max(lo, fmt.emin), fmt.emax)
    hi = min(max(hi, fmt.emin), fmt.emax)
    return lo, max(lo, hi)


def _b_normal(f, fmt, p):
    return _pack(f["sign"], _normal_mag(f["e"], f["frac"], fmt), fmt)


def _b_binade_edge(f, fmt, p):
    # d in 0..7: 0..3 -> frac = d (just above 2**e), 4..7 -> frac = all-ones - (d-4)
    d = f["d"]
    frac = np.where(d < U64(4), d, U64(fmt.frac_mask) - (d - U64(4)))
    return _pack(f["sign"], _normal_mag(f["e"], frac, fmt), fmt)


# power_of_two
def _b_pow2(f, fmt, p):
    return _pack(f["sign"], _normal_mag(f["e"], np.zeros_like(f["sign"]), fmt), fmt)


# integer
def _b_int_value(f, fmt, p):
    return _pack(f["sign"], _mag_of_f64(f["n"].astype(np.float64), fmt), fmt)


def _b_int_odd(f, fmt, p):
    n = f["r"] * U64(2) + U64(1)
    return _pack(f["sign"], _mag_of_f64(n.astype(np.float64), fmt), fmt)


def _b_int_near(f, fmt, p):
    # 2**(frac_bits + which) + d: the 2**23 and 2**24 regions of binary32 (rounded RTE)
    base = np.left_shift(I64(1), (f["which"].astype(I64) + I64(fmt.frac_bits)))
    n = base + f["d"]
    return _pack(f["sign"], _mag_of_f64(n.astype(np.float64), fmt), fmt)


# half_integer
def _b_half(f, fmt, p):
    v = (f["n"].astype(np.float64) * 2.0 + 1.0) * 0.5
    return _pack(f["sign"], _mag_of_f64(v, fmt), fmt)


def _b_half_top(f, fmt, p):
    v = float(1 << fmt.frac_bits) - f["d"].astype(np.float64) + 0.5
    return _pack(f["sign"], _mag_of_f64(v, fmt), fmt)


# near_one
def _b_near_one(f, fmt, p):
    return _pack(f["sign"], (I64(_one(fmt)) + f["d"]).astype(U64), fmt)


# boundary
def _b_boundary(f, fmt, p):
    return _pack(f["sign"], _boundary_array(fmt)[f["i"]], fmt)


# half_pi_multiple
def _b_half_pi(f, fmt, p):
    m = _mag_of_f64(f["k"].astype(np.float64) * (math.pi / 2), fmt).astype(I64) + f["d"]
    return _pack(f["sign"], np.clip(m, 1, fmt.max_finite).astype(U64), fmt)


# NaNs: payload = the significand bits below the quiet bit
def _payload_bits(fmt):
    return fmt.frac_bits - 1


def _nan_builder(quiet: bool, payload: Callable) -> BuildFn:
    def build(f, fmt, p):
        pay = payload(f, fmt).astype(U64)
        top = fmt.exp_mask | (fmt.quiet_bit if quiet else 0)
        return _pack(f["sign"], pay | U64(top), fmt)
    return build


def _nan_variants(cls: str, quiet: bool) -> tuple[Variant, ...]:
    pb = _payload_bits
    canon = (lambda f, fmt: np.zeros_like(f["sign"])) if quiet else \
        (lambda f, fmt: np.full(f["sign"].shape, fmt.quiet_bit >> 1, dtype=U64))
    return (
        Variant(cls, "canonical", 1, _signed(), _nan_builder(quiet, canon)),
        Variant(cls, "one", 1, _signed(), _nan_builder(quiet, lambda f, fmt: np.ones_like(f["sign"]))),
        Variant(cls, "all_ones", 1, _signed(),
                _nan_builder(quiet, lambda f, fmt: np.full(f["sign"].shape, (1 << pb(fmt)) - 1, dtype=U64))),
        Variant(cls, "single_bit", 1, _signed(lambda fmt, p: Field("k", 0, pb(fmt) - 1)),
                _nan_builder(quiet, lambda f, fmt: U64(1) << f["k"])),
        Variant(cls, "random", 3, _signed(lambda fmt, p: Field("payload", 0 if quiet else 1,
                                                               (1 << pb(fmt)) - 1)),
                _nan_builder(quiet, lambda f, fmt: f["payload"])),
    )


# random_bits
def _b_random(f, fmt, p):
    return f["r"]


# ---- contains predicates (judged from the bits, on arrays of fmt patterns)

def _c_zero(b, fmt):
    return _mag(b, fmt) == 0


def _c_sub(b, fmt):
    m = _mag(b, fmt)
    return (m > 0) & (m < U64(fmt.min_normal))


def _c_normal(b, fmt):
    m = _mag(b, fmt)
    return (m >= U64(fmt.min_normal)) & (m < U64(fmt.exp_mask))


def _c_inf(b, fmt):
    return _mag(b, fmt) == U64(fmt.exp_mask)


def _c_nan(quiet):
    def c(b, fmt):
        m = _mag(b, fmt)
        q = (m & U64(fmt.quiet_bit)) != 0
        return (m > U64(fmt.exp_mask)) & (q if quiet else ~q)
    return c


def _c_boundary(b, fmt):
    return np.isin(_mag(b, fmt), _boundary_array(fmt))


def _c_integer(b, fmt):
    v = _values(b, fmt)
    with np.errstate(invalid="ignore"):
        return _finite(b, fmt) & (v != 0) & (np.floor(v) == v)


def _c_half_integer(b, fmt):
    v = np.abs(_values(b, fmt))
    with np.errstate(invalid="ignore"):
        return _finite(b, fmt) & (v - np.floor(v) == 0.5)


def _c_pow2(b, fmt):
    m = _mag(b, fmt)
    frac0 = (m & U64(fmt.frac_mask)) == 0
    return _c_normal(b, fmt) & frac0


def _c_near_one(b, fmt):
    d = _mag(b, fmt).astype(I64) - I64(_one(fmt))
    return np.abs(d) <= _near_one_span(fmt)


def _c_half_pi(b, fmt):
    m = _mag(b, fmt)
    v = np.abs(_values(b, fmt))
    with np.errstate(invalid="ignore"):
        k = np.rint(v / (math.pi / 2))
        near = _mag_of_f64(np.where(np.isfinite(k), k, 0) * (math.pi / 2), fmt).astype(I64)
        ok = np.abs(m.astype(I64) - near) <= 3
    return _finite(b, fmt) & (k >= 1) & (k <= 2.0 ** _big_k_bits(fmt)) & ok


def _c_all(b, fmt):
    return np.ones(np.shape(b), dtype=bool)


def _fld(name, lo, hi):
    """A Field whose bounds are functions of the format (or constants)."""
    def g(fmt, p):
        return Field(name, lo(fmt) if callable(lo) else lo, hi(fmt) if callable(hi) else hi)
    return g


FLOAT_DEFS: tuple[ClassDef, ...] = (
    ClassDef("zero", "float", "+0 and -0.", (
        Variant("zero", "signed_zero", 1, _signed(), _b_zero),
    ), _c_zero),
    ClassDef("integer", "float",
             "Nonzero integral values of either sign: small (1..300), random below 2**p, "
             "random odd below 2**p, the 2**(p-1) and 2**p regions (2**23, 2**24 +- 4 for "
             "binary32, rounded), and large ones (exponent >= p).", (
        Variant("integer", "small", 3, _signed(_fld("n", 1, 300)), _b_int_value),
        Variant("integer", "below_2p", 2, _signed(_fld("n", 1, lambda f: (1 << f.precision) - 1)),
                _b_int_value),
        Variant("integer", "odd", 2, _signed(_fld("r", 0, lambda f: (1 << f.frac_bits) - 1)),
                _b_int_odd),
        Variant("integer", "near_2p", 2, _signed(_fld("which", 0, 1), _fld("d", -4, 4)), _b_int_near),
        Variant("integer", "large", 1, _signed(_fld("e", lambda f: f.precision, lambda f: f.emax),
                                               _fld("frac", 0, lambda f: f.frac_mask)), _b_normal),
    ), _c_integer),
    ClassDef("power_of_two", "float",
             "Normal powers of two 2**e of either sign, e in -8..8 or the whole normal range "
             "(subnormal powers of two are in 'subnormal').", (
        Variant("power_of_two", "small_exponent", 2, _signed(_fld("e", lambda f: max(f.emin, -8),
                                                              lambda f: min(f.emax, 8))), _b_pow2),
        Variant("power_of_two", "any", 2, _signed(_fld("e", lambda f: f.emin, lambda f: f.emax)),
                _b_pow2),
    ), _c_pow2),
    ClassDef("half_integer", "float",
             "n + 0.5 of either sign: n in 0..300, n random below 2**(p-1) (all representable), "
             "and the largest ones (2**(p-1) - d + 0.5, d in 1..4).", (
        Variant("half_integer", "small", 3, _signed(_fld("n", 0, 300)), _b_half),
        Variant("half_integer", "any", 2, _signed(_fld("n", 0, lambda f: (1 << f.frac_bits) - 1)),
                _b_half),
        Variant("half_integer", "top", 1, _signed(_fld("d", 1, 4)), _b_half_top),
    ), _c_half_integer),
    ClassDef("near_one", "float",
             "+-1 moved by d ulps (patterns): |d| <= 8 or |d| <= 2**(frac_bits//2 + 1) "
             "(4096 for binary32): log, log1p, pow, acos, asin near their singular points.", (
        Variant("near_one", "close", 2, _signed(_fld("d", -8, 8)), _b_near_one),
        Variant("near_one", "wide", 1, _signed(_fld("d", lambda f: -_near_one_span(f),
                                                     lambda f: _near_one_span(f))), _b_near_one),
    ), _c_near_one),
    ClassDef("boundary", "float",
             "Landmarks of the format with either sign (see boundary_table): 1, 0.5, 2, min "
             "normal, max finite, true min, max subnormal, their 1-ulp neighbours, and the "
             "overflow/underflow thresholds of exp, exp2, exp10 and squaring.", (
        Variant("boundary", "table", 1, _signed(_fld("i", 0, lambda f: len(boundary_table(f)) - 1)),
                _b_boundary),
    ), _c_boundary),
    ClassDef("normal", "float",
             "Random normal values: exponent uniform in the window (default: emin..emax), "
             "random significand (3 in 4), or a significand within 4 ulps of either binade edge.", (
        Variant("normal", "random", 3, _signed(lambda f, p: Field("e", *_window(f, p)),
                                               _fld("frac", 0, lambda f: f.frac_mask)), _b_normal),
        Variant("normal", "binade_edge", 1, _signed(lambda f, p: Field("e", *_window(f, p)),
                                                    _fld("d", 0, 7)), _b_binade_edge),
    ), _c_normal),
    ClassDef("subnormal", "float",
             "Subnormals of either sign: true_min, the largest subnormal, single-bit ones "
             "(subnormal powers of two), small significands (1..255) and random ones.", (
        Variant("subnormal", "true_min", 1, _signed(), _const(lambda f: f.true_min)),
        Variant("subnormal", "max_subnormal", 1, _signed(), _const(lambda f: f.min_normal - 1)),
        Variant("subnormal", "single_bit", 1, _signed(_fld("k", 0, lambda f: f.frac_bits - 1)),
                _b_sub_single),
        Variant("subnormal", "small", 1, _signed(_fld("frac", 1, 255)), _b_sub_frac),
        Variant("subnormal", "random", 2, _signed(_fld("frac", 1, lambda f: f.frac_mask)),
                _b_sub_frac),
    ), _c_sub),
    ClassDef("inf", "float", "+inf and -inf.", (
        Variant("inf", "signed_inf", 1, _signed(), _b_inf),
    ), _c_inf),
    ClassDef("qnan", "float",
             "Quiet NaNs of either sign; payload (bits below the quiet bit): canonical (0), "
             "1, all ones, a single bit, or random (weight 3 of 7).",
             _nan_variants("qnan", True), _c_nan(True)),
    ClassDef("snan", "float",
             "Signaling NaNs of either sign; payload (nonzero, quiet bit clear): canonical "
             "(the top payload bit, as C's signaling_NaN()), 1, all ones, a single bit, or "
             "random (weight 3 of 7).",
             _nan_variants("snan", False), _c_nan(False)),
    ClassDef("half_pi_multiple", "float",
             "Within 2 ulps of k*pi/2 (rounded to the format) of either sign, k in 1..64 "
             "(2 in 3) or 65..2**min(20, p-2): the argument-reduction hard cases of sin/cos/tan.", (
        Variant("half_pi_multiple", "small", 2, _signed(_fld("k", 1, 64), _fld("d", -2, 2)),
                _b_half_pi),
        Variant("half_pi_multiple", "large", 1,
                _signed(_fld("k", 65, lambda f: 1 << _big_k_bits(f)), _fld("d", -2, 2)), _b_half_pi),
    ), _c_half_pi),
    ClassDef("random_bits", "float", "Uniformly random bit patterns (any class).", (
        Variant("random_bits", "uniform", 1, lambda f, p: (Field("r", 0, (1 << f.bits) - 1),),
                _b_random),
    ), _c_all),
)

# ---------------------------------------------------------------- int classes
# builders return int64 inside the int32 range


def _b_extreme(f, fmt, p):
    return np.array(_INT_EXTREMES, dtype=I64)[f["i"]]


def _b_small(f, fmt, p):
    return f["n"]


def _b_int_pow2(f, fmt, p):
    mag = np.left_shift(I64(1), f["k"].astype(I64)) + f["d"]
    v = np.where(f["sign"] == 1, -mag, mag)
    return np.clip(v, INT32_MIN, INT32_MAX)


def _b_landmark(f, fmt, p):
    mag = np.array(int_landmarks(fmt), dtype=I64)[f["i"]] + f["d"]
    return np.where(f["sign"] == 1, -mag, mag)


def _b_int_random(f, fmt, p):
    return f["r"]


@lru_cache(maxsize=None)
def _int_pow2_set() -> np.ndarray:
    vals = {max(INT32_MIN, min(INT32_MAX, s * ((1 << k) + d)))
            for k in range(32) for d in (-1, 0, 1) for s in (1, -1)}
    return np.array(sorted(vals), dtype=I64)


@lru_cache(maxsize=None)
def _landmark_set(fmt) -> np.ndarray:
    vals = {s * (m + d) for m in int_landmarks(fmt) for d in range(-2, 3) for s in (1, -1)}
    return np.array(sorted(vals), dtype=I64)


INT_DEFS: tuple[ClassDef, ...] = (
    ClassDef("extreme", "int", "0, 1, -1, 2, -2, INT_MAX, INT_MIN, INT_MAX-1, INT_MIN+1.", (
        Variant("extreme", "table", 1, lambda f, p: (Field("i", 0, len(_INT_EXTREMES) - 1),),
                _b_extreme),
    ), lambda v, fmt: np.isin(np.asarray(v, dtype=I64), np.array(_INT_EXTREMES, dtype=I64))),
    ClassDef("small", "int", "Uniform in -300..300 (pown/rootn/ldexp exponents).", (
        Variant("small", "uniform", 1, lambda f, p: (Field("n", -300, 300),), _b_small),
    ), lambda v, fmt: np.abs(np.asarray(v, dtype=I64)) <= 300),
    ClassDef("power_of_two", "int", "+-(2**k + d), k in 0..31, d in -1..1, clipped to int32.", (
        Variant("power_of_two", "signed", 1,
                lambda f, p: (Field("sign", 0, 1), Field("k", 0, 31), Field("d", -1, 1)),
                _b_int_pow2),
    ), lambda v, fmt: np.isin(np.asarray(v, dtype=I64), _int_pow2_set())),
    ClassDef("exponent_landmark", "int",
             "+-(L + d), d in -2..2, L an exponent landmark of the format (int_landmarks: "
             "23, 24, 126, 127, 128, 149, 253, 254, 277, 32 for binary32).", (
        Variant("exponent_landmark", "signed", 1,
                lambda f, p: (Field("sign", 0, 1), Field("i", 0, len(int_landmarks(f)) - 1),
                              Field("d", -2, 2)), _b_landmark),
    ), lambda v, fmt: np.isin(np.asarray(v, dtype=I64), _landmark_set(fmt))),
    ClassDef("random_bits", "int", "Uniformly random int32.", (
        Variant("random_bits", "uniform", 1, lambda f, p: (Field("r", INT32_MIN, INT32_MAX),),
                _b_int_random),
    ), lambda v, fmt: np.ones(np.shape(v), dtype=bool)),
)

#: The classes of a float argument, simplest first (the order hypothesis shrinks toward).
FLOAT_CLASSES: tuple[str, ...] = tuple(c.name for c in FLOAT_DEFS)
#: The classes of an int argument, simplest first.
INT_VALUE_CLASSES: tuple[str, ...] = tuple(c.name for c in INT_DEFS)

FLOAT_BY_NAME = {c.name: c for c in FLOAT_DEFS}
INT_BY_NAME = {c.name: c for c in INT_DEFS}


def variants_for(cdef: ClassDef, params: Params) -> tuple[Variant, ...]:
    """The variants of a class under ``params``: a pinned NaN payload keeps only that
    variant of "qnan" and "snan"."""
    if cdef.name in ("qnan", "snan") and cdef.kind == "float" and params.nan_payload != "mixed":
        return tuple(v for v in cdef.variants if v.name == params.nan_payload)
    return cdef.variants


# ---------------------------------------------------------------- special-value pool
_SPECIAL_VALUES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.5, 10.0,
                   0.3, 1e-3, 100.0)


@lru_cache(maxsize=None)
def special_float_bits(fmt: FloatFormat) -> tuple[int, ...]:
    """The special-value pool: every boundary pattern and small integer, half-integer and
    fraction of both signs, ±0, ±inf, the largest odd and smallest even integers (2**p - 1,
    2**p), and quiet and signaling NaNs of both signs with distinct payloads.  Patterns
    (ints), sorted; run as the first batch of every built-in so every rule meets its
    inputs."""
    mags = {m for _, m in boundary_table(fmt)} | {0, fmt.pos_inf}
    for v in _SPECIAL_VALUES + (2.0 ** fmt.precision - 1, 2.0 ** fmt.precision,
                                2.0 ** (fmt.precision - 1) + 1):
        mags.add(int(_mag_of_f64(np.array([v]), fmt)[0]))
    out = set()
    for m in mags:
        out.add(m)
        out.add(m | fmt.sign_mask)
    q = fmt.default_qnan
    out |= {q, q | 1, q | fmt.sign_mask, (q | fmt.sign_mask) + 3,
            fmt.pos_inf | 1, fmt.pos_inf | (fmt.quiet_bit >> 1), fmt.sign_mask | fmt.pos_inf | 5}
    return tuple(sorted(out))


def special_int_values() -> tuple[int, ...]:
    """int arguments of the special-value pool: the extremes, -5..5 and the exponent
    landmarks of binary32 with either sign."""
    from fuzzfarm.formats import BINARY32 as _B32
    vals = set(_INT_EXTREMES) | set(range(-5, 6))
    for k in int_landmarks(_B32):
        vals |= {k, -k}
    return tuple(sorted(vals))
