"""The largest ULP error of a batch is the true one on the host screen: a passed input whose
estimate is twice its error (f just above a power of two, where the screen's u_lo is half
f's ULP) no longer hides the input of the true maximum (verdict.screening, checker's
``_measure_maximum``)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from edgecases import catalogue
from fuzzfarm.verdict.checker import check_batch
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.screening import maximum_candidates_left

EXP2 = catalogue.function("exp2")


def b32(v: float) -> int:
    return int(np.float32(v).view(np.uint32))


def _each(x, y) -> list:
    """Each input's error measured alone (a batch of one is measured exactly)."""
    return [check_batch(EXP2, {"x": x[k:k + 1]}, {"ret": y[k:k + 1]}, Claims()).max_ulp_error
            for k in range(len(x))]


# exp2(2^-60) = 1 + 2^-60 ln 2: just above 1, where the estimate of 1 + 2^-23 (an error of
# 1 ULP) is 2; exp2(-2^-60) just below 1, where it is not doubled
ABOVE = (b32(2.0 ** -60), 0x3F800001)
BELOW = (b32(-(2.0 ** -60)), 0x3F7FFFFF)
SQRT2_LOW = (b32(0.5), 0x3FB504F3 - 1)              # sqrt(2) one below: 1.203 ULP


@pytest.mark.parametrize("pairs", [
    [ABOVE, SQRT2_LOW], [SQRT2_LOW, ABOVE], [BELOW, ABOVE, SQRT2_LOW],
])
def test_a_doubled_estimate_does_not_hide_the_true_maximum(pairs):
    x = np.array([p[0] for p in pairs], np.uint32)
    y = np.array([p[1] for p in pairs], np.uint32)
    res = check_batch(EXP2, {"x": x}, {"ret": y}, Claims())
    each = _each(x, y)
    assert max(each) == pytest.approx(1.2030314, abs=1e-6)
    assert res.max_ulp_error == max(each)
    assert res.max_ulp_element == int(np.argmax(each))
    assert not res.findings                          # all within exp2's 3 ULP


def test_in_a_large_batch_too_among_correctly_rounded_results():
    rng = np.random.default_rng(7)
    xs = rng.uniform(-4, 4, 5000).astype(np.float32)
    ys = np.exp2(xs.astype(np.float64)).astype(np.float32)     # within 1 ULP
    x = np.concatenate([xs.view(np.uint32), [ABOVE[0], SQRT2_LOW[0]]]).astype(np.uint32)
    y = np.concatenate([ys.view(np.uint32), [ABOVE[1], SQRT2_LOW[1]]]).astype(np.uint32)
    res = check_batch(EXP2, {"x": x}, {"ret": y}, Claims())
    assert res.max_ulp_element == len(x) - 1
    assert res.max_ulp_error == pytest.approx(1.2030314, abs=1e-6)


def test_just_below_a_power_of_two_the_estimate_is_the_error():
    x = np.array([BELOW[0]], np.uint32)
    y = np.array([BELOW[1]], np.uint32)
    (alone,) = _each(x, y)
    assert alone == pytest.approx(1.0, abs=1e-9)


def test_which_passed_inputs_are_measured():
    nan = math.nan
    assert maximum_candidates_left(2.0, 1e-6, nan, first=True)      # nothing measured
    assert maximum_candidates_left(2.0, 1e-6, 1.0, first=True)
    assert not maximum_candidates_left(0.9, 1e-6, 1.0, first=True)  # cannot raise it
    # after the first: only an estimate beyond the measured maximum by two margins
    assert maximum_candidates_left(1.2, 1e-6, 1.0, first=False)
    assert not maximum_candidates_left(1.0 + 1e-6, 1e-6, 1.0, first=False)   # a tie
    assert not maximum_candidates_left(0.5, 1e-6, 1.0, first=False)
