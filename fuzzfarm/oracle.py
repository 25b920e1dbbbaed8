"""The reference: infinitely precise results (mpmath), correct rounding, and the ULP measure.

Precision and rounding are explicit arguments everywhere (STYLE.md point 3): ``prec`` is
the working precision in bits; ``mode`` one of the OpenCL rounding modes ``rte``, ``rtz``,
``rtp``, ``rtn`` (``ROUNDING`` maps them to mpmath's letters: note mpmath's ``'d'`` means
toward *zero*).

mpmath has no negative zero and one NaN (NOTES.md): a reference is therefore either an
``mpf`` (a finite, nonzero real known to ``prec`` bits, or an exactly representable one),
or ``Exact(bits)`` (the one correct pattern, for exact operations, infinities and signed
zeros), or ``None`` (no real value: the input is outside the domain).  Prescribed results
for special inputs are the catalogue's business (edgecases/); this module computes values
for the inputs no rule covers.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import mpmath
from mpmath import mpf

from fuzzfarm.formats import FloatFormat

__all__ = [
    "ROUNDING", "Exact", "round_to_bits", "ulp", "ulp_error", "value_of",
    "REFERENCES", "EXACT_FUNCTIONS", "reference",
]

#: OpenCL rounding mode -> mpmath rounding letter ('d' is toward zero, 'f' toward -inf).
ROUNDING = {"rte": "n", "rtz": "d", "rtp": "c", "rtn": "f"}


@dataclass(frozen=True)
class Exact:
    """An exactly known result pattern (or, for int outputs, the int value)."""

    bits: int


def value_of(bits: int, fmt: FloatFormat) -> mpf:
    """The exact value of a finite pattern as an mpf (-0 becomes 0).  Raises ValueError
    for NaN; returns mpmath's +-inf for infinities."""
    v = fmt.value(bits)
    return mpf(v)


# --------------------------------------------------------------------------- rounding
def _round_int(n: int, shift: int, mode: str, negative: bool) -> int:
    """Round the non-negative integer ``n * 2**-shift`` (shift > 0) to an integer."""
    q, r = divmod(n, 1 << shift)
    if r == 0:
        return q
    half = 1 << (shift - 1)
    if mode == "rte":
        return q + 1 if (r > half or (r == half and q & 1)) else q
    if mode == "rtz":
        return q
    if mode == "rtp":
        return q if negative else q + 1
    if mode == "rtn":
        return q + 1 if negative else q
    raise ValueError(f"mode={mode!r} is not one of {sorted(ROUNDING)}")


def round_to_bits(value, fmt: FloatFormat, mode: str = "rte") -> int:
    """Round a real value to ``fmt`` in rounding ``mode``, with gradual underflow and
    overflow as IEEE 754-2008 §4.3 and §7.4 define them.

    ``value`` is an mpf (or int/float) taken as exact; a zero gives +0, mpmath's infinities
    give the infinity.  Returns the pattern as an int.  Raises ValueError for NaN or an
    unknown mode.
    """
    v = mpf(value)
    if mpmath.isnan(v):
        raise ValueError("round_to_bits: NaN has no rounding; judge NaNs from the bits")
    if mode not in ROUNDING:
        raise ValueError(f"mode={mode!r} is not one of {sorted(ROUNDING)}")
    negative = v < 0
    sign = fmt.sign_mask if negative else 0
    if mpmath.isinf(v):
        return sign | fmt.pos_inf
    if v == 0:
        return 0
    man, exp = abs(v).man_exp  # |v| = man * 2**exp exactly, man odd
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    e = exp + man.bit_length() - 1  # floor(log2 |v|)
    if e > emax:  # beyond the largest binade: no need to build the (huge) integer
        to_inf = mode == "rte" or (mode == "rtp" and not negative) or (mode == "rtn" and negative)
        return sign | (fmt.pos_inf if to_inf else fmt.max_finite)
    if e < emin - p - 1:  # below half the smallest subnormal, and not a tie
        away = (mode == "rtp" and not negative) or (mode == "rtn" and negative)
        return sign | (fmt.true_min if away else 0)
    q = max(e, emin) - p + 1  # quantum exponent of the binade (or the subnormal one)
    if exp >= q:
        n = man << (exp - q)
    else:
        n = _round_int(man, q - exp, mode, negative)
    if n.bit_length() > p:  # carried into the next binade
        n >>= 1
        q += 1
    if n == 0:
        return sign
    top = q + n.bit_length() - 1
    if top > emax:
        to_inf = mode == "rte" or (mode == "rtp" and not negative) or (mode == "rtn" and negative)
        return sign | (fmt.pos_inf if to_inf else fmt.max_finite)
    if n.bit_length() < p:  # subnormal (q == emin - p + 1)
        return int(sign | n)
    biased = top + fmt.emax
    return int(sign | (biased << fmt.frac_bits) | (n - (1 << (p - 1))))


