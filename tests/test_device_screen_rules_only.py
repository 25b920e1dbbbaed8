"""Built-ins judged by nothing but their rules on the device (docs/device_screen.md,
"Built-ins judged only by their rules, and native_*"): lgamma and lgamma_r in every
precision, mix and smoothstep in binary16 and binary64 (implementation-defined accuracy)
and nan (``device_references.RULES_ONLY``).  Their references decide only the results a
rule prescribes -- lgamma's +0 at 1 and 2 and +inf at a negative integer, lgamma_r's
signp 0 there, nan's quiet NaN --
and pass every other result of finite nonzero arguments with no error measured, as the
checker judges and measures none there.

Known good: every result the screen passes is one the checker finds nothing wrong with,
whatever the result (numbers, zeros and infinities of either sign, quiet and signaling
NaNs, random patterns); the prescribed results pass.  Known bad: a wrong-signed zero, a
number or a NaN where +0 or +inf is prescribed is never passed, and the checker fails it.
`run` units, with faults planted, get the host's verdicts.  (native_*: tests/
test_device_screen.py, test_native_units_are_measured_on_the_device_and_judged_nowhere.)
"""
from __future__ import annotations

import numpy as np
import pytest

from devices import device_screen
from edgecases import catalogue
from planted_faults import faults_caught_in_run_units, passed_failures
from fuzzfarm.formats import format_named
from fuzzfarm.oracle import device_references as dref
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims

#: (built-in, precision) pairs judged this way that PyPI's PoCL can run (no cl_khr_fp16)
#: in `run` units (not binary64 nan: PoCL's are all signaling NaNs, nothing passes --
#: test_nan_passes_a_quiet_nan_... judges its screen on chosen results)
PAIRS = [("lgamma", "binary32"), ("lgamma", "binary64"), ("lgamma_r", "binary32"),
         ("lgamma_r", "binary64"), ("mix", "binary64"), ("smoothstep", "binary64"),
         ("nan", "binary32")]


def test_the_unjudged_references_are_used_only_where_the_bound_is_implementation_defined():
    from edgecases import bounds
    for name in sorted(dref.RULES_ONLY):
        for precision in catalogue.function(name).precisions:
            b = bounds.bound(name, precision)
            got = dref.plain_bound(name, precision, Claims(precision))
            everywhere = any(not r.when for r in catalogue.rules_for(name))
            if name in dref.ABSOLUTE and precision == "binary32":   # its own tolerance
                assert got == b.pieces[0].value.amount, name
                continue
            assert (got == 0.0) if b.implementation_defined or everywhere else got is None, \
                (name, precision)
    assert dref.plain_bound("nan", "binary32", Claims()) == 0.0
    # a rule on finite nonzero x the reference does not decide turns the screen off
    assert dref.HANDLED_RULES["lgamma"] == {r.id for r in catalogue.rules_for("lgamma")
                                            if r.id not in ("F9.lgamma.4", "F9.lgamma.5")}




def _finite_nonzero(fmt, rng, n: int) -> np.ndarray:
    """Finite nonzero patterns of ``fmt``: integers (1 .. 4096 and larger), 1, 2 and their
    neighbours, random normals and subnormals, the largest values; both signs."""
    f = np.dtype(f"float{fmt.bits}")
    u = np.dtype(fmt.uint)
    ints = np.concatenate([np.arange(1, 4097), rng.integers(1, 1 << 20, 2000)]).astype(f)
    near = np.concatenate([np.arange(int(b) - 8, int(b) + 9, dtype=np.int64)
                           for b in np.array([1.0, 2.0, 3.0], f).view(u)]).astype(u)
    rand = rng.integers(1, fmt.pos_inf, n, dtype=np.uint64).astype(u)
    big = np.array([fmt.pos_inf - 1, fmt.pos_inf - 2, 1, 2], u)
    x = np.concatenate([ints.view(u), near, rand, big])
    x = np.concatenate([x, x | u.type(fmt.sign_mask)])
    mag = x & u.type(fmt.abs_mask)
    return np.unique(x[(mag != 0) & (mag < fmt.pos_inf)])


