"""mix and smoothstep in binary32 on the device (docs/device_screen.md, "Absolute tolerances:
mix and smoothstep"): their references against mpmath within their own error bounds
(device_screen.cl's err_mix, err_smoothstep), the screen against the checker -- nothing it
passes is a failure or a note, results within the tolerance and correctly rounded ones
pass, results beyond it do not --, and `run` units with faults planted giving the host's
verdicts (``device_references.ABSOLUTE``; the tolerances are OpenCL SPIR-V Env Table 1's
1e-3 and 1e-5).
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest

from devices import device_screen
from edgecases import catalogue
from planted_faults import faults_caught_in_run_units, passed_failures
from fuzzfarm.oracle import device_references as dref
from fuzzfarm.oracle import device_screen as ds
from fuzzfarm.oracle.real import _mix, _smoothstep
from fuzzfarm.verdict.claims import Claims

_MP = {"mix": _mix, "smoothstep": _smoothstep}
#: K_* kinds (screen_common.cl)
K_VALUE, K_EXACT, K_ANY = 0, 1, 5


def test_the_tolerances_are_the_tables():
    for name, tol in (("mix", 1e-3), ("smoothstep", 1e-5)):
        assert dref.plain_bound(name, "binary32", Claims()) == tol
        assert dref.plain_bound(name, "binary32", Claims(relaxed=True)) is None
        assert dref.plain_bound(name, "binary32", Claims(profile="embedded")) is None
        src = ds.screen_source(name, tol)
        assert f"#define REF ref_{name}" in src and f"#define REF_ERR err_{name}" in src
        assert "#define ABS_TOL 1" in src and float.fromhex(
            src.split("#define ABS_PASS (")[1].split(")")[0]) == tol * (1 - 2.0 ** -50)




def _f32(bits) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def _bits(v) -> np.ndarray:
    return np.asarray(v, np.float32).view(np.uint32)


def _arguments(name: str, rng, n: int) -> tuple:
    """Finite nonzero argument triples where a reference is most easily wrong: small and
    huge magnitudes, both signs, subnormals; for mix, a in (0, 1] (its ends, halves, one
    pattern below 1, tiny) and the results that cancel to nearly zero (a = x / (x - y),
    rounded, with x and y of opposite signs) and a outside [0, 1]; for smoothstep, x
    between the edges, on them, beyond them, and edges close together or far apart."""
    def mags(k):
        e = rng.uniform(-40, 40, k)
        v = (rng.uniform(1, 2, k) * 2.0 ** e).astype(np.float32)
        return np.where(rng.random(k) < 0.5, -v, v).astype(np.float32)
    if name == "mix":
        x, y = mags(n), mags(n)
        x[: n // 4] = rng.uniform(-2048, 2048, n // 4).astype(np.float32)
        y[: n // 4] = rng.uniform(-2048, 2048, n // 4).astype(np.float32)
        a = rng.random(n).astype(np.float32)
        a[n // 4: n // 2] = rng.choice(np.float32([1.0, 0.5, 0.25, 0.99999994, 1e-30, 2.0 ** -149]),
                                       n // 4)
        k = slice(n // 2, n // 2 + n // 8)      # x + (y - x) a near 0: x, y of other signs
        y[k] = -np.abs(y[k]) * np.sign(x[k])
        a[k] = (x[k].astype(np.float64) / (x[k].astype(np.float64) - y[k])).astype(np.float32)
        a[n - n // 16:] = np.float32(rng.choice([-0.5, 1.5, 3.0, -1e-30], n // 16))
        keep = (x != 0) & (y != 0) & (a != 0)
        return _bits(x[keep]), _bits(y[keep]), _bits(a[keep])
    e0 = mags(n)
    width = (np.abs(e0).astype(np.float64) * 2.0 ** rng.uniform(-20, 20, n)).astype(np.float32)
    e1 = (e0.astype(np.float64) + width).astype(np.float32)
    t = rng.uniform(-0.5, 1.5, n)
    x = (e0.astype(np.float64) + t * (e1.astype(np.float64) - e0)).astype(np.float32)
    x[: n // 16] = e0[: n // 16]
    x[n // 16: n // 8] = e1[n // 16: n // 8]
    e1[n - n // 16:] = e0[n - n // 16:]                 # edge0 >= edge1: undefined
    keep = (e0 != 0) & (e1 != 0) & (x != 0) & np.isfinite(e1) & np.isfinite(x)
    return _bits(e0[keep]), _bits(e1[keep]), _bits(x[keep])


@pytest.mark.device
@pytest.mark.parametrize("name", sorted(dref.ABSOLUTE))
def test_references_are_within_their_own_error_bounds(name):
    """Every value the reference gives is within its error bound of f (mpmath, exact
    rationals): mix 2**-52 (|r| + 2 |y - x|) (1 + 2**-50), smoothstep 2**-49 |r|; its exact
    answers (smoothstep's 0 and 1) are f rounded; K_ANY exactly where f is undefined."""
    s = device_screen(name)
    rng = np.random.default_rng(41 if name == "mix" else 43)
    cols = _arguments(name, rng, 4000)
    r, kind = s.references(*cols)
    vals = [_f32(c).astype(np.float64) for c in cols]
    if name == "mix":
        undefined = (vals[2] < 0) | (vals[2] > 1)
    else:
        undefined = vals[0] >= vals[1]
    assert np.array_equal(kind == K_ANY, undefined), name
    assert (kind == K_EXACT).any() == (name == "smoothstep")
    worst = 0.0
    with mpmath.workprec(300):
        for i in np.flatnonzero(~undefined):
            args = [mpmath.mpf(float(v[i])) for v in vals]
            f = _MP[name](*args)
            if kind[i] == K_EXACT:
                assert r[i] in (0.0, 1.0) and not np.signbit(r[i])
                assert abs(f - r[i]) <= 2.0 ** -90, (name, [float(a) for a in args])
                continue
            assert kind[i] == K_VALUE
            if name == "mix":
                bound = 2.0 ** -52 * (abs(r[i]) + 2 * abs(vals[1][i] - vals[0][i])) * (1 + 2.0 ** -50)
            else:
                bound = 2.0 ** -49 * abs(r[i])
            err = abs(mpmath.mpf(float(r[i])) - f)
            assert err <= bound, (name, [float(a) for a in args], float(err), bound)
            worst = max(worst, float(err / bound) if bound else 0.0)
    assert 0.0 < worst <= 1.0


@pytest.mark.device
@pytest.mark.parametrize("name", sorted(dref.ABSOLUTE))
def test_the_screen_passes_no_failure_nor_note_and_the_conforming_results(name):
    """Against results near f -- f rounded, moved by 1, 2, 1000 and 2**20 patterns either
    way, f +- 0.99 and 1.01 tolerances, the other sign, zeros, infinities, NaNs -- nothing
    the screen passes is a failure or a note of the checker; f rounded passes wherever
    the arguments are defined and the reference's bound is within 2**-46 of |f| (mix:
    not where x + (y - x) a cancels to below |y - x| / 16: the host's); results
    more than the tolerance from f and not f rounded never pass."""
    s = device_screen(name)
    fn = catalogue.function(name)
    tol = dref.plain_bound(name, "binary32", Claims())
    rng = np.random.default_rng(47 if name == "mix" else 53)
    cols = _arguments(name, rng, 3000)
    names = [a.name for a in fn.inputs]
    args = dict(zip(names, cols))
    vals = [_f32(c).astype(np.float64) for c in cols]
    _, kind = s.references(*cols)
    with mpmath.workprec(300):
        f = np.array([float(_MP[name](*[mpmath.mpf(float(v[i])) for v in vals]))
                      if kind[i] != K_ANY else np.nan for i in range(cols[0].size)])
    defined = kind != K_ANY
    f = np.where(defined, f, 1.0)       # undefined: any result (masked below)
    rn = _bits(f.astype(np.float32))
    tries = [rn] + [rn + np.uint32(k) for k in (1, 2, 1000, 1 << 20)] + \
        [rn - np.uint32(k) for k in (1, 2, 1000, 1 << 20)] + \
        [_bits((f + c * tol).astype(np.float32)) for c in (0.99, -0.99, 1.01, -1.01)] + \
        [rn ^ np.uint32(0x8000_0000), np.zeros_like(rn), np.full_like(rn, 0x7F80_0000),
         np.full_like(rn, 0x7FC0_0000)]
    for k, y in enumerate(tries):
        passed, err = s.screen_pairs(*([cols[0], y] + list(cols[1:])))
        bad = passed_failures(fn, args, y, passed & defined, Claims())
        assert bad.size == 0, (name, k, [hex(int(c[bad[0]])) for c in cols], hex(int(y[bad[0]])))
        yv = _f32(y).astype(np.float64)
        far = defined & (np.abs(yv - f) > tol * (1 + 2.0 ** -20)) & (y != rn)
        assert not passed[far].any(), (name, k)
        if k == 0:
            ok = defined & (rn & np.uint32(0x7FFF_FFFF) != 0) & (np.abs(f) > 2.0 ** -100)
            if name == "mix":           # no cancellation: err_mix within 2**-46 of |f|
                ok &= np.abs(vals[1] - vals[0]) < 16 * np.abs(f)
            assert passed[ok].mean() > 0.97, (name, passed[ok].mean())
            assert passed[~defined].all()       # undefined: any result
    # a result 1.01 tolerances away where f is small is a failure the host records
    small = defined & (np.abs(f) < 1.0) & (np.abs(f) > 0.1)
    y = _bits((f + 1.01 * tol).astype(np.float32))
    assert small.sum() > 20 and not s.screen_pairs(*([cols[0], y] + list(cols[1:])))[0][small].any()


@pytest.mark.device
@pytest.mark.parametrize("name", sorted(dref.ABSOLUTE))
def test_screened_run_units_give_the_host_verdicts(name):
    """Drawn `run` units, with faults planted (1 ULP moved, flipped signs, NaNs and zeros
    for numbers), get the host-screened units' findings, counts and maximum."""
    from fuzzfarm.work.session import DeviceSession
    screen = device_screen(name)
    session = DeviceSession(screen.runner.info)
    faults_caught_in_run_units(session, screen, name, "binary32", Claims(), 1 << 12, 59)
