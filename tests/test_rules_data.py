"""The prescribed-result tables as data: edgecases/data/rules_c99_f9.toml and rules_opencl.toml.

Fast, no device.  Over a pool of special binary32 values (and boundary ints), every rule is
exercised, no rule prescribes a NaN's bits, only the listed rules override the generic NaN
rule, and the rules of one function never contradict each other on an input where several
apply.  The digest of C99 Annex F.9 (../shared/spec/c99_annex_f9.md) is covered row by row:
each of its B, P and D rows for a function of functions.toml is a rule (or split into
<id>a, <id>b, ...) or is in SKIPPED with the reason.  Test ids are the rule ids (STYLE.md
point 6).
"""
from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from edgecases import catalogue
from edgecases.predicates import evaluate
from fuzzfarm.formats import BINARY32, is_nan

# Predicates view patterns as float64; converting a signaling NaN raises numpy's "invalid
# value encountered in cast" (harmless: NaNs are judged from the bits).
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered in cast:RuntimeWarning")

FMT = BINARY32
CONSTS = {"FP_ILOGB0": -2**31, "FP_ILOGBNAN": 2**31 - 1}
SHARED = Path(__file__).resolve().parents[2] / "shared"
DIGEST = SHARED / "spec" / "c99_annex_f9.md"
SPIRV_SEED = SHARED / "seeds" / "opencl_spirv_env_numerical_compliance.txt"

#: Digest rows (kinds B, P, D) that are deliberately not rules, with the reason.  The same
#: list heads rules_c99_f9.toml as "# skip <id>: <reason>" comments (checked below).
SKIPPED = {
    "F9.frexp.4": "raises no floating-point exception; flags only (OpenCL has exceptions disabled)",
    "F9.frexp.D1": "finite nonzero: mantissa in [0.5, 1) and exponent; the reference computes both exactly",
    "F9.ilogb.1": "result outside int range unspecified; only 0, ±∞, NaN reach it and F9.ilogb.D1-D3 fix those",
    "F9.ilogb.D4": "finite nonzero: (int)logb(x); the reference computes it exactly",
    "F9.ldexp.1": "equivalence ldexp ≡ scalbn; its consequences are rows F9.ldexp.D1a-c, the rest is the exact reference",
    "F9.logb.D1": "finite nonzero: the unbiased exponent; the reference computes it exactly",
    "F9.modf.4": "behaves-as-though sample (trunc and copysign); the reference computes both outputs exactly",
    "F9.hypot.1": "equivalence (symmetry) between calls; enforced through the reference",
    "F9.sqrt.1": "'fully specified by IEC 60559': special values are rows F9.sqrt.D1-D3, the rest F9.sqrt.D4",
    "F9.sqrt.D4": "finite x > 0: correctly rounded; the reference with the correctly-rounded bound",
    "F9.ceil.3": "behaves-as-though rint under FE_UPWARD; the reference (zero sign: F9.ceil.D1)",
    "F9.floor.3": "behaves-as-though rint under FE_DOWNWARD; the reference (zero sign: F9.floor.D1)",
    "F9.rint.1": "nearbyint in the current direction, always RTE in OpenCL; the reference",
    "F9.round.3": "behaves-as-though sample (ties away from zero); the reference",
    "F9.round.4": "may raise inexact; flags only",
    "F9.trunc.1": "round toward zero whatever the mode; the reference (zero sign: F9.trunc.D1)",
    "F9.fmod.4": "behaves-as-though sample via remainder; exact result computed by the reference",
    "F9.remainder.1": "'fully specified by IEC 60559': special values are rows F9.remainder.D1-D3, the rest D4",
    "F9.remainder.D4": "x - n*y with n nearest x/y; exact result computed by the reference",
    "F9.copysign.1": "'as in the IEC 60559 appendix'; its content is rows F9.copysign.D1a/D1b",
    "F9.nextafter.1": "overflow/inexact flags only; the value is F9.nextafter.D2's",
    "F9.nextafter.2": "underflow/inexact flags only; the value is F9.nextafter.D2's",
    "F9.nextafter.D1": "x == y returns y: a relation between the arguments; the reference",
    "F9.nextafter.D2": "the next representable value after x toward y; the reference (CL.nextafter.* pin ±0)",
    "F9.fdim.0": "'No additional requirements'; no value",
    "F9.fdim.D1": "x > y gives x - y rounded; a relation, the reference",
    "F9.fdim.D2": "x <= y gives +0; a relation between the arguments, the reference",
    "F9.fdim.D3": "a NaN argument gives NaN is G10 itself; restated as CL.fdim.any_nan / CL.fdim.nan_any",
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
    "CL.pown.zero_exponent_qnan": "pown(x, 0) is 1 for any x, even zero, NaN or infinity",
    "CL.pown.zero_exponent_snan": "pown(x, 0) is 1 for any x, even NaN (sNaN: 1 or NaN)",
    "CL.frexp.nan": "frexp(NaN, exp) returns the NaN and stores 0 in exp (the int output)",
}