def _results(fmt, rng, n: int) -> list:
    """Columns of results to try at ``n`` inputs: each zero, infinity, a quiet and a
    signaling NaN, 1, and random patterns."""
    u = np.dtype(fmt.uint)
    one = np.array([1.0], np.dtype(f"float{fmt.bits}")).view(u)[0]
    fixed = [0, fmt.sign_mask, fmt.pos_inf, fmt.pos_inf | fmt.sign_mask, fmt.default_qnan,
             fmt.pos_inf | 1, int(one)]
    return [np.full(n, v, u) for v in fixed] + \
        [rng.integers(0, 1 << min(fmt.bits, 63), n, dtype=np.uint64).astype(u)]


@pytest.mark.device
@pytest.mark.parametrize("precision", ["binary32", "binary64"])
def test_lgamma_passes_any_result_but_where_a_rule_prescribes_one(precision):
    fmt = format_named(precision)
    claims = Claims(precision)
    fn = catalogue.function("lgamma")
    s = device_screen("lgamma", precision)
    rng = np.random.default_rng(11)
    x = _finite_nonzero(fmt, rng, 20000)
    v = x.view(np.dtype(f"float{fmt.bits}"))
    pole = (v < 0) & (np.floor(v) == v)
    zero = (v == 1.0) | (v == 2.0)
    ruled = pole | zero
    assert pole.sum() > 4000 and zero.sum() == 2
    for y in _results(fmt, rng, x.size):
        passed, _ = s.screen_pairs(x, y)
        assert passed_failures(fn, {"x": x}, y, passed, claims).size == 0
        assert passed[~ruled].all()                 # implementation-defined: any result
    u = np.dtype(fmt.uint)
    good = np.where(pole, u.type(fmt.pos_inf), u.type(0)).astype(u)
    passed, _ = s.screen_pairs(x[ruled], good[ruled])
    assert passed.all()
    assert not check_batch(fn, {"x": x[ruled]}, {"ret": good[ruled]}, claims).findings
    for wrong in (fmt.sign_mask, fmt.pos_inf | fmt.sign_mask, fmt.default_qnan, 1):
        y = np.full(int(ruled.sum()), wrong, u)
        y[(good[ruled] == wrong)] = u.type(fmt.default_qnan)
        passed, _ = s.screen_pairs(x[ruled], y)
        assert not passed.any()
        res = check_batch(fn, {"x": x[ruled]}, {"ret": y}, claims)
        assert len({f.index for f in res.findings if f.severity == "fail"}) + \
            sum(res.unrecorded.values()) >= y.size


@pytest.mark.device
@pytest.mark.parametrize("name", ["mix", "smoothstep"])
def test_mix_and_smoothstep_in_binary64_pass_any_result_of_finite_nonzero_arguments(name):
    fmt = format_named("binary64")
    claims = Claims("binary64")
    fn = catalogue.function(name)
    s = device_screen(name, "binary64")
    rng = np.random.default_rng(12)
    pool = _finite_nonzero(fmt, rng, 20000)
    a, b, c = (rng.choice(pool, 30000) for _ in range(3))
    unit = np.float64([0.25, 0.5, 1.0, 2.0**-60]).view(np.uint64)   # a in (0, 1]
    c[:4000] = rng.choice(unit, 4000)
    args = dict(zip([p.name for p in fn.inputs], (a, b, c)))
    for y in _results(fmt, rng, a.size):
        passed, _ = s.screen_pairs(a, y, b, c)
        assert passed.all()
        assert passed_failures(fn, args, y, passed, claims).size == 0
    # an argument that is a zero, an infinity or a NaN: the host's
    for special in (0, fmt.pos_inf, fmt.default_qnan):
        c2 = np.full(a.size, special, np.uint64)
        assert not s.screen_pairs(a, a, b, c2)[0].any()


@pytest.mark.device
@pytest.mark.parametrize("name, precision", PAIRS)
def test_screened_run_units_give_the_host_verdicts(name, precision):
    """Drawn `run` units, with faults planted (beyond any bound, flipped signs, NaNs and
    zeros for numbers), get the host-screened units' findings, counts and maximum."""
    from fuzzfarm.work.session import DeviceSession
    screen = device_screen(name, precision)
    session = DeviceSession(screen.runner.info)
    faults_caught_in_run_units(session, screen, name, precision, Claims(precision),
                               1 << 12, 21)


