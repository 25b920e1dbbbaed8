"""The vectorized sampler: expands a ``Recipe`` into arrays of inputs with numpy."""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import BINARY32, INPUT_CLASSES, INT_CLASSES, FloatFormat

from strategies._internal.classes import (
    FLOAT_BY_NAME, INT_BY_NAME, Params, draw_dtype, field_dtype, variants_for,
)
from strategies._internal.distinct import GOLDEN, LanePlan, Stream, mix64, plan_distinct, realize
from strategies._internal.errors import InvalidArgument
from strategies._internal.recipe import Recipe
from strategies._internal.validation import check_fmt, check_function

__all__ = ["expand", "expand_plans", "tie_masks", "tie_key", "tie_thresholds", "tie_hash",
           "tie_order", "tie_columns",
           "input_class_counts", "sample_classes", "class_tally", "distinct_count"]


def _rng(seed: int, *key: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=key)))


def sample_classes(kind: str, weights, n: int, rng: np.random.Generator, fmt: FloatFormat,
                   params: Params) -> np.ndarray:
    """``n`` values of one argument kind drawn from the class table.

    The number of values of each (class, variant) is multinomial with probability
    ``class weight * variant weight / sum of the class's variant weights``; each variant
    then draws its fields for all of its values at once and builds them; the result is
    shuffled.  Returns ``fmt.uint`` patterns (kind 'float') or int32 values (kind 'int').
    """
    table = FLOAT_BY_NAME if kind == "float" else INT_BY_NAME
    out_dtype = fmt.uint if kind == "float" else np.int32
    variants, probs = [], []
    for name, w in weights:
        if w <= 0:
            continue
        vs = variants_for(table[name], params)
        vt = sum(v.weight for v in vs)
        for v in vs:
            variants.append(v)
            probs.append(w * v.weight / vt)
    p = np.asarray(probs, dtype=np.float64)
    counts = rng.multinomial(n, p / p.sum())
    out = np.empty(n, dtype=out_dtype)
    pos = 0
    for v, c in zip(variants, counts):
        if c == 0:
            continue
        fields = {f.name: rng.integers(f.lo, f.hi, size=c, endpoint=True, dtype=draw_dtype(f))
                  .astype(field_dtype(f), copy=False) for f in v.fields(fmt, params)}
        out[pos:pos + c] = v.build(fields, fmt, params)
        pos += c
    rng.shuffle(out)
    return out


def expand(recipe: Recipe, fn, n: int, fmt: FloatFormat = BINARY32, lanes: int = 1,
           stream: Stream | None = None) -> dict[str, np.ndarray]:
    """Expand ``recipe`` into ``n`` input rows for ``fn``.

    Version 2 recipes (``SAMPLER_VERSION``) draw every argument with ``distinct.
    sample_distinct``: each class variant's members distinct, a small class's members all
    taken once where its share reaches its size (the rest of the share going to members
    not yet taken), per lane position: row i belongs to lane ``i % lanes`` (a vector
    built-in's width) and each lane is sampled on its own.  ``stream`` (a
    ``distinct.Stream``) carries what earlier parts of the same unit took, so that they
    are not taken again; None: a fresh one seeded from the recipe.  Version 1 recipes
    (stored by older runs) expand as they always did, with replacement (``lanes`` and
    ``stream`` unused).

    Returns ``{input name: array of shape (n,)}`` in ``fn.inputs`` order: ``fmt.uint``
    bit patterns (``uint32`` for binary32) for a 'float' input, ``int32`` for an 'int'
    one.  Each argument draws its classes independently in the recipe's proportions from
    the same class table as ``float_bits``/``int_bits`` (same classes, same variant
    weights); then, if ``recipe.tie_rate > 0``, each later float argument copies the first
    float argument in that fraction of rows (half of them with the sign flipped): rows
    drawn with numpy's generator up to version 2, from a hash of the row from version 3
    (``tie_masks``).

    Deterministic: numpy ``PCG64`` generators seeded from ``recipe.seed`` (one stream per
    argument, one for version 2's ties), so the same (recipe, fn, n, fmt) gives the same arrays
    under one numpy version.
    """
    if not isinstance(recipe, Recipe):
        raise InvalidArgument(f"recipe={recipe!r} is not a Recipe; use Recipe() or draw_recipes()")
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise InvalidArgument(f"n={n!r} must be an int >= 0")
    if isinstance(lanes, bool) or not isinstance(lanes, (int, np.integer)) or lanes < 1:
        raise InvalidArgument(f"lanes={lanes!r} must be an int >= 1 (the vector width)")
    params = Params(recipe.exponent_window, recipe.nan_payload)
    out: dict[str, np.ndarray] = {}
    if recipe.version >= 2:
        for arg, plans in zip(fn.inputs, expand_plans(recipe, fn, n, fmt, lanes, stream)):
            col = np.empty(int(n), dtype=fmt.uint if arg.kind != "int" else np.int32)
            for lane, plan in enumerate(plans):
                col[lane::int(lanes)] = realize(plan, fmt, params) if plan.segments else 0
            out[arg.name] = col
    else:
        for i, arg in enumerate(fn.inputs):
            kind = "float" if arg.kind in ("float", "uint") else "int"   # ugentype: any bits
            weights = recipe.float_weights if kind == "float" else recipe.int_weights
            out[arg.name] = sample_classes(kind, weights, int(n), _rng(recipe.seed, 0, i),
                                           fmt, params)
    floats = [a.name for a in fn.inputs if a.kind == "float"]
    if recipe.tie_rate > 0 and len(floats) >= 2 and recipe.version >= 3:
        tie_columns(recipe, fn, out, np.arange(int(n)), fmt)
    elif recipe.tie_rate > 0 and len(floats) >= 2:
        rng = _rng(recipe.seed, 1)
        x = out[floats[0]]
        flip = fmt.uint(fmt.sign_mask)
        for name in floats[1:]:
            u = rng.random(int(n))
            y = out[name]
            tie = u < recipe.tie_rate
            y[tie] = x[tie]
            y[u < recipe.tie_rate / 2] ^= flip
    return out


