"""Bounded samples of findings with exact counts (issue 18: storage grows with what is new).

A systematic failure repeats in every work unit: stored one row per failing input, a GPU
wrote ~80 GB of Parquet a day, nearly all repeats of a few signatures.  Findings are kept
per **group** -- rule, severity and input class (``x:pos_normal``, the per-argument IEEE
classes of ``fuzzfarm.verdict.findings.class_key``) within one target and device -- as at
most ``SAMPLE_ROWS`` rows each:

* the extremes: the first finding, the one of largest ULP error, and those of smallest and
  largest first argument (per unit; at compaction: the first and the last in unit and
  element order, and the largest error -- an order that does not depend on when each
  unit was written, so a campaign killed and resumed keeps the rows an uninterrupted one
  keeps);
* the rest of the sample a reservoir drawn with a generator seeded from the unit's seed
  and the group, so the same unit keeps the same rows;

and a ``count`` column: how many findings the row stands for.  The counts of a group's rows
add up to exactly its number of findings (its recorded ones plus those the checker only
counted, ``CheckResult.unrecorded_by_class``), so a signature's count is the sum of its
rows' ``count`` (a row written before the column existed stands for 1).  Device faults are
never sampled.  Pure functions over findings and Arrow tables.
"""
from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["SAMPLE_ROWS", "sample_findings", "sample_table", "counts"]

#: Rows kept per group (per unit when written; per results directory when compacted).
SAMPLE_ROWS = 8

#: The columns that make a group in a compacted findings file.
GROUP_COLUMNS = ("device_fingerprint", "driver_version", "function", "precision",
                 "vector_width", "build_options", "rule_id", "severity", "input_class",
                 "front_end")


def _rng(seed: int, *key) -> np.random.Generator:
    salt = zlib.crc32("\x1f".join(map(str, key)).encode())
    return np.random.default_rng([int(seed) & ((1 << 63) - 1), salt])


def _values(fn, fmt, findings) -> np.ndarray:
    """The first argument of each finding as float64 (NaN for a NaN), for the extremes."""
    if not fn.inputs:
        return np.zeros(len(findings))
    bits = np.array([int(f.inputs[0]) & ((1 << 64) - 1) if f.inputs else 0
                     for f in findings], dtype=np.uint64)
    if fn.inputs[0].kind == "int":
        return (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32).astype(float)
    with np.errstate(invalid="ignore"):
        return bits.astype(fmt.uint).view(fmt.float).astype(np.float64)


def _pick(n: int, first_k: list, rng: np.random.Generator, size: int) -> list:
    """Positions 0..n-1 to keep: ``first_k`` (the extremes, in order, without repeats),
    then a uniform sample of the others up to ``size`` in all; sorted."""
    keep = list(dict.fromkeys(int(k) for k in first_k if 0 <= k < n))[:size]
    if len(keep) < min(size, n):
        rest = np.setdiff1d(np.arange(n), keep)
        keep += rng.choice(rest, min(size - len(keep), rest.size), replace=False).tolist()
    return sorted(keep)


