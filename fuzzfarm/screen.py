"""The fast tier of the oracle: a float64 screen that may only say "pass".

For binary32 results, a float64 reference computed by numpy (or by an exact argument
reduction followed by numpy) is accurate to a relative error far below one binary32 ULP.
We assume ``SCREEN_REL_ERROR`` = 2**-45 for every screen below (numpy's float64 libm-style
functions are accurate to a few float64 ULPs, 2**-51 or better; the reductions here are
exact).  The screen then passes an element only where

    |got - r64| / ulp_lo(r64) + margin <= bound,

where ``ulp_lo`` is the smallest binary32 ULP any real within the float64 reference's error
interval can have, and ``margin`` covers the reference's own error (2**-45 relative is at most
2**-20 binary32 ULPs).  Everything else goes to the exact mpmath path: special values, results
outside the binary32 range, failures and near-failures alike.  tests/test_screen.py compares
screen and exact verdicts near the bounds.
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import BINARY32, FloatFormat

__all__ = ["SCREENS", "screen_pass", "SCREEN_REL_ERROR"]

SCREEN_REL_ERROR = 2.0 ** -45
_MARGIN_ULPS = 2.0 ** -18


def _sinpi(x):
    r = np.fmod(x, 2.0)                      # exact, in (-2, 2)
    r = np.where(r > 1.0, r - 2.0, r)
    r = np.where(r < -1.0, r + 2.0, r)       # [-1, 1]
    r = np.where(r > 0.5, 1.0 - r, r)
    r = np.where(r < -0.5, -1.0 - r, r)      # [-0.5, 0.5], all exact for binary32 inputs
    return np.sin(np.pi * r)


def _cospi(x):
    r = np.fmod(np.abs(x), 2.0)
    r = np.where(r > 1.0, 2.0 - r, r)        # [0, 1]
    return np.sin(np.pi * (0.5 - r))


def _tanpi(x):
    r = np.fmod(x, 1.0)
    r = np.where(r > 0.5, r - 1.0, r)
    r = np.where(r < -0.5, r + 1.0, r)       # [-0.5, 0.5]
    a = np.abs(r)
    near = a > 0.25                          # tan(pi r) = 1 / tan(pi (0.5 - r)), both exact
    t = np.where(near, 1.0 / np.tan(np.pi * (0.5 - a)), np.tan(np.pi * a))
    return np.copysign(t, r)


def _rootn(x, n):
    n = n.astype(np.float64)
    mag = np.power(np.abs(x), 1.0 / n)
    return np.where(x < 0, -mag, mag)


#: name -> float64 reference on float64 arrays (int arguments arrive as int arrays).
SCREENS = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "sinpi": _sinpi, "cospi": _cospi, "tanpi": _tanpi,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "atan2": np.arctan2,
    "asinpi": lambda x: np.arcsin(x) / np.pi, "acospi": lambda x: np.arccos(x) / np.pi,
    "atanpi": lambda x: np.arctan(x) / np.pi, "atan2pi": lambda y, x: np.arctan2(y, x) / np.pi,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh,
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10.0, x), "expm1": np.expm1,
    "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1.0 / np.sqrt(x), "cbrt": np.cbrt,
    "pow": np.power, "powr": np.power, "hypot": np.hypot,
    "pown": lambda x, n: np.power(x, n.astype(np.float64)), "rootn": _rootn,
}


def _ulp_lo(r: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """The smallest binary32 ULP (as OpenCL defines it) of any real within
    SCREEN_REL_ERROR of ``r``: at a binade boundary, the gap below the power of two."""
    a = np.abs(r)
    lo = a * (1.0 - 4 * SCREEN_REL_ERROR)
    hi = a * (1.0 + 4 * SCREEN_REL_ERROR)
    _, e_lo = np.frexp(lo)
    _, e_hi = np.frexp(hi)
    e_lo = np.maximum(e_lo - 1, fmt.emin)
    e_hi = np.maximum(e_hi - 1, fmt.emin)
    step = fmt.precision - 1
    straddle = e_lo != e_hi
    expo = np.where(straddle, np.maximum(e_hi - 1, fmt.emin) - step, e_lo - step)
    return np.ldexp(1.0, expo)


def screen_pass(name: str, args: list, got_bits: np.ndarray, bound_ulps: float,
                fmt: FloatFormat = BINARY32) -> tuple[np.ndarray, np.ndarray]:
    """Which elements the float64 screen can prove within ``bound_ulps``.

    ``args`` are float64 arrays (float arguments, already known to be finite and not
    covered by a rule) or int arrays; ``got_bits`` the device's patterns.  Returns
    ``(passed, err)``: a bool array and the estimated ULP error (float64; meaningful where
    passed).  Only binary32 is screened; other formats return all False.
    """
    n = got_bits.shape[0]
    if fmt is not BINARY32 or name not in SCREENS:
        return np.zeros(n, bool), np.full(n, np.nan)
    with np.errstate(all="ignore"):
        r = SCREENS[name](*args)
        got = got_bits.astype(fmt.uint).view(fmt.float).astype(np.float64)
        big = fmt.value(fmt.max_finite)
        ok_ref = np.isfinite(r) & (np.abs(r) <= big) & (r != 0.0)
        err = np.abs(got - r) / _ulp_lo(r, fmt)
        passed = ok_ref & np.isfinite(got) & (err + _MARGIN_ULPS <= bound_ulps)
    return passed, err
