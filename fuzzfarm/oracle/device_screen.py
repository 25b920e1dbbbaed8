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

Where it is used: binary32 built-ins of one float argument, or of two (``TWO_ARGS``:
every input with a zero, infinite or NaN argument is then the host's), with a reference here
(``DEVICE_REFERENCES``; a half_* built-in takes the reference of the function it
approximates, ``reference_name``), a plain ULP bound (no absolute pieces) or, for the exact
built-ins (``BIT_EXACT``: fabs, floor, ceil, trunc, rint, round, logb, ilogb, sign, and of
two arguments fmin, fmax, min, max, maxmag, minmag, copysign, nextafter, step), a result
judged bit for bit, or for +, -, *, fdim and ldexp (``ROUNDED_ONCE``) 0.5 ULP, round to
nearest, no
-cl-unsafe-math-optimizations or -cl-finite-math-only, a device with cl_khr_fp64, and
every rule of the built-in either confined to non-normal inputs or listed in
``HANDLED_RULES`` (a new rule in the catalogue turns the device screen off for that
built-in until its reference handles it).  ``plain_bound`` decides; otherwise the sweep
screens on the host as before.
"""
from __future__ import annotations

import math
import weakref
from functools import lru_cache
from importlib import resources
from typing import NamedTuple

import mpmath
import numpy as np

from edgecases import bounds, catalogue
from fuzzfarm.oracle.histogram import (HIST_BINS_PER_OCTAVE, HIST_FRAC_BITS, HIST_LOG2_LO,
                                       NBANDS, NBINS, NEAR, NEAR_KINDS, NEAR_POINTS,
                                       NROWS, ROW_NEAR_POLE, ROW_NEAR_ZERO, ROW_SUBNORMAL)
from fuzzfarm.oracle.screen_answer import (LOCAL, NCLASSES, ScreenChunk,
                                           clean_candidates, words_for)

__all__ = ["DEVICE_REFERENCES", "BIT_EXACT", "INT_RESULT", "TWO_ARGS", "INT_SECOND",
           "ROUNDED_ONCE", "reference_name",
           "undefined_beyond", "HANDLED_RULES", "EXACT_RULES", "aggregates", "DeviceScreen",
           "screen_for", "plain_bound", "screen_source", "special_answers", "REL"]

#: The assumed relative error of every device reference (as the host's float64 screen:
#: its margin formula and constants are reused unchanged).  docs/device_screen.md bounds
#: the references' errors below 2**-49.
REL = 2.0 ** -45

#: built-in -> the reference function in device_screen.cl
DEVICE_REFERENCES = {
    "sin": "ref_sin", "cos": "ref_cos", "exp": "ref_exp", "exp2": "ref_exp2",
    "log": "ref_log", "log2": "ref_log2", "sinpi": "ref_sinpi", "cospi": "ref_cospi",
    "tanpi": "ref_tanpi", "tan": "ref_tan", "exp10": "ref_exp10", "log10": "ref_log10",
    "sqrt": "ref_sqrt", "rsqrt": "ref_rsqrt", "cbrt": "ref_cbrt", "atan": "ref_atan",
    "asin": "ref_asin", "acos": "ref_acos", "atanpi": "ref_atanpi", "asinpi": "ref_asinpi",
    "acospi": "ref_acospi", "expm1": "ref_expm1", "sinh": "ref_sinh", "cosh": "ref_cosh",
    "tanh": "ref_tanh", "log1p": "ref_log1p", "asinh": "ref_asinh", "acosh": "ref_acosh",
    "atanh": "ref_atanh", "recip": "ref_recip", "erf": "ref_erf", "erfc": "ref_erfc",
    "degrees": "ref_degrees", "radians": "ref_radians",
    # two arguments (TWO_ARGS)
    "add": "ref_add", "sub": "ref_sub", "mul": "ref_mul", "divide": "ref_divide",
    "fdim": "ref_fdim", "hypot": "ref_hypot", "atan2": "ref_atan2", "atan2pi": "ref_atan2pi",
    "ldexp": "ref_ldexp",
    # exact: judged bit for bit (BIT_EXACT)
    "fabs": "ref_fabs", "floor": "ref_floor", "ceil": "ref_ceil", "trunc": "ref_trunc",
    "rint": "ref_rint", "round": "ref_round", "logb": "ref_logb", "ilogb": "ref_ilogb",
    "sign": "ref_sign",
    "fmin": "ref_fmin", "fmax": "ref_fmax", "min": "ref_fmin", "max": "ref_fmax",
    "maxmag": "ref_maxmag", "minmag": "ref_minmag", "copysign": "ref_copysign",
    "nextafter": "ref_nextafter", "step": "ref_step",
}
#: The exact built-ins among them: their result must be the reference's bit for bit (a
#: bound of 0 ULP or "correctly rounded" in every table), and no ULP error is measured for
#: them (the host measures none either).
BIT_EXACT = frozenset({"fabs", "floor", "ceil", "trunc", "rint", "round", "logb", "ilogb",
                       "sign", "fmin", "fmax", "min", "max", "maxmag", "minmag", "copysign",
                       "nextafter", "step"})
#: The references of two float arguments (the screen kernel's TWO_ARGS): every input
#: with an argument that is a zero, an infinity or a NaN is the host's.
TWO_ARGS = frozenset({"add", "sub", "mul", "divide", "fdim", "hypot", "atan2", "atan2pi",
                      "fmin", "fmax", "min", "max", "maxmag", "minmag", "copysign",
                      "nextafter", "step", "ldexp"})
#: ... of them, those whose second argument is an int (the kernel's Z_INT: an input with
#: k = 0 is the host's, as one with a zero, infinite or NaN float argument).
INT_SECOND = frozenset({"ldexp"})
#: Correctly rounded built-ins whose reference is the exact value rounded once in binary64
#: (x + y, x - y, x * y exact, x - y of fdim, x / y; x 2**k exact): screened at a bound of
#: 0.5 ULP, which a result passes only where it is the nearest binary32 number
#: (docs/device_screen.md).
ROUNDED_ONCE = frozenset({"add", "sub", "mul", "fdim", "divide", "ldexp"})
#: ... those whose result is an int (compared as an int32 pattern).
INT_RESULT = frozenset({"ilogb"})


def reference_name(name: str) -> str | None:
    """The key of DEVICE_REFERENCES that judges built-in ``name``: its own, or for a
    half_* built-in that of the function it approximates (half_sin -> sin, half_recip ->
    recip: oracle.base_name; OpenCL C 3.0 §6.15.2.3, "half_<funcname> functions ... must
    conform to the same edge case requirements"), or None where there is none.  Pure."""
    from fuzzfarm.oracle import base_name
    if name in DEVICE_REFERENCES:
        return name
    if not name.startswith("half_"):
        return None
    base = base_name(name)
    return base if base in DEVICE_REFERENCES and base not in BIT_EXACT else None


#: Rule predicates that hold only on zeros, infinities and NaNs: the screen passes such
#: inputs only with what these very rules prescribe (``special_answers``), so they need no
#: handling by a reference.  A rule on subnormal inputs is not among them: the references
#: judge subnormal x, so such a rule must be handled like one on normal inputs.
_RULED_CLASSES = {"zero", "inf", "pos_inf", "neg_inf", "nan", "pos_zero", "neg_zero"}
#: ... and for a two-argument built-in, whose inputs with a zero, infinite or NaN argument
#: are all the host's (no special answers): the NaN kinds too.
_RULED_CLASSES_2 = _RULED_CLASSES | {"qnan", "snan"}
#: The rules, per built-in, that hold on some normal inputs and that its reference
#: handles: it answers the prescribed result exactly (K_EXACT) or a value that leaves the
#: input to the host (NaN, or an exact zero).  Checked against the catalogue through the
#: checker by tests/test_device_screen.py.
#: The rules whose prescribed zeros and infinities the references answer exactly, in the
#: order of the class number the reference gives them (device_screen.cl, K_EXACT).
EXACT_RULES = {
    "sinpi": ("CL.sinpi.positive_integer", "CL.sinpi.negative_integer"),
    "cospi": ("CL.cospi.half_integer",),
    "tanpi": ("CL.tanpi.even_integer", "CL.tanpi.odd_integer",
              "CL.tanpi.half_integer_even_n", "CL.tanpi.half_integer_odd_n"),
}
HANDLED_RULES = {
    "log": {"F9.log.2", "F9.log.3"}, "log2": {"F9.log2.2", "F9.log2.3"},
    "log10": {"F9.log10.2", "F9.log10.3"},
    "sqrt": {"F9.sqrt.D3"}, "rsqrt": {"F9.rsqrt.D4"},
    "asin": {"F9.asin.2"}, "acos": {"F9.acos.1", "F9.acos.2"},
    "asinpi": {"CL.asinpi.abs_gt_one"}, "acospi": {"CL.acospi.one", "CL.acospi.abs_gt_one"},
    "log1p": {"F9.log1p.2", "F9.log1p.3"}, "acosh": {"F9.acosh.1", "F9.acosh.2"},
    "atanh": {"F9.atanh.2", "F9.atanh.3"},
    **{name: set(rules) for name, rules in EXACT_RULES.items()},
    # the exact built-ins' rules on normal inputs prescribe the exact result the reference
    # computes (floor(x) = +0 on (0, 1), ...): tests/test_device_screen.py, through the
    # checker
    "floor": {"F9.floor.D1"},
    "ceil": {"F9.ceil.D1", "CL.ceil.between_minus_one_and_zero"},
    "trunc": {"F9.trunc.D1", "CL.trunc.between_minus_one_and_zero"},
    "rint": {"CL.rint.round_to_nearest_even", "CL.rint.between_minus_half_and_zero"},
    "round": {"CL.round.between_minus_half_and_zero"},
    "sign": {"CL.sign.positive", "CL.sign.negative"},
    # copysign(x, y) of finite nonzero x: |x| with y's sign, the reference's result
    "copysign": {"F9.copysign.D1a"},
}
#: The degree of erfc's Taylor polynomials on [1/2, 2) (truncation below 2**-60 relative
#: for |h| <= 1/16: docs/device_screen.md).
ERFC_K = 13

def plain_bound(name: str, precision: str, claims) -> float | None:
    """The ULP bound the device screen applies to built-in ``name`` in ``precision`` under
    ``claims`` (verdict.claims.Claims), or None where the device screen must not be used
    (module docstring: no reference, not binary32, a bound that is not one number of ULPs,
    a rounding mode other than round to nearest, a relaxed or finite-math build, or a rule
    of the catalogue the reference does not handle)."""
    ref = reference_name(name)
    if ref is None or precision != "binary32":
        return None
    if (tuple(claims.rounding) != ("rte",) or claims.relaxed or claims.finite_math
            or claims.precision != precision):
        return None
    b = bounds.bound(name, precision, claims.profile, claims.relaxed)
    if ref in BIT_EXACT:            # exact in every table, or not for the device screen
        if not (b.correctly_rounded or b.plain_ulps == 0) or b.pieces[1:]:
            return None
        ulps = 0.0
    elif b.correctly_rounded and ref in ROUNDED_ONCE and not b.pieces[1:]:
        ulps = 0.5
    elif b.implementation_defined or b.correctly_rounded or b.plain_ulps is None:
        return None
    elif b.plain_ulps < 0.5:
        return None
    else:
        ulps = float(b.plain_ulps)
    ruled = _RULED_CLASSES_2 if ref in TWO_ARGS else _RULED_CLASSES
    undefined = catalogue.function(name).undefined
    if ref in TWO_ARGS:             # undefined only where an argument is special: the host's
        if not all(any(pred in ruled for _arg, pred in clause) for clause in undefined):
            return None
    elif undefined and undefined_beyond(name) is None:
        return None
    handled = HANDLED_RULES.get(ref, set())
    for rule in catalogue.rules_for(name):
        confined = any(pred in ruled for _arg, pred in rule.when)
        if not confined and rule.id not in handled:
            return None
    return ulps


def undefined_beyond(name: str) -> float | None:
    """T where built-in ``name``'s results are undefined exactly for finite |x| > T (the
    catalogue's ``undefined = [{ x = "abs_gt:T" }]``: half_sin, half_cos, half_tan, "x must
    be in the range -2^16 ... +2^16", OpenCL C 3.0 §6.15.2): the device screen passes any
    result there, as the checker judges none.  None where the built-in has no undefined
    inputs or they are of another form (then ``plain_bound`` refuses the device screen)."""
    und = catalogue.function(name).undefined
    if len(und) != 1 or len(und[0]) != 1:
        return None
    (arg, word), = und[0]
    if arg != "x" or not word.startswith("abs_gt:"):
        return None
    return float(word.split(":", 1)[1])


#: ``SpecialAnswers`` words: a NaN is prescribed (a quiet one passes); the host judges; the
#: reference judges (a zero no rule covers, e.g. acos(+-0) = pi/2).
ANS_ANY_NAN, ANS_HOST, ANS_REF = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD


class SpecialAnswers(NamedTuple):
    """What the device screen passes for x a zero, an infinity or a NaN (binary32): per x
    in +0, -0, +inf, -inf the result pattern a rule of the catalogue prescribes (uint32),
    ``ANS_ANY_NAN`` where it prescribes a NaN, ``ANS_HOST`` where the host must judge,
    ``ANS_REF`` at a zero that no rule covers (the reference judges it, as a finite x:
    every reference is valid at +-0, and tests/test_device_screen.py checks the answers
    through the checker); and
    whether a NaN x may give any quiet NaN (no rule of the built-in holds on it: F.9's NaN
    propagation and OpenCL's quietness alone apply, which a quiet NaN meets)."""

    pos_zero: int
    neg_zero: int
    pos_inf: int
    neg_inf: int
    nan_any_quiet: bool


@lru_cache(maxsize=None)
def special_answers(name: str) -> SpecialAnswers:
    """The catalogue's prescribed results for built-in ``name`` at binary32 x = +0, -0,
    +inf, -inf and NaN, as the device screen applies them (all the host's for a built-in
    of two arguments, ``TWO_ARGS``) (``SpecialAnswers``; OpenCL C
    7.5 and C99 F.9's rules in edgecases/data).  An x where no rule holds, where rules
    disagree, or where the one that holds is a note, a set of results other than a NaN,
    or has a flush-to-zero alternative, is the host's (``ANS_HOST``), except a zero where
    no rule holds (``ANS_REF``).  Pure; raises
    KeyError for a built-in outside the catalogue."""
    from edgecases.predicates import evaluate
    from fuzzfarm.formats import BINARY32
    fn = catalogue.function(name)
    if reference_name(name) in TWO_ARGS:    # every special input is the host's
        return SpecialAnswers(ANS_HOST, ANS_HOST, ANS_HOST, ANS_HOST, nan_any_quiet=False)
    (arg,) = fn.inputs
    float_ret = fn.outputs[0].kind == "float"
    xs = np.array([0x0000_0000, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000],
                  np.uint32)
    answers: list[set] = [set() for _ in xs]
    for rule in catalogue.rules_for(name):
        holds = np.ones(xs.size, bool)
        for a, word in rule.when:
            holds &= evaluate(word, xs, arg.kind, BINARY32)
        for i in np.flatnonzero(holds):
            one = {arg.name: xs[i:i + 1]}
            spec = rule.results.get("ret")
            if (rule.severity != "fail" or rule.ftz_results or set(rule.results) != {"ret"}
                    or spec is None):
                answers[i].add(ANS_HOST)
            elif spec.kind == "nan":
                answers[i].add(ANS_ANY_NAN)
            else:
                try:
                    bits = spec.expected_bits(one, BINARY32)
                except KeyError:        # a device constant (ilogb's FP_ILOGB0)
                    answers[i].add(ANS_HOST)
                    continue
                nan = bits is None or (float_ret and
                                       (int(bits[0]) & 0x7FFF_FFFF) > 0x7F80_0000)
                answers[i].add(ANS_HOST if nan else int(bits[0]) & 0xFFFF_FFFF)
    words = [a.pop() if len(a) == 1 else ANS_REF if not a and i < 2 else ANS_HOST
             for i, a in enumerate(answers[:4])]
    return SpecialAnswers(*words, nan_any_quiet=not answers[4])


def aggregates(name: str, claims) -> bool:
    """Whether the device screen counts the failures of ``name``'s prescribed zeros and
    infinities itself (a zero or infinity other than the prescribed one: the checker
    reports exactly one failure of that rule for each, where zeros' signs and infinite
    results are judged).  The host then judges a sample of them (``aggregated_sample``)."""
    return (name in EXACT_RULES and claims.signed_zeros and claims.inf_nan
            and claims.judges_specials and not claims.finite_math and not claims.relaxed)


def _margin(bound: float) -> float:
    """The host screen's margin for binary32 against a float64 reference of error REL."""
    from fuzzfarm.formats import BINARY32
    from fuzzfarm.oracle.screen import _margin
    return _margin(REL, bound, BINARY32, 53)


def _hexf(v: float) -> str:
    return "(" + float(v).hex() + ")"


@lru_cache(maxsize=None)
def _constants() -> str:
    """The OpenCL C definitions of the references' constants, computed with mpmath at 400
    bits and rounded once to binary64."""
    with mpmath.workprec(400):
        pi, ln2 = mpmath.pi, mpmath.log(2)
        lines = []
        t = 2 / pi
        words = []
        for _ in range(10):            # 2/pi = sum W_i 2**(-32 (i + 1))
            t *= 2 ** 32
            w = int(mpmath.floor(t))
            words.append(w)
            t -= w
        lines.append("__constant uint TWO_OVER_PI[10] = {" +
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


def screen_source(name: str, bound: float, aggregate: bool = False) -> str:
    """The OpenCL C source of the screen kernel ``fuzzfarm_screen`` for built-in ``name``
    (a key of DEVICE_REFERENCES) at ``bound`` ULPs; ``aggregate``: count the failures of
    prescribed zeros and infinities on the device (``aggregates``).  Raises KeyError for
    a built-in without a device reference."""
    base = reference_name(name)
    if base is None:
        raise KeyError(f"no device reference for {name}")
    ref = DEVICE_REFERENCES[base]
    answers = special_answers(name)
    c_pass = (bound - _margin(bound)) * 2.0 ** -23
    defines = [
        *(["#define AGGREGATE 1"] if aggregate else []),
        *(["#define BIT_EXACT 1"] if base in BIT_EXACT else []),
        *(["#define TWO_ARGS 1"] if base in TWO_ARGS else []),
        *(["#define Z_INT 1"] if base in INT_SECOND else []),
        *(["#define RESULT_INT 1"] if base in INT_RESULT else []),
        *(["#define HALF_FLUSH 1"] if catalogue.function(name).family == "half" else []),
        *([f"#define UNDEFINED_BEYOND {_hexf(undefined_beyond(name))}"]
          if undefined_beyond(name) is not None else []),
        f"#define NCLASSES {NCLASSES}",
        *(f"#define ANS_{k} 0x{v:08x}u" for k, v in (
            ("ANY_NAN", ANS_ANY_NAN), ("HOST", ANS_HOST), ("REF", ANS_REF),
            *zip(("PZERO", "NZERO", "PINF", "NINF"), answers[:4]))),
        f"#define NAN_ANY_QUIET {int(answers.nan_any_quiet)}",
        f"#define LOCAL {LOCAL}u",
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable",
        _constants(),
        f"#define REF {ref}",
        f"#define C_PASS {_hexf(c_pass)}",
        f"#define REL_LO {_hexf(1 - 4 * REL)}",
        f"#define REL_HI {_hexf(1 + 4 * REL)}",
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
    body = resources.files("fuzzfarm.oracle").joinpath("device_screen.cl").read_text()
    return "\n".join(defines) + "\n" + body


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
    return DeviceScreen(runner, name, bound, chunk, aggregate=aggregates(name, claims)), ""


class DeviceScreen:
    """The screen kernel of built-in ``name`` at ``bound`` ULPs built on ``runner`` (a
    device.runner.DeviceRunner) for chunks of up to ``chunk`` inputs.  Built without the
    sweep's build options (the screen's arithmetic must be IEEE's).  Raises
    device.runner.KernelBuildError if the device cannot build it (no cl_khr_fp64, a
    compiler fault): the caller screens on the host instead."""

    def __init__(self, runner, name: str, bound: float, chunk: int,
                 aggregate: bool = False):
        from fuzzfarm.device import commands
        self.runner, self.name, self.bound = runner, name, bound
        self.chunk = int(chunk)
        self.aggregate = aggregate and name in EXACT_RULES
        source = screen_source(name, bound, self.aggregate)
        program = runner.build(source, f"device screen of {name}", options="")
        # Oclgrind builds sinpi's, then cannot make its kernel (llvm.fshl.i32)
        made = commands.kernels(runner, program, ["fuzzfarm_screen"] + [
            f"fuzzfarm_{k}" for k in ("top", "mark_count", "mark_scan", "mark_write",
                                      "reference", "screen_pairs")],
            f"the device screen of {name}", source)
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
                xbuf=None, blocking: bool = True, into=None, zbuf=None):
        """Screen the results in device buffer ``ybuf`` (uint32 patterns) of inputs
        ``start .. start+count-1`` of a sweep, or with ``xbuf``, of the inputs in that
        device buffer (uint32 patterns, a ``run`` unit's; ``zbuf``: the second argument's,
        for a built-in of two, ``TWO_ARGS``), into ``out`` (host arrays,
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
                             *self.agg_c, ybuf if zbuf is None else zbuf)
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

    def landing(self, count: int) -> "Landing":
        """Host memory (pinned where the driver allows it) for the answer and the gathered
        inputs of one drawn unit of ``count`` <= chunk inputs (``enqueue_marked``): an
        idle one of this screen's, or a new one.  Give it back with ``Landing.release``."""
        if count > self.chunk:
            raise ValueError(f"device screen: {count} inputs in a screen built for "
                             f"{self.chunk}")
        idle = _idle_landings(self)
        land = idle.pop() if idle else Landing(self)
        land.screen = self
        land.use(count)
        return land

    def enqueue_marked(self, xbuf, ybuf, count: int, land: "Landing", wait_for=None):
        """After ``enqueue`` of a drawn unit (``xbuf``, ``ybuf``: its device buffers of
        uint32 patterns; ``count`` inputs): gather on the device the x and y of every
        input the host's verdict may read (verdict.screened.SparseOutputs.positions), in
        input order, and copy them and the count into ``land`` (``Landing.marked``).
        Returns the event of the last copy (``land`` is complete once it is)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        r = self.runner
        if self._marks is None:
            w = words_for(self.chunk)
            self._marks = {
                **self._mark_kernels, "hdr": buffer(r, 8), "woff": buffer(r, w * 4),
                "gtot": buffer(r, max(1, w // LOCAL) * 4), "gx": buffer(r, self.chunk * 4),
                "gy": buffer(r, self.chunk * 4)}
        m = self._marks
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
        return copy(r, land.y, m["gy"], wait_for=[ev])

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
                     zbits: np.ndarray | None = None) -> ScreenChunk:
        """Screen host results ``ybits`` of drawn inputs ``xbits`` (and second arguments
        ``zbits``, ``TWO_ARGS``) (uint32, (n,) each), as a ``run`` unit is screened after
        its kernel (tests, planted faults); returns a fresh ScreenChunk."""
        from fuzzfarm.device.commands import buffer
        n = int(ybits.size)
        out = ScreenChunk.empty(n)
        x, y, z = (buffer(self.runner, host=np.ascontiguousarray(a, np.uint32), read_only=True)
                   for a in (xbits, ybits, ybits if zbits is None else zbits))
        self.enqueue(y, 0, n, out, xbuf=x, zbuf=z)
        return out

    def references(self, xbits: np.ndarray, zbits: np.ndarray | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
        """The device reference at binary32 patterns ``xbits`` (and second arguments
        ``zbits``, ``TWO_ARGS``) (uint32, (n,)), for tests: (r float64 (n,), kind int32
        (n,): 0 value, 1 exact, 2 beyond the overflow threshold, 3 below half the smallest
        subnormal, 4 a NaN prescribed; device_screen.cl)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        xb = np.ascontiguousarray(xbits, np.uint32)
        n = int(xb.size)
        r, kind = np.empty(n, np.float64), np.empty(n, np.int32)
        if n == 0:
            return r, kind
        dev = self.runner
        xbuf = buffer(dev, host=xb, read_only=True)     # kept alive until the copies end
        zbuf = xbuf if zbits is None else buffer(
            dev, host=np.ascontiguousarray(zbits, np.uint32), read_only=True)
        rbuf, kbuf = buffer(dev, r.nbytes), buffer(dev, kind.nbytes)
        k = self._test_kernels["reference"]
        k.set_args(xbuf, rbuf, kbuf, zbuf)
        ev = launch(dev, k, n)
        copy(dev, r, rbuf, wait_for=[ev], blocking=True)
        copy(dev, kind, kbuf, blocking=True)
        return r, kind

    def screen_pairs(self, xbits: np.ndarray, ybits: np.ndarray,
                     zbits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The screen's verdicts on arbitrary pairs of binary32 patterns (uint32, (n,)
        each; with ``zbits``, the second arguments, ``TWO_ARGS``), for tests: (passed bool
        (n,), err float32 (n,) in ULPs where passed).
        ``self.last_verdicts`` keeps the raw verdicts (0 host, 1 passed, 2 + c a counted
        failure of rule c)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        dev = self.runner
        xb = np.ascontiguousarray(xbits, np.uint32)
        yb = np.ascontiguousarray(ybits, np.uint32)
        n = int(xb.size)
        passed, err = np.zeros(n, np.uint8), np.zeros(n, np.float32)
        self.last_verdicts = passed
        if n == 0:
            return passed.astype(bool), err
        zb = yb if zbits is None else np.ascontiguousarray(zbits, np.uint32)
        bufs = [buffer(dev, host=a, read_only=True) for a in (xb, yb, zb)]
        pbuf, ebuf = buffer(dev, passed.nbytes), buffer(dev, err.nbytes)
        k = self._test_kernels["screen_pairs"]
        k.set_args(bufs[0], bufs[1], pbuf, ebuf, bufs[2])
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
    """Host memory for one drawn unit's screen answer and gathered inputs, pinned where the
    driver allows it (device.runner.DeviceRunner.host_array), sized for its screen's
    chunk and reused (``DeviceScreen.landing``, ``release``).  After ``use(count)``:
    ``answer`` (ScreenChunk views for ``count`` inputs), ``hdr`` uint32 (2,): the marked
    inputs' count and the position of the passed input of the largest error (0xffffffff:
    none), ``x``, ``y`` uint32 (count * GATHER_FRACTION,): the gathered x and y.  The
    answer's ``agg_c0``, ``agg_c1`` are stale where the screen does not aggregate (the
    device does not write them; work.session.DeviceSession.land sends them empty)."""

    def __init__(self, screen: DeviceScreen):
        self.screen = screen
        self.answer_bytes = -(-ScreenChunk.nbytes(screen.chunk) // 8) * 8
        gcap = max(1, int(screen.chunk * GATHER_FRACTION))
        self._buf, self._mem = screen.runner.host_array(self.answer_bytes + 8 + 8 * gcap)

    def use(self, count: int) -> None:
        """Lay the memory out for a unit of ``count`` inputs."""
        a, g = self.answer_bytes, max(1, int(count * GATHER_FRACTION))
        self.count = int(count)
        self.answer = ScreenChunk.views(self._buf, 0, count)
        self.hdr = np.frombuffer(self._buf, np.uint32, 2, a)
        self.x = np.frombuffer(self._buf, np.uint32, g, a + 8)
        self.y = np.frombuffer(self._buf, np.uint32, g, a + 8 + 4 * g)

    def marked(self) -> tuple[int, int, np.ndarray | None, np.ndarray | None]:
        """(marked inputs, top position or -1, their x, their y) once the copies are done;
        x and y are None where the marked inputs did not fit (then read every row).  The
        arrays are views of this landing: copy them before ``release``."""
        total, top = int(self.hdr[0]), int(self.hdr[1])
        top = -1 if top == 0xFFFFFFFF else top
        if total > self.x.size:
            return total, top, None, None
        return total, top, self.x[:total], self.y[:total]

    def release(self) -> None:
        """Give the memory back for the next unit of any screen of the runner and chunk (at
        most 2 are kept: a device actor has at most 2 units on the device; a landing per
        screen had cost 12 ms each of some 150 targets' first units on NVIDIA's H100)."""
        idle = _idle_landings(self.screen)
        if len(idle) < 2:
            idle.append(self)


#: Idle Landings by runner and chunk (``DeviceScreen.landing``, ``Landing.release``).
_LANDINGS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _idle_landings(screen: DeviceScreen) -> list:
    """The idle Landings that fit ``screen`` (its runner's, for its chunk)."""
    return _LANDINGS.setdefault(screen.runner, {}).setdefault(screen.chunk, [])
