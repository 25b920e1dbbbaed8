"""Which built-ins the device screen judges, and how (issue 17, issue 28): the registry of
device references (``DEVICE_REFERENCES``: built-in -> its reference function in
device_screen.cl; ``BINARY64_REFERENCES``: those of binary64 results, device_screen64.cl)
and the sets that say how each is judged -- bit for bit
(``BIT_EXACT``), at 0.5 ULP from a value rounded once (``ROUNDED_ONCE``), with two or
three arguments (``TWO_ARGS``, ``THREE_ARGS``; an int second one, ``INT_SECOND``), with a
second output (``SECOND_OUTPUT``), mad's two results (``UNFUSED``) -- the catalogue's
rules each reference handles (``HANDLED_RULES``, ``EXACT_RULES``), the bound a built-in
is screened at under a build's claims (``plain_bound``: None where the screen must not be
used) and what the screen passes at zero, infinite and NaN arguments
(``special_answers``).  Pure: no device; the kernel and its driver are
fuzzfarm.oracle.device_screen, the argument docs/device_screen.md."""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from edgecases import bounds, catalogue

__all__ = ["DEVICE_REFERENCES", "BINARY64_REFERENCES", "REL64", "REL64_WIDE", "WIDE64", "rel64",
           "BIT_EXACT", "RULES_ONLY", "ABSOLUTE", "INT_RESULT", "TWO_ARGS", "INT_SECOND", "THREE_ARGS", "SEVERAL_ARGS", "REFERENCE_UNDEFINED",
           "UNFUSED", "SECOND_OUTPUT",
           "ROUNDED_ONCE", "reference_name", "undefined_beyond", "HANDLED_RULES",
           "EXACT_RULES", "ERFC_K", "aggregates", "plain_bound", "special_answers",
           "SpecialAnswers", "NATIVE_ULPS", "ANS_ANY_NAN", "ANS_HOST", "ANS_REF", "answer_markers",
           "ScreenColumns", "screen_columns", "SECOND_REFERENCE", "BINARY64_SECOND"]

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
    "tgamma": "ref_tgamma",
    "degrees": "ref_degrees", "radians": "ref_radians",
    # two arguments (TWO_ARGS)
    "add": "ref_add", "sub": "ref_sub", "mul": "ref_mul", "divide": "ref_divide",
    "fdim": "ref_fdim", "hypot": "ref_hypot", "atan2": "ref_atan2", "atan2pi": "ref_atan2pi",
    "ldexp": "ref_ldexp", "pown": "ref_pown", "rootn": "ref_rootn", "pow": "ref_pow",
    "powr": "ref_powr",
    # exact: judged bit for bit (BIT_EXACT)
    "fabs": "ref_fabs", "floor": "ref_floor", "ceil": "ref_ceil", "trunc": "ref_trunc",
    "rint": "ref_rint", "round": "ref_round", "logb": "ref_logb", "ilogb": "ref_ilogb",
    "sign": "ref_sign",
    "fmin": "ref_fmin", "fmax": "ref_fmax", "min": "ref_fmin", "max": "ref_fmax",
    "maxmag": "ref_maxmag", "minmag": "ref_minmag", "copysign": "ref_copysign",
    "nextafter": "ref_nextafter", "step": "ref_step", "fmod": "ref_fmod",
    "remainder": "ref_remainder",
    # a second output (SECOND_OUTPUT), two rounded outputs (SECOND_REFERENCE)
    "sincos": "ref_sin",
    "frexp": "ref_frexp", "modf": "ref_modf", "fract": "ref_fract", "remquo": "ref_remquo",
    # three arguments (THREE_ARGS)
    "fma": "ref_fma", "clamp": "ref_clamp", "mad": "ref_fma",
    # absolute tolerances in binary32 (ABSOLUTE); in binary16 implementation-defined
    # (RULES_ONLY: screen_source.BINARY16_OWN's ref_unjudged3)
    "mix": "ref_mix", "smoothstep": "ref_smoothstep",
    # judged only where a rule prescribes the result (RULES_ONLY; lgamma_r's signp:
    # SECOND_OUTPUT), nan's a quiet NaN whatever its uint argument
    "lgamma": "ref_lgamma", "lgamma_r": "ref_lgamma", "nan": "ref_nan",
}
#: built-in -> its reference of a binary64 pattern in device_screen64.cl (binary64
#: results): double-double references within ``REL64`` of f (the trigonometric,
#: hyperbolic and inverse ones, roots, exponentials, logarithms, +, -, *, /, fdim, hypot,
#: atan2, fma and mad: the written budgets there) and the exact built-ins, bit for bit by
#: integer arithmetic.  The sets below say how each is judged, as for binary32
#: (BIT_EXACT, TWO_ARGS, THREE_ARGS, UNFUSED, INT_SECOND, INT_RESULT, SECOND_OUTPUT); a
#: correctly rounded binary64 built-in (sqrt, add, sub, mul, divide, fdim, fma, ldexp) is
#: screened at 0.5 ULP; the powers', erf's and erfc's references are within REL64_WIDE
#: (``rel64``).
BINARY64_REFERENCES = {
    "sin": "ref64_sin", "cos": "ref64_cos", "sqrt": "ref64_sqrt",
    "exp": "ref64_exp", "exp2": "ref64_exp2", "exp10": "ref64_exp10", "expm1": "ref64_expm1",
    "log": "ref64_log", "log2": "ref64_log2", "log10": "ref64_log10", "log1p": "ref64_log1p",
    "fabs": "ref64_fabs", "floor": "ref64_floor", "ceil": "ref64_ceil",
    "trunc": "ref64_trunc", "rint": "ref64_rint", "round": "ref64_round",
    "logb": "ref64_logb", "sign": "ref64_sign",
    "fmin": "ref64_fmin", "fmax": "ref64_fmax", "min": "ref64_fmin", "max": "ref64_fmax",
    "maxmag": "ref64_maxmag", "minmag": "ref64_minmag", "copysign": "ref64_copysign",
    "nextafter": "ref64_nextafter", "step": "ref64_step",
    # the rest of the trigonometric, hyperbolic and root built-ins and
    # the two-argument ones whose references are IEEE operations in double-double
    "tan": "ref64_tan", "sinpi": "ref64_sinpi", "cospi": "ref64_cospi",
    "tanpi": "ref64_tanpi", "rsqrt": "ref64_rsqrt", "cbrt": "ref64_cbrt",
    "sinh": "ref64_sinh", "cosh": "ref64_cosh", "tanh": "ref64_tanh",
    "asinh": "ref64_asinh", "acosh": "ref64_acosh", "atanh": "ref64_atanh",
    "atan": "ref64_atan", "asin": "ref64_asin", "acos": "ref64_acos",
    "atanpi": "ref64_atanpi", "asinpi": "ref64_asinpi", "acospi": "ref64_acospi",
    "degrees": "ref64_degrees", "radians": "ref64_radians",
    "add": "ref64_add", "sub": "ref64_sub", "mul": "ref64_mul", "divide": "ref64_divide",
    "recip": "ref64_recip",
    "fdim": "ref64_fdim", "hypot": "ref64_hypot", "atan2": "ref64_atan2",
    "atan2pi": "ref64_atan2pi",
    "fmod": "ref64_fmod", "remainder": "ref64_remainder",
    # three arguments
    "fma": "ref64_fma", "mad": "ref64_fma", "clamp": "ref64_clamp",
    # an int argument, an int result, a second output (their int
    # columns read as such: ``int_columns``)
    "ldexp": "ref64_ldexp", "ilogb": "ref64_ilogb", "frexp": "ref64_frexp",
    "modf": "ref64_modf", "fract": "ref64_fract", "remquo": "ref64_remquo",
    # the powers: e**(y ln |x|) in double-double, within REL64_WIDE; erf by Kummer's
    # series, erfc by Laplace's continued fraction
    "pow": "ref64_pow", "powr": "ref64_powr", "pown": "ref64_pown", "rootn": "ref64_rootn",
    "erf": "ref64_erf", "erfc": "ref64_erfc", "tgamma": "ref64_tgamma",
    "sincos": "ref64_sin",
    # judged only by their rules (RULES_ONLY): mix and smoothstep are implementation-
    # defined in binary64
    "lgamma": "ref64_lgamma", "lgamma_r": "ref64_lgamma", "nan": "ref64_nan",
    "mix": "ref64_unjudged3", "smoothstep": "ref64_unjudged3",
}
#: The relative error every binary64 reference's K_VALUE is within (device_screen64.cl's
#: budgets: below 2**-94 for sin and cos, 2**-93 for exp10, tan and tanpi, 2**-97 for
#: the other exponentials and logarithms, 2**-98 for sqrt, 2**-95 for the hyperbolic and
#: inverse hyperbolic ones, 2**-96 for the inverse trigonometric ones).
REL64 = 2.0 ** -90
#: ... but the powers' (pow, powr, pown, rootn: e**t of t = y ln |x| within 2**-87.3
#: absolute), erf's and erfc's (series and continued fraction: 2**-84.2 at worst) and
#: tgamma's (Stirling's series and a product: 2**-86, device_screen64.cl): within REL64_WIDE, a margin of 2**-30 ULP at their 16.
REL64_WIDE = 2.0 ** -84
#: the built-ins whose binary64 references are within REL64_WIDE
WIDE64 = frozenset({"pow", "powr", "pown", "rootn", "erf", "erfc", "tgamma"})