def tie_order(fn) -> list:
    """For each argument of ``fn``: its place among the later float arguments (1: the
    second float argument, whose ties ``tie_masks(recipe, 1, ...)`` gives), or 0 for the
    first float argument, which the others copy, and for any other (an int never ties)."""
    out, k = [], 0
    for a in fn.inputs:
        out.append(k if a.kind == "float" else 0)
        k += a.kind == "float"
    return out


def tie_columns(recipe: Recipe, fn, cols: dict, rows: np.ndarray, fmt: FloatFormat) -> None:
    """Tie ``cols`` ({argument name: values at ``rows``}, ``rows`` a part's own numbering)
    in place as version-3 ``recipe`` ties ``fn``'s arguments: each later float argument
    copies the first float argument where ``tie_masks`` says so, its sign flipped where
    it says that too."""
    first = next(a.name for a in fn.inputs if a.kind == "float")
    flip = fmt.uint(fmt.sign_mask)
    for a, later in zip(fn.inputs, tie_order(fn)):
        if later:
            tie, flipped = tie_masks(recipe, later, rows)
            y = cols[a.name]
            y[tie] = cols[first][tie]
            y[flipped] ^= flip


def tie_key(seed: int, later: int) -> int:
    """The 64-bit key of the ties of the ``later``-th float argument (1: the second) of a
    version-3 recipe seeded ``seed`` (``tie_masks``)."""
    return int(np.random.SeedSequence(seed, spawn_key=(1, later)).generate_state(1, np.uint64)[0])


def tie_thresholds(tie_rate: float) -> tuple[int, int]:
    """(tie, flip): a row ties where the top 53 bits of its hash are below ``tie``
    (floor(tie_rate * 2**53)), and its copy has the sign flipped where they are below
    ``flip`` (floor(tie_rate * 2**52)) -- tie_rate and half of it, exactly."""
    return int(tie_rate * 2.0 ** 53), int(tie_rate * 2.0 ** 52)


def tie_hash(key: int, rows: np.ndarray) -> np.ndarray:
    """splitmix64 of ``rows * GOLDEN + key`` (uint64, the shape of ``rows``;
    ``distinct.mix64``): the hash of rows (integers, a part's own numbering from 0) that
    decides their ties."""
    with np.errstate(over="ignore"):
        z = np.asarray(rows).astype(np.uint64) * GOLDEN + np.uint64(key)
    return mix64(z)


def tie_masks(recipe: Recipe, later: int, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tied, flipped) (bool, the shape of ``rows``) of a version-3 ``recipe``'s
    ``later``-th float argument at ``rows`` of its part: whether the argument copies the
    first float argument there, and whether the copy has its sign flipped (a subset of
    the tied rows).  Integer arithmetic only (``tie_hash``), so the device makes the same
    ties (fuzzfarm.device.generate) and a check makes any row's alone."""
    top = tie_hash(tie_key(recipe.seed, later), rows) >> np.uint64(11)
    tie, flip = tie_thresholds(recipe.tie_rate)
    return top < np.uint64(tie), top < np.uint64(flip)


