"""The device screen of binary64 results (issue 28; docs/device_screen.md "Binary64
results"): the double-double references (trigonometric, exponential, logarithmic,
hyperbolic, roots, arithmetic, powers) against mpmath on hard inputs (the binary64
numbers closest to multiples of pi/2, every binade, subnormals, the thresholds between
the references' ranges), the exact built-ins' references against the checker bit for bit
(those of an int column or a second output -- ldexp, ilogb, frexp, modf, fract, remquo --
with both outputs), the screen's verdicts against the checker's (nothing the checker
fails is passed; the correct results are), and `run` units of binary64 screened on the
device with faults planted giving the host-screened unit's verdicts.

``device`` tests build the screens on the test device (PyPI's PoCL has cl_khr_fp64)."""
from __future__ import annotations

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

B64 = Claims("binary64")
#: exact (or correctly rounded) with an int column (ldexp's k, ilogb's result) or a second
#: output (frexp, modf, fract, remquo): tested apart (``_columned_*``); pown's and rootn's
#: int n is among the others'; sincos's two rounded outputs in test_device_screen_several_args
COLUMNED = sorted(n for n in dref.BINARY64_REFERENCES
                  if (dref.screen_columns(n, "binary64").ints or n in dref.SECOND_OUTPUT)
                  and dref.plain_bound(n, "binary64", B64) <= 0.5 and n not in dref.RULES_ONLY)
#: (those judged only by their rules: tests/test_device_screen_rules_only.py)
NAMES = sorted(set(dref.BINARY64_REFERENCES) - set(COLUMNED) - set(dref.BINARY64_SECOND)
               - dref.RULES_ONLY)
ROUNDED = sorted(n for n in NAMES if n not in dref.BIT_EXACT)
EXACT = sorted(n for n in NAMES if n in dref.BIT_EXACT)
_CACHE: dict = {}
SIGN = np.uint64(1 << 63)
ABS = np.uint64((1 << 63) - 1)
INF = np.uint64(0x7FF0_0000_0000_0000)
INT_MIN, INT_MAX = -2 ** 31, 2 ** 31 - 1


def _screen(name):
    from fuzzfarm.device.runner import DeviceRunner
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    key = ("screen", name)
    if key not in _CACHE:
        if "runner" not in _CACHE:
            _CACHE["runner"] = DeviceRunner(info, "")
        bound = dref.plain_bound(name, "binary64", B64)
        _CACHE[key] = ds.DeviceScreen(_CACHE["runner"], name, bound, 1 << 16,
                                      precision="binary64")
    return _CACHE[key]


def _f64(bits) -> np.ndarray:
    return np.asarray(bits, np.uint64).view(np.float64)


def _near_multiples_of_pio2() -> np.ndarray:
    """binary64 numbers closest to multiples of pi/2: the hardest of all for the reduction
    (6381956970095103 2**797 within 2**-60.9 of one: Muller, "Elementary Functions",
    table 11.1), the nearest doubles to k pi/2 for small and huge k, and their
    neighbours."""
    xs = [6381956970095103 * 2.0 ** 797, 5191479698446521 * 2.0 ** -40]
    with mpmath.workprec(2000):
        for k in [1, 2, 3, 4, 5, 7, 10, 100, 355, 1000, 10 ** 6, 10 ** 9, 2 ** 40, 10 ** 15,
                  2 ** 60, 10 ** 22, 2 ** 100, 10 ** 200, 10 ** 300]:
            v = float(mpmath.mpf(k) * mpmath.pi / 2)
            if np.isfinite(v):
                xs += [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)]
    return np.array(xs, np.float64).view(np.uint64)


