"""The screen (fuzzfarm.oracle.screen): its API, the elements it must leave undecided, and its
proof under a worst-case reference.

tests/test_screen_soundness.py compares the screen with the exact path on about 10**5
(10**6 with -m soundness) pairs per function and format and measures the references'
accuracy; here each rule of the screen's contract is checked on purpose-built elements.
"""
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from edgecases import bounds, catalogue
from fuzzfarm import formats
from fuzzfarm.oracle import screen as sc
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.oracle import reference, round_to_bits, ulp, ulp_error, value_of
from fuzzfarm.oracle.screen import SCREENS, Screened, has_screen, screen, screen_pass
from strategies import Recipe, expand

F = BINARY32


def _bits(values, fmt=F):
    return np.asarray(values, np.float64).astype(fmt.float).view(fmt.uint)


def _one(name, args, got_bits, bound, fmt=F):
    """The screen's verdict on one element: 'pass', 'fail' or None, and err."""
    s = screen(name, [np.asarray([a], np.float64 if isinstance(a, float) else np.int64)
                      for a in args], np.asarray([got_bits], fmt.uint), bound, fmt)
    v = "pass" if s.passed[0] else "fail" if s.failed[0] else None
    return v, float(s.err[0])


# --------------------------------------------------------------------------- API
def test_api_shapes_dtypes_and_wrapper():
    x = np.linspace(0.1, 3.0, 1000)
    got = _bits(np.sin(x))
    s = screen("sin", [x], got, 4.0, F)
    assert isinstance(s, Screened)
    assert s.passed.dtype == bool and s.failed.dtype == bool and s.err.dtype == np.float64
    assert s.passed.shape == s.failed.shape == s.err.shape == (1000,)
    assert s.passed.all() and not s.failed.any()
    assert np.all(s.err <= 0.5 + sc.margin_ulps("sin", F, 4.0))
    passed, err = screen_pass("sin", [x], got, 4.0, F)
    assert np.array_equal(passed, s.passed) and np.array_equal(err, s.err)
    assert set(SCREENS) >= {"sin", "sinpi", "tanpi", "exp10", "rootn", "erf", "tgamma"}
    assert np.allclose(SCREENS["sin"](x), np.sin(x))


def test_has_screen_per_format():
    assert has_screen("sin", BINARY16) and has_screen("sin", BINARY32)
    assert has_screen("sin", BINARY64) == sc.LONGDOUBLE_OK
    assert has_screen("erf", BINARY32) and not has_screen("erf", BINARY64)
    assert has_screen("fma", BINARY32) and not has_screen("fma", BINARY64)
    for name in ("lgamma", "lgamma_r", "sincos", "fmax", "fdim", "mad", "half_sin", "native_sin"):
        assert not has_screen(name, BINARY32), name


def test_unscreened_function_decides_nothing():
    s = screen("lgamma", [np.asarray([2.5])], _bits([0.2847]), 4.0, F)
    assert not s.passed.any() and not s.failed.any() and np.isnan(s.err).all()


def test_errors_raised():
    x = np.asarray([1.0, 2.0])
    with pytest.raises(ValueError, match="bound_ulps"):
        screen("sin", [x], _bits(np.sin(x)), -1.0, F)
    with pytest.raises(ValueError, match="bound_ulps"):
        screen("sin", [x], _bits(np.sin(x)), float("nan"), F)
    with pytest.raises(ValueError, match="shape"):
        screen("sin", [x[:1]], _bits(np.sin(x)), 4.0, F)
    with pytest.raises(KeyError):
        sc.margin_ulps("lgamma", F)


@pytest.mark.parametrize("n", [0, 1, 7, sc.BLOCK - 1, sc.BLOCK, sc.BLOCK + 3, 3 * sc.BLOCK + 5])
def test_block_boundaries(n):
    x = np.linspace(-50, 50, n)
    got = _bits(np.exp(x))
    s = screen("exp", [x], got, 3.0, F)
    with np.errstate(over="ignore"):
        ordinary = np.abs(np.exp(x)) < 2.0 ** 127
    assert s.passed.shape == (n,)
    assert np.array_equal(s.passed, ordinary)
    assert np.all(np.isnan(s.err) == ~s.passed)


def test_got_dtype_is_converted():
    x = np.asarray([0.5, 1.5])
    got = _bits(np.sin(x))
    a = screen("sin", [x], got.astype(np.int64), 4.0, F)
    assert a.passed.all()


