"""The device screen of binary16 results (issue 28; docs/device_screen.md "Binary16
results"): binary32's references judge every binary16 argument widened to binary32, the
result in binary16's ULPs (device_screen16.cl).  Every unary built-in on all 65,536
patterns, the others on pairs and triples of every class: the screen passes nothing the
checker fails (the right results, one and more ULPs off, the other sign, zeros, NaNs, the
argument), and the right results of finite nonzero arguments nearly all; `run` units of an
fp16 device (Intel's CPU runtime, the `[intel]` extra) screened on the device with faults
planted give the host-screened unit's verdict.

The screens are built on the test device (PyPI's PoCL: cl_khr_fp64 is all they need; the
built-ins' own binary16 kernels need cl_khr_fp16)."""
from __future__ import annotations

import math
import zlib
from fractions import Fraction

import numpy as np
import pytest

from devices import device_screen
from edgecases import bounds, catalogue
from planted_faults import faults_caught_in_run_units, passed_failures
from fuzzfarm.oracle import device_references as dref
from fuzzfarm.oracle import device_screen as ds
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims

B16 = Claims("binary16")
#: (those judged only by their rules: tests/test_device_screen_rules_only.py)
NAMES = sorted(n for n in dref.DEVICE_REFERENCES if dref.plain_bound(n, "binary16", B16)
               is not None and n not in dref.RULES_ONLY)
UNARY = [n for n in NAMES if len(catalogue.function(n).inputs) == 1
         and len(catalogue.function(n).outputs) == 1]
SEVERAL = [n for n in NAMES if n not in UNARY]
ALL16 = np.arange(1 << 16, dtype=np.uint16)
SIGN, ABS, INF, QNAN = np.uint16(0x8000), np.uint16(0x7FFF), np.uint16(0x7C00), 0x7E00
def _screen(name):
    """The binary16 screen of ``name``, for chunks of 2**17 inputs."""
    return device_screen(name, "binary16", 1 << 17)


def _special(h):
    """Zeros, infinities and NaNs of a binary16 column; an int column's zeros."""
    if h.dtype == np.uint16:
        return ((h & ABS) == 0) | ((h & ABS) >= INF)
    return h == 0


def _args(name, *cols):
    return {a.name: c for a, c in zip(catalogue.function(name).inputs, cols)}


def _half(v) -> np.ndarray:
    """float64 values rounded to binary16 (numpy's conversion: to nearest, ties to even)."""
    with np.errstate(all="ignore"):
        return np.asarray(v, np.float64).astype(np.float16).view(np.uint16)


# --------------------------------------------------------------------------- the registry
def test_binary16_bounds_and_special_answers_are_the_tables():
    """binary16's bounds are the half-precision column of the tables (sin 2 ULP, erf 4,
    sqrt correctly rounded: 0.5, mad either of its two results at 0.5), the exact
    built-ins bit for bit; none for lgamma (implementation-defined), the half_* built-ins
    (binary32 only) or under relaxed math; the prescribed results at zeros and infinities are 16-bit patterns and
    the markers the format's three largest."""
    assert dref.plain_bound("sin", "binary16", B16) == float(
        bounds.bound("sin", "binary16").plain_ulps) == 2.0
    assert dref.plain_bound("erf", "binary16", B16) == 4.0
    assert bounds.bound("sqrt", "binary16").correctly_rounded
    assert dref.plain_bound("sqrt", "binary16", B16) == 0.5
    for name in ("floor", "fmin", "frexp", "fract", "nextafter", "ilogb"):
        assert dref.plain_bound(name, "binary16", B16) == 0.0, name
    assert dref.plain_bound("mad", "binary16", B16) == 0.5
    for name in ("half_sin", "dot", "native_sin"):          # native_*: binary32 only
        assert dref.plain_bound(name, "binary16", B16) is None, name
    assert dref.plain_bound("lgamma", "binary16", B16) == 0.0      # RULES_ONLY
    assert dref.plain_bound("sin", "binary16", Claims("binary16", relaxed=True)) is None
    assert dref.answer_markers(16) == (0xFFFF, 0xFFFE, 0xFFFD)
    assert dref.special_answers("sin", "binary16")[:4] == (0, 0x8000, 0xFFFF, 0xFFFF)
    assert dref.special_answers("cos", "binary16")[:2] == (0x3C00, 0x3C00)
    assert dref.special_answers("sqrt", "binary16")[2:4] == (0x7C00, 0xFFFF)
    assert dref.special_answers("ilogb", "binary16")[2] == 0x7FFFFFFF     # INT_MAX
    src = ds.screen_source("fract", 0.0, precision="binary16")
    assert "#define REF ref16_fract" in src and "#define PATTERN ushort" in src
    assert "within_bound16(" in src and "ref16_nextafter" not in src       # pruned
    with pytest.raises(KeyError):
        ds.screen_source("dot", 1.0, precision="binary16")


