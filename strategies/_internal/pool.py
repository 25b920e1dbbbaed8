"""The special-value pool of an element-wise built-in: every combination of the landmark
values of its arguments (unit 0 of every target), so that every prescribed-result rule
meets its inputs early in every run."""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import FloatFormat
from strategies._internal.classes import special_float_bits, special_int_values

__all__ = ["SPECIAL_POOL_LIMIT", "special_inputs"]


#: The special-value pool of a built-in holds at most about this many combinations: with
#: three arguments (fma, clamp, ...) each argument keeps its core landmarks (zeros, ones,
#: infinities, NaNs, subnormal and normal extremes) and an even spread of the rest.
SPECIAL_POOL_LIMIT = 20_000


def _core_first(pool: list, fmt: FloatFormat, keep: int) -> list:
    core = {0, fmt.sign_mask, fmt.bits_of(1.0), fmt.bits_of(-1.0), fmt.pos_inf,
            fmt.pos_inf | fmt.sign_mask, fmt.default_qnan, fmt.pos_inf | 1, fmt.true_min,
            fmt.min_normal, fmt.max_finite, fmt.bits_of(0.5), fmt.bits_of(2.0),
            fmt.bits_of(-0.5), fmt.bits_of(-2.0), fmt.max_finite | fmt.sign_mask}
    head = [v for v in pool if v in core]
    rest = [v for v in pool if v not in core]
    k = max(0, keep - len(head))
    if k < len(rest):
        rest = [rest[j] for j in np.linspace(0, len(rest) - 1, k).astype(int)] if k else []
    return head + rest


def special_inputs(fn, fmt: FloatFormat) -> dict[str, np.ndarray]:
    """The cartesian product of landmark values over ``fn``'s inputs: float arguments from
    the boundary table (``special_float_bits``) plus NaNs of both kinds, int arguments from ``special_int_values``
    (at most about SPECIAL_POOL_LIMIT combinations; see ``_core_first``).
    Returns arrays (buffer dtypes: fmt.uint / int32) of equal length, in
    ``itertools.product`` order (the last argument varies fastest)."""
    pools = [list(special_float_bits(fmt)) if a.kind != "int" else list(special_int_values())
             for a in fn.inputs]
    total = int(np.prod([len(p) for p in pools]))
    if total > SPECIAL_POOL_LIMIT:
        keep = int(SPECIAL_POOL_LIMIT ** (1 / len(pools)))
        pools = [_core_first(p, fmt, keep) if a.kind != "int" else p[:keep]
                 for p, a in zip(pools, fn.inputs)]
    arrays = [np.asarray(p, dtype=fmt.uint if a.kind != "int" else np.int64)
              for p, a in zip(pools, fn.inputs)]
    grids = np.meshgrid(*arrays, indexing="ij") if arrays else []
    return {a.name: g.ravel().astype(np.int32 if a.kind == "int" else fmt.uint)
            for a, g in zip(fn.inputs, grids)}
