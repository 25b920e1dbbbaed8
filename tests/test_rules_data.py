"""The prescribed-result tables as data: edgecases/data/rules_c99_f9.toml, rules_opencl.toml,
rules_common.toml and general.toml, and the result words of edgecases/results.py.

Fast, no device.  Over a pool of special values in binary16, binary32 and binary64 (and
boundary ints), every rule is exercised, no rule prescribes a NaN's bits, only the listed
rules override the generic NaN rule, and the rules of one function never contradict each
other on an input where several apply.  Through fuzzfarm.verdict.checker.check_batch, in all three
formats, every rule flags a wrong result and passes every result it allows.  The digest of
C99 Annex F.9 (docs/c99_annex_f9.md) is covered row by row: each of its B, P and D
rows for a function of functions.toml is a rule (or split into <id>a, <id>b, ...) or is in
SKIPPED with the reason.  Test ids are the rule ids (docs/design.md, decision 13).
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

import numpy as np
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases import catalogue
from edgecases.predicates import evaluate
from edgecases.results import InvalidResult, parse_result
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, FloatFormat, is_nan, is_qnan
from fuzzfarm.device.kernels import buffer_dtype

# Predicates view patterns as float64; converting a signaling NaN raises numpy's "invalid
# value encountered in cast" (harmless: NaNs are judged from the bits).
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")

FMT = BINARY32
FORMATS = {f.name: f for f in (BINARY16, BINARY32, BINARY64)}
CONSTS = {"FP_ILOGB0": -2**31, "FP_ILOGBNAN": 2**31 - 1}
from spec_texts import DIGEST  # noqa: E402
RULE_FILES = ("rules_c99_f9.toml", "rules_opencl.toml", "rules_common.toml")
#: The headings of the SPIR-V Environment's edge-case section a CL rule may cite.
SPIRV_HEADINGS = ("Additional Requirements Beyond ISO/IEC 9899:TC2",
                  "Changes to ISO/IEC 9899: TC2 Behavior")

#: Digest rows (kinds B, P, D) that are deliberately not rules, with the reason.  The same
#: list heads rules_c99_f9.toml as "# skip <id>: <reason>" comments (checked below).
SKIPPED = {
    "F9.frexp.4": "raises no floating-point exception; flags only (OpenCL has exceptions disabled)",
    "F9.frexp.D1": "finite nonzero: mantissa in [0.5, 1) and exponent; the reference computes both exactly",
    "F9.ilogb.1": "result outside int range unspecified; only 0, ±∞, NaN reach it and F9.ilogb.D1-D3 fix those",
    "F9.ilogb.D4": "finite nonzero: (int)logb(x); the reference computes it exactly",
    "F9.ldexp.1": "equivalence ldexp ≡ scalbn; its consequences are rows F9.ldexp.D1a-c, the rest is the exact reference",
    "F9.logb.D1": "finite nonzero: the unbiased exponent; the reference computes it exactly",
    "F9.modf.4": "behaves-as-though sample; OpenCL restates it, its consequences are rows CL.modf.* (D11)",
    "F9.hypot.1": "equivalence (symmetry) between calls; enforced through the reference",
    "F9.sqrt.1": "'fully specified by IEC 60559': special values are rows F9.sqrt.D1-D3, the rest F9.sqrt.D4",
    "F9.sqrt.D4": "finite x > 0: correctly rounded; the reference with the correctly-rounded bound",
    "F9.ceil.3": "behaves-as-though rint under FE_UPWARD; the reference (zero sign: F9.ceil.D1)",
    "F9.floor.3": "behaves-as-though rint under FE_DOWNWARD; the reference (zero sign: F9.floor.D1)",
    "F9.rint.1": "nearbyint in the current direction; OpenCL: always RTE, row CL.rint.round_to_nearest_even",
    "F9.round.3": "behaves-as-though sample (ties away from zero); the reference",
    "F9.round.4": "may raise inexact; flags only",
    "F9.trunc.1": "round toward zero whatever the mode; the reference (zero sign: F9.trunc.D1)",
    "F9.fmod.4": "behaves-as-though sample via remainder; exact result computed by the reference",
    "F9.remainder.1": "'fully specified by IEC 60559': special values are rows F9.remainder.D1-D3, the rest D4",
    "F9.remainder.D4": "x - n*y with n nearest x/y; exact result computed by the reference",
    "F9.remquo.D1": "*quo is a relation (sign of x/y, low quotient bits): the reference; CL.remquo.* for NaNs",
    "F9.copysign.1": "'as in the IEC 60559 appendix'; its content is rows F9.copysign.D1a/D1b",
    "F9.nextafter.1": "overflow/inexact flags only; the value is F9.nextafter.D2's",
    "F9.nextafter.2": "underflow/inexact flags only; the value is F9.nextafter.D2's",
    "F9.nextafter.D1": "x == y returns y: a relation between the arguments; the reference",
    "F9.nextafter.D2": "the next representable value after x toward y; the reference (CL.nextafter.* pin ±0)",
    "F9.fdim.0": "'No additional requirements'; no value",
    "F9.fdim.D1": "x > y gives x - y rounded; a relation, the reference",
    "F9.fdim.D2": "x <= y gives +0; a relation between the arguments, the reference",
    "F9.fdim.D3": "a NaN argument gives NaN is G10 itself; restated as CL.fdim.any_nan / CL.fdim.nan_any",
    "F9.fma.1": "x*y + z rounded once: correctly rounded; the reference with the correctly-rounded bound",
}

#: F.9-derived rules with no row in the digest, and why they exist.
EXTRA_F9 = {
    "F9.rsqrt.D1": "rsqrt is not C99: IEC 60559 treatment (G2) of 1/sqrt(x)",
    "F9.rsqrt.D2": "rsqrt is not C99: IEC 60559 treatment (G2) of 1/sqrt(x)",
    "F9.rsqrt.D3": "rsqrt is not C99: IEC 60559 treatment (G2) of 1/sqrt(x)",
    "F9.rsqrt.D4": "rsqrt is not C99: IEC 60559 treatment (G2) of 1/sqrt(x)",
    "F9.fmax.D1a": "fmax of mixed-sign zeros is a zero of either sign (digest §14 D5)",
    "F9.fmax.D1b": "fmax of mixed-sign zeros is a zero of either sign (digest §14 D5)",
    "F9.fmin.D1a": "fmin of mixed-sign zeros is a zero of either sign (digest §14 D5)",
    "F9.fmin.D1b": "fmin of mixed-sign zeros is a zero of either sign (digest §14 D5)",
    "F9.sincos.1": "sincos is not C99: ret is sin (F9.sin.1), cosval is cos (F9.cos.1)",
    "F9.sincos.2": "sincos is not C99: ret is sin (F9.sin.2), cosval is cos (F9.cos.2)",
    "F9.lgamma_r.1": "lgamma_r is not C99: its ret is lgamma's (F9.lgamma.1)",
    "F9.lgamma_r.2": "lgamma_r is not C99: its ret is lgamma's (F9.lgamma.2)",
    "F9.lgamma_r.3": "lgamma_r is not C99: its ret is lgamma's (F9.lgamma.3)",
    "F9.lgamma_r.4": "lgamma_r is not C99: its ret is lgamma's (F9.lgamma.4)",
    "F9.lgamma_r.5": "lgamma_r is not C99: its ret is lgamma's (F9.lgamma.5)",
}

#: The rules that prescribe something other than "a NaN" for an element with a NaN argument,
#: i.e. that override G10 (F.9 ¶11), with the text that allows it.
G10_OVERRIDES = {
    "F9.pow.6b": "pow(+1, y) returns 1 for any y, even a NaN",
    "F9.pow.6c": "pow(+1, y) returns 1 for any y, even a NaN (sNaN: 1 or NaN)",
    "F9.pow.7b": "pow(x, ±0) returns 1 for any x, even a NaN",
    "F9.pow.7c": "pow(x, ±0) returns 1 for any x, even a NaN (sNaN: 1 or NaN)",
    "F9.hypot.3b": "hypot(±∞, y) returns +∞, even if y is a NaN",
    "F9.hypot.3c": "hypot(±∞, y) returns +∞, even if y is a NaN (sNaN: +∞ or NaN)",
    "F9.hypot.D1b": "hypot(±∞, y) with the equivalence hypot(x, y) = hypot(y, x)",
    "F9.hypot.D1c": "hypot(±∞, y) with the equivalence (sNaN: +∞ or NaN)",
    "F9.fmax.1a": "if just one argument is a NaN, fmax returns the other argument",
    "F9.fmax.1b": "if just one argument is a NaN, fmax returns the other argument",
    "F9.fmax.1c": "if just one argument is a NaN, fmax returns the other (sNaN: or NaN)",
    "F9.fmax.1d": "if just one argument is a NaN, fmax returns the other (sNaN: or NaN)",
    "F9.fmin.1a": "fmin is analogous to fmax",
    "F9.fmin.1b": "fmin is analogous to fmax",
    "F9.fmin.1c": "fmin is analogous to fmax (sNaN: or NaN)",
    "F9.fmin.1d": "fmin is analogous to fmax (sNaN: or NaN)",
    "F9.copysign.D1a": "copysign(x, NaN) has the magnitude of x and the sign of the NaN",
    "F9.ilogb.D3": "ilogb(NaN) is FP_ILOGBNAN (an int result)",
    "F9.ilogb.D3b": "FP_ILOGBNAN is INT_MAX or INT_MIN (an int result)",
    "CL.pown.zero_exponent_qnan": "pown(x, 0) is 1 for any x, even zero, NaN or infinity",
    "CL.pown.zero_exponent_snan": "pown(x, 0) is 1 for any x, even NaN (sNaN: 1 or NaN)",
    "CL.frexp.nan": "frexp(NaN, exp) returns the NaN and stores 0 in exp (the int output)",
    "CL.remquo.inf_x": "remquo(±∞, NaN) returns a NaN and 0 in quo (the int output)",
    "CL.remquo.nan_x": "remquo(NaN, y) returns a NaN and 0 in quo (the int output)",
    "CL.remquo.nan_y": "remquo(x, NaN) returns a NaN and 0 in quo (the int output)",
    "CL.sign.nan": "sign returns 0.0 if x is a NaN",
    "CL.sign.nan_positive_zero": "sign returns 0.0 if x is a NaN (the zero's sign, a note)",
    "CL.maxmag.qnan_x": "maxmag is fmax when neither magnitude is larger: fmax(NaN, y) = y",
    "CL.maxmag.qnan_y": "maxmag is fmax when neither magnitude is larger: fmax(x, NaN) = x",
    "CL.maxmag.snan_x": "as CL.maxmag.qnan_x (sNaN: or NaN)",
    "CL.maxmag.snan_y": "as CL.maxmag.qnan_y (sNaN: or NaN)",
    "CL.minmag.qnan_x": "minmag is fmin when neither magnitude is smaller: fmin(NaN, y) = y",
    "CL.minmag.qnan_y": "minmag is fmin when neither magnitude is smaller: fmin(x, NaN) = x",
    "CL.minmag.snan_x": "as CL.minmag.qnan_x (sNaN: or NaN)",
    "CL.minmag.snan_y": "as CL.minmag.qnan_y (sNaN: or NaN)",
}

#: General rules the checker looks up by id (fuzzfarm/verdict/checker.py), with their severity.
GENERAL_IDS = {
    "F9.G10": "fail", "CL.nan.quiet_stays_quiet": "fail", "CL.nan.signaling_stays_nan": "fail",
    "CL.nan.signaling_should_quiet": "note", "CL.nan.one_of_operands": "note",
    "C99.7.12.1.domain": "fail", "ieee.zero_sign": "note", "ftz.prescribed_override": "note",
    "unresolved": "note", "relaxed.edge_case": "note",
}

try:
    RULES = catalogue.rules()
    LOAD_ERROR = None
except catalogue.CatalogueError as exc:  # reported by test_catalogue_loads
    RULES, LOAD_ERROR = (), exc
BY_ID = {r.id: r for r in RULES}
FUNCTIONS = catalogue.functions()

from fuzzfarm.verdict import checker as CHECKER  # noqa: E402
from fuzzfarm.verdict.claims import Claims  # noqa: E402
from strategies import special_inputs  # noqa: E402


# -- the special-value pools -----------------------------------------------------------------

_MAGNITUDES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 0.3, 1e-3, 7.5)


def _rounded_bits(value: float, fmt: FloatFormat) -> int:
    """Pattern of ``value`` rounded to ``fmt`` (0.3 and 1e-3 are not exact)."""
    with np.errstate(over="ignore"):
        return int(np.array(value, dtype=fmt.float).view(fmt.uint))


@lru_cache(maxsize=None)
def float_pool(fmt_name: str) -> np.ndarray:
    """±0, ±true_min, ±largest subnormal, ±min_normal, ±max_finite, ±inf, small integers,
    halves and fractions, the odd/even integer boundary 2**(p-1)+1, 2**p, 2**p+2, and two
    quiet and two signaling NaNs with payloads, as ``fmt`` patterns."""
    f = FORMATS[fmt_name]
    mags = [0, f.true_min, f.min_normal - 1, f.min_normal, f.max_finite, f.pos_inf]
    mags += [_rounded_bits(m, f) for m in _MAGNITUDES]
    p = f.precision
    mags += [_rounded_bits(m, f) for m in (2.0**(p - 1) + 1, 2.0**p, 2.0**p + 2)]
    nans = [f.default_qnan, f.sign_mask | f.default_qnan | 1, f.pos_inf | 1,
            f.sign_mask | f.pos_inf | (f.quiet_bit >> 1) | 0x45]
    vals = sorted({m | s for m in mags for s in (0, f.sign_mask)}) + nans
    return np.array(vals, dtype=f.uint)


INT_POOL = np.array([0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, -2**31, 2**31 - 1], dtype=np.int32)


@lru_cache(maxsize=None)
def _pool(name: str, fmt_name: str = "binary32") -> dict:
    """The cartesian product of the pools over the inputs of built-in ``name``."""
    fn = FUNCTIONS[name]
    pools = [float_pool(fmt_name) if a.kind == "float" else INT_POOL for a in fn.inputs]
    grids = np.meshgrid(*pools, indexing="ij")
    return {a.name: g.ravel() for a, g in zip(fn.inputs, grids)}


def _applies(rule, args: dict, fmt: FloatFormat = FMT) -> np.ndarray:
    fn = FUNCTIONS[rule.function]
    kinds = {a.name: a.kind for a in fn.inputs}
    others = {k: (v, kinds[k]) for k, v in args.items()}
    mask = np.ones(len(next(iter(args.values()))), dtype=bool)
    for arg, word in rule.when:
        mask &= evaluate(word, args[arg], kinds[arg], fmt, others)
    return mask


def _subset(args: dict, mask: np.ndarray) -> dict:
    return {k: v[mask] for k, v in args.items()}


def _show(args: dict, i: int, fmt: FloatFormat = FMT) -> str:
    return ", ".join(f"{k}={fmt.hex(v[i]) if v.dtype == fmt.uint else int(v[i])}"
                     for k, v in args.items())


def _output_kinds(name: str) -> dict:
    return {o.name: o.kind for o in FUNCTIONS[name].outputs}


def _rule_ids(prefix: str = "") -> list[str]:
    return [r.id for r in RULES if r.id.startswith(prefix)]


def _by_format(ids: list[str]) -> list:
    return [pytest.param(i, f, id=f"{i}-{f}") for i in ids for f in FORMATS]


# -- 1. the catalogue ------------------------------------------------------------------------

def test_catalogue_loads():
    assert LOAD_ERROR is None, str(LOAD_ERROR)
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert {r.source_file for r in RULES} == set(RULE_FILES)
    for r in RULES:
        assert r.function in FUNCTIONS, f"{r.id}: function={r.function!r}"


def test_no_rules_for_native_or_operators_or_half():
    """native_* are implementation-defined, operators follow IEEE 754, half_* share the
    full function's rules through edge_cases_of: none has rows of its own."""
    for r in RULES:
        fam = FUNCTIONS[r.function].family
        assert fam in ("math", "common"), f"{r.id} is a rule of {fam} built-in {r.function}"
    assert catalogue.rules_for("native_sin") == ()
    assert [r.id for r in catalogue.rules_for("half_sin")] == [r.id for r in catalogue.rules_for("sin")]


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_id_names_its_source_and_function(rule_id):
    r = BY_ID[rule_id]
    if r.source_file in ("rules_opencl.toml", "rules_common.toml"):
        assert r.kind == "CL"
        assert re.fullmatch(rf"CL\.{re.escape(r.function)}\.[a-z0-9_]+", r.id)
        if r.source_file == "rules_opencl.toml":
            assert any(h in r.section for h in SPIRV_HEADINGS), r.section
        else:
            assert re.match(r"OpenCL C 3\.0 §6\.15\.\d", r.section), r.section
    else:
        assert r.source_file == "rules_c99_f9.toml"
        assert r.kind in ("B", "P", "D")
        assert re.fullmatch(rf"F9\.{re.escape(r.function)}\.D?\d+[a-z]?", r.id)
        assert r.section.startswith("C99 ")
    assert "{plusmn}" not in r.sentence and "{inf}" not in r.sentence
    if r.severity == "note":
        assert r.reading


