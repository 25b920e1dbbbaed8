"""The geometric built-ins of a scalar ULP-bounded result on the device -- length, distance,
fast_length, fast_distance in binary32 (fuzzfarm.oracle.geometric_screen;
docs/device_screen.md, "Geometric built-ins").

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
from fuzzfarm.formats import BINARY32
from fuzzfarm.oracle.entries import Exact, ulp_error
from fuzzfarm.rounding import round_to_bits
from fuzzfarm.oracle.geometric_screen import (GEOMETRIC_SCREENED, GeometricScreen,
                                              geometric_bound)
from fuzzfarm.verdict import geometric
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.geometric_rules import reference

NAMES = sorted(GEOMETRIC_SCREENED)
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
    assert geometric_bound("length", "binary64", 2, Claims("binary64")) is None
    assert geometric_bound("fast_normalize", "binary16", 3, Claims("binary16")) is None


def _screen(name):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    if name not in _CACHE:
        if "runner" not in _CACHE:
            _CACHE["runner"] = DeviceRunner(info, "")
        _CACHE[name] = GeometricScreen(_CACHE["runner"], name, Claims())
    return _CACHE[name]


def _vectors(rng, n: int, width: int) -> np.ndarray:
    """(n, width) binary32 patterns: mostly normal lanes of magnitude 2**-60 .. 2**61 (the
    screened ground), some vectors with a lane outside it (zeros, subnormals, tiny, huge,
    infinities, NaNs), both signs."""
    e = rng.integers(67, 188, (n, width)).astype(np.uint32)
    v = (e << np.uint32(23)) | rng.integers(0, 1 << 23, (n, width), dtype=np.uint32)
    v |= rng.integers(0, 2, (n, width), dtype=np.uint32) << np.uint32(31)
    odd = rng.random(n) < 0.15
    lane = rng.integers(0, width, n)
    bad = rng.choice(np.array([0, 0x8000_0000, 1, 0x0040_0000, 0x0C00_0000, 0x7E00_0000,
                               0x7F80_0000, 0x7FC0_0000], np.uint32), n)
    v[odd, lane[odd]] = bad[odd]
    return v


def _value(v):
    """A reference entry as an mpf where it is a finite number (normalize's exact +-1 at
    width 1 included), else as it is."""
    if isinstance(v, Exact) and (int(v.bits) & 0x7F80_0000) != 0x7F80_0000:
        return mpmath.mpf(float(np.uint32(int(v.bits)).view(np.float32)))
    return v


def _beyond_tolerance(y, f, tol: float, name: str, width: int) -> bool:
    """The result lanes ``y`` (uint32) of dot or cross are beyond the absolute tolerance of
    the references ``f`` (a lane of them; dot at width 1: not f rounded; cross's w lane:
    not +0)."""
    if name == "dot" and width == 1:
        return int(y[0]) != round_to_bits(f[0], BINARY32, "rte")
    if name == "cross" and width == 4 and int(y[3]) != 0:
        return True
    return any(abs(mpmath.mpf(float(np.uint32(g).view(np.float32))) - v) > tol
               for g, v in zip(y[:3 if name == "cross" else 1], f))


def _exact(name, args, width):
    with mpmath.workprec(120):
        return reference(name, args, BINARY32, width, 120)


@pytest.mark.device
@pytest.mark.parametrize("name, width", [(n, w) for n in NAMES
                                         for w in catalogue.function(n).widths])
def test_the_screen_passes_no_failure_and_the_right_results(name, width):
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(61 + width)
    n = 1200
    args = {a.name: _vectors(rng, n, width) for a in fn.inputs}
    if name in ("distance", "fast_distance"):   # some pairs close together: cancellation
        close = rng.random(n) < 0.2
        args["p1"][close] = args["p0"][close] ^ np.uint32(1)
    rw = width if name in geometric.VECTOR_RESULTS else 1
    vector = name in geometric.VECTOR_RESULTS
    refs = [tuple(_value(v) for v in (r if vector else (r,))) for r in _exact(name, args, width)]
    real = np.array([all(isinstance(v, mpmath.mpf) for v in r) for r in refs])
    rn = np.array([[round_to_bits(v, BINARY32, "rte") if isinstance(v, mpmath.mpf) else 0
                    for v in r] for r in refs], np.uint32)

    def verr(i, y):             # the vector's error: its largest lane's (ULPs)
        return max(ulp_error(int(g), v, BINARY32, ("rte",))
                   for g, v in zip(y.reshape(n, rw)[i], refs[i]))

    bound = geometric_bound(name, "binary32", width, Claims())
    flat = {k: v.ravel() for k, v in args.items()}
    p1 = flat.get("p1")
    step = np.uint32(max(1, int(bound)))
    if name in ("dot", "cross"):    # the tolerance: max**2 2 (n - 1) or 3 2**-23
        used = 3 if name == "cross" else width
        with np.errstate(all="ignore"):
            mx = np.abs(np.concatenate([args["p0"][:, :used], args["p1"][:, :used]], axis=1)
                        .view(np.float32).astype(np.float64)).max(axis=1)
            dot_tol = mx * mx * (3 if name == "cross" else 2 * (width - 1)) * 2.0 ** -23
    base = rn.ravel()
    tries = [base, base + np.uint32(1), base - np.uint32(1), base + step, base - step,
             base + step + np.uint32(1), base - step - np.uint32(1),
             base + step + np.uint32(2), base ^ np.uint32(0x8000_0000), np.zeros_like(base),
             np.full_like(base, 0x7F80_0000), np.full_like(base, 0x7FC0_0000)]
    gated = np.ones(n, bool)
    for m in args.values():
        e = (m >> np.uint32(23)) & np.uint32(0xFF)
        gated &= ((e >= 67) & (e <= 187)).all(axis=1)
    if name in ("distance", "fast_distance"):   # each difference in [2**-60, 2**61)
        with np.errstate(all="ignore"):
            d = np.abs(args["p0"].view(np.float32).astype(np.float64)
                       - args["p1"].view(np.float32).astype(np.float64))
        gated &= ((d >= 2.0 ** -60) & (d < 2.0 ** 61)).all(axis=1)
    for k, y in enumerate(tries):
        err = s.screen_pairs(flat[fn.inputs[0].name], y, width, p1)
        passed = err >= 0
        assert not passed[~gated].any(), (name, width, k)
        at = np.flatnonzero(passed)
        sub = {a: v[at].ravel() for a, v in args.items()}
        res = geometric.check(fn, sub, {"ret": y.reshape(n, rw)[at].ravel()}, Claims(), width)
        assert not res.findings, (name, width, k, res.findings[:1])
        for i in at[:60]:       # the device's error: d / u_lo with u_lo <= ulp(f), so no
            # smaller than the exact one (less 2**-20 ULP), at most twice it (f within
            # 4 REL above a power of two: u_lo half its ULP), as the element-wise screen's
            exact = verr(i, y)
            e, tol = float(err[i]), 2.0 ** -20 * max(1.0, exact)    # (a float32 estimate)
            assert exact - tol <= e <= 2 * exact + tol, (name, k, e, exact)
        if k == 0:
            ok = gated & real
            assert passed[ok].mean() > 0.97, (name, width, passed[ok].mean())
        if k >= 5:              # beyond the bound, other signs, zeros, infinities, NaNs
            lanes = y.reshape(n, rw)
            far = np.array([not real[i] or (lanes[i] & np.uint32(0x7F80_0000)
                                             == np.uint32(0x7F80_0000)).any()
                            or (_beyond_tolerance(lanes[i], refs[i], dot_tol[i], name, width)
                                if name in ("dot", "cross") else verr(i, y) > bound)
                            for i in range(n)])
            assert not passed[far].any(), (name, width, k)


@pytest.mark.device
@pytest.mark.parametrize("name", NAMES)
def test_screened_run_units_give_the_host_verdicts(name):
    """Drawn `run` units at every width, screened on the device through the session, and
    again with faults planted (bound + 1 ULPs, a flipped sign, a NaN, a zero), give the
    host-checked units' findings, counts and maximum; the planted failures the checker
    finds are recorded."""
    from fuzzfarm.work.check import check_result
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession
    s = _screen(name)
    fn = catalogue.function(name)
    session = DeviceSession(s.runner.info)
    rng = np.random.default_rng(67)
    caught = 0
    for width in catalogue.function(name).widths:
        unit = make_unit("t", (name, "binary32", width), 1, 5, 0, 1, size=1 << 11)
        inputs = make_inputs(unit)
        landed = session.land(session.launch(unit, inputs))
        assert landed.answer is not None
        y = np.array(landed.outputs["ret"])
        rw = width if name in geometric.VECTOR_RESULTS else 1
        nvec = y.size // rw
        for planted in (False, True):
            answer = landed.answer
            pos = np.array([], np.int64)
            if planted:             # in the first result lane of 40 vectors
                before = y.copy()
                pos = rng.choice(nvec, 40, replace=False)
                for k, p in enumerate(pos):
                    q = p * rw
                    y[q] = [y[q] + np.uint32(int(s.bound(width)) + 1), y[q] ^ np.uint32(1 << 31),
                            np.uint32(0x7FC0_0000), np.uint32(0)][k % 4]
                first = fn.inputs[0].name
                answer = s.screen_pairs(inputs[first], y, width,
                                        inputs["p1"] if "p1" in inputs else None)
            dev = check_result(unit, inputs, {"ret": y}, Claims(), answer)
            host = check_result(unit, inputs, {"ret": y}, Claims())
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
                                            Claims(), width) for v in (before, y))
                if not was.findings and any(f.severity == "fail" for f in now.findings):
                    assert p in failed, (name, width, p)
                    caught += 1
    assert caught > 0, name
