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
from fuzzfarm.kernels import buffer_dtype

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


def special_inputs(fn: catalogue.Function, fmt: FloatFormat) -> dict[str, np.ndarray]:
    """The cartesian product of landmark values over ``fn``'s inputs: float arguments from
    strategies' boundary table plus NaNs of both kinds, int arguments from its landmarks
    (at most about SPECIAL_POOL_LIMIT combinations; see ``_core_first``).
    Returns arrays (buffer dtypes: fmt.uint / int32) of equal length."""
    from strategies import special_float_bits, special_int_values
    pools = [list(special_float_bits(fmt)) if a.kind != "int" else list(special_int_values())
             for a in fn.inputs]
    total = int(np.prod([len(p) for p in pools]))
    if total > SPECIAL_POOL_LIMIT:
        keep = int(SPECIAL_POOL_LIMIT ** (1 / len(pools)))
        pools = [_core_first(p, fmt, keep) if a.kind != "int" else p[:keep]
                 for p, a in zip(pools, fn.inputs)]
    combos = list(itertools.product(*pools))
    out = {}
    for k, a in enumerate(fn.inputs):
        col = [c[k] for c in combos]
        out[a.name] = np.asarray(col, dtype=fmt.uint if a.kind != "int" else np.int64).astype(
            buffer_dtype(a, fmt))
    return out


def is_conversion(name: str) -> bool:
    """True for a conversion id such as ``convert_int_sat_rte(float)``."""
    return name.startswith("convert_")


def required_precisions(target: tuple) -> set:
    """The formats a device must support to run ``target`` = (name, precision, width): the
    unit's precision, and for a conversion every floating type it touches (half needs
    cl_khr_fp16 even in convert_half(float))."""
    name, precision, _ = target
    if is_conversion(name):
        from fuzzfarm import conversions
        conv = conversions.parse(name)
        return {f.name for f in (conv.src_format, conv.dst_format) if f is not None} | {precision}
    return {precision}


def make_unit(device: str, target: tuple, serial: int, seed: int, per_recipe: int,
              recipes_per_unit: int) -> WorkUnit:
    """Unit number ``serial`` of ``target`` = (built-in or conversion id, precision, vector
    width) for ``device`` (a fingerprint).  Unit 0 is the special-value pool; the others
    draw ``recipes_per_unit`` hypothesis recipes from a seed derived from (seed, serial,
    target), so a unit is rebuilt from its row alone."""
    import zlib

    from strategies import draw_recipes
    name, precision, width = target
    unit_id = f"{device}-{name}.{precision}.w{width}-{serial:06d}"
    if serial == 0:
        return WorkUnit(unit_id, name, seed, 0, (), True, precision, width)
    key = zlib.crc32(f"{name}.{precision}.{width}".encode()) % 65521
    unit_seed = (seed * 1_000_003 + serial * 7919 + key) % (2**31)
    if is_conversion(name):
        return WorkUnit(unit_id, name, unit_seed, per_recipe * recipes_per_unit, (), False,
                        precision, width)
    recipes = draw_recipes(catalogue.function(name), unit_seed, recipes_per_unit)
    return WorkUnit(unit_id, name, unit_seed, per_recipe, tuple(r.to_dict() for r in recipes),
                    False, precision, width)


def make_inputs(unit: WorkUnit) -> dict[str, np.ndarray]:
    """The unit's inputs: arrays by input name (float args as patterns, int args int32).
    Element-wise built-ins: any length (the device pads to the width); geometric
    built-ins: a multiple of the width (whole vectors); conversions: ``{"x": source
    values}`` in the source type's buffer dtype."""
    from strategies import Recipe, expand

    fmt = format_named(unit.precision)
    if is_conversion(unit.function):
        from fuzzfarm import conversions
        conv = conversions.parse(unit.function)
        x = conversions.special_inputs(conv) if unit.special else \
            conversions.inputs(conv, unit.per_recipe, unit.seed)
        return {"x": x}
    fn = catalogue.function(unit.function)
    if not fn.is_elementwise:
        from fuzzfarm import geometric
        if unit.special:
            return geometric.special_inputs(fn, fmt, unit.vector_width)
        return geometric.inputs(fn, fmt, unit.vector_width,
                                unit.per_recipe * max(1, len(unit.recipes)), unit.seed)
    if unit.special:
        return special_inputs(fn, fmt)
    parts = [expand(Recipe.from_dict(r), fn, unit.per_recipe, fmt) for r in unit.recipes]
    return {a.name: np.concatenate([p[a.name] for p in parts]) for a in fn.inputs}


def prepare_targets(runner, targets) -> None:
    """Build the kernels of the built-ins among ``targets`` ((name, precision, width)
    triples) on ``runner`` (a fuzzfarm.device.DeviceRunner), one program per (precision,
    width).  Conversions are built one program each at first use (``run_unit``): PoCL
    3.0-rc2 corrupts its heap building one program of a few hundred conversion kernels."""
    groups: dict = {}
    for name, precision, width in targets:
        if not is_conversion(name):
            groups.setdefault((precision, width), []).append(name)
    for (precision, width), names in groups.items():
        runner.prepare([catalogue.function(n) for n in names], format_named(precision), width)


