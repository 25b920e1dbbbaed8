"""The explicit conversions of OpenCL C 3.0 §6.4.3 as data: the scalar types, the rounding
suffixes, every valid ``convert_<dst>[_sat][_rte|_rtz|_rtp|_rtn](<src>)`` (1045 of them),
their parsing, the extensions they need, and their rules (``data/conversions.toml``, each
with id, section and sentence).  ``fuzzfarm.verdict.conversions`` judges them,
``fuzzfarm.device.conversion_kernels`` writes their kernels.

Values travel as bits (docs/design.md, decision 1): float sources and results are unsigned bit
patterns (uint16/uint32/uint64), integers their own numpy type (int8 ... uint64).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Iterable

import numpy as np

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases.catalogue import GeneralRule
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, FloatFormat

__all__ = [
    "INT_TYPES", "FLOAT_TYPES", "TYPES", "ROUNDINGS", "RULE_IDS", "Conversion", "conversions",
    "parse", "int_range", "type_dtype", "c_buffer_type", "extensions", "rules",
]

#: Integer types: (bits, signed).
INT_TYPES = {
    "char": (8, True), "uchar": (8, False), "short": (16, True), "ushort": (16, False),
    "int": (32, True), "uint": (32, False), "long": (64, True), "ulong": (64, False),
}
#: Floating-point types and their formats.
FLOAT_TYPES = {"half": BINARY16, "float": BINARY32, "double": BINARY64}
#: Every scalar type a conversion may name, integers first.
TYPES = tuple(INT_TYPES) + tuple(FLOAT_TYPES)
#: The rounding suffixes (OpenCL C 3.0 §6.4.3.2).
ROUNDINGS = ("rte", "rtz", "rtp", "rtn")

_NP_INT = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
           "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64}
_EXTENSION = {"half": "cl_khr_fp16", "double": "cl_khr_fp64"}

#: The conversion rules, by per-element code (indices: the R_* codes of the verdict).
(R_ROUNDING, R_SATURATE, R_SAT_NAN, R_INT_VALUE, R_INT_MODULO, R_NAN, R_NAN_QUIET,
 R_SIGNED_OOR, R_ROUNDS_IN, R_ZERO_SIGN, R_EMBEDDED, R_SAT_NAN_SPIRV) = range(12)
RULE_IDS = (
    "CL.convert.rounding", "CL.convert.saturate", "CL.convert.sat_nan_zero",
    "CL.convert.int_value", "CL.convert.int_modulo", "CL.convert.nan", "CL.convert.nan_quiet",
    "CL.convert.int_signed_out_of_range", "CL.convert.float_out_of_range_rounds_in",
    "CL.convert.zero_sign", "CL.convert.embedded_default_rtz", "SPIRV.convert.sat_nan_zero",
)

def int_range(type_name: str) -> tuple[int, int]:
    """(least, greatest) value of an OpenCL C integer type, as Python ints.  Raises
    ValueError for a type that is not an integer type."""
    if type_name not in INT_TYPES:
        raise ValueError(f"type={type_name!r} is not an integer type; choose one of "
                         f"{', '.join(INT_TYPES)}")
    bits, signed = INT_TYPES[type_name]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def type_dtype(type_name: str) -> np.dtype:
    if type_name in FLOAT_TYPES:
        return np.dtype(FLOAT_TYPES[type_name].uint)
    return np.dtype(_NP_INT[type_name])


def c_buffer_type(type_name: str) -> str:
    return FLOAT_TYPES[type_name].c_uint if type_name in FLOAT_TYPES else type_name


# --------------------------------------------------------------------------- the table
@dataclass(frozen=True)
class Conversion:
    """One explicit conversion ``convert_<dst>[_sat][_<rounding>](<src>)``.

    ``dst``/``src`` are OpenCL C scalar type names (``TYPES``); ``sat`` the ``_sat``
    modifier (integer destinations only); ``rounding`` one of ``ROUNDINGS`` or None for
    the default mode.  Raises ValueError naming the problem for an unknown type or
    rounding, or ``_sat`` with a floating-point destination.
    """

    dst: str
    src: str
    sat: bool = False
    rounding: str | None = None

    def __post_init__(self):
        for what, t in (("dst", self.dst), ("src", self.src)):
            if t not in TYPES:
                raise ValueError(f"{what}={t!r} is not an OpenCL C scalar type of a conversion; "
                                 f"choose one of {', '.join(TYPES)}")
        if self.rounding is not None and self.rounding not in ROUNDINGS:
            raise ValueError(f"rounding={self.rounding!r} is not a rounding mode; choose one "
                             f"of {', '.join(ROUNDINGS)} or None for the default")
        if self.sat and self.dst in FLOAT_TYPES:
            raise ValueError(f"sat=True with dst={self.dst!r}: _sat is only valid for integer "
                             f"destinations (OpenCL C 3.0 §6.4.3.3); use sat=False")

    @property
    def name(self) -> str:
        """The built-in's name: ``convert_int_sat_rte``."""
        return ("convert_" + self.dst + ("_sat" if self.sat else "")
                + (f"_{self.rounding}" if self.rounding else ""))

    @property
    def id(self) -> str:
        """Unique name with the source type: ``convert_int_sat_rte(float)``."""
        return f"{self.name}({self.src})"

    @property
    def kind(self) -> str:
        """'float_to_int', 'int_to_float', 'float_to_float' or 'int_to_int'."""
        a = "float" if self.src in FLOAT_TYPES else "int"
        b = "float" if self.dst in FLOAT_TYPES else "int"
        return f"{a}_to_{b}"

    @property
    def mode(self) -> str:
        """The effective rounding mode: the suffix, else 'rte' to a floating-point type and
        'rtz' to an integer type (SPIR-V Env, Rounding Modes for Conversions)."""
        if self.rounding:
            return self.rounding
        return "rte" if self.dst in FLOAT_TYPES else "rtz"

    @property
    def src_dtype(self) -> np.dtype:
        """Host buffer dtype of the source: float bits as uint16/32/64, ints as themselves."""
        return type_dtype(self.src)

    @property
    def dst_dtype(self) -> np.dtype:
        """Host buffer dtype of the result: float bits as uint16/32/64, ints as themselves."""
        return type_dtype(self.dst)

    @property
    def src_format(self) -> FloatFormat | None:
        return FLOAT_TYPES.get(self.src)

    @property
    def dst_format(self) -> FloatFormat | None:
        return FLOAT_TYPES.get(self.dst)

    @property
    def precision(self) -> str | None:
        """The floating-point format involved ('binary16', 'binary32', 'binary64'): the
        source's or the destination's, the wider if both; None for int->int."""
        fmts = [f for f in (self.src_format, self.dst_format) if f is not None]
        return max(fmts, key=lambda f: f.bits).name if fmts else None

    def __str__(self) -> str:
        return self.id


