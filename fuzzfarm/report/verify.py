"""``fuzzfarm verify``: do the stored failures hold up?

For each stored failure (docs/design.md, decision 4: "every reported failure can be re-derived"):

1. **Re-derive the verdict** from the stored input and output bits alone, with the reference
   evaluated afresh by mpmath at a much higher precision (``VERIFY_PRECISION``: 4p + 128
   bits, against 2p + 48 in a run) and no float64 screen.  The failure holds up when the
   same rule fails again on the same output.
2. **Re-execute** the input on its device (found by its fingerprint among the local OpenCL
   devices, built with the run's build options) and compare the device's bits now with the
   stored ones.  A device that is not attached here is reported as such; step 1 still runs.

The grouping by (device, function, precision, width, build options) lets a group be checked
and re-run as one batch.  Pure apart from the optional device runner passed in.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from edgecases import catalogue
from fuzzfarm.formats import format_named
from fuzzfarm.target import Target
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.work.kinds import kind_of
from fuzzfarm.work.session import run_unit
from fuzzfarm.work.unit import Special, WorkUnit, unit_from_row

__all__ = ["Verdict", "VerifyReport", "verify_findings", "VERIFY_PRECISION", "decode",
           "row_arrays", "row_claims"]


def VERIFY_PRECISION(precision: str) -> int:
    """mpmath working precision of the re-derivation, in bits (4p + 128)."""
    return 4 * format_named(precision).precision + 128


@dataclass
class Verdict:
    """One stored failure after verification.  ``holds``: the re-derived verdict fails the
    same rule; ``reproduced``: True/False when re-executed, None when the device is absent."""

    row: dict
    holds: bool
    reproduced: bool | None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.holds and self.reproduced is not False


@dataclass
class VerifyReport:
    verdicts: list = field(default_factory=list)
    absent_devices: set = field(default_factory=set)

    @property
    def bad(self) -> list:
        return [v for v in self.verdicts if not v.ok]

    def counts(self) -> Counter:
        return Counter((v.row["function"], v.row["rule_id"],
                        "confirmed" if v.ok else ("refuted" if not v.holds else "not reproduced"))
                       for v in self.verdicts)


def decode(values, dtype) -> np.ndarray:
    """Stored raw bits (unsigned 64-bit, integers in two's complement) -> an array of
    ``dtype`` (e.g. uint32 float patterns, int32 values)."""
    dt = np.dtype(dtype)
    u = np.asarray([int(v) for v in values], dtype=np.uint64)
    return u.astype(np.dtype(f"u{dt.itemsize}")).view(dt)


def row_arrays(row: dict) -> tuple[dict, dict]:
    """(input arrays, output arrays) of one finding row, by name, in their buffer dtypes
    (float bits as unsigned ints): ``input_bits``/``output_bits`` split as the row's
    target lays them out."""
    target = Target.of((row["function"], row["precision"], row["vector_width"],
                        row.get("front_end") or "opencl-c"))
    ins_of, outs_of = kind_of(target).values_per_element(target)
    res = []
    for bits, layout in ((row["input_bits"], ins_of), (row["output_bits"], outs_of)):
        arrays, k = {}, 0
        for name, (m, dtype) in layout.items():
            arrays[name] = decode(bits[k:k + m], dtype)
            k += m
        res.append(arrays)
    return tuple(res)


def _concat(parts: list) -> dict:
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


def row_claims(row: dict, build_options: str, constants: dict | None) -> Claims:
    """The Claims recorded with a finding row (its fp config and profile)."""
    flags = (row.get("fp_config") or "").split()
    return Claims.from_fp_config(flags, row.get("profile") or "FULL_PROFILE", row["precision"],
                                 constants, build_options)


def verify_findings(rows: list, runners: dict | None = None, constants: dict | None = None,
                    prec: int | None = None, per_recipe: int = 8192) -> VerifyReport:
    """Verify finding rows (dicts of store.FINDINGS_SCHEMA).

    ``runners`` maps device fingerprints to fuzzfarm.device.runner.DeviceRunner objects (built
    with the rows' build options) for re-execution; a fingerprint without one is reported
    in ``absent_devices``.  ``constants`` maps fingerprints to the device's
    {"FP_ILOGB0": int, "FP_ILOGBNAN": int} (from the run's metadata).  ``prec`` overrides
    VERIFY_PRECISION.  Returns a VerifyReport with one Verdict per row.
    """
    runners = runners or {}
    constants = constants or {}
    report = VerifyReport()
    groups: dict = {}
    for row in rows:
        key = (row["device_fingerprint"], row["function"], row["precision"],
               int(row["vector_width"]), row.get("build_options") or "",
               row.get("front_end") or "opencl-c")
        groups.setdefault(key, []).append(row)
    for (fp, name, precision, width, options, front_end), group in groups.items():
        claims = row_claims(group[0], options, constants.get(fp))
        parts = [row_arrays(r) for r in group]
        ins = _concat([p[0] for p in parts])
        outs = _concat([p[1] for p in parts])
        unit = WorkUnit(f"verify-{name}", Target(name, precision, width, front_end),
                        Special(0), options)
        geometric = unit.target.kind == "geometric"
        result = _check(unit, ins, outs, claims, prec or VERIFY_PRECISION(precision))
        failing = {(f.index, f.rule_id, f.output) for f in result.failures}
        fresh = None
        runner = runners.get(fp)
        if runner is None:
            report.absent_devices.add(fp)
        elif width > 1 and not geometric:
            fresh = _rerun_in_place(runner, group, ins, width, per_recipe)
        else:
            fresh = _rerun(runner, unit, ins, width, geometric)
        for i, row in enumerate(group):
            holds = (i, row["rule_id"], row["output"]) in failing
            reproduced = None
            detail = "" if holds else "the re-derived verdict does not fail this rule"
            if fresh is not None:
                got = _element(fresh, i, width, geometric, unit)
                want = _element(outs, i, width, geometric, unit)
                reproduced = all(np.array_equal(got[k], want[k]) for k in want)
                if not reproduced:
                    detail = (detail + "; " if detail else "") + \
                        "the device now returns " + ", ".join(
                            f"{k}={[hex(int(v)) for v in np.asarray(got[k]).view(np.dtype(f'u{got[k].dtype.itemsize}'))]}"
                            for k in got)
            report.verdicts.append(Verdict(row, holds, reproduced, detail))
    return report


def _rerun_in_place(runner, group, ins, width, per_recipe) -> dict:
    """Re-run each element of ``group`` inside its original work-item: the unit's inputs are
    regenerated (fuzzfarm.work.units.make_inputs) and the ``width`` lanes of the element's
    work-item are run again; returns the element outputs in ``group`` order."""
    from fuzzfarm.work.make import make_inputs
    rows_by_unit: dict = {}
    for k, r in enumerate(group):
        rows_by_unit.setdefault(r["unit_id"], []).append(k)
    parts, picks = [], []
    for uid, ks in rows_by_unit.items():
        full = make_inputs(unit_from_row(group[ks[0]], width, per_recipe))
        for k in ks:
            e = int(group[k]["element"])
            lo = e - e % width
            sl = {n: v[lo:lo + width] for n, v in full.items()}
            same = all(int(sl[n][e - lo]) == int(ins[n][k]) for n in ins)
            if len(next(iter(sl.values()))) < width or not same:
                sl = {n: np.repeat(ins[n][k:k + 1], width) for n in ins}   # fall back
                e, lo = 0, 0
            parts.append(sl)
            picks.append(len(parts) * width - width + (e - lo))
    wide = _concat(parts)
    unit = WorkUnit("verify", Target(group[0]["function"], group[0]["precision"], width),
                    Special(0))
    out = run_unit(runner, unit, wide)
    order = [k for ks in rows_by_unit.values() for k in ks]
    res = {n: np.empty(len(group), v.dtype) for n, v in out.items()}
    for k, pick in zip(order, picks):
        for n, v in out.items():
            res[n][k] = v[pick]
    return res


def _check(unit, ins, outs, claims, prec):
    return kind_of(unit.target).check(unit.target, ins, outs, claims, prec)


def _rerun(runner, unit, ins, width, geometric) -> dict:
    """Run the group's inputs again: element-wise inputs fill all ``width`` lanes of a
    work-item with the same value, so lane 0 of each work-item is the element."""
    if geometric:
        return run_unit(runner, unit, ins)
    wide = {k: np.repeat(v, width) for k, v in ins.items()}
    out = run_unit(runner, unit, wide)
    return {k: v[::width] for k, v in out.items()}


def _element(outs: dict, i: int, width: int, geometric: bool, unit) -> dict:
    if not geometric:
        return {k: v[i:i + 1] for k, v in outs.items()}
    res = {}
    for o in unit.target.fn.outputs:
        m = 1 if o.scalar else width
        res[o.name] = outs[o.name][i * m:(i + 1) * m]
    return res


def run_constants(out: str | Path) -> dict:
    """Device constants (FP_ILOGB0, FP_ILOGBNAN) by fingerprint from the runs' metadata."""
    found = {}
    for p in sorted((Path(out) / "_runs").glob("*.json")):
        try:
            meta = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        found.update(meta.get("device_constants") or {})
    return found


def violation_summary(report: VerifyReport) -> list[dict]:
    """One record per (device, function, precision, width, rule): verified counts and an
    example (input -> output, expected)."""
    groups: dict = {}
    for v in report.verdicts:
        r = v.row
        key = (r["device"], r["platform"], r["driver_version"], r["function"], r["precision"],
               int(r["vector_width"]), r["build_options"] or "", r["rule_id"])
        g = groups.setdefault(key, {"confirmed": 0, "refuted": 0, "not_reproduced": 0,
                                    "example": f"{r['inputs']} -> {r['outputs']} "
                                               f"(expected {r['expected']})"})
        g["confirmed" if v.ok else ("refuted" if not v.holds else "not_reproduced")] += 1
    return [dict(zip(("device", "platform", "driver", "function", "precision", "width",
                      "build_options", "rule"), k), **g) for k, g in sorted(groups.items())]


def coverage(out: str | Path, run_id: str | None = None) -> list[dict]:
    """Per device: the (function, precision, width) targets whose special-value unit was
    checked, how many inputs, and the rules those units exercised (every rule of a built-in
    meets its special-value pool: tests/test_rules_data.py)."""
    from fuzzfarm.store import dataset as store
    stats = store.read_stats(out, run_id).to_pylist()
    per: dict = {}
    for s in stats:
        d = per.setdefault(s["device"] + " | " + s["platform"],
                           {"targets": set(), "functions": set(), "rules": set(), "inputs": 0})
        d["inputs"] += s["inputs_tested"]
        d["targets"].add((s["function"], s["precision"], s["vector_width"]))
        d["functions"].add(s["function"])
        if '"special": true' in (s["recipe"] or "") and _builtin(s["function"]):
            d["rules"].update(r.id for r in catalogue.rules_for(s["function"]))
    return [{"device": k, "inputs": v["inputs"], "targets": len(v["targets"]),
             "functions_and_conversions": len(v["functions"]),
             "builtins": len([f for f in v["functions"] if _builtin(f)]),
             "rules_exercised": len(v["rules"])} for k, v in sorted(per.items())]


def _builtin(name: str) -> bool:
    """Whether ``name`` is a catalogue built-in (not a conversion): its kind has a
    Function."""
    t = Target(name)
    return kind_of(t).function(t) is not None


def run_per_recipe(out: str | Path) -> int:
    """Inputs per recipe of the runs in ``out`` (run metadata ``per_recipe``; 8192 when a
    run did not record it)."""
    for p in sorted((Path(out) / "_runs").glob("*.json")):
        try:
            return int(json.loads(p.read_text()).get("per_recipe", 8192))
        except (OSError, ValueError):
            continue
    return 8192