# --------------------------------------------------------------------------- undecided
def test_nan_and_inf_results_are_undecided():
    x = np.asarray([0.5, 0.5, 0.5, 0.5])
    got = np.asarray([0x7FC00000, 0x7F800001, 0x7F800000, 0xFF800000], np.uint32)
    s = screen("sin", [x], got, 4.0, F)
    assert not s.passed.any() and not s.failed.any()


@pytest.mark.parametrize("name,args,got", [
    ("sinpi", (2.0,), 0.0),                  # exact zero (its sign is the rule's business)
    ("sinpi", (2.0,), -0.0),
    ("tanpi", (0.5,), float("inf")),         # a pole
    ("asin", (2.0,), 1.0),                   # no real value: a NaN is required
    ("atan", (float("inf"),), float(np.float32(np.pi / 2))),  # infinite argument
    ("powr", (-2.0, 2.0), 4.0),              # powr(x < 0, y) is a NaN
    ("pow", (float("nan"), 0.0), 1.0),
    ("rootn", (-8.0, 2), 2.0),               # even root of a negative number: NaN
    ("rootn", (8.0, 0), 1.0),
])
def test_special_references_are_undecided(name, args, got):
    v, err = _one(name, args, int(_bits([got])[0]), 16.0)
    assert v is None and np.isnan(err)


def test_negative_base_with_odd_root_is_screened():
    assert _one("rootn", (-8.0, 3), int(_bits([-2.0])[0]), 16.0)[0] == "pass"
    assert _one("pown", (-2.0, 3), int(_bits([-8.0])[0]), 16.0)[0] == "pass"


def test_correctly_rounded_bound_checks_the_sign_of_a_zero():
    # exp(-120) ~ 7.7e-53: RN in binary32 is +0; -0 is within half an ULP but not RN
    assert _one("exp", (-120.0,), 0x00000000, 0.5)[0] == "pass"
    assert _one("exp", (-120.0,), 0x80000000, 0.5)[0] is None
    # with a bound of 3 ULP the exact path measures |-0 - f|, a pass
    assert _one("exp", (-120.0,), 0x80000000, 3.0)[0] == "pass"
    assert _one("exp", (-120.0,), 0x00000001, 0.5)[0] == "fail"


def test_zero_for_a_subnormal_result_is_never_failed():
    x = 2.0 ** -140                           # sin(x) = x - x**3/6, subnormal in binary32
    assert _one("sin", (x,), 0, 4.0)[0] is None          # a flushed result: not our call
    assert _one("sin", (x,), int(_bits([x])[0]) + 9, 4.0)[0] == "fail"
    assert _one("sin", (2.0 ** -100,), 0, 4.0)[0] == "fail"   # a normal result


def test_binade_edge_uses_the_gap_below():
    # cos(2**-13) = 1 - 2**-27 + ...: below 1, where the ULP is 2**-24 (the gap below 1)
    x = 2.0 ** -13
    one = 0x3F800000
    r = mpmath.cos(mpmath.mpf(x))
    for g in range(one - 6, one + 6):
        v, err = _one("cos", (x,), g, 4.0)
        exact = ulp_error(g, r, F)
        assert v == ("pass" if exact <= 4 else "fail"), (hex(g), exact, v)
        assert abs(err - exact) < 1e-6


def test_err_is_the_ulp_error():
    rng = np.random.default_rng(3)
    x = rng.uniform(-10, 10, 300).astype(np.float32).astype(np.float64)
    got = _bits(np.sin(x)) + rng.integers(-3, 4, 300).astype(np.uint32)
    s = screen("sin", [x], got, 4.0, F)
    for i in range(0, 300, 7):
        r = reference("sin", (int(_bits([x[i]])[0]),), ("float",), F, 120)[0]
        e = ulp_error(int(got[i]), r, F)
        assert s.passed[i] == (e <= 4)
        assert abs(s.err[i] - e) <= 2 * sc.margin_ulps("sin", F, 4.0)


# --------------------------------------------------------------------------- the proof
def _probe(monkeypatch, rel64, rel_ld):
    """Install a screen '_probe' whose reference is the exact sum of its two arguments (in
    the reference type), so that a test can hand it any reference value it likes."""
    def ref(a, out, k):
        return np.add(a[0], a[1], out=out)
    monkeypatch.setitem(sc._TABLE, "_probe", sc._Entry(ref, rel64, rel_ld, False))


def _mpf(v: Fraction):
    """A dyadic Fraction as an mpf, exactly (mpf(int) rounds to the working precision)."""
    with mpmath.workprec(v.numerator.bit_length() + 8):
        return mpmath.ldexp(mpmath.mpf(v.numerator), -(v.denominator.bit_length() - 1))