# --------------------------------------------------------------------------- soundness
def _candidates(y, x, bound):
    """Results to screen against ``y`` (uint16): y itself, one and bound + 1 ULPs either
    way, the other sign, both zeros, a quiet NaN, the argument."""
    b = int(bound) + 1
    yi = y.astype(np.int32)
    return [y, *((yi + k).astype(np.uint16) for k in (1, -1, b, -b)), y ^ SIGN,
            np.zeros_like(y), np.full_like(y, SIGN), np.full_like(y, QNAN), x]


@pytest.mark.device
@pytest.mark.parametrize("name", UNARY)
def test_every_binary16_input_passes_no_failure(name):
    """All 65,536 arguments of a unary built-in against the results near f (its reference
    rounded to binary16, and the candidates of ``_candidates``): the screen passes no
    result the checker fails; of the rounded references the checker accepts at finite
    nonzero arguments and results, the screen passes 98 % or more (near a correctly
    rounded built-in's midpoints the host judges)."""
    s = _screen(name)
    fn = catalogue.function(name)
    r, kind = s.references(ALL16)
    args = _args(name, ALL16)
    if fn.outputs[0].kind == "int":             # ilogb: an int result
        with np.errstate(invalid="ignore"):     # the specials' NaN references: any int
            y = r.astype(np.int64).astype(np.int32)
        cands = [y, y + 1, y - 1, ~y, np.full_like(y, 2 ** 31 - 1), np.zeros_like(y)]
    else:
        y = _half(r)
        cands = _candidates(y, ALL16, s.bound)
    for cand in cands:
        passed, _ = s.screen_pairs(ALL16, cand)
        bad = passed_failures(fn, args, cand, passed, B16)
        assert not bad.size, (name, [(hex(int(ALL16[j])), hex(int(cand[j]))) for j in bad[:5]])
    passed, _ = s.screen_pairs(ALL16, y)
    res = check_batch(fn, args, {"ret": y}, B16)
    right = np.ones(y.size, bool)
    right[[f.index for f in res.findings]] = False
    ordinary = right & ~_special(ALL16) & (kind <= 1)
    if y.dtype == np.uint16:
        ordinary &= ~_special(y) & _far_from_a_tie(s, r, y)
    assert ordinary.sum() > 10_000, name
    assert passed[ordinary].mean() > 0.98, (name, [hex(int(ALL16[j])) for j in
                                                   np.flatnonzero(ordinary & ~passed)[:5]])


def _far_from_a_tie(s, r, y) -> np.ndarray:
    """Where a correctly rounded built-in's (bound 0.5) exact value ``r`` is not within
    2**-20 ULP of a midpoint of binary16 numbers (there the screen leaves the result to the
    host by design); everywhere for the others."""
    if s.bound != 0.5:
        return np.ones(y.size, bool)
    v = y.view(np.float16)
    with np.errstate(all="ignore"):
        ulp = np.spacing(np.abs(v)).astype(np.float64)
        return np.abs(np.asarray(r, np.float64) - v.astype(np.float64)) < (0.5 - 2 ** -20) * ulp


def _patterns(rng, n):
    """binary16 patterns of every class: normals, subnormals, values near integers and
    halves, zeros, infinities, NaNs."""
    x = rng.integers(0, 1 << 16, n, dtype=np.uint16)
    k = n // 4
    x[:k] = _half(np.float64(rng.integers(-64, 65, k)) / rng.choice([1, 2, 4, 8], k))
    x[k:k + 8] = [0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 1, 0x8001]
    return x


def _int_column(rng, n):
    k = rng.integers(-40, 41, n).astype(np.int32)
    k[:8] = [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 30, -30, 2]
    return k


def _columns(name, rng, n):
    """Arguments of a built-in of several arguments or two outputs: equal, opposite and
    neighbouring arguments among them; an int for ldexp's k and pown's and rootn's n."""
    fn = catalogue.function(name)
    cols = [_patterns(rng, n)]
    for a in fn.inputs[1:]:
        cols.append(_int_column(rng, n) if a.kind == "int" else _patterns(rng, n))
    if len(cols) > 1 and cols[1].dtype == np.uint16:
        k = n // 8
        cols[1][:k] = cols[0][:k]
        cols[1][k:2 * k] = cols[0][k:2 * k] ^ SIGN
        cols[1][2 * k:3 * k] = cols[0][2 * k:3 * k] + np.uint16(1)
    return cols