# -- 2. every rule is exercised by the pool, in every format ----------------------------------

@pytest.mark.parametrize("rule_id,fmt_name", _by_format(_rule_ids()))
def test_rule_matches_some_pool_element(rule_id, fmt_name):
    r = BY_ID[rule_id]
    assert _applies(r, _pool(r.function, fmt_name), FORMATS[fmt_name]).any(), (
        f"{rule_id}: no element of the {fmt_name} pool meets {r.when}")


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_describes_its_expectation(rule_id):
    r = BY_ID[rule_id]
    args = _pool(r.function)
    i = int(np.nonzero(_applies(r, args))[0][0])
    row = {k: v[i] for k, v in args.items()}
    for spec in r.results.values():
        assert spec.describe(row, FMT, CONSTS)


# -- 3. no NaN bits prescribed; the NaN rule overridden only where a text says so ------------

def _exact_parts(spec):
    """The ResultSpecs of ``spec`` (or of its one_of choices) that prescribe exact bits."""
    parts = spec.choices if spec.kind == "one_of" else (spec,)
    return [p for p in parts if not p.is_set]


@pytest.mark.parametrize("rule_id,fmt_name", _by_format(_rule_ids()))
def test_rule_never_prescribes_nan_bits(rule_id, fmt_name):
    r, fmt = BY_ID[rule_id], FORMATS[fmt_name]
    args = _pool(r.function, fmt_name)
    sub = _subset(args, _applies(r, args, fmt))
    kinds = _output_kinds(r.function)
    for out, spec in r.results.items():
        if kinds[out] != "float":
            continue
        for part in _exact_parts(spec):
            bits = part.expected_bits(sub, fmt, CONSTS)
            bad = np.nonzero(is_nan(bits, fmt))[0]
            assert bad.size == 0, (f"{rule_id} {out} = {part.text} prescribes the bits of a NaN "
                                   f"at {_show(sub, int(bad[0]), fmt)}; exclude NaN with 'not_nan'")


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_only_listed_rules_override_the_nan_rule(rule_id):
    r = BY_ID[rule_id]
    fn = FUNCTIONS[r.function]
    args = _pool(r.function)
    mask = _applies(r, args)
    any_nan = np.zeros(mask.shape, dtype=bool)
    for a in fn.inputs:
        if a.kind == "float":
            any_nan |= is_nan(args[a.name], FMT)
    overrides = mask.any() and (mask & any_nan).any() and any(
        spec.kind != "nan" for spec in r.results.values())
    if rule_id in G10_OVERRIDES:
        assert overrides, f"{rule_id} is in G10_OVERRIDES but gives no non-NaN result for a NaN"
    else:
        assert not overrides, (f"{rule_id} prescribes a non-NaN result for a NaN argument; "
                               f"if a text says so, add it to G10_OVERRIDES")


