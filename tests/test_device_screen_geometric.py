"""The geometric built-ins on the device -- length, distance, normalize, dot, cross in
binary16, binary32 and binary64, and the fast_ forms in binary32
(fuzzfarm.oracle.geometric_screen; docs/device_screen.md, "Geometric built-ins").

Known good: results within the width's bound of the exact reference (mpmath) pass, with
their error measured as the element-wise screen measures it (within 2**-20 ULP, or up to
twice it where f lies just above a power of two); every vector the screen passes is one the
geometric checker finds nothing wrong with.  Known bad: results one ULP or more beyond the
bound, of the other sign, zeros, infinities and NaNs are never passed, nor is any vector
with a zero, subnormal, infinite, NaN or out-of-range lane (the rules' ground).  `run`
units with faults planted get the host's findings, counts and maximum.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from devices import require_device
from edgecases import bounds, catalogue
from fuzzfarm.formats import format_named
from fuzzfarm.oracle.entries import Exact, ulp_error
from fuzzfarm.rounding import round_to_bits
from fuzzfarm.oracle.geometric_screen import (GEOMETRIC_SCREENED, GROUND, GeometricScreen,
                                              geometric_bound, screened, tie)
from fuzzfarm.verdict import geometric
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.geometric_rules import reference

NAMES = sorted(GEOMETRIC_SCREENED)
PAIRS = [(n, p) for n in NAMES for p in sorted(GROUND)
         if p in catalogue.function(n).precisions and screened(n, p)]
_CACHE: dict = {}


def test_the_bounds_are_the_tables_for_each_width():
    expect = {"length": lambda n: 3 + 0.5 * (0.5 * n + 0.5 * (n - 1)),
              "normalize": lambda n: 2.5 + 0.5 * n + 0.5 * (n - 1),
              "fast_normalize": lambda n: 8192.5 + 0.5 * n + 0.5 * (n - 1),
              "distance": lambda n: 3 + 1.5 * n + 0.5 * (n - 1),
              "fast_length": lambda n: 8192 + 0.5 * n + 0.5 * (n - 1),
              "fast_distance": lambda n: 8192 + 1.5 * n + 0.5 * (n - 1)}
    expect["dot"] = expect["cross"] = lambda n: 0.5   # the tolerances are the kernel's
    assert str(bounds.bound("dot", "binary32").pieces[0].value.amount.text) == \
        "max * max * (2 * (n - 1)) * EPS"
    for name in NAMES:
        assert bounds.bound(name, "binary32").pieces[0].value.kind == \
            ("absolute" if name in ("dot", "cross") else "ulps")
        for n in catalogue.function(name).widths:
            assert geometric_bound(name, "binary32", n, Claims()) == expect[name](n)
        for claims in (Claims(relaxed=True), Claims(rounding=("rtz",)),
                       Claims(finite_math=True), Claims(inf_nan=False)):
            assert geometric_bound(name, "binary32", 2, claims) is None
    for name in ("length", "distance", "normalize", "dot", "cross"):
        for p in ("binary16", "binary64"):
            got = geometric_bound(name, p, 3, Claims(p))
            table = bounds.bound(name, p).pieces[0].value
            assert got == (0.5 if table.kind == "absolute" else float(table.amount({"n": 3})))
            assert geometric_bound(name, p, 3, Claims(p, relaxed=True)) is None
            assert geometric_bound(name, p, 3, Claims("binary32")) is None
    assert not screened("fast_normalize", "binary16") and screened("dot", "binary16")
    assert len(PAIRS) == 18         # the five in three precisions, the three fast_ in one


def _screen(name, precision="binary32"):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    if (name, precision) not in _CACHE:
        if "runner" not in _CACHE:
            _CACHE["runner"] = DeviceRunner(info, "")
        _CACHE[name, precision] = GeometricScreen(_CACHE["runner"], name, Claims(precision))
    return _CACHE[name, precision]


def _vectors(rng, n: int, width: int, fmt) -> np.ndarray:
    """(n, width) patterns of ``fmt``: mostly normal lanes of magnitude on the screened
    ground (GROUND), some vectors with a lane outside it (zeros, subnormals, tiny, huge,
    infinities, NaNs), both signs."""
    lo, hi = GROUND[fmt.name]
    dt = fmt.uint
    e = rng.integers(fmt.emax + lo, fmt.emax + hi, (n, width)).astype(dt)
    v = (e << dt(fmt.frac_bits)) | rng.integers(0, 1 << fmt.frac_bits, (n, width),
                                                  dtype=dt)
    v |= rng.integers(0, 2, (n, width), dtype=dt) << dt(fmt.bits - 1)
    odd = rng.random(n) < 0.15
    lane = rng.integers(0, width, n)
    tiny, huge = (fmt.bits_of(2.0 ** (lo - 1)), fmt.bits_of(2.0 ** hi))
    bad = rng.choice(np.array([0, fmt.sign_mask, fmt.true_min, fmt.min_normal >> 1, tiny,
                               huge, fmt.pos_inf, fmt.default_qnan], dt), n)
    v[odd, lane[odd]] = bad[odd]
    return v


def _value(v, fmt):
    """A reference entry as an mpf where it is a finite number (normalize's exact +-1 at
    width 1 included), else as it is."""
    if isinstance(v, Exact) and (int(v.bits) & fmt.pos_inf) != fmt.pos_inf:
        return mpmath.mpf(fmt.value(int(v.bits)))
    return v


def _beyond_tolerance(y, f, tol: float, name: str, width: int, fmt) -> bool:
    """The result lanes ``y`` (patterns) of dot or cross are beyond the absolute tolerance
    of the references ``f`` (a lane of them; dot at width 1: not f rounded; cross's w lane:
    not +0)."""
    if name == "dot" and width == 1:
        return int(y[0]) != round_to_bits(f[0], fmt, "rte")
    if name == "cross" and width == 4 and int(y[3]) != 0:
        return True
    return any(abs(mpmath.mpf(fmt.value(int(g))) - v) > tol
               for g, v in zip(y[:3 if name == "cross" else 1], f))


def _exact(name, args, width, fmt):
    with mpmath.workprec(200):
        return reference(name, args, fmt, width, 200)


@pytest.mark.device
@pytest.mark.parametrize("name, precision, width",
                         [(n, p, w) for n, p in PAIRS for w in catalogue.function(n).widths])
def test_the_screen_passes_no_failure_and_the_right_results(name, precision, width):
    s = _screen(name, precision)
    fn = catalogue.function(name)
    fmt = format_named(precision)
    dt, sign, inf = fmt.uint, fmt.uint(fmt.sign_mask), fmt.uint(fmt.pos_inf)
    rng = np.random.default_rng(61 + width)
    n = 1200 if precision == "binary32" else 600
    args = {a.name: _vectors(rng, n, width, fmt) for a in fn.inputs}
    if name in ("distance", "fast_distance"):   # some pairs close together: cancellation
        close = rng.random(n) < 0.2
        args["p1"][close] = args["p0"][close] ^ dt(1)
    rw = width if name in geometric.VECTOR_RESULTS else 1
    vector = name in geometric.VECTOR_RESULTS
    refs = [tuple(_value(v, fmt) for v in (r if vector else (r,)))
            for r in _exact(name, args, width, fmt)]
    real = np.array([all(isinstance(v, mpmath.mpf) for v in r) for r in refs])
    rn = np.array([[round_to_bits(v, fmt, "rte") if isinstance(v, mpmath.mpf) else 0
                    for v in r] for r in refs], dt)

    def verr(i, y):             # the vector's error: its largest lane's (ULPs)
        return max(ulp_error(int(g), v, fmt, ("rte",))
                   for g, v in zip(y.reshape(n, rw)[i], refs[i]))

    bound = geometric_bound(name, precision, width, Claims(precision))
    s_tie = tie(bound, precision, name)
    flat = {k: v.ravel() for k, v in args.items()}
    p1 = flat.get("p1")
    step = dt(max(1, int(bound)))
    if name in ("dot", "cross"):    # the tolerance: max**2 2 (n - 1) or 3 EPS
        used = 3 if name == "cross" else width
        with np.errstate(all="ignore"):
            mx = np.abs(np.concatenate([args["p0"][:, :used], args["p1"][:, :used]], axis=1)
                        .view(fmt.float).astype(np.float64)).max(axis=1)
            dot_tol = mx * mx * (3 if name == "cross" else 2 * (width - 1)) * \
                2.0 ** -fmt.frac_bits
    base = rn.ravel()
    tries = [base, base + dt(1), base - dt(1), base + step, base - step,
             base + step + dt(1), base - step - dt(1), base + step + dt(2), base ^ sign,
             np.zeros_like(base), np.full_like(base, inf), np.full_like(base, inf | (inf >> dt(1)))]
    lo, hi = GROUND[precision]
    gated = np.ones(n, bool)
    for m in args.values():
        e = (m >> dt(fmt.frac_bits)) & dt(fmt.exp_mask >> fmt.frac_bits)
        gated &= ((e >= fmt.emax + lo) & (e < fmt.emax + hi)).all(axis=1)
    if name in ("distance", "fast_distance"):   # each difference on the ground
        with np.errstate(all="ignore"):
            d = np.abs(args["p0"].view(fmt.float).astype(np.float64)
                       - args["p1"].view(fmt.float).astype(np.float64))
        gated &= ((d >= 2.0 ** lo) & (d < 2.0 ** hi)).all(axis=1)
    for k, y in enumerate(tries):
        err = s.screen_pairs(flat[fn.inputs[0].name], y, width, p1)
        passed = err >= 0
        assert not passed[~gated].any(), (name, width, k)
        at = np.flatnonzero(passed)
        sub = {a: v[at].ravel() for a, v in args.items()}
        res = geometric.check(fn, sub, {"ret": y.reshape(n, rw)[at].ravel()},
                              Claims(precision), width)
        assert not res.findings, (name, width, k, res.findings[:1])
        for i in at[:60]:       # the device's error: d / u_lo with u_lo <= ulp(f), so no
            # smaller than the exact one (less 2**-20 ULP), and no larger than it by more
            # than a tie (where f may lie above a power of two, u_lo half its ULP, it
            # passes only estimates within the tie), as the element-wise screen's
            exact = verr(i, y)
            e, tol = float(err[i]), 2.0 ** -20 * max(1.0, exact)    # (a float32 estimate)
            assert exact - tol <= e <= exact + s_tie + tol, (name, k, e, exact)
        if k == 0:
            ok = gated & real
            assert passed[ok].mean() > 0.97, (name, width, passed[ok].mean())
        if k >= 5:              # beyond the bound, other signs, zeros, infinities, NaNs
            lanes = y.reshape(n, rw)
            far = np.array([not real[i] or ((lanes[i] & inf) == inf).any()
                            or (_beyond_tolerance(lanes[i], refs[i], dot_tol[i], name, width,
                                                  fmt)
                                if name in ("dot", "cross") else verr(i, y) > bound)
                            for i in range(n)])
            assert not passed[far].any(), (name, width, k)


@pytest.mark.device
@pytest.mark.parametrize("name, precision", PAIRS)
def test_screened_run_units_give_the_host_verdicts(name, precision):
    """Drawn `run` units at every width, screened on the device through the session, and
    again with faults planted (bound + 1 ULPs, a flipped sign, a NaN, a zero), give the
    host-checked units' findings, counts and maximum; the planted failures the checker
    finds are recorded.  Where the device lacks the precision (binary16 on a device
    without cl_khr_fp16) the results are the exact references rounded to nearest, screened
    by the kernel alone (which needs no fp16)."""
    from fuzzfarm.work.check import check_result
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession
    s = _screen(name, precision)
    fn = catalogue.function(name)
    fmt = format_named(precision)
    claims = Claims(precision)
    runs = precision != "binary16" or s.runner.info.has_fp16
    session = DeviceSession(s.runner.info)
    rng = np.random.default_rng(67)
    caught = 0
    for width in catalogue.function(name).widths:
        unit = make_unit("t", (name, precision, width), 1, 5, 0, 1, size=1 << 11)
        inputs = make_inputs(unit)
        p1 = inputs["p1"] if "p1" in inputs else None
        if runs:
            landed = session.land(session.launch(unit, inputs))
            assert landed.answer is not None
            y, screened_answer = np.array(landed.outputs["ret"]), landed.answer
        else:
            shaped = {a: v.reshape(-1, width) for a, v in inputs.items()}
            y = np.array([round_to_bits(_value(v, fmt), fmt, "rte")
                          if isinstance(_value(v, fmt), mpmath.mpf)
                          else int(v.bits) if isinstance(v, Exact) else fmt.default_qnan
                          for r in _exact(name, shaped, width, fmt)
                          for v in (r if name in geometric.VECTOR_RESULTS else (r,))],
                         fmt.uint)
            screened_answer = s.screen_pairs(inputs[fn.inputs[0].name], y, width, p1)
        rw = width if name in geometric.VECTOR_RESULTS else 1
        nvec = y.size // rw
        for planted in (False, True):
            answer = screened_answer
            pos = np.array([], np.int64)
            if planted:             # in the first result lane of 40 vectors
                before = y.copy()
                pos = rng.choice(nvec, 40, replace=False)
                for k, p in enumerate(pos):
                    q = p * rw
                    y[q] = [y[q] + fmt.uint(int(s.bound(width)) + 1),
                            y[q] ^ fmt.uint(fmt.sign_mask), fmt.uint(fmt.default_qnan),
                            fmt.uint(0)][k % 4]
                first = fn.inputs[0].name
                answer = s.screen_pairs(inputs[first], y, width, p1)
            dev = check_result(unit, inputs, {"ret": y}, claims, answer)
            host = check_result(unit, inputs, {"ret": y}, claims)
            assert dev.n == host.n == nvec
            assert dev.counts_by_rule(None) == host.counts_by_rule(None), (name, width)
            key = lambda f: (f.index, f.rule_id, f.severity)   # noqa: E731
            assert sorted(map(key, dev.findings)) == sorted(map(key, host.findings))
            assert dev.max_ulp_error == pytest.approx(host.max_ulp_error, abs=1e-9) or (
                np.isnan(dev.max_ulp_error) and np.isnan(host.max_ulp_error))
            assert dev.screened > 0 or planted, (name, width)
            failed = {f.index for f in dev.findings if f.severity == "fail"}
            for p in pos:
                lanes = slice(p * width, (p + 1) * width)
                one = {a.name: inputs[a.name][lanes] for a in fn.inputs}
                was, now = (geometric.check(fn, one, {"ret": v[p * rw:(p + 1) * rw]},
                                            claims, width) for v in (before, y))
                if not was.findings and any(f.severity == "fail" for f in now.findings):
                    assert p in failed, (name, width, p)
                    caught += 1
    assert caught > 0, name
