"""The device screen: a sweep's "within the bound" verdicts decided on the device itself
(issue 17; the soundness argument is docs/device_screen.md).

A full binary32 sweep checks 2**32 results; the host's numpy screen (fuzzfarm.oracle.screen)
does that at 13-17 M results/s per process on a 16-core host, which made a sweep several
times longer than the device needs to compute the results.  The device screen moves the
common case onto the device: after the sweep kernel has written the results of a chunk,
the screen kernel (``device_screen.cl``) recomputes every input from its number, evaluates
a binary64 reference of its own -- made of IEEE basic operations and integer arithmetic
only, never a built-in math function of the device -- and applies the host screen's
inequality (``screen`` module docstring, "The proof") with the same assumed relative error
REL = 2**-45 and the same margin.  Per chunk it returns

* ``passed``: one bit per input (uint32 words, bit j of word w = input 32 w + j), set only
  where the input x is a finite nonzero binary32 number (normal or subnormal) and either
  the result y is a finite nonzero binary32 number of f's sign provably within ``bound``
  ULPs of f(x), or f(x) has a prescribed result
  (a rule of the catalogue: the zeros and infinities of sinpi, cospi, tanpi) and y is it
  bit for bit, or a rule prescribes a NaN (log, log2 and log10 of x < 0) and y is a quiet
  NaN, or
  f(x) is provably beyond the overflow threshold (y = the infinity of its sign) or
  provably below half the smallest subnormal (y = a zero); or where x is a zero, an
  infinity or a NaN and y is what the catalogue's rules prescribe there
  (``special_answers``: a pattern bit for bit, or a quiet NaN);
* ``wmax`` (float32) and ``wpos`` (uint8) per word: the largest error among its passed
  inputs (ULPs, -1 where none) and its position, so that the chunk's maximum is found
  without the host evaluating a single reference;
* ``hist`` (uint32, NROWS x NBINS): the passed inputs by input class of x (exponent band,
  or near a zero or pole: oracle.histogram) and by ULP
  error, in the layout of oracle.histogram;
* with ``aggregate`` (``aggregates``): ``agg`` bits, ``agg_count`` per rule and the rule of
  each (``agg_c0``, ``agg_c1``) of the inputs whose prescribed zero or infinity came back
  as another zero or infinity: failures counted on the device, which the host confirms on
  a sample (fuzzfarm.orchestrate.sweep).

Everything else -- a special x whose result is not the prescribed one, zero, infinite
and NaN results of finite x, errors within the margin of the bound, failures -- is a
*candidate*: the host's checker
(verdict.checker.check_batch) judges the candidates exactly as it judges every input of a
host-screened sweep.  The device never passes a failure on its own say-so: a wrong
reference can cost speed (more candidates) but can only hide a failure if it is wrong by
more than the failure's excess over the bound (at least 2**9 binary64 ULPs) in the
direction of the device's wrong result; the tests compare every reference with mpmath and
with the host's float64 references (2**22 inputs each in the soundness tier), and check
the prescribed results the screen accepts against the catalogue's rules through the
checker itself.

Where it is used: binary32 built-ins of one float argument, or of two or three
(``TWO_ARGS``, ``THREE_ARGS``: every input with a zero, infinite or NaN argument is then
the host's), with a reference here
(``DEVICE_REFERENCES``; a half_* built-in takes the reference of the function it
approximates, ``reference_name``), a plain ULP bound (no absolute pieces) or, for the exact
built-ins (``BIT_EXACT``: fabs, floor, ceil, trunc, rint, round, logb, ilogb, sign, of
two arguments fmin, fmax, min, max, maxmag, minmag, copysign, nextafter, step, fmod,
remainder, and of three clamp), a result judged bit for bit, or for +, -, *, fdim, ldexp
and fma (``ROUNDED_ONCE``) 0.5 ULP, round to nearest, no
-cl-unsafe-math-optimizations or -cl-finite-math-only, a device with cl_khr_fp64, and
every rule of the built-in either confined to non-normal inputs or listed in
``HANDLED_RULES`` (a new rule in the catalogue turns the device screen off for that
built-in until its reference handles it).  ``plain_bound`` decides; otherwise the sweep
screens on the host as before.

binary64 results (``BINARY64_REFERENCES``: the trigonometric, hyperbolic and inverse
ones, roots, the exponentials and logarithms, +, -, *, /, fdim, hypot, atan2, the powers,
ldexp, the exact built-ins, those of a second output) are screened by
``device_screen64.cl`` in `run` units (drawn inputs; a sweep's binary64 range is the
host's): double-double references within ``rel64(name)`` (REL64 = 2**-90; the powers',
erf's and erfc's 2**-84) and the same inequality in binary64's ULPs; an int column (an int
argument, result or second output) read through its own type (``screen_columns``)
(docs/device_screen.md, "Binary64 results"); the kernel source of either precision follows
``screen_common.cl``.
"""
from __future__ import annotations