try:
    RULES = catalogue.rules()
    LOAD_ERROR = None
except catalogue.CatalogueError as exc:  # reported by test_catalogue_loads
    RULES, LOAD_ERROR = (), exc
BY_ID = {r.id: r for r in RULES}
FUNCTIONS = catalogue.functions()


# -- the special-value pool ----------------------------------------------------------------

def _f32_bits(value: float) -> int:
    """Pattern of ``value`` rounded to binary32 (0.3 and 1e-3 are not exact)."""
    return int(np.array(value, dtype=np.float32).view(np.uint32))


_MAGNITUDES = [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 0.3, 1e-3, 7.5,
               2.0**23 + 1, 2.0**24, 2.0**24 + 2]
_POSITIVE = [0, FMT.true_min, FMT.min_normal - 1, FMT.min_normal, FMT.max_finite, FMT.pos_inf]
_POSITIVE += [_f32_bits(m) for m in _MAGNITUDES]
_NANS = [0x7FC00000, 0xFFC00001, 0x7F800001, 0xFF812345]  # two quiet, two signaling
FLOAT_POOL = np.array([b | s for b in _POSITIVE for s in (0, FMT.sign_mask)] + _NANS,
                      dtype=np.uint32)
INT_POOL = np.array([0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, -2**31, 2**31 - 1], dtype=np.int32)


@lru_cache(maxsize=None)
def _pool(name: str) -> dict:
    """The cartesian product of the pools over the inputs of built-in ``name``."""
    fn = FUNCTIONS[name]
    pools = [FLOAT_POOL if a.kind == "float" else INT_POOL for a in fn.inputs]
    grids = np.meshgrid(*pools, indexing="ij")
    return {a.name: g.ravel() for a, g in zip(fn.inputs, grids)}


def _applies(rule, args: dict) -> np.ndarray:
    fn = FUNCTIONS[rule.function]
    kinds = {a.name: a.kind for a in fn.inputs}
    mask = np.ones(len(next(iter(args.values()))), dtype=bool)
    for arg, word in rule.when:
        mask &= evaluate(word, args[arg], kinds[arg], FMT)
    return mask


def _subset(args: dict, mask: np.ndarray) -> dict:
    return {k: v[mask] for k, v in args.items()}


def _show(args: dict, i: int) -> str:
    return ", ".join(f"{k}={FMT.hex(v[i]) if v.dtype == np.uint32 else int(v[i])}"
                     for k, v in args.items())


def _output_kinds(name: str) -> dict:
    return {o.name: o.kind for o in FUNCTIONS[name].outputs}


def _rule_ids(prefix: str = "") -> list[str]:
    return [r.id for r in RULES if r.id.startswith(prefix)]


# -- 1. the catalogue ------------------------------------------------------------------------