# -- 4. consistency: rules of one function agree wherever several apply ---------------------

def _witnesses(fmt: FloatFormat) -> tuple:
    return (fmt.default_qnan, 0, fmt.sign_mask)  # a NaN, +0, -0


def _agree(a, b, args: dict, fmt: FloatFormat) -> np.ndarray:
    """Per element: can one result satisfy both specs?"""
    ea = a.expected_bits(args, fmt, CONSTS)
    eb = b.expected_bits(args, fmt, CONSTS)
    if ea is not None and eb is not None:
        return ea == eb
    if ea is not None:
        return b.matches(ea, args, fmt, CONSTS)
    if eb is not None:
        return a.matches(eb, args, fmt, CONSTS)
    n = len(next(iter(args.values())))
    ok = np.zeros(n, dtype=bool)
    int_out = any(p.kind == "int" for s in (a, b) for p in (s.choices or (s,)))
    candidates = [] if int_out else [np.full(n, w, dtype=fmt.uint) for w in _witnesses(fmt)]
    for spec in (a, b):
        candidates += [p.expected_bits(args, fmt, CONSTS) for p in _exact_parts(spec)
                       if spec.kind == "one_of"]
    for c in candidates:
        ok |= a.matches(c, args, fmt, CONSTS) & b.matches(c, args, fmt, CONSTS)
    return ok


@pytest.mark.parametrize("name,fmt_name", [pytest.param(n, f, id=f"{n}-{f}")
                                           for n in FUNCTIONS for f in FORMATS])