def conversions(types: Iterable[str] | None = None) -> tuple[Conversion, ...]:
    """Every valid conversion between the scalar ``types`` (default: all of ``TYPES``),
    both directions and each type to itself, with and without ``_sat`` (integer
    destinations) and with each rounding suffix and none: 1045 for all eleven types.
    Ordered by source, destination, sat, rounding (None first).  Raises ValueError for an
    unknown type."""
    chosen = TYPES if types is None else tuple(dict.fromkeys(types))
    for t in chosen:
        if t not in TYPES:
            raise ValueError(f"types contains {t!r}, not an OpenCL C scalar type of a "
                             f"conversion; choose from {', '.join(TYPES)}")
    out = []
    for src in (t for t in TYPES if t in chosen):
        for dst in (t for t in TYPES if t in chosen):
            for sat in ((False, True) if dst in INT_TYPES else (False,)):
                for rnd in (None,) + ROUNDINGS:
                    out.append(Conversion(dst, src, sat, rnd))
    return tuple(out)


def parse(text: str) -> Conversion:
    """The conversion named ``text``: ``'convert_int_sat_rte(float)'`` (spaces around the
    parentheses are allowed).  Raises ValueError with a one-line message naming the
    problem (no source type, an unknown type, a vector type, a misplaced or unknown
    modifier, ``_sat`` to a floating-point type)."""
    s = str(text).strip()
    if "(" not in s or not s.endswith(")"):
        raise ValueError(f"conversion={text!r} has no source type; write it as "
                         f"'convert_<dst>[_sat][_rte|_rtz|_rtp|_rtn](<src>)', e.g. "
                         f"'convert_int_sat_rte(float)'")
    head, src = s[:-1].split("(", 1)
    head, src = head.strip(), src.strip()
    if not head.startswith("convert_"):
        raise ValueError(f"conversion={text!r} does not start with 'convert_'")
    parts = head[len("convert_"):].split("_")
    dst, mods = parts[0], parts[1:]
    for what, t in (("destination", dst), ("source", src)):
        if t not in TYPES:
            base = t.rstrip("0123456789")
            if base != t and base in TYPES:
                raise ValueError(f"conversion={text!r}: {what} type {t!r} is a vector type; "
                                 f"name the scalar conversion ({base}) and give the vector "
                                 f"width to kernel_source")
            raise ValueError(f"conversion={text!r}: {what} type {t!r} is unknown; choose one "
                             f"of {', '.join(TYPES)}")
    sat, rounding = False, None
    for i, m in enumerate(mods):
        if m == "sat" and i == 0 and not sat:
            sat = True
        elif m in ROUNDINGS and i == len(mods) - 1 and rounding is None:
            rounding = m
        elif m == "sat":
            raise ValueError(f"conversion={text!r}: '_sat' must come once, right after the "
                             f"destination type (convert_<dst>_sat_<mode>)")
        elif m in ROUNDINGS:
            raise ValueError(f"conversion={text!r}: the rounding suffix '_{m}' must come "
                             f"once, last")
        else:
            raise ValueError(f"conversion={text!r}: modifier '_{m}' is unknown; use _sat "
                             f"and one of {', '.join('_' + r for r in ROUNDINGS)}")
    if sat and dst in FLOAT_TYPES:
        raise ValueError(f"conversion={text!r}: _sat is only valid for integer destinations "
                         f"(OpenCL C 3.0 §6.4.3.3); drop it")
    return Conversion(dst, src, sat, rounding)



