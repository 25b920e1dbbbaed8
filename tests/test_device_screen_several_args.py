"""The device screen's built-ins of two and three arguments, of a second output, and
degrees/radians (issue 28; docs/device_screen.md "Two-argument built-ins",
"Three-argument built-ins", "Built-ins of a second output"): their
references against mpmath, the screen's verdicts against the checker's on arguments of
every class (a failure passed is the worst bug: none; correct results of finite nonzero
arguments passed), and `run` units screened on the device with faults planted giving the
host-screened unit's verdict.

``device`` tests build the screens on the test device (PyPI's PoCL has cl_khr_fp64)."""
from __future__ import annotations

import math
import zlib

import mpmath
import numpy as np
import pytest

from devices import require_device
from edgecases import bounds, catalogue
from planted_faults import faults_caught_in_run_units, passed_failures
from fuzzfarm.oracle import device_references as dref
from fuzzfarm.oracle import device_screen as ds
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims

#: of several arguments and one output (remquo, of two outputs, with OUT2 below)
#: (those judged only by their rules or at absolute tolerances: test_device_screen_rules_only.py,
#: test_device_screen_absolute.py)
SEVERAL = sorted(dref.SEVERAL_ARGS - set(dref.SECOND_OUTPUT) - dref.RULES_ONLY - dref.ABSOLUTE)
EXACT_SEVERAL = sorted(n for n in SEVERAL if n in dref.BIT_EXACT)
UNARY = ["degrees", "radians"]
#: half_divide and half_powr take divide's and powr's references at their 8192-ULP bound
NAMES = SEVERAL + UNARY + ["half_divide", "half_powr"]
#: of a second output (frexp, modf, fract, remquo)
OUT2 = sorted(set(dref.SECOND_OUTPUT) - dref.RULES_ONLY)

_MP = {
    "add": lambda x, z: x + z, "sub": lambda x, z: x - z, "mul": lambda x, z: x * z,
    "divide": lambda x, z: x / z, "fdim": lambda x, z: x - z if x > z else mpmath.mpf(0),
    "hypot": lambda x, z: mpmath.sqrt(x * x + z * z), "atan2": mpmath.atan2,
    "atan2pi": lambda x, z: mpmath.atan2(x, z) / mpmath.pi,
    "degrees": lambda x: x * 180 / mpmath.pi, "radians": lambda x: x * mpmath.pi / 180,
    "ldexp": lambda x, k: mpmath.ldexp(x, int(k)),
    "fma": lambda a, b, c: a * b + c, "mad": lambda a, b, c: a * b + c,
    "pow": lambda x, y: _mp_pow(x, y), "powr": lambda x, y: _mp_pow(x, y),
    "pown": lambda x, n: _mp_pow(x, n),
    "rootn": lambda x, n: mpmath.sign(x) * abs(x) ** (mpmath.mpf(1) / n),
}


def _sin_screen(s, precision, bound):
    """sin's screen on ``s``'s runner (its error alone, for sincos's)."""
    return ds.DeviceScreen(s.runner, "sin", bound, 1 << 14, precision=precision)


def _mp_pow(x, y):
    """x**y, real: |x|**y with x's sign where y is an odd integer (NaN where x < 0 and y
    is not an integer)."""
    if x > 0:
        return mpmath.power(x, y)
    if y != int(y):
        return mpmath.nan
    v = mpmath.power(-x, y)
    return -v if int(y) % 2 else v


def _nan_ruled(name, x, y):
    """Whether a rule prescribes a NaN at finite nonzero x, y (K_NAN): pow of x < 0 and a
    non-integer y, powr of x < 0, rootn of x < 0 and an even n."""
    if x >= 0:
        return False
    return {"pow": y != int(y), "powr": True, "rootn": int(y) % 2 == 0}.get(name, False)


def _screen(name):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    key = ("screen", name)
    if key not in _CACHE:
        if "runner" not in _CACHE:
            _CACHE["runner"] = DeviceRunner(info, "")
        bound = dref.plain_bound(name, "binary32", Claims())
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


def _arguments(name, rng, n, special=True):
    """The arguments of ``n`` inputs of built-in ``name`` (uint32 patterns, one array per
    argument): one for degrees and radians; ``_pairs`` for two; ``_triples`` for three."""
    if name in dref.THREE_ARGS:
        return _triples(name, rng, n, special)
    if dref.reference_name(name) in dref.TWO_ARGS:
        return _pairs(name, rng, n, special)
    return (_patterns(rng, n, special),)