def test_rules_of_a_function_are_consistent(name, fmt_name):
    fmt = FORMATS[fmt_name]
    rules = catalogue.rules_for(name) if LOAD_ERROR is None else ()
    if not rules:
        return
    args = _pool(name, fmt_name)
    masks = {r.id: _applies(r, args, fmt) for r in rules}
    problems = []
    for i, a in enumerate(rules):
        for b in rules[i + 1:]:
            both = masks[a.id] & masks[b.id]
            if not both.any():
                continue
            sub = _subset(args, both)
            for out in set(a.results) & set(b.results):
                ok = _agree(a.results[out], b.results[out], sub, fmt)
                for j in np.nonzero(~ok)[0][:3]:
                    problems.append(f"{a.id} ({a.results[out].text}) vs {b.id} "
                                    f"({b.results[out].text}) on {out} at {_show(sub, int(j), fmt)}")
    assert not problems, "\n".join(problems)


# -- 5. coverage of the digest of C99 Annex F.9 -----------------------------------------------

_DIGEST_ROW = re.compile(r"^\|\s*(F9\.(\w+)\.(\w+))\s*\|\s*([A-Z])\b")


def _digest_ids() -> dict:
    """id -> kind for the B, P, D rows of the digest whose function is in functions.toml."""
    out = {}
    for line in DIGEST.read_text(encoding="utf-8").splitlines():
        m = _DIGEST_ROW.match(line)
        if m and m.group(4) in "BPD" and m.group(2) in FUNCTIONS:
            out[m.group(1)] = m.group(4)
    assert len(out) > 100, f"parsed only {len(out)} rows from {DIGEST}; has its layout changed?"
    return out


def _in_catalogue(digest_id: str) -> list[str]:
    split = re.compile(re.escape(digest_id) + r"[a-z]")
    return [r.id for r in RULES if r.id == digest_id or split.fullmatch(r.id)]


def test_every_digest_row_is_a_rule_or_skipped_with_reason():
    missing, both = [], []
    for did in _digest_ids():
        found = _in_catalogue(did)
        if not found and did not in SKIPPED:
            missing.append(did)
        if found and did in SKIPPED:
            both.append(did)
    assert not missing, f"digest rows neither in the catalogue nor in SKIPPED: {missing}"
    assert not both, f"digest rows both in the catalogue and in SKIPPED: {both}"


def test_skipped_rows_exist_in_the_digest():
    digest = _digest_ids()
    stale = [k for k in SKIPPED if k not in digest]
    assert not stale, f"SKIPPED names rows the digest does not have: {stale}"
    assert all(reason.strip() for reason in SKIPPED.values())


def test_every_f9_rule_comes_from_a_digest_row():
    digest = _digest_ids()
    strays = [r.id for r in RULES if r.id.startswith("F9.")
              and r.id not in digest and re.sub(r"[a-z]$", "", r.id) not in digest
              and r.id not in EXTRA_F9]
    assert not strays, f"F9 rules with no digest row (typo, or add to EXTRA_F9): {strays}"
    assert set(EXTRA_F9) <= set(BY_ID), f"EXTRA_F9 names no rule: {set(EXTRA_F9) - set(BY_ID)}"


def test_skip_comments_in_the_table_match_skipped():
    text = resources.files("edgecases").joinpath("data", "rules_c99_f9.toml").read_text("utf-8")
    listed = set(re.findall(r"^# skip (F9\.\S+?):", text, flags=re.M))
    assert listed == set(SKIPPED), (f"only in the TOML comments: {sorted(listed - set(SKIPPED))}; "
                                    f"only in SKIPPED: {sorted(set(SKIPPED) - listed)}")


def test_every_function_with_digest_rows_has_rules():
    """Each function of functions.toml that the digest gives rows has at least one rule
    (or all its rows skipped), and the non-C99 built-ins that share C99 rows have them."""
    digest = _digest_ids()
    for fname in {d.split(".")[1] for d in digest}:
        rows = [d for d in digest if d.split(".")[1] == fname]
        if all(d in SKIPPED for d in rows):
            continue
        assert catalogue.rules_for(fname), f"{fname} has digest rows but no rules"
    for fname in ("sincos", "lgamma_r", "sign", "maxmag", "minmag", "remquo", "nan"):
        assert catalogue.rules_for(fname), fname


# -- 6. the cited sentences ---------------------------------------------------------------------

def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@lru_cache(maxsize=None)
def _seed() -> str:
    from spec_texts import read_text
    return _squash(read_text("opencl_spirv_env_numerical_compliance.txt"))


def _from_seed(sentence: str) -> str:
    return _squash(sentence.replace("±", "{plusmn}").replace("∞", "{inf}"))


_OPENCL_IDS = [r.id for r in RULES if r.source_file == "rules_opencl.toml"]


@pytest.mark.parametrize("rule_id", _OPENCL_IDS, ids=_OPENCL_IDS)
def test_opencl_sentence_is_in_the_seed(rule_id):
    assert _from_seed(BY_ID[rule_id].sentence) in _seed()


_COMMON_SENTENCES = {  # OpenCL C 3.0 (not among the seeds): the definitions quoted
    "sign": "Returns 1.0 if x > 0, -0.0 if x = -0.0, +0.0 if x = +0.0, or -1.0 if x < 0. "
            "Returns 0.0 if x is a NaN.",
    "maxmag": "Returns x if |x| > |y|, y if |y| > |x|, otherwise fmax(x, y).",
    "minmag": "Returns x if |x| < |y|, y if |y| < |x|, otherwise fmin(x, y).",
}


def test_common_rules_quote_the_opencl_c_definition():
    rows = [r for r in RULES if r.source_file == "rules_common.toml"]
    assert {r.function for r in rows} == set(_COMMON_SENTENCES)
    for r in rows:
        assert r.sentence == _COMMON_SENTENCES[r.function], r.id


# -- 7. general.toml ------------------------------------------------------------------------------

def _general_rows() -> list[dict]:
    text = resources.files("edgecases").joinpath("data", "general.toml").read_text("utf-8")
    return tomllib.loads(text)["general"]


def test_general_rules_are_well_formed():
    rows = _general_rows()
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids)), "duplicate general rule ids"
    for r in rows:
        assert set(r) <= {"id", "section", "sentence", "severity", "reading"}, r["id"]
        assert r["section"].strip() and r["sentence"].strip(), r["id"]
        assert r.get("severity", "fail") in catalogue.SEVERITIES, r["id"]
        if r.get("severity", "fail") == "note":
            assert r.get("reading", "").strip(), f"{r['id']}: a note needs a reading"
    loaded = catalogue.general_rules()
    assert set(loaded) == set(ids)


@pytest.mark.parametrize("rule_id", list(GENERAL_IDS), ids=list(GENERAL_IDS))
def test_general_rule_the_checker_needs_exists(rule_id):
    g = catalogue.general_rule(rule_id)
    assert g.severity == GENERAL_IDS[rule_id]
    if rule_id.startswith("CL.") and "SPIR-V Env" in g.section:
        assert _from_seed(g.sentence) in _seed(), rule_id


def test_one_of_operands_reading_names_what_is_compared():
    g = catalogue.general_rule("CL.nan.one_of_operands")
    assert "payload" in g.reading and "sign" in g.reading and "quiet bit" in g.reading