# --------------------------------------------------------------------------- ULP
def ulp(value, fmt: FloatFormat) -> mpf:
    """ulp(x) as the OpenCL spec defines it (Muller, INRIA RR-5504, cited in OpenCL C 3.0
    §7.4): the gap between the two finite floats around x; for a representable x the gap
    between the two non-equal finite floats nearest x (so at a power of two, the gap
    *below* it); beyond the largest finite value, the gap below the largest finite value;
    ulp(0) is the smallest subnormal.  ``value`` is an exact real (mpf); returns a power of
    two as an mpf.
    """
    a = abs(mpf(value))
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    if a == 0:
        return mpmath.ldexp(1, emin - p + 1)
    man, exp = a.man_exp
    e = exp + man.bit_length() - 1
    if e > emax:
        return mpmath.ldexp(1, emax - p + 1)
    if e < emin:
        return mpmath.ldexp(1, emin - p + 1)
    if man == 1 and e > emin:  # an exact power of two: the gap below is the smaller one
        return mpmath.ldexp(1, e - p)
    return mpmath.ldexp(1, e - p + 1)


def ulp_error(got_bits: int, ref, fmt: FloatFormat, overflow_modes=("rte",)) -> float:
    """The error of a device result in ULPs of the reference: |got - ref| / ulp(ref).

    ``got_bits`` is a non-NaN pattern; ``ref`` a finite real (mpf).  An infinite result is
    exact (error 0) where ``ref`` rounds to that infinity in one of ``overflow_modes``;
    otherwise it stands for 2**(emax+1), the next value of an exponent-unbounded format
    (the convention of the Khronos conformance tests), so that premature overflow costs
    ULPs rather than counting as infinitely wrong.  Returns a float (may be inf).
    """
    g = fmt.value(got_bits)
    r = mpf(ref)
    if math.isinf(g):
        for m in overflow_modes:
            if round_to_bits(r, fmt, m) == fmt.bits_of(g):
                return 0.0
        g_val = mpmath.ldexp(1 if g > 0 else -1, fmt.emax + 1)
    else:
        g_val = mpf(g)
    return float(abs(g_val - r) / ulp(r, fmt))


# --------------------------------------------------------------------------- references
class _Undefined(Exception):
    pass


def _pow_real(x: mpf, y) -> mpf:
    """x**y for x > 0 with the magnitude clamped far outside every format's range (mpmath
    would build numbers with astronomically large exponents).  The clamp keeps the verdict:
    any clamped value rounds and measures like the true one (see ``_CLAMP``)."""
    with mpmath.workprec(64):
        l2 = mpf(y) * mpmath.log(x, 2)
    if l2 > _CLAMP:
        return mpmath.ldexp(1, _CLAMP)
    if l2 < -_CLAMP:
        return mpmath.ldexp(1, -_CLAMP)
    return mpmath.power(x, y)


_CLAMP = 1 << 14  # beyond binary64's range by far; 2**+-16384 rounds like anything larger


def _signed_pow(x: mpf, y) -> mpf:
    """x**y for real x != 0 where y is an integer if x < 0."""
    if x > 0:
        return _pow_real(x, y)
    y_int = int(y)
    mag = _pow_real(-x, y)
    return -mag if y_int % 2 else mag


def _pown(x, n):
    if mpmath.isinf(x):
        if n > 0:
            return mpmath.inf if (x > 0 or n % 2 == 0) else -mpmath.inf
        return ("zero", x < 0 and n % 2 == 1)
    return _signed_pow(x, n)


def _powr(x, y):
    if x < 0:
        raise _Undefined
    if mpmath.isinf(x):  # +inf ** y, y != 0 (powr(+inf, 0) is a rule)
        return mpmath.inf if y > 0 else ("zero", False)
    if mpmath.isinf(y):  # x > 0 finite, x != 1 (powr(1, inf) is a rule)
        big = (x > 1) == (y > 0)
        return mpmath.inf if big else ("zero", False)
    return _pow_real(x, y)


def _pow(x, y):
    if x < 0 and not mpmath.isinf(y) and y != int(y):
        raise _Undefined
    return _signed_pow(x, y)


def _rootn(x, n):
    if n == 0 or (x < 0 and n % 2 == 0):
        raise _Undefined
    if mpmath.isinf(x):
        if n > 0:
            return x
        return ("zero", x < 0)
    mag = _pow_real(abs(x), mpf(1) / n)
    return -mag if x < 0 else mag


