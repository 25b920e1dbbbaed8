"""IEEE 754 binary interchange formats as bit patterns (DESIGN.md decision 1).

Values travel between host and device as unsigned integers of the format's width; this
module gives the bit-level views: field masks, the input class of a pattern, the NaN kinds,
and the few conversions that are safe.  Nothing here converts a NaN through a Python or
numpy float: ``float32 -> float64`` quiets a signaling NaN on x86 and a Python float has
no payload to speak of.

All array functions take and return numpy arrays of the format's unsigned dtype
(``uint16``/``uint32``/``uint64``) unless said otherwise; they are vectorized and pure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "FloatFormat", "BINARY16", "BINARY32", "BINARY64", "FORMATS", "format_named",
    "INPUT_CLASSES", "INT_CLASSES", "classify", "classify_int",
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
    """Class codes (int8, indices into ``INPUT_CLASSES``) of an array of ``fmt`` patterns."""
    b = np.asarray(bits).astype(fmt.uint, copy=False)
    u = fmt.uint
    mag = b & u(fmt.abs_mask)
    neg = (b & u(fmt.sign_mask)) != 0
    exp_all = (b & u(fmt.exp_mask)) == u(fmt.exp_mask)
    out = np.empty(b.shape, dtype=np.int8)
    zero = mag == 0
    sub = (mag != 0) & ((b & u(fmt.exp_mask)) == 0)
    inf = mag == u(fmt.exp_mask)
    nan = exp_all & ~inf
    quiet = (b & u(fmt.quiet_bit)) != 0
    normal = ~(zero | sub | exp_all)
    out[zero] = np.where(neg[zero], 1, 0)
    out[sub] = np.where(neg[sub], 3, 2)
    out[normal] = np.where(neg[normal], 5, 4)
    out[inf] = np.where(neg[inf], 7, 6)
    out[nan] = np.where(quiet[nan], 8, 9)
    return out


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