def rel64(name: str) -> float:
    """The relative error (a fraction of |f|) that built-in ``name``'s binary64 reference
    (a K_VALUE) is within: REL64, or REL64_WIDE for those of ``WIDE64``.  Pure."""
    return REL64_WIDE if reference_name(name) in WIDE64 else REL64
#: The exact built-ins among them: their result must be the reference's bit for bit (a
#: bound of 0 ULP or "correctly rounded" in every table), and no ULP error is measured for
#: them (the host measures none either).
BIT_EXACT = frozenset({"fabs", "floor", "ceil", "trunc", "rint", "round", "logb", "ilogb",
                       "sign", "fmin", "fmax", "min", "max", "maxmag", "minmag", "copysign",
                       "nextafter", "step", "fmod", "remainder", "clamp", "frexp", "modf",
                       "fract", "remquo"})
#: The references of two float arguments (the screen kernel's TWO_ARGS): every input
#: with an argument that is a zero, an infinity or a NaN is the host's.
TWO_ARGS = frozenset({"add", "sub", "mul", "divide", "fdim", "hypot", "atan2", "atan2pi",
                      "fmin", "fmax", "min", "max", "maxmag", "minmag", "copysign",
                      "nextafter", "step", "ldexp", "fmod", "remainder", "pown", "rootn",
                      "pow", "powr", "remquo"})
