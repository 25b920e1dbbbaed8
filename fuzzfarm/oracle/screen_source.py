"""The OpenCL C source of a device screen (docs/device_screen.md): the host's defines for
built-in ``name`` at ``bound`` ULPs in ``precision`` (the reference, the pass constant,
the answers at zeros, infinities and NaNs, the column types), the references' constants
(``_constants``, ``_constants64``: mpmath's values rounded once), the kernel files of the
precision after screen_common.cl (``SCREEN_FILES``), and the pruning of the functions no
kernel reaches (``prune_unused``).  Pure text: no device; fuzzfarm.oracle.device_screen
builds and runs it."""
from __future__ import annotations

import bisect
import math
import re
from functools import lru_cache
from importlib import resources

import mpmath

from edgecases import catalogue
from fuzzfarm.formats import format_named
from fuzzfarm.oracle.device_references import (
    ABSOLUTE, BINARY64_REFERENCES, BINARY64_SECOND, BIT_EXACT, DEVICE_REFERENCES, ERFC_K, INT_RESULT,
    INT_SECOND, SECOND_OUTPUT, SECOND_REFERENCE, SEVERAL_ARGS, THREE_ARGS,
    UNFUSED, answer_markers, reference_name, rel64, screen_columns, special_answers,
    undefined_beyond)
from fuzzfarm.oracle.histogram import (HIST_BINS_PER_OCTAVE, HIST_FRAC_BITS, HIST_LOG2_LO,
                                       NBANDS, NBINS, NEAR, NEAR_KINDS, NEAR_POINTS,
                                       NROWS, ROW_NEAR_POLE, ROW_NEAR_ZERO, ROW_SUBNORMAL)
from fuzzfarm.oracle.screen_answer import LOCAL, NCLASSES

__all__ = ["screen_source", "gather_source", "prune_unused", "REL", "PATTERN_TYPES",
           "SCREEN_FILES", "BINARY16_OWN"]

#: The assumed relative error of every device reference (as the host's float64 screen:
#: its margin formula and constants are reused unchanged).  docs/device_screen.md bounds
#: the references' errors below 2**-49.
REL = 2.0 ** -45


def _margin(bound: float, precision: str = "binary32", name: str = "") -> float:
    """The host screen's margin (ULPs) for ``precision`` results against a reference of
    error REL (binary32: a binary64 value) or ``rel64(name)`` (binary64: a double-double
    whose distance to the result is rounded once in binary64)."""
    from fuzzfarm.oracle.screen import _margin
    rel = rel64(name) if precision == "binary64" else REL
    return _margin(rel, bound, format_named(precision), 53)


def _hexf(v: float) -> str:
    return "(" + float(v).hex() + ")"


def erfc_taylor(c, k: int) -> list:
    """The Taylor coefficients a_0 .. a_k of erfc about ``c`` (mpmath numbers at the working
    precision): a_0 = erfc(c) and, since d^n/dx^n e**(-x**2) = (-1)**n H_n(x) e**(-x**2)
    (H_n the physicists' Hermite polynomials, H_(n+1) = 2 x H_n - 2 n H_(n-1)),
    a_j = -2/sqrt(pi) e**(-c**2) (-1)**(j-1) H_(j-1)(c) / j! -- exact formulas, where
    mpmath.taylor's numerical differences took seconds (the same binary64 values)."""
    e = -2 / mpmath.sqrt(mpmath.pi) * mpmath.exp(-c * c)
    hermite = [mpmath.mpf(1), 2 * c]
    for n in range(1, k):
        hermite.append(2 * c * hermite[n] - 2 * n * hermite[n - 1])
    out, fact = [mpmath.erfc(c)], mpmath.mpf(1)
    for j in range(1, k + 1):
        fact *= j
        out.append(e * (-1) ** (j - 1) * hermite[j - 1] / fact)
    return out


