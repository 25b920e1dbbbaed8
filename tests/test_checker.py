"""The checker: every rule flags a synthetic wrong result and passes a right one; every ULP
bound flags a result just outside it and passes one inside; the general rules and the
flush-to-zero allowances.  No device needed."""
import numpy as np
import pytest

from edgecases import bounds, catalogue
from edgecases.predicates import evaluate
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.formats import BINARY32, format_named
from fuzzfarm.device.kernels import buffer_dtype
from fuzzfarm.oracle import (EXACT_FUNCTIONS, Congruent, Exact, OneOf, Unspecified, reference,
                             round_to_bits)
from strategies import special_inputs

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
            outs[o.name] = _right_value(r, o)
    return outs


def _right_value(r, o, fmt=F):
    """A conforming output for reference ``r`` (any of the oracle's result types)."""
    if r is Unspecified:
        return 0
    if isinstance(r, OneOf):
        return int(r.choices[0].bits)
    if isinstance(r, Congruent):
        return int(r.value) if o.kind == "int" else 0
    if isinstance(r, Exact):
        return int(r.bits)
    return (fmt.default_qnan if r is None else round_to_bits(r, fmt))


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


def _normal_input(fn, rng, fmt=F):
    vals = {}
    for a in fn.inputs:
        if a.kind == "int":
            vals[a.name] = int(rng.integers(2, 6))
        elif a.kind == "uint":
            vals[a.name] = int(rng.integers(1, 100))
        else:
            v = float(rng.uniform(1.5, 3.0) if fn.name == "acosh" else rng.uniform(0.3, 0.9))
            vals[a.name] = round_to_bits(v, fmt)
    if fn.name == "clamp":            # minval <= maxval, else the result is undefined
        lo, hi = sorted([vals["minval"], vals["maxval"]])
        vals["minval"], vals["maxval"] = lo, hi
    if fn.name == "smoothstep":
        lo, hi = sorted([vals["edge0"], vals["edge1"]])
        vals["edge0"], vals["edge1"] = lo, hi + 1
    return vals


def _bound_cases():
    """(name, precision, profile, relaxed) for every element-wise built-in whose bound in
    that table is one number of ULPs or correctly rounded."""
    out = []
    for fn in catalogue.functions().values():
        if not fn.is_elementwise or fn.is_native:
            continue
        for precision in fn.precisions:
            for profile in ("full", "embedded"):
                for relaxed in ((False, True) if precision == "binary32" else (False,)):
                    b = bounds.bound(fn.name, precision, profile, relaxed)
                    if fn.name == "nan":    # no reference value: its rule is the check
                        continue
                    if b.correctly_rounded or b.fma_or_mul_add or b.ulps is not None:
                        out.append((fn.name, precision, profile, relaxed))
    return out


BOUND_CASES = _bound_cases()


@pytest.mark.parametrize("name,precision,profile,relaxed", BOUND_CASES,
                         ids=["-".join(map(str, c)) for c in BOUND_CASES])
def test_ulp_bound_known_good_and_known_bad(name, precision, profile, relaxed):
    """Inside the bound passes; just outside it fails with the bound's rule (every table:
    full and embedded profile, relaxed math, binary16/32/64)."""
    fn = catalogue.function(name)
    fmt = format_named(precision)
    claims = Claims(precision, profile, relaxed=relaxed)
    b = bounds.bound(name, precision, profile, relaxed)
    rng = np.random.default_rng(sum(map(ord, name + precision + profile)))
    args = _normal_input(fn, rng, fmt)
    kinds = tuple(a.kind for a in fn.inputs)
    ref = reference(name, tuple(args.values()), kinds, fmt, 4 * fmt.precision + 64)
    ins = {a.name: np.asarray([args[a.name]], buffer_dtype(a, fmt)) for a in fn.inputs}
    lim = b.limits(ins, {a.name: a.kind for a in fn.inputs}, fmt)
    if not lim.judged[0]:
        pytest.skip("this input lies where the relaxed table gives no bound")
    good, bad = {}, {}
    for k, o in enumerate(fn.outputs):
        g = _right_value(ref[k], o, fmt)
        good[o.name] = g
        if o.kind == "int":
            bad[o.name] = g + 1
        elif b.correctly_rounded or b.fma_or_mul_add or not lim.ulps[0]:
            bad[o.name] = g + 3
        else:
            bad[o.name] = g + int(lim.ulps[0]) + 2
    mk = lambda d: {o.name: np.asarray([d[o.name]], buffer_dtype(o, fmt)) for o in fn.outputs}
    assert check_batch(fn, ins, mk(good), claims).findings == []
    res = check_batch(fn, ins, mk(bad), claims)
    # Under -cl-unsafe-math-optimizations a departure from a prescribed result is a note
    # ("may violate edge case behavior"); elsewhere a note only where the table says so.
    flagged = res.failures or [f for f in res.findings if lim.note[0] or relaxed]
    assert flagged, name
    assert {f.rule_id for f in flagged} <= {f"ulp.{name}"} | {
        r.id for r in catalogue.rules_for(name)}
    ulps = [f.ulp_error for f in flagged if f.ulp_error is not None]
    if not (b.correctly_rounded or b.fma_or_mul_add) and ulps and not lim.absolute[0]:
        assert min(ulps) > lim.ulps[0]


