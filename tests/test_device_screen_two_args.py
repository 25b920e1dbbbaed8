"""The device screen's two-argument built-ins and degrees/radians (issue 28;
docs/device_screen.md "Two-argument built-ins"): their references against mpmath, the
screen's verdicts against the checker's on pairs of every class (a failure passed is the
worst bug: none; correct results of finite nonzero arguments passed), and `run` units
screened on the device with faults planted giving the host-screened unit's verdict.

``device`` tests build the screens on the test device (PyPI's PoCL has cl_khr_fp64)."""
from __future__ import annotations

import zlib

import mpmath
import numpy as np
import pytest

from devices import require_device
from edgecases import bounds, catalogue
from fuzzfarm.oracle import device_screen as ds
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims

TWO = sorted(ds.TWO_ARGS)
ROUNDED_TWO = sorted(n for n in TWO if n not in ds.BIT_EXACT)
EXACT_TWO = sorted(n for n in TWO if n in ds.BIT_EXACT)
UNARY = ["degrees", "radians"]
#: half_divide takes divide's reference at its 8192-ULP bound
NAMES = TWO + UNARY + ["half_divide"]

_MP = {
    "add": lambda x, z: x + z, "sub": lambda x, z: x - z, "mul": lambda x, z: x * z,
    "divide": lambda x, z: x / z, "fdim": lambda x, z: x - z if x > z else mpmath.mpf(0),
    "hypot": lambda x, z: mpmath.sqrt(x * x + z * z), "atan2": mpmath.atan2,
    "atan2pi": lambda x, z: mpmath.atan2(x, z) / mpmath.pi,
    "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "ldexp": lambda x, k: mpmath.ldexp(x, int(k)),
}


def _screen(name):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    key = ("screen", name)
    if key not in _CACHE:
        if "runner" not in _CACHE:
            _CACHE["runner"] = DeviceRunner(info, "")
        bound = ds.plain_bound(name, "binary32", Claims())
        _CACHE[key] = ds.DeviceScreen(_CACHE["runner"], name, bound, 1 << 16)
    return _CACHE[key]


_CACHE: dict = {}


def _f32(bits: np.ndarray) -> np.ndarray:
    return np.asarray(bits, np.uint32).view(np.float32)