def sample_findings(result, fn, fmt, seed: int, size: int = SAMPLE_ROWS
                    ) -> tuple[list, list, list]:
    """The findings of one checked unit to store: (findings kept, in unit order; the count
    each stands for; the input class key of each, '' where the built-in has none).
    ``result``: a verdict.findings.CheckResult; ``fn``: its catalogue Function (element-wise
    built-ins get input classes); ``fmt`` its format; ``seed`` the unit's seed.  The counts
    sum to every finding of the result, recorded or not (``CheckResult.unrecorded``)."""
    from fuzzfarm.verdict.findings import class_codes, class_key
    fs = result.findings
    elementwise = getattr(fn, "is_elementwise", False)
    if elementwise and fs:
        args = {a.name: np.array([int(f.inputs[j]) & ((1 << 64) - 1) for f in fs], np.uint64)
                for j, a in enumerate(fn.inputs)}
        codes = class_codes(fn, fmt, args).tolist()
    else:
        codes = [-1] * len(fs)
    groups: dict = {}
    for k, (f, c) in enumerate(zip(fs, codes)):
        # a compare unit's other front end's findings are groups of their own
        groups.setdefault((f.rule_id, f.severity, c, f.front_end), []).append(k)
    extra = dict(result.unrecorded_by_class)
    left = dict(result.unrecorded)            # (rule, severity) -> not yet attributed
    for (rule, sev, c), m in extra.items():
        left[(rule, sev)] = left.get((rule, sev), 0) - m
    values = _values(fn, fmt, fs) if elementwise and fs else np.zeros(len(fs))
    kept, count = [], {}
    for (rule, sev, c, front_end), ks in groups.items():
        ks = np.asarray(ks)
        err = np.array([np.nan if fs[k].ulp_error is None else fs[k].ulp_error for k in ks])
        v = values[ks]
        firsts = [0]
        if np.isfinite(err).any():
            firsts.append(int(np.nanargmax(err)))
        if np.isfinite(v).any():
            firsts += [int(np.nanargmin(v)), int(np.nanargmax(v))]
        pick = ks[_pick(ks.size, firsts, _rng(seed, rule, sev, c), size)]
        # the checker's counts by class are of the unit's own front end
        total = ks.size + (extra.pop((rule, sev, c), 0) if front_end is None else 0)
        for k in pick:
            count[k] = 1
        count[pick[0]] += total - pick.size
        kept.extend(pick.tolist())
    # counted without a recorded example of their class (checkers that count by rule
    # only): the rule's first kept row stands for them
    for (rule, sev, _c), m in extra.items():
        left[(rule, sev)] = left.get((rule, sev), 0) + m
    for (rule, sev), m in left.items():
        if m <= 0:
            continue
        home = next((k for k in sorted(kept) if fs[k].rule_id == rule
                     and fs[k].severity == sev), None)
        if home is not None:
            count[home] += m
    kept.sort()
    keys = [class_key(fn, codes[k]) if codes[k] >= 0 else "" for k in kept]
    return [fs[k] for k in kept], [count[k] for k in kept], keys


def counts(table: pa.Table) -> pa.Array:
    """The ``count`` column of a findings table, 1 where it is null or absent (rows
    written before findings were sampled)."""
    if "count" not in table.column_names:
        return pa.array(np.ones(table.num_rows, np.int64))
    return pc.fill_null(table["count"], 1).combine_chunks() if table.num_rows else \
        pa.array([], pa.int64())


def sample_table(table: pa.Table, size: int = SAMPLE_ROWS) -> pa.Table:
    """A findings table (store.FINDINGS_SCHEMA) reduced to at most ``size`` rows per group
    (``GROUP_COLUMNS``; device faults all kept): the group's first and last finding (by
    unit id, then element: not by time, which depends on the order units were written),
    its largest ULP error, and a reservoir of the others seeded by the group; each
    dropped row's ``count`` added to the group's first kept row, so the counts per group
    are unchanged.  Row order: by group, then unit id and element."""
    n = table.num_rows
    if n == 0:
        return table
    cnt = counts(table).to_numpy(zero_copy_only=False).astype(np.int64)
    cols = {c: table[c].to_pylist() for c in GROUP_COLUMNS}
    order = pc.sort_indices(table.select(["unit_id", "element"]),
                            sort_keys=[("unit_id", "ascending"), ("element", "ascending")]
                            ).to_numpy()
    rank = np.empty(n, np.int64)
    rank[order] = np.arange(n)
    err = pc.fill_null(table["ulp_error"], float("nan")).to_numpy(zero_copy_only=False)
    groups: dict = {}
    for k in range(n):
        groups.setdefault(tuple(cols[c][k] for c in GROUP_COLUMNS), []).append(k)
    keep, new_count = [], cnt.copy()
    for key, ks in groups.items():
        ks = np.asarray(ks)
        ks = ks[np.argsort(rank[ks], kind="stable")]
        if key[GROUP_COLUMNS.index("severity")] == "fault" or ks.size <= size:
            keep.extend(ks.tolist())
            continue
        e = err[ks]
        firsts = [0, ks.size - 1] + ([int(np.nanargmax(e))] if np.isfinite(e).any() else [])
        pick = ks[_pick(ks.size, firsts, _rng(0, *key), size)]
        new_count[pick[0]] += int(cnt[ks].sum() - cnt[pick].sum())
        keep.extend(pick.tolist())
    out = table.take(pa.array(keep, pa.int64()))
    idx = out.schema.get_field_index("count")
    col = pa.array(new_count[keep], pa.int64())
    return out.set_column(idx, "count", col) if idx >= 0 else out.append_column("count", col)