@pytest.mark.parametrize("name", [f.name for f in catalogue.functions().values() if f.is_native])
def test_native_functions_are_measured_never_failed(name):
    """native_*: implementation-defined accuracy and edge cases (SPIR-V Env Table 1)."""
    fn = catalogue.function(name)
    rng = np.random.default_rng(7)
    args = _normal_input(fn, rng)
    ins = {a.name: np.asarray([args[a.name]] * 3 + [F.pos_inf], F.uint) for a in fn.inputs}
    ref = reference(name[len("native_"):], tuple(args.values()),
                    tuple(a.kind for a in fn.inputs), F, 128)[0]
    g = _right_value(ref, fn.outputs[0])
    outs = {"ret": np.asarray([g + 5000, g, g ^ F.sign_mask, 0x12345], F.uint)}
    res = check_batch(fn, ins, outs)
    assert res.findings == []
    assert res.max_ulp_error >= 5000


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


def test_flushed_variants_are_every_zero_for_every_subnormal():
    from fuzzfarm.formats import flushed_variants
    sub, neg = 0x00000010, 0x80000001
    assert flushed_variants((ONE, 7), (F, None)) == []
    assert flushed_variants((sub, 7), (F, None)) == [(0, 7), (0x80000000, 7)]
    assert flushed_variants((sub, neg), (F, F)) == [
        (0, 0), (0, 0x80000000), (0x80000000, 0), (0x80000000, 0x80000000)]
    assert flushed_variants((7, 7), (None, None)) == []     # an int is never flushed
    assert len(flushed_variants((sub,) * 5, (F,) * 5)) == 16


def test_a_flushed_argument_is_no_accuracy_figure():
    """rsqrt of a subnormal flushed to +0 is +inf (3.8.3): no failure, and no 10^27 ULPs
    in the maximum; the maximum is the largest error of the others.  An element that
    still fails counts with its own error."""
    rsqrt = catalogue.function("rsqrt")
    x = np.asarray([0x00000010, F.bits_of(4.0), F.bits_of(16.0)], F.uint)
    half_up = F.bits_of(0.5) + 1                                   # a little off 1/2
    out = np.asarray([F.pos_inf, half_up, F.bits_of(0.25)], F.uint)
    res = check_batch(rsqrt, {"x": x}, {"ret": out}, FTZ)
    others = check_batch(rsqrt, {"x": x[1:]}, {"ret": out[1:]}, FTZ)
    assert res.failures == [] and 0 < others.max_ulp_error <= 2
    assert res.max_ulp_error == others.max_ulp_error and res.max_ulp_element == 1
    assert check_batch(rsqrt, {"x": x}, {"ret": out}, CLAIMS).max_ulp_error > 1e20
    wrong = out.copy()
    wrong[0] = F.bits_of(1.0)                   # neither the reference nor rsqrt(+-0)
    res = check_batch(rsqrt, {"x": x}, {"ret": wrong}, FTZ)
    assert [f.index for f in res.failures] == [0] and res.max_ulp_element == 0
    own = check_batch(rsqrt, {"x": x[:1]}, {"ret": wrong[:1]}, CLAIMS).max_ulp_error
    assert res.max_ulp_error == own > 1e6


def test_ftz_nextafter_alternatives():
    fn = catalogue.function("nextafter")
    ins = {"x": np.asarray([0x80000000], F.uint), "y": np.asarray([ONE], F.uint)}
    normal = {"ret": np.asarray([F.min_normal], F.uint)}
    assert check_batch(fn, ins, normal, CLAIMS).failures
    assert not check_batch(fn, ins, normal, FTZ).failures


def test_exact_functions_cover_their_reference():
    assert set(EXACT_FUNCTIONS) <= set(catalogue.functions())