def _patterns(rng, n, special=True):
    """binary64 patterns: normals of every binade, subnormals, values near 1, 2**k and the
    references' thresholds (2**-300, 2**-30, 1/2, multiples of pi/2), and (``special``)
    zeros, infinities and NaNs."""
    normal = (rng.integers(0x0010_0000_0000_0000, 0x7FF0_0000_0000_0000, n, dtype=np.uint64)
              | (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)))
    sub = rng.integers(1, 0x0010_0000_0000_0000, n // 8, dtype=np.uint64) | (
        rng.integers(0, 2, n // 8, dtype=np.uint64) << np.uint64(63))
    near = np.concatenate([np.float64(rng.uniform(0.5, 2.0, n // 8)) * s
                           for s in (1.0, 2.0 ** -300, 2.0 ** -30, 0.5, 1e6)]).view(np.uint64)
    near = near + rng.integers(-3, 4, near.size).astype(np.uint64)
    small = np.float64(rng.uniform(-8, 8, n // 4)).view(np.uint64)
    parts = [normal, sub, near, small, _near_multiples_of_pio2()]
    if special:
        parts.append(np.array([0, SIGN, INF, SIGN | INF, 0x7FF8_0000_0000_0000,
                               0x7FF0_0000_0000_0001, 0xFFF8_0000_0000_1234, 1, SIGN | 1,
                               0x7FEF_FFFF_FFFF_FFFF, 0xFFEF_FFFF_FFFF_FFFF,
                               0x0010_0000_0000_0000], np.uint64))
    x = np.concatenate(parts)
    return x[rng.permutation(x.size)][:max(n, 1)]


def _arguments(name, rng, n, special=True):
    """One uint64 array per argument: for two, equal, opposite and neighbouring arguments
    among them; for three (fma, mad, clamp), a third about -x z in a quarter of fma's and
    mad's rows (their cancellations; clamp's bounds come in either order)."""
    x = _patterns(rng, n, special)
    if name == "tgamma":            # a quarter within (-200, 180), near negative integers
        k = x.size // 4
        m = rng.integers(1, 200, k // 2).astype(np.float64)
        near = -m + rng.choice([-1, 1], m.size) * 2.0 ** -rng.integers(1, 40, m.size)
        v = np.concatenate([rng.uniform(-200, 180, k - near.size - 12), near,
                            [20.0, 19.999999999999996, 171.6, 171.7, 171.8, -190.0, -189.5,
                             2.0 ** -1000, 5e-324, 1e-300, 0.5, 1.5]])
        x[:k] = v.view(np.uint64)
        return (x,)
    if name in ("erf", "erfc"):     # a quarter within +-28, and the references' switches
        k = x.size // 4
        edges = np.array([2.0, 6.0, 25.5, 25.8, 26.5, 27.2, 27.25, 27.3, 1.9999999999999998,
                          5.999999999999999, 2.0 ** -960, 2.0 ** -966, 2.0 ** -967])
        v = np.concatenate([rng.uniform(-28, 28, k - 2 * edges.size), edges, -edges])
        x[:k] = v.view(np.uint64)
        return (x,)
    if name in dref.THREE_ARGS:
        z, w = _patterns(rng, x.size, special), _patterns(rng, x.size, special)
        with np.errstate(all="ignore"):
            p = (_f64(x) * _f64(z)).view(np.uint64)
        k = x.size // 4 if name in ("fma", "mad") else 0
        near = (p[:k] ^ SIGN) + rng.integers(-2, 3, k).astype(np.uint64)
        w[:k] = np.where(_special(p[:k]) | _special(near), w[:k], near)
        return x, z, w
    if name not in dref.TWO_ARGS:
        return (x,)
    if name in dref.INT_SECOND:     # pown, rootn: n from 1 to the int's extremes
        n = np.concatenate([rng.integers(-40, 41, x.size - x.size // 4),
                            rng.integers(-2 ** 31, 2 ** 31, x.size // 4)]).astype(np.int32)
        n[:8] = [INT_MIN, INT_MAX, 1, -1, 2, -2, 3, -3]
        if not special:
            n[n == 0] = 5
        return x, n[rng.permutation(n.size)]
    z = _patterns(rng, x.size, special)
    if name in ("pow", "powr"):     # half the rows with |x|**y within the range: y = t / ln|x|
        k = x.size // 2
        ax = np.abs(_f64(x[:k]))
        with np.errstate(all="ignore"):
            y = rng.uniform(-740, 705, k) / np.log(ax)
            y = np.where(rng.random(k) < 0.25, np.rint(y), y)       # integers: x < 0 too
        ok = np.isfinite(y) & (y != 0)
        z[:k] = np.where(ok, y.view(np.uint64), z[:k])
        return x, z
    k = x.size // 8
    z[:k] = x[:k]
    z[k:2 * k] = x[k:2 * k] ^ SIGN
    z[2 * k:3 * k] = x[2 * k:3 * k] + np.uint64(1)
    z[3 * k:4 * k] = (x[3 * k:4 * k] ^ SIGN) + np.uint64(1)
    return x, z


def _special(b):
    a = b & ABS
    return (a == 0) | (a >= INF)


def _int_special(c):
    """Special arguments of a column: zeros, infinities, NaNs; an int's zero."""
    return c == 0 if c.dtype.itemsize == 4 else _special(c)


def _vals(c):
    """A column's values: binary64 patterns as float64, an int column as it is."""
    return c if c.dtype.itemsize == 4 else _f64(c)


def _mpv(v):
    """One argument for mpmath: a float as an mpf, an int as an int."""
    return int(v) if isinstance(v, (np.integer, int)) else mpmath.mpf(float(v))


def _exact(name, *cols) -> np.ndarray:
    """The exact built-ins' results (uint64 patterns) by numpy's exact binary64 operations,
    for finite nonzero arguments."""
    x = _f64(cols[0])
    z = _f64(cols[-1])
    with np.errstate(all="ignore"):
        if name == "round":         # away from zero at halves: x - trunc(x) is exact
            t = np.trunc(x)
            v = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
        elif name == "logb":
            v = (np.frexp(x)[1] - 1).astype(np.float64)
        elif name in ("maxmag", "minmag"):
            ax, az = np.abs(x), np.abs(z)
            pick = (ax > az) if name == "maxmag" else (ax < az)
            tie = np.fmax(x, z) if name == "maxmag" else np.fmin(x, z)
            v = np.where(ax == az, tie, np.where(pick, x, z))
        elif name == "clamp":       # where minval <= maxval (else undefined: K_ANY)
            v = np.minimum(np.maximum(x, _f64(cols[1])), z)
        elif name == "remainder":   # IEEE 754's (Python's math.remainder): ties to even
            import math
            v = np.array([math.remainder(a, b) if np.isfinite(a) and b != 0 and not
                          np.isnan(b) else np.nan for a, b in zip(x, z)], np.float64)
        elif name == "step":
            v = np.where(z < x, 0.0, 1.0)
        else:
            v = {"fabs": np.fabs, "floor": np.floor, "ceil": np.ceil, "trunc": np.trunc,
                 "rint": np.rint, "sign": np.sign, "copysign": np.copysign,
                 "fmin": np.fmin, "fmax": np.fmax, "min": np.fmin, "max": np.fmax,
                 "nextafter": np.nextafter, "fmod": np.fmod}[name](*(_f64(c) for c in cols))
    return np.asarray(v, np.float64).view(np.uint64)


def _tanpi(v):
    s, c = mpmath.sinpi(v), mpmath.cospi(v)
    return mpmath.inf * mpmath.sign(s) if c == 0 else s / c


def _cbrt(v):                       # the real cube root (mpmath's is the principal one)
    return mpmath.sign(v) * mpmath.cbrt(abs(v))


_MP = {"sin": mpmath.sin, "cos": mpmath.cos, "sqrt": mpmath.sqrt, "exp": mpmath.exp,
       "exp2": lambda v: mpmath.power(2, v), "exp10": lambda v: mpmath.power(10, v),
       "expm1": mpmath.expm1, "log": mpmath.log, "log2": lambda v: mpmath.log(v, 2),
       "log10": mpmath.log10, "log1p": mpmath.log1p, "tan": mpmath.tan,
       "sinpi": mpmath.sinpi, "cospi": mpmath.cospi, "tanpi": _tanpi,
       "rsqrt": lambda v: 1 / mpmath.sqrt(v), "cbrt": _cbrt, "sinh": mpmath.sinh,
       "cosh": mpmath.cosh, "tanh": mpmath.tanh, "asinh": mpmath.asinh,
       "acosh": mpmath.acosh, "atanh": mpmath.atanh, "atan": mpmath.atan,
       "asin": mpmath.asin, "acos": mpmath.acos,
       "atanpi": lambda v: mpmath.atan(v) / mpmath.pi,
       "asinpi": lambda v: mpmath.asin(v) / mpmath.pi,
       "acospi": lambda v: mpmath.acos(v) / mpmath.pi,
       "degrees": lambda v: v * 180 / mpmath.pi, "radians": lambda v: v * mpmath.pi / 180,
       "add": lambda v, w: v + w, "sub": lambda v, w: v - w, "mul": lambda v, w: v * w,
       "divide": lambda v, w: v / w, "fdim": lambda v, w: max(v - w, mpmath.mpf(0)),
       "recip": lambda v: 1 / v,
       "hypot": mpmath.hypot, "atan2": mpmath.atan2,
       "atan2pi": lambda v, w: mpmath.atan2(v, w) / mpmath.pi,
       "fma": lambda v, w, u: v * w + u, "mad": lambda v, w, u: v * w + u,
       "pow": lambda v, w: _pow(v, w), "pown": lambda v, n: _pow(v, n),
       "powr": lambda v, w: _pow(v, w) if v > 0 else NOT_REAL,
       "rootn": lambda v, n: (mpmath.sign(v) * abs(v) ** (mpmath.mpf(1) / n)
                              if n and (v > 0 or n % 2) else NOT_REAL),
       "erf": mpmath.erf, "erfc": mpmath.erfc,
       "tgamma": lambda v: NOT_REAL if v <= 0 and v == int(v) else mpmath.gamma(v)}


#: f at arguments where it is not a real number (powr of a negative base, an even root of
#: one): a NaN is prescribed, as mpmath's complex results elsewhere
NOT_REAL = mpmath.mpc(0, 1)


def _pow(x, y):
    """x**y, real: |x|**y with x's sign where y is an odd integer; NOT_REAL where x < 0 and
    y is not an integer."""
    if x > 0:
        return mpmath.power(x, y)
    if x == 0:                      # (a special argument: the host's)
        return mpmath.inf if y < 0 else mpmath.mpf(0)
    if y != int(y):
        return NOT_REAL
    v = mpmath.power(-x, y)
    return -v if int(y) % 2 else v


def _mp(name, *v):
    return _MP[name](*v)


def _rn(name, *cols) -> np.ndarray:
    """The correctly rounded binary64 results of a rounded built-in (mpmath at 300 bits;
    sqrt and the arithmetic: numpy's, which IEEE rounds correctly); NaN where f is not
    real."""
    numpy_rn = {"sqrt": np.sqrt, "add": np.add, "sub": np.subtract, "mul": np.multiply,
                "divide": np.divide, "recip": lambda v: 1.0 / v,
                "fdim": lambda v, w: np.where(v > w, v - w, 0.0)}
    if name in numpy_rn:
        with np.errstate(all="ignore"):
            return np.asarray(numpy_rn[name](*(_f64(c) for c in cols)),
                              np.float64).view(np.uint64)
    out = np.empty(cols[0].size, np.float64)
    with mpmath.workprec(300):
        for i, vs in enumerate(zip(*(_vals(c) for c in cols))):
            ok = all(np.isfinite(v) for v in vs)
            f = _mp(name, *map(_mpv, vs)) if ok else mpmath.nan
            out[i] = float(f) if isinstance(f, mpmath.mpf) else np.nan     # complex: NaN
    return out.view(np.uint64)


def _args(name, *cols):
    return {a.name: c for a, c in zip(catalogue.function(name).inputs, cols)}


# --------------------------------------------------------------------------- the registry
def test_binary64_bounds_are_the_tables():
    """sin and cos at the full profile's 4 ULP, sqrt correctly rounded (0.5 ULP), the exact
    built-ins bit for bit; none for a built-in without a binary64 reference, under relaxed
    math or another rounding mode; and the binary32 screen's choices unchanged."""
    for name in ("sin", "cos"):
        assert dref.plain_bound(name, "binary64", B64) == float(
            bounds.bound(name, "binary64").plain_ulps) == 4.0
    assert bounds.bound("sqrt", "binary64").correctly_rounded
    assert dref.plain_bound("sqrt", "binary64", B64) == 0.5
    for name in EXACT:
        assert dref.plain_bound(name, "binary64", B64) == 0.0, name
    assert dref.plain_bound("dot", "binary64", B64) is None        # no reference
    assert dref.plain_bound("lgamma", "binary64", B64) == 0.0      # its rules only (RULES_ONLY)
    for name in ("pow", "powr", "pown", "rootn", "erf", "erfc", "tgamma"):
        assert dref.plain_bound(name, "binary64", B64) == 16.0, name
    assert dref.plain_bound("ldexp", "binary64", B64) == 0.5     # correctly rounded
    for name in ("frexp", "ilogb", "modf", "fract", "remquo"):
        assert dref.plain_bound(name, "binary64", B64) == 0.0, name
    assert dref.plain_bound("add", "binary64", B64) == 0.5      # correctly rounded
    assert dref.plain_bound("tan", "binary64", B64) == 5.0
    assert dref.plain_bound("sin", "binary64", Claims("binary64", relaxed=True)) is None
    assert dref.plain_bound("sin", "binary64", Claims("binary64", rounding=("rtz",))) is None
    assert dref.plain_bound("sqrt", "binary32", Claims()) == float(
        bounds.bound("sqrt", "binary32").plain_ulps)
    assert dref.plain_bound("lgamma", "binary16", Claims("binary16")) == 0.0   # RULES_ONLY
    assert dref.plain_bound("dot", "binary16", Claims("binary16")) is None


def test_binary64_special_answers_are_the_binary32_ones_widened():
    """The prescribed results at +-0, +-inf and NaN in binary64 are the binary32 ones in
    the wider format (sin(+-0) = +-0, cos(+-0) = 1, sqrt(+inf) = +inf, sqrt(-inf) a NaN),
    the markers the format's largest patterns."""
    any64, host64, ref64 = dref.answer_markers(64)
    assert (any64, host64, ref64) == (2 ** 64 - 1, 2 ** 64 - 2, 2 ** 64 - 3)
    assert dref.answer_markers(32) == (dref.ANS_ANY_NAN, dref.ANS_HOST, dref.ANS_REF)
    assert dref.special_answers("sin", "binary64")[:4] == (0, 1 << 63, any64, any64)
    assert dref.special_answers("cos", "binary64")[:2] == (0x3FF0 << 48, 0x3FF0 << 48)
    assert dref.special_answers("sqrt", "binary64")[2:4] == (0x7FF0 << 48, any64)
    for name in NAMES:
        a32, a64 = dref.special_answers(name), dref.special_answers(name, "binary64")
        assert a32.nan_any_quiet == a64.nan_any_quiet, name
    with pytest.raises(KeyError):
        dref.special_answers("sin", "binary8")


def test_a_binary64_screen_source_names_its_reference():
    src = ds.screen_source("sin", 4.0, precision="binary64")
    assert "#define REF ref64_sin" in src and "#define PATTERN ulong" in src
    assert "ANS_PZERO 0x0000000000000000UL" in src
    with pytest.raises(KeyError):
        ds.screen_source("dot", 16.0, precision="binary64")


# --------------------------------------------------------------------------- references
#: Inputs at the references' thresholds: the ranges of exp's reductions and results
#: (overflow, results below 2**-968 left to the host, below 2**-1075), expm1's series,
#: log's m about sqrt(2), log1p's series and 1 + x, the neighbours of 1.
_EDGES = np.array([1.0, 0.5, 2.0, 0.35, -0.35, 0.35000000000000003, 709.78, 709.7, -708.3,
                   -745.0, -745.2, -40.0, -40.1, 1023.9, 1024.0, -1021.4, -968.1, -967.9,
                   -1075.5, 1e-300, -1e-300, 2.0 ** -30, -2.0 ** -30, 0.7071067811865476,
                   1.4142135623730951, 1.0000000000000002, 0.9999999999999999,
                   -0.9999999999999999, 308.2, 308.3, -307.0, -323.7, 1e300, 5e-324],
                  np.float64).view(np.uint64)


#: The smallest |f| a reference answers (K_VALUE): below, a double-double loses bits, and
#: the reference leaves the input to the host (device_screen64.cl, TINY64 and exp's 2**-968).
TINY64 = mpmath.mpf(2) ** -966


@pytest.mark.device
@pytest.mark.parametrize("name", ROUNDED)
def test_references_agree_with_mpmath(name):
    """Every rounded binary64 reference within REL64 = 2**-90 of mpmath's (at 2,000 bits
    for the reductions modulo pi/2 of sin, cos and tan, 300 for the others) on 1,500
    inputs of every class (two-argument ones: equal, opposite and neighbouring arguments
    among them), the closest numbers to multiples of pi/2 and the references' thresholds
    included; its other answers true: a NaN
    prescribed (K_NAN) only where f is not real, beyond the overflow threshold (K_OVER)
    only where f >= 2**1024 (1 - 2**-54), below 2**-1075 (K_UNDER) only where |f| is, an
    exact result (K_EXACT: the zeros and infinities of sinpi, cospi, tanpi, fdim) only
    where f is that; a NaN or infinite value (the host's) only where |f| is below
    2**-966, at least 2**1024 (1 - 2**-54) or infinite; an exact zero where f is zero
    (log(1))."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    cols = _arguments(name, rng, 1500, special=False)
    edges = np.concatenate([_near_multiples_of_pio2(), _EDGES])
    ints = np.resize(np.array([1, -1, 2, 3, -7, 1000, -1000], np.int32), edges.size)
    cols = tuple(np.concatenate([edges if c.dtype.itemsize == 8 else ints, c]) for c in cols)
    keep = ~np.logical_or.reduce([_int_special(c) for c in cols])
    cols = tuple(c[keep] for c in cols)
    r, kind = s.references(*cols)
    assert set(np.unique(kind)) <= {0, 1, 2, 3, 4}, name
    host = (kind == 0) & ~np.isfinite(r[:, 0])
    worst = mpmath.mpf(0)
    over = mpmath.mpf(2) ** 1024 * (1 - mpmath.mpf(2) ** -54)
    with mpmath.workprec(2000 if name in ("sin", "cos", "tan") else 300):
        for i, vs in enumerate(zip(*(_vals(c) for c in cols))):
            f = _mp(name, *map(_mpv, vs))
            where = (name, *(hex(int(c[i])) for c in cols))
            if kind[i] == 4:
                assert not isinstance(f, mpmath.mpf), where
                continue
            assert isinstance(f, mpmath.mpf), where
            if kind[i] == 1:
                assert f == abs(mpmath.mpf(float(r[i, 0]))) * mpmath.sign(f), where
            elif kind[i] == 2:            # of r's sign
                assert abs(f) >= over and (f < 0) == (r[i, 0] < 0), where
            elif kind[i] == 3:
                assert 0 < abs(f) < mpmath.mpf(2) ** -1075, where
            elif host[i]:               # fma, mad: a product below 2**-968 beside |w| < 2**-900
                small = name in ("fma", "mad") and abs(vs[0] * mpmath.mpf(vs[1])) < TINY64 \
                    and abs(vs[2]) < 2.0 ** -900
                assert abs(f) < TINY64 or abs(f) >= over or small, where
            elif f == 0:                # log(1): an exact zero (the host's, F9.log.2)
                assert r[i, 0] == 0 and r[i, 1] == 0, where
            else:
                e = abs((mpmath.mpf(float(r[i, 0])) + mpmath.mpf(float(r[i, 1])) - f) / f)
                assert e <= dref.rel64(name), (*where, float(e))
                worst = max(worst, e)
    if name not in ("add", "sub", "mul", "fdim", "fma", "mad"):     # exact, or nearly
        assert worst > 0            # the references are not mpmath itself


@pytest.mark.device
@pytest.mark.parametrize("name", EXACT)
def test_exact_references_are_the_checkers_results(name):
    """The exact references at finite nonzero arguments (subnormals, equal and opposite
    arguments, neighbours, the largest values, halves) are numpy's exact results and what
    the checker accepts, bit for bit, and the screen passes them; one pattern off or the
    other sign, the screen passes nothing the checker fails."""
    s = _screen(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    cols = _arguments(name, rng, 3000, special=False)
    if name in ("round", "rint", "floor", "ceil", "trunc"):     # halves and near-integers
        h = np.float64(rng.integers(-2 ** 20, 2 ** 20, 400)) + 0.5
        cols = (np.concatenate([cols[0], h.view(np.uint64), (h.view(np.uint64) + 1),
                                (h.view(np.uint64) - 1), np.array(
                                    [0x3FDF_FFFF_FFFF_FFFF, 0x3FE0_0000_0000_0000,
                                     0xBFE0_0000_0000_0000, 0x4330_0000_0000_0001],
                                    np.uint64)]),)
    if name in ("fmod", "remainder"):   # x = (k + 1/2) z exactly: remainder's ties to even
        zt = np.float64(rng.integers(1, 2 ** 40, 400)) * 2.0 ** rng.integers(-900, 900, 400)
        k = np.float64(rng.integers(-6, 7, 400)) + 0.5
        zt = zt * np.where(rng.random(400) < 0.5, -1.0, 1.0)
        cols = (np.concatenate([cols[0], (k * zt).view(np.uint64)]),
                np.concatenate([cols[1], zt.view(np.uint64)]))
    r, kind = s.references(*cols)
    if name == "clamp":             # minval > maxval: undefined, any result passes
        undefined = _f64(cols[1]) > _f64(cols[2])
        assert (kind[undefined] == 5).all() and undefined.any(), name
        cols = tuple(c[~undefined] for c in cols)
        r, kind = r[~undefined], kind[~undefined]
    assert (kind == 1).all(), name
    y = r[:, 0].view(np.uint64)
    assert (y == _exact(name, *cols)).all(), name
    fn = catalogue.function(name)
    res = check_batch(fn, _args(name, *cols), {"ret": y}, B64)
    assert not res.findings, (name, [(hex(int(cols[0][f.index])), f.rule_id)
                                     for f in res.findings[:4]])
    passed, _ = s.screen_pairs(cols[0], y, *cols[1:])
    assert passed.all(), name
    for off in (y + np.uint64(1), y - np.uint64(1), y ^ SIGN):
        passed, _ = s.screen_pairs(cols[0], off, *cols[1:])
        assert not (passed & (off != y)).any(), name


# --------------------------------------------------------------------------- soundness
@pytest.mark.device
@pytest.mark.parametrize("name", NAMES)
def test_the_screen_passes_no_failure_and_the_correct_results(name):
    """Against results near f moved by 0 .. bound + 2 ULPs either way, of the other sign,
    zeros, infinities, NaNs and the argument itself, on inputs of every class: the screen
    passes no result the checker fails, and passes the correct results of finite nonzero
    arguments (99 %; the near midpoints of correctly rounded built-ins and results below
    2**-966 are the host's by design)."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 2)
    cols = _arguments(name, rng, 600)
    x = cols[0]
    rn = _rn(name, *cols) if name in ROUNDED else _exact(name, *cols)
    b = int(s.bound)
    full = lambda v: np.full(x.size, v, np.uint64)   # noqa: E731
    cands = [(rn.astype(np.int64) + k).astype(np.uint64)
             for k in (1, -1, b, -b, b + 1, -(b + 1), b + 2)]
    cands += [rn ^ SIGN, x, full(0), full(SIGN), full(INF), full(SIGN | INF),
              full(0x7FF8_0000_0000_0000), full(0x7FF0_0000_0000_0001)]
    args = _args(name, *cols)
    res = check_batch(fn, args, {"ret": rn}, B64)       # the correct results: every row
    right = np.ones(x.size, bool)
    right[[f.index for f in res.findings]] = False
    passed, err = s.screen_pairs(x, rn, *cols[1:])
    assert not (passed & ~right).any(), name
    for y in cands:
        bad = passed_failures(fn, args, y, s.screen_pairs(x, y, *cols[1:])[0], B64)
        assert not bad.size, (name, [(hex(int(x[j])), hex(int(y[j]))) for j in bad[:5]])
    ordinary = ~np.logical_or.reduce([_int_special(c) for c in cols]) & ~_special(rn)
    if name == "sqrt":              # a negative x: a NaN is prescribed
        ordinary &= (x >> np.uint64(63)) == 0
    judged = right & ordinary & (np.abs(_f64(rn)) >= float(TINY64))   # below: the host's
    if s.bound == 0.5:              # correctly rounded: near a midpoint, the host's
        with mpmath.workprec(2200), np.errstate(over="ignore"):    # x + z, x z exact
            far = np.array([not judged[i] or abs(
                (_mp(name, *(_mpv(c[i]) for c in map(_vals, cols)))
                 - float(_f64(rn[i:i + 1])[0]))
                / mpmath.mpf(np.spacing(float(_f64(rn[i:i + 1])[0])))) < 0.5 - 2 ** -20
                for i in range(x.size)])
        judged &= far
    assert judged.sum() > x.size // 4, name        # acosh: half the inputs are below 1
    assert passed[judged].mean() > 0.99, (name, [
        hex(int(x[j])) for j in np.flatnonzero(judged & ~passed)[:5]])
    if name in ROUNDED:             # the measured errors of correct results: below 0.5 ULP,
        # at a power of two too (f's binade read off the double-double; where it is
        # uncertain, only errors within a tie pass: "Exact maxima")
        assert (err[judged & passed] <= 0.5 + 1e-6).all(), name


@pytest.mark.device
def test_mad_passes_its_unfused_result_and_fma_does_not():
    """mad's result may be the correctly rounded fma or the product rounded then the sum
    rounded (OpenCL's table): where the two differ, the screen passes the unfused one for
    mad, the checker accepts it, and fma's screen does not pass it."""
    rng = np.random.default_rng(7)
    x, z, w = _arguments("mad", rng, 3000, special=False)
    with np.errstate(all="ignore"):
        unfused = (_f64(x) * _f64(z) + _f64(w)).view(np.uint64)    # numpy does not fuse
        normal = np.abs(_f64(x) * _f64(z)) >= 2.0 ** -1022
    fused = _rn("fma", x, z, w)
    differ = (unfused != fused) & ~_special(unfused) & ~_special(fused) & normal
    differ &= np.abs(_f64(fused)) >= float(TINY64)
    assert differ.sum() > 20
    cols = tuple(c[differ] for c in (x, z, w))
    y = unfused[differ]
    passed, _ = _screen("mad").screen_pairs(cols[0], y, *cols[1:])
    assert passed.mean() > 0.99
    res = check_batch(catalogue.function("mad"), _args("mad", *cols), {"ret": y}, B64)
    assert not res.findings
    passed, _ = _screen("fma").screen_pairs(cols[0], y, *cols[1:])
    assert not passed.any()


# --------------------------------------------------------------------------- run units
@pytest.mark.device
@pytest.mark.parametrize("name", ["sin", "cos", "sqrt", "exp", "expm1", "log1p", "log10",
                                  "floor", "rint", "fmin", "nextafter", "copysign", "tan",
                                  "tanpi", "acosh", "atan2", "divide", "recip", "hypot", "fma",
                                  "clamp", "remainder", "pow", "powr", "pown", "rootn",
                                  "erf", "erfc", "tgamma", "sincos", *COLUMNED])
def test_screened_binary64_run_units_give_the_host_verdicts(name):
    """`run` units of binary64 (drawn: specials, subnormals, NaN payloads ...) screened on
    the device -- the session chooses the device screen for them -- and again with faults
    planted among the results (1 ULP beyond the bound, a flipped sign, a NaN for a number,
    a zero for a number; an int result one off or negated; a second output one off or of
    the other sign), give the host-screened unit's findings, counts and maximum error,
    and every planted fault the checker fails is a recorded failure."""
    from fuzzfarm.work.session import DeviceSession
    s = _screen(name)
    session = DeviceSession(s.runner.info)
    caught = faults_caught_in_run_units(session, s, name, "binary64", B64, 1 << 12,
                                        zlib.crc32(name.encode()) + 3)
    assert caught > 0, name


@pytest.mark.device
def test_a_binary64_range_is_screened_on_the_host():
    """A sweep's range of binary64 inputs is numbered by the sweep kernel, which the
    binary64 screen does not follow: the session screens it on the host and says why,
    while a drawn unit of the same target still gets the device screen."""
    from fuzzfarm.target import Target
    from fuzzfarm.work.make import make_unit
    from fuzzfarm.work.session import DeviceSession
    from fuzzfarm.work.unit import IndexRange, WorkUnit
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    session = DeviceSession(info)
    target = Target.of(("sin", "binary64", 1))
    span = WorkUnit("t-range", target, IndexRange(0, 1024), "")
    assert session.screen(span, 1024) is None
    assert "binary64 range" in session.screen_choices[("", "sin", "binary64")]
    drawn = make_unit("t", target, 0, 5, 0, 1, size=1024)
    assert session.screen(drawn, 1024) is not None


# --------------------------------------------------------------------------- int columns
def _columned_arguments(name, rng, n, special=True):
    """Arguments of ldexp, ilogb, frexp, modf, fract, remquo in binary64: patterns of every
    class, values next to integers (up to 2**53) and negative values below 1 in magnitude
    down to 2**-60 (fract's rounded differences and its cap); ldexp's k from small to the
    int's extremes (k = 0 only with ``special``: a rule's); remquo's pairs as remainder's,
    with ties x = (j + 1/2) z."""
    if name == "remquo":
        x, z = _arguments("remainder", rng, n, special)
        zt = np.float64(rng.integers(1, 2 ** 40, 200)) * 2.0 ** rng.integers(-900, 900, 200)
        j = np.float64(rng.integers(-6, 7, 200)) + 0.5
        return (np.concatenate([x, (j * zt).view(np.uint64)]),
                np.concatenate([z, zt.view(np.uint64)]))
    x = _patterns(rng, n, special)
    k = x.size // 8
    near = np.float64(rng.integers(-2 ** 53, 2 ** 53, k)).view(np.uint64)
    x[:k] = near + rng.integers(-2, 3, k).astype(np.uint64)
    x[k:2 * k] = (-rng.uniform(0, 1, k) * 2.0 ** -rng.integers(0, 61, k)).view(np.uint64)
    if name != "ldexp":
        return (x,)
    ks = np.concatenate([rng.integers(-60, 61, x.size // 2),
                         rng.integers(-2200, 2200, x.size - x.size // 2)])
    ks[:24] = [INT_MIN, INT_MAX, INT_MIN + 1, INT_MAX - 1, 1, -1, 1023, 1024, -1022, -1074,
               -1075, -1076, 2046, -2098, 2 ** 20, -2 ** 20, 2, -2, 52, -52, 53, -53, 0, 0]
    if not special:
        ks[ks == 0] = 3
    return x, ks[rng.permutation(ks.size)].astype(np.int32)


def _columned_results(name, *cols):
    """The right outputs {output name: array} of ``name`` at finite nonzero arguments
    ``cols`` (numpy's ldexp -- C's scalbn, correctly rounded --, frexp and modf; ilogb from
    frexp; fract from floor, the difference rounded once by numpy's subtraction and capped
    at 0x1.fffffffffffffp-1; remquo from Python's math.remainder and the quotient rounded
    half to even exactly: any value of the right sign congruent modulo 8 is right, the low
    7 bits are given)."""
    import math
    from fractions import Fraction
    x = _f64(cols[0])
    with np.errstate(all="ignore"):
        if name == "ldexp":
            return {"ret": np.ldexp(x, cols[1]).view(np.uint64)}
        if name == "ilogb":
            return {"ret": (np.frexp(x)[1] - 1).astype(np.int32)}
        if name == "frexp":
            m, e = np.frexp(x)
            return {"ret": m.view(np.uint64), "exp": e.astype(np.int32)}
        if name == "modf":
            f, i = np.modf(x)
            return {"ret": f.view(np.uint64), "iptr": i.view(np.uint64)}
        if name == "fract":
            fl = np.floor(x)
            v = np.minimum(x - fl, np.nextafter(1.0, 0.0))
            v = np.where(np.isinf(x), np.copysign(0.0, x), np.where(x == 0, x, v))
            return {"ret": v.view(np.uint64), "iptr": fl.view(np.uint64)}
    z = _f64(cols[1])
    quo = np.zeros(x.size, np.int32)
    rem = np.full(x.size, np.nan)
    for i, (a, b) in enumerate(zip(x.tolist(), z.tolist())):
        if np.isfinite(a) and np.isfinite(b) and b != 0:
            rem[i] = math.remainder(a, b)
            if a != 0:
                n = round(Fraction(a) / Fraction(b))
                quo[i] = (1 if (a < 0) == (b < 0) else -1) * (abs(n) & 127)
    return {"ret": rem.view(np.uint64), "quo": quo}


@pytest.mark.device
@pytest.mark.parametrize("name", COLUMNED)
def test_columned_references_are_the_right_results(name):
    """ldexp's reference is x 2**k exactly where that is a normal number (no error), beyond
    the overflow threshold (K_OVER) only where it is, the zero of x's sign bit for bit
    (K_EXACT) only below 2**-1075, and leaves only subnormal results to the host; the
    others' references are the right first output
    bit for bit (ilogb's as an int), and with the right second output the checker accepts
    every row and the screen passes every one."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 11)
    cols = _columned_arguments(name, rng, 3000, special=False)
    keep = ~np.logical_or.reduce([_int_special(c) for c in cols])
    cols = tuple(c[keep] for c in cols)
    right = _columned_results(name, *cols)
    r, kind = s.references(*cols)
    if name == "ldexp":
        exact = [mpmath.ldexp(mpmath.mpf(float(v)), int(k)) for v, k in
                 zip(_f64(cols[0]), cols[1])]
        mag = np.array([abs(v) for v in exact], dtype=object)
        normal = np.array([2 ** -1022 <= m < 2 ** 1024 for m in mag])
        assert (kind[normal] == 0).all() and (r[normal, 1] == 0).all()
        assert all(mpmath.mpf(float(r[i, 0])) == exact[i] for i in np.flatnonzero(normal))
        assert all(m >= 2 ** 1024 for m in mag[kind == 2]) and (kind == 2).any()
        under = kind == 1                   # the zero of x's sign, bit for bit
        assert all(m < mpmath.mpf(2) ** -1075 for m in mag[under]) and under.any()
        assert (r[under, 0].view(np.uint64) == (cols[0][under] & SIGN)).all()
        host = (kind == 0) & ~normal
        assert host.any() and all(mpmath.mpf(2) ** -1075 <= m < 2 ** -1022
                                  for m in mag[host])
        assert set(np.unique(kind)) <= {0, 1, 2}
    else:
        assert (kind == 1).all(), name
        got = r[:, 0].astype(np.int32) if name == "ilogb" else r[:, 0].view(np.uint64)
        assert (got == right["ret"]).all(), (name, np.flatnonzero(got != right["ret"])[:5])
    res = check_batch(fn, _args(name, *cols), right, B64)
    assert not res.findings, (name, [(f.rule_id, f.output, f.index) for f in res.findings[:4]])
    out2 = fn.outputs[1].name if len(fn.outputs) > 1 else None
    passed, _ = s.screen_pairs(cols[0], right["ret"], *cols[1:],
                               y2bits=right[out2] if out2 else None)
    if name == "ldexp":             # subnormal results: the host's
        assert passed[kind != 0].all() and passed[(kind == 0) & normal].all()
    else:
        assert passed.all(), (name, np.flatnonzero(~passed)[:5])


@pytest.mark.device
@pytest.mark.parametrize("name", COLUMNED)
def test_columned_screen_passes_no_failure(name):
    """Against wrong outputs on arguments of every class -- the first output a pattern (or
    an int) off, of the other sign, a zero, a NaN, the argument; the second one off, negated
    or (remquo's quo) 8 more, which is right -- the screen passes nothing the checker
    fails, and no input with a zero, infinite or NaN argument (ilogb: only the prescribed
    INT_MAX at an infinity)."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 12)
    cols = _columned_arguments(name, rng, 1500)
    right = _columned_results(name, *cols)
    args = _args(name, *cols)
    out2 = fn.outputs[1].name if len(fn.outputs) > 1 else None
    y = right["ret"]
    n = y.size
    if name == "ilogb":
        firsts = [y + 1, y - 1, -y, np.full(n, INT_MAX, np.int32), np.full(n, INT_MIN, np.int32),
                  np.zeros(n, np.int32)]
    else:
        full = lambda v: np.full(n, v, np.uint64)   # noqa: E731
        firsts = [y + np.uint64(1), y - np.uint64(1), y ^ SIGN, full(0), full(SIGN),
                  full(0x7FF8_0000_0000_0000), cols[0]]
    pairs = [(f, right.get(out2)) for f in firsts]
    if out2:
        y2 = right[out2]
        if y2.dtype == np.int32:
            seconds = [y2 + 1, y2 - 1, -y2, (y2.astype(np.int64) + 8).astype(np.int32),
                       np.zeros(n, np.int32)]
        else:
            seconds = [y2 + np.uint64(1), y2 - np.uint64(1), y2 ^ SIGN, np.zeros(n, np.uint64),
                       cols[0]]
        pairs += [(y, v) for v in seconds]
    ordinary = ~np.logical_or.reduce([_int_special(c) for c in cols])
    inf_x = (cols[0] & ABS) == INF
    judged = 0
    for first, sec in pairs:
        passed, _ = s.screen_pairs(cols[0], first, *cols[1:], y2bits=sec)
        allowed = ordinary | (inf_x & (first == INT_MAX) if name == "ilogb" else ordinary)
        assert not (passed & ~allowed).any(), (name, np.flatnonzero(passed & ~allowed)[:5])
        outs = {"ret": first, **({out2: sec} if out2 else {})}
        res = check_batch(fn, args, outs, B64)
        wrong = {f.index for f in res.findings}
        bad = [j for j in np.flatnonzero(passed) if j in wrong]
        assert not bad, (name, [(hex(int(cols[0][j])), int(first[j])) for j in bad[:5]])
        judged += len(wrong)
    assert judged > n, name         # the wrong outputs are wrong: the checker says so
    passed, _ = s.screen_pairs(cols[0], y, *cols[1:], y2bits=right.get(out2))
    assert passed[ordinary].mean() > 0.95, name


@pytest.mark.device
@pytest.mark.parametrize("name", ["exp", "exp2", "exp10", "ldexp"])
def test_below_2_to_the_minus_1075_the_zeros_the_checker_accepts_pass(name):
    """Where a binary64 reference says f is below 2**-1075 (K_UNDER: exp below -745.14,
    exp2 below -1075, exp10 below -323.61) either zero passes, as the checker accepts
    either (a bounded built-in: the ULP measure does not see a zero's sign); ldexp, correctly
    rounded, of a negative x scaled below it is -0 bit for bit (K_EXACT): +0 is the host's,
    whose checker notes it (ieee.zero_sign).  The smallest subnormal (the host's) and a NaN
    (a failure) never pass."""
    s = _screen(name)
    fn = catalogue.function(name)
    lo = {"exp": -800.0, "exp2": -1100.0, "exp10": -330.0, "ldexp": -3.0}[name]
    hi = {"exp": -745.5, "exp2": -1075.5, "exp10": -323.7, "ldexp": -0.75}[name]
    x = np.linspace(lo, hi, 300).view(np.uint64)
    cols = (x, np.full(x.size, -1080, np.int32)) if name == "ldexp" else (x,)
    _, kind = s.references(*cols)
    assert (kind == (1 if name == "ldexp" else 3)).all(), name
    zeros = [np.full(x.size, SIGN, np.uint64), np.zeros(x.size, np.uint64)]
    for k, zero in enumerate(zeros):
        passed = s.screen_pairs(x, zero, *cols[1:])[0]
        res = check_batch(fn, _args(name, *cols), {"ret": zero}, B64)
        if name == "ldexp" and k == 1:
            assert not passed.any()
            assert {(f.rule_id, f.severity) for f in res.findings} == {
                ("ieee.zero_sign", "note")}
        else:
            assert passed.all() and res.findings == [] and not res.unrecorded, name
    assert not s.screen_pairs(x, zeros[0] + np.uint64(1), *cols[1:])[0].any(), name
    nan = np.full(x.size, 0x7FF8_0000_0000_0000, np.uint64)
    assert not s.screen_pairs(x, nan, *cols[1:])[0].any(), name
    res = check_batch(fn, _args(name, *cols), {"ret": nan}, B64)
    assert len({f.index for f in res.findings}) + sum(res.unrecorded.values()) == x.size