def expand_plans(recipe: Recipe, fn, n: int, fmt: FloatFormat = BINARY32, lanes: int = 1,
                 stream: Stream | None = None) -> list[list[LanePlan]]:
    """The plans of a version-2 ``expand`` before its ties: per argument of ``fn`` (in
    order), per lane position, the ``distinct.LanePlan`` its values come from (row i of
    the argument is row i // lanes of lane i % lanes).  Advances ``stream`` as ``expand``
    does.  Raises InvalidArgument for a version-1 recipe (drawn with replacement: no
    plan)."""
    if recipe.version < 2:
        raise InvalidArgument(f"recipe version {recipe.version} has no plan; version 2 does")
    params = Params(recipe.exponent_window, recipe.nan_payload)
    stream = Stream(recipe.seed) if stream is None else stream
    out = []
    for i, arg in enumerate(fn.inputs):
        rng = _rng(recipe.seed, 0, i)
        kind = "float" if arg.kind in ("float", "uint") else "int"   # ugentype: any bits
        weights = recipe.float_weights if kind == "float" else recipe.int_weights
        plans = []
        for lane in range(min(int(lanes), int(n)) or 1):
            rows = len(range(lane, int(n), int(lanes)))
            plans.append(plan_distinct(kind, weights, rows, rng, fmt, params, stream, (i, lane)))
        out.append(plans)
    return out


