"""The vocabulary of prescribed results.

A rule's ``result`` (or each entry of ``results`` for functions with a pointer output) is
one of these forms:

=====================  ==================================================================
``nan``                any NaN (sign and payload free: OpenCL says their conversion is
                       undefined)
``qnan``               any quiet NaN (significand's leading bit set; IEEE 754-2008 §6.2.1),
                       sign and payload free: C99 7.12.11.2 / OpenCL C §6.15.2 ``nan``
``any_zero``           +0 or -0 (for results whose zero sign C99 leaves open, fmax(-0, +0))
``+0`` ``-0`` ``1``    an exactly representable constant (checked at load time)
``+inf`` ``-inf``
``pi`` ``pi/2``        a rounded constant (docs/c99_annex_f9.md §1.2): the value
``pi/4`` ``3pi/4``     rounded to nearest in the result format, optionally negated; where
                       ``consts['rounding']`` lists the device's claimed modes (e.g.
                       ``('rtz',)``), the constant rounded in those modes is accepted too
                       (digest §14 D9: F.9 ¶10 makes honouring the mode implementation-defined)
``true_min``           the smallest positive subnormal; ``min_normal``, ``max_finite`` too
``copysign(C, x)``     constant C with the sign bit of argument x (``-x``: the opposite sign)
``x``                  argument x returned unchanged, bit for bit (the sign of zero included)
``fabs(x)``            argument x with the sign bit cleared
``trunc(x)``           x rounded to an integral value toward zero; ``rint(x)``: to nearest,
``rint(x)``            ties to even (IEEE 754-2008 §5.9 roundToIntegral: exact, the sign of
                       x kept, so trunc(-0.5) = rint(-0.5) = -0, and ±inf -> ±inf)
``fraction(x)``        x - trunc(x) with the sign of x, and ±0 for ±inf: the fractional part
                       OpenCL's modf returns (SPIR-V Env "Changes to ISO/IEC 9899: TC2")
``copysign(x, y)``     argument x's magnitude bits with argument y's sign bit (y may be NaN)
``one_of(A, B, ...)``  any of the listed results (for texts that allow alternatives)
``INT_MAX`` ...        for int results: an int literal, INT_MAX, INT_MIN, or the device's
                       FP_ILOGB0 / FP_ILOGBNAN (read from the device, as the CTS does);
                       ``one_of(INT_MIN, -2147483647)`` for a set of int values
=====================  ==================================================================

Results are judged bitwise (docs/design.md, decision 3): a prescribed zero's sign matters.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from fuzzfarm.errors import SpecDataError
from fuzzfarm.formats import FloatFormat, is_nan, is_qnan, to_float

__all__ = ["ResultSpec", "parse_result", "InvalidResult", "INT_NAMES", "INTEGRAL_OPS"]

INT_NAMES = {"INT_MAX": 2**31 - 1, "INT_MIN": -(2**31)}
_DEVICE_INTS = ("FP_ILOGB0", "FP_ILOGBNAN")
#: The rounding modes a rounded constant may be given in (fuzzfarm.oracle.round_to_bits).
_MODES = ("rte", "rtz", "rtp", "rtn")


class InvalidResult(SpecDataError):
    """A result expression outside the vocabulary."""


_ROUNDED = {"pi": (1, 1), "pi/2": (1, 2), "pi/4": (1, 4), "3pi/4": (3, 4)}


@lru_cache(maxsize=None)
def _rounded_constant_bits(name: str, fmt_name: str, mode: str = "rte") -> int:
    """Bits of a positive rounded constant, rounded in ``mode`` to ``fmt``."""
    import mpmath                   # here: importing the catalogue (every command) needs none

    from fuzzfarm.formats import FORMATS
    from fuzzfarm.rounding import round_to_bits

    fmt = FORMATS[fmt_name]
    num, den = _ROUNDED[name]
    with mpmath.workprec(200):
        value = mpmath.pi * num / den
    return round_to_bits(value, fmt, mode)


def _claimed_modes(consts: dict | None) -> tuple:
    """The rounding modes the device claims (``consts['rounding']``), validated."""
    modes = tuple((consts or {}).get("rounding", ()) or ())
    bad = [m for m in modes if m not in _MODES]
    if bad:
        raise InvalidResult(f"consts['rounding']={modes!r}: {bad} not among {_MODES}")
    return modes


def _magnitude_bits(token: str, fmt: FloatFormat, mode: str = "rte") -> int:
    """Bits of a non-negative constant named or written by ``token`` (``mode`` only
    matters for the rounded constants pi, pi/2, pi/4, 3pi/4)."""
    if token == "inf":
        return fmt.pos_inf
    if token in _ROUNDED:
        return _rounded_constant_bits(token, fmt.name, mode)
    if token == "true_min":
        return fmt.true_min
    if token == "min_normal":
        return fmt.min_normal
    if token == "max_finite":
        return fmt.max_finite
    try:
        value = float.fromhex(token) if "0x" in token else float(token)
    except ValueError:
        raise InvalidResult(f"{token!r} is not a constant of the result vocabulary")
    return fmt.bits_of(abs(value))


def _fraction(v: np.ndarray) -> np.ndarray:
    # OpenCL modf: copysign(isinf(value) ? 0.0 : value - trunc(value), value).
    with np.errstate(invalid="ignore"):
        frac = np.where(np.isinf(v), 0.0, v - np.trunc(v))
    return np.copysign(frac, v)


#: Result words that map argument x to an exactly representable value of x's format,
#: computed in float64 (exact for binary16/32/64 operands: every integral part and every
#: x - trunc(x) of such an operand is representable in its own format).  np.rint rounds
#: half to even; np.trunc and np.rint keep the sign of a zero result.
INTEGRAL_OPS = {"trunc": np.trunc, "rint": np.rint, "fraction": _fraction}


def _float_bits(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """float64 values (exactly representable in ``fmt``) -> ``fmt`` patterns."""
    return np.asarray(values, dtype=np.float64).astype(fmt.float).view(fmt.uint)


@dataclass(frozen=True)
class ResultSpec:
    """One parsed prescribed result.  ``kind`` is one of 'nan' (``quiet``: a quiet NaN
    only), 'any_zero', 'const', 'copysign', 'copysign_arg', 'arg', 'fabs', 'integral'
    (``op`` in INTEGRAL_OPS applied to ``arg``), 'int', 'one_of'."""

    text: str
    kind: str
    negative: bool = False      # const: the sign; copysign: take the opposite sign of arg
    magnitude: str = ""         # const / copysign: the magnitude token
    arg: str = ""               # copysign / arg / fabs / integral: the argument name
    int_value: str = ""         # int: the literal or name
    sign_arg: str = ""          # copysign_arg: the argument giving the sign
    choices: tuple = ()         # one_of: the alternatives (ResultSpec each)
    quiet: bool = False         # nan: only a quiet NaN matches
    op: str = ""                # integral: the name of the operation

    @property
    def is_set(self) -> bool:
        """True for results that allow more than one pattern (no single expected value)."""
        return self.kind in ("nan", "any_zero", "one_of")

    # -- evaluation -------------------------------------------------------------------
    def expected_bits(self, args: dict, fmt: FloatFormat, consts: dict | None = None):
        """The prescribed bits per element (array of ``fmt.uint``, or int64 for int
        results), or None for the set-valued kinds 'nan', 'any_zero' and 'one_of'.

        ``args`` maps argument names to arrays (float patterns or int32 values), all of one
        shape; ``consts`` gives the device's FP_ILOGB0 / FP_ILOGBNAN for int results.
        A rounded constant's bits are its round-to-nearest value.  Raises KeyError for a
        device constant missing from ``consts``.
        """
        return self._bits(args, fmt, consts, "rte")

    def _bits(self, args: dict, fmt: FloatFormat, consts: dict | None, mode: str):
        shape = np.shape(next(iter(args.values())))
        u = fmt.uint
        if self.is_set:
            return None
        if self.kind == "const":
            bits = _magnitude_bits(self.magnitude, fmt, mode) | (fmt.sign_mask if self.negative else 0)
            return np.full(shape, bits, dtype=u)
        if self.kind == "copysign":
            mag = u(_magnitude_bits(self.magnitude, fmt, mode))
            sign = np.asarray(args[self.arg]).astype(u) & u(fmt.sign_mask)
            if self.negative:
                sign = sign ^ u(fmt.sign_mask)
            return (mag | sign).astype(u)
        if self.kind == "arg":
            return np.asarray(args[self.arg]).astype(u)
        if self.kind == "copysign_arg":
            mag = np.asarray(args[self.arg]).astype(u) & u(fmt.abs_mask)
            return (mag | (np.asarray(args[self.sign_arg]).astype(u) & u(fmt.sign_mask))).astype(u)
        if self.kind == "fabs":
            return (np.asarray(args[self.arg]).astype(u) & u(fmt.abs_mask)).astype(u)
        if self.kind == "integral":
            bits = np.asarray(args[self.arg]).astype(u)
            with np.errstate(invalid="ignore"):  # NaN elements: never prescribed (no rule
                v = to_float(bits, fmt)          # applies a result word to a NaN)
                out = _float_bits(INTEGRAL_OPS[self.op](v), fmt)
            return np.where(is_nan(bits, fmt), bits, out).astype(u)
        if self.kind == "int":
            if self.int_value in _DEVICE_INTS:
                if not consts or self.int_value not in consts:
                    raise KeyError(f"{self.int_value} must be read from the device first")
                v = consts[self.int_value]
            else:
                v = INT_NAMES.get(self.int_value)
                v = int(self.int_value) if v is None else v
            return np.full(shape, v, dtype=np.int64)
        raise AssertionError(self.kind)

    def _rounded_modes(self, consts: dict | None) -> tuple:
        """The extra modes a rounded constant may be rounded in on this device."""
        if self.kind in ("const", "copysign") and self.magnitude in _ROUNDED:
            return tuple(m for m in _claimed_modes(consts) if m != "rte")
        return ()

    def matches(self, got: np.ndarray, args: dict, fmt: FloatFormat,
                consts: dict | None = None) -> np.ndarray:
        """Bool array: does each element of ``got`` equal the prescribed result?

        ``got`` holds ``fmt`` patterns (float outputs) or int32 values (int outputs), of the
        shape of ``args``' arrays.  ``consts`` holds the device's FP_ILOGB0 / FP_ILOGBNAN and,
        optionally, ``'rounding'``: the rounding modes ('rte', 'rtz', 'rtp', 'rtn') the
        device claims, in which a rounded constant (pi, pi/2, ...) may also be rounded
        (digest §14 D9).  Raises KeyError for a missing device constant and InvalidResult
        for an unknown mode.
        """
        if self.kind == "nan":
            return is_qnan(got, fmt) if self.quiet else is_nan(got, fmt)
        if self.kind == "any_zero":
            return (np.asarray(got).astype(fmt.uint) & fmt.uint(fmt.abs_mask)) == 0
        if self.kind == "one_of":
            ok = np.zeros(np.shape(got), dtype=bool)
            for c in self.choices:
                ok |= c.matches(got, args, fmt, consts)
            return ok
        want = self.expected_bits(args, fmt, consts)
        if self.kind == "int":
            return np.asarray(got).astype(np.int64) == want
        g = np.asarray(got).astype(fmt.uint)
        ok = g == want
        for mode in self._rounded_modes(consts):
            ok |= g == self._bits(args, fmt, consts, mode)
        return ok

    def describe(self, args_row: dict, fmt: FloatFormat, consts: dict | None = None) -> str:
        """The expectation for one element as text: ``'any NaN'``, ``'a quiet NaN'``,
        ``'+0 or -0'``, or the prescribed bits with the expression, e.g.
        ``'0x00000000 (copysign(0, x))'``."""
        if self.kind == "nan":
            return "a quiet NaN" if self.quiet else "any NaN"
        if self.kind == "any_zero":
            return "+0 or -0"
        if self.kind == "one_of":
            return " or ".join(c.describe(args_row, fmt, consts) for c in self.choices)
        one = {k: np.asarray([v]) for k, v in args_row.items()}
        bits = int(self.expected_bits(one, fmt, consts)[0])
        if self.kind == "int":
            return f"{bits} ({self.text})"
        text = f"{fmt.hex(bits)} ({self.text})"
        for mode in self._rounded_modes(consts):
            text += f" or {fmt.hex(int(self._bits(one, fmt, consts, mode)[0]))} ({self.text}, {mode})"
        return text


_COPYSIGN = re.compile(r"^copysign\(\s*([^,]+?)\s*,\s*(-?)\s*([A-Za-z_]\w*)\s*\)$")
_COPYSIGN_ARG = re.compile(r"^copysign\(\s*([A-Za-z_]\w*)\s*,\s*([A-Za-z_]\w*)\s*\)$")
_ONE_OF = re.compile(r"^one_of\((.*)\)$")
_FABS = re.compile(r"^fabs\(\s*([A-Za-z_]\w*)\s*\)$")
_INTEGRAL = re.compile(r"^(" + "|".join(INTEGRAL_OPS) + r")\(\s*([A-Za-z_]\w*)\s*\)$")


def _split_choices(t: str, inner: str) -> list[str]:
    parts = [p.strip() for p in inner.split(",") if p.strip()]
    if len(parts) < 2:
        raise InvalidResult(f"result {t!r}: one_of needs at least two alternatives")
    return parts


def parse_result(text: str, arg_names: tuple[str, ...], output_kind: str = "float") -> ResultSpec:
    """Parse a result expression for a function with arguments ``arg_names``;
    ``output_kind`` is the output's kind ('float', or 'int' for an int result or pointer).

    Raises InvalidResult naming the problem.
    """
    t = str(text).strip()
    if output_kind == "int":
        m = _ONE_OF.match(t)
        if m:
            return ResultSpec(t, "one_of", choices=tuple(
                parse_result(p, arg_names, "int") for p in _split_choices(t, m.group(1))))
        if t in INT_NAMES or t in _DEVICE_INTS or re.fullmatch(r"-?\d+", t):
            return ResultSpec(t, "int", int_value=t)
        raise InvalidResult(f"result {t!r} for an int output must be an integer, "
                            f"INT_MAX, INT_MIN, FP_ILOGB0, FP_ILOGBNAN or one_of(...) of them")
    if t == "nan":
        return ResultSpec(t, "nan")
    if t == "qnan":
        return ResultSpec(t, "nan", quiet=True)
    if t == "any_zero":
        return ResultSpec(t, "any_zero")
    m = _ONE_OF.match(t)
    if m:
        return ResultSpec(t, "one_of", choices=tuple(
            parse_result(p, arg_names) for p in _split_choices(t, m.group(1))))
    m = _COPYSIGN_ARG.match(t)
    if m and m.group(1) in arg_names and m.group(2) in arg_names:
        return ResultSpec(t, "copysign_arg", arg=m.group(1), sign_arg=m.group(2))
    m = _COPYSIGN.match(t)
    if m:
        mag, neg, arg = m.groups()
        if arg not in arg_names:
            raise InvalidResult(f"result {t!r}: {arg!r} is not an argument ({', '.join(arg_names)})")
        mag = mag.lstrip("+")
        _check_magnitude(mag, t)
        return ResultSpec(t, "copysign", negative=bool(neg), magnitude=mag, arg=arg)
    m = _FABS.match(t)
    if m:
        if m.group(1) not in arg_names:
            raise InvalidResult(f"result {t!r}: {m.group(1)!r} is not an argument")
        return ResultSpec(t, "fabs", arg=m.group(1))
    m = _INTEGRAL.match(t)
    if m:
        if m.group(2) not in arg_names:
            raise InvalidResult(f"result {t!r}: {m.group(2)!r} is not an argument")
        return ResultSpec(t, "integral", arg=m.group(2), op=m.group(1))
    if t in arg_names:
        return ResultSpec(t, "arg", arg=t)
    negative = t.startswith("-")
    mag = t.lstrip("+-")
    _check_magnitude(mag, t)
    return ResultSpec(t, "const", negative=negative, magnitude=mag)


def _check_magnitude(mag: str, text: str) -> None:
    from fuzzfarm.formats import BINARY16
    if mag in _ROUNDED or mag in ("inf", "true_min", "min_normal", "max_finite"):
        return
    try:
        value = float.fromhex(mag) if "0x" in mag else float(mag)
    except ValueError:
        raise InvalidResult(f"result {text!r}: {mag!r} is not a constant of the vocabulary")
    try:  # every literal must be exact in the narrowest format it may be used with
        BINARY16.bits_of(value)
    except ValueError:
        raise InvalidResult(f"result {text!r}: {mag} is not exactly representable in binary16")