def _rounded(name, s, cols):
    """The right outputs {name: array} of ``name`` at ``cols``: the reference rounded to
    binary16 (exact results bit for bit); the second outputs of sincos, frexp, modf, fract,
    remquo by numpy and exact fractions."""
    fn = catalogue.function(name)
    r, kind = s.references(*cols)
    out = {"ret": (r.astype(np.int64).astype(np.int32) if fn.outputs[0].kind == "int"
                   else _half(r))}
    if len(fn.outputs) == 1:
        return out
    x = cols[0].view(np.float16).astype(np.float64)
    second = fn.outputs[1].name
    with np.errstate(all="ignore"):
        if name == "sincos":
            out[second] = _half(np.cos(x))
        elif name == "frexp":
            out[second] = np.frexp(x)[1].astype(np.int32)
        elif name in ("modf", "fract"):
            out[second] = _half(np.trunc(x) if name == "modf" else np.floor(x))
        else:                                           # remquo: the quotient's low bits
            z = cols[1].view(np.float16).astype(np.float64)
            quo = np.zeros(x.size, np.int32)
            for i, (a, b) in enumerate(zip(x.tolist(), z.tolist())):
                if math.isfinite(a) and math.isfinite(b) and b != 0 and a != 0:
                    q = round(Fraction(a) / Fraction(b))
                    quo[i] = (1 if (a < 0) == (b < 0) else -1) * (abs(q) & 127)
            out[second] = quo
    return out


@pytest.mark.device
@pytest.mark.parametrize("name", SEVERAL)
def test_binary16_pairs_and_second_outputs_pass_no_failure(name):
    """Built-ins of two and three arguments and of two outputs on 6,000 argument rows of
    every class: against the rounded references and their neighbours, the other sign,
    zeros, NaNs, the argument (and a second output one off or negated), the screen passes
    nothing the checker fails, and of the right results at finite nonzero arguments 98 %
    or more."""
    s = _screen(name)
    fn = catalogue.function(name)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    cols = _columns(name, rng, 6000)
    right = _rounded(name, s, cols)
    args = _args(name, *cols)
    y = right["ret"]
    second = fn.outputs[1].name if len(fn.outputs) > 1 else None
    y2 = right.get(second)
    if y.dtype == np.int32:                         # ilogb: not here (one argument)
        raise AssertionError(name)
    pairs = [(c, y2) for c in _candidates(y, cols[0], s.bound)]
    if second:
        off = (y2 + 1, -y2) if y2.dtype == np.int32 else (y2 + np.uint16(1), y2 ^ SIGN)
        pairs += [(y, v) for v in off]
    for first, sec in pairs:
        passed, _ = s.screen_pairs(cols[0], first, *cols[1:], y2bits=sec)
        outs = {"ret": first, **({second: sec} if second else {})}
        res = check_batch(fn, {k: v[passed] for k, v in args.items()},
                          {k: v[passed] for k, v in outs.items()}, B16)
        assert not [f for f in res.findings if f.severity == "fail"], (
            name, [(f.rule_id, f.output) for f in res.findings[:4]])
    passed, _ = s.screen_pairs(cols[0], y, *cols[1:], y2bits=y2)
    res = check_batch(fn, args, right, B16)
    ok = np.ones(y.size, bool)
    ok[[f.index for f in res.findings]] = False
    r, _ = s.references(*cols)
    ordinary = ok & ~np.logical_or.reduce([_special(c) for c in cols]) & ~_special(y)
    ordinary &= _far_from_a_tie(s, r, y)
    assert ordinary.sum() > 500, name
    assert passed[ordinary].mean() > 0.98, (name, [
        tuple(hex(int(c[j])) for c in cols) for j in np.flatnonzero(ordinary & ~passed)[:4]])