import bisect
import math
import re
import warnings
import weakref
from functools import lru_cache
from importlib import resources

import mpmath
import numpy as np

from edgecases import catalogue
from fuzzfarm.formats import format_named
from fuzzfarm.oracle.device_references import (
    BINARY64_REFERENCES, BINARY64_SECOND, BIT_EXACT, DEVICE_REFERENCES, ERFC_K, EXACT_RULES,
    INT_RESULT, INT_SECOND, SECOND_OUTPUT, SECOND_REFERENCE, SEVERAL_ARGS, THREE_ARGS,
    UNFUSED, aggregates,
    answer_markers, plain_bound, reference_name, rel64, screen_columns, special_answers,
    undefined_beyond)
from fuzzfarm.oracle.histogram import (HIST_BINS_PER_OCTAVE, HIST_FRAC_BITS, HIST_LOG2_LO,
                                       NBANDS, NBINS, NEAR, NEAR_KINDS, NEAR_POINTS,
                                       NROWS, ROW_NEAR_POLE, ROW_NEAR_ZERO, ROW_SUBNORMAL)
from fuzzfarm.oracle.screen_answer import (LOCAL, NCLASSES, ScreenChunk,
                                           clean_candidates, words_for)

__all__ = ["DeviceScreen", "screen_for", "screen_source", "REL", "Landing"]

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


def _bits(a, dtype=np.uint32) -> np.ndarray:
    """A contiguous view of an array of patterns as ``dtype`` (uint32 for 32-bit patterns:
    uint32, int32 or float32; uint64 for 64-bit ones)."""
    a = np.ascontiguousarray(a)
    dt = np.dtype(dtype)
    return a.view(dt) if a.dtype.itemsize == dt.itemsize else a.astype(dt)


def _hexf(v: float) -> str:
    return "(" + float(v).hex() + ")"


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
                  for a in mpmath.taylor(mpmath.erfc, mpmath.mpf(0.5625) + mpmath.mpf(j) / 8,
                                         ERFC_K)]
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
#: (device_screen16.cl).
PATTERN_TYPES = {"binary16": "ushort", "binary32": "uint", "binary64": "ulong"}
SCREEN_FILES = {"binary16": ("device_screen.cl", "device_screen16.cl"),
                "binary32": ("device_screen.cl",), "binary64": ("device_screen64.cl",)}
#: binary16's own references where binary32's round to binary32 (fract) or step through
#: binary32 patterns (nextafter)
BINARY16_OWN = {"fract": "ref16_fract", "nextafter": "ref16_nextafter"}


