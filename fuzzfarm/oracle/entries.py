"""Reference entries (what the oracle answers for one output) and the ULP measure.

``Exact``, ``OneOf``, ``Congruent``, ``Unspecified`` (see ``fuzzfarm.oracle``), ``ulp`` and
``ulp_error`` (units of least precision of a format, IEEE 754-2008 §2.1 / OpenCL C 3.0
§7.4: the distance between the two finite values that bracket the real result), and
``conforms``: does a pattern match a bitwise entry.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import mpmath
from mpmath import mpf

from fuzzfarm.formats import FloatFormat
from fuzzfarm.rounding import _as_mpf, _sign_man_exp, round_to_bits


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