# -- 8. spot checks with concrete bits ---------------------------------------------------------

SPOT = [
    # rule id, arguments (float patterns / ints), output, required bits (binary32)
    ("CL.sinpi.positive_integer", {"x": 0x3F800000}, "ret", 0x00000000),  # sinpi(1.0f) = +0
    ("CL.sinpi.negative_integer", {"x": 0xC0000000}, "ret", 0x80000000),  # sinpi(-2.0f) = -0
    ("F9.atan.2", {"x": 0x7F800000}, "ret", 0x3FC90FDB),                  # atan(+inf) = RN(pi/2)
    ("F9.atan.2", {"x": 0xFF800000}, "ret", 0xBFC90FDB),                  # atan(-inf)
    ("F9.atan2.1", {"y": 0x80000000, "x": 0x80000000}, "ret", 0xC0490FDB),  # atan2(-0, -0) = -pi
    ("F9.atan2.10", {"y": 0x7F800000, "x": 0xFF800000}, "ret", 0x4016CBE4),  # 3pi/4
    ("F9.pow.6b", {"x": 0x3F800000, "y": 0x7FC00000}, "ret", 0x3F800000),  # pow(1, qNaN) = 1
    ("F9.pow.7b", {"x": 0xFFC00001, "y": 0x80000000}, "ret", 0x3F800000),  # pow(qNaN, -0) = 1
    ("CL.tanpi.odd_integer", {"x": 0x3F800000}, "ret", 0x80000000),       # tanpi(1.0f) = -0
    ("CL.tanpi.odd_integer", {"x": 0xBF800000}, "ret", 0x00000000),       # tanpi(-1.0f) = +0
    ("CL.tanpi.even_integer", {"x": 0xC0000000}, "ret", 0x80000000),      # tanpi(-2.0f) = -0
    ("F9.pow.1", {"x": 0x80000000, "y": 0xBF800000}, "ret", 0xFF800000),  # pow(-0, -1) = -inf
    ("F9.pow.2", {"x": 0x80000000, "y": 0xFF800000}, "ret", 0x7F800000),  # pow(-0, -inf) = +inf
    ("CL.pown.zero_base_negative_odd", {"x": 0x80000000, "y": -3}, "ret", 0xFF800000),
    ("CL.pown.zero_exponent_qnan", {"x": 0x7FC00000, "y": 0}, "ret", 0x3F800000),
    ("F9.copysign.D1a", {"x": 0x3F800000, "y": 0xFFC00001}, "ret", 0xBF800000),
    ("F9.hypot.2", {"x": 0xC0000000, "y": 0x80000000}, "ret", 0x40000000),
    ("F9.ldexp.D1b", {"x": 0x80000001, "k": 0}, "ret", 0x80000001),
    ("F9.ilogb.D1", {"x": 0x80000000}, "ret", -2**31),
    ("F9.ilogb.D2", {"x": 0xFF800000}, "ret", 2**31 - 1),
    ("F9.ilogb.D3", {"x": 0xFF812345}, "ret", 2**31 - 1),
    ("F9.frexp.1", {"x": 0x80000000}, "exp", 0),
    ("CL.frexp.nan", {"x": 0x7F800001}, "exp", 0),
    ("F9.modf.1", {"x": 0xC0400000}, "ret", 0x80000000),                  # modf(-3.0) returns -0
    ("F9.modf.2", {"x": 0xFF800000}, "iptr", 0xFF800000),
    ("CL.fract.neg_inf", {"x": 0xFF800000}, "ret", 0x80000000),
    ("CL.nextafter.pos_zero_toward_negative", {"x": 0x00000000, "y": 0xBF800000}, "ret", 0x80000001),
    ("CL.rint.between_minus_half_and_zero", {"x": 0xBF000000}, "ret", 0x80000000),  # rint(-0.5)
    ("CL.atan2pi.inf_y_neg_inf_x", {"y": 0xFF800000, "x": 0xFF800000}, "ret", 0xBF400000),
    # new functions
    ("F9.acosh.1", {"x": 0x3F800000}, "ret", 0x00000000),                 # acosh(1) = +0
    ("F9.atanh.2", {"x": 0xBF800000}, "ret", 0xFF800000),                 # atanh(-1) = -inf
    ("F9.erf.2", {"x": 0xFF800000}, "ret", 0xBF800000),                   # erf(-inf) = -1
    ("F9.erfc.1", {"x": 0xFF800000}, "ret", 0x40000000),                  # erfc(-inf) = 2
    ("F9.fabs.1", {"x": 0x80000000}, "ret", 0x00000000),                  # fabs(-0) = +0
    ("F9.lgamma.3", {"x": 0x80000000}, "ret", 0x7F800000),                # lgamma(-0) = +inf
    ("F9.lgamma.3", {"x": 0xC0400000}, "ret", 0x7F800000),                # lgamma(-3) = +inf
    ("F9.lgamma_r.3", {"x": 0xC0000000}, "ret", 0x7F800000),
    ("CL.lgamma_r.pole_sign", {"x": 0xC0000000}, "signp", 0),             # signp 0 at -2
    ("F9.tgamma.1", {"x": 0x80000000}, "ret", 0xFF800000),                # tgamma(-0) = -inf
    ("F9.remquo.1c", {"x": 0xC0400000, "y": 0x7F800000}, "ret", 0xC0400000),
    ("CL.remquo.nan_y", {"x": 0x3F800000, "y": 0x7FC00000}, "quo", 0),
    ("CL.remquo.inf_x", {"x": 0xFF800000, "y": 0x40000000}, "quo", 0),
    ("F9.sincos.1", {"x": 0x80000000}, "ret", 0x80000000),                # sin(-0) = -0
    ("F9.sincos.1", {"x": 0x80000000}, "cosval", 0x3F800000),             # cos(-0) = 1
    ("F9.ilogb.D1b", {"x": 0x00000000}, "ret", -2**31),                   # INT_MIN is allowed
    ("CL.modf.as_though_trunc", {"x": 0xC0600000}, "ret", 0xBF000000),    # modf(-3.5) = -0.5
    ("CL.modf.as_though_trunc", {"x": 0xC0600000}, "iptr", 0xC0400000),   # ... iptr = -3
    ("CL.modf.as_though_trunc", {"x": 0xBE800000}, "iptr", 0x80000000),   # modf(-0.25): iptr -0
    ("CL.modf.as_though_trunc", {"x": 0xBE800000}, "ret", 0xBE800000),    # ... returns -0.25
    ("CL.modf.as_though_trunc", {"x": 0x7F800000}, "ret", 0x00000000),    # modf(+inf) = +0
    ("CL.rint.round_to_nearest_even", {"x": 0x40200000}, "ret", 0x40000000),  # rint(2.5) = 2
    ("CL.rint.round_to_nearest_even", {"x": 0x40600000}, "ret", 0x40800000),  # rint(3.5) = 4
    ("CL.rint.round_to_nearest_even", {"x": 0x3F333333}, "ret", 0x3F800000),  # rint(0.7) = 1
    ("CL.rint.round_to_nearest_even", {"x": 0xBE99999A}, "ret", 0x80000000),  # rint(-0.3) = -0
    ("CL.sign.positive", {"x": 0x00000001}, "ret", 0x3F800000),           # sign(true_min) = 1
    ("CL.sign.negative", {"x": 0xFF800000}, "ret", 0xBF800000),           # sign(-inf) = -1
    ("CL.sign.neg_zero", {"x": 0x80000000}, "ret", 0x80000000),
    ("CL.sign.nan_positive_zero", {"x": 0xFFC00001}, "ret", 0x00000000),
    ("CL.maxmag.qnan_x", {"x": 0x7FC00000, "y": 0xC0000000}, "ret", 0xC0000000),
    ("CL.minmag.qnan_y", {"x": 0x80000001, "y": 0xFFC00000}, "ret", 0x80000001),
]