def screen_source(name: str, bound: float, aggregate: bool = False,
                  precision: str = "binary32") -> str:
    """The OpenCL C source of the screen kernel ``fuzzfarm_screen`` for built-in ``name``
    (a key of DEVICE_REFERENCES; in binary64, of BINARY64_REFERENCES) at ``bound`` ULPs
    for ``precision`` results (binary32: device_screen.cl; binary64: device_screen64.cl;
    both after screen_common.cl); ``aggregate``: count the failures of prescribed zeros
    and infinities on the device (``aggregates``; binary32 only).  Raises KeyError for a
    built-in without a device reference in ``precision``."""
    base = reference_name(name)
    wide, half = precision == "binary64", precision == "binary16"
    refs = BINARY64_REFERENCES if wide else DEVICE_REFERENCES
    if base is None or base not in refs or precision not in PATTERN_TYPES:
        raise KeyError(f"no device reference for {name} in {precision}")
    answers = special_answers(name, precision)
    cols = screen_columns(name, precision)
    fmt = format_named(precision)
    bits = fmt.bits
    markers = answer_markers(bits)
    suffix = "UL" if wide else "u"
    digits = bits // 4
    if wide:
        pass_defines = [f"#define C_PASS64 {_hexf(bound - _margin(bound, precision, name))}",
                        f"#define R_LO {_hexf(1 - 2.0 ** -50)}",
                        f"#define R_HI {_hexf(1 + 2.0 ** -50)}"]
    else:
        frac = fmt.frac_bits
        pass_defines = [f"#define C_PASS{'16' if half else ''} "
                        f"{_hexf((bound - _margin(bound, precision)) * 2.0 ** -frac)}",
                        f"#define REL_LO {_hexf(1 - 4 * REL)}",
                        f"#define REL_HI {_hexf(1 + 4 * REL)}"]
    pattern = PATTERN_TYPES[precision]
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
        f"#define PATTERN {pattern}",
        f"#define WORD {'ulong' if wide else 'uint'}",
        *(f"#define {k} 0x{v:x}{suffix}" for k, v in (
            ("ABS_BITS", fmt.abs_mask), ("INF_BITS", fmt.pos_inf),
            ("QUIET_BITS", fmt.pos_inf | fmt.quiet_bit))),
        f"#define SIGN_SHIFT {fmt.bits - 1}",
        *(f"#define {k} {'uint' if d.itemsize == 4 else pattern}"     # their int columns
          for k, d in zip(("ZPAT", "YPAT", "Y2PAT"), (cols.z, cols.y, cols.y2))
          if wide or half),
        f"#define NCLASSES {NCLASSES}",
        *(f"#define ANS_{k} 0x{v:0{digits}x}{suffix}" for k, v in (
            *zip(("ANY_NAN", "HOST", "REF"), markers),
            *zip(("PZERO", "NZERO", "PINF", "NINF"), answers[:4]))),
        f"#define NAN_ANY_QUIET {int(answers.nan_any_quiet)}",
        f"#define LOCAL {LOCAL}u",
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
        _constants(),
        *([_constants64()] if wide else []),
        f"#define REF {ref}",
        *pass_defines,
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
    return prune_unused("\n".join([*defines, files.joinpath("screen_common.cl").read_text(),
                                    *body]))


def screen_key(runner, name: str, precision: str, claims) -> tuple | None:
    """(name, bound, aggregate, precision): what ``screen_for`` builds a screen of, for
    built-in ``name`` in ``precision`` on ``runner`` under ``claims``; None where it builds
    none (``screen_for``'s reasons)."""
    bound = plain_bound(name, precision, claims)
    if bound is None or not runner.info.has_fp64:
        return None
    return name, bound, aggregates(name, claims), precision


def build_screens(runner, keys, threads: int = 8) -> int:
    """Build the programs of the screens ``keys`` (``screen_key``'s) not yet built on
    ``runner``, ``threads`` at a time (the driver compiles them at once: a run's first
    minutes had been its compiler's, one screen after another); ``DeviceScreen`` then
    finds them built.  A program that does not build is left unbuilt: ``screen_for``
    raises its KernelBuildError when a unit needs it, where the fault is recorded.
    Returns how many were built."""
    from concurrent.futures import ThreadPoolExecutor

    from fuzzfarm.device.runner import KernelBuildError
    built = _BUILT.setdefault(runner, {})
    todo = {}
    for name, bound, aggregate, precision in keys:
        source = screen_source(name, bound, aggregate and name in EXACT_RULES
                               and precision == "binary32", precision)
        if source not in built:
            todo[source] = name, precision

    def build(item):
        source, (name, precision) = item
        try:
            return source, name, runner.build(source, f"device screen of {name} "
                                                      f"({precision})", options="")
        except KernelBuildError:
            return source, name, None

    made = 0
    # runner.build sets warning filters around each build, which is not thread-safe:
    # whatever the threads leave, the filters are the caller's again at the end
    with warnings.catch_warnings(), ThreadPoolExecutor(max(1, int(threads))) as pool:
        for source, name, program in pool.map(build, list(todo.items())):
            if program is None or source in built:
                continue
            try:
                built[source] = program, _screen_kernels(runner, program, name, source)
                made += 1
            except KernelBuildError:
                continue
    return made