# -- claims: build options, device flags, profiles --------------------------------------------

def _one(name, got, fmt=F, claims=CLAIMS, **args):
    fn = catalogue.function(name)
    ins = {a.name: np.asarray([args[a.name]], buffer_dtype(a, fmt)) for a in fn.inputs}
    if not isinstance(got, dict):
        got = {"ret": got}
    outs = {o.name: np.asarray([got[o.name]], buffer_dtype(o, fmt)) for o in fn.outputs}
    return check_batch(fn, ins, outs, claims)


def _claims(options="", flags=("DENORM", "INF_NAN", "ROUND_TO_NEAREST"), profile="FULL_PROFILE",
            precision="binary32"):
    return Claims.from_fp_config(flags, profile, precision, None, options)


def test_build_options_decode():
    c = _claims("-cl-fast-relaxed-math")
    assert c.relaxed and c.finite_math and not c.signed_zeros and c.denormals
    c = _claims("-cl-unsafe-math-optimizations -cl-mad-enable")
    assert c.relaxed and not c.finite_math and not c.signed_zeros
    c = _claims("-cl-denorms-are-zero")
    assert not c.denormals and not c.relaxed and c.signed_zeros
    assert _claims(flags=("DENORM", "ROUND_TO_NEAREST")).inf_nan is False
    assert _claims(flags=("ROUND_TO_ZERO", "INF_NAN"), profile="EMBEDDED_PROFILE").rounding == ("rtz",)


def test_no_signed_zeros_excuses_the_zero_sign_only():
    bad = _one("sinpi", F.sign_mask, x=ONE)
    assert [f.rule_id for f in bad.failures] == ["CL.sinpi.positive_integer"]
    assert _one("sinpi", F.sign_mask, claims=_claims("-cl-no-signed-zeros"), x=ONE).findings == []
    # a non-zero wrong value is still a failure
    res = _one("sinpi", ONE, claims=_claims("-cl-no-signed-zeros"), x=ONE)
    assert [f.rule_id for f in res.failures] == ["CL.sinpi.positive_integer"]


def test_finite_math_and_no_inf_nan_skip_special_arguments():
    inf = F.pos_inf
    assert [f.rule_id for f in _one("sin", 0, x=inf).failures] == ["F9.sin.2"]
    for claims in (_claims("-cl-finite-math-only"), _claims(flags=("DENORM", "ROUND_TO_NEAREST"))):
        res = _one("sin", 0, claims=claims, x=inf)
        assert res.findings == [] and res.unjudged == 1
        # ordinary arguments are still judged
        assert _one("sin", ONE, claims=claims, x=F.bits_of(0.5)).failures


def test_relaxed_build_turns_prescribed_departures_into_notes():
    inf = F.pos_inf
    res = _one("tanh", 0x3F7FFFFF, x=inf)
    assert [f.rule_id for f in res.failures] == ["F9.tanh.2"]
    res = _one("tanh", 0x3F7FFFFF, claims=_claims("-cl-unsafe-math-optimizations"), x=inf)
    assert res.failures == [] and [f.severity for f in res.findings] == ["note"]
    assert "F9.tanh.2" in res.findings[0].reading


def test_relaxed_sin_absolute_error_domain():
    """Relaxed sin: absolute error <= 2**-11 on [-pi, pi], no bound outside."""
    relaxed = _claims("-cl-unsafe-math-optimizations")
    x = F.bits_of(float(np.float32(3.1415925)))        # sin(x) ~ 8.7e-8: tiny result
    off = F.bits_of(float(np.float32(2.0 ** -12)))     # absolute error 2**-12: inside
    assert _one("sin", off, claims=relaxed, x=x).findings == []
    assert _one("sin", off, x=x).failures                # the full profile's 4 ulp fails it
    far = F.bits_of(float(np.float32(2.0 ** -10)))     # 2**-10: outside the tolerance
    assert _one("sin", far, claims=relaxed, x=x).failures
    big = F.bits_of(100.0)                              # outside [-pi, pi]: not judged
    res = _one("sin", ONE, claims=relaxed, x=big)
    assert res.findings == [] and res.unjudged == 1


def test_undefined_domains_of_common_functions_are_not_judged():
    res = _one("clamp", TWO_, x=ONE, minval=TWO_, maxval=ONE)   # minval > maxval
    assert res.findings == [] and res.unjudged == 1
    assert _one("clamp", TWO_, x=0, minval=ONE, maxval=TWO_).failures   # defined: 1.0
    assert _one("max", ONE, x=QNAN, y=ONE).findings == []          # NaN: undefined
    assert _one("max", ONE, x=ONE, y=TWO_).failures                 # defined: 2.0