def _spot_id(row) -> str:
    rid, values, out, _ = row
    kinds = {a.name: a.kind for a in FUNCTIONS[BY_ID[rid].function].inputs}
    shown = ",".join(f"{k}={v:#010x}" if kinds[k] == "float" else f"{k}={v}"
                     for k, v in values.items())
    return f"{rid}({shown})->{out}"


def _one(rule, values: dict, fmt: FloatFormat = FMT) -> dict:
    fn = FUNCTIONS[rule.function]
    return {a.name: np.asarray([values[a.name]], dtype=fmt.uint if a.kind == "float" else np.int32)
            for a in fn.inputs}


@pytest.mark.parametrize("row", SPOT, ids=[_spot_id(r) for r in SPOT])
def test_spot_check(row):
    rid, values, out, want = row
    rule = BY_ID[rid]
    args = _one(rule, values)
    assert _applies(rule, args)[0], f"{rid} does not apply to {values}"
    spec = rule.results[out]
    if spec.kind == "one_of":
        assert spec.matches(np.asarray([want]), args, FMT, CONSTS)[0]
        return
    got = int(spec.expected_bits(args, FMT, CONSTS)[0])
    assert got == want, f"{rid}: {got:#x} != {want:#x}"
    assert spec.matches(np.asarray([want]), args, FMT, CONSTS)[0]


#: Format-dependent results in binary16 and binary64: the rounded constants are the
#: round-to-nearest values of the digest's table (§1.2), the landmarks the format's own.
SPOT_FORMATS = [
    # rule id, format, arguments as Python floats, output, required value (hex float) or bits
    ("F9.atan.2", "binary16", {"x": float("inf")}, "ret", "0x1.920p+0"),
    ("F9.atan.2", "binary64", {"x": float("-inf")}, "ret", "-0x1.921fb54442d18p+0"),
    ("F9.atan2.1", "binary16", {"y": -0.0, "x": -0.0}, "ret", "-0x1.920p+1"),
    ("F9.atan2.10", "binary16", {"y": float("inf"), "x": float("-inf")}, "ret", "0x1.2d8p+1"),
    ("F9.atan2.10", "binary64", {"y": float("inf"), "x": float("-inf")}, "ret", "0x1.2d97c7f3321d2p+1"),
    ("F9.atan2.11", "binary64", {"y": float("-inf"), "x": float("inf")}, "ret", "-0x1.921fb54442d18p-1"),
    ("CL.nextafter.neg_zero_toward_positive", "binary16", {"x": -0.0, "y": 1.0}, "ret", "0x1p-24"),
    ("CL.nextafter.neg_zero_toward_positive", "binary64", {"x": -0.0, "y": 1.0}, "ret", "0x1p-1074"),
    ("CL.rint.round_to_nearest_even", "binary16", {"x": 1022.5}, "ret", "1022.0"),  # tie: even
    ("CL.rint.round_to_nearest_even", "binary64", {"x": -2.5}, "ret", "-2.0"),
    ("CL.modf.as_though_trunc", "binary64", {"x": -7.75}, "ret", "-0.75"),
    ("CL.modf.as_though_trunc", "binary16", {"x": -7.75}, "iptr", "-7.0"),
]


@pytest.mark.parametrize("row", SPOT_FORMATS,
                         ids=[f"{r[0]}-{r[1]}-{r[3]}" for r in SPOT_FORMATS])
def test_spot_check_other_formats(row):
    rid, fmt_name, values, out, want = row
    fmt = FORMATS[fmt_name]
    rule = BY_ID[rid]
    args = _one(rule, {k: fmt.bits_of(v) for k, v in values.items()}, fmt)
    assert _applies(rule, args, fmt)[0], f"{rid} does not apply to {values} in {fmt_name}"
    want_bits = fmt.bits_of(float.fromhex(want) if "0x" in want else float(want))
    got = int(rule.results[out].expected_bits(args, fmt, CONSTS)[0])
    assert got == want_bits, f"{rid} {fmt_name}: {fmt.hex(got)} != {fmt.hex(want_bits)}"


def test_pow_of_one_and_a_nan_is_one():
    """F9.pow.6: pow(1, NaN) = 1 for quiet NaNs; 1 (or a NaN, IEEE) for signaling NaNs."""
    one = 0x3F800000
    for nan in (0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF812345):
        args = {"x": np.asarray([one], np.uint32), "y": np.asarray([nan], np.uint32)}
        hits = [r for r in catalogue.rules_for("pow")
                if r.id.startswith("F9.pow.6") and _applies(r, args)[0]]
        assert len(hits) == 1, [r.id for r in hits]
        assert hits[0].results["ret"].matches(np.asarray([one], np.uint32), args, FMT)[0]
        assert not hits[0].results["ret"].matches(np.asarray([0], np.uint32), args, FMT)[0]
        if is_nan(np.asarray([nan], np.uint32), FMT)[0] and nan & FMT.quiet_bit:
            assert int(hits[0].results["ret"].expected_bits(args, FMT)[0]) == one


def _check_set(rid, values, accept, reject, out="ret", consts=None):
    rule = BY_ID[rid]
    args = _one(rule, values)
    assert _applies(rule, args)[0]
    spec = rule.results[out]
    for bits in accept:
        assert spec.matches(np.asarray([bits]), args, FMT, consts)[0], (rid, hex(bits))
    for bits in reject:
        assert not spec.matches(np.asarray([bits]), args, FMT, consts)[0], (rid, hex(bits))


def test_set_valued_rules_accept_and_reject():
    _check_set("F9.rsqrt.D2", {"x": 0x80000000}, [0x7F800000, 0xFF800000], [0x7FC00000, 0x80000000])
    _check_set("F9.fmax.D1a", {"x": 0x00000000, "y": 0x80000000}, [0, 0x80000000], [0x3F800000])
    _check_set("F9.fmin.D1b", {"x": 0x80000000, "y": 0x00000000}, [0, 0x80000000], [0x00000001])
    _check_set("F9.fmax.1c", {"x": 0x7F800001, "y": 0x40000000}, [0x40000000, 0x7FC00000], [0])
    _check_set("F9.sin.2", {"x": 0xFF800000}, [0x7FC00000, 0xFF812345], [0x7F800000])
    _check_set("CL.sign.nan", {"x": 0x7F800001}, [0, 0x80000000], [0x7FC00000, 0x3F800000])
    _check_set("CL.maxmag.snan_y", {"x": 0x3F800000, "y": 0xFF800001}, [0x3F800000, 0x7FC00000],
               [0xBF800000, 0])
    _check_set("F9.ilogb.D1b", {"x": 0x80000000}, [-2**31, -2**31 + 1], [0, 2**31 - 1, -2**31 + 2])
    _check_set("F9.ilogb.D3b", {"x": 0x7FC00000}, [-2**31, 2**31 - 1], [0, -2**31 + 1])


