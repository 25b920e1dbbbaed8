"""Work units: what a device actor pulls, runs and checks, and the rows it writes.

A unit is one built-in, one seed and a few hypothesis-drawn batch recipes (DESIGN.md
decision 5).  ``make_inputs`` regenerates its inputs deterministically from the unit alone,
so a finding's ``seed`` and ``recipe`` columns are enough to rebuild its batch.  Unit 0 of
each built-in is the special-value pool instead (every combination of the catalogue's
landmark values), so that every rule meets its inputs early in every run.

No Ray and no pyopencl here: the device is passed in as an object with ``run(fn, inputs)``.
"""
from __future__ import annotations

import itertools
import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from edgecases import catalogue
from fuzzfarm.checker import CheckResult, Claims, check_batch
from fuzzfarm.formats import FloatFormat, format_named

__all__ = ["WorkUnit", "make_inputs", "special_inputs", "check_unit", "finding_rows", "stats_row"]


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work.  ``recipes`` are Recipe dicts (strategies.Recipe.to_dict()); an
    empty tuple with ``special=True`` means the special-value pool."""

    unit_id: str
    function: str
    seed: int
    per_recipe: int
    recipes: tuple = ()
    special: bool = False
    precision: str = "binary32"
    vector_width: int = 1

    @property
    def recipe_json(self) -> str:
        return json.dumps({"special": True} if self.special else list(self.recipes),
                          sort_keys=True)


def special_inputs(fn: catalogue.Function, fmt: FloatFormat) -> dict[str, np.ndarray]:
    """The cartesian product of landmark values over ``fn``'s inputs: float arguments from
    strategies' boundary table plus NaNs of both kinds, int arguments from its landmarks.
    Returns arrays (fmt.uint / int32) of equal length."""
    from strategies import special_float_bits, special_int_values

    pools = [special_float_bits(fmt) if a.kind == "float" else special_int_values()
             for a in fn.inputs]
    combos = list(itertools.product(*pools))
    out = {}
    for k, a in enumerate(fn.inputs):
        col = [c[k] for c in combos]
        out[a.name] = np.asarray(col, dtype=fmt.uint if a.kind == "float" else np.int64).astype(
            fmt.uint if a.kind == "float" else np.int32)
    return out


def make_inputs(unit: WorkUnit) -> dict[str, np.ndarray]:
    """The unit's inputs: arrays by input name (float args as patterns, int args int32)."""
    from strategies import Recipe, expand

    fn = catalogue.function(unit.function)
    fmt = format_named(unit.precision)
    if unit.special:
        return special_inputs(fn, fmt)
    parts = [expand(Recipe.from_dict(r), fn, unit.per_recipe, fmt) for r in unit.recipes]
    return {a.name: np.concatenate([p[a.name] for p in parts]) for a in fn.inputs}


def _hex_row(fn, values, fmt: FloatFormat, which) -> str:
    parts = []
    for a, v in zip(which, values):
        if a.kind == "int":
            parts.append(f"{a.name}={int(np.int32(np.int64(v)))}")
            continue
        try:
            val = repr(fmt.value(v))
        except ValueError:
            val = "sNaN" if not (int(v) & fmt.quiet_bit) else "qNaN"
        parts.append(f"{a.name}={fmt.hex(v)} ({val})")
    return ", ".join(parts)


def finding_rows(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str,
                 build_options: str = "") -> list[dict]:
    """Findings of one checked unit as rows of store.FINDINGS_SCHEMA."""
    fn = catalogue.function(unit.function)
    fmt = format_named(unit.precision)
    now = datetime.now(timezone.utc)
    rows = []
    for f in result.findings:
        rows.append({
            "run_id": run_id, "unit_id": unit.unit_id, **device_meta,
            "function": unit.function, "precision": unit.precision,
            "vector_width": unit.vector_width, "build_options": build_options,
            "element": f.index, "input_bits": [int(v) for v in f.inputs],
            "inputs": _hex_row(fn, f.inputs, fmt, fn.inputs),
            "output": f.output, "output_bits": [int(v) for v in f.outputs],
            "outputs": _hex_row(fn, f.outputs, fmt, fn.outputs),
            "expected": f.expected, "rule_id": f.rule_id, "section": f.section,
            "sentence": f.sentence, "severity": f.severity, "reading": f.reading,
            "ulp_error": f.ulp_error, "seed": unit.seed, "recipe": unit.recipe_json,
            "time": now,
        })
    return rows


def stats_row(result: CheckResult, unit: WorkUnit, inputs: dict, device_meta: dict,
              run_id: str, device_seconds: float, check_seconds: float,
              build_options: str = "") -> dict:
    """The unit's row of store.STATS_SCHEMA."""
    from strategies import input_class_counts

    fn = catalogue.function(unit.function)
    fmt = format_named(unit.precision)
    fails = result.counts_by_rule("fail")
    notes = result.counts_by_rule("note")
    return {
        "run_id": run_id, "unit_id": unit.unit_id, **device_meta,
        "function": unit.function, "precision": unit.precision,
        "vector_width": unit.vector_width, "build_options": build_options,
        "seed": unit.seed, "recipe": unit.recipe_json, "inputs_tested": result.n,
        "inputs_by_class": list(input_class_counts(inputs, fn, fmt).items()),
        "failures": sum(fails.values()), "failures_by_rule": list(fails.items()),
        "notes": sum(notes.values()), "notes_by_rule": list(notes.items()),
        "max_ulp_error": None if np.isnan(result.max_ulp_error) else result.max_ulp_error,
        "screened": result.screened, "exact": result.exact,
        "device_seconds": device_seconds, "check_seconds": check_seconds,
        "time": datetime.now(timezone.utc),
    }


def check_unit(unit: WorkUnit, inputs: dict, outputs: dict, claims: Claims,
               device_meta: dict, run_id: str, device_seconds: float,
               build_options: str = "") -> tuple[list[dict], dict, CheckResult]:
    """Check one unit's device outputs; returns (finding rows, stats row, CheckResult)."""
    fn = catalogue.function(unit.function)
    t0 = time.perf_counter()
    result = check_batch(fn, inputs, outputs, claims)
    dt = time.perf_counter() - t0
    rows = finding_rows(result, unit, device_meta, run_id, build_options)
    stats = stats_row(result, unit, inputs, device_meta, run_id, device_seconds, dt,
                      build_options)
    return rows, stats, result
