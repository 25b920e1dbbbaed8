"""The integer and half-integer condition words (edgecases.predicates) against exact
integer arithmetic on every kind of binary16/32/64 value, including the huge integers a
sweep meets by the billion (where the parity test must hold without fmod)."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from edgecases.predicates import evaluate
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64

WORDS = ("integer", "non_integer", "odd_integer", "even_integer", "not_odd_integer",
         "half_integer", "half_integer_even_n", "half_integer_odd_n")


def _exact(word: str, value) -> bool:
    """The word's meaning for one float (None for NaN), by Fraction arithmetic.  No word
    holds for a NaN (the NaN rules judge those); an infinity is no integer."""
    if value is None or value != value:
        return False
    if value in (float("inf"), float("-inf")):
        return word == "not_odd_integer"
    q = Fraction(value)
    integer = q.denominator == 1
    odd = integer and q.numerator % 2 == 1
    half = (2 * q).denominator == 1 and not integer
    n = q.numerator // q.denominator if half else None   # floor
    return {"integer": integer, "non_integer": not integer, "odd_integer": odd,
            "even_integer": integer and not odd, "not_odd_integer": not odd,
            "half_integer": half, "half_integer_even_n": half and n % 2 == 0,
            "half_integer_odd_n": half and n % 2 == 1}[word]


def _patterns(fmt, rng) -> np.ndarray:
    """Every landmark of the format's integer range, with neighbours, and random
    patterns."""
    vals = []
    for e in range(0, fmt.emax + 1):
        for m in (1.0, 1.5, 1.75):
            for v in (m * 2.0 ** e, m * 2.0 ** e + 0.5, m * 2.0 ** e + 1):
                for s in (v, -v):
                    try:
                        vals.append(fmt.bits_of(s))
                    except (OverflowError, ValueError):
                        pass
    pats = np.array(vals, dtype=np.uint64)
    pats = np.concatenate([pats, pats + 1, pats - 1,
                           rng.integers(0, 1 << fmt.bits, 20_000, dtype=np.uint64),
                           np.array([0, fmt.sign_mask, fmt.pos_inf, fmt.pos_inf | fmt.sign_mask,
                                     fmt.default_qnan, fmt.pos_inf | 1], dtype=np.uint64)])
    return (pats & np.uint64((1 << fmt.bits) - 1)).astype(fmt.uint)


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
@pytest.mark.parametrize("word", WORDS)
def test_integer_words_agree_with_exact_arithmetic(word, fmt):
    rng = np.random.default_rng(abs(hash((word, fmt.name))) % 2**32)
    pats = _patterns(fmt, rng)
    got = evaluate(word, pats, "float", fmt)
    want = np.array([_exact(word, None if (int(p) & fmt.abs_mask) > fmt.pos_inf else fmt.value(int(p)))
                     for p in pats])
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, [(fmt.hex(int(pats[i])), bool(got[i])) for i in bad[:5]]


def test_parity_of_huge_integers():
    """Known-bad/known-good: 2**127, 3 * 2**100 are even; 2**24 - 1 and -(2**53 - 1)
    (binary64) are odd."""
    f32 = np.array([BINARY32.bits_of(2.0 ** 127), BINARY32.bits_of(3 * 2.0 ** 100),
                    BINARY32.bits_of(2.0 ** 24 - 1)], np.uint32)
    assert evaluate("odd_integer", f32, "float", BINARY32).tolist() == [False, False, True]
    assert evaluate("even_integer", f32, "float", BINARY32).tolist() == [True, True, False]
    f64 = np.array([BINARY64.bits_of(-(2.0 ** 53 - 1))], np.uint64)
    assert evaluate("odd_integer", f64, "float", BINARY64).tolist() == [True]
