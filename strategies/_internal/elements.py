"""Hypothesis element strategies over the shared class table (``classes.py``).

Every value is a bit pattern built from integer fields drawn with ``st.integers``; nothing
goes through ``st.floats()``, which never yields binary32 signaling NaNs.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fuzzfarm.formats import BINARY32, FloatFormat

from strategies._internal.classes import (
    FLOAT_BY_NAME, INT_BY_NAME, ClassDef, Params, Variant, field_dtype, variants_for,
)
from strategies._internal.validation import (
    check_classes, check_fmt, check_function, check_params,
)

__all__ = ["float_bits", "int_bits", "args_for", "labelled_float_bits", "labelled_int_bits"]


def _variant_strategy(v: Variant, fmt: FloatFormat, params: Params, kind: str) -> SearchStrategy:
    fields = v.fields(fmt, params)
    out_dtype = fmt.uint if kind == "float" else np.int32

    def build(values) -> int:
        arrays = {f.name: np.array([x], dtype=field_dtype(f)) for f, x in zip(fields, values)}
        return int(v.build(arrays, fmt, params).astype(out_dtype)[0])

    return st.tuples(*(st.integers(f.lo, f.hi) for f in fields)).map(build)


def _class_strategy(cdef: ClassDef, fmt: FloatFormat, params: Params) -> SearchStrategy:
    """One class: a choice among its variants, each listed ``weight`` times, so the choice
    follows the same weights as the sampler (and shrinks toward the first variant)."""
    branches = []
    for v in variants_for(cdef, params):
        s = _variant_strategy(v, fmt, params, cdef.kind)
        branches += [s] * v.weight
    if len(branches) == 1:
        return branches[0]
    # sampled_from + flatmap rather than one_of: hypothesis flattens nested one_of, which
    # would weight each class by its number of variant branches instead of uniformly.
    return st.sampled_from(tuple(branches)).flatmap(_identity)


def _identity(x):
    return x


@lru_cache(maxsize=256)
def _labelled(kind: str, fmt: FloatFormat, classes: tuple[str, ...], params: Params):
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    parts = [_class_strategy(table[c], fmt, params).map(lambda b, c=c: (c, b)) for c in classes]
    return parts[0] if len(parts) == 1 else st.one_of(parts)


@lru_cache(maxsize=256)
def _plain(kind: str, fmt: FloatFormat, classes: tuple[str, ...], params: Params):
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    parts = [_class_strategy(table[c], fmt, params) for c in classes]
    return parts[0] if len(parts) == 1 else st.one_of(parts)


def labelled_float_bits(fmt=BINARY32, classes=None, *, exponent_window=None,
                        nan_payload="mixed") -> SearchStrategy[tuple[str, int]]:
    """Like ``float_bits`` but yields ``(class name, bits)``: which class made the value."""
    fmt = check_fmt(fmt)
    return _labelled("float", fmt, check_classes(classes, "float"),
                     check_params(exponent_window, nan_payload, fmt))


def labelled_int_bits(fmt=BINARY32, classes=None) -> SearchStrategy[tuple[str, int]]:
    """Like ``int_bits`` but yields ``(class name, value)``."""
    fmt = check_fmt(fmt)
    return _labelled("int", fmt, check_classes(classes, "int"), Params())


def float_bits(fmt: FloatFormat = BINARY32, classes=None, *, exponent_window=None,
               nan_payload: str = "mixed") -> SearchStrategy[int]:
    """Bit patterns of ``fmt`` as Python ints in ``0 .. 2**fmt.bits - 1``.

    Generates values of every class in ``FLOAT_CLASSES`` (or only those named in
    ``classes``), choosing a class about uniformly, so the specials dominate: about one
    draw in thirteen is each of ±0, a subnormal, ±inf, a quiet NaN, a signaling NaN (both
    signs, payloads canonical / 1 / all-ones / single bit / random), a format landmark
    (min normal, max finite, true min, max subnormal, 1, 0.5, 2 and their 1-ulp
    neighbours, exp/exp2/exp10 overflow thresholds), an integer (small, odd, the
    2**23/2**24 regions, large), a half-integer, a power of two, a value near ±1, a value
    near a multiple of pi/2, a random normal (exponent uniform in ``exponent_window``,
    default the whole normal range), or uniformly random bits.

    ``nan_payload`` (one of ``NAN_PAYLOADS``) pins the NaN payload pattern.  Never built
    from ``st.floats()``: NaNs keep their quietness, sign and payload.  Shrinks toward the
    simplest member of the class that failed (e.g. +0, 1.0, the canonical NaN).

    The class and variant weights are those of ``expand`` (one table, ``_internal/
    classes.py``); hypothesis's own habits shift the observed mix a little: it never
    repeats an input within a test, so a class with few members (±0, ±inf) stops
    appearing once exhausted, and its field draws lean toward small values.
    """
    fmt = check_fmt(fmt)
    return _plain("float", fmt, check_classes(classes, "float"),
                  check_params(exponent_window, nan_payload, fmt))


def int_bits(fmt: FloatFormat = BINARY32, classes=None) -> SearchStrategy[int]:
    """int32 values as Python ints (the ``intn`` arguments of pown, rootn, ldexp).

    Chooses about uniformly among ``INT_VALUE_CLASSES`` (or those named in ``classes``):
    "extreme" (0, ±1, ±2, INT_MAX, INT_MIN and their inner neighbours), "small" (uniform
    in -300..300), "power_of_two" (±2**k and ±(2**k ± 1), clipped to int32),
    "exponent_landmark" (±(L + d), |d| <= 2, L in ``int_landmarks(fmt)``: 126, 127, 128,
    149, 254, 277... for binary32) and "random_bits" (uniform int32).  ``fmt`` only picks
    the exponent landmarks.  Shrinks toward 0.
    """
    fmt = check_fmt(fmt)
    return _plain("int", fmt, check_classes(classes, "int"), Params())


def args_for(fn, fmt: FloatFormat = BINARY32) -> SearchStrategy[tuple[int, ...]]:
    """A tuple with one value per input of ``fn`` (an ``edgecases.catalogue.Function``), in
    ``fn.inputs`` order: ``float_bits(fmt)`` for a 'float' argument, ``int_bits(fmt)`` for
    an 'int' one.  The arguments are drawn independently."""
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    return st.tuples(*(float_bits(fmt) if a.kind != "int" else int_bits(fmt)
                       for a in fn.inputs))
