"""The checker: every rule flags a synthetic wrong result and passes a right one; every ULP
bound flags a result just outside it and passes one inside; the general rules and the
flush-to-zero allowances.  No device needed."""
import numpy as np
import pytest

from edgecases import catalogue
from edgecases.predicates import evaluate
from fuzzfarm.checker import Claims, check_batch
from fuzzfarm.formats import BINARY32
from fuzzfarm.oracle import EXACT_FUNCTIONS, Exact, reference, round_to_bits
from fuzzfarm.units import special_inputs

F = BINARY32
CLAIMS = Claims()
CONSTS = CLAIMS.consts
QNAN = 0x7FC00000
ONE, TWO_ = 0x3F800000, 0x40000000


def _applies(rule, fn, inputs):
    mask = np.ones(len(next(iter(inputs.values()))), bool)
    kinds = {a.name: a.kind for a in fn.inputs}
    for arg, word in rule.when:
        mask &= evaluate(word, inputs[arg], kinds[arg], F)
    return mask


def _right(spec, args):
    """A result the spec accepts."""
    if spec.kind == "nan":
        return QNAN
    if spec.kind == "any_zero":
        return 0x80000000
    if spec.kind == "one_of":
        return _right(spec.choices[0], args)
    return int(spec.expected_bits({k: np.asarray([v]) for k, v in args.items()}, F, CONSTS)[0])


def _wrong(spec, args, int_output):
    """A result the spec rejects."""
    one = {k: np.asarray([v]) for k, v in args.items()}
    if int_output:
        cands = [12345, -7]
    else:
        base = _right(spec, args)
        cands = [base ^ F.sign_mask, (base + 1) & 0xFFFFFFFF, ONE, TWO_, QNAN]
    for c in cands:
        got = np.asarray([c], np.int32 if int_output else F.uint)
        if not spec.matches(got, one, F, CONSTS)[0]:
            return c
    raise AssertionError(f"no wrong result found for {spec.text}")


def _outputs_for(fn, rule, i, inputs, choose):
    """Outputs for element i: the rule's outputs by ``choose``, the others from the
    reference (so only the rule under test can object)."""
    args = {k: int(v[i]) for k, v in inputs.items()}
    outs = {}
    for o in fn.outputs:
        if o.name in rule.results:
            outs[o.name] = choose(rule.results[o.name], args, o.kind == "int")
        elif any(a.kind == "float" and (args[a.name] & F.abs_mask) > F.exp_mask
                 for a in fn.inputs):
            outs[o.name] = 0 if o.kind == "int" else QNAN  # unspecified / G10
        else:
            ref = reference(fn.name, tuple(args.values()), tuple(a.kind for a in fn.inputs), F, 96)
            k = [x.name for x in fn.outputs].index(o.name)
            r = ref[k] if k < len(ref) else None
            outs[o.name] = int(r.bits) if isinstance(r, Exact) else (
                QNAN if r is None else round_to_bits(r, F))
    return outs


def _batch(fn, inputs, idx, outs_list):
    ins = {k: v[idx] for k, v in inputs.items()}
    outs = {}
    for o in fn.outputs:
        dt = np.int32 if o.kind == "int" else F.uint
        outs[o.name] = np.asarray([np.int64(d[o.name]) for d in outs_list]).astype(dt)
    return ins, outs


@pytest.mark.parametrize("rule", catalogue.rules(), ids=lambda r: r.id)
def test_rule_flags_wrong_and_passes_right(rule):
    fn = catalogue.function(rule.function)
    inputs = special_inputs(fn, F)
    idx = np.nonzero(_applies(rule, fn, inputs))[0]
    assert idx.size, f"no special input satisfies {rule.id}"
    idx = idx[np.linspace(0, idx.size - 1, min(idx.size, 6)).astype(int)]
    right = [_outputs_for(fn, rule, i, inputs, lambda s, a, k: _right(s, a)) for i in idx]
    ins, outs = _batch(fn, inputs, idx, right)
    res = check_batch(fn, ins, outs, CLAIMS)
    bad = [f for f in res.findings if f.rule_id == rule.id or
           (f.severity == "fail" and f.output in rule.results)]
    assert not bad, bad[:2]
    wrong = [_outputs_for(fn, rule, i, inputs, _wrong) for i in idx]
    ins, outs = _batch(fn, inputs, idx, wrong)
    res = check_batch(fn, ins, outs, CLAIMS)
    flagged = {f.index for f in res.findings if f.rule_id == rule.id and f.severity == rule.severity}
    assert flagged == set(range(len(idx))), (rule.id, res.findings[:2])


def test_sinpi_of_one_returning_negative_zero_is_flagged_with_the_rule():
    fn = catalogue.function("sinpi")
    res = check_batch(fn, {"x": np.asarray([0x3F800000], F.uint)},
                      {"ret": np.asarray([0x80000000], F.uint)})
    [f] = res.failures
    assert f.rule_id == "CL.sinpi.positive_integer"
    assert f.sentence == "sinpi( +n) returns +0 for positive integers n."
    assert f.inputs == (0x3F800000,) and f.outputs == (0x80000000,)


def _normal_input(fn, rng):
    vals = {}
    for a in fn.inputs:
        if a.kind == "int":
            vals[a.name] = int(rng.integers(2, 6))
        else:
            vals[a.name] = F.bits_of(float(np.float32(rng.uniform(0.3, 0.9))))
    return vals


