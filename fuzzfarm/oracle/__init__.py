"""The reference: infinitely precise results (mpmath), correct rounding, and the ULP measure.

Precision and rounding are explicit arguments everywhere (docs/design.md, decision 11): ``prec`` is
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

import mpmath

from fuzzfarm.formats import FloatFormat
from fuzzfarm.oracle.entries import (
    Congruent, Exact, OneOf, Unspecified, _entry, conforms, ulp, ulp_error,
)
from fuzzfarm.oracle.exact import EXACT_FUNCTIONS, PATTERN_REFERENCES, _is_zero, _neg
from fuzzfarm.oracle.real import _AT_ZERO, REFERENCES, _Undefined, _Unjudged
from fuzzfarm.rounding import ROUNDING, round_to_bits, value_of

__all__ = [
    "ROUNDING", "Exact", "OneOf", "Congruent", "Unspecified", "round_to_bits", "ulp",
    "ulp_error", "value_of", "REFERENCES", "EXACT_FUNCTIONS", "PATTERN_REFERENCES",
    "reference", "base_name", "has_reference", "conforms",
]


def _own(name: str) -> bool:
    return name in EXACT_FUNCTIONS or name in PATTERN_REFERENCES or name in REFERENCES


def base_name(name: str) -> str:
    """The built-in whose reference ``name`` uses: the catalogue's ``approximates`` of a
    half_* or native_* built-in (half_divide -> divide, half_recip -> recip, native_powr
    -> powr; OpenCL C 3.0 §6.15.2); every other name maps to itself."""
    from edgecases import catalogue
    fn = catalogue.functions().get(name)
    base = fn.reference_name if fn is not None else name
    return base if _own(base) else name


def has_reference(name: str) -> bool:
    """True if ``reference`` knows built-in ``name`` (directly or as half_/native_)."""
    return _own(base_name(name))


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
