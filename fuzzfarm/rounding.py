"""Correct rounding of exact values to the binary formats (IEEE 754-2008 §4.3, §7.4).

The primitives every judge shares: a real value (an mpf, int or float taken as exact)
rounded once to a format's bit pattern in one of the OpenCL rounding modes, with gradual
underflow and overflow; and a pattern's exact value.  Below the oracle (fuzzfarm.oracle,
which adds references and ULPs) and the spec's data (edgecases.results rounds its
constants with it).  mpmath only, exact whatever its global precision.
"""
from __future__ import annotations

import mpmath
from mpmath import mpf

from fuzzfarm.formats import FloatFormat

__all__ = ["ROUNDING", "round_to_bits", "value_of"]

#: OpenCL rounding mode -> mpmath rounding letter ('d' is toward zero, 'f' toward -inf).
ROUNDING = {"rte": "n", "rtz": "d", "rtp": "c", "rtn": "f"}


def value_of(bits: int, fmt: FloatFormat) -> mpf:
    """The exact value of a finite pattern as an mpf (-0 becomes 0).  Raises ValueError
    for NaN; returns mpmath's +-inf for infinities."""
    return _as_mpf(fmt.value(bits))


def _as_mpf(value) -> mpf:
    """``value`` (an mpf, int or float) as an mpf, exactly, whatever mpmath's global
    precision: ``mpf(x)``, ``abs(x)`` and ``-x`` round to the context's precision (53 bits
    by default), which would round a reference twice or lose an exact sum's low bits."""
    if isinstance(value, mpf):
        return value
    if isinstance(value, int):
        with mpmath.workprec(max(64, abs(value).bit_length() + 8)):
            return mpf(value)
    if isinstance(value, float):
        with mpmath.workprec(64):
            return mpf(value)
    return mpf(value)


def _sign_man_exp(v: mpf) -> tuple[bool, int, int]:
    """(negative, man, exp) with |v| = man * 2**exp exactly, for a finite nonzero mpf."""
    sign, man, exp, _ = v._mpf_
    return bool(sign), int(man), int(exp)


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

    ``value`` is an mpf (or int/float) taken as exact, whatever mpmath's global precision
    (one rounding only: no mpf()/abs() on the way); a zero gives +0, mpmath's infinities
    give the infinity.  Returns the pattern as an int.  Raises ValueError for NaN or an
    unknown mode.
    """
    v = _as_mpf(value)
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
    _, man, exp = _sign_man_exp(v)  # |v| = man * 2**exp exactly, man odd
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