def test_nan_returns_a_quiet_nan():
    """F9.nan.1 (OpenCL C §6.15.2 nan: 'Returns a quiet NaN'): any quiet NaN, any sign or
    payload, passes; a signaling NaN, an infinity or a number fails, in every format."""
    rule = BY_ID["F9.nan.1"]
    for fmt in FORMATS.values():
        args = {"nancode": np.asarray([0, 1, 7], np.int32)}
        good = np.asarray([fmt.default_qnan, fmt.default_qnan | fmt.sign_mask | 1,
                           fmt.default_qnan | 7], fmt.uint)
        bad = np.asarray([fmt.pos_inf | 1, fmt.pos_inf, 0], fmt.uint)
        assert rule.results["ret"].matches(good, args, fmt).all()
        assert not rule.results["ret"].matches(bad, args, fmt).any()


def test_rounded_constants_accept_the_claimed_rounding_only():
    """digest §14 D9: on a device that claims round toward zero only, atan(+inf) may be
    pi/2 rounded toward zero; on a round-to-nearest device only the nearest value passes.
    binary32 RN(pi/2) = 0x3fc90fdb is above pi/2, its RTZ neighbour 0x3fc90fda."""
    args = {"x": np.asarray([0x7F800000], np.uint32)}
    inf = {"x": 0x7F800000}
    _check_set("F9.atan.2", inf, [0x3FC90FDB], [0x3FC90FDA, 0x3FC90FDC], consts=CONSTS)
    _check_set("F9.atan.2", inf, [0x3FC90FDB], [0x3FC90FDA],
               consts={**CONSTS, "rounding": ("rte",)})
    _check_set("F9.atan.2", inf, [0x3FC90FDB, 0x3FC90FDA], [0x3FC90FDC, 0x3FC90FD9],
               consts={**CONSTS, "rounding": ("rtz",)})
    spec = BY_ID["F9.atan.2"].results["ret"]
    assert "0x3fc90fda" in spec.describe({"x": 0x7F800000}, FMT, {"rounding": ("rtz",)})
    with pytest.raises(InvalidResult):
        spec.matches(np.asarray([0x3FC90FDB], np.uint32), args, FMT, {"rounding": ("up",)})


# -- 9. result words of edgecases/results.py: known-good and known-bad -----------------------

@pytest.mark.parametrize("fmt_name", list(FORMATS))
def test_integral_result_words(fmt_name):
    """trunc(x), rint(x) (ties to even) and fraction(x) (modf's: x - trunc(x) with x's
    sign, ±0 for ±inf), exact and sign-keeping in every format."""
    fmt = FORMATS[fmt_name]
    xs = [-2.5, -1.5, -0.5, -0.25, -0.0, 0.0, 0.5, 0.75, 1.5, 2.5, 3.75, 1024.0,
          float("inf"), float("-inf")]
    want = {
        "trunc(x)": [-2.0, -1.0, -0.0, -0.0, -0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1024.0,
                     float("inf"), float("-inf")],
        "rint(x)": [-2.0, -2.0, -0.0, -0.0, -0.0, 0.0, 0.0, 1.0, 2.0, 2.0, 4.0, 1024.0,
                    float("inf"), float("-inf")],
        "fraction(x)": [-0.5, -0.5, -0.5, -0.25, -0.0, 0.0, 0.5, 0.75, 0.5, 0.5, 0.75, 0.0,
                        0.0, -0.0],
    }
    args = {"x": np.asarray([fmt.bits_of(v) for v in xs], fmt.uint)}
    for text, values in want.items():
        spec = parse_result(text, ("x",))
        good = np.asarray([fmt.bits_of(v) for v in values], fmt.uint)
        assert (spec.expected_bits(args, fmt) == good).all(), text
        assert spec.matches(good, args, fmt).all(), text
        assert not spec.matches(good ^ fmt.uint(fmt.sign_mask), args, fmt).any(), text
        assert not spec.is_set


def test_integral_result_word_keeps_nan_elements_out():
    spec = parse_result("trunc(x)", ("x",))
    x = np.asarray([0x7F800001, 0x40200000], np.uint32)
    bits = spec.expected_bits({"x": x}, FMT)
    assert int(bits[1]) == 0x40000000 and is_nan(bits[:1], FMT).all()


def test_qnan_result_word():
    spec = parse_result("qnan", ("x",))
    assert spec.kind == "nan" and spec.quiet and spec.is_set
    got = np.asarray([0x7FC00000, 0xFFC12345, 0x7F800001, 0x7F800000, 0x3F800000], np.uint32)
    ok = spec.matches(got, {"x": np.zeros(5, np.uint32)}, FMT)
    assert list(ok) == [True, True, False, False, False]
    assert (ok == is_qnan(got, FMT)).all()
    assert spec.describe({"x": 0}, FMT) == "a quiet NaN"


def test_int_one_of_result_word():
    spec = parse_result("one_of(INT_MAX, INT_MIN, 0)", ("x",), "int")
    got = np.asarray([2**31 - 1, -2**31, 0, 1, -2**31 + 1], np.int64)
    assert list(spec.matches(got, {"x": np.zeros(5)}, FMT)) == [True, True, True, False, False]
    assert spec.expected_bits({"x": np.zeros(1)}, FMT) is None
    for bad in ("one_of(INT_MAX)", "one_of(INT_MAX, nan)", "trunc(x)"):
        with pytest.raises(InvalidResult):
            parse_result(bad, ("x",), "int")


@pytest.mark.parametrize("text", ["trunc(y)", "rint(2)", "fraction()", "qnan(x)", "floor(x)"])
def test_malformed_result_words_are_rejected(text):
    with pytest.raises(InvalidResult):
        parse_result(text, ("x",))


# -- 10. through the checker, in binary16, binary32 and binary64 ------------------------------
#
# For each rule and format: up to six elements of strategies.special_inputs that meet
# the rule get, on the rule's outputs, each result the rule allows (every choice of a
# one_of, both zeros of any_zero, quiet NaNs of both signs for nan), and check_batch must
# not flag them with this rule; the first allowed result must also pass every other rule of
# the catalogue.  Then each prescribed output in turn gets a result the rule rejects, and
# every element must be flagged with this rule at its severity.  Outputs the rule does not
# prescribe get a quiet NaN / 0 where an argument is a NaN, else +0 / 0: only findings of
# catalogue rules on the rule's own outputs are asserted, so their value does not matter.
# If stage 3 of check_batch (the reference and the ULP bound) does not know a function or a
# format yet (KeyError), the rule and NaN stages run alone: the rule's verdict is theirs.

@lru_cache(maxsize=None)
def _special(name: str, fmt_name: str) -> dict:
    """strategies.special_inputs of built-in ``name`` in format ``fmt_name`` (cached)."""
    return special_inputs(FUNCTIONS[name], FORMATS[fmt_name])