#: The references of three float arguments (the kernel's THREE_ARGS, with TWO_ARGS): as
#: for two, every input with an argument that is a zero, an infinity or a NaN is the
#: host's.
THREE_ARGS = frozenset({"fma", "clamp", "mad", "mix", "smoothstep"})
#: mad: fma's reference, and its unfused value too (the kernel's MAD): a result passes
#: where it is provably either correctly rounded fma or the correctly rounded add of the
#: correctly rounded product (OpenCL's table), judged like the exact built-ins (no ULP
#: error measured, as the checker measures none where a result is one of the choices).
UNFUSED = frozenset({"mad"})
#: The built-ins of a second output (frexp's exp, modf's and fract's iptr, remquo's quo)
#: and the kernel function that judges it bit for bit (remquo's: its sign and magnitude
#: modulo 8, oracle.entries.Congruent); their first output is judged as the exact
#: built-ins' (BIT_EXACT), and an input whose argument is a zero, an infinity or a NaN is
#: the host's (``special_answers``).
SECOND_OUTPUT = {"frexp": "out2_frexp", "modf": "out2_modf", "fract": "out2_fract",
                 "remquo": "out2_remquo", "lgamma_r": "out2_lgamma_r"}
#: The built-ins of two rounded outputs and the reference of the second (the kernel's REF2,
#: of the first argument; binary32's, and ``BINARY64_SECOND``'s in binary64): both outputs
#: pass within the bound, the larger error binned, as the host's screen does
#: (verdict.screening: sincos's outputs screened as sin's and cos's).
SECOND_REFERENCE = {"sincos": "ref_cos"}
BINARY64_SECOND = {"sincos": "ref64_cos"}
#: The references of several arguments.
SEVERAL_ARGS = TWO_ARGS | THREE_ARGS
#: Undefined results that a reference of several arguments decides itself (the kernel's
#: K_ANY: any result passes, no error is measured, as the checker judges none): the
#: catalogue's ``undefined`` clauses, per built-in, that hold on finite nonzero arguments.
REFERENCE_UNDEFINED = {"clamp": ((("minval", "gt:maxval"),),),
                       # every result of finite nonzero arguments passes (RULES_ONLY)
                       **{f: tuple(catalogue.function(f).undefined)
                          for f in ("mix", "smoothstep")}}