@pytest.mark.device
def test_fract_and_nextafter_take_binary16s_own_steps():
    """fract caps at 0x1.ffcp-1 (binary16's largest below 1), not binary32's 0x1.fffffep-1,
    and rounds x - floor(x) once to binary16 (to 1 for a negative x above -2**-12, then
    capped); nextafter steps through binary16's patterns: the checker agrees, and the
    binary32 answers are not passed."""
    s = _screen("fract")
    x = _half([-2.0 ** -14, -2.0 ** -20, -2.0 ** -24, -0.25, 1.75, -3.5, -1e-3])
    fl = _half(np.floor(x.view(np.float16).astype(np.float64)))
    cap = float.fromhex("0x1.ffcp-1")
    want = _half([cap, cap, cap, 0.75, 0.75, 0.5,
                  float(np.float16(1 - np.float16(1e-3)))])
    passed, _ = s.screen_pairs(x, want, y2bits=fl)
    assert passed.all()
    res = check_batch(catalogue.function("fract"), {"x": x}, {"ret": want, "iptr": fl}, B16)
    assert not res.findings
    one = np.full(x.size, 0x3C00, np.uint16)
    assert not s.screen_pairs(x[:3], one[:3], y2bits=fl[:3])[0].any()
    n = _screen("nextafter")
    a = _half([1.0, 1.0, -2.0 ** -24, 65504.0])
    b = _half([2.0, 0.5, 1.0, np.inf])
    step = _half([1.0 + 2.0 ** -10, 1.0 - 2.0 ** -11, -0.0, np.inf])
    assert n.screen_pairs(a, step, b)[0][:3].all()
    res = check_batch(catalogue.function("nextafter"), {"x": a, "y": b}, {"ret": step}, B16)
    assert not res.findings
    f32_step = _half([1.0 + 2.0 ** -23, 1.0 - 2.0 ** -24])    # binary32's neighbours, rounded
    assert not n.screen_pairs(a[:2], f32_step, b[:2])[0].any()


@pytest.mark.device
def test_binary16_mad_passes_its_unfused_result_and_fma_does_not():
    """mad's result may be the correctly rounded fma or the product rounded to binary16 and
    then the sum rounded (OpenCL's table): where the two differ (and the unfused sum is no
    tie, which the host judges), mad's screen passes the unfused one, the checker accepts
    it, and fma's screen does not pass it."""
    rng = np.random.default_rng(11)
    x, z, w = (_half(rng.uniform(-8, 8, 20000)) for _ in range(3))
    xf, zf, wf = (c.view(np.float16).astype(np.float64) for c in (x, z, w))
    prod = (xf * zf).astype(np.float16).astype(np.float64)      # rounded to binary16
    unfused = _half(prod + wf)
    fused = _half(xf * zf + wf)                                  # exact, then rounded once
    normal = np.abs(xf * zf) >= 2.0 ** -14
    v = unfused.view(np.float16)
    with np.errstate(all="ignore"):                 # a tie of the unfused sum: the host's
        tie = np.abs(prod + wf - v.astype(np.float64)) >= (0.5 - 2 ** -20) * np.spacing(
            np.abs(v)).astype(np.float64)
    differ = (unfused != fused) & normal & ~tie & ~_special(unfused) & ~_special(fused)
    assert differ.sum() > 50
    cols = tuple(c[differ] for c in (x, z, w))
    y = unfused[differ]
    passed, _ = _screen("mad").screen_pairs(cols[0], y, *cols[1:])
    assert passed.mean() > 0.95
    res = check_batch(catalogue.function("mad"), _args("mad", *cols), {"ret": y}, B16)
    assert not res.findings
    passed, _ = _screen("fma").screen_pairs(cols[0], y, *cols[1:])
    assert not passed.any()


# --------------------------------------------------------------------------- run units
def _fp16_device():
    from fuzzfarm.device.discovery import list_devices
    return next((d for d in list_devices() if d.has_fp16 and d.has_fp64), None)


@pytest.mark.device
@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "floor", "pow", "fmin", "fma",
                                  "mad", "atan2", "ldexp", "frexp", "modf", "remquo",
                                  "sincos"])
def test_binary16_run_units_on_an_fp16_device_give_the_host_verdicts(name):
    """`run` units of binary16 on a device with cl_khr_fp16 (Intel's CPU runtime here and in
    CI), screened on the device -- the session chooses the device screen -- and again
    with faults planted (a result one ULP beyond the bound, the other sign, a NaN, a zero;
    a second output one off or of the other sign), give the host-screened unit's
    findings, counts and maximum error; every planted fault the checker fails is a
    recorded failure."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.work.session import DeviceSession
    info = _fp16_device()
    if info is None:
        pytest.skip("no device with cl_khr_fp16 and cl_khr_fp64")
    session = DeviceSession(info)
    runner = DeviceRunner(info, "")
    s = ds.DeviceScreen(runner, name, dref.plain_bound(name, "binary16", B16), 1 << 16,
                        precision="binary16")
    caught = faults_caught_in_run_units(session, s, name, "binary16", B16, 1 << 12,
                                        zlib.crc32(name.encode()) + 3)
    assert caught > 0, name