# --------------------------------------------------------------------------- extensions
def extensions(conv: Conversion) -> tuple[str, ...]:
    """The OpenCL extensions a conversion's kernel needs ('cl_khr_fp16' for half,
    'cl_khr_fp64' for double), sorted; group conversions by this before building a
    program on a device that may lack one."""
    return tuple(sorted({_EXTENSION[t] for t in (conv.src, conv.dst) if t in _EXTENSION}))


# --------------------------------------------------------------------------- rules
@lru_cache(maxsize=None)
def rules() -> dict[str, GeneralRule]:
    """The conversion rules by id (edgecases/data/conversions.toml): id, section,
    sentence, severity ('fail' or 'note') and reading."""
    text = resources.files("edgecases").joinpath("data", "conversions.toml").read_text("utf-8")
    out = {}
    for row in tomllib.loads(text).get("rule", []):
        sev = row.get("severity", "fail")
        if sev not in ("fail", "note"):
            raise ValueError(f"conversions.toml: {row.get('id')}: severity={sev!r}")
        out[row["id"]] = GeneralRule(row["id"], row["section"], " ".join(row["sentence"].split()),
                                     sev, " ".join(row.get("reading", "").split()))
    missing = set(RULE_IDS) - set(out)
    if missing:
        raise ValueError(f"conversions.toml lacks the rules {sorted(missing)}")
    return out
