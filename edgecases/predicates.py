"""The vocabulary of rule conditions: named predicates on one argument.

A rule's ``when`` table maps each argument name to a list of predicate words, all of which
must hold (a conjunction).  Each word is the name of a predicate below, optionally with one
numeric parameter after a colon (``lt:0``, ``abs_gt:1``, ``eq:-0.5``).  Predicates are
vectorized: they take the argument as an array of bit patterns (float arguments, with the
format) or of int32 values (``int`` arguments) and return a bool array.

Terms follow the reading of docs/c99_annex_f9.md §1.1:

* ``integer``: a *finite* value with no fractional part, ±0 included; ±inf and NaN are not
  integers.  Every finite value with |x| >= 2**(p-1) is an integer, and every finite
  |x| >= 2**p is even.
* ``odd_integer`` / ``even_integer``: parity of an integer (±0 is even).
* ``not_odd_integer``: anything but NaN and an odd integer (so ±inf and non-integers too).
* ``lt:0`` is the numeric comparison: -0 is not < 0, -inf is.
* ``abs_gt:1`` includes ±inf; ``abs_lt:1`` includes ±0.
* ``half_integer``: n + 0.5 for an integer n (finite); ``_even_n``/``_odd_n`` by n's parity.

No predicate is true of a NaN except ``nan``, ``qnan`` and ``snan``.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from fuzzfarm.errors import SpecDataError
from fuzzfarm.formats import FloatFormat, is_nan, is_qnan, is_snan, to_float

__all__ = ["PREDICATES", "evaluate", "parse_word", "InvalidCondition"]


class InvalidCondition(SpecDataError):
    """A condition word that is not in the vocabulary or has a malformed parameter."""


def _floats(bits, fmt):
    with np.errstate(invalid="ignore"):  # a signaling NaN's cast warns; NaNs are masked
        return to_float(bits, fmt), is_nan(bits, fmt)


def _float_pred(fn):
    """Adapt ``fn(values_float64, nan_mask)`` to a predicate on patterns."""
    def pred(arg, fmt):
        v, nan = _floats(arg, fmt)
        with np.errstate(invalid="ignore"):
            return fn(v, nan) & ~nan
    return pred


def _is_integer(v):
    with np.errstate(invalid="ignore"):
        return np.isfinite(v) & (np.floor(v) == v)


def _odd_integral(m):
    """True where the integral float64 ``m`` is odd: ``m/2`` is exact (a power-of-two
    scaling) and integral exactly for even ``m``.  No fmod: glibc's fmod takes time in
    the exponent difference, ~50 ns an element for the large integers of a sweep."""
    h = m * 0.5
    return np.floor(h) != h


def _is_odd(v):
    with np.errstate(invalid="ignore"):
        return _is_integer(v) & _odd_integral(v)


def _half_integer(v):
    with np.errstate(invalid="ignore"):
        with np.errstate(over="ignore"):    # 2v overflows only for (even) integers
            t = 2.0 * v                     # exact scaling by a power of two
        return np.isfinite(t) & (t == np.floor(t)) & _odd_integral(t)


def _n_of_half(v):
    with np.errstate(invalid="ignore"):
        return np.floor(np.where(np.isfinite(v), v, 0.0))


# name -> (float predicate(bits, fmt), int predicate(int32 values) or None, takes parameter)
_FLOAT_PLAIN: dict[str, Callable] = {
    "nan": lambda a, f: is_nan(a, f),
    "qnan": lambda a, f: is_qnan(a, f),
    "snan": lambda a, f: is_snan(a, f),
    "not_nan": lambda a, f: ~is_nan(a, f),
    "inf": _float_pred(lambda v, n: np.isinf(v)),
    "pos_inf": _float_pred(lambda v, n: v == np.inf),
    "neg_inf": _float_pred(lambda v, n: v == -np.inf),
    "zero": _float_pred(lambda v, n: v == 0.0),
    "pos_zero": _float_pred(lambda v, n: (v == 0.0) & ~np.signbit(v)),
    "neg_zero": _float_pred(lambda v, n: (v == 0.0) & np.signbit(v)),
    "nonzero": _float_pred(lambda v, n: v != 0.0),
    "finite": _float_pred(lambda v, n: np.isfinite(v)),
    "not_inf": _float_pred(lambda v, n: ~np.isinf(v)),
    "subnormal": None,  # filled below: needs the format's min_normal
    "integer": _float_pred(lambda v, n: _is_integer(v)),
    "non_integer": _float_pred(lambda v, n: np.isfinite(v) & ~_is_integer(v)),
    "odd_integer": _float_pred(lambda v, n: _is_odd(v)),
    "even_integer": _float_pred(lambda v, n: _is_integer(v) & ~_is_odd(v)),
    "not_odd_integer": _float_pred(lambda v, n: ~_is_odd(v)),
    "half_integer": _float_pred(lambda v, n: _half_integer(v)),
    "half_integer_even_n": _float_pred(
        lambda v, n: _half_integer(v) & ~_odd_integral(_n_of_half(v))),
    "half_integer_odd_n": _float_pred(
        lambda v, n: _half_integer(v) & _odd_integral(_n_of_half(v))),
    "sign_pos": lambda a, f: ~is_nan(a, f) & ((np.asarray(a).astype(f.uint) & f.uint(f.sign_mask)) == 0),
    "sign_neg": lambda a, f: ~is_nan(a, f) & ((np.asarray(a).astype(f.uint) & f.uint(f.sign_mask)) != 0),
}


def _subnormal(a, f):
    v, nan = _floats(a, f)
    tiny = f.value(f.min_normal)
    with np.errstate(invalid="ignore"):
        return (v != 0.0) & (np.abs(v) < tiny) & ~nan


_FLOAT_PLAIN["subnormal"] = _subnormal

_COMPARE: dict[str, Callable] = {
    "lt": lambda v, c: v < c,
    "le": lambda v, c: v <= c,
    "gt": lambda v, c: v > c,
    "ge": lambda v, c: v >= c,
    "eq": lambda v, c: v == c,
    "ne": lambda v, c: v != c,
    "abs_lt": lambda v, c: np.abs(v) < c,
    "abs_le": lambda v, c: np.abs(v) <= c,
    "abs_gt": lambda v, c: np.abs(v) > c,
    "abs_ge": lambda v, c: np.abs(v) >= c,
    "abs_eq": lambda v, c: np.abs(v) == c,
}

_INT_PLAIN: dict[str, Callable] = {
    "zero": lambda n: n == 0,
    "nonzero": lambda n: n != 0,
    "integer": lambda n: np.ones(n.shape, bool),
    "odd_integer": lambda n: (n % 2) != 0,
    "even_integer": lambda n: (n % 2) == 0,
    "not_odd_integer": lambda n: (n % 2) == 0,
    "finite": lambda n: np.ones(n.shape, bool),
    "not_nan": lambda n: np.ones(n.shape, bool),
    "not_inf": lambda n: np.ones(n.shape, bool),
}

#: Every word of the vocabulary with its arity (0: plain, 1: takes ``:number``).
PREDICATES = {**{k: 0 for k in _FLOAT_PLAIN}, **{k: 1 for k in _COMPARE}}


def _parse_number(text: str) -> float:
    t = text.strip().lower()
    table = {"inf": math.inf, "+inf": math.inf, "-inf": -math.inf}
    if t in table:
        return table[t]
    try:
        return float.fromhex(t) if "0x" in t else float(t)
    except ValueError:
        raise InvalidCondition(f"parameter {text!r} is not a number (write e.g. 1, -0.5, 0x1p-126, inf)")


def parse_word(word: str, arg_names: tuple = ()) -> tuple[str, float | str | None]:
    """Split ``'abs_gt:1'`` into ``('abs_gt', 1.0)``.  A comparison's parameter may name
    another argument of ``arg_names`` instead of a number (``'gt:maxval'`` ->
    ``('gt', 'maxval')``).  Raises InvalidCondition."""
    name, _, param = word.partition(":")
    param = param.strip()
    if name.strip() in _COMPARE and param in arg_names:
        return name.strip(), param
    name = name.strip()
    if name not in PREDICATES:
        raise InvalidCondition(f"condition {word!r}: unknown predicate {name!r}; "
                               f"known: {', '.join(sorted(PREDICATES))}")
    if PREDICATES[name] and not param:
        raise InvalidCondition(f"condition {word!r}: {name} needs a number, e.g. {name}:0")
    if not PREDICATES[name] and param:
        raise InvalidCondition(f"condition {word!r}: {name} takes no parameter")
    return name, (_parse_number(param) if param else None)


def evaluate(word: str, arg: np.ndarray, kind: str, fmt: FloatFormat,
             others: dict | None = None) -> np.ndarray:
    """Evaluate one condition word on an argument array.

    ``kind`` is ``'float'`` (``arg`` holds ``fmt`` patterns) or ``'int'`` (int32 values).
    ``others`` maps the other argument names to ``(array, kind)`` for comparisons whose
    parameter names an argument (``gt:maxval``; false wherever either side is a NaN).
    Returns a bool array of ``arg``'s shape.  Raises InvalidCondition for a word that does
    not apply to the kind (e.g. ``nan`` on an int argument).
    """
    name, c = parse_word(word, tuple(others or ()))
    if isinstance(c, str):
        other, okind = others[c]
        rhs = (np.asarray(other).astype(np.float64) if okind != "float"
               else _floats(other, fmt)[0])
        lhs = (np.asarray(arg).astype(np.float64) if kind != "float" else _floats(arg, fmt)[0])
        with np.errstate(invalid="ignore"):
            return _COMPARE[name](lhs, rhs) & ~np.isnan(lhs) & ~np.isnan(rhs)
    if kind == "int":
        n = np.asarray(arg).astype(np.int64)
        if name in _COMPARE:
            return _COMPARE[name](n.astype(np.float64), c)
        if name in _INT_PLAIN:
            return _INT_PLAIN[name](n)
        raise InvalidCondition(f"condition {word!r} does not apply to an int argument")
    if name in _COMPARE:
        v, nan = _floats(arg, fmt)
        with np.errstate(invalid="ignore"):
            return _COMPARE[name](v, c) & ~nan
    return _FLOAT_PLAIN[name](arg, fmt)