def _triples(name, rng, n, special=True):
    """(a, b, c) of fma and mad: independent draws; c = -(a b rounded), and its neighbours (the
    sum cancels to a few ULPs of the product, or to the product's rounding error); c far
    below and far above a b.  (x, minval, maxval) of clamp: bounds in order with x below,
    between, above and equal to either; and bounds out of order (undefined)."""
    x, z, w = (_patterns(rng, n, special) for _ in range(3))
    k = n // 8
    with np.errstate(all="ignore"):
        if name in ("fma", "mad"):
            p = (_f32(x).astype(np.float64) * _f32(z)).astype(np.float32).view(np.uint32)
            mag = p & np.uint32(0x7FFF_FFFF)
            c = w.copy()
            c[:k] = p[:k] ^ np.uint32(0x8000_0000)
            c[k:2 * k] = (p[k:2 * k] ^ np.uint32(0x8000_0000)) + rng.integers(
                -3, 4, k).astype(np.uint32)
            c[2 * k:3 * k] = (p[2 * k:3 * k] & np.uint32(0x8000_0000)) | (np.maximum(
                mag[2 * k:3 * k], np.uint32(31 << 23)) - np.uint32(30 << 23))  # 2**-30 a b
            ok = (mag >= np.uint32(31 << 23)) & (mag < np.uint32(0x7F80_0000))
            return x, z, np.where(ok, c, w)
    lo = np.minimum(_f32(z), _f32(w))
    hi = np.maximum(_f32(z), _f32(w))
    z[:4 * k], w[:4 * k] = lo[:4 * k].view(np.uint32), hi[:4 * k].view(np.uint32)
    x[:k] = z[:k]                                   # on a bound
    x[k:2 * k] = w[k:2 * k]
    x[2 * k:3 * k] = z[2 * k:3 * k] - np.uint32(1)  # a pattern off a bound
    return x, z, w