def _patterns(rng, n, special=True):
    """binary32 patterns: normals of every binade, subnormals, values near 1 and 2**k,
    and (``special``) zeros, infinities and NaNs."""
    normal = (rng.integers(0x0080_0000, 0x7F80_0000, n, dtype=np.uint32)
              | (rng.integers(0, 2, n, dtype=np.uint32) << np.uint32(31)))
    sub = rng.integers(1, 0x0080_0000, n // 8, dtype=np.uint32) | (
        rng.integers(0, 2, n // 8, dtype=np.uint32) << np.uint32(31))
    near = (np.float32(rng.uniform(0.5, 2.0, n // 4)).view(np.uint32)
            + rng.integers(-3, 4, n // 4).astype(np.uint32))
    parts = [normal, sub, near]
    if special:
        parts.append(np.array([0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x7FC0_0000,
                               0x7F80_0001, 0xFFC0_1234, 1, 0x8000_0001, 0x7F7F_FFFF,
                               0xFF7F_FFFF, 0x0080_0000], np.uint32))
    x = np.concatenate(parts)
    return x[rng.permutation(x.size)][:n]


def _pairs(name, rng, n, special=True):
    """(x, z) pattern pairs of ``n``: independent draws, equal arguments, arguments of
    equal magnitude and opposite signs, neighbours (cancellation), and (atan2, hypot,
    divide) arguments of very different size; for ldexp, z an int32 (as uint32 bits):
    small and large exponents, those that reach the subnormals and the overflow, and
    (``special``) 0 and the extremes."""
    x, z = _patterns(rng, n, special), _patterns(rng, n, special)
    if name in ds.INT_SECOND:
        k = np.concatenate([rng.integers(-300, 301, n // 2), rng.integers(-40, 41, n // 4),
                            rng.integers(-2**31, 2**31, n // 8),
                            [0, 1, -1, 2**31 - 1, -2**31, 127, 128, -126, -149, -150, 277,
                             -277, 400, -400, 401, -401] if special else [1, -1, 254]])
        k = k[k != 0] if not special else k
        return x, rng.choice(k, n).astype(np.int32).view(np.uint32)
    k = n // 8
    z[:k] = x[:k]                                            # equal
    z[k:2 * k] = x[k:2 * k] ^ np.uint32(0x8000_0000)         # opposite
    z[2 * k:3 * k] = x[2 * k:3 * k] + np.uint32(1)          # neighbours
    z[3 * k:4 * k] = (x[3 * k:4 * k] ^ np.uint32(0x8000_0000)) + np.uint32(2)
    return x, z


def _args(name, x, z=None):
    fn = catalogue.function(name)
    names = [a.name for a in fn.inputs]
    if z is not None and fn.inputs[1].kind == "int":
        z = np.asarray(z, np.uint32).view(np.int32)
    return {names[0]: x} if z is None else {names[0]: x, names[1]: z}


def _rn(name, x, z=None):
    """A result close to f's (binary32 patterns): numpy's binary32 operation, or the
    float64 value rounded once."""
    with np.errstate(all="ignore"):
        return _value(name, x, z).astype(np.float32).view(np.uint32)


def _value(name, x, z=None):
    """f in float64 (numpy's functions: exact for +, -, * of binary32 numbers close in
    magnitude, else one rounding)."""
    with np.errstate(all="ignore"):     # signaling NaNs, overflows to infinity
        xf = _f32(x).astype(np.float64)
        zf = None if z is None else _f32(z).astype(np.float64)
        v = {"add": lambda: xf + zf, "sub": lambda: xf - zf, "mul": lambda: xf * zf,
             "divide": lambda: xf / zf, "half_divide": lambda: xf / zf,
             "fdim": lambda: np.where(xf > zf, xf - zf, 0.0),
             "hypot": lambda: np.hypot(xf, zf), "atan2": lambda: np.arctan2(xf, zf),
             "atan2pi": lambda: np.arctan2(xf, zf) / np.pi,
             "fmin": lambda: np.fmin(xf, zf), "min": lambda: np.fmin(xf, zf),
             "fmax": lambda: np.fmax(xf, zf), "max": lambda: np.fmax(xf, zf),
             "maxmag": lambda: np.where(np.abs(xf) > np.abs(zf), xf,
                                        np.where(np.abs(zf) > np.abs(xf), zf, np.fmax(xf, zf))),
             "minmag": lambda: np.where(np.abs(xf) < np.abs(zf), xf,
                                        np.where(np.abs(zf) < np.abs(xf), zf, np.fmin(xf, zf))),
             "copysign": lambda: np.copysign(xf, zf),
             "nextafter": lambda: np.nextafter(_f32(x), _f32(z)).astype(np.float64),
             "step": lambda: np.where(zf < xf, 0.0, 1.0),
             "degrees": lambda: np.degrees(xf), "radians": lambda: np.radians(xf),
             "ldexp": lambda: np.ldexp(_f32(x), np.clip(np.asarray(z, np.uint32).view(
                 np.int32), -400, 400)).astype(np.float64)}[name]()
        return np.asarray(v, np.float64)


# --------------------------------------------------------------------------- pure
def test_two_argument_bounds_are_the_tables():
    """The bounds the screen applies: 0.5 ULP (correctly rounded, the reference rounded
    once) for +, -, * and fdim; the tables' for divide, hypot, atan2, atan2pi (and
    half_divide's 8192); bit for bit for the selections; none under relaxed math, a
    rounding mode other than round to nearest, or where a rule on normal inputs is not
    the reference's."""
    c = Claims()
    for name in ("add", "sub", "mul", "fdim", "ldexp"):
        assert ds.plain_bound(name, "binary32", c) == 0.5
    for name in ("divide", "hypot", "atan2", "atan2pi", "degrees", "radians", "half_divide"):
        assert ds.plain_bound(name, "binary32", c) == float(
            bounds.bound(name, "binary32").plain_ulps), name
    for name in EXACT_TWO:
        assert ds.plain_bound(name, "binary32", c) == 0.0, name
    assert ds.plain_bound("add", "binary64", Claims("binary64")) is None
    assert ds.plain_bound("divide", "binary32", Claims(relaxed=True)) is None
    assert ds.plain_bound("add", "binary32", Claims(rounding=("rtz",))) is None
    for name in ("pow", "fmod", "native_divide", "fma", "pown", "rootn"):
        assert ds.plain_bound(name, "binary32", c) is None, name


def test_a_rule_on_normal_inputs_turns_a_two_argument_screen_off(monkeypatch):
    """A rule of fmin that holds on finite nonzero arguments (not one the reference
    computes) turns fmin's device screen off; copysign's rule on every non-NaN x is the
    reference's result and keeps it."""
    real = catalogue.rules_for
    extra = catalogue.rules_for("log")[2]            # F9.log.3: x < 0
    assert any(p == "lt:0" for _, p in extra.when)
    monkeypatch.setattr(catalogue, "rules_for",
                        lambda n: real(n) + ((extra,) if n in ("fmin", "add") else ()))
    assert ds.plain_bound("fmin", "binary32", Claims()) is None
    assert ds.plain_bound("add", "binary32", Claims()) is None
    assert ds.plain_bound("copysign", "binary32", Claims()) == 0.0


def test_special_answers_of_two_argument_built_ins_are_all_the_hosts():
    for name in TWO:
        a = ds.special_answers(name)
        assert set(a[:4]) == {ds.ANS_HOST} and not a.nan_any_quiet, name


# --------------------------------------------------------------------------- references
@pytest.mark.device
@pytest.mark.parametrize("name", sorted(_MP))
def test_references_agree_with_mpmath(name):
    """Every value a rounded reference gives at finite nonzero arguments (normals,
    subnormals, cancellation, arguments far apart) is within 2**-49 of f, relative, and
    f = 0 (x - x) gives 0; fdim's exact +0 where x <= z."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    two = name in ds.TWO_ARGS
    x, z = _pairs(name, rng, 3000, special=False)
    r, kind = s.references(x, z if two else None)
    worst = 0.0
    with mpmath.workprec(200):
        for xi, zi, ri, ki in zip(x.tolist(), z.tolist(), r.tolist(), kind.tolist()):
            xv = mpmath.mpf(float(np.uint32(xi).view(np.float32)))
            zv = int(np.uint32(zi).view(np.int32)) if name in ds.INT_SECOND else \
                mpmath.mpf(float(np.uint32(zi).view(np.float32)))
            f = _MP[name](xv, zv) if two else _MP[name](xv)
            if ki == 1:                 # an exact answer: fdim's +0
                assert name == "fdim" and f == 0 and ri == 0.0 and \
                    not np.signbit(ri), (hex(xi), hex(zi))
                continue
            assert ki == 0, (name, hex(xi), hex(zi), ki)
            if f == 0:
                assert ri == 0.0, (name, hex(xi), hex(zi), ri)
                continue
            if name in ds.INT_SECOND and abs(int(np.uint32(zi).view(np.int32))) > 400:
                assert abs(ri) == float("inf") or ri == 0.0 or \
                    not (2.0 ** -150 <= abs(ri) < 2.0 ** 128)  # clamped: beyond either way
                continue
            rel = float(abs((mpmath.mpf(ri) - f) / f))
            assert rel <= 2.0 ** -49, (name, hex(xi), hex(zi), ri, rel)
            worst = max(worst, rel)
    assert worst > 0 or name in ("mul", "ldexp")    # exact products


@pytest.mark.device
@pytest.mark.parametrize("name", EXACT_TWO)
def test_exact_references_are_the_checkers_results(name):
    """The exact references' results at finite nonzero arguments (subnormals, equal and
    opposite arguments, the largest values) are what the checker accepts, bit for bit,
    and the screen passes them; one pattern off, the screen passes nothing the checker
    fails."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    x, z = _pairs(name, rng, 4000, special=False)
    r, kind = s.references(x, z)
    assert (kind == 1).all(), name
    y = r.astype(np.float32).view(np.uint32)
    fn = catalogue.function(name)
    res = check_batch(fn, _args(name, x, z), {"ret": y}, Claims())
    assert not res.findings, (name, [(hex(int(x[f.index])), hex(int(z[f.index])),
                                      f.rule_id) for f in res.findings[:4]])
    passed, _ = s.screen_pairs(x, y, z)
    assert passed.all(), name
    for off in (y + np.uint32(1), y - np.uint32(1), y ^ np.uint32(0x8000_0000)):
        passed, _ = s.screen_pairs(x, off, z)
        res = check_batch(fn, _args(name, x, z), {"ret": off}, Claims())
        wrong = {f.index for f in res.findings if f.severity == "fail"}
        assert not (set(np.flatnonzero(passed).tolist()) & wrong), name


# --------------------------------------------------------------------------- soundness
@pytest.mark.device
@pytest.mark.parametrize("name", NAMES)
def test_the_screen_passes_no_failure_and_the_correct_results(name):
    """Against results close to f moved by 0 .. bound + 2 ULPs either way, sign-flipped,
    zeros, infinities, NaNs, and the arguments themselves, at pairs of every class (zeros,
    infinities, NaNs, subnormals, equal, opposite and neighbouring arguments): the device
    passes nothing the checker finds wrong, under claims with and without subnormals; it
    leaves every input with a zero, infinite or NaN argument to the host; and it passes
    the correct results of finite nonzero arguments but a few (a tie, the margin)."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 2)
    two = ds.reference_name(name) in ds.TWO_ARGS
    x, z = _pairs(name, rng, 900)
    zz = z if two else None
    args = _args(name, x, zz)
    rn = _rn(name, x, zz)
    b = int(s.bound) if s.bound < 100 else 3
    offsets = [0, 1, -1, b, -b, b + 1, -(b + 1), b + 2]
    cands = [(rn.astype(np.int64) + k).astype(np.uint32) for k in offsets]
    full = lambda v: np.full(x.size, v, np.uint32)   # noqa: E731
    cands += [rn ^ np.uint32(0x8000_0000), x, full(0), full(0x8000_0000),
              full(0x7F80_0000), full(0xFF80_0000), full(0x7FC0_0000), full(0x7F80_0001)]
    special = lambda v: ((v & np.uint32(0x7FFF_FFFF)) == 0) | (  # noqa: E731
        (v & np.uint32(0x7FFF_FFFF)) >= np.uint32(0x7F80_0000))
    if name in ds.INT_SECOND:       # an int k: only k = 0 is the host's
        ordinary = ~special(x) & (z != 0)
    else:
        ordinary = ~special(x) & (~special(z) if two else True)
    for k, y in enumerate(cands):
        passed, _ = s.screen_pairs(x, y, zz)
        if two:
            assert not (passed & ~ordinary).any(), name
        # a device without subnormals: where results near f are (the flushed zeros)
        for claims in (Claims(), Claims(denormals=False))[:1 + (k < 3 or k >= 8)]:
            res = check_batch(fn, args, {"ret": y}, claims)
            wrong = {f.index for f in res.findings}
            bad = [j for j in np.flatnonzero(passed) if j in wrong]
            assert not bad, (name, claims.denormals, [
                (hex(int(x[j])), hex(int(z[j])), hex(int(y[j]))) for j in bad[:5]])
    # the correct results: the checker's own verdict on rn, passed where it is right
    res = check_batch(fn, args, {"ret": rn}, Claims())
    right = np.ones(x.size, bool)
    right[[f.index for f in res.findings]] = False
    passed, _ = s.screen_pairs(x, rn, zz)
    judged = right & ordinary & ((rn & np.uint32(0x7FFF_FFFF)) != 0) & (
        (rn & np.uint32(0x7FFF_FFFF)) < np.uint32(0x7F80_0000))
    if s.bound == 0.5:              # a tie (x + its neighbour) is the host's by design
        with np.errstate(all="ignore"):
            v = _value(name, x, zz)
            near_tie = np.abs(_f32(rn).astype(np.float64) - v) >= 0.45 * np.spacing(
                np.abs(_f32(rn))).astype(np.float64)
        judged &= ~near_tie
    assert judged.sum() > x.size // 3, name
    assert passed[judged].mean() > 0.99, (name, [
        (hex(int(x[j])), hex(int(z[j])), hex(int(rn[j])))
        for j in np.flatnonzero(judged & ~passed)[:5]])


# --------------------------------------------------------------------------- run units
@pytest.mark.device
@pytest.mark.parametrize("name", NAMES)
def test_screened_run_units_give_the_host_verdicts(name):
    """`run` units (drawn: specials, subnormals, NaN payloads ...) of a built-in of two
    arguments (and degrees, radians) screened on the device after the kernel, and again
    with faults planted among the results (1 ULP beyond the bound, a flipped sign, a NaN
    for a number, a zero for a number), give the host-screened unit's findings, counts and
    maximum error, and every planted fault the checker fails is a recorded failure."""
    from fuzzfarm.verdict.checker import FINDINGS_PER_RULE
    from fuzzfarm.work.check import check_result
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.session import DeviceSession
    s = _screen(name)
    fn = catalogue.function(name)
    names = [a.name for a in fn.inputs]
    session = DeviceSession(s.runner.info)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 3)
    caught = 0
    for serial in (0, 1):
        unit = make_unit("t", (name, "binary32", 1), serial, 5, 0, 1, size=1 << 13)
        inputs = make_inputs(unit)
        landed = session.land(session.launch(unit, inputs))
        assert landed.answer is not None, name
        y = np.array(landed.outputs["ret"])
        dev = check_result(unit, inputs, {"ret": y}, Claims(), landed.answer)
        host = check_result(unit, inputs, {"ret": y}, Claims())
        assert dev.counts_by_rule(None) == host.counts_by_rule(None), (name, serial)
        assert dev.screened > 0, name
        y0 = y.copy()
        pos = rng.choice(y.size, 40, replace=False)
        step = np.uint32(int(s.bound) + 1)
        for k, p in enumerate(pos):
            mag = int(y[p]) & 0x7FFF_FFFF
            if k % 4 == 0 and 0 < mag < 0x7F00_0000:
                y[p] += step
            elif k % 4 == 1:
                y[p] ^= np.uint32(0x8000_0000)
            elif k % 4 == 2:
                y[p] = np.uint32(0x7FC0_0000)
            else:
                y[p] = np.uint32(0) if mag else np.uint32(0x3F80_0000)
        xs = [np.ascontiguousarray(inputs[a]).view(np.uint32) for a in names]
        answer = s.screen_drawn(xs[0], y, xs[1] if len(xs) > 1 else None)
        dev = check_result(unit, inputs, {"ret": y}, Claims(), answer)
        host = check_result(unit, inputs, {"ret": y}, Claims())
        assert dev.n == host.n == y.size
        assert dev.counts_by_rule(None) == host.counts_by_rule(None), (name, serial)
        key = lambda f: (f.index, f.rule_id, f.severity)   # noqa: E731
        assert sorted(map(key, dev.findings)) == sorted(map(key, host.findings)), name
        assert dev.max_ulp_error == pytest.approx(host.max_ulp_error, abs=1e-9) or (
            np.isnan(dev.max_ulp_error) and np.isnan(host.max_ulp_error))
        failed = {f.index for f in dev.findings if f.severity == "fail"}
        full = {r for r, c in host.counts_by_rule("fail").items() if c >= FINDINGS_PER_RULE}
        for p in pos:
            one = {a: inputs[a][p:p + 1] for a in names}
            was, now = (check_batch(fn, one, {"ret": v[p:p + 1]}, Claims()) for v in (y0, y))
            fails = {f.rule_id for f in now.findings if f.severity == "fail"}
            if was.findings or not fails or fails & full:
                continue
            assert p in failed, (name, [hex(int(v[p])) for v in xs], hex(int(y[p])))
            caught += 1
    assert caught > 0, name