@lru_cache(maxsize=None)
def _constants() -> str:
    """The OpenCL C definitions of the references' constants, computed with mpmath at 400
    bits (2/pi's words at 1400) and rounded once to binary64."""
    with mpmath.workprec(400):
        pi, ln2 = mpmath.pi, mpmath.log(2)
        lines = []
        with mpmath.workprec(1400):     # 40 words: 1280 bits of 2/pi
            t = 2 / mpmath.pi
            words = []
            for _ in range(40):        # 2/pi = sum W_i 2**(-32 (i + 1)) (binary64: 38)
                t *= 2 ** 32
                w = int(mpmath.floor(t))
                words.append(w)
                t -= w
        lines.append("__constant uint TWO_OVER_PI[40] = {" +
                     ", ".join(f"0x{w:08x}u" for w in words) + "};")

        def d(name, v):
            lines.append(f"#define {name} {_hexf(float(v))}")

        for k in range(3, 18, 2):
            d(f"SIN_C{k}", (-1) ** ((k - 1) // 2) / mpmath.factorial(k))
        for k in range(2, 17, 2):
            d(f"COS_C{k}", (-1) ** (k // 2) / mpmath.factorial(k))
        for k in range(1, 14):
            d(f"EXP2_C{k}", ln2 ** k / mpmath.factorial(k))
        for k in range(2, 16):          # exp's to 13, expm1's to 14, sinh's odd ones to 15
            d(f"EXP_C{k}", 1 / mpmath.factorial(k))
        for k in range(3, 22, 2):
            d(f"LOG_C{k}", mpmath.mpf(1) / k)
        for k in range(3, 28, 2):
            d(f"ATAN_C{k}", mpmath.mpf((-1) ** ((k - 1) // 2)) / k)
        d("INV_PI", 1 / pi)
        d("DEG_PER_RAD", 180 / pi)
        d("RAD_PER_DEG", pi / 180)
        d("TWO_OVER_SQRTPI", 2 / mpmath.sqrt(pi))
        # erfc's Taylor polynomials about c_j = 1/2 + (j + 1/2)/8, j = 0..11 (device_screen.cl)
        lines.append(f"#define ERFC_K {ERFC_K}")
        coeffs = [_hexf(float(a)) for j in range(12)
                  for a in erfc_taylor(mpmath.mpf(0.5625) + mpmath.mpf(j) / 8, ERFC_K)]
        lines.append("__constant double ERFC_TAYLOR[] = {" + ", ".join(coeffs) + "};")
        d("INV_SQRTPI", 1 / mpmath.sqrt(pi))
        d("PI", pi)
        pio2_hi = float(pi / 2)
        d("PIO2_HI", pio2_hi)
        d("PIO2_LO", pi / 2 - pio2_hi)
        ln2_hi = math.ldexp(math.floor(math.ldexp(float(ln2), 32)), -32)   # 32 bits
        d("LN2_HI", ln2_hi)
        d("LN2_LO", ln2 - ln2_hi)
        d("INV_LN2", 1 / ln2)
        inv_ln2_hi = float(1 / ln2)     # 1/ln 2 as a double-double (pow, powr)
        d("INV_LN2_HI", inv_ln2_hi)
        d("INV_LN2_LO", 1 / ln2 - inv_ln2_hi)
        half_ln_2pi = mpmath.log(2 * pi) / 2           # tgamma's Stirling series
        d("HALF_LN_2PI_HI", half_ln_2pi)
        d("HALF_LN_2PI_LO", half_ln_2pi - float(half_ln_2pi))
        for k in range(1, 9):           # B_2k / (2k (2k - 1))
            d(f"STIRLING_C{k}", mpmath.bernoulli(2 * k) / (2 * k * (2 * k - 1)))
        ln10, log10_2 = mpmath.log(10), mpmath.log10(2)
        ln10_hi = math.ldexp(math.floor(math.ldexp(float(ln10), 26)), -26)   # 28 bits
        d("LN10_HI", ln10_hi)
        d("LN10_LO", ln10 - ln10_hi)
        d("LOG2_10", 1 / log10_2)
        d("INV_LN10", 1 / ln10)
        log10_2_hi = math.ldexp(math.floor(math.ldexp(float(log10_2), 32)), -32)   # 31 bits
        d("LOG10_2_HI", log10_2_hi)
        d("LOG10_2_LO", log10_2 - log10_2_hi)
    return "\n".join(lines)


@lru_cache(maxsize=None)
def _constants64() -> str:
    """The OpenCL C definitions of the binary64 references' own constants
    (device_screen64.cl): Taylor, atanh and Stirling coefficients and ln 2, log2 10,
    1/ln 10, 1/pi, 180/pi, pi/180, 2/sqrt(pi), 1/sqrt(pi), ln(2 pi)/2 as
    double-doubles (each part rounded once from mpmath's value at 400 bits), ln 2 in three
    parts for exact products with exponents below 2**11."""
    with mpmath.workprec(400):
        ln2 = mpmath.log(2)
        lines = []

        def d(name, v):
            lines.append(f"#define {name} {_hexf(float(v))}")

        def dd_array(name, values):     # double-double pairs (hi, lo), each rounded once
            pairs = []
            for v in values:
                hi = float(v)
                pairs += [_hexf(hi), _hexf(float(v - hi))]
            lines.append(f"__constant double {name}[] = {{" + ", ".join(pairs) + "};")

        # sin and cos: z**(2 i + 3) / (2 i + 3)! and z**(2 i + 2) / (2 i + 2)!, i = 0 .. 11,
        # signs alternating
        dd_array("SIN64_C", [(-1) ** (i + 1) / mpmath.factorial(2 * i + 3) for i in range(12)])
        dd_array("COS64_C", [(-1) ** (i + 1) / mpmath.factorial(2 * i + 2) for i in range(12)])
        dd_array("EXP64_C", [1 / mpmath.factorial(k) for k in range(23)])      # 1/k!
        dd_array("ATANH64_C", [mpmath.mpf(1) / (2 * k + 1) for k in range(22)])
        # Stirling's series: B_2k / (2k (2k - 1)), k = 1 .. 15 (tgamma)
        dd_array("STIRLING64_C", [mpmath.bernoulli(2 * k) / (2 * k * (2 * k - 1))
                                  for k in range(1, 16)])
        ln2_hi64 = math.ldexp(math.floor(math.ldexp(float(ln2), 42)), -42)     # 42 bits
        ln2_mid64 = math.ldexp(math.floor(math.ldexp(float(ln2 - ln2_hi64), 84)), -84)
        d("LN2_HI64", ln2_hi64)
        d("LN2_MID64", ln2_mid64)
        d("LN2_LO64", ln2 - ln2_hi64 - ln2_mid64)
        d("LN2_DD_HI", ln2)                     # ln 2 as a double-double (2**-107)
        d("LN2_DD_LO", ln2 - float(ln2))
        log2_10, inv_ln10 = mpmath.log(10, 2), 1 / mpmath.log(10)
        d("LOG2_10_HI", log2_10)
        d("LOG2_10_LO", log2_10 - float(log2_10))
        d("INV_LN10_HI", inv_ln10)
        d("INV_LN10_LO", inv_ln10 - float(inv_ln10))
        pi = mpmath.pi
        for name, v in (("INV_PI64", 1 / pi), ("DEG64", 180 / pi), ("RAD64", pi / 180),
                        ("TWO_OVER_SQRTPI", 2 / mpmath.sqrt(pi)),
                        ("INV_SQRTPI", 1 / mpmath.sqrt(pi)),
                        ("HALF_LN_2PI64", mpmath.log(2 * pi) / 2)):
            d(f"{name}_HI", v)                  # 1/pi, 180/pi, pi/180 as double-doubles
            d(f"{name}_LO", v - float(v))
    return "\n".join(lines)


_FUNCTION_START = re.compile(r"^inline\s+[\w\s*]*?\b(\w+)\s*\(", re.M)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_BRACE = re.compile(r"[{}]")


@lru_cache(maxsize=1024)
def prune_unused(source: str) -> str:
    """``source`` (OpenCL C) without the ``inline`` functions that nothing outside the
    functions (kernels, macros, constants) reaches through calls: the screen kernels'
    sources hold every reference of a precision, of which a program uses one, and a
    device's compiler would parse and optimize them all (the build time of each screen
    program grows with the catalogue).  A function is a line starting with ``inline`` up to
    the brace that closes its body (braces counted outside comments, over every branch of
    a preprocessor conditional -- each branch balanced in the screens' sources); the text
    between functions, comments and preprocessor lines included, is kept as it is.  Pure
    text: the kept functions are those the compiler would see, unchanged, so a program
    built from the pruned source is the same program.  Memoized by the text (a screen's
    source is asked for each time a screen object is made: 398 times, 3.7 s, in a
    whole-catalogue run on an H200)."""
    code = _COMMENT.sub(lambda m: " " * len(m.group()), source)     # offsets kept
    braces = [(m.start(), 1 if m.group() == "{" else -1) for m in _BRACE.finditer(code)]
    at_brace = [p for p, _ in braces]
    spans = {}
    for m in _FUNCTION_START.finditer(code):
        i = code.index("{", code.index(")", m.end()))
        depth = 0
        for j, step in braces[bisect.bisect_left(at_brace, i):]:
            depth += step
            if depth == 0:
                break
        else:
            raise ValueError(f"no end of the body of {m.group(1)}")
        spans[m.group(1)] = (m.start(), j + 1)
    calls = {name: set(_IDENTIFIER.findall(code[a:b])) & spans.keys()
             for name, (a, b) in spans.items()}
    outside, at = [], 0
    for a, b in sorted(spans.values()):
        outside.append(code[at:a])
        at = b
    outside.append(code[at:])
    keep = set(_IDENTIFIER.findall("".join(outside))) & spans.keys()
    todo = list(keep)
    while todo:
        for callee in calls[todo.pop()] - keep:
            keep.add(callee)
            todo.append(callee)
    out, at = [], 0
    for a, b in sorted(v for k, v in spans.items() if k not in keep):
        out.append(source[at:a])
        at = b
    out.append(source[at:])
    return "".join(out)


#: The OpenCL C type of a screen's bit patterns, and its kernel files after
#: screen_common.cl, per precision: binary16's screen takes binary32's references
#: (device_screen.cl with BINARY16: its binary32 kernels left out) and judges in binary16
#: (device_screen16.cl); binary16's and binary64's drawn-unit kernels are one text
#: (screen_drawn.cl), every precision's tests' kernel another (screen_pairs.cl).
PATTERN_TYPES = {"binary16": "ushort", "binary32": "uint", "binary64": "ulong"}
SCREEN_FILES = {"binary16": ("device_screen.cl", "device_screen16.cl", "screen_drawn.cl",
                             "screen_pairs.cl"),
                "binary32": ("device_screen.cl", "screen_pairs.cl"),
                "binary64": ("device_screen64.cl", "screen_drawn.cl", "screen_pairs.cl")}
#: binary16's own references where binary32's round to binary32 (fract) or step through
#: binary32 patterns (nextafter)
BINARY16_OWN = {"fract": "ref16_fract", "nextafter": "ref16_nextafter",
                # implementation-defined in binary16 (RULES_ONLY), absolute in binary32
                "mix": "ref_unjudged3", "smoothstep": "ref_unjudged3"}


def _pass_defines(name: str, bound: float, precision: str) -> list[str]:
    """The pass constant of ``name``'s screen at ``bound`` ULPs in ``precision`` (the bound
    less the margin, scaled as the kernel compares) and the bounds of the reference's
    relative error the kernel applies (REL_LO, REL_HI; binary64: R_LO, R_HI), and TIE."""
    if precision == "binary64":
        margin = _margin(bound, precision, name)
        return [f"#define C_PASS64 {_hexf(bound - margin)}", _tie_define(margin),
                f"#define R_LO {_hexf(1 - 2.0 ** -50)}",
                f"#define R_HI {_hexf(1 + 2.0 ** -50)}"]
    frac = format_named(precision).frac_bits
    absolute = []
    if precision == "binary32" and reference_name(name) in ABSOLUTE:
        # ``bound`` is the absolute tolerance: ABS_PASS it less 2**-50 of it, C_PASS the
        # 0.5-ULP test of a correctly rounded result (device_screen.cl, within_tolerance)
        absolute = ["#define ABS_TOL 1", f"#define ABS_PASS {_hexf(bound * (1 - 2.0 ** -50))}",
                    f"#define REF_ERR err_{reference_name(name)}"]
        bound = 0.5
    margin = _margin(bound, precision)
    return [*absolute, f"#define C_PASS{'16' if precision == 'binary16' else ''} "
            f"{_hexf((bound - margin) * 2.0 ** -frac)}", _tie_define(margin),
            f"#define REL_LO {_hexf(1 - 4 * REL)}",
            f"#define REL_HI {_hexf(1 + 4 * REL)}"]


def _tie_define(margin: float) -> str:
    """TIE: two margins (ULPs), the most a passed input's error estimate may
    exceed its error by where f's binade is uncertain ("Exact maxima",
    docs/device_screen.md): beyond it such an input is the host's."""
    return f"#define TIE {_hexf(2 * margin)}"


def _format_defines(name: str, precision: str) -> list[str]:
    """The types and bits of ``precision``'s patterns the kernels read: PATTERN (the
    arguments' and results'), WORD (what they are compared in), ABS_BITS, INF_BITS,
    QUIET_BITS, SIGN_SHIFT; ZPAT, YPAT, Y2PAT (uint for a column of ints,
    ``screen_columns``, else PATTERN); the answers at zeros, infinities and NaNs (ANS_*, with
    the format's markers) and NAN_ANY_QUIET."""
    fmt = format_named(precision)
    wide = precision == "binary64"
    suffix = "UL" if wide else "u"
    pattern = PATTERN_TYPES[precision]
    cols = screen_columns(name, precision)
    answers = special_answers(name, precision)
    return [
        f"#define PATTERN {pattern}",
        f"#define WORD {'ulong' if wide else 'uint'}",
        *(f"#define {k} 0x{v:x}{suffix}" for k, v in (
            ("ABS_BITS", fmt.abs_mask), ("INF_BITS", fmt.pos_inf),
            ("QUIET_BITS", fmt.pos_inf | fmt.quiet_bit))),
        f"#define SIGN_SHIFT {fmt.bits - 1}",
        f"#define BAND_BITS {NBANDS.bit_length() - 1}",
        f"#define NEAR_BELOW 0x{fmt.bits_of(2.0 ** (fmt.precision - 2)):x}{suffix}",
        *(f"#define {k} {'uint' if d.itemsize == 4 else pattern}"     # their int columns
          for k, d in zip(("ZPAT", "YPAT", "Y2PAT"), (cols.z, cols.y, cols.y2))),
        *(f"#define ANS_{k} 0x{v:0{fmt.bits // 4}x}{suffix}" for k, v in (
            *zip(("ANY_NAN", "HOST", "REF"), answer_markers(fmt.bits)),
            *zip(("PZERO", "NZERO", "PINF", "NINF"), answers[:4]))),
        f"#define NAN_ANY_QUIET {int(answers.nan_any_quiet)}",
    ]


def screen_source(name: str, bound: float, aggregate: bool = False,
                  precision: str = "binary32") -> str:
    """The OpenCL C source of the screen kernel ``fuzzfarm_screen`` for built-in ``name``
    (a key of DEVICE_REFERENCES; in binary64, of BINARY64_REFERENCES) at ``bound`` ULPs
    for ``precision`` results (``SCREEN_FILES``, after screen_common.cl: binary32
    device_screen.cl; binary64 device_screen64.cl and screen_drawn.cl; binary16
    device_screen.cl, device_screen16.cl and screen_drawn.cl; each then screen_pairs.cl);
    ``aggregate``: count the failures of prescribed zeros and infinities on the device
    (``aggregates``; binary32 only).  Raises KeyError for a built-in without a device
    reference in ``precision``."""
    base = reference_name(name)
    wide, half = precision == "binary64", precision == "binary16"
    refs = BINARY64_REFERENCES if wide else DEVICE_REFERENCES
    if base is None or base not in refs or precision not in PATTERN_TYPES:
        raise KeyError(f"no device reference for {name} in {precision}")
    cols = screen_columns(name, precision)
    ref = BINARY16_OWN.get(base, refs[base]) if half else refs[base]
    defines = [
        *(["#define AGGREGATE 1"] if aggregate and not wide else []),
        *(["#define BIT_EXACT 1"] if base in BIT_EXACT else []),
        *(["#define TWO_ARGS 1"] if base in SEVERAL_ARGS else []),
        *(["#define THREE_ARGS 1"] if base in THREE_ARGS else []),
        *(["#define MAD 1"] if base in UNFUSED else []),
        *([f"#define OUT2 {SECOND_OUTPUT[base]}{'64' if wide else ''}"]
          if base in SECOND_OUTPUT else []),
        *(["#define OUT2_INT 1"] if base in SECOND_OUTPUT and cols.y2.itemsize == 4 else []),
        *([f"#define REF2 {(BINARY64_SECOND if wide else SECOND_REFERENCE)[base]}"]
          if base in SECOND_REFERENCE else []),
        *(["#define BINARY16 1"] if half else []),
        *(["#define Z_INT 1"] if base in INT_SECOND else []),
        *(["#define RESULT_INT 1"] if base in INT_RESULT else []),
        *(["#define HALF_FLUSH 1"] if catalogue.function(name).family == "half" else []),
        *([f"#define UNDEFINED_BEYOND {_hexf(undefined_beyond(name))}"]
          if undefined_beyond(name) is not None else []),
        *_format_defines(name, precision),
        f"#define NCLASSES {NCLASSES}",
        f"#define LOCAL {LOCAL}u",
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
        _constants(),
        *([_constants64()] if wide else []),
        f"#define REF {ref}",
        *_pass_defines(name, bound, precision),
        f"#define NBANDS {NBANDS}",
        f"#define NROWS {NROWS}",
        f"#define ROW_SUBNORMAL {ROW_SUBNORMAL}u",
        f"#define ROW_NEAR_ZERO {ROW_NEAR_ZERO}u",
        f"#define ROW_NEAR_POLE {ROW_NEAR_POLE}u",
        f"#define NEAR {_hexf(NEAR)}",
        *(f"#define NEAR_{side}_KIND {1 + NEAR_KINDS.index(k) if k else 0}"
          for side, k in zip(("ZERO", "POLE"), NEAR_POINTS.get(name, (None, None)))),
        f"#define NBINS {NBINS}",
        f"#define HIST_LOG2_LO ({HIST_LOG2_LO})",
        f"#define HIST_BINS_PER_OCTAVE {HIST_BINS_PER_OCTAVE}",
        f"#define HIST_FRAC_BITS {HIST_FRAC_BITS}",
    ]
    files = resources.files("fuzzfarm.oracle")
    body = [files.joinpath(f).read_text() for f in SCREEN_FILES[precision]]
    return prune_unused("\n".join([*defines, *(files.joinpath(f).read_text() for f in
                                                 ("binary64_ops.cl", "screen_common.cl")),
                                    *body]))


#: The OpenCL C type of the gathered columns by their width in bytes (``gather_source``).
GATHER_TYPES = {2: "ushort", 4: "uint", 8: "ulong"}


def gather_source(itemsize: int) -> str:
    """The OpenCL C source of the gathering kernels (``fuzzfarm_top``,
    ``fuzzfarm_mark_count``, ``fuzzfarm_mark_scan``, ``fuzzfarm_mark_write``;
    screen_gather.cl) for columns of ``itemsize``-byte patterns (2, 4 or 8): one program
    that every screen of a runner with patterns of that width shares.  Raises KeyError
    for another width."""
    files = resources.files("fuzzfarm.oracle")
    return "\n".join([f"#define PATTERN {GATHER_TYPES[int(itemsize)]}",
                      f"#define LOCAL {LOCAL}u",
                      files.joinpath("screen_gather.cl").read_text()])
