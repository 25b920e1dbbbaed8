"""The geometric built-ins (fuzzfarm/verdict/geometric.py, edgecases/data/geometric.toml): the
reference against direct mpmath/fractions, every vector rule with a known-good and a
known-bad result, every bound inside/outside at widths 1..4 in binary32 and binary64, the
flush-to-zero allowances, and the input generators.  No device needed."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from mpmath import mpf

from edgecases import bounds, catalogue
from fuzzfarm import formats
from fuzzfarm.verdict import geometric
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.verdict.geometric import NOT_JUDGED, GeometricError
from fuzzfarm.oracle import Exact, round_to_bits, ulp_error

SEED = "opencl_spirv_env_numerical_compliance.txt"
PREC = {BINARY16: 80, BINARY32: 120, BINARY64: 200}
FMTS = (BINARY32, BINARY64)


# --------------------------------------------------------------------------- helpers
def P(fmt, x) -> int:
    """Pattern of a Python float exactly representable in fmt (ValueError otherwise)."""
    return fmt.bits_of(x)


def neg(fmt, b) -> int:
    return b | fmt.sign_mask


def qnan(fmt) -> int:
    return fmt.default_qnan


def snan(fmt) -> int:
    return fmt.pos_inf | 1


def rnd(entry, fmt) -> int:
    """A conforming result pattern for a reference entry (RTE; any NaN as the default)."""
    if entry is None:
        return fmt.default_qnan
    if isinstance(entry, Exact):
        return int(entry.bits)
    return round_to_bits(entry, fmt, "rte")


def ref_of(name, fmt, rows, width, prec=None):
    fn = catalogue.function(name)
    args = {a.name: np.asarray([r], dtype=np.uint64).astype(fmt.uint)
            for a, r in zip(fn.inputs, rows)}
    out = geometric.reference(name, args, fmt, width, prec or PREC[fmt])[0]
    return out if isinstance(out, tuple) else (out,)


def correct(name, fmt, rows, width):
    return [rnd(e, fmt) for e in ref_of(name, fmt, rows, width)]


def run(name, fmt, rows, out, width=None, prec=None, **claims_kw):
    """check() on one vector: rows = one lane list per input, out = result lane patterns."""
    fn = catalogue.function(name)
    width = width or len(rows[0])
    ins = {a.name: np.asarray(list(r), dtype=np.uint64).astype(fmt.uint)
           for a, r in zip(fn.inputs, rows)}
    claims = Claims(fmt.name, **claims_kw)
    return geometric.check(fn, ins, {"ret": np.asarray(list(out), np.uint64).astype(fmt.uint)},
                           claims, width, prec)


def ids(res, severity=None):
    return {f.rule_id for f in res.findings if severity is None or f.severity == severity}


def limits_of(name, fmt, width, max_abs=1.0, profile="full"):
    b = bounds.bound(name, fmt.name, profile)
    args = {a.name: np.zeros(1, fmt.uint) for a in catalogue.function(name).inputs}
    kinds = {a.name: a.kind for a in catalogue.function(name).inputs}
    return b.limits(args, kinds, fmt, width=width, max_abs=np.asarray([max_abs], np.float64))


def _norm(text: str) -> str:
    text = text.replace("{plusmn}", "±").replace("{inf}", "∞")
    return " ".join(text.split())


# --------------------------------------------------------------------------- the data
def test_rules_load_and_every_builtin_has_rules():
    rules = geometric.rules()
    assert len({r.id for r in rules}) == len(rules)
    for name in geometric.GEOMETRIC:
        assert catalogue.function(name).family == "geometric"
        assert geometric.rules_for(name), name
    assert set(geometric.GEOMETRIC) == {n for n, f in catalogue.functions().items()
                                        if f.family == "geometric"}


def test_seed_sentences_are_in_the_seed():
    from spec_texts import read_text
    seed = _norm(read_text(SEED))
    seed_rules = [r for r in geometric.rules() if r.source == "seed"]
    assert len(seed_rules) >= 8
    for r in seed_rules:
        assert _norm(r.sentence) in seed, r.id


def test_non_seed_rules_cite_opencl_c_6_15_5():
    for r in geometric.rules():
        if r.source != "seed":
            assert r.source == "OpenCL C 3.0 §6.15.5", r.id
            assert "6.15.5" in r.section, r.id


_GOOD = '''
[[rule]]
id = "CL.length.x"
functions = ["length"]
kind = "prescribed"
when = "inf_no_nan"
result = "+inf"
severity = "fail"
section = "s"
source = "seed"
sentence = "t"
'''


@pytest.mark.parametrize("edit, message", [
    (("severity = \"fail\"", "severity = \"fail\"\nbogus = 1"), "unknown key"),
    (("when = \"inf_no_nan\"", "when = \"sometimes\""), "when='sometimes'"),
    (("result = \"+inf\"", "result = \"-inf\""), "result='-inf'"),
    (("functions = [\"length\"]", "functions = [\"sin\"]"), "functions="),
    (("kind = \"prescribed\"", "kind = \"maybe\""), "kind='maybe'"),
    (("severity = \"fail\"", "severity = \"note\""), "needs a 'reading'"),
    (("severity = \"fail\"", "severity = \"grave\""), "severity='grave'"),
    (("sentence = \"t\"", ""), "'sentence' is missing"),
])
def test_load_rules_rejects_malformed(edit, message):
    assert geometric.load_rules(_GOOD)[0].id == "CL.length.x"
    with pytest.raises(GeometricError, match=re.escape(message)) as exc:
        geometric.load_rules(_GOOD.replace(*edit))
    assert "CL.length.x" in str(exc.value)


def test_load_rules_rejects_duplicate_ids():
    with pytest.raises(GeometricError, match="not unique"):
        geometric.load_rules(_GOOD + _GOOD)


# --------------------------------------------------------------------------- reference
def frac(x) -> Fraction:
    """The exact value of an mpf (mpmath's man_exp is the magnitude's)."""
    m, e = x.man_exp
    f = Fraction(int(m)) * Fraction(2) ** int(e)
    return -f if x < 0 else f


def _direct_length(vals, prec=400):
    with mpmath.workprec(prec):
        return mpmath.sqrt(mpmath.fsum(mpf(v) ** 2 for v in vals))


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_reference_against_direct_mpmath_and_fractions(fmt, width):
    rng = np.random.default_rng(width)
    prec = PREC[fmt]
    rel = mpmath.ldexp(1, 2 - prec)
    for _ in range(6):
        a = [float(x) for x in rng.standard_normal(width).astype(fmt.float) * 8]
        b = [float(x) for x in rng.standard_normal(width).astype(fmt.float) * 8]
        pa, pb = [P(fmt, x) for x in a], [P(fmt, x) for x in b]
        # dot: exact sum of exact products
        (d,) = ref_of("dot", fmt, (pa, pb), width)
        exact = sum(Fraction(x) * Fraction(y) for x, y in zip(a, b))
        assert (frac(d) == exact) if exact else isinstance(d, Exact)
        with mpmath.workprec(400):
            # length, distance: sqrt of the exact sum of squares
            (ln,) = ref_of("length", fmt, (pa,), width)
            assert abs(ln - _direct_length(a)) <= rel * ln
            (ds,) = ref_of("distance", fmt, (pa, pb), width)
            direct = _direct_length([mpf(x) - mpf(y) for x, y in zip(a, b)])
            assert abs(ds - direct) <= rel * ds
            # normalize: p[i] / length
            nz = ref_of("normalize", fmt, (pa,), width)
            for x, r in zip(a, nz):
                want = mpf(x) / _direct_length(a)
                assert abs(r - want) <= rel * abs(want)
        if width in (3, 4):
            cr = ref_of("cross", fmt, (pa, pb), width)
            fa, fb = [Fraction(x) for x in a], [Fraction(y) for y in b]
            want = [fa[1] * fb[2] - fa[2] * fb[1], fa[2] * fb[0] - fa[0] * fb[2],
                    fa[0] * fb[1] - fa[1] * fb[0]]
            for r, w in zip(cr, want):
                got = Fraction(0) if isinstance(r, Exact) else frac(r)
                assert got == w
            if width == 4:
                assert cr[3] == Exact(0)


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_reference_known_values(fmt):
    one, two, three, four = (P(fmt, x) for x in (1.0, 2.0, 3.0, 4.0))
    assert ref_of("length", fmt, ([three, four],), 2) == (5,)
    assert ref_of("distance", fmt, ([one, two], [P(fmt, 4.0), P(fmt, 6.0)]), 2) == (5,)
    assert ref_of("dot", fmt, ([one, two, three], [four, P(fmt, 5.0), P(fmt, 6.0)]), 3) == (32,)
    n = ref_of("normalize", fmt, ([three, neg(fmt, four)],), 2)
    with mpmath.workprec(300):
        assert abs(n[0] - mpf(3) / 5) < mpf(2) ** -100 and abs(n[1] + mpf(4) / 5) < mpf(2) ** -100
    x, y = [one, 0, 0, 0], [0, one, 0, 0]
    assert ref_of("cross", fmt, (x, y), 4) == (Exact(0), Exact(0), 1, Exact(0))
    assert ref_of("cross", fmt, (y[:3], x[:3]), 3) == (Exact(0), Exact(0), -1)


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_reference_special_values(fmt):
    inf, one, s = fmt.pos_inf, P(fmt, 1.0), fmt.sign_mask
    # dot: IEEE evaluation with infinities, signed zeros of exact zero sums
    assert ref_of("dot", fmt, ([inf, one], [0, one]), 2) == (None,)          # inf * 0
    assert ref_of("dot", fmt, ([inf, one], [one, one]), 2) == (Exact(inf),)
    assert ref_of("dot", fmt, ([inf, one], [one, neg(fmt, inf)]), 2) == (None,)  # inf - inf
    assert ref_of("dot", fmt, ([s], [P(fmt, 5.0)]), 1) == (Exact(s),)        # -0 * 5 = -0
    assert ref_of("dot", fmt, ([one, one], [one, neg(fmt, one)]), 2) == (Exact(0),)
    assert ref_of("dot", fmt, ([s, s], [one, one]), 2) == (Exact(s),)        # -0 + -0
    assert ref_of("dot", fmt, ([qnan(fmt)], [one]), 1) == (None,)
    # length / distance
    assert ref_of("length", fmt, ([neg(fmt, inf), one],), 2) == (Exact(inf),)
    assert ref_of("length", fmt, ([inf, qnan(fmt)],), 2) == (None,)
    assert ref_of("length", fmt, ([s, s, s],), 3) == (Exact(0),)
    assert ref_of("distance", fmt, ([inf, one], [inf, one]), 2) == (None,)   # inf - inf
    assert ref_of("distance", fmt, ([inf, one], [neg(fmt, inf), one]), 2) == (Exact(inf),)
    # normalize: zero vector returns v; NaN; the infinity replacement
    assert ref_of("normalize", fmt, ([s, 0, s],), 3) == (Exact(s), Exact(0), Exact(s))
    assert ref_of("normalize", fmt, ([one, snan(fmt)],), 2) == (None, None)
    r = ref_of("normalize", fmt, ([inf, neg(fmt, inf), P(fmt, 3.0), s],), 4)
    with mpmath.workprec(300):
        assert abs(r[0] - mpf(1) / mpmath.sqrt(2)) < mpf(2) ** -100
        assert abs(r[1] + mpf(1) / mpmath.sqrt(2)) < mpf(2) ** -100
    assert r[2:] == (Exact(0), Exact(s))                                      # 0.0 * v[i]
    assert ref_of("cross", fmt, ([inf, one, 0], [0, one, 0]), 3) == (Exact(0), None, Exact(inf))


def test_reference_fast_normalize_infinite_is_not_judged():
    f = BINARY32
    assert ref_of("fast_normalize", f, ([f.pos_inf, P(f, 1.0)],), 2) == (NOT_JUDGED, NOT_JUDGED)


def test_reference_validates_arguments():
    f = BINARY32
    with pytest.raises(GeometricError, match="width=2"):
        two = np.zeros((1, 2), f.uint)
        geometric.reference("cross", {"p0": two, "p1": two}, f, 2, 60)
    with pytest.raises(GeometricError, match="shape"):
        geometric.reference("length", {"p": np.zeros(3, f.uint)}, f, 3, 60)
    with pytest.raises(GeometricError, match="not a geometric"):
        geometric.reference("sin", {"x": np.zeros((1, 1), f.uint)}, f, 1, 60)


# --------------------------------------------------------------------------- rules
@dataclass
class Case:
    """One rule's known-good and known-bad results.  ``bad_rule`` is the finding the bad
    result must produce (the rule under test for prescribed/reference rules; for
    undefined, allowance and ftz rules the contrast's finding)."""

    name: str
    rows: tuple
    good: list
    bad: list
    bad_rule: str
    bad_severity: str = "fail"
    bad_rows: tuple | None = None
    good_claims: dict | None = None
    bad_claims: dict | None = None
    note_out: list | None = None   # a result reported as a note of the rule


def _p(fmt, *xs):
    return [x if isinstance(x, int) else P(fmt, x) for x in xs]


def _pow2(e):
    return math.ldexp(1.0, e)


def _inexact_product(fmt):
    """x, y in [1, 2) whose product lies just above a midpoint (0.5 + 2^-k ulp): RTE rounds
    up, RTZ down."""
    p = fmt.precision
    a, b = 2 ** ((p - 1) // 2) + 1, 2 ** ((p - 2) // 2)
    x, y = 1.0 + a * _pow2(1 - p), 1.0 + b * _pow2(1 - p)
    return (_p(fmt, x), _p(fmt, y))


def _cases(fmt) -> dict:
    """rule id -> Case for format ``fmt`` (fast_* only in binary32)."""
    inf, nan, s = fmt.pos_inf, qnan(fmt), fmt.sign_mask
    MAX = fmt.max_finite
    one = P(fmt, 1.0)
    h = fmt.emax // 2
    big, tiny = _pow2(h + 4), _pow2(-h - 4)          # squares overflow / underflow
    c = {}
    # --- every built-in: FTZ operands
    c["CL.geometric.ftz_operands"] = Case(
        "normalize", (_p(fmt, fmt.true_min, 0),), [0, 0], [0, 0], "CL.normalize.without_overflow",
        good_claims={"denormals": False}, bad_claims={"denormals": True})
    # --- cross
    p0, p1 = _p(fmt, 1.0, 2.0, 3.0, 7.0), _p(fmt, 4.0, 5.0, 6.0, 9.0)
    ok = _p(fmt, -3.0, 6.0, -3.0, 0)
    c["CL.cross.w_zero"] = Case("cross", (p0, p1), ok, ok[:3] + [one], "CL.cross.w_zero")
    c["CL.cross.w_positive_zero"] = Case("cross", (p0, p1), ok, ok[:3] + [s],
                                         "CL.cross.w_positive_zero", "note")
    c["CL.cross.product_overflow"] = Case(
        "cross", (_p(fmt, MAX, MAX, 1.0), _p(fmt, MAX, 2.0, MAX)), [nan] * 3, [nan] * 3,
        "ulp.cross", bad_rows=(_p(fmt, 1.0, 2.0, 1.0), _p(fmt, 3.0, 2.0, 5.0)))
    c["CL.cross.nan_operand"] = Case(
        "cross", (_p(fmt, nan, 1.0, 2.0), _p(fmt, 3.0, 4.0, 5.0)), _p(fmt, 99.0, nan, nan),
        _p(fmt, -3.0, nan, 5.0), "CL.cross.nan_operand")
    c["CL.cross.infinite_operand"] = Case(
        "cross", (_p(fmt, inf, 1.0, 0), _p(fmt, 0, 1.0, 0)), _p(fmt, 0, nan, inf),
        _p(fmt, 0, 0, inf), "CL.cross.infinite_operand", "note")
    # --- dot
    c["CL.dot.product_overflow"] = Case(
        "dot", (_p(fmt, MAX, MAX), _p(fmt, 2.0, -2.0)), [nan], [nan], "ulp.dot",
        bad_rows=(_p(fmt, 1.0, 1.0), _p(fmt, 2.0, -2.0)))
    c["CL.dot.infinite_operand"] = Case(
        "dot", (_p(fmt, inf, 1.0), _p(fmt, 1.0, 1.0)), [inf], [one], "CL.dot.infinite_operand", "note")
    rows = _inexact_product(fmt)
    cr = correct("dot", fmt, rows, 1)
    c["CL.dot.width1_correctly_rounded"] = Case(
        "dot", rows, cr, [cr[0] + 1], "CL.dot.width1_correctly_rounded")
    # --- length
    c["CL.length.inf_and_nan"] = Case("length", (_p(fmt, inf, nan),), [nan], [one],
                                      "CL.length.inf_and_nan", note_out=[inf])
    c["CL.length.infinite_element"] = Case("length", (_p(fmt, neg(fmt, inf), 1.0),), [inf], [MAX],
                                           "CL.length.infinite_element")
    rows = (_p(fmt, big, big, big),)
    c["CL.length.without_overflow"] = Case("length", rows, correct("length", fmt, rows, 3), [inf],
                                           "CL.length.without_overflow")
    # --- distance
    c["CL.distance.inf_and_nan"] = Case("distance", (_p(fmt, inf, nan), _p(fmt, 0, 0)), [nan], [one],
                                        "CL.distance.inf_and_nan", note_out=[inf])
    c["CL.distance.same_infinities"] = Case("distance", (_p(fmt, inf, 1.0), _p(fmt, inf, 2.0)), [nan],
                                            [one], "CL.distance.same_infinities", "note")
    c["CL.distance.infinite_element"] = Case(
        "distance", (_p(fmt, inf, 1.0), _p(fmt, neg(fmt, inf), 1.0)), [inf], [MAX],
        "CL.distance.infinite_element")
    rows = (_p(fmt, tiny, -tiny), _p(fmt, -tiny, tiny))
    c["CL.distance.without_overflow"] = Case("distance", rows, correct("distance", fmt, rows, 2), [0],
                                             "CL.distance.without_overflow")
    # --- normalize
    c["CL.normalize.nan"] = Case("normalize", (_p(fmt, nan, 1.0),), [nan, nan], [nan, one],
                                 "CL.normalize.nan")
    c["CL.normalize.zero_vector"] = Case("normalize", (_p(fmt, s, 0, s),), [s, 0, s],
                                         [0, P(fmt, 1.0), s], "CL.normalize.zero_vector")
    c["CL.normalize.zero_vector_sign"] = Case("normalize", (_p(fmt, s, 0, s),), [s, 0, s],
                                              [0, 0, s], "CL.normalize.zero_vector_sign", "note")
    c["CL.normalize.infinite_element"] = Case("normalize", (_p(fmt, inf, -3.0),), [one, s], [nan, nan],
                                              "CL.normalize.infinite_element")
    rows = (_p(fmt, big, -big),)
    c["CL.normalize.without_overflow"] = Case("normalize", rows, correct("normalize", fmt, rows, 2),
                                              [0, s], "CL.normalize.without_overflow")
    if fmt is not BINARY32:
        return c
    # --- fast_* (binary32 only)
    small = 0.9 * _pow2(-63)                # below sqrt(FLT_MIN), four squares above FLT_MIN
    small = float(np.float32(small))
    c["CL.fast_length.infinite_element"] = Case("fast_length", (_p(fmt, inf, 1.0),), [inf], [one],
                                                "CL.fast_length.infinite_element", "note")
    c["CL.fast_length.sum_overflow"] = Case(
        "fast_length", (_p(fmt, _pow2(70), 1.0),), [nan], [nan], "ulp.fast_length",
        bad_rows=(_p(fmt, _pow2(60), 1.0),))
    c["CL.fast_length.sum_underflow"] = Case(
        "fast_length", (_p(fmt, _pow2(-70), 0),), [one], [one], "ulp.fast_length",
        bad_rows=(_p(fmt, _pow2(-60), 0),))
    c["CL.fast_length.ftz_small_elements"] = Case(
        "fast_length", (_p(fmt, small, small, small, small),), [0], [0], "ulp.fast_length",
        good_claims={"denormals": False}, bad_claims={"denormals": True})
    c["CL.fast_distance.infinite_element"] = Case(
        "fast_distance", (_p(fmt, inf, 1.0), _p(fmt, 0, 1.0)), [inf], [one],
        "CL.fast_distance.infinite_element", "note")
    c["CL.fast_distance.sum_overflow"] = Case(
        "fast_distance", (_p(fmt, _pow2(70), 1.0), _p(fmt, 0, 1.0)), [nan], [nan], "ulp.fast_distance",
        bad_rows=(_p(fmt, _pow2(60), 1.0), _p(fmt, 0, 1.0)))
    c["CL.fast_distance.sum_underflow"] = Case(
        "fast_distance", (_p(fmt, _pow2(-70), 1.0), _p(fmt, 0, 1.0)), [one], [one],
        "ulp.fast_distance", bad_rows=(_p(fmt, 1.5, 1.0), _p(fmt, 1.0, 1.0)))
    c["CL.fast_distance.ftz_small_elements"] = Case(
        "fast_distance", (_p(fmt, small, small, small, small), _p(fmt, 0, 0, 0, 0)), [0], [0],
        "ulp.fast_distance", good_claims={"denormals": False}, bad_claims={"denormals": True})
    c["CL.fast_normalize.nan_lane"] = Case("fast_normalize", (_p(fmt, nan, 1.0),), [nan, nan],
                                           [one, nan], "CL.fast_normalize.nan_lane")
    c["CL.fast_normalize.nan_vector"] = Case("fast_normalize", (_p(fmt, nan, 1.0),), [nan, nan],
                                             [nan, one], "CL.fast_normalize.nan_vector", "note")
    c["CL.fast_normalize.infinite_element"] = Case(
        "fast_normalize", (_p(fmt, inf, 1.0),), [nan, 0], [nan, 0], "ulp.fast_normalize",
        bad_rows=(_p(fmt, 1.0, 1.0),))
    c["CL.fast_normalize.sum_overflow"] = Case(
        "fast_normalize", (_p(fmt, _pow2(70), 1.0),), [nan, 0], [nan, 0], "ulp.fast_normalize",
        bad_rows=(_p(fmt, _pow2(60), 1.0),))
    rows = (_p(fmt, _pow2(-70), _pow2(-71)),)
    c["CL.fast_normalize.sum_underflow"] = Case(
        "fast_normalize", rows, rows[0], _p(fmt, 0.5, 0.5), "ulp.fast_normalize")
    c["CL.fast_normalize.ftz_small_elements"] = Case(
        "fast_normalize", (_p(fmt, small, small, small, small),), [0, 0, 0, 0], [0, 0, 0, 0],
        "ulp.fast_normalize", good_claims={"denormals": False}, bad_claims={"denormals": True})
    # --- reference rules widening the absolute tolerance (dot, cross)
    return c


def _quantum_case(name, fmt):
    """Tiny vectors whose products are subnormal: the IEEE evaluation (numpy in the format)
    is off by more than 0.5 ulp and more than max*max*k*EPS, so only the subnormal quantum
    accepts it; 4 quanta off is rejected."""
    rng = np.random.default_rng(5)
    f = fmt.float
    e = (fmt.emin - fmt.precision + 10) // 2          # products about 2^(emin - p + 10)
    for _ in range(500):
        a = (rng.uniform(1, 2, 3) * 2.0 ** e).astype(f)
        b = (rng.uniform(1, 2, 3) * 2.0 ** e * rng.choice([-1, 1], 3)).astype(f)
        with np.errstate(all="ignore"):
            if name == "dot":
                a, b = a[:2], b[:2]
                got = (a[0] * b[0]) + (a[1] * b[1])
                lanes = [got]
            else:
                got = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
                lanes = got
        rows = ([P(fmt, float(x)) for x in a], [P(fmt, float(x)) for x in b])
        refs = ref_of(name, fmt, rows, len(a))
        out = [int(np.asarray(g, f).view(fmt.uint)) for g in lanes]
        errs = [ulp_error(g, mpf(0) if isinstance(r, Exact) else r, fmt)
                for g, r in zip(out, refs)]
        if max(errs) > 0.5:
            k = int(np.argmax(errs))
            bad = list(out)
            bad[k] += 4                                  # 4 subnormal quanta larger
            # binary64: a note up to a looser reading's tolerance (edgecases/bounds.py)
            max_abs = max(abs(float(x)) for x in np.concatenate([a, b]))
            lim = limits_of(name, fmt, len(a), max_abs)
            quantum = 3 * mpf(fmt.value(fmt.true_min)) / 2
            r = mpf(0) if isinstance(refs[k], Exact) else refs[k]
            loose = abs(mpf(fmt.value(bad[k])) - r) <= mpf(float(lim.fail_absolute[0])) + quantum
            sev = "note" if lim.note[0] and loose else "fail"
            return Case(name, rows, out, bad, f"ulp.{name}", sev)
    raise AssertionError("no tiny vector with a > 0.5 ulp IEEE error found")


def _all_cases():
    out = []
    for fmt in FMTS:
        for rid, case in _cases(fmt).items():
            out.append(pytest.param(fmt, rid, case, id=f"{fmt.name}-{rid}"))
        for name in ("dot", "cross"):
            out.append(pytest.param(fmt, f"CL.{name}.subnormal_quantum", name,
                                    id=f"{fmt.name}-CL.{name}.subnormal_quantum"))
    return out


@pytest.mark.parametrize("fmt, rid, case", _all_cases())
def test_rule_passes_right_and_flags_wrong(fmt, rid, case):
    if isinstance(case, str):
        case = _quantum_case(case, fmt)
    width = len(case.rows[0])
    good = run(case.name, fmt, case.rows, case.good, width, **(case.good_claims or {}))
    assert not good.failures, good.findings
    assert rid not in ids(good)
    bad = run(case.name, fmt, case.bad_rows or case.rows, case.bad, width, **(case.bad_claims or {}))
    hits = [f for f in bad.findings if f.rule_id == case.bad_rule]
    assert hits and hits[0].severity == case.bad_severity, bad.findings
    if case.bad_severity == "note":
        assert not bad.failures, bad.findings
    if case.note_out is not None:
        noted = run(case.name, fmt, case.rows, case.note_out, width)
        assert not noted.failures and rid in ids(noted, "note"), noted.findings
    kind = {r.id: r.kind for r in geometric.rules()}[rid]
    if kind in ("undefined", "allowance", "ftz"):
        assert not good.findings
    if kind in ("undefined", "ftz"):
        # the same result, flagged where the rule does not apply (bad_rows / bad_claims)
        assert case.bad == case.good and (case.bad_rows is not None or case.bad_claims is not None)


def test_every_rule_has_a_case():
    covered = set()
    for fmt in FMTS:
        covered |= set(_cases(fmt))
    covered |= {"CL.dot.subnormal_quantum", "CL.cross.subnormal_quantum"}
    assert {r.id for r in geometric.rules()} == covered


def test_subnormal_quantum_is_what_accepts_the_ieee_result():
    """The IEEE result of the quantum cases is outside the table's own tolerance."""
    for name in ("dot", "cross"):
        case = _quantum_case(name, BINARY32)
        refs = ref_of(name, BINARY32, case.rows, len(case.rows[0]))
        max_abs = max(abs(BINARY32.value(b)) for r in case.rows for b in r[:3])
        tol = float(limits_of(name, BINARY32, len(case.rows[0]), max_abs).absolute[0])
        errs = [abs(mpf(BINARY32.value(g)) - (mpf(0) if isinstance(r, Exact) else r))
                for g, r in zip(case.good, refs)]
        assert max(errs) > tol


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_cross_w_is_zero_even_for_nan_and_inf_w_inputs(fmt):
    p0 = _p(fmt, 1.0, 2.0, 3.0, qnan(fmt))
    p1 = _p(fmt, 4.0, 5.0, 6.0, fmt.pos_inf)
    ok = _p(fmt, -3.0, 6.0, -3.0, 0)
    assert not run("cross", fmt, (p0, p1), ok).findings
    bad = run("cross", fmt, (p0, p1), ok[:3] + [qnan(fmt)])
    assert "CL.cross.w_zero" in ids(bad, "fail")


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_cross_w_is_judged_where_the_xyz_products_overflow(fmt):
    """CL.cross.product_overflow leaves the xyz lanes unjudged, not the w lane (found by
    tests/test_second_opinion.py)."""
    big = fmt.value(fmt.max_finite)
    p0 = _p(fmt, 2.0, 1.0, 3.0, 0.0)
    p1 = _p(fmt, 1.0, 0.0, big, fmt.pos_inf)
    xyz = _p(fmt, 1.0, 2.0, 3.0, 0.0)[:3]             # any xyz: not judged here
    good = run("cross", fmt, (p0, p1), xyz + [0])
    assert not ids(good, "fail") and good.unjudged == 1
    bad = run("cross", fmt, (p0, p1), xyz + [fmt.bits_of(1.0)])
    assert ids(bad, "fail") == {"CL.cross.w_zero"}


@pytest.mark.parametrize("name, rows", [
    ("dot", lambda f: (_p(f, 1.0, qnan(f)), _p(f, 1.0, 2.0))),
    ("length", lambda f: (_p(f, 1.0, snan(f)),)),
    ("distance", lambda f: (_p(f, 1.0, 2.0), _p(f, qnan(f), 2.0))),
    ("fast_length", lambda f: (_p(f, qnan(f), 2.0),)),
    ("fast_distance", lambda f: (_p(f, 1.0, 2.0), _p(f, 3.0, snan(f)))),
])
def test_nan_in_nan_out_for_scalar_results(name, rows):
    f = BINARY32
    r = rows(f)
    nan_lane = next(b for row in r for b in row if formats.is_nan(np.asarray([b], f.uint), f)[0])
    assert not run(name, f, r, [nan_lane | f.quiet_bit]).findings
    rule = "CL.nan.signaling_stays_nan" if nan_lane & f.quiet_bit == 0 else "F9.G10"
    assert ids(run(name, f, r, [P(f, 1.0)]), "fail") == {rule}


def test_quiet_nan_stays_quiet_and_signaling_should_quiet():
    f = BINARY32
    got = [snan(f), snan(f)]
    r = run("normalize", f, (_p(f, qnan(f), 1.0),), got)
    assert ids(r, "fail") == {"CL.nan.quiet_stays_quiet"}
    r = run("normalize", f, (_p(f, snan(f), 1.0),), got)
    assert not r.failures and ids(r) == {"CL.nan.signaling_should_quiet"}
    assert not run("normalize", f, (_p(f, snan(f), 1.0),), [qnan(f)] * 2).findings
    assert "CL.nan.quiet_stays_quiet" in ids(run("length", f, (_p(f, qnan(f), 1.0),), [snan(f)]))


def test_two_nan_operands_return_one_of_them_or_a_note():
    f = BINARY32
    a, b = qnan(f) | 0x123, qnan(f) | 0x456
    rows = (_p(f, a, 1.0), _p(f, 2.0, b))
    assert not run("dot", f, rows, [b]).findings
    r = run("dot", f, rows, [qnan(f) | 0x789])
    assert not r.failures and ids(r) == {"CL.nan.one_of_operands"}


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_zero_of_the_other_sign_is_a_note(fmt):
    s = fmt.sign_mask
    r = run("length", fmt, (_p(fmt, s, s),), [s])
    assert ids(r) == {"ieee.zero_sign"} and not r.failures
    r = run("normalize", fmt, (_p(fmt, fmt.pos_inf, -3.0),), [P(fmt, 1.0), 0])
    assert ids(r) == {"ieee.zero_sign"} and not r.failures


def test_unresolved_when_the_two_precisions_disagree():
    f = BINARY32
    rows = (_p(f, 1.0, 1.0),)
    good = correct("length", f, rows, 2)
    r = run("length", f, rows, good, prec=12)   # sqrt(2) to 12 bits is 1000 ulps off
    assert ids(r) == {"unresolved"} and not r.failures
    assert not run("length", f, rows, good).findings


# --------------------------------------------------------------------------- bounds
def _edge(ok, good: int, bad: int):
    """(last pattern with ok, first without) between ``good`` (ok) and ``bad`` (not ok),
    either order, by bisection (ok is monotone on each side of the reference)."""
    assert ok(good) and not ok(bad)
    while abs(bad - good) > 1:
        mid = (good + bad) // 2
        if ok(mid):
            good = mid
        else:
            bad = mid
    return good, bad


def _ulp_edges(fmt, ref, ulps):
    """Patterns at the ULP bound above and below the reference: ((inside, outside) above,
    (inside, outside) below).  The gap near ref is at least ulp(ref) above and at least
    half of it below, so int(ulps) + 2 (twice that below) patterns away are outside."""
    r = round_to_bits(ref, fmt, "rte")
    ok = lambda g: ulp_error(g, ref, fmt) <= ulps  # noqa: E731
    return _edge(ok, r, r + int(ulps) + 2), _edge(ok, r, r - 2 * int(ulps) - 4)


ULP_FUNCTIONS = [(n, f) for n in ("length", "distance", "normalize", "fast_length",
                                  "fast_distance", "fast_normalize")
                 for f in FMTS if f.name in catalogue.function(n).precisions]


@pytest.mark.parametrize("name, fmt", ULP_FUNCTIONS, ids=lambda x: getattr(x, "name", x))
@pytest.mark.parametrize("width", [1, 2, 3, 4])
def test_ulp_bound_inside_passes_outside_fails(name, fmt, width):
    fn = catalogue.function(name)
    vals = [1.5, -2.75, 0.625, 3.25][:width]
    rows = [_p(fmt, *vals)]
    if len(fn.inputs) == 2:
        rows.append(_p(fmt, *[0.25 * (k + 1) for k in range(width)]))
    rows = tuple(rows)
    refs = ref_of(name, fmt, rows, width)
    base = [rnd(e, fmt) for e in refs]
    lim = limits_of(name, fmt, width)
    strict = float(lim.ulps[0])
    # where the bound has a note band (binary64's two column readings), failures start
    # beyond the looser value and the band between is a note
    ulps = float(lim.fail_ulps[0]) if lim.note[0] else strict
    assert 0 < strict <= ulps < 10_000
    assert refs[0] > 0
    if lim.note[0]:
        inside, outside = next(iter(_ulp_edges(fmt, refs[0], strict)))
        res = run(name, fmt, rows, [outside] + base[1:])
        assert not res.failures and [f.severity for f in res.findings] == ["note"]
    for inside, outside in _ulp_edges(fmt, refs[0], ulps):   # above, then below
        assert ulp_error(inside, refs[0], fmt) <= ulps < ulp_error(outside, refs[0], fmt)
        ok = run(name, fmt, rows, [inside] + base[1:])
        assert not (ok.failures if lim.note[0] else ok.findings)
        bad = run(name, fmt, rows, [outside] + base[1:])
        assert [f.rule_id for f in bad.failures] == [f"ulp.{name}"]
        assert bad.failures[0].ulp_error == pytest.approx(ulp_error(outside, refs[0], fmt))


def _abs_edge(fmt, ref, tol):
    """(inside, outside) of the absolute tolerance above the reference."""
    ok = lambda g: abs(mpf(fmt.value(g)) - ref) <= tol  # noqa: E731
    return _edge(ok, round_to_bits(ref, fmt, "rte"), round_to_bits(ref + 2 * tol, fmt, "rtp") + 1)


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
@pytest.mark.parametrize("name, width",
                         [("dot", 2), ("dot", 3), ("dot", 4), ("cross", 3), ("cross", 4)])
def test_absolute_bound_inside_passes_outside_fails(fmt, name, width):
    vals0 = _p(fmt, 1.5, 1.25, 1.75, 1.125)[:width]
    vals1 = _p(fmt, 1.375, -1.625, 1.0625, 1.5)[:width]
    rows = (vals0, vals1)
    refs = ref_of(name, fmt, rows, width)
    base = [rnd(e, fmt) for e in refs]
    used = 3 if name == "cross" else width             # cross: p0.xyz and p1.xyz
    max_abs = max(abs(fmt.value(b)) for r in rows for b in r[:used])
    lim = limits_of(name, fmt, width, max_abs)
    k = 3 if name == "cross" else 2 * width - 1
    quantum = k * mpf(fmt.value(fmt.true_min)) / 2
    tol = mpf(float(lim.absolute[0])) + quantum
    # lane 0 (cross: x) walked to the edge of the strict tolerance
    ref = refs[0]
    inside, outside = _abs_edge(fmt, ref, tol)
    assert inside > base[0]
    assert not run(name, fmt, rows, [inside] + base[1:]).findings
    bad = run(name, fmt, rows, [outside] + base[1:])
    severity = "note" if bool(lim.note[0]) else "fail"
    assert [f.severity for f in bad.findings if f.rule_id == f"ulp.{name}"] == [severity]
    if severity == "note":  # binary64: a looser reading (HLF_EPSILON) bounds the note band
        loose = mpf(float(lim.fail_absolute[0])) + quantum
        far = round_to_bits(ref + 2 * loose, fmt, "rte")
        assert "ulp." + name in ids(run(name, fmt, rows, [far] + base[1:]), "fail")


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_dot_width1_rounding_mode_of_the_device(fmt):
    rows = _inexact_product(fmt)
    (r,) = ref_of("dot", fmt, rows, 1)
    rte, rtz = round_to_bits(r, fmt, "rte"), round_to_bits(r, fmt, "rtz")
    assert rte != rtz
    assert not run("dot", fmt, rows, [rtz], rounding=("rtz",)).findings
    assert run("dot", fmt, rows, [rtz], rounding=("rte",)).failures
    assert run("dot", fmt, rows, [rte], rounding=("rtz",)).failures


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_absolute_tolerance_is_exact_beyond_float64(fmt):
    """max * max beyond float64's range (binary64): the tolerance stays finite (scaled by
    the exact max^2), so an infinite result of finite products is still a failure."""
    e = fmt.emax // 2 + 20
    rows = (_p(fmt, math.ldexp(1.5, e), math.ldexp(1.25, e)),
            _p(fmt, math.ldexp(1.0, -e // 2), math.ldexp(-1.0, -e // 2)))
    base = correct("dot", fmt, rows, 2)
    assert not run("dot", fmt, rows, base).findings
    assert "ulp.dot" in ids(run("dot", fmt, rows, [fmt.pos_inf]), "fail")


def test_embedded_profile_exceeding_is_a_note():
    f = BINARY32
    rows = (_p(f, 1.5, -2.75),)
    base = correct("length", f, rows, 2)
    far = [base[0] + 100]
    assert run("length", f, rows, far).failures
    r = run("length", f, rows, far, profile="embedded")
    assert not r.failures and "ulp.length" in ids(r, "note")


def test_relaxed_claims_pick_the_relaxed_table():
    f = BINARY32
    rows = (_p(f, 1.5, -2.75),)
    base = correct("length", f, rows, 2)
    ins = {"p": np.asarray(rows[0], f.uint)}
    r = geometric.check("length", ins, {"ret": np.asarray([base[0] + 100], f.uint)},
                        Claims(relaxed=True), 2)
    assert r.failures and "relaxed" in r.failures[0].section


# --------------------------------------------------------------------------- FTZ
def test_subnormal_result_lane_may_be_flushed_only_without_denormals():
    f = BINARY32
    rows = (_p(f, 1.0, _pow2(-140)),)
    out = [P(f, 1.0), 0]
    assert not run("normalize", f, rows, out, denormals=False).findings
    assert run("normalize", f, rows, out, denormals=True).failures


def test_dot_width1_subnormal_product_flushed_without_denormals():
    f = BINARY32
    rows = (_p(f, _pow2(-70)), _p(f, _pow2(-70) * 1.5))
    assert not run("dot", f, rows, [0], denormals=False).failures
    assert run("dot", f, rows, [0], denormals=True).failures


def test_ftz_subnormal_operand_either_flushed_zero_sign():
    f = BINARY32
    rows = (_p(f, neg(f, 5), 0),)          # a negative subnormal and +0
    for out in ([0, 0], [f.sign_mask, 0]):
        assert not run("normalize", f, rows, out, denormals=False).findings
    r = run("normalize", f, rows, [0, f.sign_mask], denormals=False)   # the +0 lane's sign
    assert not r.failures and ids(r) == {"CL.normalize.zero_vector_sign"}


# --------------------------------------------------------------------------- check()
def test_findings_carry_vector_index_and_flattened_lanes():
    f = BINARY32
    p0 = _p(f, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
    p1 = _p(f, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0)
    good = correct("dot", f, (p0[:3], p1[:3]), 3) + correct("dot", f, (p0[3:], p1[3:]), 3)
    out = [good[0], good[1] + 1000]
    r = geometric.check("dot", {"p0": np.asarray(p0, f.uint), "p1": np.asarray(p1, f.uint)},
                        {"ret": np.asarray(out, f.uint)}, Claims(), 3)
    assert r.n == 2 and [x.index for x in r.findings] == [1]
    x = r.findings[0]
    assert x.inputs == tuple(p0[3:] + p1[3:]) and x.outputs == (out[1],) and x.output == "ret"
    assert x.function == "dot" and x.section and x.sentence and x.ulp_error > 0
    assert r.exact == 2 and r.max_ulp_error == pytest.approx(x.ulp_error)


def test_check_validates_arguments():
    f = BINARY32
    ins = {"p": np.zeros(6, f.uint)}
    with pytest.raises(GeometricError, match="width=5"):
        geometric.check("length", ins, {"ret": np.zeros(2, f.uint)}, Claims(), 5)
    with pytest.raises(GeometricError, match="outputs"):
        geometric.check("length", ins, {"ret": np.zeros(3, f.uint)}, Claims(), 3)
    with pytest.raises(GeometricError, match="multiple"):
        geometric.check("length", ins, {"ret": np.zeros(2, f.uint)}, Claims(), 4)
    with pytest.raises(GeometricError, match="binary32"):
        geometric.check("fast_length", {"p": np.zeros(2, np.uint64)}, {"ret": np.zeros(1, np.uint64)},
                        Claims("binary64"), 2)
    with pytest.raises(GeometricError, match="not a geometric"):
        geometric.check("sin", {"x": np.zeros(1, f.uint)}, {"ret": np.zeros(1, f.uint)}, Claims(), 1)
    assert geometric.check("length", {"p": np.zeros(0, f.uint)}, {"ret": np.zeros(0, f.uint)},
                           Claims(), 2).n == 0


@pytest.mark.parametrize("name", geometric.GEOMETRIC)
def test_correctly_rounded_results_pass_on_the_special_pool(name):
    """No false verdicts: the rounded reference passes every landmark vector (binary16 too)."""
    fn = catalogue.function(name)
    for fmt in (BINARY16, BINARY32, BINARY64):
        if fmt.name not in fn.precisions:
            continue
        width = max(fn.widths)
        ins = geometric.special_inputs(name, fmt, width)
        if len(fn.inputs) == 2:  # a slice of the pairs keeps the test fast
            ins = {k: v[: 150 * width] for k, v in ins.items()}
        mats = {k: v.reshape(-1, width) for k, v in ins.items()}
        refs = geometric.reference(name, mats, fmt, width, PREC[fmt])
        out = [rnd(e, fmt) if e is not NOT_JUDGED else 0
               for r in refs for e in (r if isinstance(r, tuple) else (r,))]
        for den in (True, False):
            res = geometric.check(name, ins, {"ret": np.asarray(out, np.uint64).astype(fmt.uint)},
                                  Claims(fmt.name, denormals=den), width)
            assert not res.failures, (fmt.name, den, res.failures[:3])


# --------------------------------------------------------------------------- inputs
def _classes(name, fmt, width, ins):
    mats = [v.reshape(-1, width) for v in ins.values()]
    seen = set()
    for rows in zip(*mats):
        facts = geometric._facts(name, tuple(tuple(int(b) for b in r) for r in rows), fmt, width)
        lanes = np.concatenate(rows)
        if facts.all_zero:
            seen.add("zero")
        if formats.is_qnan(lanes, fmt).any():
            seen.add("qnan")
        if formats.is_snan(lanes, fmt).any():
            seen.add("snan")
        if facts.any_inf:
            seen.add("inf")
        if formats.is_subnormal(lanes, fmt).any():
            seen.add("subnormal")
        if facts.s is not None and facts.s > fmt.value(fmt.max_finite):
            seen.add("sum_overflows")
        if facts.s is not None and 0 < facts.s < fmt.value(fmt.min_normal):
            seen.add("sum_underflows")
        if facts.s is not None and fmt.value(fmt.min_normal) < facts.s < 1e6:
            seen.add("ordinary")
    return seen


ALL_CLASSES = {"zero", "qnan", "snan", "inf", "subnormal", "sum_overflows", "sum_underflows",
               "ordinary"}


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
@pytest.mark.parametrize("width", [1, 2, 4])
def test_special_inputs_reach_every_class(fmt, width):
    ins = geometric.special_inputs("length", fmt, width)
    assert ins["p"].dtype == fmt.uint and ins["p"].size % width == 0
    assert _classes("length", fmt, width, ins) == ALL_CLASSES
    two = geometric.special_inputs("dot", fmt, width)
    assert two["p0"].size == two["p1"].size == (ins["p"].size // width) ** 2 * width


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_random_inputs_are_deterministic_and_reach_every_class(fmt):
    a = geometric.inputs("distance", fmt, 3, 500, seed=42)
    b = geometric.inputs("distance", fmt, 3, 500, seed=42)
    c = geometric.inputs("distance", fmt, 3, 500, seed=43)
    assert set(a) == {"p0", "p1"} and a["p0"].dtype == fmt.uint and a["p0"].size == 1500
    assert all(np.array_equal(a[k], b[k]) for k in a) and not np.array_equal(a["p0"], c["p0"])
    one = geometric.inputs("length", fmt, 3, 500, seed=42)
    assert _classes("length", fmt, 3, one) == ALL_CLASSES
    with pytest.raises(GeometricError, match="width=2"):
        geometric.inputs("cross", fmt, 2, 5, seed=1)


# --------------------------------------------------------------------------- build options
def _claims(**kw):
    return Claims("binary32", **kw)


def _check1(name, rows, out, claims, width=None):
    f = BINARY32
    fn = catalogue.function(name)
    ins = {a.name: np.asarray(r, f.uint) for a, r in zip(fn.inputs, rows)}
    return geometric.check(fn, ins, {"ret": np.asarray(out, f.uint)}, claims, width or len(rows[0]))


def test_finite_math_and_no_inf_nan_leave_specials_unjudged():
    f = BINARY32
    rows = (_p(f, f.pos_inf, 1.0),)
    assert _check1("length", rows, [P(f, 1.0)], _claims()).failures
    for claims in (_claims(finite_math=True), _claims(inf_nan=False)):
        r = _check1("length", rows, [P(f, 1.0)], claims)
        assert not r.findings and r.unjudged == 1
        # a finite vector whose length overflows: the result is assumed finite
        big = (_p(f, 1.5 * _pow2(127), 1.5 * _pow2(127)),)
        r = _check1("length", big, [f.max_finite], claims)
        assert not r.findings and r.unjudged == 1
    big = (_p(f, 1.5 * _pow2(127), 1.5 * _pow2(127)),)
    assert _check1("length", big, [f.max_finite], _claims()).failures


def test_relaxed_build_turns_edge_case_failures_into_notes():
    f = BINARY32
    zero = (_p(f, f.sign_mask, 0),)
    assert _check1("normalize", zero, [qnan(f), 0], _claims()).failures
    r = _check1("normalize", zero, [qnan(f), 0], _claims(relaxed=True))
    assert not r.failures and ids(r, "note") == {"CL.normalize.zero_vector"}
    assert "unsafe-math" in r.findings[0].reading
    inf = (_p(f, f.pos_inf, -3.0),)
    r = _check1("normalize", inf, [qnan(f), qnan(f)], _claims(relaxed=True))
    assert not r.failures and ids(r, "note") == {"CL.normalize.infinite_element"}
    # an ordinary vector is still judged by the (relaxed) bound
    rows = (_p(f, 1.5, -2.75),)
    base = correct("length", f, rows, 2)
    assert "ulp.length" in ids(_check1("length", rows, [base[0] + 100], _claims(relaxed=True)), "fail")
    # NaN propagation is not an edge case the relaxed build may break here
    assert "F9.G10" in ids(_check1("dot", (_p(f, qnan(f)), _p(f, 1.0)), [P(f, 1.0)],
                                   _claims(relaxed=True)), "fail")


def test_no_signed_zeros_ignores_the_sign_of_zeros():
    f = BINARY32
    s = f.sign_mask
    zero = (_p(f, s, 0),)
    assert ids(_check1("normalize", zero, [0, 0], _claims())) == {"CL.normalize.zero_vector_sign"}
    assert not _check1("normalize", zero, [0, 0], _claims(signed_zeros=False)).findings
    assert "ieee.zero_sign" in ids(_check1("length", zero, [s], _claims()))
    assert not _check1("length", zero, [s], _claims(signed_zeros=False)).findings
    p0, p1 = _p(f, 1.0, 2.0, 3.0, 7.0), _p(f, 4.0, 5.0, 6.0, 9.0)
    out = _p(f, -3.0, 6.0, -3.0, s)
    assert "CL.cross.w_positive_zero" in ids(_check1("cross", (p0, p1), out, _claims()))
    assert not _check1("cross", (p0, p1), out, _claims(signed_zeros=False)).findings


def test_ftz_device_may_flush_subnormal_products_of_dot():
    """CL.dot.subnormal_quantum without CL_FP_DENORM: products below the smallest normal may
    be flushed (a quantum of min_normal per rounding), with denormals they may not."""
    f = BINARY32
    x = float(np.float32(0.75 * _pow2(-63)))      # x*x is about 0.56 * FLT_MIN: subnormal
    rows = (_p(f, x, x, x, x), _p(f, x, x, x, x))  # the dot is about 2.25 * FLT_MIN: normal
    (ref,) = ref_of("dot", f, rows, 4)
    assert ref > f.value(f.min_normal)
    assert not run("dot", f, rows, [0], denormals=False).failures
    assert "ulp.dot" in ids(run("dot", f, rows, [0], denormals=True), "fail")
    assert not run("dot", f, rows, correct("dot", f, rows, 4), denormals=True).findings


@pytest.mark.parametrize("fmt", FMTS, ids=lambda f: f.name)
def test_infinite_operand_with_an_overflowing_product_is_not_judged(fmt):
    """dot((inf, 2^k), (-1, 2^k)) with 2^2k beyond the range: -inf meets the product's
    overflow (+inf) in IEEE evaluation (NaN), -inf mathematically: neither is a finding;
    without the overflow the IEEE result (-inf) is expected (a note otherwise)."""
    inf, e = fmt.pos_inf, fmt.emax // 2 + 2
    rows = (_p(fmt, inf, _pow2(e)), _p(fmt, -1.0, _pow2(e)))
    for out in (qnan(fmt), neg(fmt, inf), P(fmt, 1.0)):
        assert not run("dot", fmt, rows, [out]).findings
    rows = (_p(fmt, inf, 2.0), _p(fmt, -1.0, 2.0))
    assert not run("dot", fmt, rows, [neg(fmt, inf)]).findings
    assert ids(run("dot", fmt, rows, [qnan(fmt)]), "note") == {"CL.dot.infinite_operand"}
    # cross lane y = p0.z*p1.x - p0.x*p1.z = 2^2e - inf: NaN (IEEE) or -inf (exactly)
    p0, p1 = _p(fmt, inf, 1.0, _pow2(e)), _p(fmt, _pow2(e), 0, 1.0)
    for y in (qnan(fmt), neg(fmt, inf)):
        assert not run("cross", fmt, (p0, p1), [0, y, qnan(fmt)]).findings
    assert ids(run("cross", fmt, (p0, p1), [0, y, 0]), "note") == {"CL.cross.infinite_operand"}
