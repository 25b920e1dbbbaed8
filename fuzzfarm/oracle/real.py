"""References of the real functions: the mpmath value at ``prec`` bits (``REFERENCES``),
with their domains, poles and the results at a signed zero (``_AT_ZERO``), which mpmath
cannot see.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Callable

import mpmath
from mpmath import mpf

from fuzzfarm.rounding import _as_mpf, _sign_man_exp


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
