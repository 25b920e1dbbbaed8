"""The reference: infinitely precise results (mpmath), correct rounding, and the ULP measure.

Precision and rounding are explicit arguments everywhere (STYLE.md point 3): ``prec`` is
the working precision in bits; ``mode`` one of the OpenCL rounding modes ``rte``, ``rtz``,
``rtp``, ``rtn`` (``ROUNDING`` maps them to mpmath's letters: note mpmath's ``'d'`` means
toward *zero*).

mpmath has no negative zero and one NaN (NOTES.md).  ``reference`` therefore answers, for
each output of a built-in, one of:

* an ``mpf``: the real result, finite and nonzero, known to ``prec`` bits (or exact); the
  caller rounds it (``round_to_bits``) or measures against it (``ulp_error``).  ``mpf(0)``
  is an exact zero whose sign no text fixes (either zero conforms);
* ``Exact(bits)``: the one correct pattern (exact operations, infinities, signed zeros), or
  for an int output the int value;
* ``OneOf(choices)``: any of several exact patterns (mad: fused or not);
* ``Congruent(value, modulus, sign)``: an int output known modulo 2**n (remquo's quo);
* ``Unspecified``: the texts fix no result (nan's payload, lgamma_r's sign at a pole, the
  arguments for which a common function's result is undefined): not judged;
* ``None``: no real value (the argument is outside the domain): a NaN is required.

Prescribed results for special inputs are the catalogue's business (edgecases/); this
module computes values for the inputs no rule covers, and agrees with the rules where it
meets them.  Every format (binary16, binary32, binary64) goes through the same code: the
values of patterns are exact Python floats, the arithmetic is mpmath's exact or
``prec``-bit arithmetic, and the rounding is ``round_to_bits``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import mpmath
from mpmath import mpf

from fuzzfarm.formats import FloatFormat
from fuzzfarm.rounding import (  # noqa: F401 (re-exported: the oracle's vocabulary)
    ROUNDING, _as_mpf, _sign_man_exp, round_to_bits, value_of,
)

__all__ = [
    "ROUNDING", "Exact", "OneOf", "Congruent", "Unspecified", "round_to_bits", "ulp",
    "ulp_error", "value_of", "REFERENCES", "EXACT_FUNCTIONS", "PATTERN_REFERENCES",
    "reference", "base_name", "has_reference", "conforms",
]



@dataclass(frozen=True)
class Exact:
    """An exactly known result pattern (or, for int outputs, the int value)."""

    bits: int


@dataclass(frozen=True)
class OneOf:
    """Any of several exact results conforms.

    ``choices`` is a tuple of ``Exact`` (patterns of the output's format), the first being
    the preferred one (for mad: the fused result).  ``nan`` True means a NaN of any sign
    and payload also conforms (mad, where the unfused product overflows to an infinity
    that meets an infinite addend of the other sign).  Used for mad (OpenCL SPIR-V Env
    Table 1: "either a correctly rounded fma, or a multiply followed by an add, both of
    which are correctly rounded").
    """

    choices: tuple
    nan: bool = False

    def matches(self, got: int, fmt: FloatFormat) -> bool:
        """True if the pattern ``got`` (an int) is one of the choices (or a NaN, where
        ``nan``)."""
        g = int(got)
        if self.nan and (g & fmt.abs_mask) > fmt.pos_inf:
            return True
        return any(int(c.bits) == g for c in self.choices)

    def describe(self, fmt: FloatFormat) -> str:
        parts = [fmt.hex(c.bits) for c in self.choices] + (["any NaN"] if self.nan else [])
        return " or ".join(parts)


@dataclass(frozen=True)
class Congruent:
    """An int output known only modulo ``modulus`` in magnitude, with a known sign.

    remquo's ``quo`` (OpenCL C 3.0 §6.15.2, C99 7.12.10.3): "a value whose sign is the sign
    of x/y and whose magnitude is congruent modulo 2**n to the magnitude of the integral
    quotient of x/y, where n is an implementation-defined integer greater than or equal to
    3".  ``value`` is the integral quotient itself (x/y rounded to the nearest integer, ties
    to even: the quotient of ``remainder``), an int of any size; ``modulus`` is 2**n
    (default 8, the least n the text allows).  ``sign`` is +1 or -1, the sign of the real
    quotient x/y, or None where x/y is zero (x = ±0, or y = ±inf): then the sign of
    ``quo`` is undefined and not judged.  The SPIR-V environment's Table 1 asks instead for
    "at least the lower 7 bits of the integral quotient" (modulus 128); the texts disagree,
    so a failure is judged modulo 8 and ``matches(got, 128)`` serves a note.
    """

    value: int
    modulus: int = 8
    sign: int | None = None

    def matches(self, got: int, modulus: int | None = None) -> bool:
        """True if the int ``got`` has the sign of x/y (or is 0, or the sign is undefined)
        and a magnitude congruent to ``|value|`` modulo ``modulus`` (default: the field)."""
        m = self.modulus if modulus is None else int(modulus)
        g = int(got)
        if (abs(g) - abs(self.value)) % m:
            return False
        if g == 0 or self.sign is None:
            return True
        return (g > 0) == (self.sign > 0)

    def describe(self) -> str:
        sign = {1: "x/y > 0: positive or 0", -1: "x/y < 0: negative or 0",
                None: "either sign"}[self.sign]
        return (f"|quo| = {abs(self.value) % self.modulus} (mod {self.modulus}), {sign}"
                f" (integral quotient {self.value})")


class _UnspecifiedType:
    """The type of ``Unspecified``: one instance, kept by pickling (Ray ships results)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "Unspecified"

    def __reduce__(self):
        return "Unspecified"


#: No result is judged for this output: the texts leave it open.  Returned for nan's
#: result (only "a quiet NaN" is required: a rule checks it), lgamma_r's sign at
#: x = ±0, ±inf... (C99 leaves it unspecified; OpenCL's "returns 0 in signp" is the
#: catalogue rule's business), and for the arguments where a common function's result is
#: undefined (OpenCL C 3.0 §6.15.4: max/min with an infinity, clamp with minval > maxval,
#: mix with a outside [0, 1] or an infinite x or y, smoothstep with edge0 >= edge1 or an
#: infinite edge).  Test with ``is``.
Unspecified = _UnspecifiedType()


# --------------------------------------------------------------------------- ULP
def ulp(value, fmt: FloatFormat) -> mpf:
    """ulp(x) as the OpenCL spec defines it (Muller, INRIA RR-5504, cited in OpenCL C 3.0
    §7.4): the gap between the two finite floats around x; for a representable x the gap
    between the two non-equal finite floats nearest x (so at a power of two, the gap
    *below* it); beyond the largest finite value, the gap below the largest finite value;
    ulp(0) is the smallest subnormal.  ``value`` is an exact real (mpf, int or float; its
    sign does not matter); returns a power of two as an mpf.  Exact whatever mpmath's
    global precision.
    """
    a = _as_mpf(value)
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    if a == 0:
        return mpmath.ldexp(1, emin - p + 1)
    if mpmath.isinf(a):
        return mpmath.ldexp(1, emax - p + 1)
    _, man, exp = _sign_man_exp(a)
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

    ``got_bits`` is a non-NaN pattern (an int); ``ref`` a finite real (mpf, taken as
    exact); returns the error in ULPs (OpenCL C 3.0 §7.4, ``ulp`` above) as a float, which
    may be inf for a clamped ``ref``.

    Overflow (IEEE 754-2008 §7.4): where ``ref`` overflows in one of ``overflow_modes``
    (its rounding with an unbounded exponent exceeds the largest finite value), the result
    the mode gives is exact (error 0): ±inf in RTE, ±max_finite in RTZ
    (``overflow_modes=("rtz",)``: max_finite for any reference of 2**(emax+1) or more), so
    a correctly rounded overflow never costs ULPs.  Without overflow the error is measured
    as everywhere (RTE's max_finite for a reference just below the overflow threshold is
    < 0.5 ULP off).  Any other infinite result stands for ±2**(emax+1), the next value of
    an exponent-unbounded format (the convention of the Khronos conformance tests), so
    that premature overflow costs ULPs rather than counting as infinitely wrong.  Raises
    ValueError for a NaN ``got_bits`` (``FloatFormat.value``) or an unknown mode.
    """
    g_bits = int(got_bits)
    g = fmt.value(g_bits)
    r = _as_mpf(ref)
    top = _max_value(fmt)
    if r > top or r < mpmath.fneg(top, exact=True):  # comparisons are exact; abs() rounds
        big = mpmath.ldexp(1, fmt.emax + 1)
        beyond = r >= big or r <= mpmath.fneg(big, exact=True)
        for m in overflow_modes:
            rounded = round_to_bits(r, fmt, m)
            overflows = beyond or (rounded & fmt.abs_mask) == fmt.pos_inf
            if overflows and rounded == g_bits:
                return 0.0
    if math.isinf(g):
        g_val = mpmath.ldexp(1 if g > 0 else -1, fmt.emax + 1)
    else:
        g_val = _as_mpf(g)
    diff = mpmath.fsub(g_val, r, exact=True)            # exact: no double rounding
    u = ulp(r, fmt)                                       # a power of two, 2**k
    k = u._mpf_[2]
    return abs(float(mpmath.ldexp(diff, -k)))             # one rounding, to a float


def _max_value(fmt: FloatFormat) -> mpf:
    """The largest finite value of ``fmt``, (2 - 2**(1-p)) * 2**emax, exactly."""
    return mpmath.ldexp(_as_mpf((1 << fmt.precision) - 1), fmt.emax - fmt.precision + 1)


# --------------------------------------------------------------------------- references
class _Undefined(Exception):
    """No real value: the argument is outside the domain (a NaN is required)."""


class _Unjudged(Exception):
    """The texts fix no result for this argument (``Unspecified``)."""


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
    if n == 0:
        return mpf(1)  # pown(x, 0) is 1 for any x (SPIR-V Env 3.8.2)
    if mpmath.isinf(x):
        if n > 0:
            return mpmath.inf if (x > 0 or n % 2 == 0) else -mpmath.inf
        return ("zero", x < 0 and n % 2 == 1)
    return _signed_pow(x, n)


def _powr(x, y):
    """powr for x != 0 (zeros: ``_AT_ZERO``): NaN for x < 0, for powr(+inf, +-0) and for
    powr(1, +-inf) (SPIR-V Env 3.8.2)."""
    if x < 0:
        raise _Undefined
    if mpmath.isinf(x):
        if y == 0:
            raise _Undefined
        return mpmath.inf if y > 0 else ("zero", False)
    if mpmath.isinf(y):
        if x == 1:
            raise _Undefined
        big = (x > 1) == (y > 0)
        return mpmath.inf if big else ("zero", False)
    return _pow_real(x, y)


def _pow(x, y):
    """pow for x != 0 (zeros: ``_AT_ZERO``), with C99 F.9.4.4's infinities."""
    if mpmath.isinf(y):
        ax = abs(x)
        if ax == 1:
            return mpf(1)
        return mpmath.inf if (ax > 1) == (y > 0) else ("zero", False)
    odd = y == int(y) and int(y) % 2 == 1
    if mpmath.isinf(x):
        negative = x < 0 and odd
        if y == 0:
            return mpf(1)
        if y > 0:
            return -mpmath.inf if negative else mpmath.inf
        return ("zero", negative)
    if x < 0 and y != int(y):
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
    """tanpi with OpenCL's exact cases (SPIR-V Env 3.8.2): +inf at n + 0.5 for even n,
    -inf for odd n; copysign(0, n) at even integers n, copysign(0, -n) at odd ones."""
    if mpmath.isinf(x):
        raise _Undefined
    if _is_integer(x):
        odd = int(x) % 2 == 1
        return ("zero", (x > 0) if odd else (x < 0))
    c = mpmath.cospi(x)
    if c == 0:
        return -mpmath.inf if int(mpmath.floor(x)) % 2 else mpmath.inf
    return mpmath.sinpi(x) / c


def _sinpi(x):
    """sinpi: +0 at positive integers, -0 at negative ones (SPIR-V Env 3.8.2)."""
    if mpmath.isinf(x):
        raise _Undefined
    if _is_integer(x):
        return ("zero", x < 0)
    return mpmath.sinpi(x)


def _cospi(x):
    """cospi: +0 at n + 0.5 (C23 7.12.4.12; OpenCL fixes no sign: +0 is IEEE's)."""
    if mpmath.isinf(x):
        raise _Undefined
    c = mpmath.cospi(x)
    return ("zero", False) if c == 0 else c


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
    if x == -1:
        return -mpmath.inf  # a pole (C99 F.9.3.9)
    if x < -1:
        raise _Undefined
    return mpmath.log1p(x)


def _exp_like(base):
    def f(x):
        if mpmath.isinf(x):
            return mpmath.inf if x > 0 else ("zero", False)
        return _pow_real(mpf(base), x)
    return f


def _exp(x):
    if mpmath.isinf(x):
        return mpmath.inf if x > 0 else ("zero", False)
    return _pow_real(mpmath.e, x) if abs(x) > 1 << 12 else mpmath.exp(x)


def _expm1(x):
    if mpmath.isinf(x):
        return mpmath.inf if x > 0 else mpf(-1)
    return mpmath.expm1(x) if x < 1 << 12 else mpmath.ldexp(1, _CLAMP)


def _sinh_cosh(fn):
    def f(x):
        if mpmath.isinf(x):
            return mpmath.inf if (fn is mpmath.cosh or x > 0) else -mpmath.inf
        if abs(x) > 1 << 12:  # |sinh|, cosh beyond every format; sign kept
            big = mpmath.ldexp(1, _CLAMP)
            return big if (fn is mpmath.cosh or x > 0) else -big
        return fn(x)
    return f


def _acosh(x):
    if x < 1:  # includes -inf
        raise _Undefined
    if x == 1:
        return ("zero", False)  # acosh(1) = +0 (C99 F.9.2.1)
    return x if mpmath.isinf(x) else mpmath.acosh(x)


def _asinh(x):
    return x if mpmath.isinf(x) else mpmath.asinh(x)


def _atanh(x):
    if abs(x) > 1:  # includes +-inf
        raise _Undefined
    if abs(x) == 1:
        return mpmath.inf * x  # a pole: +-inf (C99 F.9.2.3)
    return mpmath.atanh(x)


def _erf(x):
    return mpf(1) * mpmath.sign(x) if mpmath.isinf(x) else mpmath.erf(x)


_ERFC_TINY = 64  # erfc(64) < 2**-5900: below half of every format's smallest subnormal


def _erfc(x):
    if mpmath.isinf(x):
        return ("zero", False) if x > 0 else mpf(2)
    if x > _ERFC_TINY:  # clamped like _pow_real: rounds and measures like the true value
        return mpmath.ldexp(1, -_CLAMP)
    return mpmath.erfc(x)


def _is_integer(x) -> bool:
    return not mpmath.isinf(x) and x == mpmath.floor(x)


_GAMMA_HUGE = 200  # |Gamma(x)| > 2**1200 for x > 200 and < 2**-1200 for x < -200 (below)


def _gamma_sign(x) -> int:
    """The sign of Gamma(x) for x not a pole: +1 for x > 0; (-1)**k on (-k, -k + 1)."""
    if x > 0:
        return 1
    return -1 if int(-mpmath.floor(x)) % 2 else 1


def _tgamma(x):
    """Gamma(x) for x != 0 (the caller handles tgamma(+-0) = +-inf, C99 F.9.5.4)."""
    if mpmath.isinf(x):
        if x > 0:
            return x
        raise _Undefined  # tgamma(-inf) is a NaN
    if x < 0 and _is_integer(x):
        raise _Undefined  # negative integers: a NaN (domain error, F.9.5.4)
    if x > _GAMMA_HUGE:
        return mpmath.ldexp(1, _CLAMP)
    if x < -_GAMMA_HUGE:
        # |Gamma(x)| = pi / (|sin(pi x)| Gamma(1 - x)) < 2**-1190: a non-integer float x
        # lies at least ulp(x) (>= 2**-45 at |x| = 200 in binary64, and ulp grows slower
        # than Gamma(1 - x) > 2**1245) from an integer, so |sin(pi x)| > 2**-44.  Rounds
        # and measures like the true value (+-0, or +-true_min away from zero).
        return _gamma_sign(x) * mpmath.ldexp(1, -_CLAMP)
    return mpmath.gamma(x)


def _lgamma(x):
    """log|Gamma(x)|; poles (x = 0, -1, -2, ...) and +-inf give +inf (C99 F.9.5.3)."""
    if mpmath.isinf(x) or (x <= 0 and _is_integer(x)):
        return mpmath.inf
    if x == 1 or x == 2:
        return ("zero", False)
    if x > 0:
        return mpmath.loggamma(x)
    return _log_abs_gamma_negative(x)


def _log_abs_gamma_negative(x):
    """log|Gamma(x)| for negative non-integer x, to the caller's working precision.

    mpmath evaluates it through the reflection formula, which cancels near the zeros of
    lgamma (x = -2.457..., -2.747..., ...) and loses up to ~60 bits there.  Ziv's strategy:
    evaluate at two higher precisions and return once they agree to the working
    precision (+4 bits).
    """
    prec = mpmath.mp.prec
    extra = 32
    while True:
        with mpmath.workprec(prec + extra):
            a = mpmath.re(mpmath.loggamma(x))
        with mpmath.workprec(prec + 2 * extra):
            b = mpmath.re(mpmath.loggamma(x))
        if b != 0 and abs(a - b) <= abs(b) * mpmath.ldexp(1, -prec - 4):
            return b
        extra *= 2
        if extra > 1 << 14:  # cannot happen for a float argument; never loop forever
            raise ArithmeticError(f"lgamma({x}) did not converge")


def _degrees(x):
    return x if mpmath.isinf(x) else x * 180 / mpmath.pi


def _radians(x):
    return x if mpmath.isinf(x) else x * mpmath.pi / 180


def _mix(x, y, a):
    """x + (y - x) * a, evaluated exactly (OpenCL C 3.0 §6.15.4); undefined for a outside
    [0, 1] and for an infinite x or y (catalogue ``undefined``)."""
    if mpmath.isinf(x) or mpmath.isinf(y) or mpmath.isinf(a) or a < 0 or a > 1:
        raise _Unjudged
    d = mpmath.fsub(y, x, exact=True)
    return mpmath.fadd(x, mpmath.fmul(d, a, exact=True), exact=True)


def _smoothstep(edge0, edge1, x):
    """t = clamp((x - edge0) / (edge1 - edge0), 0, 1); t * t * (3 - 2 * t), evaluated on
    exact rationals (OpenCL C 3.0 §6.15.4); undefined for edge0 >= edge1 or an infinite
    edge."""
    if mpmath.isinf(edge0) or mpmath.isinf(edge1) or edge0 >= edge1:
        raise _Unjudged
    if mpmath.isinf(x):
        return mpf(1) if x > 0 else mpf(0)
    t = (_fraction(x) - _fraction(edge0)) / (_fraction(edge1) - _fraction(edge0))
    t = min(max(t, Fraction(0)), Fraction(1))
    s = t * t * (3 - 2 * t)
    if s == 0:
        return mpf(0)
    return mpmath.fdiv(_as_mpf(s.numerator), _as_mpf(s.denominator))


def _fraction(v) -> Fraction:
    """The exact rational value of a finite mpf."""
    if v == 0:
        return Fraction(0)
    negative, man, exp = _sign_man_exp(v)
    f = Fraction(man) * (Fraction(2) ** exp)
    return -f if negative else f


#: Real-valued references: name -> f(*args) on mpf (float args) and int (int args),
#: evaluated under the caller's working precision.  A tuple ("zero", negative) is an
#: exact signed zero, mpmath's +-inf an exact infinity (a pole or an infinite argument);
#: raising _Undefined means no real value (a NaN), raising _Unjudged that the result is
#: undefined by the text (``Unspecified``).  A zero first argument goes to ``_AT_ZERO``
#: where the result depends on the zero's sign.
REFERENCES: dict[str, Callable] = {
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "sinpi": _sinpi, "cospi": _cospi, "tanpi": _tanpi,
    "asin": _asin, "acos": _acos, "atan": mpmath.atan,
    "asinpi": lambda x: _asin(x) / mpmath.pi, "acospi": lambda x: _acos(x) / mpmath.pi,
    "atanpi": lambda x: mpmath.atan(x) / mpmath.pi,
    "sinh": _sinh_cosh(mpmath.sinh), "cosh": _sinh_cosh(mpmath.cosh), "tanh": mpmath.tanh,
    "exp": _exp, "exp2": _exp_like(2), "exp10": _exp_like(10), "expm1": _expm1,
    "log": _positive(mpmath.log), "log2": _positive(lambda x: mpmath.log(x, 2)),
    "log10": _positive(mpmath.log10), "log1p": _log1p,
    "sqrt": _sqrt,
    "rsqrt": _positive(lambda x: 1 / mpmath.sqrt(x)), "cbrt": _cbrt,
    "pow": _pow, "pown": _pown, "powr": _powr, "rootn": _rootn, "hypot": mpmath.hypot,
    "acosh": _acosh, "asinh": _asinh, "atanh": _atanh, "erf": _erf, "erfc": _erfc,
    "tgamma": _tgamma, "lgamma": _lgamma, "degrees": _degrees, "radians": _radians,
    "mix": _mix, "smoothstep": _smoothstep,
}

_ZERO = "zero"


def _signed_zero(negative: bool):
    return (_ZERO, negative)


def _odd_integer(y) -> bool:
    return not mpmath.isinf(y) and y == int(y) and int(y) % 2 == 1


def _pow_at_zero(negative, y):
    """pow(+-0, y), C99 F.9.4.4: +-inf / +inf for y < 0 (odd integer / other), +-0 / +0
    for y > 0, 1 for y = +-0."""
    if y == 0:
        return mpf(1)
    signed = negative and _odd_integer(y)
    if y < 0:
        return -mpmath.inf if signed else mpmath.inf
    return ("zero", signed)


def _rootn_at_zero(negative, n):
    """rootn(+-0, n), OpenCL SPIR-V Env 3.8.2: like pow(+-0, n); rootn(x, 0) is a NaN."""
    if n == 0:
        raise _Undefined
    return _pow_at_zero(negative, n)


def _powr_at_zero(negative, y):
    """powr(+-0, y), SPIR-V Env 3.8.2: +0 for y > 0, +inf for y < 0, NaN for y = +-0."""
    if y == 0:
        raise _Undefined
    return ("zero", False) if y > 0 else mpmath.inf


#: Results at a zero first argument, for the REFERENCES whose value there depends on the
#: zero's sign (which mpmath cannot see): name -> f(negative, *other values).
_AT_ZERO: dict[str, Callable] = {
    "pow": _pow_at_zero, "pown": _pow_at_zero, "rootn": _rootn_at_zero,
    "powr": _powr_at_zero,
    "asinh": _signed_zero, "atanh": _signed_zero, "erf": _signed_zero,        # F.9: +-0
    "degrees": _signed_zero, "radians": _signed_zero,   # (+-0) * c: IEEE 754 §6.3 sign
    "tgamma": lambda neg: -mpmath.inf if neg else mpmath.inf,   # pole, F.9.5.4
    "lgamma": lambda neg: mpmath.inf,                            # pole, F.9.5.3
    "erfc": lambda neg: mpf(1), "acosh": lambda neg: _raise(_Undefined),
    # C99 F.9 / SPIR-V Env 3.8.2: f(+-0) = +-0 for the odd functions, poles at zero
    **{f: _signed_zero for f in ("sin", "tan", "asin", "atan", "sinh", "tanh", "expm1",
                                 "log1p", "sqrt", "cbrt", "sinpi", "tanpi", "asinpi",
                                 "atanpi")},
    "log": lambda neg: -mpmath.inf, "log2": lambda neg: -mpmath.inf,
    "log10": lambda neg: -mpmath.inf,
    "rsqrt": lambda neg: -mpmath.inf if neg else mpmath.inf,  # 1/sqrt(-0) = 1/-0 (IEEE)
}


def _raise(exc):
    raise exc


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

#: Families whose built-ins take the reference of the function they approximate:
#: half_cos -> cos, half_divide -> divide, native_powr -> powr (OpenCL C 3.0 §6.15.2).
_ALIAS_PREFIXES = ("half_", "native_")


def _own(name: str) -> bool:
    return name in EXACT_FUNCTIONS or name in PATTERN_REFERENCES or name in REFERENCES


def base_name(name: str) -> str:
    """The built-in whose reference ``name`` uses: ``half_<f>`` and ``native_<f>`` map to
    ``<f>`` (half_divide -> divide, half_recip -> recip, half_powr -> powr); every other
    name maps to itself."""
    for p in _ALIAS_PREFIXES:
        if name.startswith(p) and _own(name[len(p):]):
            return name[len(p):]
    return name


def has_reference(name: str) -> bool:
    """True if ``reference`` knows built-in ``name`` (directly or as half_/native_)."""
    return _own(base_name(name))


def _entry(r, fmt: FloatFormat):
    """A REFERENCES value as a reference entry."""
    if isinstance(r, tuple):  # ("zero", negative)
        return Exact(fmt.sign_mask if r[1] else 0)
    if mpmath.isinf(r):
        return Exact(fmt.pos_inf | (fmt.sign_mask if r < 0 else 0))
    if mpmath.isnan(r):
        return None
    return r


def conforms(entry, got: int, fmt: FloatFormat):
    """Whether the output ``got`` (a pattern of ``fmt``, or an int for an int output)
    conforms to a bitwise reference ``entry``: ``Exact`` (equal), ``OneOf`` (any choice,
    or a NaN where allowed), ``Congruent`` (congruence and sign, modulo its ``modulus``),
    ``Unspecified`` (always), None (``got`` is a NaN of ``fmt``).  Returns a bool.  Raises
    TypeError for a real (mpf) entry: that is measured in ULPs (``ulp_error``), not
    compared."""
    g = int(got)
    if entry is Unspecified:
        return True
    if entry is None:
        return (g & fmt.abs_mask) > fmt.pos_inf
    if isinstance(entry, Exact):
        return int(entry.bits) == g
    if isinstance(entry, OneOf):
        return entry.matches(g, fmt)
    if isinstance(entry, Congruent):
        return entry.matches(g)
    raise TypeError(f"entry={entry!r} is a real reference; measure it with ulp_error")


def reference(name: str, args: tuple, kinds: tuple, fmt: FloatFormat, prec: int,
              mode: str = "rte"):
    """The reference for one input of built-in ``name`` in format ``fmt``.

    ``args`` are the argument values in signature order: patterns of ``fmt`` for 'float'
    arguments (non-NaN: NaN arguments are judged by rule), ints for 'int' (int32) and
    'uint' (nan's payload) ones; ``kinds`` their kinds.  ``prec`` is the mpmath working
    precision in bits; ``mode`` ('rte', 'rtz', 'rtp', 'rtn') the rounding of the exact
    operations that round (fdim, ldexp, fract, mad) and the sign of an exact zero sum
    (add, sub, fma); rint always rounds to nearest even (OpenCL SPIR-V Env 3.8.2).
    ``half_<f>``/``native_<f>`` take the reference of ``<f>`` (``base_name``).

    Returns a tuple with one entry per output of the built-in (``ret`` first, then the
    pointer outputs): an ``mpf``, ``Exact``, ``OneOf``, ``Congruent``, ``Unspecified`` or
    None, as the module docstring says.  Raises KeyError for a built-in without a
    reference, ValueError for a NaN float argument or an unknown ``mode``.
    """
    if mode not in ROUNDING:
        raise ValueError(f"mode={mode!r} is not one of {sorted(ROUNDING)}")
    for a, k in zip(args, kinds):
        if k == "float" and (int(a) & fmt.abs_mask) > fmt.pos_inf:
            raise ValueError(f"{name}: argument {fmt.hex(int(a))} is a NaN; NaN arguments "
                             "are judged by rule, not by the reference")
    base = base_name(name)
    ints = [int(a) for a in args]
    if base in EXACT_FUNCTIONS:
        return tuple(EXACT_FUNCTIONS[base](fmt, mode, *ints))
    if base in PATTERN_REFERENCES:
        with mpmath.workprec(prec):
            return tuple(PATTERN_REFERENCES[base](fmt, mode, prec, *ints))
    fn = REFERENCES[base]
    try:
        vals = [value_of(a, fmt) if k == "float" else a for a, k in zip(ints, kinds)]
        with mpmath.workprec(prec):
            if base in _AT_ZERO and kinds[0] == "float" and _is_zero(ints[0], fmt):
                r = _AT_ZERO[base](_neg(ints[0], fmt), *vals[1:])
            else:
                r = fn(*vals)
    except _Undefined:
        return (None,)
    except _Unjudged:
        return (Unspecified,)
    return (_entry(r, fmt),)