@pytest.mark.parametrize("name", list(catalogue.functions()))
def test_ulp_bound_known_good_and_known_bad(name):
    """Inside the bound passes; just outside it fails with the bound's rule."""
    fn = catalogue.function(name)
    b = catalogue.bound(name)
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    args = _normal_input(fn, rng)
    kinds = tuple(a.kind for a in fn.inputs)
    ref = reference(name, tuple(args.values()), kinds, F, 128)
    good, bad = {}, {}
    for k, o in enumerate(fn.outputs):
        r = ref[k]
        g = int(r.bits) if isinstance(r, Exact) else round_to_bits(r, F)
        good[o.name] = g
        if o.kind == "int":
            bad[o.name] = g + 1
        elif b.correctly_rounded or b.ulps == 0:
            bad[o.name] = g + 1
        else:
            bad[o.name] = g + int(b.ulps) + 2
    ins = {k: np.asarray([v], np.int32 if kind == "int" else F.uint)
           for (k, v), kind in zip(args.items(), kinds)}
    mk = lambda d: {o.name: np.asarray([d[o.name]], np.int32 if o.kind == "int" else F.uint)
                    for o in fn.outputs}
    assert check_batch(fn, ins, mk(good)).findings == []
    res = check_batch(fn, ins, mk(bad))
    assert res.failures, name
    ruled = {r.id for r in catalogue.rules_for(name) if _applies(r, fn, ins)[0]}
    assert {f.rule_id for f in res.failures} == (ruled or {f"ulp.{name}"})
    ulps = [f.ulp_error for f in res.failures if f.ulp_error is not None]
    if not (b.correctly_rounded or b.ulps == 0) and ulps:
        assert min(ulps) > b.ulps


def test_ulp_bound_edge_is_inclusive():
    fn = catalogue.function("exp2")  # exp2(3) = 8 exactly; the bound is 3 ulp
    x = np.asarray([F.bits_of(3.0)], F.uint)
    eight = F.bits_of(8.0)
    # 8 is a power of two: the unit is the gap below (2**-21), so +1 step above is 2 ulp
    assert not check_batch(fn, {"x": x}, {"ret": np.asarray([eight + 1], F.uint)}).failures
    assert not check_batch(fn, {"x": x}, {"ret": np.asarray([eight - 3], F.uint)}).failures
    assert check_batch(fn, {"x": x}, {"ret": np.asarray([eight - 4], F.uint)}).failures
    assert check_batch(fn, {"x": x}, {"ret": np.asarray([eight + 2], F.uint)}).failures


def test_nan_argument_must_give_nan_and_quiet_stays_quiet():
    fn = catalogue.function("sin")
    x = np.asarray([0x7FC00001, 0x7FC00001, 0xFF800001, 0x7FC00000], F.uint)
    out = np.asarray([0x7FC00001, ONE, 0x7FC00000, 0x7F800002], F.uint)
    res = check_batch(fn, {"x": x}, {"ret": out})
    rules = {(f.index, f.rule_id) for f in res.findings}
    assert rules == {(1, "F9.G10"), (3, "CL.nan.quiet_stays_quiet")}


def test_domain_error_and_overflow():
    fn = catalogue.function("exp")
    x = np.asarray([F.bits_of(100.0), F.bits_of(88.0)], F.uint)
    out = np.asarray([F.pos_inf, F.pos_inf], F.uint)   # exp(88) ~ 1.65e38 is finite
    res = check_batch(fn, {"x": x}, {"ret": out})
    assert [f.index for f in res.failures] == [1]


def test_zero_of_wrong_sign_outside_rules_is_a_note():
    fn = catalogue.function("round")   # round(0.25) = +0 by IEEE sign rules, no F.9 row
    res = check_batch(fn, {"x": np.asarray([F.bits_of(0.25)], F.uint)},
                      {"ret": np.asarray([0x80000000], F.uint)})
    assert [(f.rule_id, f.severity) for f in res.findings] == [("ieee.zero_sign", "note")]


FTZ = Claims(denormals=False)


def test_ftz_allows_flushing_subnormal_results_and_operands():
    exp = catalogue.function("exp")
    x = np.asarray([F.bits_of(-100.0)], F.uint)  # exp(-100) ~ 3.7e-44 is subnormal
    zero = np.asarray([0x80000000], F.uint)
    assert check_batch(exp, {"x": x}, {"ret": zero}, CLAIMS).failures
    assert not check_batch(exp, {"x": x}, {"ret": zero}, FTZ).failures
    sin = catalogue.function("sin")
    sub = np.asarray([0x00000010], F.uint)
    assert check_batch(sin, {"x": sub}, {"ret": np.asarray([0x80000000], F.uint)}, CLAIMS).failures
    assert not check_batch(sin, {"x": sub}, {"ret": np.asarray([0x80000000], F.uint)}, FTZ).failures
    # a normal wrong answer stays wrong on an FTZ device
    assert check_batch(sin, {"x": sub}, {"ret": np.asarray([ONE], F.uint)}, FTZ).failures


def test_ftz_nextafter_alternatives():
    fn = catalogue.function("nextafter")
    ins = {"x": np.asarray([0x80000000], F.uint), "y": np.asarray([ONE], F.uint)}
    normal = {"ret": np.asarray([F.min_normal], F.uint)}
    assert check_batch(fn, ins, normal, CLAIMS).failures
    assert not check_batch(fn, ins, normal, FTZ).failures


def test_exact_functions_cover_their_reference():
    assert set(EXACT_FUNCTIONS) <= set(catalogue.functions())