def _allowed(spec, args: dict, fmt: FloatFormat, consts: dict) -> list[int]:
    """Every result (bits or int) ``spec`` allows for the one element ``args``."""
    if spec.kind == "one_of":
        return [v for c in spec.choices for v in _allowed(c, args, fmt, consts)]
    if spec.kind == "nan":
        return [fmt.default_qnan, fmt.default_qnan | fmt.sign_mask | 1]
    if spec.kind == "any_zero":
        return [0, fmt.sign_mask]
    return [int(spec.expected_bits(args, fmt, consts)[0])]


def _rejected(spec, args: dict, fmt: FloatFormat, consts: dict, int_output: bool) -> int:
    """A result ``spec`` rejects for the one element ``args``."""
    base = _allowed(spec, args, fmt, consts)[0]
    if int_output:
        cands = [base + 1, base - 1, 12345, -7, 0]
        cands = [c for c in cands if -2**31 <= c < 2**31]
    else:
        top = (1 << fmt.bits) - 1
        cands = [base ^ fmt.sign_mask, (base + 1) & top, fmt.pos_inf | 1, fmt.bits_of(1.0),
                 fmt.bits_of(2.0), fmt.default_qnan, 0, fmt.pos_inf]
    for c in cands:
        got = np.asarray([c], np.int64 if int_output else fmt.uint)
        if not spec.matches(got, args, fmt, consts)[0]:
            return c
    raise AssertionError(f"no rejected result found for {spec.text}")


def _check(fn, ins, outs, claims, monkeypatch):
    try:
        return CHECKER.check_batch(fn, ins, outs, claims)
    except KeyError:  # stage 3 lacks this function's bound or reference: stages 1-2 alone
        with monkeypatch.context() as m:
            m.setattr(CHECKER, "_apply_reference", lambda c: None)
            return CHECKER.check_batch(fn, ins, outs, claims)


def _filler(fn, out, args: dict, fmt: FloatFormat) -> int:
    nan_arg = any(a.kind == "float" and is_nan(np.asarray([args[a.name]], fmt.uint), fmt)[0]
                  for a in fn.inputs)
    if out.kind == "int":
        return 0
    return fmt.default_qnan if nan_arg else 0


def _batch(fn, rows: list[dict], outs: list[dict], fmt: FloatFormat):
    ins = {a.name: np.asarray([r[a.name] for r in rows], buffer_dtype(a, fmt)) for a in fn.inputs}
    got = {o.name: np.asarray([d[o.name] for d in outs],
                              np.int32 if o.kind == "int" else fmt.uint) for o in fn.outputs}
    return ins, got


def _catalogue_failures(res, rule) -> list:
    """Failing findings of catalogue or general rules on the outputs ``rule`` prescribes
    (ULP-bound findings are the reference's business)."""
    return [f for f in res.findings if f.output in rule.results and f.severity == "fail"
            and not f.rule_id.startswith("ulp.")]


@pytest.mark.parametrize("rule_id,fmt_name", _by_format(_rule_ids()))
def test_rule_flags_wrong_and_passes_allowed_through_check_batch(rule_id, fmt_name, monkeypatch):
    rule, fmt = BY_ID[rule_id], FORMATS[fmt_name]
    fn = FUNCTIONS[rule.function]
    claims = Claims(precision=fmt_name)
    consts = claims.consts
    inputs = _special(fn.name, fmt_name)
    idx = np.nonzero(_applies(rule, inputs, fmt))[0]
    assert idx.size, f"no special input satisfies {rule_id} in {fmt_name}"
    idx = idx[np.linspace(0, idx.size - 1, min(idx.size, 6)).astype(int)]
    rows = [{k: int(v[i]) for k, v in inputs.items()} for i in idx]
    one = [{a.name: np.asarray([r[a.name]], buffer_dtype(a, fmt)) for a in fn.inputs} for r in rows]
    base = [{o.name: _filler(fn, o, r, fmt) for o in fn.outputs} for r in rows]
    kinds = {o.name: o.kind for o in fn.outputs}

    # every allowed result passes this rule (one output varied at a time, the others
    # allowed too); the first allowed result passes every other rule of the catalogue as well
    # (a later alternative may be narrowed by another rule: F9.ilogb.D1b allows -INT_MAX,
    # F9.ilogb.D1 then wants the device's FP_ILOGB0)
    first = [{**b, **{o: _allowed(s, a, fmt, consts)[0] for o, s in rule.results.items()}}
             for b, a in zip(base, one)]
    for out, spec in rule.results.items():
        choices = [_allowed(spec, a, fmt, consts) for a in one]
        for k in range(max(len(c) for c in choices)):
            outs = [{**f, out: c[min(k, len(c) - 1)]} for f, c in zip(first, choices)]
            res = _check(fn, *_batch(fn, rows, outs, fmt), claims, monkeypatch)
            own = [f for f in res.findings if f.rule_id == rule_id]
            assert not own, (rule_id, fmt_name, out, own[:2])
            if k == 0:
                others = _catalogue_failures(res, rule)
                assert not others, (rule_id, fmt_name, out, others[:2])

    # a rejected result on each prescribed output is flagged on every element
    for out, spec in rule.results.items():
        outs = [{**f, out: _rejected(spec, a, fmt, consts, kinds[out] == "int")}
                for f, a in zip(first, one)]
        res = _check(fn, *_batch(fn, rows, outs, fmt), claims, monkeypatch)
        flagged = {f.index for f in res.findings
                   if f.rule_id == rule_id and f.output == out and f.severity == rule.severity}
        assert flagged == set(range(len(rows))), (rule_id, fmt_name, out, res.findings[:3])

    # the flush-to-zero alternative (3.8.3) passes on a device without denormals
    if rule.ftz_results:
        ftz = Claims(precision=fmt_name, denormals=False)
        outs = [{**f, **{o: _allowed(s, a, fmt, consts)[0] for o, s in rule.ftz_results.items()}}
                for f, a in zip(first, one)]
        res = _check(fn, *_batch(fn, rows, outs, fmt), ftz, monkeypatch)
        assert not [f for f in res.findings if f.rule_id == rule_id], (rule_id, fmt_name)
        res = _check(fn, *_batch(fn, rows, outs, fmt), claims, monkeypatch)
        assert {f.index for f in res.findings if f.rule_id == rule_id} == set(range(len(rows)))


def test_rounded_constant_on_a_round_toward_zero_device_through_check_batch():
    """digest §14 D9 through the checker: atan(+inf) rounded toward zero passes on a device
    that claims RTZ only and fails (F9.atan.2) on a round-to-nearest device."""
    if "rounding" not in Claims(rounding=("rtz",)).consts:
        pytest.skip("the checker does not pass Claims.rounding to the rules (consts['rounding']) yet")
    fn = FUNCTIONS["atan"]
    ins = {"x": np.asarray([0x7F800000, 0xFF800000], np.uint32)}
    outs = {"ret": np.asarray([0x3FC90FDA, 0xBFC90FDA], np.uint32)}  # pi/2 rounded toward zero
    rtz = CHECKER.check_batch(fn, ins, outs, Claims(rounding=("rtz",)))
    assert not [f for f in rtz.findings if f.rule_id == "F9.atan.2"]
    rte = CHECKER.check_batch(fn, ins, outs, Claims())
    assert {f.index for f in rte.findings if f.rule_id == "F9.atan.2"} == {0, 1}