@pytest.mark.device
@pytest.mark.parametrize("precision", ["binary32", "binary64"])
def test_nan_passes_a_quiet_nan_of_any_payload_and_sign_and_nothing_else(precision):
    """F9.nan.1: "a quiet NaN" whatever nancode (its payload and sign free): known good, a
    quiet NaN of either sign and any payload passes (but where nancode's pattern is itself
    a NaN's, the host's); known bad, a signaling NaN, an infinity, a zero or a number is
    never passed, and the checker fails it."""
    fmt = format_named(precision)
    u = np.dtype(fmt.uint)
    fn = catalogue.function("nan")
    claims = Claims(precision)
    s = device_screen("nan", precision)
    rng = np.random.default_rng(13)
    code = np.concatenate([np.array([0, 1, 2, fmt.pos_inf, fmt.pos_inf | 1, fmt.default_qnan,
                                     fmt.sign_mask, (1 << fmt.bits) - 1], u),
                           rng.integers(0, 1 << min(fmt.bits, 63), 20000,
                                        dtype=np.uint64).astype(u)])
    nan_pattern = (code & u.type(fmt.abs_mask)) > fmt.pos_inf
    for q in (fmt.default_qnan, fmt.default_qnan | fmt.sign_mask, fmt.abs_mask,
              fmt.pos_inf | fmt.quiet_bit | 5):
        y = np.full(code.size, q, u)
        passed, _ = s.screen_pairs(code, y)
        assert passed[~nan_pattern].all() and not passed[nan_pattern].any()
        assert not check_batch(fn, {"nancode": code}, {"ret": y}, claims).findings
    for wrong in (fmt.pos_inf | 1, fmt.pos_inf, 0, fmt.sign_mask, 1):
        y = np.full(code.size, wrong, u)
        passed, _ = s.screen_pairs(code, y)
        assert not passed.any()
        res = check_batch(fn, {"nancode": code}, {"ret": y}, claims)
        assert len(res.findings) + sum(res.unrecorded.values()) == code.size
        assert {f.rule_id for f in res.findings} == {"F9.nan.1"}


@pytest.mark.device
@pytest.mark.parametrize("precision", ["binary32", "binary64"])
def test_lgamma_r_passes_any_sign_but_zero_at_a_pole(precision):
    """lgamma_r's signp (an int) is 0 at a pole (CL.lgamma_r.pole_sign) and implementation-
    defined elsewhere: known good, any signp with any result away from the poles, and +inf
    with signp 0 at a negative integer, pass and the checker finds nothing wrong; known
    bad, signp +1 or -1 at a pole, or +inf there with a wrong result, is never passed and
    fails on the checker."""
    fmt = format_named(precision)
    u = np.dtype(fmt.uint)
    fn = catalogue.function("lgamma_r")
    claims = Claims(precision)
    s = device_screen("lgamma_r", precision)
    rng = np.random.default_rng(17)
    x = _finite_nonzero(fmt, rng, 20000)
    v = x.view(np.dtype(f"float{fmt.bits}"))
    pole = (v < 0) & (np.floor(v) == v)
    ruled = pole | (v == 1.0) | (v == 2.0)
    for sign in (0, 1, -1, 7):
        signp = np.full(x.size, sign, np.int32)
        for y in _results(fmt, rng, x.size):
            passed, _ = s.screen_pairs(x, y, y2bits=signp.view(np.uint32))
            at = np.flatnonzero(passed)
            res = check_batch(fn, {"x": x[at]}, {"ret": y[at], "signp": signp[at]}, claims)
            assert not res.findings, (sign, res.findings[:2])
            assert passed[~ruled].all()
        y = np.where(pole, u.type(fmt.pos_inf), u.type(0)).astype(u)
        passed, _ = s.screen_pairs(x[pole], y[pole], y2bits=signp[pole].view(np.uint32))
        assert passed.all() == (sign == 0) and passed.any() == (sign == 0)
        res = check_batch(fn, {"x": x[pole]}, {"ret": y[pole], "signp": signp[pole]}, claims)
        rules = {f.rule_id for f in res.findings}
        assert rules == (set() if sign == 0 else {"CL.lgamma_r.pole_sign"}), rules