def run_unit(runner, unit: WorkUnit, inputs: dict) -> dict[str, np.ndarray]:
    """Run the unit's kernel on ``runner``; returns the outputs by name."""
    fmt = format_named(unit.precision)
    if is_conversion(unit.function):
        from fuzzfarm import conversions
        conv = conversions.parse(unit.function)
        # one small program per conversion, built once and cached by the runner
        src = conversions.program_source([conv], unit.vector_width)
        (got,) = runner.run_source(src, conversions.kernel_name(conv), [inputs["x"]],
                                   [conv.dst_dtype], unit.vector_width)
        return {"ret": got}
    return runner.run(catalogue.function(unit.function), inputs, fmt, unit.vector_width)


def _describe_value(kind: str, v: int, fmt: FloatFormat) -> str:
    if kind == "int":
        return str(int(np.int64(v)) if int(v) < 2**63 else int(v) - 2**64)
    if kind == "uint":
        return hex(int(v))
    try:
        val = repr(fmt.value(v))
    except ValueError:
        val = "sNaN" if not (int(v) & fmt.quiet_bit) else "qNaN"
    return f"{fmt.hex(v)} ({val})"


def _hex_row(values, fmt: FloatFormat, which) -> str:
    """``name=0x3f800000 (1.0), k=3``; vectors (more values than names) as tuples."""
    values = list(values)
    if not which:
        return ""
    per = max(1, len(values) // len(which))
    parts = []
    for k, a in enumerate(which):
        chunk = values[k * per:(k + 1) * per]
        text = [_describe_value(a.kind, v, fmt) for v in chunk]
        parts.append(f"{a.name}={text[0]}" if len(text) == 1 else f"{a.name}=({', '.join(text)})")
    return ", ".join(parts)


#: Every value is stored as its raw bits in an unsigned 64-bit integer: float patterns as
#: they are, integers in two's complement (read back with the argument's dtype).
_U64 = (1 << 64) - 1


def _signature(unit: WorkUnit):
    """(input Args, output Args, input format, output format) of the unit's target: how
    its findings' bits are described."""
    fmt = format_named(unit.precision)
    if is_conversion(unit.function):
        from fuzzfarm import conversions
        conv = conversions.parse(unit.function)
        arg = lambda name, f, out: catalogue.Arg(name, "int" if f is None else "float", out)  # noqa: E731
        return ((arg("x", conv.src_format, False),), (arg("ret", conv.dst_format, True),),
                conv.src_format or fmt, conv.dst_format or fmt)
    fn = catalogue.function(unit.function)
    return fn.inputs, fn.outputs, fmt, fmt


def finding_rows(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str,
                 build_options: str = "") -> list[dict]:
    """Findings of one checked unit as rows of store.FINDINGS_SCHEMA.  ``input_bits`` and
    ``output_bits`` hold raw bits as unsigned 64-bit integers (integers in two's
    complement); ``inputs``/``outputs`` the same as readable text."""
    ins, outs, fin, fout = _signature(unit)
    now = datetime.now(timezone.utc)
    rows = []
    for f in result.findings:
        rows.append({
            "run_id": run_id, "unit_id": unit.unit_id, **device_meta,
            "function": unit.function, "precision": unit.precision,
            "vector_width": unit.vector_width, "build_options": build_options,
            "element": f.index, "input_bits": [int(v) & _U64 for v in f.inputs],
            "inputs": _hex_row(f.inputs, fin, ins),
            "output": f.output, "output_bits": [int(v) & _U64 for v in f.outputs],
            "outputs": _hex_row(f.outputs, fout, outs),
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

    fmt = format_named(unit.precision)
    if is_conversion(unit.function):
        by_class = {}
    else:
        by_class = input_class_counts(inputs, catalogue.function(unit.function), fmt)
    fails = result.counts_by_rule("fail")
    notes = result.counts_by_rule("note")
    return {
        "run_id": run_id, "unit_id": unit.unit_id, **device_meta,
        "function": unit.function, "precision": unit.precision,
        "vector_width": unit.vector_width, "build_options": build_options,
        "seed": unit.seed, "recipe": unit.recipe_json, "inputs_tested": result.n,
        "inputs_by_class": list(by_class.items()), "unjudged": result.unjudged,
        "failures": sum(fails.values()), "failures_by_rule": list(fails.items()),
        "notes": sum(notes.values()), "notes_by_rule": list(notes.items()),
        "max_ulp_error": None if np.isnan(result.max_ulp_error) else result.max_ulp_error,
        "screened": result.screened, "exact": result.exact,
        "device_seconds": device_seconds, "check_seconds": check_seconds,
        "time": datetime.now(timezone.utc),
    }


def check_result(unit: WorkUnit, inputs: dict, outputs: dict, claims: Claims) -> CheckResult:
    """The verdict on one unit's outputs (built-in, geometric or conversion)."""
    if is_conversion(unit.function):
        from fuzzfarm import conversions
        return conversions.check(conversions.parse(unit.function), inputs["x"], outputs["ret"],
                                 claims)
    return check_batch(catalogue.function(unit.function), inputs, outputs, claims,
                       width=unit.vector_width)


def check_unit(unit: WorkUnit, inputs: dict, outputs: dict, claims: Claims,
               device_meta: dict, run_id: str, device_seconds: float,
               build_options: str = "") -> tuple[list[dict], dict, CheckResult]:
    """Check one unit's device outputs; returns (finding rows, stats row, CheckResult)."""
    t0 = time.perf_counter()
    result = check_result(unit, inputs, outputs, claims)
    dt = time.perf_counter() - t0
    rows = finding_rows(result, unit, device_meta, run_id, build_options)
    stats = stats_row(result, unit, inputs, device_meta, run_id, device_seconds, dt,
                      build_options)
    return rows, stats, result