#: The references of built-ins judged by nothing but the catalogue's rules: where the
#: accuracy is implementation-defined (OpenCL SPIR-V Env Table 1; lgamma in every
#: precision, mix and smoothstep in binary16 and binary64) they decide the results a rule
#: prescribes (K_EXACT) and pass every other one (K_ANY), with no error measured -- the
#: checker judges and measures none there; nan's every result is a rule's (F9.nan.1: a
#: quiet NaN, K_NAN).  Used only where the bound is implementation-defined or a rule
#: holds everywhere (``plain_bound``).
RULES_ONLY = frozenset({"lgamma", "lgamma_r", "mix", "smoothstep", "nan"})
#: The references of built-ins judged at an absolute tolerance in binary32 (OpenCL SPIR-V Env
#: Table 1: mix 1e-3, smoothstep 1e-5; ``plain_bound`` returns the tolerance, not ULPs):
#: each has its own absolute error bound (device_screen.cl's err_*), and a result passes
#: within the tolerance or where it is provably the nearest binary32 number.
ABSOLUTE = frozenset({"mix", "smoothstep"})
#: ... of the two-argument ones, those whose second argument is an int (the kernel's Z_INT: an input with
#: k = 0 is the host's, as one with a zero, infinite or NaN float argument).
INT_SECOND = frozenset({"ldexp", "pown", "rootn"})
#: Correctly rounded built-ins whose reference is the exact value rounded once in binary64
#: (x + y, x - y, x * y exact, x - y of fdim, x / y; x 2**k exact): screened at a bound of
#: 0.5 ULP, which a result passes only where it is the nearest binary32 number
#: (docs/device_screen.md).
ROUNDED_ONCE = frozenset({"add", "sub", "mul", "fdim", "divide", "ldexp", "fma"})
#: ... those whose result is an int (compared as an int32 pattern).
INT_RESULT = frozenset({"ilogb"})


class ScreenColumns(NamedTuple):
    """The dtype of each column a screen reads (x, the second and third arguments z and w,
    the result y, the second output y2): the result's pattern (uint32 for binary32, uint64
    for binary64), or uint32 for a column of ints -- an int argument (``INT_SECOND``), an
    int result (``INT_RESULT``), an int second output (frexp's exponent, remquo's quo) --
    whatever the precision."""

    x: np.dtype
    z: np.dtype
    w: np.dtype
    y: np.dtype
    y2: np.dtype

    @property
    def ints(self) -> bool:
        """Whether any column is narrower than the patterns (binary64's int columns)."""
        return len({d.itemsize for d in self}) > 1