def _tanpi(x):
    c = mpmath.cospi(x)
    if c == 0:
        raise _Undefined  # n + 0.5: a rule prescribes the infinity
    return mpmath.sinpi(x) / c


def _domain(lo, hi):
    def check(x):
        if not (lo <= x <= hi):
            raise _Undefined
    return check


def _asin(x):
    _domain(-1, 1)(x)
    return mpmath.asin(x)


def _acos(x):
    _domain(-1, 1)(x)
    return mpmath.acos(x)


def _positive(fn):
    def f(x):
        if x <= 0:
            raise _Undefined
        return fn(x)
    return f


def _cbrt(x):
    return -mpmath.cbrt(-x) if x < 0 else mpmath.cbrt(x)


def _sqrt(x):
    if x < 0:
        raise _Undefined
    return mpmath.sqrt(x)


def _log1p(x):
    if x <= -1:
        raise _Undefined
    return mpmath.log1p(x)


def _exp_like(base):
    def f(x):
        return _pow_real(mpf(base), x)
    return f


def _exp(x):
    return _pow_real(mpmath.e, x) if abs(x) > 1 << 12 else mpmath.exp(x)


def _sinh_cosh(fn):
    def f(x):
        if abs(x) > 1 << 12:  # |sinh|, cosh beyond every format; sign kept
            big = mpmath.ldexp(1, _CLAMP)
            return big if (fn is mpmath.cosh or x > 0) else -big
        return fn(x)
    return f


#: Real-valued references: name -> f(*args) on mpf (float args) and int (int args),
#: evaluated under the caller's working precision.  A tuple ("zero", negative) is an
#: exact signed zero; raising _Undefined means no real value.
REFERENCES: dict[str, Callable] = {
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "sinpi": mpmath.sinpi, "cospi": mpmath.cospi, "tanpi": _tanpi,
    "asin": _asin, "acos": _acos, "atan": mpmath.atan, "atan2": mpmath.atan2,
    "asinpi": lambda x: _asin(x) / mpmath.pi, "acospi": lambda x: _acos(x) / mpmath.pi,
    "atanpi": lambda x: mpmath.atan(x) / mpmath.pi,
    "atan2pi": lambda y, x: mpmath.atan2(y, x) / mpmath.pi,
    "sinh": _sinh_cosh(mpmath.sinh), "cosh": _sinh_cosh(mpmath.cosh), "tanh": mpmath.tanh,
    "exp": _exp, "exp2": _exp_like(2), "exp10": _exp_like(10), "expm1": lambda x: (
        mpmath.expm1(x) if x < 1 << 12 else mpmath.ldexp(1, _CLAMP)),
    "log": _positive(mpmath.log), "log2": _positive(lambda x: mpmath.log(x, 2)),
    "log10": _positive(mpmath.log10), "log1p": _log1p,
    "sqrt": _sqrt,
    "rsqrt": _positive(lambda x: 1 / mpmath.sqrt(x)), "cbrt": _cbrt,
    "pow": _pow, "pown": _pown, "powr": _powr, "rootn": _rootn, "hypot": mpmath.hypot,
}


# --------------------------------------------------------------------------- exact ops
def _f(bits: int, fmt: FloatFormat) -> float:
    return fmt.value(bits)


def _ex(value: float, fmt: FloatFormat) -> Exact:
    return Exact(fmt.bits_of(value))


def _round_exact(value: mpf, fmt, mode) -> Exact:
    return Exact(round_to_bits(value, fmt, mode))


def _fmod(fmt, mode, x, y):
    return (_ex(math.fmod(_f(x, fmt), _f(y, fmt)), fmt),)


def _remainder(fmt, mode, x, y):
    return (_ex(math.remainder(_f(x, fmt), _f(y, fmt)), fmt),)


def _fdim(fmt, mode, x, y):
    a, b = _f(x, fmt), _f(y, fmt)
    if not a > b:
        return (Exact(0),)
    if math.isinf(a) or math.isinf(b):
        return (Exact(fmt.pos_inf),)
    return (_round_exact(mpmath.fsub(a, b, exact=True), fmt, mode),)


def _fmin(fmt, mode, x, y):
    return (Exact(x if _f(x, fmt) <= _f(y, fmt) else y),)


def _fmax(fmt, mode, x, y):
    return (Exact(x if _f(x, fmt) >= _f(y, fmt) else y),)


def _signed_integral(fmt, x_bits, value: float) -> Exact:
    """An integral result with the sign of the argument (IEEE roundToIntegral keeps it)."""
    neg = bool(x_bits & fmt.sign_mask)
    return _ex(math.copysign(value, -1.0 if neg else 1.0), fmt)


