"""IEEE 754 binary interchange formats as bit patterns (docs/design.md, decision 1).

Values travel between host and device as unsigned integers of the format's width; this
module gives the bit-level views: field masks, the input class of a pattern, the NaN kinds,
and the few conversions that are safe.  Nothing here converts a NaN through a Python or
numpy float: ``float32 -> float64`` quiets a signaling NaN on x86 and a Python float has
no payload to speak of.

All array functions take and return numpy arrays of the format's unsigned dtype
(``uint16``/``uint32``/``uint64``) unless said otherwise; they are vectorized and pure.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from functools import lru_cache

import numpy as np

__all__ = [
    "FloatFormat", "BINARY16", "BINARY32", "BINARY64", "FORMATS", "format_named",
    "INPUT_CLASSES", "INT_CLASSES", "classify", "classify_int", "INT_KINDS",
    "describe_value", "parse_value", "c99_hex", "modernize", "flushed_variants",
]


@dataclass(frozen=True)
class FloatFormat:
    """One binary interchange format.

    ``precision`` is p, the significand width in bits including the hidden bit (24 for
    binary32); ``emax`` the largest unbiased exponent (127), so ``emin = 1 - emax``.
    """

    name: str
    bits: int
    precision: int
    emax: int
    uint: type
    float: type
    c_type: str
    c_uint: str

    @property
    def emin(self) -> int:
        return 1 - self.emax

    @property
    def frac_bits(self) -> int:
        return self.precision - 1

    @property
    def sign_mask(self) -> int:
        return 1 << (self.bits - 1)

    @property
    def exp_mask(self) -> int:
        return ((1 << (self.bits - self.precision)) - 1) << self.frac_bits

    @property
    def frac_mask(self) -> int:
        return (1 << self.frac_bits) - 1

    @property
    def quiet_bit(self) -> int:
        """The significand's leading bit: set in a quiet NaN (IEEE 754-2008 §6.2.1)."""
        return 1 << (self.frac_bits - 1)

    @property
    def abs_mask(self) -> int:
        return self.sign_mask - 1

    # Bit patterns of the landmarks (positive; OR in sign_mask for the negative one).
    @property
    def pos_inf(self) -> int:
        return self.exp_mask

    @property
    def max_finite(self) -> int:
        return self.exp_mask - 1

    @property
    def min_normal(self) -> int:
        return 1 << self.frac_bits

    @property
    def true_min(self) -> int:
        """The smallest positive subnormal, 2**(emin - p + 1)."""
        return 1

    @property
    def default_qnan(self) -> int:
        return self.exp_mask | self.quiet_bit

    def value(self, bits: int) -> float:
        """The value of one *non-NaN* pattern as a Python float (exact for all three formats).

        Raises ValueError for a NaN pattern: a Python float cannot carry its payload.
        """
        bits = int(bits)
        if (bits & self.abs_mask) > self.exp_mask:
            raise ValueError(f"bits=0x{bits:x} is a NaN of {self.name}; judge NaNs from the bits")
        return float(np.array(bits, dtype=self.uint).view(self.float))

    def bits_of(self, value: float) -> int:
        """The pattern of a Python float that is exactly representable in this format.

        Raises ValueError when ``value`` would be rounded (so a test can never build its
        expectation from a silently rounded constant).
        """
        f = np.array(value, dtype=self.float)
        if not (np.isnan(value) or float(f) == value):
            raise ValueError(f"value={value!r} is not exactly representable in {self.name}")
        return int(f.view(self.uint))

    def hex(self, bits: int) -> str:
        return f"0x{int(bits):0{self.bits // 4}x}"


BINARY16 = FloatFormat("binary16", 16, 11, 15, np.uint16, np.float16, "half", "ushort")
BINARY32 = FloatFormat("binary32", 32, 24, 127, np.uint32, np.float32, "float", "uint")
BINARY64 = FloatFormat("binary64", 64, 53, 1023, np.uint64, np.float64, "double", "ulong")
FORMATS = {f.name: f for f in (BINARY16, BINARY32, BINARY64)}


def format_named(name: str) -> FloatFormat:
    """The format called ``name`` ('binary16', 'binary32', 'binary64', or the C names
    'half', 'float', 'double').  Raises KeyError naming the choices."""
    for f in FORMATS.values():
        if name in (f.name, f.c_type):
            return f
    raise KeyError(f"precision={name!r} is unknown; choose one of {sorted(FORMATS)}")


#: The IEEE classes of a floating-point input, in the order of the codes ``classify`` returns.
INPUT_CLASSES = (
    "pos_zero", "neg_zero", "pos_subnormal", "neg_subnormal", "pos_normal", "neg_normal",
    "pos_inf", "neg_inf", "qnan", "snan",
)

#: The classes of an ``int`` argument (pown, rootn, ldexp), codes as ``classify_int`` returns.
INT_CLASSES = ("int_zero", "int_pos", "int_neg", "int_min", "int_max")