def test_catalogue_loads():
    assert LOAD_ERROR is None, str(LOAD_ERROR)
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert {r.source_file for r in RULES} >= {"rules_c99_f9.toml", "rules_opencl.toml"}
    for r in RULES:
        assert r.function in FUNCTIONS, f"{r.id}: function={r.function!r}"


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_id_names_its_source_and_function(rule_id):
    r = BY_ID[rule_id]
    if r.source_file == "rules_opencl.toml":
        assert r.kind == "CL"
        assert re.fullmatch(rf"CL\.{re.escape(r.function)}\.[a-z0-9_]+", r.id)
        assert "Additional Requirements Beyond ISO/IEC 9899:TC2" in r.section
    else:
        assert r.source_file == "rules_c99_f9.toml"
        assert r.kind in ("B", "P", "D")
        assert re.fullmatch(rf"F9\.{re.escape(r.function)}\.D?\d+[a-z]?", r.id)
        assert r.section.startswith("C99 ")
    assert "{plusmn}" not in r.sentence and "{inf}" not in r.sentence
    if r.severity == "note":
        assert r.reading


# -- 3. every rule is exercised by the pool --------------------------------------------------

@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_matches_some_pool_element(rule_id):
    r = BY_ID[rule_id]
    assert _applies(r, _pool(r.function)).any(), f"{rule_id}: no element of the pool meets {r.when}"


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_describes_its_expectation(rule_id):
    r = BY_ID[rule_id]
    args = _pool(r.function)
    i = int(np.nonzero(_applies(r, args))[0][0])
    row = {k: v[i] for k, v in args.items()}
    for spec in r.results.values():
        assert spec.describe(row, FMT, CONSTS)


# -- no NaN bits prescribed; the NaN rule overridden only where a text says so ----------------

def _exact_parts(spec):
    """The ResultSpecs of ``spec`` (or of its one_of choices) that prescribe exact bits."""
    parts = spec.choices if spec.kind == "one_of" else (spec,)
    return [p for p in parts if p.kind not in ("nan", "any_zero", "one_of")]


@pytest.mark.parametrize("rule_id", _rule_ids(), ids=_rule_ids())
def test_rule_never_prescribes_nan_bits(rule_id):
    r = BY_ID[rule_id]
    args = _pool(r.function)
    sub = _subset(args, _applies(r, args))
    kinds = _output_kinds(r.function)
    for out, spec in r.results.items():
        if kinds[out] != "float":
            continue
        for part in _exact_parts(spec):
            bits = part.expected_bits(sub, FMT, CONSTS)
            bad = np.nonzero(is_nan(bits, FMT))[0]
            assert bad.size == 0, (f"{rule_id} {out} = {part.text} prescribes the bits of a NaN "
                                   f"at {_show(sub, int(bad[0]))}; exclude NaN with 'not_nan'")


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

_WITNESSES = (FMT.default_qnan, 0, FMT.sign_mask)  # a NaN, +0, -0


def _agree(a, b, args: dict) -> np.ndarray:
    """Per element: can one result satisfy both specs?"""
    ea = a.expected_bits(args, FMT, CONSTS)
    eb = b.expected_bits(args, FMT, CONSTS)
    if ea is not None and eb is not None:
        return ea == eb
    if ea is not None:
        return b.matches(ea, args, FMT, CONSTS)
    if eb is not None:
        return a.matches(eb, args, FMT, CONSTS)
    n = len(next(iter(args.values())))
    ok = np.zeros(n, dtype=bool)
    candidates = [np.full(n, w, dtype=FMT.uint) for w in _WITNESSES]
    for spec in (a, b):
        candidates += [p.expected_bits(args, FMT, CONSTS) for p in _exact_parts(spec)
                       if spec.kind == "one_of"]
    for c in candidates:
        ok |= a.matches(c, args, FMT, CONSTS) & b.matches(c, args, FMT, CONSTS)
    return ok


@pytest.mark.parametrize("name", list(FUNCTIONS), ids=list(FUNCTIONS))
def test_rules_of_a_function_are_consistent(name):
    rules = catalogue.rules_for(name) if LOAD_ERROR is None else ()
    args = _pool(name)
    masks = {r.id: _applies(r, args) for r in rules}
    problems = []
    for i, a in enumerate(rules):
        for b in rules[i + 1:]:
            both = masks[a.id] & masks[b.id]
            if not both.any():
                continue
            sub = _subset(args, both)
            for out in set(a.results) & set(b.results):
                ok = _agree(a.results[out], b.results[out], sub)
                for j in np.nonzero(~ok)[0][:3]:
                    problems.append(f"{a.id} ({a.results[out].text}) vs {b.id} "
                                    f"({b.results[out].text}) on {out} at {_show(sub, int(j))}")
    assert not problems, "\n".join(problems)