def _rounding_op(op):
    def f(fmt, mode, x):
        v = _f(x, fmt)
        if math.isinf(v) or v == int(v):
            return (Exact(x),)
        return (_signed_integral(fmt, x, float(op(v))),)
    return f


def _round_half_away(v: float) -> float:
    return math.copysign(math.floor(abs(v) + 0.5), v)


def _nextafter(fmt, mode, x, y):
    a, b = _f(x, fmt), _f(y, fmt)
    if a == b:
        return (Exact(y),)
    if a == 0:
        return (Exact(fmt.true_min | (fmt.sign_mask if b < 0 else 0)),)
    up = (b > a) == (a > 0)  # away from zero in magnitude
    return (Exact(x + 1 if up else x - 1),)


def _ldexp(fmt, mode, x, k):
    return (_round_exact(mpmath.ldexp(mpf(_f(x, fmt)), int(k)), fmt, mode),)


def _frexp(fmt, mode, x):
    m, e = math.frexp(_f(x, fmt))
    return (_ex(m, fmt), Exact(e))


def _modf(fmt, mode, x):
    v = _f(x, fmt)
    neg = -1.0 if x & fmt.sign_mask else 1.0
    ip = math.copysign(float(math.trunc(v)), neg)
    return (_ex(math.copysign(v - ip, neg), fmt), _ex(ip, fmt))


def _fract(fmt, mode, x):
    """fract(x) = fmin(x - floor(x), 0x1.fffffep-1f), iptr = floor(x) (OpenCL C 6.15.2)."""
    v = _f(x, fmt)
    fl = float(math.floor(v))
    cap = round_to_bits(1 - mpmath.ldexp(1, -fmt.precision), fmt, "rtz")
    frac = round_to_bits(mpmath.fsub(v, fl, exact=True), fmt, mode)
    ret = min(frac, cap)  # fmin(x - floor(x), 0x1.fffffep-1f) on non-negative patterns
    return (Exact(ret), _ex(fl, fmt))


def _ilogb(fmt, mode, x):
    m, e = math.frexp(_f(x, fmt))
    return (Exact(e - 1),)


def _logb(fmt, mode, x):
    m, e = math.frexp(_f(x, fmt))
    return (_ex(float(e - 1), fmt),)


def _copysign(fmt, mode, x, y):
    return (Exact((x & fmt.abs_mask) | (y & fmt.sign_mask)),)


#: Exact operations: name -> f(fmt, mode, *args) returning one Exact per output.  Float
#: arguments arrive as patterns (non-NaN; callers handle NaN by rule), int ones as ints.
EXACT_FUNCTIONS: dict[str, Callable] = {
    "fmod": _fmod, "remainder": _remainder, "fdim": _fdim, "fmin": _fmin, "fmax": _fmax,
    "ceil": _rounding_op(math.ceil), "floor": _rounding_op(math.floor),
    "trunc": _rounding_op(math.trunc), "rint": _rounding_op(round),
    "round": _rounding_op(_round_half_away), "nextafter": _nextafter, "ldexp": _ldexp,
    "frexp": _frexp, "modf": _modf, "fract": _fract, "ilogb": _ilogb, "logb": _logb,
    "copysign": _copysign,
}


def reference(name: str, args: tuple, kinds: tuple, fmt: FloatFormat, prec: int,
              mode: str = "rte"):
    """The reference for one input of built-in ``name``.

    ``args`` are patterns (float arguments, non-NaN) and ints (int arguments); ``kinds``
    their kinds ('float'/'int').  Returns a tuple with one entry per output: an ``Exact``,
    an ``mpf`` (finite nonzero real at ``prec`` bits, or exact), or None (no real value).
    ``mode`` is the rounding mode for exact operations that round (fdim, ldexp, fract).
    Raises KeyError for a built-in without a reference.
    """
    if name in EXACT_FUNCTIONS:
        return EXACT_FUNCTIONS[name](fmt, mode, *[int(a) for a in args])
    fn = REFERENCES[name]
    vals = [value_of(a, fmt) if k == "float" else int(a) for a, k in zip(args, kinds)]
    try:
        with mpmath.workprec(prec):
            r = fn(*vals)
    except _Undefined:
        return (None,)
    if isinstance(r, tuple):  # ("zero", negative)
        return (Exact(fmt.sign_mask if r[1] else 0),)
    if mpmath.isinf(r):
        return (Exact(fmt.pos_inf | (fmt.sign_mask if r < 0 else 0)),)
    if mpmath.isnan(r):
        return (None,)
    return (r,)