def classify(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Class codes (int8, indices into ``INPUT_CLASSES``) of an array of ``fmt`` patterns.
    One table lookup on the top bits (sign, exponent field, quiet bit), then the few
    patterns with an all-zero significand below the quiet bit and an extreme exponent
    field are moved from subnormal to zero and from signaling NaN to infinity."""
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    u = fmt.uint
    by_top, extreme = _class_tables(fmt)
    top = (b >> u(fmt.frac_bits - 1)).astype(np.intp)
    out = by_top[top]
    low0 = (b & u(fmt.frac_mask)) == 0
    fix = np.flatnonzero(low0 & extreme[top])
    if fix.size:
        out[fix] = np.where(out[fix] <= 3, out[fix] - 2, (b[fix] >> u(fmt.bits - 1)) + 6)
    return out


@lru_cache(maxsize=None)
def _class_tables(fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """(class code by top bits: subnormal for a zero exponent field, quiet or signaling
    NaN for an all-ones one; whether that exponent field is extreme)."""
    ebits = fmt.bits - 1 - fmt.frac_bits
    top = np.arange(1 << (ebits + 2))
    quiet, e, neg = top & 1, (top >> 1) & ((1 << ebits) - 1), top >> (ebits + 1)
    allones = (1 << ebits) - 1
    code = np.where(e == 0, 2 + neg, np.where(e == allones, np.where(quiet == 1, 8, 9),
                                              4 + neg)).astype(np.int8)
    return code, (e == 0) | ((e == allones) & (quiet == 0))


def classify_int(values: np.ndarray) -> np.ndarray:
    """Class codes (int8, indices into ``INT_CLASSES``) of an int32 array."""
    v = np.asarray(values).astype(np.int32, copy=False)
    out = np.where(v == 0, 0, np.where(v > 0, 1, 2)).astype(np.int8)
    out[v == np.iinfo(np.int32).min] = 3
    out[v == np.iinfo(np.int32).max] = 4
    return out


def is_nan(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    return (b & fmt.uint(fmt.abs_mask)) > fmt.uint(fmt.exp_mask)


def is_snan(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    return is_nan(b, fmt) & ((b & fmt.uint(fmt.quiet_bit)) == 0)


def is_qnan(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    return is_nan(b, fmt) & ((b & fmt.uint(fmt.quiet_bit)) != 0)


def is_zero(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    return (b & fmt.uint(fmt.abs_mask)) == 0


def is_subnormal(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    mag = b & fmt.uint(fmt.abs_mask)
    return (mag != 0) & (mag < fmt.uint(fmt.min_normal))


def flushed_variants(values, fmts, limit: int = 16) -> list[tuple]:
    """The argument tuples a flushing device may compute instead of ``values`` (OpenCL
    3.8.3, results 3 and 4): each subnormal float value replaced by +0 or -0 (``fmts``:
    each value's FloatFormat, None for an integer), every combination but ``values``
    itself, at most ``limit``, in order; [] where no value is subnormal."""
    import itertools
    options = []
    for v, fmt in zip(values, fmts):
        v = int(v)
        sub = fmt is not None and bool(is_subnormal(np.asarray([v], fmt.uint), fmt)[0])
        options.append((0, fmt.sign_mask) if sub else (v,))
    original = tuple(int(v) for v in values)
    return [t for t in itertools.product(*options) if t != original][:limit]


def sign_bit(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    return (b & fmt.uint(fmt.sign_mask)) != 0


def to_float(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Values as float64 (exact for non-NaN patterns of all three formats; NaNs lose
    their payload and quietness: never judge a NaN from this view)."""
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    with np.errstate(invalid="ignore"):
        return b.view(fmt.float).astype(np.float64)


def from_float(values: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Patterns of float64 values rounded (RTE) to ``fmt``."""
    return np.asarray(values, dtype=np.float64).astype(fmt.float).view(fmt.uint)


# --------------------------------------------------------------------------- printed values
#: The integer kinds a printed value can have: the OpenCL integer types by their numpy
#: names (char .. ulong), plus the catalogue's argument kinds 'int' (intn: int32 values)
#: and 'uint' (ugentype: an unsigned bit payload such as nan()'s, printed in hex).
INT_KINDS: dict[str, np.dtype] = {
    **{n: np.dtype(n) for n in ("int8", "uint8", "int16", "uint16", "int32", "uint32",
                                "int64", "uint64")},
    "int": np.dtype(np.int32), "uint": np.dtype(np.uint64),
}
_U64 = (1 << 64) - 1


def _int_value(kind: str, bits: int) -> int:
    dt = INT_KINDS[kind]
    width = dt.itemsize * 8
    v = int(bits) & ((1 << width) - 1)
    if dt.kind == "i" and v >> (width - 1):
        v -= 1 << width
    return v


def c99_hex(bits: int, fmt: FloatFormat) -> str:
    """The value of pattern ``bits`` of ``fmt`` as C99's ``printf("%a", (double)v)`` prints
    it with glibc (C99 §7.19.6.1: a hexadecimal significand, trailing zeros dropped, a
    binary exponent): ``0x1.8p+1``, ``-0x0p+0``, ``0x1p-149`` (a binary32 subnormal is
    normal as a double), ``inf``, ``-inf``; a NaN as ``qNaN`` or ``sNaN`` (the payload is in
    the bits).  Pastes into C source as a literal of the exact value."""
    b = int(bits) & ((1 << fmt.bits) - 1)
    if (b & fmt.abs_mask) > fmt.exp_mask:
        return "qNaN" if b & fmt.quiet_bit else "sNaN"
    v = fmt.value(b)
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    text = v.hex()                              # '0x1.8000000000000p+1'
    mant, _, exp = text.partition("p")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}p{exp}"


def describe_value(kind: str, bits: int, fmt: FloatFormat | None = None) -> str:
    """The text fuzzfarm prints for one value a device took or returned.

    ``kind``: 'float' (``bits`` a pattern of ``fmt``: the value as C99 ``%a`` then the
    bits, ``0x1p+0 (0x3f800000)``; a NaN as ``qNaN (0x7fc00000)`` or ``sNaN (...)``, a zero
    with its sign ``-0x0p+0 (0x80000000)``: ``c99_hex``); an
    integer type of INT_KINDS by its numpy name (``bits`` the value or its two's
    complement in any wider unsigned integer; printed in decimal *as that type*, so a
    uint64 0x8000000000000000 is ``9223372036854775808`` and an int64 one
    ``-9223372036854775808``); 'uint' an unsigned payload in hex (``0x7fc01``).
    ``parse_value`` is the inverse.  Raises ValueError for an unknown kind or a 'float'
    without ``fmt``.
    """
    if kind == "float":
        if fmt is None:
            raise ValueError("kind='float' needs the value's FloatFormat")
        b = int(bits) & ((1 << fmt.bits) - 1)
        return f"{c99_hex(b, fmt)} ({fmt.hex(b)})"
    if kind == "uint":
        return hex(int(bits) & _U64)
    if kind not in INT_KINDS:
        raise ValueError(f"kind={kind!r}; use 'float' or one of {sorted(INT_KINDS)}")
    return str(_int_value(kind, bits))


def _older_float_text(bits: int, fmt: FloatFormat) -> str:
    """How describe_value printed a float before the %a form."""
    b = int(bits) & ((1 << fmt.bits) - 1)
    if (b & fmt.abs_mask) > fmt.exp_mask:
        val = "qNaN" if b & fmt.quiet_bit else "sNaN"
    else:
        val = repr(fmt.value(b))
    return f"{fmt.hex(b)} ({val})"


#: A float as printed before the %a form: '0x3f800000 (1.0)'; its width in hex digits
#: (4, 8 or 16) names its format.
_OLDER_FLOAT = re.compile(r"\b0x([0-9a-f]{4}|[0-9a-f]{8}|[0-9a-f]{16}) "
                          r"\((-?[0-9.e+-]+|-?inf|[qs]NaN)\)")


def modernize(text: str) -> str:
    """``text`` (stored findings' inputs or outputs) with every float printed in the older
    form ('0x3f800000 (1.0)') re-printed as ``describe_value`` prints it now
    ('0x1p+0 (0x3f800000)'); other text unchanged."""
    by_digits = {4: BINARY16, 8: BINARY32, 16: BINARY64}

    def one(m):
        return describe_value("float", int(m.group(1), 16), by_digits[len(m.group(1))])
    return _OLDER_FLOAT.sub(one, text or "")


def parse_value(kind: str, text: str, fmt: FloatFormat | None = None) -> int:
    """The stored bits of a value printed by ``describe_value``: a float's pattern, an
    integer as its two's complement in 64 bits (the findings' ``input_bits`` and
    ``output_bits`` form: ``int8`` -1 gives 0xffffffffffffffff).  Strict: the text must
    be exactly what ``describe_value`` prints for those bits, or for a float what it
    printed before the ``%a`` form (``0x3f800000 (1.0)``: findings stored by older
    versions).  Raises ValueError for a text that is not (naming the text and the kind) or
    an unknown kind.
    """
    text = text.strip()
    try:
        if kind == "float":
            if fmt is None:
                raise ValueError("kind='float' needs the value's FloatFormat")
            head, _, tail = text.partition(" (")
            if tail.startswith("0x"):                       # '0x1p+0 (0x3f800000)'
                bits = int(tail.rstrip(")"), 16)
            else:                                           # '0x3f800000 (1.0)': older
                bits = int(head, 16)
                if _older_float_text(bits, fmt) == text:
                    return bits
        elif kind == "uint":
            bits = int(text, 16)
        elif kind in INT_KINDS:
            bits = int(text, 10) & _U64
        else:
            raise ValueError(f"kind={kind!r}; use 'float' or one of {sorted(INT_KINDS)}")
        if describe_value(kind, bits, fmt) != text:
            raise ValueError("not as printed")
    except ValueError as exc:
        if str(exc).startswith("kind="):
            raise
        raise ValueError(f"{text!r} is not a printed {kind} value"
                         + (f" of {fmt.name}" if kind == "float" and fmt else "")) from None
    return bits