def screen_columns(name: str, precision: str) -> ScreenColumns:
    """The ``ScreenColumns`` of the screen of built-in ``name`` in ``precision`` (binary32
    or binary64).  Pure; raises KeyError for a built-in outside the catalogue."""
    from fuzzfarm.formats import format_named
    pattern = np.dtype(format_named(precision).uint)
    i32 = np.dtype(np.uint32)
    fn = catalogue.function(name)
    ref = reference_name(name)
    outs = [o.kind for o in fn.outputs]
    return ScreenColumns(
        pattern, i32 if ref in INT_SECOND else pattern, pattern,
        i32 if outs[0] == "int" else pattern,
        i32 if outs[1:] == ["int"] else pattern)


def reference_name(name: str) -> str | None:
    """The key of DEVICE_REFERENCES that judges built-in ``name``: its own, or for a
    half_* built-in that of the function it approximates (half_sin -> sin, half_recip ->
    recip: oracle.base_name; OpenCL C 3.0 §6.15.2.3, "half_<funcname> functions ... must
    conform to the same edge case requirements"), for a native_* one the function whose
    error it is measured against (native_powr -> powr: ``NATIVE_ULPS``), or None where
    there is none.  Pure."""
    from fuzzfarm.oracle import base_name
    if name in DEVICE_REFERENCES:
        return name
    if not name.startswith(("half_", "native_")):
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
    "tgamma": {"F9.tgamma.2"},      # a NaN at a negative integer (K_NAN)
    # +0 at 1 and 2, +inf at a negative integer (K_EXACT)
    "lgamma": {"F9.lgamma.1", "F9.lgamma.2", "F9.lgamma.3"},
    "lgamma_r": {"F9.lgamma_r.1", "F9.lgamma_r.2", "F9.lgamma_r.3",
                 "CL.lgamma_r.pole_sign"},          # signp 0 at a pole: out2_lgamma_r
    "nan": {"F9.nan.1"},            # a quiet NaN (K_NAN) at every argument
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
    # pow(1, y) = 1 exactly (K_EXACT); pow(x < 0, non-integer y), powr(x < 0, y) and
    # rootn(x < 0, even n) are NaNs (K_NAN); powr(1, y) = 1 (K_EXACT)
    "pow": {"F9.pow.6a", "F9.pow.8"},
    "powr": {"CL.powr.one_base_finite_exponent", "CL.powr.negative_base"},
    "rootn": {"CL.rootn.negative_base_even"},
    # modf of a finite nonzero x: x - trunc(x) with x's sign (+-0 for an integer), trunc(x)
    "modf": {"F9.modf.1", "CL.modf.as_though_trunc"},
}
#: The degree of erfc's Taylor polynomials on [1/2, 2) (truncation below 2**-60 relative
#: for |h| <= 1/16: docs/device_screen.md).
ERFC_K = 13

#: The "bound" a native_* built-in's screen applies: its accuracy is implementation-defined
#: (OpenCL C 3.0 §6.15.2), so the checker judges none of its results and only measures
#: the errors of a sample (``verdict.checker``'s NATIVE_SAMPLE).  On the device every
#: result within NATIVE_ULPS of the approximated function's reference (a factor of about
#: two) is passed and its error binned -- every input measured, not a sample --, and the
#: rest (other signs, zeros, infinities, NaNs, errors beyond it) are candidates, which the
#: checker measures as before: no verdict can differ, as there is none to give.
NATIVE_ULPS = 2.0 ** 22


