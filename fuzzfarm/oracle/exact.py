"""References that see the argument patterns: the exact operations (``EXACT_FUNCTIONS``:
fmod, ldexp, fmin, ...) and the IEEE 754-2008 operations and multi-output built-ins
(``PATTERN_REFERENCES``: add, divide, fma, sincos, lgamma_r, atan2, ...).
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

import mpmath
from mpmath import mpf

from fuzzfarm.formats import FloatFormat
from fuzzfarm.rounding import _as_mpf, round_to_bits, value_of
from fuzzfarm.oracle.entries import Congruent, Exact, OneOf, Unspecified, _entry  # noqa: F401
from fuzzfarm.oracle.real import _gamma_sign, _is_integer, _lgamma


# --------------------------------------------------------------------------- exact ops
def _f(bits: int, fmt: FloatFormat) -> float:
    return fmt.value(bits)


def _ex(value: float, fmt: FloatFormat) -> Exact:
    return Exact(fmt.bits_of(value))


def _round_exact(value: mpf, fmt, mode) -> Exact:
    return Exact(round_to_bits(value, fmt, mode))


def _fmod(fmt, mode, x, y):
    if _is_inf(x, fmt) or _is_zero(y, fmt):
        return (None,)  # C99 F.9.7.1: a NaN (a rule prescribes it too)
    return (_ex(math.fmod(_f(x, fmt), _f(y, fmt)), fmt),)


def _remainder(fmt, mode, x, y):
    """IEEE remainder, exact (math.remainder on the exact binary64 values is exact and the
    result is representable in the arguments' format, IEEE 754-2008 §5.3.1)."""
    if _is_inf(x, fmt) or _is_zero(y, fmt):
        return (None,)  # C99 F.9.7.2: a NaN
    return (_ex(math.remainder(_f(x, fmt), _f(y, fmt)), fmt),)


def _fdim(fmt, mode, x, y):
    a, b = _f(x, fmt), _f(y, fmt)
    if not a > b:
        return (Exact(0),)
    if math.isinf(a) or math.isinf(b):
        return (Exact(fmt.pos_inf),)
    return (_round_exact(mpmath.fsub(_as_mpf(a), _as_mpf(b), exact=True), fmt, mode),)


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
    """round(): half away from zero, exactly (floor(|v| + 0.5) in float64 would round
    0.49999999999999994 + 0.5 up to 1)."""
    a = abs(v)
    q = math.floor(a)
    return math.copysign(float(q + 1 if a - q >= 0.5 else q), v)  # a - q is exact


def _nextafter(fmt, mode, x, y):
    a, b = _f(x, fmt), _f(y, fmt)
    if a == b:
        return (Exact(y),)
    if a == 0:
        return (Exact(fmt.true_min | (fmt.sign_mask if b < 0 else 0)),)
    up = (b > a) == (a > 0)  # away from zero in magnitude
    return (Exact(x + 1 if up else x - 1),)


def _ldexp(fmt, mode, x, k):
    if _is_zero(x, fmt) or _is_inf(x, fmt):
        return (Exact(x),)  # ldexp(+-0, k) = +-0, ldexp(+-inf, k) = +-inf (F.9.3.6)
    return (_round_exact(mpmath.ldexp(value_of(x, fmt), int(k)), fmt, mode),)


def _frexp(fmt, mode, x):
    m, e = math.frexp(_f(x, fmt))
    return (_ex(m, fmt), Exact(e))


def _modf(fmt, mode, x):
    """OpenCL SPIR-V Env 3.8.2: iptr = trunc(x); ret = copysign(isinf(x) ? 0 : x - iptr, x)."""
    if _is_inf(x, fmt):
        return (Exact(x & fmt.sign_mask), Exact(x))
    v = _f(x, fmt)
    neg = -1.0 if x & fmt.sign_mask else 1.0
    ip = math.copysign(float(math.trunc(v)), neg)
    return (_ex(math.copysign(v - ip, neg), fmt), _ex(ip, fmt))


def _fract(fmt, mode, x):
    """fract(x) = fmin(x - floor(x), 0x1.fffffep-1f), iptr = floor(x) (OpenCL C 6.15.2);
    fract(+-inf) = +-0 and +-inf in iptr (SPIR-V Env 3.8.2)."""
    if _is_inf(x, fmt):
        return (Exact(x & fmt.sign_mask), Exact(x))
    if _is_zero(x, fmt):
        return (Exact(x), Exact(x))  # fract(+-0) = +-0 and +-0 in iptr
    v = _f(x, fmt)
    fl = float(math.floor(v))
    cap = round_to_bits(mpmath.fsub(1, mpmath.ldexp(1, -fmt.precision), exact=True), fmt, "rtz")
    frac = round_to_bits(mpmath.fsub(_as_mpf(v), _as_mpf(fl), exact=True), fmt, mode)
    ret = min(frac, cap)  # fmin(x - floor(x), 0x1.fffffep-1f) on non-negative patterns
    return (Exact(ret), _ex(fl, fmt))


def _ilogb(fmt, mode, x):
    """ilogb: the unbiased exponent; INT_MAX for ±inf; ±0 gives the device's FP_ILOGB0
    (C99 7.12.6.5), which a catalogue rule checks: ``Unspecified`` here."""
    if _is_zero(x, fmt):
        return (Unspecified,)
    if _is_inf(x, fmt):
        return (Exact(2**31 - 1),)
    m, e = math.frexp(_f(x, fmt))
    return (Exact(e - 1),)


def _logb(fmt, mode, x):
    """logb: the unbiased exponent as a float; -inf for ±0 (a pole), +inf for ±inf
    (C99 F.9.3.11)."""
    if _is_zero(x, fmt):
        return (_inf(True, fmt),)
    if _is_inf(x, fmt):
        return (_inf(False, fmt),)
    m, e = math.frexp(_f(x, fmt))
    return (_ex(float(e - 1), fmt),)


def _copysign(fmt, mode, x, y):
    return (Exact((x & fmt.abs_mask) | (y & fmt.sign_mask)),)


# --------------------------------------------------------------------------- IEEE operations
# IEEE 754-2008 §5.4 (add, sub, mul, div, fusedMultiplyAdd) with the special cases of §6
# (infinities, invalid operations, signed zeros).  Each returns one reference entry: the
# exact real result as an mpf (the caller rounds it in its mode: overflow and underflow
# come from ``round_to_bits``), an Exact for infinities and zeros, None for an invalid
# operation.  Arguments are non-NaN patterns.

def _neg(bits: int, fmt: FloatFormat) -> bool:
    return bool(bits & fmt.sign_mask)


def _is_zero(bits: int, fmt: FloatFormat) -> bool:
    return (bits & fmt.abs_mask) == 0


def _is_inf(bits: int, fmt: FloatFormat) -> bool:
    return (bits & fmt.abs_mask) == fmt.pos_inf


def _zero(negative: bool, fmt: FloatFormat) -> Exact:
    return Exact(fmt.sign_mask if negative else 0)


def _inf(negative: bool, fmt: FloatFormat) -> Exact:
    return Exact(fmt.pos_inf | (fmt.sign_mask if negative else 0))


def _exact_zero_sum(fmt: FloatFormat, mode: str) -> Exact:
    """IEEE 754-2008 §6.3: an exact zero sum of operands of opposite signs (or difference
    of like signs) is +0 in every rounding direction but roundTowardNegative, -0 there."""
    return _zero(mode == "rtn", fmt)


def _sum(fmt: FloatFormat, mode: str, x: int, y: int):
    """x + y (§5.4.1 addition; §7.2 inf - inf is invalid; §6.3 signed zeros)."""
    if _is_inf(x, fmt) or _is_inf(y, fmt):
        if _is_inf(x, fmt) and _is_inf(y, fmt):
            return Exact(x) if x == y else None
        return Exact(x) if _is_inf(x, fmt) else Exact(y)
    if _is_zero(x, fmt) and _is_zero(y, fmt):  # x + x = x for a zero x
        return Exact(x) if x == y else _exact_zero_sum(fmt, mode)
    s = mpmath.fadd(value_of(x, fmt), value_of(y, fmt), exact=True)
    return _exact_zero_sum(fmt, mode) if s == 0 else s


def _product(fmt: FloatFormat, x: int, y: int):
    """x * y (§5.4.1; §7.2 0 * inf is invalid; the sign is the exclusive or)."""
    neg = _neg(x, fmt) != _neg(y, fmt)
    xz, yz, xi, yi = _is_zero(x, fmt), _is_zero(y, fmt), _is_inf(x, fmt), _is_inf(y, fmt)
    if (xz and yi) or (xi and yz):
        return None
    if xi or yi:
        return _inf(neg, fmt)
    if xz or yz:
        return _zero(neg, fmt)
    return mpmath.fmul(value_of(x, fmt), value_of(y, fmt), exact=True)


def _quotient(fmt: FloatFormat, prec: int, x: int, y: int):
    """x / y (§5.4.1; §7.2 0/0 and inf/inf are invalid; §7.3 x/0 is an exact infinity with
    the exclusive-or sign).  A finite nonzero quotient is computed to
    max(prec, 2p + 16) bits: a quotient of two p-bit floats that is not itself a float or a
    midpoint between floats is at least 2**-(2p+1) (relatively) away from every one, so
    this mpf rounds like the exact quotient in every mode (and a dyadic quotient, such as a
    subnormal tie 2**-150 / 1, is exact)."""
    neg = _neg(x, fmt) != _neg(y, fmt)
    xz, yz, xi, yi = _is_zero(x, fmt), _is_zero(y, fmt), _is_inf(x, fmt), _is_inf(y, fmt)
    if (xz and yz) or (xi and yi):
        return None
    if xi or yz:
        return _inf(neg, fmt)
    if yi or xz:
        return _zero(neg, fmt)
    return mpmath.fdiv(value_of(x, fmt), value_of(y, fmt),
                       prec=max(int(prec), 2 * fmt.precision + 16))


def _fused(fmt: FloatFormat, mode: str, a: int, b: int, c: int):
    """a * b + c with one rounding (§5.4.1 fusedMultiplyAdd; §7.2 invalid for 0 * inf and
    for an infinite product meeting an infinite addend of the other sign; the sign of an
    exact zero as for the sum, §6.3)."""
    neg = _neg(a, fmt) != _neg(b, fmt)
    az, bz, ai, bi = _is_zero(a, fmt), _is_zero(b, fmt), _is_inf(a, fmt), _is_inf(b, fmt)
    if (az and bi) or (ai and bz):
        return None
    if ai or bi:
        if _is_inf(c, fmt) and _neg(c, fmt) != neg:
            return None
        return _inf(neg, fmt)
    if _is_inf(c, fmt):
        return Exact(c)
    if az or bz:  # the product is a zero of sign neg
        if _is_zero(c, fmt):
            return _zero(neg, fmt) if _neg(c, fmt) == neg else _exact_zero_sum(fmt, mode)
        return Exact(c)
    s = mpmath.fadd(mpmath.fmul(value_of(a, fmt), value_of(b, fmt), exact=True),
                    value_of(c, fmt), exact=True)
    return _exact_zero_sum(fmt, mode) if s == 0 else s


def _pattern(entry, fmt: FloatFormat, mode: str):
    """The pattern an IEEE operation's entry rounds to in ``mode`` (None stays None)."""
    if entry is None:
        return None
    if isinstance(entry, Exact):
        return int(entry.bits)
    return round_to_bits(entry, fmt, mode)


# --------------------------------------------------------------------------- more exact ops
def _fabs(fmt, mode, x):
    return (Exact(x & fmt.abs_mask),)


def _maxmag(fmt, mode, x, y):
    """OpenCL C 3.0 §6.15.2: "Returns x if |x| > |y|, y if |y| > |x|, otherwise fmax(x, y)"."""
    ax, ay = abs(_f(x, fmt)), abs(_f(y, fmt))
    if ax != ay:
        return (Exact(x if ax > ay else y),)
    return _fmax(fmt, mode, x, y)


def _minmag(fmt, mode, x, y):
    """OpenCL C 3.0 §6.15.2: "Returns x if |x| < |y|, y if |y| < |x|, otherwise fmin(x, y)"."""
    ax, ay = abs(_f(x, fmt)), abs(_f(y, fmt))
    if ax != ay:
        return (Exact(x if ax < ay else y),)
    return _fmin(fmt, mode, x, y)


def _max(fmt, mode, x, y):
    """OpenCL C 3.0 §6.15.4: "Returns y if x < y, otherwise it returns x"; undefined for an
    infinite argument."""
    if _is_inf(x, fmt) or _is_inf(y, fmt):
        return (Unspecified,)
    return (Exact(y if _f(x, fmt) < _f(y, fmt) else x),)


def _min(fmt, mode, x, y):
    """OpenCL C 3.0 §6.15.4: "Returns y if y < x, otherwise it returns x"; undefined for an
    infinite argument."""
    if _is_inf(x, fmt) or _is_inf(y, fmt):
        return (Unspecified,)
    return (Exact(y if _f(y, fmt) < _f(x, fmt) else x),)


def _clamp(fmt, mode, x, lo, hi):
    """OpenCL C 3.0 §6.15.4: fmin(fmax(x, minval), maxval); undefined if minval > maxval."""
    if _f(lo, fmt) > _f(hi, fmt):
        return (Unspecified,)
    (m,) = _fmax(fmt, mode, x, lo)
    return _fmin(fmt, mode, m.bits, hi)


def _step(fmt, mode, edge, x):
    """OpenCL C 3.0 §6.15.4: "Returns 0.0 if x < edge, otherwise it returns 1.0"."""
    return (_ex(0.0 if _f(x, fmt) < _f(edge, fmt) else 1.0, fmt),)


def _sign_fn(fmt, mode, x):
    """OpenCL C 3.0 §6.15.4: "Returns 1.0 if x > 0, -0.0 if x = -0.0, +0.0 if x = +0.0, or
    -1.0 if x < 0"."""
    v = _f(x, fmt)
    if v == 0:
        return (Exact(x),)
    return (_ex(1.0 if v > 0 else -1.0, fmt),)


def _mad(fmt, mode, a, b, c):
    """mad: "either a correctly rounded fma, or a multiply followed by an add, both of which
    are correctly rounded" (OpenCL SPIR-V Env Table 1), both in ``mode``.  Returns (Exact,)
    where the two agree, (None,) where both are NaN, else (OneOf,)."""
    fused = _pattern(_fused(fmt, mode, a, b, c), fmt, mode)
    p = _pattern(_product(fmt, a, b), fmt, mode)
    split = None if p is None else _pattern(_sum(fmt, mode, p, c), fmt, mode)
    if fused == split:
        return (None if fused is None else Exact(fused),)
    choices = tuple(Exact(o) for o in (fused, split) if o is not None)
    return (OneOf(choices, nan=fused is None or split is None),)


def _remquo(fmt, mode, x, y):
    """remquo: ret = remainder(x, y) (exact); quo = ``Congruent`` to the integral quotient
    x/y rounded to nearest even (C99 7.12.10.3, OpenCL C 3.0 §6.15.2).  For x = ±inf or
    y = ±0: (None, Exact(0)) (OpenCL SPIR-V Env 3.8.2: "returns a NaN and 0 in quo")."""
    if _is_inf(x, fmt) or _is_zero(y, fmt):
        return (None, Exact(0))
    if _is_inf(y, fmt) or _is_zero(x, fmt):  # x/y is a zero: remainder x, quotient 0
        return (Exact(x), Congruent(0, 8, None))
    q = Fraction(_f(x, fmt)) / Fraction(_f(y, fmt))
    n = round(q)  # Fraction rounds half to even, as remainder's quotient does
    return (_remainder(fmt, mode, x, y)[0], Congruent(int(n), 8, 1 if q > 0 else -1))


def _nan_fn(fmt, mode, nancode):
    """nan(nancode): "a quiet NaN" (OpenCL C 3.0 §6.15.2); the payload is the
    implementation's: nothing to compare bitwise (a rule checks quietness)."""
    return (Unspecified,)


#: Exact operations: name -> f(fmt, mode, *args) returning one entry per output, judged
#: bitwise: ``Exact`` (rounded in ``mode`` where the operation rounds), ``OneOf`` (mad),
#: ``Congruent`` (remquo's quo), ``Unspecified`` or None.  Float arguments arrive as
#: patterns (non-NaN; callers handle NaN by rule), int and uint ones as ints.
EXACT_FUNCTIONS: dict[str, Callable] = {
    "fmod": _fmod, "remainder": _remainder, "fdim": _fdim, "fmin": _fmin, "fmax": _fmax,
    "ceil": _rounding_op(math.ceil), "floor": _rounding_op(math.floor),
    "trunc": _rounding_op(math.trunc), "rint": _rounding_op(round),
    "round": _rounding_op(_round_half_away), "nextafter": _nextafter, "ldexp": _ldexp,
    "frexp": _frexp, "modf": _modf, "fract": _fract, "ilogb": _ilogb, "logb": _logb,
    "copysign": _copysign,
    "fabs": _fabs, "maxmag": _maxmag, "minmag": _minmag, "max": _max, "min": _min,
    "clamp": _clamp, "step": _step, "sign": _sign_fn, "mad": _mad, "remquo": _remquo,
    "nan": _nan_fn,
}


# --------------------------------------------------------------------------- pattern refs
def _add(fmt, mode, prec, x, y):
    return (_sum(fmt, mode, x, y),)


def _sub(fmt, mode, prec, x, y):
    return (_sum(fmt, mode, x, y ^ fmt.sign_mask),)  # x - y = x + (-y), §5.4.1


def _mul(fmt, mode, prec, x, y):
    return (_product(fmt, x, y),)


def _divide(fmt, mode, prec, x, y):
    return (_quotient(fmt, prec, x, y),)


def _recip(fmt, mode, prec, x):
    return (_quotient(fmt, prec, fmt.bits_of(1.0), x),)


def _fma(fmt, mode, prec, a, b, c):
    return (_fused(fmt, mode, a, b, c),)


def _atan2_turns(fmt, y: int, x: int):
    """atan2(y, x) / pi with the special cases of C99 F.9.1.4 (signed zeros and
    infinities) as an exact multiple of pi: (k, negative) meaning ±k*pi, or None where
    the value is an ordinary real (both finite and nonzero)."""
    ny, nx = _neg(y, fmt), _neg(x, fmt)
    if _is_zero(y, fmt):
        return (Fraction(1) if nx else Fraction(0)), ny           # ±pi or ±0 (x = -0: ±pi)
    if _is_inf(y, fmt):
        if _is_inf(x, fmt):
            return (Fraction(3, 4) if nx else Fraction(1, 4)), ny
        return Fraction(1, 2), ny
    if _is_zero(x, fmt):
        return Fraction(1, 2), ny
    if _is_inf(x, fmt):
        return (Fraction(1) if nx else Fraction(0)), ny
    return None


def _atan2(fmt, mode, prec, y, x):
    t = _atan2_turns(fmt, y, x)
    if t is None:
        return (mpmath.atan2(value_of(y, fmt), value_of(x, fmt)),)
    k, negative = t
    if k == 0:
        return (_zero(negative, fmt),)
    v = mpmath.pi * k.numerator / k.denominator
    return (-v if negative else v,)


def _atan2pi(fmt, mode, prec, y, x):
    t = _atan2_turns(fmt, y, x)
    if t is None:
        return (mpmath.atan2(value_of(y, fmt), value_of(x, fmt)) / mpmath.pi,)
    k, negative = t
    if k == 0:
        return (_zero(negative, fmt),)
    v = mpmath.fdiv(k.numerator, k.denominator)   # exact: 1, 1/2, 1/4, 3/4
    return (-v if negative else v,)


def _sincos(fmt, mode, prec, x):
    """(sin x, cos x): sin(±0) = ±0, cos(±0) = 1, a NaN for ±inf (C99 F.9.1.6, F.9.1.5)."""
    if _is_inf(x, fmt):
        return (None, None)
    if _is_zero(x, fmt):
        return (Exact(x), mpf(1))
    v = value_of(x, fmt)
    return (mpmath.sin(v), mpmath.cos(v))


def _lgamma_r(fmt, mode, prec, x):
    """(lgamma(x), sign of Gamma(x) as Exact(+-1)).  At a pole (x = ±0, -1, -2, ...) and at
    -inf the sign is ``Unspecified``: C99 leaves signgam unspecified there, and OpenCL's
    "lgamma_r(x, signp) returns 0 in signp if x is zero or a negative integer" (SPIR-V Env
    3.8.2) is a prescribed result, checked by its catalogue rule."""
    if _is_zero(x, fmt):
        return (Exact(fmt.pos_inf), Unspecified)
    v = value_of(x, fmt)
    ret = _entry(_lgamma(v), fmt)
    if mpmath.isinf(v):
        return (ret, Exact(1) if v > 0 else Unspecified)
    if v < 0 and _is_integer(v):
        return (ret, Unspecified)
    return (ret, Exact(_gamma_sign(v)))


#: References that see the argument patterns (signed zeros) and return every output:
#: name -> f(fmt, mode, prec, *args) -> tuple of entries, evaluated under ``prec`` bits.
#: The IEEE operations give the exact real result (an mpf), so the caller rounds it in each
#: mode it admits and a flush-to-zero judge sees the value before rounding; ``mode`` only
#: decides the sign of an exact zero sum (IEEE 754-2008 §6.3).
PATTERN_REFERENCES: dict[str, Callable] = {
    "add": _add, "sub": _sub, "mul": _mul, "divide": _divide, "recip": _recip, "fma": _fma,
    "sincos": _sincos, "lgamma_r": _lgamma_r, "atan2": _atan2, "atan2pi": _atan2pi,
}
