"""Argument checks shared by the public functions (docs/design.md, decision 10: validate up front,
``name=value`` plus the fix)."""
from __future__ import annotations

from fuzzfarm.formats import FloatFormat, format_named

from strategies._internal.classes import (
    FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS, Params,
)
from strategies._internal.errors import InvalidArgument

__all__ = ["check_fmt", "check_known", "check_classes", "check_params", "check_function"]


def check_fmt(fmt) -> FloatFormat:
    if isinstance(fmt, FloatFormat):
        return fmt
    if isinstance(fmt, str):
        try:
            return format_named(fmt)
        except KeyError as exc:
            raise InvalidArgument(f"fmt={fmt!r} is unknown; use fuzzfarm.formats.BINARY32 "
                                  f"(or BINARY16, BINARY64)") from exc
    raise InvalidArgument(f"fmt={fmt!r} is not a FloatFormat; use fuzzfarm.formats.BINARY32 "
                          f"(or BINARY16, BINARY64)")


def check_known(name: str, value, given, allowed: tuple[str, ...], what: str) -> None:
    """Raise InvalidArgument (naming argument ``name`` with its ``value``) if ``given``
    holds a name not in ``allowed``; ``what`` says what the names are ('class(es)')."""
    unknown = [c for c in given if c not in allowed]
    if unknown:
        raise InvalidArgument(f"{name}={value!r} names unknown {what} {unknown}; "
                              f"choose from {allowed}")


def check_classes(classes, kind: str = "float", name: str = "classes") -> tuple[str, ...]:
    """``None`` -> all classes of the kind; else a non-empty tuple of known names, in the
    canonical order, without repeats."""
    allowed = FLOAT_CLASSES if kind == "float" else INT_VALUE_CLASSES
    if classes is None:
        return allowed
    if isinstance(classes, str):
        classes = (classes,)
    try:
        given = tuple(classes)
    except TypeError:
        raise InvalidArgument(f"{name}={classes!r} is not a sequence of class names; "
                              f"choose from {allowed}") from None
    check_known(name, given, given, allowed, f"{kind} class(es)")
    if not given:
        raise InvalidArgument(f"{name}=() is empty; give at least one of {allowed} "
                              f"(or None for all)")
    return tuple(c for c in allowed if c in given)


def check_params(exponent_window, nan_payload, fmt: FloatFormat) -> Params:
    if exponent_window is not None:
        try:
            lo, hi = (int(v) for v in exponent_window)
        except (TypeError, ValueError):
            raise InvalidArgument(f"exponent_window={exponent_window!r} is not a pair of ints "
                                  f"(lo, hi); use e.g. ({fmt.emin}, {fmt.emax})") from None
        if lo > hi:
            raise InvalidArgument(f"exponent_window={exponent_window!r} has lo > hi; "
                                  f"use ({hi}, {lo})")
        if hi < fmt.emin or lo > fmt.emax:
            raise InvalidArgument(f"exponent_window={exponent_window!r} misses {fmt.name}'s "
                                  f"normal exponents {fmt.emin}..{fmt.emax}")
        exponent_window = (lo, hi)
    if nan_payload not in NAN_PAYLOADS:
        raise InvalidArgument(f"nan_payload={nan_payload!r} is unknown; choose one of "
                              f"{NAN_PAYLOADS}")
    return Params(exponent_window, nan_payload)


def check_function(fn):
    inputs = getattr(fn, "inputs", None)
    if inputs is None or not all(getattr(a, "kind", None) in ("float", "int", "uint") for a in inputs):
        raise InvalidArgument(f"fn={fn!r} is not a catalogue Function; use "
                              f"edgecases.catalogue.function('sin')")
    return fn