def _screen_kernels(runner, program, name: str, source: str) -> dict:
    """{kernel name: kernel} of a built screen program (KernelBuildError where the device
    cannot make one: Oclgrind builds sinpi's, then cannot make its kernel)."""
    from fuzzfarm.device import commands
    return commands.kernels(runner, program, ["fuzzfarm_screen"] + [
        f"fuzzfarm_{k}" for k in ("top", "mark_count", "mark_scan", "mark_write",
                                  "reference", "screen_pairs")],
        f"the device screen of {name}", source)


def screen_for(runner, name: str, precision: str, claims, chunk: int):
    """The device screen of built-in ``name`` in ``precision`` for chunks of ``chunk``
    inputs on ``runner`` (a device.runner.DeviceRunner) under ``claims``: (DeviceScreen,
    "") or, where it must not or cannot be used, (None, the reason in words).  Raises
    device.runner.KernelBuildError when the device fails to build it (a finding)."""
    bound = plain_bound(name, precision, claims)
    if bound is None:
        return None, f"no device screen for {name} in {precision} with these build options"
    if not runner.info.has_fp64:
        return None, "the device lacks cl_khr_fp64, which the device screen computes in"
    return DeviceScreen(runner, name, bound, chunk, aggregate=aggregates(name, claims),
                        precision=precision), ""