def plain_bound(name: str, precision: str, claims) -> float | None:
    """The ULP bound the device screen applies to built-in ``name`` in ``precision`` under
    ``claims`` (verdict.claims.Claims) -- for an ``ABSOLUTE`` one in binary32, its
    absolute tolerance (a number, not ULPs) --, or None where the device screen must not be used
    (module docstring: no reference (binary64: none in BINARY64_REFERENCES; binary16:
    binary32's), a bound that is not one number of ULPs, a rounding mode other than round
    to nearest, a relaxed or finite-math build, or a rule of the catalogue the reference
    does not handle)."""
    ref = reference_name(name)
    if ref is None or precision not in ("binary16", "binary32", "binary64"):
        return None
    if precision == "binary64" and ref not in BINARY64_REFERENCES:
        return None
    if precision == "binary16" and name.startswith("half_"):
        return None
    if (len(catalogue.function(name).outputs) > 1 and ref not in SECOND_OUTPUT
            and ref not in SECOND_REFERENCE):
        return None
    if (tuple(claims.rounding) != ("rte",) or claims.relaxed or claims.finite_math
            or claims.precision != precision):
        return None
    if precision not in catalogue.function(name).precisions:
        return None
    if catalogue.function(name).family == "native":
        # nothing to judge (OpenCL C 3.0 §6.15.2: accuracy and edge cases implementation-
        # defined): the screen only measures, NATIVE_ULPS
        return NATIVE_ULPS if not catalogue.rules_for(name) else None
    b = bounds.bound(name, precision, claims.profile, claims.relaxed)
    everywhere = any(not rule.when for rule in catalogue.rules_for(name))
    # (binary32's reference of an ABSOLUTE built-in is its own, not the rules-only one)
    if ref in RULES_ONLY and (b.implementation_defined or everywhere) and not (
            ref in ABSOLUTE and precision == "binary32"):
        if b.pieces[1:]:            # no result measured: K_ANY or a rule's (K_EXACT, K_NAN)
            return None
        ulps = 0.0
    elif ref in ABSOLUTE:           # the tolerance, where every piece has the same one
        amounts = {(p.value.kind, p.value.amount) for p in b.pieces}
        if precision != "binary32" or len(amounts) != 1 or \
                next(iter(amounts))[0] != "absolute":
            return None
        ulps = float(next(iter(amounts))[1])
    elif ref in RULES_ONLY:
        return None
    elif ref in BIT_EXACT:            # exact in every table, or not for the device screen
        if not (b.correctly_rounded or b.plain_ulps == 0) or b.pieces[1:]:
            return None
        ulps = 0.0
    elif (b.correctly_rounded and not b.pieces[1:]
          and (ref in ROUNDED_ONCE or precision != "binary32")):
        ulps = 0.5              # binary64: every reference is within 2**-84 (rel64);
                                # binary16: binary32's, within 2**-45, far below its ULP
    elif ref in UNFUSED:            # either result correctly rounded
        if not b.fma_or_mul_add:
            return None
        ulps = 0.5
    elif b.implementation_defined or b.correctly_rounded or b.plain_ulps is None:
        return None
    elif b.plain_ulps < 0.5:
        return None
    else:
        ulps = float(b.plain_ulps)
    ruled = _RULED_CLASSES_2 if ref in SEVERAL_ARGS else _RULED_CLASSES
    undefined = catalogue.function(name).undefined
    if ref in SEVERAL_ARGS:         # undefined where an argument is special (the host's) or
        own = REFERENCE_UNDEFINED.get(ref, ())      # where the reference says so (K_ANY)
        if not all(any(pred in ruled for _arg, pred in clause) or clause in own
                   for clause in undefined):
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


def answer_markers(bits: int) -> tuple[int, int, int]:
    """The ``SpecialAnswers`` markers for results of ``bits`` (16, 32 or 64) bits: a NaN is
    prescribed (a quiet one passes); the host judges; the reference judges (a zero no rule
    covers, e.g. acos(+-0) = pi/2).  The format's three largest patterns: NaNs, which no
    rule prescribes bit for bit (a prescribed NaN is the first marker)."""
    top = (1 << bits) - 1
    return top, top - 1, top - 2


#: binary32's markers (``answer_markers``): 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD
ANS_ANY_NAN, ANS_HOST, ANS_REF = answer_markers(32)