def test_nan_operand_payload_and_signaling_notes():
    n1, n2, n3 = 0x7FC00011, 0x7FC00022, 0x7FC00033
    assert _one("atan2", n1, y=n1, x=n2).findings == []
    assert _one("atan2", n2 | F.sign_mask, y=n1, x=n2).findings == []   # sign is free
    res = _one("atan2", n3, y=n1, x=n2)
    assert [(f.rule_id, f.severity) for f in res.findings] == [("CL.nan.one_of_operands", "note")]
    snan = 0x7F800011
    res = _one("sin", snan, x=snan)                      # sNaN returned unquieted: a note
    assert [(f.rule_id, f.severity) for f in res.findings] == [
        ("CL.nan.signaling_should_quiet", "note")]
    res = _one("sin", ONE, x=snan)                       # a sNaN must become a NaN
    assert [f.rule_id for f in res.failures] == ["CL.nan.signaling_stays_nan"]


@pytest.mark.parametrize("precision", ["binary16", "binary32", "binary64"])
def test_quiet_computational_operations_keep_a_signaling_nan_without_a_note(precision):
    """IEEE 754-2008 §5.5.1 and §6.2: fabs, copysign (abs, copySign) change at most the
    sign bit, so a signaling NaN comes back signaling and the "should be converted to a
    non-signaling NaN" note is not raised; a quiet result is just as good.  A non-NaN
    result still fails, and sin(sNaN) unquieted still gets the note."""
    fmt = format_named(precision)
    claims = Claims(precision)
    snan, one = fmt.exp_mask | 5, fmt.bits_of(1.0)
    quieted = snan | fmt.quiet_bit

    def one_(fn, out, **args):
        return _one(fn, out, fmt, claims, **args)
    assert catalogue.function("fabs").quiet_computational
    assert catalogue.function("copysign").quiet_computational
    assert not catalogue.function("sin").quiet_computational
    for sign in (0, fmt.sign_mask):
        assert one_("fabs", snan, x=snan | sign).findings == []
        assert one_("fabs", quieted, x=snan | sign).findings == []
        assert one_("copysign", snan | sign, x=snan, y=one | sign).findings == []
        assert one_("copysign", quieted | sign, x=snan, y=one | sign).findings == []
    assert [f.rule_id for f in one_("fabs", one, x=snan).failures] == \
        ["CL.nan.signaling_stays_nan"]
    assert one_("copysign", one, x=snan, y=one).failures    # F9.copysign.D1b: a NaN
    assert [f.rule_id for f in one_("sin", snan, x=snan).findings] == \
        ["CL.nan.signaling_should_quiet"]


def test_denorms_are_zero_allows_flushing():
    x = F.bits_of(2.0 ** -130)                            # subnormal, sqrt is normal
    res = _one("fabs", 0, x=x)
    assert res.failures
    assert _one("fabs", 0, claims=_claims("-cl-denorms-are-zero"), x=x).failures == []


def test_rtz_device_rounds_correctly_toward_zero():
    rtz = _claims(flags=("INF_NAN", "ROUND_TO_ZERO"), profile="EMBEDDED_PROFILE")
    # 1/3: RTE rounds up (0x3eaaaaab), RTZ down (0x3eaaaaaa)
    three = F.bits_of(3.0)
    assert _one("divide", 0x3EAAAAAB, x=ONE, y=three).findings == []
    assert _one("divide", 0x3EAAAAAA, claims=rtz, x=ONE, y=three).findings == []
    # correctly rounded operators: the wrong direction fails
    assert bounds.bound("add", "binary32", "embedded").correctly_rounded
    a1, a2 = ONE, F.bits_of(2.0 ** -24 * 1.5)             # 1 + 1.5 ulp/2: RTE up, RTZ down
    assert _one("add", 0x3F800001, x=a1, y=a2).findings == []
    assert _one("add", 0x3F800000, x=a1, y=a2).failures
    assert _one("add", 0x3F800000, claims=rtz, x=a1, y=a2).findings == []
    assert _one("add", 0x3F800001, claims=rtz, x=a1, y=a2).failures