def _fractions_to_pair(v: Fraction):
    hi = float(v)
    lo = float(v - Fraction(hi))
    return hi, lo


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_worst_case_reference_never_misleads(monkeypatch, fmt):
    """Reference values off by 0.98 REL in either direction (the most the assumption
    allows), exact results f placed so that a device result's error lies a fraction of
    the margin on either side of the bound, at binade edges, in the subnormal range and
    in ordinary binades: every verdict agrees with the exact ULP error, and every error
    farther than twice the margin from the bound is decided."""
    if fmt is BINARY64 and not sc.LONGDOUBLE_OK:
        pytest.skip("no 64-bit long double")
    rel = 2.0 ** -45 if fmt is not BINARY64 else 2.0 ** -56
    _probe(monkeypatch, rel, rel)
    rng = np.random.default_rng(11)
    e1 = 1 << fmt.frac_bits
    bases = [e1 * k for k in (2, 3, fmt.emax, 2 * fmt.emax - 2)]          # powers of two
    bases += [b - 1 for b in bases] + [b + 1 for b in bases]              # either side
    bases += [1, 2, 5, e1 - 1, e1, e1 + 1]                                # subnormal, min normal
    bases += [int(v) for v in rng.integers(e1, fmt.max_finite - 2 * e1, 4)]
    rows = []
    for bound in (0.5, 1.0, 2.0, 2.5, 3.0, 4.0, 16.0):
        m = sc._margin(rel, bound, fmt, 53 if fmt is not BINARY64 else 64)
        mq = Fraction(m)
        cs = [Fraction(c) for c in ("1/2", "3/4", "5/4", "2", "4")]
        frac_b = Fraction(bound) - int(bound)
        deltas = {Fraction(0), Fraction(1, 2), Fraction(-1, 2), frac_b, -frac_b}
        deltas = {d + s * c * mq for d in deltas for c in cs for s in (1, -1)} | deltas
        b0 = int(bound)
        ks = sorted(set(range(-b0 - 2, -b0 + 2)) | set(range(b0 - 1, b0 + 3)) | {0})
        for n in bases:
            nv = Fraction(fmt.value(n))
            u = Fraction(float(ulp(value_of(n, fmt), fmt)))
            for d in deltas:
                f = nv + d * u
                if f <= 0:
                    continue
                for s in (1, -1):
                    r = f * (1 + s * Fraction(0.98) * Fraction(rel))
                    if fmt is BINARY64:       # the (hi, lo) pair must carry r to 64 bits
                        hi, lo = _fractions_to_pair(r)
                        if abs(Fraction(hi) + Fraction(lo) - r) > r / 2**66:
                            continue          # below float64's range: not representable
                    for k in ks:
                        g = n + k
                        if 0 <= g <= fmt.max_finite:
                            rows.append((bound, f, r, g))
    bounds = np.asarray([b for b, *_ in rows])
    pairs = [_fractions_to_pair(r) for _, _, r, _ in rows]
    hi = np.asarray([p[0] for p in pairs])
    lo = np.asarray([p[1] for p in pairs]) if fmt is BINARY64 else np.zeros(len(rows))
    got = np.asarray([g for *_, g in rows], np.uint64).astype(fmt.uint)
    checked = decided = 0
    for bound in np.unique(bounds):
        sel = np.flatnonzero(bounds == bound)
        s = screen("_probe", [hi[sel], lo[sel]], got[sel], float(bound), fmt)
        m = sc._margin(rel, float(bound), fmt, 53 if fmt is not BINARY64 else 64)
        for j, ps, fl in zip(sel, s.passed, s.failed):
            _, f, _, g = rows[j]
            fm = _mpf(f)
            if bound < 1:
                ok = round_to_bits(fm, fmt, "rte") == g
            else:
                ok = ulp_error(g, fm, fmt) <= bound
            assert not (ps and not ok), ("passed", fmt.name, bound, f, hex(g))
            assert not (fl and ok), ("failed", fmt.name, bound, f, hex(g))
            e = ulp_error(g, fm, fmt)
            k2 = f.numerator.bit_length() - f.denominator.bit_length()   # 2**k2 ~ f
            at_edge = any(abs(Fraction(2) ** (k2 + j) / f - 1) < Fraction(1, 2 ** 40)
                          for j in (-1, 0, 1))
            top = f >= Fraction(2) ** fmt.emax
            if not at_edge and not top and abs(e - (0.5 if bound < 1 else bound)) > 2 * m \
                    and not (g == 0 and (bound < 1 or f < Fraction(2) ** fmt.emin)):
                assert ps or fl, ("undecided", fmt.name, bound, f, hex(g), e)
            checked += 1
            decided += bool(ps or fl)
    assert checked > 10000 and decided > checked // 2


