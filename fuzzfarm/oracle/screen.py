"""The fast tier of the oracle (docs/design.md, decision 4): a vectorized screen that proves
"within the bound" or "beyond the bound" where it can, and leaves everything else undecided
for the exact mpmath path.

API
---
``screen(name, args, got_bits, bound_ulps, fmt) -> Screened(passed, failed, err)``:

* ``args``: one array of shape (n,) per argument, in signature order: float64 arrays for
  float arguments (the exact values of the patterns, ``formats.to_float``; binary64 values
  are exact in float64 too, the screen widens them to long double itself), integer arrays
  for int arguments (pown, rootn).
* ``got_bits``: the device's result patterns, shape (n,), any integer dtype (converted to
  ``fmt.uint``).
* ``bound_ulps``: the bound in ULPs (float >= 0): ``passed`` means the screen proved
  ``|got - f| <= bound_ulps * ulp(f)`` (``< 0.5 ulp``, hence ``got == RN(f)``, where
  ``bound_ulps < 1``: a correctly rounded bound), ``failed`` that it proved ``|got - f| >
  bound_ulps * ulp(f)`` with ``got`` finite; f is the infinitely precise result and ulp(f)
  is OpenCL's ULP (``oracle.ulp``: at a power of two the gap below).  ``err`` (float64, in
  ULPs) is the measured error where ``passed | failed``, NaN elsewhere: ``|got - r| /
  ulp`` with the smallest ULP the reference interval admits (passed) or the largest
  (failed); away from powers of two both equal ulp(f) and ``err`` is exact to within
  ``margin_ulps(name, fmt)``.
* Overflow (binary16/binary32, bound >= 1/2): where the reference is provably beyond the
  round-to-nearest overflow threshold (max_finite + half its ULP), ``got`` equal to the
  infinity of f's sign is passed with ``err`` 0 (RN(f) is that infinity, which
  ``oracle.ulp_error`` measures as 0 ULP).  This holds in round to nearest only: a caller
  judging a directed rounding mode must drop the passes of infinite results (the
  checker does).  Likewise a zero ``got`` passes (err 0) where the float64 reference of a
  function that is never zero there (exp, exp2, exp10, pow, powr, pown, erfc) underflowed
  below 2**-1000: |f| is then far below half the format's smallest subnormal, and
  ``oracle.ulp_error`` measures the magnitude (the sign of a zero is the rules' business).
  Not for a correctly rounded bound.
* Raises ValueError for a negative or NaN bound or arrays of different lengths.  For a
  (function, format) without a screen (``has_screen`` False) nothing is decided (all False,
  err NaN).

What the verdicts assume (and what they do not)
-----------------------------------------------
The verdicts compare with the exact path's *ULP measure* (``oracle.ulp_error`` against the
bound, in round to nearest); they know nothing of the catalogue's prescribed results
(applied before), of flush-to-zero allowances, absolute bounds, or correctly rounded
results in a directed rounding mode: the caller must not screen elements judged by those.
(As a precaution ``failed`` is never claimed for a zero ``got`` whose real result may be
subnormal, the flush-to-zero case.)

An element is undecided (neither passed nor failed) when its reference is zero, NaN,
infinite, below the reference type's normal range (float64: 2**-1022; but for the
underflow passes described above) or at or beyond 2**(emax+1) (overflow goes exact but for
the passes just described); when an argument is infinite or NaN and the function
may have a finite value there (atan, tanh, pow, ...: those are the rules' business); when
``got`` is NaN or infinite (but for those overflow passes); when the error is within the
margin of the bound; and, for a correctly rounded bound, when ``got`` is a zero (its sign
must match RN(f)'s, which the exact path checks).

The proof
---------
The reference r (float64 for binary16/binary32 results, x87 long double for binary64)
carries a relative error of at most REL (below).  Let ``a_lo = |r|(1 - 4 REL)`` and
``a_hi = |r|(1 + 4 REL)``, rounded in the reference type: every real within REL of r lies
strictly inside (a_lo, a_hi).  ulp is non-decreasing in |f|, so every such f has
``ulp(f) >= u_lo = 2**(max(floor(log2 a_lo), emin) - p + 1)`` (a_lo < f excludes f being
the power of two 2**floor(log2 a_lo), the one place the ULP is the smaller gap below) and
``ulp(f) <= u_hi`` (same with a_hi).  With ``d = |got - r|`` (computed with one rounding,
relative 2**-53 or 2**-64):

    passed  <=>  d / u_lo + margin <  bound        failed  <=>  d / u_hi - margin > bound

with ``margin = REL * 2**(p + 1) + bound * 2**-(t - 3)`` ULPs (t = 53 or 64, the reference
type's precision): ``|r - f| / u_lo <= REL * 2**p (1 + 6 REL)`` because ``|f| < 2**p u_lo
(1 + 6 REL)``, so the margin covers twice the reference error plus the screen's own
roundings.  binary16 and binary32 use float64 with REL = 2**-45: margins 2**-33 and 2**-20
ULP; binary64 uses long double with REL = 2**-56: margin 1/4 ULP (1/32 for the IEEE
operations and sqrt, REL = 2**-59).  The fast path for binary16/binary32 computes
``P = 2**floor(log2 a_lo)`` by masking the exponent bits of the float64 ``a_lo`` and tests
``d < P * (bound - margin) * 2**(1 - p)`` in cache-sized blocks (``BLOCK`` elements); the
elements it does not pass (subnormal results, zeros, specials, failures, near-bound
errors) are decided by the same inequalities evaluated with frexp/ldexp.  Where the
arguments of an odd or even function come as (v, -v) pairs (``PARITY``; fuzzfarm.orchestrate.sweep
numbers its space so), the reference is evaluated once per pair: -r(v) or r(v) carries
the same relative error for f(-v).

References and their assumed relative error (REL)
-------------------------------------------------
float64 references (binary16 and binary32 results), REL = 2**-45 for all: numpy's float64
ufuncs call glibc's libm or, for some functions on AVX-512 machines, numpy's own SIMD
kernels; glibc's manual ("Errors in Math Functions") lists maximum errors of a few ULP
(2**-53 relative each) for the x86_64 double functions used here (sin cos tan asin acos
atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log log2 log10 log1p cbrt hypot
pow erf erfc), so 2**-45 leaves a factor of 32 or more over any of them.  Measured here
(tests/test_screen_soundness.py, numpy 2.4 on AVX-512): at most 2**-50.3 (tgamma),
2**-51.4 (erfc), 2**-51.7 (the *pi functions), 2**-52.4 or less elsewhere.

* sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log
  log2 log10 log1p sqrt cbrt hypot pow: the numpy ufunc.  powr: pow for x > 0, NaN for
  x <= 0 (powr(x < 0) is a NaN; zeros are the rules').
* asinpi acospi atanpi atan2pi: the ufunc divided by pi (one more rounding).
* sinpi cospi tanpi: exact reduction x = m + y with m = rint(x), |y| <= 1/2 (exact for
  every binary16/32/64 value), then sin(pi y), sin(pi (1/2 - |y|)) and tan(pi w) with
  w = min(|y|, 1/2 - |y|) <= 1/4, inverted when |y| > 1/4; the sign of (-1)**m.  The
  rounding of pi*y changes the result's relative error by at most 2**-52 (|y cot y| <= 1).
  Exact zeros and poles (integers, half-integers) come out as 0 or inf: undecided.
* exp10: pow(10, x).  rsqrt: 1/sqrt(x).  degrees, radians: x * (180/pi), x * (pi/180).
* pown: pow(x, n) (n is exact in float64).  rootn: pow(|x|, 1/n) corrected to first order
  for the rounding of 1/n (Dekker's exact product gives 1 - n*fl(1/n); without it the
  error would reach 745/3 * 2**-53); NaN for n = 0 and for x < 0 with n even.
* erf, erfc: CPython's math.erf/math.erfc (glibc's erf/erfc: 1 and 5 ULP documented),
  element by element (about 10**7 per second: a hundred times faster than mpmath).
* tgamma: CPython's math.gamma (a Lanczos approximation with exact reflection, "accurate
  to within a few ULP" in CPython's source; tested below 2**-49): REL = 2**-45; NaN for
  x <= 0 integers, x > 171.5 and x < -170 (those go exact).
* add sub mul divide recip fma: the IEEE operation in float64: one rounding (a binary16/32
  product is exact in float64, so fma too): REL = 2**-45 keeps them uniform.

long double references (binary64 results), only where numpy's long double has a 64-bit
significand (x87 extended, ``np.finfo(np.longdouble).nmant >= 63``), REL = 2**-56 unless
said otherwise: numpy's long double ufuncs call glibc's sinl, expl, powl, ... whose
documented maximum errors for x86_64 long double are a few ULP (2**-63 each), so 2**-56 is
a factor 16 or more above them (measured: at most 2**-62.2, acosh and atanh).  The same
formulas as above with pi rounded to long double (acosl(-1)).  sqrt, add, sub, mul,
divide, recip: one IEEE rounding to 64 bits, REL = 2**-59.

tests/test_screen_soundness.py measures every reference against mpmath on a few thousand
diverse inputs per function and format and asserts its relative error stays below REL/16.

Functions screened
------------------
binary16 and binary32: acos acosh acospi add asin asinh asinpi atan atan2 atan2pi atanh
atanpi cbrt cos cosh cospi degrees divide erf erfc exp exp10 exp2 expm1 fma hypot log
log10 log1p log2 mul pow pown powr radians recip rootn rsqrt sin sinh sinpi sqrt sub tan
tanh tanpi tgamma.

binary64: the same but erf, erfc, tgamma (numpy has no long double erf or gamma; a ctypes
call per element would not beat mpmath by enough to matter) and fma (the long double
product is rounded, and a cancelling addend would magnify that rounding without bound).

Left to the exact path, and why: lgamma and lgamma_r (no ULP bound: the catalogue says
"unbounded", measured only; float64 lgamma also loses all relative accuracy near its
zeros), sincos, frexp, modf, fract, remquo (several outputs), mad (fused or not: exact
choices), the exact operations (fabs, fmin, fmax, fdim, fmod, remainder, copysign,
nextafter, ldexp, ilogb, logb, rint, round, ceil, floor, trunc, ...: exact comparisons are
already fast), mix and smoothstep (absolute tolerances, undefined cases), half_* (8192 ULP
with the flush allowance) and native_* (implementation-defined).
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from fuzzfarm.formats import BINARY32, FloatFormat

__all__ = ["Screened", "screen", "has_screen", "screen_pass", "margin_ulps", "reference_error",
           "SCREENS", "SCREEN_REL_ERROR", "LONGDOUBLE_OK", "BLOCK"]

#: The default assumed relative error of the float64 references (module docstring).
SCREEN_REL_ERROR = 2.0 ** -45
#: ... of the long double references, and of those that are one IEEE rounding.
_REL_LD = 2.0 ** -56
_REL_LD_IEEE = 2.0 ** -59

#: Elements per block of the float64 fast path (keeps its temporaries in L2).
BLOCK = 1 << 14
_BLOCK_LD = 1 << 12

#: numpy's long double is x87 extended (64-bit significand) on this platform.
LONGDOUBLE_OK = np.finfo(np.longdouble).nmant >= 63

_LD = np.longdouble
_EXP_MASK = np.uint64(0x7FF0000000000000)


class Screened(NamedTuple):
    """The screen's verdicts for n elements.

    ``passed`` (bool, shape (n,)): proven ``|got - f| <= bound * ulp(f)`` (for a bound
    below 1 ULP: proven ``got == RN(f)``).  ``failed`` (bool, (n,)): proven ``|got - f| >
    bound * ulp(f)`` with ``got`` finite.  ``err`` (float64, (n,)): the error in ULPs where
    ``passed | failed`` (see the module docstring), NaN elsewhere.  Never both.
    """

    passed: np.ndarray
    failed: np.ndarray
    err: np.ndarray


class _Const:
    """The constants of one reference type (float64 or long double)."""

    def __init__(self, dt):
        self.dt = dt
        self.one = dt(1)
        self.half = dt(0.5)
        self.quarter = dt(0.25)
        self.ten = dt(10)
        if dt is np.float64:
            self.pi = np.float64(np.pi)
            self.split = np.float64(2.0 ** 27 + 1)
            self.digits = 53
            self.tiny = np.float64(2.0 ** -1022)
        else:
            self.pi = np.arccos(dt(-1))        # acosl(-1): pi rounded to long double
            self.split = dt(2.0 ** 32 + 1)
            self.digits = int(np.finfo(dt).nmant) + 1
            self.tiny = np.finfo(dt).smallest_normal
        self.deg = dt(180) / self.pi
        self.rad = self.pi / dt(180)


_C64 = _Const(np.float64)
_CLD = _Const(_LD) if LONGDOUBLE_OK else None


# --------------------------------------------------------------------------- references
# Each takes (args, out, k): args a tuple of arrays (floats of k.dt, ints as int64), out an
# array of k.dt to write into (or None), k the _Const; returns the reference array.

def _ufunc(f):
    def ref(a, out, k):
        return f(*a, out=out) if out is not None else f(*a)
    ref.__name__ = f.__name__
    return ref


def _over_pi(f):
    def ref(a, out, k):
        r = f(*a, out=out) if out is not None else f(*a)
        return np.divide(r, k.pi, out=r)
    ref.__name__ = f.__name__ + "_over_pi"
    return ref


def _odd(m):
    """True where the integral float m is odd (m * 0.5 and rint are exact)."""
    h = m * 0.5
    return np.rint(h) != h


def _sinpi(a, out, k):
    x = a[0]
    m = np.rint(x)
    y = x - m                                   # exact, |y| <= 1/2
    r = np.multiply(y, k.pi, out=out)
    np.sin(r, out=r)
    np.negative(r, out=r, where=_odd(m))
    return r


def _cospi(a, out, k):
    x = a[0]
    m = np.rint(x)
    y = np.abs(x - m)
    z = k.half - y                              # exact for y >= 1/4; else one rounding
    r = np.multiply(z, k.pi, out=out)
    np.sin(r, out=r)
    np.negative(r, out=r, where=_odd(m))
    return r


def _tanpi(a, out, k):
    x = a[0]
    y = x - np.rint(x)                          # tanpi has period 1
    z = np.abs(y)
    w = np.minimum(z, k.half - z)               # <= 1/4; 1/2 - z exact where it is chosen
    t = np.tan(w * k.pi)
    with np.errstate(divide="ignore"):
        r = np.where(z > k.quarter, k.one / t, t)
    return np.copysign(r, y, out=out)


def _exp10(a, out, k):
    return np.power(k.ten, a[0], out=out)


def _rsqrt(a, out, k):
    r = np.sqrt(a[0], out=out)
    return np.divide(k.one, r, out=r)


def _degrees(a, out, k):
    return np.multiply(a[0], k.deg, out=out)


def _radians(a, out, k):
    return np.multiply(a[0], k.rad, out=out)


def _recip(a, out, k):
    return np.divide(k.one, a[0], out=out)


def _fma(a, out, k):
    r = np.multiply(a[0], a[1], out=out)        # exact for binary16/32 operands in float64
    return np.add(r, a[2], out=r)


def _powr(a, out, k):
    x, y = a
    r = np.power(x, y, out=out)
    r[~(x > 0)] = np.nan                        # powr(x < 0, y) is a NaN; zeros: rules
    return r


def _pown(a, out, k):
    x, n = a
    return np.power(x, n.astype(k.dt), out=out)


def _two_product_error(a, b, p, k):
    """The exact a*b - p for p = fl(a*b) (Dekker/Veltkamp; no overflow for our ranges)."""
    def split(v):
        c = k.split * v
        hi = c - (c - v)
        return hi, v - hi
    ah, al = split(a)
    bh, bl = split(b)
    return ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _rootn(a, out, k):
    x, n = a
    nf = n.astype(k.dt)
    with np.errstate(all="ignore"):
        q = k.one / nf
        prod = nf * q
        e = (k.one - prod) - _two_product_error(nf, q, prod, k)   # 1 - n*q, |e| <= 2**-t
        ax = np.abs(x)
        mag = np.power(ax, q)
        # x**(1/n) = x**q * exp((e/n) ln x); |(e/n) ln x| < 2**-43, so first order suffices
        corr = (e / nf) * np.log(ax)
        r = np.add(mag, mag * np.where(e == 0, 0, corr), out=out)
    np.negative(r, out=r, where=x < 0)
    r[(n == 0) | ((x < 0) & (n % 2 == 0))] = np.nan
    return r


def _math(f):
    def ref(a, out, k):
        x = a[0]
        v = np.fromiter(map(f, x.tolist()), np.float64, count=x.shape[0])
        if out is None:
            return v
        out[...] = v
        return out
    ref.__name__ = "math_" + f.__name__
    return ref


def _math_erf(a, out, k):
    return _math(math.erf)(a, out, k)


def _math_erfc(a, out, k):
    return _math(math.erfc)(a, out, k)


def _tgamma(a, out, k):
    x = a[0]
    ok = (x < 171.5) & (x > -170.0) & ~((x <= 0) & (np.rint(x) == x))
    r = np.full(x.shape, np.nan) if out is None else out
    r[...] = np.nan
    xs = x[ok]
    r[ok] = np.fromiter(map(math.gamma, xs.tolist()), np.float64, count=xs.shape[0])
    return r


class _Entry(NamedTuple):
    ref: Callable            # (args, out, k) -> array
    rel64: float | None      # float64 reference's REL (None: no float64 screen)
    rel_ld: float | None     # long double reference's REL (None: no binary64 screen)
    check_args: bool         # infinite or NaN float arguments may give a finite reference


_D, _L, _I = SCREEN_REL_ERROR, _REL_LD, _REL_LD_IEEE

_TABLE: dict[str, _Entry] = {
    "sin": _Entry(_ufunc(np.sin), _D, _L, False),
    "cos": _Entry(_ufunc(np.cos), _D, _L, False),
    "tan": _Entry(_ufunc(np.tan), _D, _L, False),
    "sinpi": _Entry(_sinpi, _D, _L, False),
    "cospi": _Entry(_cospi, _D, _L, False),
    "tanpi": _Entry(_tanpi, _D, _L, False),
    "asin": _Entry(_ufunc(np.arcsin), _D, _L, False),
    "acos": _Entry(_ufunc(np.arccos), _D, _L, False),
    "atan": _Entry(_ufunc(np.arctan), _D, _L, True),
    "atan2": _Entry(_ufunc(np.arctan2), _D, _L, True),
    "asinpi": _Entry(_over_pi(np.arcsin), _D, _L, False),
    "acospi": _Entry(_over_pi(np.arccos), _D, _L, False),
    "atanpi": _Entry(_over_pi(np.arctan), _D, _L, True),
    "atan2pi": _Entry(_over_pi(np.arctan2), _D, _L, True),
    "sinh": _Entry(_ufunc(np.sinh), _D, _L, False),
    "cosh": _Entry(_ufunc(np.cosh), _D, _L, False),
    "tanh": _Entry(_ufunc(np.tanh), _D, _L, True),
    "asinh": _Entry(_ufunc(np.arcsinh), _D, _L, False),
    "acosh": _Entry(_ufunc(np.arccosh), _D, _L, False),
    "atanh": _Entry(_ufunc(np.arctanh), _D, _L, False),
    "exp": _Entry(_ufunc(np.exp), _D, _L, False),
    "exp2": _Entry(_ufunc(np.exp2), _D, _L, False),
    "exp10": _Entry(_exp10, _D, _L, False),
    "expm1": _Entry(_ufunc(np.expm1), _D, _L, True),
    "log": _Entry(_ufunc(np.log), _D, _L, False),
    "log2": _Entry(_ufunc(np.log2), _D, _L, False),
    "log10": _Entry(_ufunc(np.log10), _D, _L, False),
    "log1p": _Entry(_ufunc(np.log1p), _D, _L, False),
    "sqrt": _Entry(_ufunc(np.sqrt), _D, _I, False),
    "rsqrt": _Entry(_rsqrt, _D, _L, False),
    "cbrt": _Entry(_ufunc(np.cbrt), _D, _L, False),
    "hypot": _Entry(_ufunc(np.hypot), _D, _L, False),
    "pow": _Entry(_ufunc(np.power), _D, _L, True),
    "powr": _Entry(_powr, _D, _L, True),
    "pown": _Entry(_pown, _D, _L, True),
    "rootn": _Entry(_rootn, _D, _L, False),
    "erf": _Entry(_math_erf, _D, None, True),
    "erfc": _Entry(_math_erfc, _D, None, True),
    "tgamma": _Entry(_tgamma, _D, None, True),
    "degrees": _Entry(_degrees, _D, _L, False),
    "radians": _Entry(_radians, _D, _L, False),
    "add": _Entry(_ufunc(np.add), _D, _I, False),
    "sub": _Entry(_ufunc(np.subtract), _D, _I, False),
    "mul": _Entry(_ufunc(np.multiply), _D, _I, False),
    "divide": _Entry(_ufunc(np.divide), _D, _I, False),
    "recip": _Entry(_recip, _D, _I, False),
    "fma": _Entry(_fma, _D, None, False),
}


#: Odd (-1) and even (+1) functions: f(-x) = -f(x) or f(x).  Where the arguments come as
#: pairs (v, -v) at even and odd positions (fuzzfarm.orchestrate.sweep numbers its space so), the
#: float64 reference is evaluated once per pair: r(-v) = -r(v) or r(v) carries the same
#: relative error.
PARITY = {**{n: -1 for n in ("sin", "tan", "sinpi", "tanpi", "asin", "atan", "asinpi",
                              "atanpi", "sinh", "tanh", "asinh", "atanh", "erf", "cbrt")},
          **{n: 1 for n in ("cos", "cospi", "cosh")}}


def _overflowing():
    """References whose float64 value is infinite only by overflow (no pole at a finite
    argument the rules leave to the screen): their infinite reference means |f| > 2**1024."""
    return {_TABLE[n].ref for n in ("exp", "exp2", "exp10", "expm1", "sinh", "cosh")}


def _paired(name: str, args: list) -> int:
    """PARITY[name] if ``args`` is one float64 array of (v, -v) pairs, else 0."""
    sign = PARITY.get(name, 0)
    if not sign or len(args) != 1 or args[0].shape[0] % 2 or args[0].dtype != np.float64:
        return 0
    x = args[0]
    with np.errstate(invalid="ignore"):
        head = x[:256]                  # most callers' arguments fail at once: look first
        if not np.array_equal(head[1::2], np.negative(head[0::2])):
            return 0
        return sign if np.array_equal(x[1::2], np.negative(x[0::2])) else 0


_OVERFLOWING = _overflowing()
#: References that are 0 only by underflow, for the arguments the rules leave to the
#: screen (exp(x) > 0; pow's exact zeros are the rules' zero bases; erfc(x) > 0).
_UNDERFLOWING = {_TABLE[n].ref for n in ("exp", "exp2", "exp10", "pow", "powr", "pown",
                                          "erfc")}


def _float64_reference(name):
    ref = _TABLE[name].ref

    def f(*args):
        """The float64 reference of ``name`` on float64 (and int) arrays."""
        with np.errstate(all="ignore"):
            return ref(tuple(np.asarray(a) for a in args), None, _C64)
    f.__name__ = f"{name}_float64"
    return f


#: name -> float64 reference f(*args) on float64 arrays (int arguments as int arrays);
#: every function with a binary16/binary32 screen.
SCREENS: dict[str, Callable] = {n: _float64_reference(n) for n, e in _TABLE.items()
                                if e.rel64 is not None}


def _kind(name: str, fmt: FloatFormat):
    """('f64' | 'ld', REL) for a screened (name, fmt), else None."""
    e = _TABLE.get(name)
    if e is None:
        return None
    if fmt.name in ("binary16", "binary32") and e.rel64 is not None:
        return "f64", e.rel64
    if fmt.name == "binary64" and LONGDOUBLE_OK and e.rel_ld is not None:
        return "ld", e.rel_ld
    return None


def has_screen(name: str, fmt: FloatFormat) -> bool:
    """True if ``screen`` can decide anything for built-in ``name`` in format ``fmt``."""
    return _kind(name, fmt) is not None


def reference_error(name: str, fmt: FloatFormat) -> float:
    """The assumed relative error REL of the reference ``screen`` uses for ``name`` in
    ``fmt`` (a float, e.g. 2**-45).  Raises KeyError where ``has_screen`` is False."""
    k = _kind(name, fmt)
    if k is None:
        raise KeyError(f"no screen for {name} in {fmt.name}")
    return k[1]


def _margin(rel: float, bound: float, fmt: FloatFormat, digits: int) -> float:
    """Twice the reference's error in ULPs (REL * 2**p (1 + 6 REL), module docstring) plus
    the rounding of |got - r| (bound * 2**-(digits - 1)) with room to spare."""
    return rel * 2.0 ** (fmt.precision + 1) + bound * 2.0 ** -(digits - 3)


def margin_ulps(name: str, fmt: FloatFormat, bound_ulps: float = 16.0) -> float:
    """The screen's margin in ULPs for ``name`` in ``fmt`` at ``bound_ulps``: errors
    within it of the bound stay undecided.  Raises KeyError where ``has_screen`` is
    False."""
    kind, rel = _kind(name, fmt) or (None, None)
    if kind is None:
        raise KeyError(f"no screen for {name} in {fmt.name}")
    return _margin(rel, bound_ulps, fmt, 53 if kind == "f64" else _CLD.digits)


# --------------------------------------------------------------------------- the verdicts
def _careful(r, g, bound, fmt, rel, k):
    """Verdicts for references ``r`` and device values ``g`` (arrays of k.dt of one shape
    (m,); g exact), by frexp/ldexp.  Returns ``(j, passed, failed, err)``: the positions j
    (int array) of the elements that may be decided and their verdicts (module docstring);
    every other element is undecided."""
    dt = k.dt
    p, emin, emax = fmt.precision, fmt.emin, fmt.emax
    with np.errstate(all="ignore"):
        a = np.abs(r)
        lo = a * (k.one - dt(4 * rel))
        # finite r and got, r above the reference type's normal range, below 2**(emax+1)
        top = np.ldexp(k.one, emax + 1) * (k.one - dt(8 * rel))    # 2**1024: long double
        ok = (lo >= k.tiny) & (a < top) & np.isfinite(g)
        j = np.flatnonzero(ok)
        if j.size == 0:
            return j, np.zeros(0, bool), np.zeros(0, bool), np.zeros(0)
        r, g, a, lo = r[j], g[j], a[j], lo[j]
        hi = a * (k.one + dt(4 * rel))
        _, e_lo = np.frexp(lo)                  # lo = m 2**e, m in [1/2, 1)
        _, e_hi = np.frexp(hi)
        e_lo = e_lo.astype(np.int64) - 1        # floor(log2 lo)
        e_hi = e_hi.astype(np.int64) - 1
        ok = e_hi <= emax
        d = np.abs(g - r)
        err_lo = np.ldexp(d, (p - 1 - np.maximum(e_lo, emin)).astype(np.int32))
        err_hi = np.ldexp(d, (p - 1 - np.maximum(e_hi, emin)).astype(np.int32))
        m = _margin(rel, bound, fmt, k.digits)
        ps = ok & (err_lo < dt(bound - m))
        if bound < 1:       # a zero within half an ULP is RN(f) only with RN(f)'s sign
            ps &= ~((g == 0) & (np.signbit(g) != np.signbit(r)))
        fl = ok & (err_hi > dt(bound + m)) & ~((g == 0) & (e_lo < emin))
        er = np.where(ps, err_lo, np.where(fl, err_hi, np.nan)).astype(np.float64)
    return j, ps, fl, er


class _F64(NamedTuple):
    """The constants of _fast64 for one (reference, error, bound, format)."""

    c_low: np.float64       # 1 - 4 REL: |r| (1 - 4 REL) <= |f|
    below: np.float64       # bound - margin: an error provably within the bound
    lim: np.uint64          # bits of 2**emax: P <= 2**emax
    k_inv: np.uint64        # bits(2**(p-1) / P) = k_inv - bits(P)
    inv_max: np.uint64      # bits of 1 / (the subnormal ULP)
    top: np.float64         # _careful's upper range limit
    overflow: np.float64    # the round-to-nearest overflow threshold
    overflows: bool         # the reference may overflow (an infinite r is not a pole)
    underflows: bool        # the reference may underflow to 0
    cr: bool                # bound < 1: a zero's sign matters
    check: bool             # the reference's non-finite arguments are masked


def _f64_constants(entry, rel, bound, fmt) -> _F64:
    p, emax = fmt.precision, fmt.emax
    m = _margin(rel, bound, fmt, 53)
    return _F64(np.float64(1 - 4 * rel), np.float64(bound - m),
                np.uint64((emax + 1023) << 52), np.uint64((2045 + p) << 52),
                np.uint64((p - 1 - fmt.emin + 1023) << 52),
                np.float64(2.0 ** (emax + 1) * (1 - 8 * rel)),
                # max_finite + half its ULP
                np.float64(2.0 ** (emax + 1) * (1 - 2.0 ** -(p + 1))),
                entry.ref in _OVERFLOWING, entry.ref in _UNDERFLOWING, bound < 1,
                bool(entry.check_args))


def _fast64(entry, rel, args, gotf, bound, fmt, passed, failed, err, parity=0):
    """binary16/binary32 against float64 references, block by block: every element whose
    error is provably within the bound is passed here; the others go to _careful.
    ``parity`` (see ``_paired``): the arguments are (v, -v) pairs and the function odd
    (-1) or even (+1): the reference is evaluated on the even positions only."""
    k = _f64_constants(entry, rel, bound, fmt)
    n = gotf.shape[0]
    b = min(BLOCK, n)
    rb, tb, gb = (np.empty(b) for _ in range(3))
    hb = np.empty(b // 2 + 1) if parity else None
    nb = np.empty(b, bool)
    for i0 in range(0, n, b):
        i1 = min(i0 + b, n)
        s = i1 - i0
        ab = tuple(x[i0:i1] for x in args)
        r = _block_reference(entry, ab, rb[:s], hb, parity)
        pb, eb, got = passed[i0:i1], err[i0:i1], gotf[i0:i1]
        invalid = _block_pass(k, r, got, tb[:s], gb[:s], nb[:s], pb, eb)
        if invalid is not None:
            pb &= ~invalid
            if bound >= 0.5:
                _extreme_passes(k, r, got, ab, pb, eb)
        if pb.all():
            continue
        _block_rest(k, r, got, gb[:s], nb[:s], pb, failed[i0:i1], eb, bound, fmt, rel)


def _block_reference(entry, ab: tuple, rb, hb, parity: int):
    """The float64 references of one block's arguments ``ab`` into ``rb`` (NaN where an
    argument is not finite and the reference asks for it); with ``parity`` evaluated at
    the even positions only (``hb``: room for them)."""
    s = rb.shape[0]
    if parity:          # the block starts and ends even: pairs never straddle a block
        r = rb
        half = entry.ref((ab[0][0::2],), hb[:s // 2], _C64)
        r[0::2] = half
        if parity < 0:
            np.negative(half, out=r[1::2])
        else:
            r[1::2] = half
    else:
        r = entry.ref(ab, rb, _C64)
    if entry.check_args:
        for x in ab:
            if x.dtype.kind == "f":
                r[~np.isfinite(x)] = np.nan
    return r


def _block_pass(k: _F64, r, got, tb, gb, nb, pb, eb):
    """One block's provable passes into ``pb`` and their errors (ULPs) into ``eb``:
    d / u_lo < bound - margin with u_lo the smallest ULP |f| can have.  Returns the mask
    of references whose P is 0 (r zero or float64-subnormal) or beyond 2**emax (overflow,
    inf, NaN), undecided here, or None where there are none (the common case: tested by
    reductions, masked only where present)."""
    t = np.multiply(r, k.c_low, out=tb)
    ti = t.view(np.uint64)
    np.bitwise_and(ti, _EXP_MASK, out=ti)           # P = 2**floor(log2 |r|(1 - 4 REL))
    invalid = None
    if ti.min() == 0 or ti.max() > k.lim:
        invalid = (ti == 0) | (ti > k.lim)
    np.subtract(k.k_inv, ti, out=ti)                # 2**(p-1) / P; for P < 2**emin
    np.minimum(ti, k.inv_max, out=ti)               # (or 0) larger: clamp -> 1 / u_lo
    g = gb
    np.copyto(g, got)
    if k.cr:
        np.not_equal(g, 0, out=nb)
    np.subtract(g, r, out=g)
    np.abs(g, out=g)                                # d = |got - r|
    np.multiply(g, t, out=eb)                       # d / u_lo
    np.less(eb, k.below, out=pb)                    # NaN r or got, inf got: False
    if k.cr:
        np.logical_and(pb, nb, out=pb)
    return invalid


def _extreme_passes(k: _F64, r, got, ab: tuple, pb, eb) -> None:
    """Passes beyond the round-to-nearest overflow threshold (RN(f) is the infinity of
    f's sign, which oracle.ulp_error measures as 0 ULP; the caller must not take these
    for a directed rounding mode) and, for a reference that underflows, zero results of a
    reference that underflowed to 0 (|f| below a few float64 subnormal ULPs, far below
    half the format's smallest subnormal: within 2**-900 ULP; the sign is left to the
    rules, as on the exact path)."""
    a = np.abs(r)
    if not k.overflows:       # an infinite reference may be a pole: undecided
        a = np.where(np.isinf(a), 0.0, a)
    ovf = (a * k.c_low > k.overflow) & (got == np.copysign(np.inf, r))
    if ovf.any():
        pb |= ovf
        eb[ovf] = 0.0
    if k.underflows and not k.cr:
        unf = (np.abs(r) < 2.0 ** -1000) & (got == 0)
        if k.check:
            for x in ab:
                if x.dtype.kind == "f":
                    unf &= np.isfinite(x)
        if unf.any():
            pb |= unf
            eb[unf] = 0.0


def _block_rest(k: _F64, r, got, gb, nb, pb, fb, eb, bound, fmt, rel) -> None:
    """The block's elements not passed: the hopeless dropped first where many are left
    (overflow, NaN), the rest through _careful (passes, failures, errors)."""
    s = r.shape[0]
    np.logical_not(pb, out=nb)
    idx = np.flatnonzero(nb)
    eb[idx] = np.nan
    if idx.size > s >> 4:       # many left (overflow, NaN): drop the hopeless first
        a = np.abs(r, out=gb)                       # _careful's range test
        nb &= (a * k.c_low >= 2.0 ** -1022) & (a < k.top)
        idx = np.flatnonzero(nb)
    j, ps, fl, er = _careful(r[idx], got[idx].astype(np.float64), bound, fmt, rel, _C64)
    j = idx[j]
    pb[j] = ps
    fb[j] = fl
    eb[j] = er


def _long_double(entry, rel, args, gotf, bound, fmt, passed, failed, err):
    """binary64 against long double references, block by block."""
    n = gotf.shape[0]
    b = min(_BLOCK_LD, n)
    rb = np.empty(b, _LD)
    for i0 in range(0, n, b):
        i1 = min(i0 + b, n)
        s = i1 - i0
        ab = tuple(x[i0:i1].astype(_LD) if x.dtype.kind == "f" else x[i0:i1] for x in args)
        r = entry.ref(ab, rb[:s], _CLD)
        if entry.check_args:
            for x in ab:
                if x.dtype.kind == "f":
                    r[~np.isfinite(x)] = np.nan
        j, ps, fl, er = _careful(r, gotf[i0:i1].astype(_LD), bound, fmt, rel, _CLD)
        j = j + i0
        passed[j] = ps
        failed[j] = fl
        err[j] = er


def screen(name: str, args: list, got_bits: np.ndarray, bound_ulps: float,
           fmt: FloatFormat) -> Screened:
    """Decide which device results are provably within, or provably beyond, the bound.

    ``name`` a built-in (catalogue name); ``args`` one array of shape (n,) per argument
    (float64 values for float arguments, integers for int ones); ``got_bits`` the result
    patterns, shape (n,); ``bound_ulps`` the bound in ULPs; ``fmt`` the result's format.
    Returns a Screened (module docstring).  Raises ValueError for a negative or NaN bound
    or arrays whose lengths differ from ``got_bits``'s.
    """
    bound = float(bound_ulps)
    if not bound >= 0:
        raise ValueError(f"bound_ulps={bound_ulps!r} must be a number >= 0")
    got = np.asarray(got_bits)
    if got.ndim != 1:
        raise ValueError(f"got_bits must be one-dimensional, not of shape {got.shape}")
    n = got.shape[0]
    args = [np.ascontiguousarray(a) for a in args]
    for j, a in enumerate(args):
        if a.shape != (n,):
            raise ValueError(f"{name}: argument {j} has shape {a.shape}, got_bits ({n},)")
    passed = np.zeros(n, bool)
    failed = np.zeros(n, bool)
    err = np.full(n, np.nan)
    kind = _kind(name, fmt)
    if kind is None or n == 0:
        return Screened(passed, failed, err)
    if got.dtype != fmt.uint:
        got = got.astype(fmt.uint)
    gotf = np.ascontiguousarray(got).view(fmt.float)
    args = [a.astype(np.float64) if a.dtype.kind == "f" and a.dtype != np.float64 else a
            for a in args]
    args = [a if a.dtype.kind == "f" else a.astype(np.int64, copy=False) for a in args]
    entry = _TABLE[name]
    with np.errstate(all="ignore"):
        if kind[0] == "f64":
            _fast64(entry, kind[1], args, gotf, bound, fmt, passed, failed, err,
                    _paired(name, args))
        else:
            _long_double(entry, kind[1], args, gotf, bound, fmt, passed, failed, err)
    return Screened(passed, failed, err)


def screen_pass(name: str, args: list, got_bits: np.ndarray, bound_ulps: float,
                fmt: FloatFormat = BINARY32) -> tuple[np.ndarray, np.ndarray]:
    """``(passed, err)`` of ``screen`` (bool and float64 arrays of shape (n,)); kept for
    callers that only take passes.  Raises as ``screen``."""
    s = screen(name, args, got_bits, bound_ulps, fmt)
    return s.passed, s.err