#: The programs and kernels of the screens built on each runner, by source: a unit larger
#: than a screen's chunk gets a screen of new buffers over the same kernels (the kernels'
#: arguments are set at each enqueue, as ``twin`` relies on).
_BUILT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class DeviceScreen:
    """The screen kernel of built-in ``name`` at ``bound`` ULPs for ``precision`` results
    (binary32, or binary64: ``BINARY64_REFERENCES``, drawn units only, no sweep numbering
    and no failures counted on the device) built on ``runner`` (a
    device.runner.DeviceRunner) for chunks of up to ``chunk`` inputs.  ``pattern``: the
    dtype of its inputs' and results' bit patterns (uint32 or uint64).  Built without the
    sweep's build options (the screen's arithmetic must be IEEE's).  Raises
    device.runner.KernelBuildError if the device cannot build it (no cl_khr_fp64, a
    compiler fault): the caller screens on the host instead."""

    def __init__(self, runner, name: str, bound: float, chunk: int,
                 aggregate: bool = False, precision: str = "binary32"):
        self.runner, self.name, self.bound = runner, name, bound
        self.precision = precision
        self.pattern = np.dtype(format_named(precision).uint)
        self.columns = screen_columns(name, precision)
        self.chunk = int(chunk)
        self.aggregate = aggregate and name in EXACT_RULES and precision == "binary32"
        source = screen_source(name, bound, self.aggregate, precision)
        built = _BUILT.setdefault(runner, {})
        if source not in built:     # a larger chunk of the same screen: built once
            program = runner.build(source, f"device screen of {name} ({precision})",
                                   options="")
            built[source] = program, _screen_kernels(runner, program, name, source)
        program, made = built[source]
        self.kernel = made["fuzzfarm_screen"]
        self._mark_kernels = {k: made[f"fuzzfarm_{k}"]
                              for k in ("top", "mark_count", "mark_scan", "mark_write")}
        self._test_kernels = {k: made[f"fuzzfarm_{k}"] for k in ("reference", "screen_pairs")}
        self.program = program
        self._allocate()

    def _allocate(self) -> None:
        """This screen's own device buffers (for chunks of ``self.chunk`` inputs)."""
        from fuzzfarm.device.commands import buffer
        w, r = words_for(self.chunk), self.runner
        self.passed = buffer(r, w * 4)
        self.wmax = buffer(r, w * 4)
        self.wpos = buffer(r, w)
        self.agg = buffer(r, w * 4)
        self.agg_c = [buffer(r, w * 4) for _ in range(2)]
        self.hist = buffer(r, NROWS * NBINS * 4)
        self.counts = buffer(r, 2 * NCLASSES * 4)
        self._zeros = np.zeros(NROWS * NBINS, np.uint32)
        self._marks = None          # the gathering's buffers and kernels (``enqueue_marked``)

    def twin(self) -> "DeviceScreen":
        """A screen of the same kernels (nothing built again) with device buffers of its
        own: one chunk can be screened while the host reads another's answer.  (A
        kernel's arguments are taken at each enqueue, so the two may share kernels while
        one host thread enqueues both.)"""
        import copy
        other = copy.copy(self)
        other._allocate()
        return other

    def enqueue(self, ybuf, start: int, count: int, out: ScreenChunk, wait_for=None,
                xbuf=None, blocking: bool = True, into=None, zbuf=None, wbuf=None,
                y2buf=None):
        """Screen the results in device buffer ``ybuf`` (uint32 patterns) of inputs
        ``start .. start+count-1`` of a sweep, or with ``xbuf``, of the inputs in that
        device buffer (uint32 patterns, a ``run`` unit's; ``zbuf``, ``wbuf``: the second
        and third argument's, for a built-in of two or three, ``TWO_ARGS``,
        ``THREE_ARGS``; ``y2buf``: the second output's, ``SECOND_OUTPUT``), into ``out``
        (host arrays,
        ScreenChunk.views), or with ``into`` = (buffer, byte offset), into that OpenCL
        buffer laid out as ScreenChunk.views lays out host memory (a host-memory buffer
        over the memory of ``out``: copied at pinned-memory speed).  Blocking, or with
        ``blocking=False`` returning the event of the last copy (``out`` is complete once
        it is, and ``into``'s buffer mapped)."""
        from fuzzfarm.device.commands import copy, launch
        if count > self.chunk:
            raise ValueError(f"device screen: {count} inputs in a screen built for "
                             f"{self.chunk}")
        r = self.runner
        ev0 = copy(r, self.hist, self._zeros)
        ev1 = copy(r, self.counts, self._zeros[:2 * NCLASSES])
        self.kernel.set_args(ybuf if xbuf is None else xbuf, np.uint32(xbuf is not None),
                             ybuf, np.uint64(start), np.uint32(count), self.passed,
                             self.wmax, self.wpos, self.hist, self.agg, self.counts,
                             *self.agg_c, *(ybuf if b is None else b
                                            for b in (zbuf, wbuf, y2buf)))
        w = words_for(count)
        ev = launch(r, self.kernel, w, LOCAL, wait_for=[ev0, ev1] + list(wait_for or []))
        if into is not None:
            return self._copy_into(into, count, ev, blocking)
        copy(r, out.passed, self.passed, wait_for=[ev])
        copy(r, out.wmax, self.wmax, wait_for=[ev])
        copy(r, out.wpos, self.wpos, wait_for=[ev])
        copy(r, out.agg, self.agg, wait_for=[ev])
        copy(r, out.agg_count, self.counts, wait_for=[ev])
        if self.aggregate:
            copy(r, out.agg_c0, self.agg_c[0], wait_for=[ev])
            copy(r, out.agg_c1, self.agg_c[1], wait_for=[ev])
        return copy(r, out.hist.reshape(-1), self.hist, wait_for=[ev], blocking=blocking)

    def _copy_into(self, into, count: int, ev, blocking: bool):
        """``enqueue``'s copies of the answer into OpenCL buffer ``into`` = (buffer, byte
        offset), at the places ScreenChunk.views gives its fields (the two rule-bit words
        only where this screen aggregates, as ``enqueue`` copies them)."""
        from fuzzfarm.device.commands import copy
        dst, base = into
        sources = {"passed": self.passed, "wmax": self.wmax, "wpos": self.wpos,
                   "agg": self.agg, "agg_count": self.counts, "hist": self.hist}
        if self.aggregate:
            sources.update(agg_c0=self.agg_c[0], agg_c1=self.agg_c[1])
        for name, _, _, at, size in ScreenChunk._placed(count):
            if name in sources:
                last = copy(self.runner, dst, sources[name], byte_count=size,
                            dst_offset=base + at, wait_for=[ev])
        if blocking:
            last.wait()
        return last

    def clean_candidates(self, answer: ScreenChunk, count: int) -> np.ndarray | None:
        """``clean_candidates`` of this screen's ``answer`` for ``count`` inputs."""
        return clean_candidates(answer, count)

    def landing(self, count: int, columns: int = 1) -> "Landing":
        """Host memory (pinned where the driver allows it) for the answer and the gathered
        rows of one drawn unit of ``count`` <= chunk inputs of ``columns`` columns each
        besides y (the arguments, and a second output: ``enqueue_marked``): an idle one of
        this screen's, or a new one.  Give it back with ``Landing.release``."""
        if count > self.chunk:
            raise ValueError(f"device screen: {count} inputs in a screen built for "
                             f"{self.chunk}")
        idle = _idle_landings(self, columns)
        land = idle.pop() if idle else Landing(self, columns)
        land.screen = self
        land.use(count)
        return land

    def enqueue_marked(self, xbuf, ybuf, count: int, land: "Landing", wait_for=None,
                       more=()):
        """After ``enqueue`` of a drawn unit (``xbuf``, ``ybuf``: its device buffers of
        the first argument's and the result's patterns; ``more``: further columns of the
        pattern's width -- the later arguments', then a second output's -- as many as
        ``land`` was made for; ``count`` inputs): gather on the device those columns and
        y of every input the host's verdict may read
        (verdict.screened.SparseOutputs.positions), in input order, and copy them and the
        count into ``land`` (``Landing.marked``).  Returns the event of the last copy
        (``land`` is complete once it is)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        r = self.runner
        size = self.chunk * self.pattern.itemsize
        if self._marks is None:
            w = words_for(self.chunk)
            self._marks = {
                **self._mark_kernels, "hdr": buffer(r, 8), "woff": buffer(r, w * 4),
                "gtot": buffer(r, max(1, w // LOCAL) * 4), "gx": buffer(r, size),
                "gy": buffer(r, size), "extra": []}
        m = self._marks
        while len(m["extra"]) < len(more) + len(more) % 2:    # gathered two at a time
            m["extra"].append(buffer(r, size))
        w = words_for(count)
        n, cap = np.uint32(count), np.uint32(land.x.size)
        m["top"].set_args(self.wmax, self.wpos, np.uint32(w), m["hdr"])
        ev = launch(r, m["top"], LOCAL, LOCAL, wait_for=wait_for)
        m["mark_count"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"], m["gtot"])
        ev = launch(r, m["mark_count"], w, LOCAL, wait_for=[ev])
        m["mark_scan"].set_args(m["gtot"], np.uint32(w // LOCAL), m["hdr"])
        ev = launch(r, m["mark_scan"], LOCAL, LOCAL, wait_for=[ev])
        m["mark_write"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"], m["gtot"],
                                 xbuf, ybuf, cap, m["gx"], m["gy"])
        ev = launch(r, m["mark_write"], w, LOCAL, wait_for=[ev])
        copy(r, land.hdr, m["hdr"], wait_for=[ev])
        copy(r, land.x, m["gx"], wait_for=[ev])
        last = copy(r, land.y, m["gy"], wait_for=[ev])
        for j in range(0, len(more), 2):    # further columns: the same rows, two a launch
            pair = more[j:j + 2]
            m["mark_write"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"],
                                     m["gtot"], pair[0], pair[-1], cap, m["extra"][j],
                                     m["extra"][j + 1])
            ev = launch(r, m["mark_write"], w, LOCAL, wait_for=[ev])
            for host, dev in zip(land.more[j:j + 2], m["extra"][j:j + 2]):
                last = copy(r, host, dev, wait_for=[ev])
        return last

    def screen_bits(self, start: int, ybits: np.ndarray) -> ScreenChunk:
        """Screen host results ``ybits`` (uint32, (n,)) of inputs ``start ..`` (tests,
        planted faults); returns a fresh ScreenChunk."""
        from fuzzfarm.device.commands import buffer
        n = int(ybits.size)
        out = ScreenChunk.empty(n)
        y = buffer(self.runner, host=np.ascontiguousarray(ybits, np.uint32), read_only=True)
        self.enqueue(y, start, n, out)
        return out

    def screen_drawn(self, xbits: np.ndarray, ybits: np.ndarray,
                     zbits: np.ndarray | None = None, wbits: np.ndarray | None = None,
                     y2bits: np.ndarray | None = None) -> ScreenChunk:
        """Screen host results ``ybits`` (and second outputs ``y2bits``,
        ``SECOND_OUTPUT``) of drawn inputs ``xbits`` (and second and third arguments
        ``zbits``, ``wbits``, ``TWO_ARGS``, ``THREE_ARGS``) (32-bit patterns, (n,) each),
        as a ``run`` unit is screened after its kernel (tests, planted faults); returns a
        fresh ScreenChunk."""
        from fuzzfarm.device.commands import buffer
        n = int(ybits.size)
        out = ScreenChunk.empty(n)
        c = self.columns
        x, y, z, w, y2 = (buffer(self.runner, host=_bits(ybits if a is None else a,
                                                          c.y if a is None else d),
                                 read_only=True)
                          for a, d in zip((xbits, ybits, zbits, wbits, y2bits),
                                          (c.x, c.y, c.z, c.w, c.y2)))
        self.enqueue(y, 0, n, out, xbuf=x, zbuf=z, wbuf=w, y2buf=y2)
        return out

    def references(self, xbits: np.ndarray, zbits: np.ndarray | None = None,
                   wbits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The device reference at patterns ``xbits`` (and second and third arguments
        ``zbits``, ``wbits``, ``TWO_ARGS``, ``THREE_ARGS``) (uint32 (n,), or uint64 for a
        binary64 screen), for tests: (r float64 (n,) -- for binary64 (n, 2), the
        double-double's high and low parts --, kind int32 (n,): 0 value, 1 exact, 2 beyond
        the overflow threshold, 3 below half the smallest subnormal, 4 a NaN prescribed,
        5 undefined; screen_common.cl)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        xb = _bits(xbits, self.pattern)
        n = int(xb.size)
        r = np.empty((n, 2) if self.pattern.itemsize == 8 else n, np.float64)
        kind = np.empty(n, np.int32)
        if n == 0:
            return r, kind
        dev = self.runner
        xbuf = buffer(dev, host=xb, read_only=True)     # kept alive until the copies end
        zbuf, wbuf = (xbuf if a is None else buffer(dev, host=_bits(a, d), read_only=True)
                      for a, d in ((zbits, self.columns.z), (wbits, self.columns.w)))
        rbuf, kbuf = buffer(dev, r.nbytes), buffer(dev, kind.nbytes)
        k = self._test_kernels["reference"]
        k.set_args(xbuf, rbuf, kbuf, zbuf, wbuf)
        ev = launch(dev, k, n)
        copy(dev, r, rbuf, wait_for=[ev], blocking=True)
        copy(dev, kind, kbuf, blocking=True)
        return r, kind

    def screen_pairs(self, xbits: np.ndarray, ybits: np.ndarray,
                     zbits: np.ndarray | None = None, wbits: np.ndarray | None = None,
                     y2bits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The screen's verdicts on arbitrary pairs of patterns (32-bit, or 64-bit for a
        binary64 screen; (n,) each; with ``zbits``, ``wbits``, the second and third arguments,
        ``TWO_ARGS``, ``THREE_ARGS``; ``y2bits``, the second outputs, ``SECOND_OUTPUT``),
        for tests: (passed bool
        (n,), err float32 (n,) in ULPs where passed).
        ``self.last_verdicts`` keeps the raw verdicts (0 host, 1 passed, 2 + c a counted
        failure of rule c)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        dev = self.runner
        c = self.columns
        xb, yb = _bits(xbits, c.x), _bits(ybits, c.y)
        n = int(xb.size)
        passed, err = np.zeros(n, np.uint8), np.zeros(n, np.float32)
        self.last_verdicts = passed
        if n == 0:
            return passed.astype(bool), err
        zb, wb, y2b = (xb if a is None else _bits(a, d)
                       for a, d in ((zbits, c.z), (wbits, c.w), (y2bits, c.y2)))
        bufs = [buffer(dev, host=a, read_only=True) for a in (xb, yb, zb, wb, y2b)]
        pbuf, ebuf = buffer(dev, passed.nbytes), buffer(dev, err.nbytes)
        k = self._test_kernels["screen_pairs"]
        k.set_args(bufs[0], bufs[1], pbuf, ebuf, *bufs[2:])
        ev = launch(dev, k, n)
        copy(dev, passed, pbuf, wait_for=[ev], blocking=True)
        copy(dev, err, ebuf, blocking=True)
        self.last_verdicts = passed
        return passed == 1, err


#: The most of a drawn unit's inputs a Landing takes back gathered (``enqueue_marked``);
#: a unit with more marked inputs is read whole.  The verdict of a ``run`` unit reads 7-49%
#: of its inputs (PyPI PoCL, 2**21-input units of sin, exp, sinpi, tanpi and log).
GATHER_FRACTION = 0.5


class Landing:
    """Host memory for one drawn unit's screen answer and gathered rows, pinned where the
    driver allows it (device.runner.DeviceRunner.host_array), sized for its screen's
    chunk and ``columns`` (besides y: the arguments and a second output, 1 to 4) and reused
    (``DeviceScreen.landing``, ``release``).
    After ``use(count)``: ``answer`` (ScreenChunk views for ``count`` inputs), ``hdr``
    uint32 (2,): the marked inputs' count and the position of the passed input of the
    largest error (0xffffffff: none), ``x``, ``y`` and ``more`` (one per further column)
    (count * GATHER_FRACTION,) of the screen's ``pattern`` dtype (uint32, or uint64 for
    binary64): the gathered first argument, result and further columns (the later
    arguments, then a second output).  The answer's
    ``agg_c0``, ``agg_c1`` are stale where the screen does not aggregate (the device does
    not write them; work.session.DeviceSession.land sends them empty)."""

    def __init__(self, screen: DeviceScreen, columns: int = 1):
        self.screen = screen
        self.columns = int(columns)
        self.answer_bytes = -(-ScreenChunk.nbytes(screen.chunk) // 8) * 8
        self.pattern = screen.pattern
        gcap = max(1, int(screen.chunk * GATHER_FRACTION))
        self._buf, self._mem = screen.runner.host_array(
            self.answer_bytes + 8 + (1 + self.columns) * self.pattern.itemsize * gcap)

    def use(self, count: int) -> None:
        """Lay the memory out for a unit of ``count`` inputs."""
        a, g = self.answer_bytes, max(1, int(count * GATHER_FRACTION))
        size = self.pattern.itemsize
        self.count = int(count)
        self.answer = ScreenChunk.views(self._buf, 0, count)
        self.hdr = np.frombuffer(self._buf, np.uint32, 2, a)
        self.x, self.y, *self.more = (
            np.frombuffer(self._buf, self.pattern, g, a + 8 + size * g * k)
            for k in range(1 + self.columns))

    def marked(self) -> tuple[int, int, tuple | None, np.ndarray | None]:
        """(marked inputs, top position or -1, their columns (a tuple: x, then the further
        ones), their y) once the copies are done; the arrays are None where the marked
        inputs did not fit (then read every row).  The arrays are views of this landing:
        copy them before ``release``."""
        total, top = int(self.hdr[0]), int(self.hdr[1])
        top = -1 if top == 0xFFFFFFFF else top
        if total > self.x.size:
            return total, top, None, None
        return total, top, tuple(a[:total] for a in (self.x, *self.more)), self.y[:total]

    def release(self) -> None:
        """Give the memory back for the next unit of any screen of the runner and chunk (at
        most 2 are kept: a device actor has at most 2 units on the device; a landing per
        screen had cost 12 ms each of some 150 targets' first units on NVIDIA's H100)."""
        idle = _idle_landings(self.screen, self.columns)
        if len(idle) < 2:
            idle.append(self)


#: Idle Landings by runner and chunk (``DeviceScreen.landing``, ``Landing.release``).
_LANDINGS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _idle_landings(screen: DeviceScreen, columns: int) -> list:
    """The idle Landings that fit ``screen`` (its runner's, for its chunk and patterns)
    and ``columns`` gathered columns besides y."""
    return _LANDINGS.setdefault(screen.runner, {}).setdefault(
        (screen.chunk, screen.pattern.itemsize, columns), [])
