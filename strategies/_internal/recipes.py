"""Batch recipes drawn by hypothesis: the strategy ``recipes`` and the seeded list
``draw_recipes`` (docs/design.md, decision 5).  The value they draw is ``recipe.Recipe``."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hyp_seed
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

from fuzzfarm.formats import BINARY32, FloatFormat

from strategies._internal.classes import FLOAT_CLASSES, INT_VALUE_CLASSES, NAN_PAYLOADS
from strategies._internal.errors import InvalidArgument
from strategies._internal.recipe import DEFAULT_FLOAT_WEIGHTS, DEFAULT_INT_WEIGHTS, MAX_SEED, Recipe
from strategies._internal.validation import check_fmt, check_function

__all__ = ["recipes", "draw_recipes"]


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