def _float_class_counts(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Counts per ``formats.INPUT_CLASSES`` code of an array of ``fmt`` patterns, equal to
    ``np.bincount(formats.classify(bits, fmt), minlength=10)`` but in a few passes: one
    histogram of the top bits (sign, exponent field, quiet bit) plus four equality counts
    that split zeros from subnormals and infinities from signaling NaNs."""
    b = np.asarray(bits).astype(fmt.uint, copy=False).ravel()
    u = fmt.uint
    ebits = fmt.bits - 1 - fmt.frac_bits
    shift = fmt.frac_bits - 1                      # keep sign | exponent | quiet bit
    top = np.bincount((b >> u(shift)).astype(np.intp, copy=False),
                      minlength=1 << (ebits + 2)).reshape(2, 1 << ebits, 2)
    emax_field = (1 << ebits) - 1
    pos_zero = int(np.count_nonzero(b == u(0)))
    neg_zero = int(np.count_nonzero(b == u(fmt.sign_mask)))
    pos_inf = int(np.count_nonzero(b == u(fmt.pos_inf)))
    neg_inf = int(np.count_nonzero(b == u(fmt.pos_inf | fmt.sign_mask)))
    sub = top[:, 0, :].sum(axis=1)                 # exponent field 0, by sign
    normal = top[:, 1:emax_field, :].sum(axis=(1, 2))
    special = top[:, emax_field, :]                # exponent all ones: [sign, quiet]
    return np.array([
        pos_zero, neg_zero, int(sub[0]) - pos_zero, int(sub[1]) - neg_zero,
        int(normal[0]), int(normal[1]), pos_inf, neg_inf,
        int(special[:, 1].sum()), int(special[:, 0].sum()) - pos_inf - neg_inf,
    ], dtype=np.int64)


def _int_class_counts(values: np.ndarray) -> np.ndarray:
    """Counts per ``formats.INT_CLASSES`` code of int32 values (as ``classify_int``)."""
    v = np.asarray(values).astype(np.int32, copy=False).ravel()
    lo, hi = np.iinfo(np.int32).min, np.iinfo(np.int32).max
    zero = int(np.count_nonzero(v == 0))
    pos = int(np.count_nonzero(v > 0))
    imin = int(np.count_nonzero(v == lo))
    imax = int(np.count_nonzero(v == hi))
    return np.array([zero, pos - imax, v.size - zero - pos - imin, imin, imax], dtype=np.int64)


def input_class_counts(inputs: dict[str, np.ndarray], fn, fmt: FloatFormat = BINARY32) -> dict[str, int]:
    """How many inputs of each IEEE class each argument has.

    Keys ``"<arg>:<class>"``: every class of ``formats.INPUT_CLASSES`` for a float
    argument (``"x:pos_normal"``, ``"x:snan"``), of ``formats.INT_CLASSES`` for an int one
    (``"n:int_min"``), zero counts included so every batch of a function has the same keys;
    values are Python ints.  The same counts as ``bincount(formats.classify(...))``,
    computed in a handful of vectorized passes (no per-element work in Python).
    """
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    counts: dict[str, int] = {}
    for arg in fn.inputs:
        if arg.name not in inputs:
            raise InvalidArgument(f"inputs has no array for argument {arg.name!r} of "
                                  f"{fn.signature}; give one per name in {fn.arg_names}")
        if arg.kind != "int":
            c, names = _float_class_counts(inputs[arg.name], fmt), INPUT_CLASSES
        else:
            c, names = _int_class_counts(inputs[arg.name]), INT_CLASSES
        counts.update({f"{arg.name}:{k}": int(v) for k, v in zip(names, c)})
    return counts


def _float_edges(fmt: FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """The pattern ranges of the IEEE classes in sorted unsigned order: (edges (uint64,
    13), the INPUT_CLASSES code of each of the 12 ranges)."""
    s, inf, q = fmt.sign_mask, fmt.pos_inf, fmt.quiet_bit
    one_sign = [0, 1, fmt.min_normal, inf, inf + 1, inf | q]
    edges = one_sign + [s + e for e in one_sign] + [1 << fmt.bits]
    # +0, +sub, +normal, +inf, +snan, +qnan, then the same with the sign bit
    codes = [0, 2, 4, 6, 9, 8, 1, 3, 5, 7, 9, 8]
    return np.array(edges, dtype=object), np.array(codes)


_INT_EDGES = np.array([-(1 << 31), -(1 << 31) + 1, 0, 1, (1 << 31) - 1, 1 << 31], dtype=np.int64)
_INT_CODES = np.array([3, 2, 0, 1, 4])          # int_min, neg, zero, pos, int_max


def _tally_sorted(s: np.ndarray, edges, codes, nclasses: int) -> tuple[np.ndarray, np.ndarray]:
    """(count, distinct count) per class code of the sorted array ``s``."""
    lo = np.searchsorted(s, np.array([int(e) for e in edges[:-1]], dtype=s.dtype))
    hi = np.append(lo[1:], s.size)
    first = np.empty(s.size, dtype=bool)
    if s.size:
        first[0] = True
        np.not_equal(s[1:], s[:-1], out=first[1:])
    cum = np.concatenate([[0], np.cumsum(first, dtype=np.int64)])
    count = np.zeros(nclasses, np.int64)
    distinct = np.zeros(nclasses, np.int64)
    np.add.at(count, codes, hi - lo)
    np.add.at(distinct, codes, cum[hi] - cum[lo])
    return count, distinct


def distinct_count(values: np.ndarray) -> int:
    """The number of distinct values of a 1-D array (one sort)."""
    s = np.sort(np.asarray(values).ravel())
    return int(s.size and 1 + np.count_nonzero(s[1:] != s[:-1]))


def class_tally(inputs: dict[str, np.ndarray], fn, fmt: FloatFormat = BINARY32
                ) -> tuple[dict[str, int], dict[str, int], int]:
    """Inputs per IEEE class as ``input_class_counts``, the *distinct* inputs per class
    (same keys: distinct patterns of that argument within the class), and the number of
    distinct input rows (tuples of all arguments' bits).  One sort per argument (and one
    of the packed rows for several arguments); issue 17's distinct-input figures."""
    fn = check_function(fn)
    fmt = check_fmt(fmt)
    counts: dict[str, int] = {}
    distinct: dict[str, int] = {}
    cols = []
    for arg in fn.inputs:
        if arg.name not in inputs:
            raise InvalidArgument(f"inputs has no array for argument {arg.name!r} of "
                                  f"{fn.signature}; give one per name in {fn.arg_names}")
        if arg.kind != "int":
            b = np.asarray(inputs[arg.name]).astype(fmt.uint, copy=False).ravel()
            edges, codes = _float_edges(fmt)
            c, d = _tally_sorted(np.sort(b), edges, codes, len(INPUT_CLASSES))
            names = INPUT_CLASSES
            cols.append((b.astype(np.uint64), fmt.bits))
        else:
            v = np.asarray(inputs[arg.name]).astype(np.int32, copy=False).ravel()
            c, d = _tally_sorted(np.sort(v.astype(np.int64)), _INT_EDGES, _INT_CODES,
                                 len(INT_CLASSES))
            names = INT_CLASSES
            cols.append((v.view(np.uint32).astype(np.uint64), 32))
        counts.update({f"{arg.name}:{k}": int(x) for k, x in zip(names, c)})
        distinct.update({f"{arg.name}:{k}": int(x) for k, x in zip(names, d)})
    if len(cols) == 1:
        rows = int(sum(v for k, v in distinct.items()))
    elif sum(bits for _, bits in cols) <= 64:
        key = np.zeros(cols[0][0].size, np.uint64)
        for col, bits in cols:
            key = (key << np.uint64(bits)) | col
        rows = distinct_count(key)
    else:
        rows = int(np.unique(np.stack([c for c, _ in cols], axis=1), axis=0).shape[0])
    return counts, distinct, rows