# --------------------------------------------------------------------------- regression
@pytest.mark.parametrize("name", sorted(SCREENS))
def test_screen_agrees_with_exact_on_recipe_inputs(name):
    """The catalogue's own input classes (strategies.expand), device results at and around
    the bound: passes and failures both agree with the exact path."""
    fn = catalogue.function(name)
    b = bounds.bound(name)
    recipe = Recipe(float_weights={"normal": 4, "subnormal": 1, "integer": 1, "half_integer": 1,
                                   "near_one": 2, "boundary": 1, "half_pi_multiple": 2},
                    int_weights={"small": 5, "exponent_landmark": 1}, seed=11)
    ins = expand(recipe, fn, 200, F)
    kinds = tuple(a.kind for a in fn.inputs)
    rows, refs = [], []
    for i in range(200):
        args = tuple(int(ins[a.name][i]) for a in fn.inputs)
        r = reference(name, args, kinds, F, 128)[0]
        if not hasattr(r, "man_exp"):     # None, Exact, Unspecified: not measured in ULPs
            continue
        rn = round_to_bits(r, F)
        if (rn & F.abs_mask) >= F.pos_inf or (rn & F.abs_mask) == 0:
            continue
        step = int(b.ulps) + 2
        for k in range(-step, step + 1):
            rows.append((args, (rn + k) & 0xFFFFFFFF))
            refs.append(r)
    assert rows, "no ordinary inputs drawn"
    args64 = []
    for j, a in enumerate(fn.inputs):
        col = np.asarray([r[0][j] for r in rows])
        args64.append(formats.to_float(col.astype(F.uint), F) if a.kind == "float"
                      else col.astype(np.int64))
    got = np.asarray([r[1] for r in rows], F.uint)
    s = screen(name, args64, got, b.ulps, F)
    checked = 0
    for ps, fl, (args, g), r in zip(s.passed, s.failed, rows, refs):
        if not (ps or fl):
            continue
        checked += 1
        ok = round_to_bits(r, F) == g if b.correctly_rounded else ulp_error(g, r, F) <= b.ulps
        assert ok == bool(ps), (name, args, hex(g), "passed" if ps else "failed")
    assert checked > len(rows) // 2, "the screen decided almost nothing"


def test_overflow_to_infinity_passes_only_as_the_rounded_infinity():
    # exp(100) ~ 2.7e43 is beyond binary32's overflow threshold: RN is +inf (0 ULP for
    # oracle.ulp_error); float64 overflows for exp(1000) and the answer is the same.
    inf, big = _bits([float("inf"), float(np.finfo(np.float32).max)])
    assert _one("exp", (100.0,), int(inf), 3.0)[0] == "pass"
    assert _one("exp", (1000.0,), int(inf), 3.0)[0] == "pass"
    assert _one("sinh", (-1000.0,), int(inf) | 0x80000000, 3.0)[0] == "pass"
    assert _one("exp", (100.0,), int(big), 3.0)[0] is None          # max_finite: exact path
    assert _one("sinh", (-1000.0,), int(inf), 3.0)[0] is None       # wrong sign
    assert _one("tanpi", (0.5,), int(inf), 16.0)[0] is None         # a pole, not overflow


def test_underflow_to_zero_passes_a_zero_result():
    # exp(-800) ~ 3.7e-348 underflows float64 to 0; in binary32 a zero is within 2**-900 ULP
    zero, tiny, one = _bits([0.0, 2.0 ** -149, 1.0])
    assert _one("exp", (-800.0,), int(zero), 3.0)[0] == "pass"
    assert _one("exp", (-800.0,), int(zero) | 0x80000000, 3.0)[0] == "pass"   # magnitude
    assert _one("exp", (-800.0,), int(tiny), 3.0)[0] is None        # exact path decides
    assert _one("exp", (-800.0,), int(one), 3.0)[0] is None
    assert _one("exp", (-800.0,), int(zero), 0.5)[0] is None        # correctly rounded: sign
    assert _one("sin", (1e-30,), int(zero), 4.0)[0] != "pass"       # not an underflow


def test_the_top_binade_is_screened_up_to_the_largest_finite_value():
    # exp(88.5) ~ 2.7e38 lies in [2**127, 2**128): ULP 2**104
    r = float(np.exp(88.5))
    rn = int(_bits([r])[0])
    assert _one("exp", (88.5,), rn, 3.0)[0] == "pass"
    assert _one("exp", (88.5,), rn + 4, 3.0)[0] == "fail"
    assert 3.4 < _one("exp", (88.5,), rn + 4, 3.0)[1] < 4.6
