"""Batch recipes: the small, hypothesis-drawn description of a batch that the vectorized
sampler expands (docs/design.md, decision 5)."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hyp_seed
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fuzzfarm.formats import BINARY32, FloatFormat

from strategies._internal.classes import FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS
from strategies._internal.errors import InvalidArgument
from strategies._internal.validation import check_fmt, check_function, check_known

__all__ = ["Recipe", "recipes", "draw_recipes", "SAMPLER_VERSION",
           "DEFAULT_FLOAT_WEIGHTS", "DEFAULT_INT_WEIGHTS"]

#: Bumped whenever the class table or the sampler changes what a recipe expands to, so a
#: stored recipe is never silently regenerated into different inputs.
SAMPLER_VERSION = 2
#: Versions whose recipes ``expand`` still regenerates bit for bit (1: every variant drawn
#: with replacement; 2: distinct members, small classes exhaustive: ``distinct``).
SAMPLER_VERSIONS = (1, 2)

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
        (half of those with the sign flipped): fmin(x, x), atan2(x, -x), nextafter(x, x).
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


def _weights(names: tuple[str, ...]) -> SearchStrategy[dict]:
    uniform = st.just({c: 1 for c in names})
    focused = st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True).flatmap(
        lambda chosen: st.tuples(*(st.integers(1, 10) for _ in chosen)).map(
            lambda ws: dict(zip(chosen, ws))))
    mixed = st.lists(st.integers(0, 10), min_size=len(names), max_size=len(names)).map(
        lambda ws: dict(zip(names, ws)) if any(ws) else {c: 1 for c in names})
    return st.one_of(uniform, focused, mixed)


def recipes(fn, fmt: FloatFormat = BINARY32) -> SearchStrategy[Recipe]:
    """Recipes for batches of ``fn``'s inputs.

    Class weights come one of three ways (per argument kind): every class alike (the
    default mix, also the shrink target), *focused* on one or two random classes (weights
    1..10, the rest 0), or *mixed* (every class 0..10).  The exponent window is the whole
    normal range, ``(-w, w)`` around 1 with w in 0..30, or a random sub-range of
    ``fmt``'s normal exponents.  The NaN payload is any of ``NAN_PAYLOADS`` ("mixed"
    first), the seed any of 0..2**63-1; ``tie_rate`` is 0, 0.1 or 0.5 when ``fn`` has two
    or more float inputs, else 0; int weights are drawn only when ``fn`` has an int input.
    """
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    n_float = sum(a.kind == "float" for a in fn.inputs)
    has_int = any(a.kind == "int" for a in fn.inputs)
    windows = st.one_of(
        st.none(),
        st.integers(0, 30).map(lambda w: (max(-w, fmt.emin), min(w, fmt.emax))),
        st.tuples(st.integers(fmt.emin, fmt.emax), st.integers(fmt.emin, fmt.emax)).map(
            lambda t: (min(t), max(t))),
    )
    return st.builds(
        Recipe,
        float_weights=_weights(FLOAT_CLASSES) if n_float else st.just(DEFAULT_FLOAT_WEIGHTS),
        int_weights=_weights(INT_VALUE_CLASSES) if has_int else st.just(DEFAULT_INT_WEIGHTS),
        exponent_window=windows if n_float else st.none(),
        nan_payload=st.sampled_from(NAN_PAYLOADS) if n_float else st.just("mixed"),
        seed=st.integers(0, MAX_SEED),
        tie_rate=st.sampled_from((0.0, 0.1, 0.5)) if n_float >= 2 else st.just(0.0),
    )


def _mix_seed(*parts: int) -> int:
    """A seed in 0..2**63-1 derived from nonnegative ints (numpy's SeedSequence hash)."""
    return int(np.random.SeedSequence(list(parts)).generate_state(1, np.uint64)[0]) & MAX_SEED


def draw_recipes(fn, seed: int, count: int, fmt: FloatFormat = BINARY32) -> list[Recipe]:
    """``count`` distinct recipes for ``fn`` drawn from ``recipes(fn, fmt)`` by hypothesis
    seeded with ``seed``: the same ``(fn, seed, count, fmt)`` gives the same list, in any
    process.  Each drawn recipe's numpy seed is replaced by a hash of (``seed``, drawn
    seed), so batches differ across seeds even where hypothesis draws the same simple
    recipe first (it always starts with the default mix).  When hypothesis yields fewer
    distinct recipes than ``count``, the list is padded with copies of the drawn ones under
    further derived seeds."""
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise InvalidArgument(f"seed={seed!r} must be an int >= 0")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
        raise InvalidArgument(f"count={count!r} must be an int >= 0")
    seed, count = int(seed), int(count)
    if count == 0:
        return []
    drawn: list[Recipe] = []

    @hyp_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck), derandomize=False,
              verbosity=Verbosity.quiet, report_multiple_bugs=False)
    @given(recipes(fn, fmt))
    def collect(recipe):
        drawn.append(recipe)

    collect()
    # Hypothesis starts from its simplest examples (seed 0 ...) whatever the seed; mixing
    # the draw seed in gives every (fn, seed) its own numpy streams.
    mixed = [replace(r, seed=_mix_seed(seed, 0, r.seed)) for r in drawn]
    out = list(dict.fromkeys(mixed))[:count]
    seen = set(out)
    i = 0
    while len(out) < count:
        base = out[i % len(out)] if out else Recipe()
        cand = replace(base, seed=_mix_seed(seed, 1, i))
        i += 1
        if cand not in seen:
            seen.add(cand)
            out.append(cand)
    return out