class SpecialAnswers(NamedTuple):
    """What the device screen passes for x a zero, an infinity or a NaN: per x in +0, -0,
    +inf, -inf the result pattern a rule of the catalogue prescribes (uint16, uint32, uint64
    for binary16, binary32, binary64; an int result's 32 bits), or one of the format's markers (``answer_markers``): ANY_NAN
    where it prescribes a NaN, HOST where the host must judge, REF at a zero that no rule
    covers (the reference judges it, as a finite x: every reference is valid at +-0, and
    tests/test_device_screen.py checks the answers through the checker); and
    whether a NaN x may give any quiet NaN (no rule of the built-in holds on it: F.9's NaN
    propagation and OpenCL's quietness alone apply, which a quiet NaN meets)."""

    pos_zero: int
    neg_zero: int
    pos_inf: int
    neg_inf: int
    nan_any_quiet: bool


@lru_cache(maxsize=None)
def special_answers(name: str, precision: str = "binary32") -> SpecialAnswers:
    """The catalogue's prescribed results for built-in ``name`` at x = +0, -0, +inf, -inf
    and NaN of ``precision`` (binary16, binary32 or binary64), as the device screen applies
    them (all the host's for a built-in of several arguments, ``SEVERAL_ARGS``)
    (``SpecialAnswers``; OpenCL C 7.5 and C99 F.9's rules in edgecases/data).  An x where
    no rule holds, where rules disagree, or where the one that holds is a note, a set of
    results other than a NaN, or has a flush-to-zero alternative, is the host's (HOST),
    except a zero where no rule holds (REF).  Pure; raises KeyError for a built-in
    outside the catalogue or a precision other than those three."""
    from edgecases.predicates import evaluate
    from fuzzfarm.formats import format_named
    fmt = format_named(precision)
    if fmt.bits not in (16, 32, 64):
        raise KeyError(f"no device screen answers in {precision}")
    any_nan, host, ref = answer_markers(fmt.bits)
    fn = catalogue.function(name)
    if reference_name(name) in SEVERAL_ARGS or len(fn.outputs) > 1:
        # every special input is the host's (of several outputs: the kernel's OUT2)
        return SpecialAnswers(host, host, host, host, nan_any_quiet=False)
    (arg,) = fn.inputs
    float_ret = fn.outputs[0].kind == "float"
    sign, inf = fmt.sign_mask, fmt.pos_inf
    xs = np.array([0, sign, inf, sign | inf, fmt.default_qnan], fmt.uint)
    mask = (1 << (fmt.bits if float_ret else 32)) - 1     # an int result: its 32 bits
    answers: list[set] = [set() for _ in xs]
    for rule in catalogue.rules_for(name):
        holds = np.ones(xs.size, bool)
        for a, word in rule.when:
            holds &= evaluate(word, xs, arg.kind, fmt)
        for i in np.flatnonzero(holds):
            one = {arg.name: xs[i:i + 1]}
            spec = rule.results.get("ret")
            if (rule.severity != "fail" or rule.ftz_results or set(rule.results) != {"ret"}
                    or spec is None):
                answers[i].add(host)
            elif spec.kind == "nan":
                answers[i].add(any_nan)
            else:
                try:
                    bits = spec.expected_bits(one, fmt)
                except KeyError:        # a device constant (ilogb's FP_ILOGB0)
                    answers[i].add(host)
                    continue
                nan = bits is None or (float_ret and (int(bits[0]) & fmt.abs_mask) > inf)
                answers[i].add(host if nan else int(bits[0]) & mask)
    words = [a.pop() if len(a) == 1 else ref if not a and i < 2 else host
             for i, a in enumerate(answers[:4])]
    return SpecialAnswers(*words, nan_any_quiet=not answers[4])


def aggregates(name: str, claims) -> bool:
    """Whether the device screen counts the failures of ``name``'s prescribed zeros and
    infinities itself (a zero or infinity other than the prescribed one: the checker
    reports exactly one failure of that rule for each, where zeros' signs and infinite
    results are judged).  The host then judges a sample of them (``aggregated_sample``)."""
    return (name in EXACT_RULES and claims.signed_zeros and claims.inf_nan
            and claims.judges_specials and not claims.finite_math and not claims.relaxed)
