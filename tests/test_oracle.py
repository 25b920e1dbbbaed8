"""The reference: rounding to a format, the spec's ULP, ULP error, exact operations."""
import math

import mpmath
import numpy as np
import pytest
from mpmath import mpf

from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.oracle import ROUNDING, Exact, reference, round_to_bits, ulp, ulp_error

F = BINARY32
TWO = mpmath.ldexp


def test_rounding_table_maps_opencl_modes_to_mpmath_letters():
    # mpmath's 'd' is toward zero and 'f' toward -inf (STYLE.md point 3).
    assert ROUNDING == {"rte": "n", "rtz": "d", "rtp": "c", "rtn": "f"}
    x = mpf(-1) / 3
    expect = float(np.float32(-1.0 / 3.0))  # RTE, via a correctly rounded conversion
    assert F.value(round_to_bits(x, F, "rte")) == expect
    assert abs(F.value(round_to_bits(x, F, "rtz"))) <= abs(float(x))
    assert F.value(round_to_bits(x, F, "rtp")) >= x
    assert F.value(round_to_bits(x, F, "rtn")) <= x
    assert round_to_bits(x, F, "rtz") == round_to_bits(x, F, "rtp")


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_round_to_bits_agrees_with_numpy_rte(fmt):
    rng = np.random.default_rng(5)
    vals = np.concatenate([rng.standard_normal(300) * 10.0 ** rng.integers(-40, 40, 300),
                           rng.standard_normal(50) * 1e-42, [1e39, -1e39, 3.4028235677973366e38]])
    for v in vals:
        with np.errstate(over="ignore"):
            want = int(np.array(v).astype(fmt.float).view(fmt.uint)) if fmt is not BINARY64 \
                else int(np.array(v).view(np.uint64))
        assert round_to_bits(mpf(float(v)), fmt, "rte") == want, v


def test_round_to_bits_subnormals_ties_and_overflow():
    tm = TWO(1, -149)
    assert round_to_bits(tm, F) == 0x1
    assert round_to_bits(tm / 2, F) == 0x0            # tie to even: 0
    assert round_to_bits(tm * 3 / 2, F) == 0x2        # tie to even: 2
    assert round_to_bits(tm / 2, F, "rtp") == 0x1
    assert round_to_bits(-tm / 2, F, "rtn") == 0x80000001
    assert round_to_bits(-tm / 2, F, "rtz") == 0x80000000
    # largest subnormal + half a step rounds up into the smallest normal
    assert round_to_bits(TWO(1, -126) - tm / 2, F) == 0x00800000
    # overflow threshold: 2**128 - 2**103 ties to even -> inf; just below stays max
    assert round_to_bits(TWO(1, 128) - TWO(1, 103), F) == 0x7F800000
    assert round_to_bits(TWO(1, 128) - TWO(1, 103) - TWO(1, 80), F) == 0x7F7FFFFF
    assert round_to_bits(TWO(1, 200), F, "rtz") == 0x7F7FFFFF
    assert round_to_bits(-TWO(1, 200), F, "rtp") == 0xFF7FFFFF
    assert round_to_bits(-TWO(1, 200), F, "rtn") == 0xFF800000


def test_ulp_as_the_spec_defines_it():
    assert ulp(0, F) == TWO(1, -149)                       # at zero: the smallest subnormal
    assert ulp(TWO(1, -140), F) == TWO(1, -149)            # subnormal range
    assert ulp(TWO(1, -126), F) == TWO(1, -149)            # min normal: gap below = subnormal gap
    assert ulp(1, F) == TWO(1, -24)                        # a power of two: the gap below it
    assert ulp(mpf(1) + TWO(1, -30), F) == TWO(1, -23)     # just above: the gap above
    assert ulp(mpf(1) - TWO(1, -30), F) == TWO(1, -24)
    assert ulp(1.5, F) == TWO(1, -23)
    assert ulp(TWO(1, 127) * 1.5, F) == TWO(1, 104)
    assert ulp(TWO(1, 140), F) == TWO(1, 104)              # beyond the range: gap below MAX