# -- 5. coverage of the digest of C99 Annex F.9 -----------------------------------------------

_DIGEST_ROW = re.compile(r"^\|\s*(F9\.(\w+)\.(\w+))\s*\|\s*([A-Z])\b")


def _digest_ids() -> dict:
    """id -> kind for the B, P, D rows of the digest whose function is in functions.toml."""
    if not DIGEST.is_file():
        pytest.skip(f"{DIGEST} is absent (CI checks out ../shared beside the repository)")
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


def test_skip_comments_in_the_table_match_skipped():
    text = resources.files("edgecases").joinpath("data", "rules_c99_f9.toml").read_text("utf-8")
    listed = set(re.findall(r"^# skip (F9\.\S+?):", text, flags=re.M))
    assert listed == set(SKIPPED), (f"only in the TOML comments: {sorted(listed - set(SKIPPED))}; "
                                    f"only in SKIPPED: {sorted(set(SKIPPED) - listed)}")


# -- OpenCL sentences are the seed's bullets --------------------------------------------------

def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.parametrize("rule_id", _rule_ids("CL."), ids=_rule_ids("CL."))
def test_opencl_sentence_is_in_the_seed(rule_id):
    if not SPIRV_SEED.is_file():
        pytest.skip(f"{SPIRV_SEED} is absent")
    seed = _squash(SPIRV_SEED.read_text(encoding="utf-8"))
    sentence = BY_ID[rule_id].sentence.replace("±", "{plusmn}").replace("∞", "{inf}")
    assert _squash(sentence) in seed


# -- 6. spot checks with concrete bits ---------------------------------------------------------

SPOT = [
    # rule id, arguments (float patterns / ints), output, required bits
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
]


def _spot_id(row) -> str:
    rid, values, out, _ = row
    kinds = {a.name: a.kind for a in FUNCTIONS[rid.split(".")[1]].inputs}
    shown = ",".join(f"{k}={v:#010x}" if kinds[k] == "float" else f"{k}={v}"
                     for k, v in values.items())
    return f"{rid}({shown})->{out}"


def _one(rule, values: dict) -> dict:
    fn = FUNCTIONS[rule.function]
    return {a.name: np.asarray([values[a.name]], dtype=np.uint32 if a.kind == "float" else np.int32)
            for a in fn.inputs}


@pytest.mark.parametrize("row", SPOT, ids=[_spot_id(r) for r in SPOT])
def test_spot_check(row):
    rid, values, out, want = row
    rule = BY_ID[rid]
    args = _one(rule, values)
    assert _applies(rule, args)[0], f"{rid} does not apply to {values}"
    spec = rule.results[out]
    got = int(spec.expected_bits(args, FMT, CONSTS)[0])
    assert got == want, f"{rid}: {got:#x} != {want:#x}"
    assert spec.matches(np.asarray([want]), args, FMT, CONSTS)[0]


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


def test_set_valued_rules_accept_and_reject():
    def check(rid, values, accept, reject):
        rule = BY_ID[rid]
        args = _one(rule, values)
        assert _applies(rule, args)[0]
        spec = rule.results["ret"]
        for bits in accept:
            assert spec.matches(np.asarray([bits], np.uint32), args, FMT)[0], (rid, hex(bits))
        for bits in reject:
            assert not spec.matches(np.asarray([bits], np.uint32), args, FMT)[0], (rid, hex(bits))

    check("F9.rsqrt.D2", {"x": 0x80000000}, [0x7F800000, 0xFF800000], [0x7FC00000, 0x80000000])
    check("F9.fmax.D1a", {"x": 0x00000000, "y": 0x80000000}, [0, 0x80000000], [0x3F800000])
    check("F9.fmin.D1b", {"x": 0x80000000, "y": 0x00000000}, [0, 0x80000000], [0x00000001])
    check("F9.fmax.1c", {"x": 0x7F800001, "y": 0x40000000}, [0x40000000, 0x7FC00000], [0])
    check("F9.sin.2", {"x": 0xFF800000}, [0x7FC00000, 0xFF812345], [0x7F800000])
