"""The batch recipe: the small description of a batch that the vectorized sampler expands
(docs/design.md, decision 5).  Plain data: the hypothesis strategy that draws recipes is
``recipes.py``, so reading or expanding a stored recipe never imports hypothesis."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from strategies._internal.classes import FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS
from strategies._internal.errors import InvalidArgument
from strategies._internal.validation import check_known

__all__ = ["Recipe", "SAMPLER_VERSION", "SAMPLER_VERSIONS", "MAX_SEED",
           "DEFAULT_FLOAT_WEIGHTS", "DEFAULT_INT_WEIGHTS"]

#: Bumped whenever the class table or the sampler changes what a recipe expands to, so a
#: stored recipe is never silently regenerated into different inputs.
SAMPLER_VERSION = 3
#: Versions whose recipes ``expand`` still regenerates bit for bit (1: every variant drawn
#: with replacement; 2: distinct members, small classes exhaustive: ``distinct``; 3: as 2,
#: the tied rows chosen by a hash of the row (``sampler.tie_masks``), not by numpy's
#: generator, so that any row's tie is known alone -- on the device, or at the rows a check
#: reads).
SAMPLER_VERSIONS = (1, 2, 3)

MAX_SEED = (1 << 63) - 1

#: Every class weighted alike: the same mix ``float_bits()`` / ``int_bits()`` draw from.
DEFAULT_FLOAT_WEIGHTS = tuple((c, 1.0) for c in FLOAT_CLASSES)
DEFAULT_INT_WEIGHTS = tuple((c, 1.0) for c in INT_VALUE_CLASSES)


def _canonical_weights(value, allowed: tuple[str, ...], name: str) -> tuple[tuple[str, float], ...]:
    """Weights given as a mapping or as (class, weight) pairs -> a tuple over *all* classes
    of the kind, in their canonical order (missing ones weigh 0)."""
    try:
        pairs = list(value.items()) if isinstance(value, dict) else [tuple(p) for p in value]
        given_ = {}
        for cls, w in pairs:
            if cls in given_:
                raise InvalidArgument(f"{name}={value!r} gives class {cls!r} twice")
            given_[cls] = w
    except (TypeError, ValueError) as exc:
        if isinstance(exc, InvalidArgument):
            raise
        raise InvalidArgument(f"{name}={value!r} is not (class, weight) pairs; use e.g. "
                              f"(('zero', 1.0), ('snan', 3.0))") from None
    check_known(name, value, given_, allowed, "class(es)")
    out = []
    for cls in allowed:
        w = given_.get(cls, 0.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)) or not math.isfinite(w) or w < 0:
            raise InvalidArgument(f"{name}[{cls!r}]={w!r} must be a finite number >= 0")
        out.append((cls, float(w)))
    if sum(w for _, w in out) <= 0:
        raise InvalidArgument(f"{name}={value!r} weighs every class 0; give at least one "
                              f"class a positive weight")
    return tuple(out)


@dataclass(frozen=True)
class Recipe:
    """What the sampler needs to regenerate a batch exactly (with ``expand``).

    ``float_weights`` / ``int_weights``: ``(class name, weight)`` for every class of
        ``FLOAT_CLASSES`` / ``INT_VALUE_CLASSES``, in that order (a mapping or a partial
        list is accepted and completed with zeros); each argument of that kind draws its
        classes in these proportions.
    ``exponent_window``: ``(lo, hi)`` unbiased exponents for the "normal" class (clipped
        to the format's normal range), or ``None`` for the whole range.
    ``nan_payload``: one of ``NAN_PAYLOADS``: pins the payload pattern of both NaN classes.
    ``seed``: 0 .. 2**63-1, seeds the numpy generator.
    ``tie_rate``: fraction of rows where each later float argument copies the first one
        (half of those with the sign flipped): fmin(x, x), atan2(x, -x), nextafter(x, x)
        (version 3: rows whose hash falls below it, ``sampler.tie_masks``).
    ``version``: ``SAMPLER_VERSION`` at creation; versions of ``SAMPLER_VERSIONS`` are
        expanded as they were made, any other is refused.
    """

    float_weights: tuple[tuple[str, float], ...] = DEFAULT_FLOAT_WEIGHTS
    int_weights: tuple[tuple[str, float], ...] = DEFAULT_INT_WEIGHTS
    exponent_window: tuple[int, int] | None = None
    nan_payload: str = "mixed"
    seed: int = 0
    tie_rate: float = 0.0
    version: int = SAMPLER_VERSION

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "float_weights", _canonical_weights(self.float_weights, FLOAT_CLASSES,
                                                       "float_weights"))
        set_(self, "int_weights", _canonical_weights(self.int_weights, INT_VALUE_CLASSES,
                                                     "int_weights"))
        w = self.exponent_window
        if w is not None:
            try:
                lo, hi = w
                ok = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in (lo, hi))
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise InvalidArgument(f"exponent_window={w!r} is not None or a pair of ints "
                                      f"(lo, hi); use e.g. (-126, 127)")
            if lo > hi:
                raise InvalidArgument(f"exponent_window={w!r} has lo > hi; use ({hi}, {lo})")
            set_(self, "exponent_window", (int(lo), int(hi)))
        if self.nan_payload not in NAN_PAYLOADS:
            raise InvalidArgument(f"nan_payload={self.nan_payload!r} is unknown; choose one "
                                  f"of {NAN_PAYLOADS}")
        if (isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer))
                or not 0 <= self.seed <= MAX_SEED):
            raise InvalidArgument(f"seed={self.seed!r} must be an int in 0..2**63-1")
        set_(self, "seed", int(self.seed))
        t = self.tie_rate
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not 0.0 <= t <= 1.0:
            raise InvalidArgument(f"tie_rate={t!r} must be a number in [0, 1]")
        set_(self, "tie_rate", float(t))
        if self.version not in SAMPLER_VERSIONS:
            raise InvalidArgument(f"version={self.version!r}: this recipe was made for sampler "
                                  f"version {self.version}, this is version {SAMPLER_VERSION} "
                                  f"(it expands {SAMPLER_VERSIONS}); "
                                  f"its batch cannot be regenerated bit for bit here")

    def to_dict(self) -> dict:
        """A JSON-able dict (only positive weights listed); ``from_dict`` inverts it."""
        return {
            "version": self.version,
            "seed": self.seed,
            "float_weights": {c: w for c, w in self.float_weights if w > 0},
            "int_weights": {c: w for c, w in self.int_weights if w > 0},
            "exponent_window": None if self.exponent_window is None else list(self.exponent_window),
            "nan_payload": self.nan_payload,
            "tie_rate": self.tie_rate,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Recipe":
        """The recipe of a ``to_dict`` output (e.g. read back from a Parquet row)."""
        if not isinstance(d, dict):
            raise InvalidArgument(f"d={d!r} is not a dict from Recipe.to_dict()")
        known = {"version", "seed", "float_weights", "int_weights", "exponent_window",
                 "nan_payload", "tie_rate"}
        extra = set(d) - known
        if extra:
            raise InvalidArgument(f"d has unknown key(s) {sorted(extra)}; expected {sorted(known)}")
        kw = dict(d)
        if kw.get("exponent_window") is not None:
            kw["exponent_window"] = tuple(kw["exponent_window"])
        return cls(**kw)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Recipe":
        return cls.from_dict(json.loads(text))

    def weight_of(self, cls_name: str) -> float:
        for c, w in self.float_weights + self.int_weights:
            if c == cls_name:
                return w
        raise KeyError(cls_name)