def test_ulp_error_counts_ulps_of_the_reference():
    one = F.bits_of(1.0)
    assert ulp_error(one, mpf(1), F) == 0.0
    assert ulp_error(one + 1, mpf(1), F) == 2.0            # the gap below 1 is the unit
    assert ulp_error(one, mpf(1) + TWO(1, -25), F) == pytest.approx(0.25)
    assert ulp_error(0x1, TWO(1, -150), F) == pytest.approx(0.5)
    assert ulp_error(0x0, TWO(1, -151), F) == pytest.approx(0.25)


def test_ulp_error_at_overflow_threshold():
    inf = F.pos_inf
    # the reference rounds to +inf: +inf is exact
    assert ulp_error(inf, TWO(1, 128), F) == 0.0
    assert ulp_error(inf, TWO(1, 200), F) == 0.0
    # reference below the threshold: inf counts as 2**128
    assert ulp_error(inf, TWO(1, 128) - TWO(1, 105), F) == pytest.approx(2.0)
    # premature overflow far from the threshold costs many ULPs
    assert ulp_error(inf, TWO(1, 120), F) > 1e6
    # an RTZ device: MAX_FLT is the correctly rounded result beyond the range
    assert ulp_error(F.max_finite, TWO(1, 128) - TWO(1, 103), F, ("rtz",)) == pytest.approx(0.5)
    assert ulp_error(inf, TWO(1, 129), F, ("rtz",)) > 1e6


def test_references_known_values():
    b = F.bits_of
    assert reference("sin", (b(1.0),), ("float",), F, 96)[0] == pytest.approx(math.sin(1.0), rel=1e-15)
    assert reference("sinpi", (b(0.25),), ("float",), F, 96)[0] == pytest.approx(math.sqrt(0.5), rel=1e-15)
    assert reference("pow", (b(-2.0), b(3.0)), ("float", "float"), F, 96)[0] == -8
    assert reference("pow", (b(-2.0), b(0.5)), ("float", "float"), F, 96) == (None,)
    assert reference("pown", (F.pos_inf | F.sign_mask, -3), ("float", "int"), F, 96) == (Exact(0x80000000),)
    assert reference("rootn", (b(-8.0), 3), ("float", "int"), F, 96)[0] == pytest.approx(-2.0, rel=1e-20)
    assert reference("frexp", (0x1,), ("float",), F, 96) == (Exact(b(0.5)), Exact(-148))
    assert reference("modf", (b(-3.0),), ("float",), F, 96) == (Exact(0x80000000), Exact(b(-3.0)))
    assert reference("round", (b(-2.5),), ("float",), F, 96) == (Exact(b(-3.0)),)
    assert reference("rint", (b(-2.5),), ("float",), F, 96) == (Exact(b(-2.0)),)
    assert reference("ilogb", (0x1,), ("float",), F, 96) == (Exact(-149),)
    assert reference("logb", (0x1,), ("float",), F, 96) == (Exact(b(-149.0)),)
    # fract of a tiny negative value is capped just below 1 (OpenCL C 6.15.2)
    tiny_neg = b(float(np.float32(-1e-30)))
    assert reference("fract", (tiny_neg,), ("float",), F, 96)[0] == Exact(0x3F7FFFFF)
    assert reference("ldexp", (b(1.5), -149), ("float", "int"), F, 96) == (Exact(0x2),)  # tie->even
    assert reference("nextafter", (0x0, b(-1.0)), ("float", "float"), F, 96) == (Exact(0x80000001),)
    assert reference("fdim", (b(1.0), b(2.0)), ("float", "float"), F, 96) == (Exact(0),)
    # large arguments: mpmath reduces with enough precision (sin(2**100))
    big = b(2.0 ** 100)
    with mpmath.workprec(400):
        want = mpmath.sin(mpmath.ldexp(1, 100))
    assert abs(reference("sin", (big,), ("float",), F, 96)[0] - want) < mpf(2) ** -80