def test_mad_accepts_fma_or_multiply_then_add():
    a = F.bits_of(1.0 + 2.0 ** -12)
    c = F.bits_of(-1.0)
    # a*a = 1 + 2**-11 + 2**-24: fused keeps the 2**-24, unfused rounds it away (tie to even)
    fused = F.bits_of(2.0 ** -11 + 2.0 ** -24)
    unfused = F.bits_of(2.0 ** -11)
    assert fused != unfused
    assert _one("mad", fused, a=a, b=a, c=c).findings == []
    assert _one("mad", unfused, a=a, b=a, c=c).findings == []
    assert _one("mad", unfused + 1, a=a, b=a, c=c).failures
    assert _one("fma", fused, a=a, b=a, c=c).findings == []
    assert _one("fma", unfused, a=a, b=a, c=c).failures


def test_remquo_quotient_is_checked_modulo_8_with_its_sign():
    x, y = F.bits_of(11.0), F.bits_of(1.0)          # quotient 11, remainder 0
    assert _one("remquo", {"ret": 0, "quo": 11}, x=x, y=y).findings == []
    assert _one("remquo", {"ret": 0, "quo": 3}, x=x, y=y).findings == []     # 11 mod 8
    assert _one("remquo", {"ret": 0, "quo": 4}, x=x, y=y).failures
    assert _one("remquo", {"ret": 0, "quo": -3}, x=x, y=y).failures          # wrong sign


def test_sincos_checks_both_outputs():
    x = F.bits_of(0.5)
    s, c = round_to_bits(__import__("mpmath").sin(0.5), F), round_to_bits(__import__("mpmath").cos(0.5), F)
    assert _one("sincos", {"ret": s, "cosval": c}, x=x).findings == []
    res = _one("sincos", {"ret": s, "cosval": c + 100}, x=x)
    assert [f.output for f in res.failures] == ["cosval"]


def test_half_functions_share_the_edge_cases_and_have_8192_ulp():
    assert [f.rule_id for f in _one("half_sin", F.sign_mask, x=0).failures] == ["F9.sin.1"]
    x = F.bits_of(0.5)
    s = round_to_bits(__import__("mpmath").sin(0.5), F)
    assert _one("half_sin", s + 8000, x=x).findings == []
    assert _one("half_sin", s + 8200, x=x).failures


def test_mix_beyond_its_defining_formula_is_a_note_even_as_a_nan():
    """mix(max, -max, 0): the real value is max, the defining formula x + (y - x) * a gives
    a NaN in binary32 (y - x overflows): a note, never a failure."""
    res = _one("mix", 0x7FFFFFFF, x=F.max_finite, y=F.max_finite | F.sign_mask, a=0)
    assert res.failures == [] and [f.severity for f in res.findings] == ["note"]
    # within |x|, |y| <= 2048 the 1e-3 tolerance binds: a NaN there fails
    res = _one("mix", 0x7FFFFFFF, x=ONE, y=TWO_, a=F.bits_of(0.5))
    assert [f.rule_id for f in res.failures] == ["ulp.mix"]


def test_half_functions_range_and_flushed_subnormal_results():
    big = F.bits_of(2.0 ** 17)                 # outside half_sin's -2^16 ... 2^16
    res = _one("half_sin", ONE, x=big)
    assert res.findings == [] and res.unjudged == 1
    assert _one("sin", ONE, x=big).failures    # sin itself is judged there
    # 1 / max_finite is subnormal: half_recip may flush it; recip may not
    assert _one("half_recip", 0, x=F.max_finite).failures == []
    assert _one("recip", 0, x=F.max_finite).failures
    assert _one("half_recip", ONE, x=F.max_finite).failures


def test_the_error_histogram_holds_every_measured_error():
    """Screened passes, results judged on the exact path and screen-proven failures
    counted beyond the probe all land in the ULP-error histogram, each once: its total is
    the number of elements with a measured error, and failures sit in the bins above the
    bound."""
    from fuzzfarm.oracle.histogram import bin_edges
    fn = catalogue.function("sin")
    rng = np.random.default_rng(8)
    x = (rng.random(5000) + 1.0).astype(np.float32)
    want = np.sin(x.astype(np.float64)).astype(np.float32)
    y = want.view(np.uint32).copy()
    y[:1500] += np.uint32(12)                       # 12 ULPs: failures (bound 4)
    res = check_batch(fn, {"x": x.view(np.uint32)}, {"ret": y}, Claims())
    assert sum(res.counts_by_rule("fail").values()) == 1500
    h = res.ulp_hist
    assert int(h.sum()) == 5000
    edges = np.concatenate([[0.0], bin_edges()])
    assert int(h[:, edges >= 8.0].sum()) == 1500