def _pairs(name, rng, n, special=True):
    """(x, z) pattern pairs of ``n``: independent draws, equal arguments, arguments of
    equal magnitude and opposite signs, neighbours (cancellation), and (atan2, hypot,
    divide) arguments of very different size; for ldexp, z an int32 (as uint32 bits):
    small and large exponents, those that reach the subnormals and the overflow, and
    (``special``) 0 and the extremes."""
    x, z = _patterns(rng, n, special), _patterns(rng, n, special)
    if dref.reference_name(name) in ("pown", "rootn", "pow", "powr"):
        return _power_pairs(dref.reference_name(name), rng, x, z, special)
    if name in dref.INT_SECOND:
        k = np.concatenate([rng.integers(-300, 301, n // 2), rng.integers(-40, 41, n // 4),
                            rng.integers(-2**31, 2**31, n // 8),
                            [0, 1, -1, 2**31 - 1, -2**31, 127, 128, -126, -149, -150, 277,
                             -277, 400, -400, 401, -401] if special else [1, -1, 254]])
        k = k[k != 0] if not special else k
        return x, rng.choice(k, n).astype(np.int32).view(np.uint32)
    k = n // 8
    if name in ("fmod", "remainder"):   # x = (m + 1/2) z and m z: remainder's ties, zeros
        with np.errstate(all="ignore"):
            m = rng.integers(1, 1 << 12, 2 * k).astype(np.float32)
            m[::2] += np.float32(0.5)
            zf = _f32(z[4 * k:6 * k])
            xm = (zf.astype(np.float64) * m).astype(np.float32)
            exact = np.isfinite(xm) & (xm.astype(np.float64) == zf.astype(np.float64) * m)
        x[4 * k:6 * k] = np.where(exact, xm.view(np.uint32), x[4 * k:6 * k])
    z[:k] = x[:k]                                            # equal
    z[k:2 * k] = x[k:2 * k] ^ np.uint32(0x8000_0000)         # opposite
    z[2 * k:3 * k] = x[2 * k:3 * k] + np.uint32(1)          # neighbours
    z[3 * k:4 * k] = (x[3 * k:4 * k] ^ np.uint32(0x8000_0000)) + np.uint32(2)
    return x, z


def _power_pairs(name, rng, x, z, special):
    """(x, y) of pow, powr, pown and rootn (y an int32 as uint32 bits for the last two):
    besides independent draws, x of moderate size with exponents that keep the result in
    range (integers for x < 0), x within a few ULPs of 1 with large exponents, and
    results near the overflow and underflow thresholds."""
    n = x.size
    k = n // 8
    mid = (np.float32(rng.uniform(0.5, 2.0, n)) * np.float32(2.0) ** rng.integers(
        -6, 7, n).astype(np.float32) * rng.choice(np.float32([-1, 1]), n))
    near1 = np.float32(1).view(np.uint32) + rng.integers(-60, 61, n).astype(np.uint32)
    if name in dref.INT_SECOND:
        ints = np.concatenate([rng.integers(-40, 41, n // 2), rng.integers(-300, 301, n // 4),
                               rng.integers(-2 ** 31, 2 ** 31, n // 4),
                               [1, -1, 2, -2, 3, 2 ** 31 - 1, -2 ** 31] if special
                               else [1, -1, 2, -2, 3]])
        ints = ints[ints != 0] if not special else ints
        y = rng.choice(ints, n).astype(np.int32)
        if name == "pown":          # near 1 with |n| up to 2**26: in range
            y[3 * k:4 * k] = rng.integers(-2 ** 26, 2 ** 26, k) | 1
            x[3 * k:4 * k] = near1[3 * k:4 * k]
        x[:3 * k] = mid[:3 * k].view(np.uint32)
        return x, y.view(np.uint32)
    yf = _f32(z).copy()
    yf[:2 * k] = np.float32(rng.uniform(-40, 40, 2 * k))
    yf[2 * k:3 * k] = np.float32(rng.integers(-120, 121, k))       # integers: x < 0 too
    x[:3 * k] = mid[:3 * k].view(np.uint32)
    if name == "powr":
        x[:3 * k] &= np.uint32(0x7FFF_FFFF)
    x[3 * k:4 * k] = near1[3 * k:4 * k]                              # |y| up to 2**30
    yf[3 * k:4 * k] = np.float32(rng.uniform(-1, 1, k) * 2.0 ** rng.integers(10, 31, k))
    with np.errstate(all="ignore"):                                   # near 2**128, 2**-150
        lx = np.log2(np.abs(_f32(x[4 * k:5 * k]).astype(np.float64)))
        edge = rng.choice([127.9, 128.02, -149.2, -150.3, -126.5], k)
        yf[4 * k:5 * k] = np.where(np.abs(lx) > 2.0 ** -10, np.float32(edge / lx),
                                   yf[4 * k:5 * k])
    return x, yf.view(np.uint32)


def _args(name, *cols):
    """The checker's arguments of built-in ``name``: its inputs' names to ``cols``."""
    fn = catalogue.function(name)
    return {a.name: (np.asarray(c, np.uint32).view(np.int32) if a.kind == "int" else c)
            for a, c in zip(fn.inputs, cols)}


def _rn(name, *cols):
    """A result close to f's (binary32 patterns): numpy's binary32 operation, or the
    float64 value rounded once."""
    with np.errstate(all="ignore"):
        return _value(name, *cols).astype(np.float32).view(np.uint32)


def _rootn(xf, n):
    """rootn in float64: |x|**(1/n) with x's sign, NaN for x < 0 and an even n."""
    with np.errstate(all="ignore"):
        v = np.abs(xf) ** (1.0 / n.astype(np.float64))
        return np.where((xf < 0) & (n % 2 == 0), np.nan, np.copysign(v, xf))


def _unfused(a, b, c):
    """mad's unfused result fl(fl(a b) + c) (binary32 patterns; numpy's binary32 * and +
    are correctly rounded)."""
    with np.errstate(all="ignore"):
        return ((_f32(a) * _f32(b)) + _f32(c)).astype(np.float32).view(np.uint32)


def _ieee_remainder(xf, zf):
    """IEEE 754 remainder of float64 arrays (Python's math.remainder; NaN where it
    raises: a zero z, an infinite x)."""
    def one(a, b):
        try:
            return math.remainder(a, b)
        except ValueError:
            return math.nan
    return np.array([one(a, b) for a, b in zip(xf.tolist(), zf.tolist())], np.float64)


def _value(name, x, z=None, w=None):
    """f in float64 (numpy's functions: exact for +, -, * of binary32 numbers close in
    magnitude, else one rounding; fma's product exact, the sum one rounding)."""
    with np.errstate(all="ignore"):     # signaling NaNs, overflows to infinity
        xf = _f32(x).astype(np.float64)
        zf = None if z is None else _f32(z).astype(np.float64)
        wf = None if w is None else _f32(w).astype(np.float64)
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
             "fmod": lambda: np.fmod(xf, zf),
             "remainder": lambda: _ieee_remainder(xf, zf),
             "fma": lambda: xf * zf + wf, "mad": lambda: xf * zf + wf,
             "pow": lambda: np.power(xf, zf),
             "powr": lambda: np.where(xf < 0, np.nan, np.power(xf, zf)),
             "half_powr": lambda: np.where(xf < 0, np.nan, np.power(xf, zf)),
             "pown": lambda: np.power(xf, np.asarray(z, np.uint32).view(np.int32).astype(
                 np.float64)),
             "rootn": lambda: _rootn(xf, np.asarray(z, np.uint32).view(np.int32)),
             "clamp": lambda: np.where(zf > wf, np.nan, np.fmin(np.fmax(xf, zf), wf)),
             "degrees": lambda: np.degrees(xf), "radians": lambda: np.radians(xf),
             "ldexp": lambda: np.ldexp(_f32(x), np.clip(np.asarray(z, np.uint32).view(
                 np.int32), -400, 400)).astype(np.float64)}[name]()
        return np.asarray(v, np.float64)


# --------------------------------------------------------------------------- pure
def test_several_argument_bounds_are_the_tables():
    """The bounds the screen applies: 0.5 ULP (correctly rounded, the reference rounded
    once) for +, -, *, fdim, ldexp and fma, and for mad either of its two results; the
    tables' for divide, hypot, atan2, atan2pi, the powers (and half_divide's and
    half_powr's 8192); bit for bit for the selections, fmod, remainder and clamp; none
    under relaxed math, a rounding mode other than round to nearest, in binary64 for a
    built-in without a binary64 reference (pow), or for a built-in without a reference or
    of two outputs without a judge of the second."""
    c = Claims()
    for name in ("add", "sub", "mul", "fdim", "ldexp"):
        assert dref.plain_bound(name, "binary32", c) == 0.5
    for name in ("divide", "hypot", "atan2", "atan2pi", "degrees", "radians", "half_divide",
                 "pow", "powr", "pown", "rootn", "half_powr"):
        assert dref.plain_bound(name, "binary32", c) == float(
            bounds.bound(name, "binary32").plain_ulps), name
    for name in ("fma", "mad"):
        assert dref.plain_bound(name, "binary32", c) == 0.5
    for name in EXACT_SEVERAL:
        assert dref.plain_bound(name, "binary32", c) == 0.0, name
    assert dref.plain_bound("add", "binary64", Claims("binary64")) == 0.5    # since 2026-11-28
    assert dref.plain_bound("pow", "binary64", Claims("binary64")) == 16.0   # the ninth stop
    assert dref.plain_bound("divide", "binary32", Claims(relaxed=True)) is None
    assert dref.plain_bound("add", "binary32", Claims(rounding=("rtz",))) is None
    assert dref.plain_bound("dot", "binary32", c) is None               # no reference
    assert dref.plain_bound("mix", "binary32", c) == 1e-3             # ABSOLUTE tolerances
    assert dref.plain_bound("smoothstep", "binary32", c) == 1e-5
    for name in ("native_divide", "native_powr"):      # measured only (NATIVE_ULPS)
        assert dref.plain_bound(name, "binary32", c) == dref.NATIVE_ULPS, name


def test_a_rule_on_normal_inputs_turns_a_two_argument_screen_off(monkeypatch):
    """A rule of fmin that holds on finite nonzero arguments (not one the reference
    computes) turns fmin's device screen off; copysign's rule on every non-NaN x is the
    reference's result and keeps it."""
    real = catalogue.rules_for
    extra = catalogue.rules_for("log")[2]            # F9.log.3: x < 0
    assert any(p == "lt:0" for _, p in extra.when)
    monkeypatch.setattr(catalogue, "rules_for",
                        lambda n: real(n) + ((extra,) if n in ("fmin", "add") else ()))
    assert dref.plain_bound("fmin", "binary32", Claims()) is None
    assert dref.plain_bound("add", "binary32", Claims()) is None
    assert dref.plain_bound("copysign", "binary32", Claims()) == 0.0


def test_special_answers_of_two_argument_built_ins_are_all_the_hosts():
    for name in SEVERAL:
        a = dref.special_answers(name)
        assert set(a[:4]) == {dref.ANS_HOST} and not a.nan_any_quiet, name


# --------------------------------------------------------------------------- references
@pytest.mark.device
@pytest.mark.parametrize("name", sorted(_MP))
def test_references_agree_with_mpmath(name):
    """Every value a rounded reference gives at finite nonzero arguments (normals,
    subnormals, cancellation, arguments far apart) is within 2**-49 of f, relative, and
    f = 0 (x - x) gives 0; fdim's exact +0 where x <= z."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    cols = _arguments(name, rng, 3000, special=False)
    x, z = cols[0], cols[-1]        # for the messages
    r, kind = s.references(*cols)
    worst = 0.0
    with mpmath.workprec(200):
        for i, (xi, zi, ri, ki) in enumerate(zip(x.tolist(), z.tolist(), r.tolist(),
                                                 kind.tolist())):
            vals = [int(np.uint32(c[i]).view(np.int32)) if (j and name in dref.INT_SECOND)
                    else mpmath.mpf(float(np.uint32(c[i]).view(np.float32)))
                    for j, c in enumerate(cols)]
            nan = len(vals) == 2 and _nan_ruled(name, *vals)
            assert (ki == 4) == nan, (name, hex(xi), hex(zi), ki)
            if nan:
                continue
            f = _MP[name](*vals)
            if ki == 1:                 # an exact answer: fdim's +0, pow(1, y) = 1
                assert (f, ri) in ((0, 0.0), (1, 1.0)) and not np.signbit(ri), (
                    name, hex(xi), hex(zi))
                assert name == "fdim" or (name in ("pow", "powr") and vals[0] == 1)
                continue
            assert ki == 0, (name, hex(xi), hex(zi), ki)
            if f == 0:
                assert ri == 0.0, (name, hex(xi), hex(zi), ri)
                continue
            if not 2.0 ** -151 <= abs(f) < 2.0 ** 129:     # clamped: beyond either way
                beyond = abs(f) >= 2.0 ** 129
                assert (np.sign(ri) == int(mpmath.sign(f)) and
                        (abs(ri) >= 2.0 ** 129 if beyond else abs(ri) < 2.0 ** -151)), (
                    name, hex(xi), hex(zi), ri)
                continue
            rel = float(abs((mpmath.mpf(ri) - f) / f))
            assert rel <= 2.0 ** -49, (name, hex(xi), hex(zi), ri, rel)
            worst = max(worst, rel)
    assert worst > 0 or name in ("mul", "ldexp")    # exact products
    if name in dref.INT_SECOND | {"pow", "powr"}:
        inside = np.abs(r[kind == 0])
        assert ((inside >= 2.0 ** -149) & (inside < 2.0 ** 128)).mean() > 0.3, name
    if name in ("fma", "mad"):      # cancelling sums were among them
        c = np.abs(_f32(cols[2])).astype(np.float64)
        assert ((np.abs(r) < 2.0 ** -20 * c) & (r != 0)).sum() > 100


@pytest.mark.device
@pytest.mark.parametrize("name", EXACT_SEVERAL)
def test_exact_references_are_the_checkers_results(name):
    """The exact references' results at finite nonzero arguments (subnormals, equal and
    opposite arguments, the largest values) are what the checker accepts, bit for bit,
    and the screen passes them; one pattern off, the screen passes nothing the checker
    fails."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    cols = _arguments(name, rng, 4000, special=False)
    x, z = cols[0], cols[1]
    r, kind = s.references(*cols)
    undefined = kind == 5           # clamp's minval > maxval: any result
    assert (kind[~undefined] == 1).all() and (not undefined.any() or name == "clamp"), name
    y = r.astype(np.float32).view(np.uint32)
    fn = catalogue.function(name)
    res = check_batch(fn, _args(name, *cols), {"ret": y}, Claims())
    assert not res.findings, (name, [(hex(int(x[f.index])), hex(int(z[f.index])),
                                      f.rule_id) for f in res.findings[:4]])
    passed, _ = s.screen_pairs(x, y, *cols[1:])
    assert passed.all(), name
    for off in (y + np.uint32(1), y - np.uint32(1), y ^ np.uint32(0x8000_0000)):
        passed, _ = s.screen_pairs(x, off, *cols[1:])
        res = check_batch(fn, _args(name, *cols), {"ret": off}, Claims())
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
    the correct results of finite nonzero arguments but a few (a tie, the margin).
    600 inputs each here; 20,000 in the opt-in tier (``-m soundness``)."""
    _soundness(name, 600, 2)


@pytest.mark.device
@pytest.mark.soundness
@pytest.mark.parametrize("name", NAMES)
def test_the_screen_passes_no_failure_and_the_correct_results_full(name, request):
    if "soundness" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("the full tier is opt-in: pytest -m soundness")
    _soundness(name, 20_000, 7)


def _soundness(name, n, seed):
    """``test_the_screen_passes_no_failure_and_the_correct_results`` on ``n`` inputs."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + seed)
    cols = _arguments(name, rng, n)
    two = len(cols) > 1
    x, z = cols[0], cols[-1]        # for the messages
    args = _args(name, *cols)
    rn = _rn(name, *cols)
    b = int(s.bound) if s.bound < 100 else 3
    offsets = [0, 1, -1, b, -b, b + 1, -(b + 1), b + 2]
    cands = [(rn.astype(np.int64) + k).astype(np.uint32) for k in offsets]
    full = lambda v: np.full(x.size, v, np.uint32)   # noqa: E731
    cands += [rn ^ np.uint32(0x8000_0000), x, full(0), full(0x8000_0000),
              full(0x7F80_0000), full(0xFF80_0000), full(0x7FC0_0000), full(0x7F80_0001)]
    if name == "mad":               # the unfused result, and a pattern either side
        un = _unfused(*cols)
        cands += [un, un + np.uint32(1), un - np.uint32(1)]
    special = lambda v: ((v & np.uint32(0x7FFF_FFFF)) == 0) | (  # noqa: E731
        (v & np.uint32(0x7FFF_FFFF)) >= np.uint32(0x7F80_0000))
    if name in dref.INT_SECOND:       # an int k: only k = 0 is the host's
        ordinary = ~special(x) & (z != 0)
    else:
        ordinary = ~np.logical_or.reduce([special(c) for c in cols])
    for k, y in enumerate(cands):
        passed, _ = s.screen_pairs(x, y, *cols[1:])
        if two:
            assert not (passed & ~ordinary).any(), name
        # a device without subnormals: where results near f are (the flushed zeros)
        for claims in (Claims(), Claims(denormals=False))[:1 + (k < 3 or k >= 8)]:
            bad = passed_failures(fn, args, y, passed, claims)
            assert not bad.size, (name, claims.denormals, [
                (hex(int(x[j])), hex(int(z[j])), hex(int(y[j]))) for j in bad[:5]])
    # the correct results: the checker's own verdict on rn, passed where it is right
    res = check_batch(fn, args, {"ret": rn}, Claims())
    right = np.ones(x.size, bool)
    right[[f.index for f in res.findings]] = False
    passed, _ = s.screen_pairs(x, rn, *cols[1:])
    judged = right & ordinary & ((rn & np.uint32(0x7FFF_FFFF)) != 0) & (
        (rn & np.uint32(0x7FFF_FFFF)) < np.uint32(0x7F80_0000))
    if s.bound == 0.5:              # a tie (x + its neighbour) is the host's by design
        with np.errstate(all="ignore"):
            v = _value(name, *cols)
            near_tie = np.abs(_f32(rn).astype(np.float64) - v) >= 0.45 * np.spacing(
                np.abs(_f32(rn))).astype(np.float64)
        judged &= ~near_tie
    assert judged.sum() > x.size // 3, name
    if name == "mad":               # the unfused results the checker accepts pass too
        un = _unfused(*cols)
        res = check_batch(fn, args, {"ret": un}, Claims())
        ok = np.ones(x.size, bool)
        ok[[f.index for f in res.findings]] = False
        with np.errstate(all="ignore"):
            p = np.abs(_f32(x).astype(np.float64) * _f32(cols[1]))
        fine = ok & ordinary & (un != rn) & (p >= 2.0 ** -126) & (p < 2.0 ** 127) & (
            (un & np.uint32(0x7FFF_FFFF)) != 0) & ((un & np.uint32(0x7FFF_FFFF)) < np.uint32(
                0x7F80_0000))
        passed_un, _ = s.screen_pairs(x, un, *cols[1:])
        assert fine.sum() > 5 and passed_un[fine].mean() > 0.9, (fine.sum(), passed_un[fine])
    assert passed[judged].mean() > 0.99, (name, [
        (hex(int(x[j])), hex(int(z[j])), hex(int(rn[j])))
        for j in np.flatnonzero(judged & ~passed)[:5]])


# --------------------------------------------------------------------------- run units
@pytest.mark.device
@pytest.mark.parametrize("name", NAMES + OUT2 + ["sincos"])
def test_screened_run_units_give_the_host_verdicts(name):
    """`run` units (drawn: specials, subnormals, NaN payloads ...) of a built-in of two
    or three arguments or of two outputs (and degrees, radians) screened on the device
    after the kernel, and again with faults planted among the results (1 ULP beyond the
    bound, a flipped sign, a NaN for a number, a zero for a number; a second output one
    off or of the other sign), give the host-screened unit's findings, counts and maximum
    error, and every planted fault the checker fails is a recorded failure."""
    from fuzzfarm.work.session import DeviceSession
    s = _screen(name)
    session = DeviceSession(s.runner.info)
    caught = faults_caught_in_run_units(session, s, name, "binary32", Claims(), 1 << 13,
                                        zlib.crc32(name.encode()) + 3)
    assert caught > 0, name


# --------------------------------------------------------------------------- second outputs
def _out2_arguments(name, rng, n, special=True):
    """Arguments of a built-in of two outputs: for frexp, modf and fract, patterns of
    every class and values next to integers, negative values below 1 in magnitude down to
    2**-60 (fract's cap and its inexact differences) and integers; remquo's, remainder's
    pairs (ties, multiples, arguments far apart)."""
    if name == "remquo":
        return _pairs("remainder", rng, n, special)
    x = _patterns(rng, n, special)
    k = n // 8
    near = np.float32(rng.integers(-2 ** 24, 2 ** 24, k)).view(np.uint32)
    x[:k] = near + rng.integers(-2, 3, k).astype(np.uint32)
    x[k:2 * k] = (-np.float32(rng.uniform(0, 1, k)) * np.float32(2.0) ** (
        -rng.integers(0, 61, k).astype(np.float32))).view(np.uint32)
    return (x,)


def _out2_results(name, *cols):
    """Built-in ``name``'s right outputs {name: array} at ``cols`` (numpy's frexp and modf,
    fract from floor, remquo from remainder and the quotient rounded half to even: any
    value of the right sign congruent modulo 8 is right, the low 7 bits are given)."""
    from fractions import Fraction
    x = _f32(cols[0])
    with np.errstate(all="ignore"):
        if name == "frexp":
            m, e = np.frexp(x)
            return {"ret": m.astype(np.float32).view(np.uint32), "exp": e.astype(np.int32)}
        if name == "modf":
            f, i = np.modf(x)
            return {"ret": f.view(np.uint32), "iptr": i.view(np.uint32)}
        if name == "fract":
            fl = np.floor(x)
            v = (x.astype(np.float64) - fl).astype(np.float32)
            v = np.where(np.isinf(x), np.copysign(np.float32(0), x),
                         np.minimum(v, np.float32(1) - np.float32(2.0 ** -24)))
            return {"ret": np.where(x == 0, x, v).astype(np.float32).view(np.uint32),
                    "iptr": fl.view(np.uint32)}
    z = _f32(cols[1])
    quo = np.zeros(x.size, np.int32)
    for i, (a, b) in enumerate(zip(x.tolist(), z.tolist())):
        if np.isfinite(a) and np.isfinite(b) and b != 0 and a != 0:
            n = round(Fraction(a) / Fraction(b))
            quo[i] = (1 if (a < 0) == (b < 0) else -1) * (abs(n) & 127)
    return {"ret": _ieee_remainder(x.astype(np.float64), z.astype(np.float64)).astype(
        np.float32).view(np.uint32), "quo": quo}


def test_second_output_bounds_and_special_answers():
    """frexp, modf, fract and remquo are judged bit for bit (0 ULP, fract correctly rounded,
    remquo's quo modulo 8); sincos's two rounded outputs at sin's bound; every input with a
    special argument is the host's; lgamma_r's (implementation-defined) are its rules'
    (test_device_screen_rules_only.py)."""
    for name in OUT2:
        assert dref.plain_bound(name, "binary32", Claims()) == 0.0, name
        a = dref.special_answers(name)
        assert set(a[:4]) == {dref.ANS_HOST} and not a.nan_any_quiet, name
    for p in ("binary16", "binary32", "binary64"):
        assert dref.plain_bound("sincos", p, Claims(p)) == dref.plain_bound("sin", p, Claims(p))
        assert set(dref.special_answers("sincos", p)[:4]) == {dref.answer_markers(
            {"binary16": 16, "binary32": 32, "binary64": 64}[p])[1]}
    assert dref.plain_bound("lgamma_r", "binary32", Claims()) == 0.0     # RULES_ONLY
    assert "#define REF2 ref64_cos" in ds.screen_source("sincos", 4.0, precision="binary64")


@pytest.mark.device
@pytest.mark.parametrize("name", OUT2)
def test_second_output_screen_passes_no_failure_and_the_right_results(name):
    """The right outputs of finite nonzero arguments (the references' first output bit for
    bit, the second from numpy or exact Python) are what the checker accepts and the screen
    passes, every one; against wrong first or second outputs -- a pattern off, the other
    sign, a zero, a NaN, the argument, a second output one off, negated, or congruent
    modulo 8 (remquo: right) -- the screen passes nothing the checker fails, and no input
    with a zero, infinite or NaN argument."""
    s = _screen(name)
    fn = catalogue.function(name)
    out2 = fn.outputs[1].name
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 5)
    cols = _out2_arguments(name, rng, 1500, special=False)
    right = _out2_results(name, *cols)
    r, kind = s.references(*cols)
    assert (kind == 1).all() and (r.astype(np.float32).view(np.uint32) == right["ret"]).all()
    args = _args(name, *cols)
    res = check_batch(fn, args, right, Claims())
    assert not res.findings, (name, [(f.rule_id, f.output, f.index) for f in res.findings[:4]])
    passed, _ = s.screen_pairs(cols[0], right["ret"], *cols[1:], y2bits=right[out2])
    assert passed.all(), (name, np.flatnonzero(~passed)[:5])
    cols = _out2_arguments(name, rng, 1500)
    right = _out2_results(name, *cols)
    args = _args(name, *cols)
    y, y2 = right["ret"], right[out2]
    full = lambda v: np.full(y.size, v, np.uint32)   # noqa: E731
    firsts = [y + np.uint32(1), y - np.uint32(1), y ^ np.uint32(1 << 31), full(0),
              full(1 << 31), full(0x7FC0_0000), cols[0]]
    y2u = y2.view(np.uint32)
    seconds = [y2u + np.uint32(1), y2u - np.uint32(1), y2u ^ np.uint32(1 << 31), full(0),
               (y2.astype(np.int64) + 8).astype(np.uint32) if y2.dtype == np.int32 else
               full(0x7FC0_0000), (-y2.astype(np.int64)).astype(np.uint32)
               if y2.dtype == np.int32 else cols[0]]
    special = lambda v: ((v & np.uint32(0x7FFF_FFFF)) == 0) | (  # noqa: E731
        (v & np.uint32(0x7FFF_FFFF)) >= np.uint32(0x7F80_0000))
    ordinary = ~np.logical_or.reduce([special(c) for c in cols])
    pairs = [(f, y2u) for f in firsts] + [(y, v) for v in seconds]
    for first, sec in pairs:
        passed, _ = s.screen_pairs(cols[0], first, *cols[1:], y2bits=sec)
        assert not (passed & ~ordinary).any(), name
        outs = {"ret": first, out2: sec.view(y2.dtype)}
        res = check_batch(fn, args, outs, Claims())
        wrong = {f.index for f in res.findings}
        bad = [j for j in np.flatnonzero(passed) if j in wrong]
        assert not bad, (name, [(hex(int(cols[0][j])), hex(int(first[j])), int(sec[j]))
                                for j in bad[:5]])


# --------------------------------------------------------------------------- sincos
@pytest.mark.device
@pytest.mark.parametrize("precision", ["binary16", "binary32", "binary64"])
def test_sincos_passes_both_outputs_within_the_bound_and_no_failure(precision):
    """sincos's result and cosval are each judged as sin's and cos's (REF2): against the
    right pair (numpy's sin and cos rounded), either output one or bound + 1 ULPs off, of
    the other sign, zero or a NaN, the screen passes nothing the checker fails (both
    outputs), and 98 % or more of the right pairs at finite nonzero arguments; the error
    binned is the larger of the two."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.formats import format_named
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    fmt = format_named(precision)
    claims = Claims(precision)
    bound = dref.plain_bound("sincos", precision, claims)
    s = ds.DeviceScreen(DeviceRunner(info, ""), "sincos", bound, 1 << 14,
                        precision=precision)
    rng = np.random.default_rng(zlib.crc32(precision.encode()))
    u, f = np.dtype(fmt.uint), np.dtype(fmt.float)
    x = rng.integers(0, np.iinfo(u).max, 6000, dtype=np.uint64).astype(u)
    x[:3000] = np.asarray(rng.uniform(-40, 40, 3000), f).view(u)
    x[3000:3008] = np.array([0, 1 << (fmt.bits - 1), fmt.pos_inf, fmt.default_qnan, 1, 2, 3,
                             fmt.pos_inf - 1], u)
    with np.errstate(all="ignore"):                  # (signaling NaNs quieted: specials)
        xv = x.view(f).astype(np.float64)
        ys, yc = (np.asarray(g(xv), f).view(u) for g in (np.sin, np.cos))
    fn = catalogue.function("sincos")
    one, b = u.type(1), u.type(int(bound) + 1)
    sign, qnan = u.type(1 << (fmt.bits - 1)), np.full(x.size, fmt.default_qnan, u)
    pairs = [(ys, yc), (ys + one, yc), (ys, yc - one), (ys + b, yc), (ys, yc + b),
             (ys ^ sign, yc), (ys, yc ^ sign), (np.zeros_like(ys), yc), (ys, qnan)]
    for first, second in pairs:
        passed, _ = s.screen_pairs(x, first, y2bits=second)
        res = check_batch(fn, {"x": x[passed]}, {"ret": first[passed],
                                                 "cosval": second[passed]}, claims)
        assert not [g for g in res.findings if g.severity == "fail"], (
            precision, [(g.rule_id, g.output) for g in res.findings[:4]])
    passed, err = s.screen_pairs(x, ys, y2bits=yc)
    res = check_batch(fn, {"x": x}, {"ret": ys, "cosval": yc}, claims)
    ok = np.ones(x.size, bool)
    ok[[g.index for g in res.findings]] = False
    mag = x & u.type(fmt.abs_mask)
    ordinary = ok & (mag != 0) & (mag < fmt.pos_inf)
    assert ordinary.sum() > 3000
    assert passed[ordinary].mean() > 0.98, (precision, x[ordinary & ~passed][:4])
    alone, e1 = _sin_screen(s, precision, bound).screen_pairs(x, ys)
    both = passed & alone
    assert (err[both] >= e1[both] - 1e-6).all()         # the larger of the two errors
