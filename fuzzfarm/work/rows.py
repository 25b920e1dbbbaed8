"""The rows a checked unit writes: its findings and its stats row (store.FINDINGS_SCHEMA,
store.STATS_SCHEMA), and the finding of a device fault.

Every value is stored as its raw bits in an unsigned 64-bit integer (float patterns as they
are, integers in two's complement) beside a readable form (C99 ``%a`` and the bits); a
finding row carries its rule, spec section and sentence, its governing text and verb
(``edgecases.modality``), and the unit's ``seed`` and ``recipe``, from which
``fuzzfarm.work.unit.unit_from_row`` rebuilds the unit.  Rows are built column by column
from the checker's findings: nothing loops over a unit's inputs in Python.
"""
from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import lru_cache

import numpy as np

from edgecases import modality
from fuzzfarm import formats
from fuzzfarm.formats import FloatFormat
from fuzzfarm.verdict.findings import CheckResult
from fuzzfarm.work.kinds import kind_of
from fuzzfarm.work.unit import IndexRange, WorkUnit

__all__ = ["finding_rows", "finding_table", "stats_row", "fault_rows", "write_fault",
           "DEVICE_FAULTS", "unit_columns", "unit_kernel_source"]


def unit_columns(unit: WorkUnit, run_id: str, device_meta: dict) -> dict:
    """The columns every row of ``unit`` shares: run and unit ids, the device's columns
    (``device_meta``: fuzzfarm.device.discovery.DeviceInfo.columns), the target (its
    front end too), the build options, the seed and the recipe."""
    t = unit.target
    return {"run_id": run_id, "unit_id": unit.unit_id, **device_meta,
            "function": t.name, "precision": t.precision, "vector_width": t.width,
            "build_options": unit.build_options, "seed": unit.stored_seed,
            "recipe": unit.recipe_json, "front_end": t.front_end}


@lru_cache(maxsize=1 << 16)
def _describe_cached(kind: str, v: int, fmt: FloatFormat) -> str:
    return formats.describe_value(kind, v, fmt)


def _hex_row(values, fmt: FloatFormat, which) -> str:
    """``name=0x1p+0 (0x3f800000), k=3``; vectors (more values than names) as tuples."""
    values = list(values)
    if not which:
        return ""
    per = max(1, len(values) // len(which))
    parts = []
    for k, a in enumerate(which):
        chunk = values[k * per:(k + 1) * per]
        text = [_describe_cached(a.kind, int(v), fmt) for v in chunk]
        parts.append(f"{a.name}={text[0]}" if len(text) == 1 else f"{a.name}=({', '.join(text)})")
    return ", ".join(parts)


#: Every value is stored as its raw bits in an unsigned 64-bit integer: float patterns as
#: they are, integers in two's complement (read back with the argument's dtype).
_U64 = (1 << 64) - 1


def _signature(unit: WorkUnit):
    """(input Args, output Args, input format, output format) of the unit's target: how
    its findings' bits are described."""
    target = unit.target
    return target.inputs, target.outputs, target.input_format, target.output_format


#: Finding columns that vary by finding (the rest are the same for a whole unit).
_FINDING_FIELDS = ("element", "input_bits", "inputs", "output", "output_bits", "outputs",
                   "expected", "rule_id", "section", "sentence", "severity", "reading",
                   "text", "verb", "ulp_error", "count", "input_class", "front_end")


class _Values:
    """One side (inputs or outputs) of a unit's findings, column-wise: ``bits`` the raw
    bits of every finding as uint64 (two's complement for ints), ``per`` values per
    finding (None when findings differ), ``text`` the readable column."""

    def __init__(self, tuples: list, which, fmt: FloatFormat):
        n = len(tuples)
        lengths = {len(t) for t in tuples}
        self.per = lengths.pop() if len(lengths) == 1 else (0 if not n else None)
        if self.per is not None:
            self.bits = np.fromiter((int(v) & _U64 for t in tuples for v in t),
                                    dtype=np.uint64, count=n * self.per)
            self.lists = None
        else:                           # ragged (not seen in practice): row by row
            self.lists = [[int(v) & _U64 for v in t] for t in tuples]
            self.bits = None
        if self.per is not None and which and self.per == len(which):
            # one value per argument: describe each distinct value once, then index
            mat = self.bits.reshape(n, self.per)
            parts = []
            for k, a in enumerate(which):
                uniq, inv = np.unique(mat[:, k], return_inverse=True)
                names = np.array([f"{a.name}={_describe_cached(a.kind, int(u), fmt)}"
                                  for u in uniq], dtype=object)
                parts.append(names[inv.ravel()])
            self.text = list(parts[0]) if len(parts) == 1 else \
                [", ".join(row) for row in zip(*parts)]
        else:                           # vectors (geometric): as tuples, per finding
            self.text = [_hex_row(t, fmt, which) for t in tuples]

    def as_lists(self) -> list:
        if self.lists is not None:
            return self.lists
        return self.bits.reshape(-1, self.per).tolist() if self.per else \
            [[] for _ in self.text]

    def as_arrow(self, type_):
        import pyarrow as pa
        if self.lists is not None or not self.per:
            return pa.array(self.as_lists(), type=type_)
        offsets = pa.array(np.arange(0, self.bits.size + 1, self.per, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, pa.array(self.bits, type=pa.uint64()),
                                        type=type_)


def _finding_columns(result: CheckResult, unit: WorkUnit, device_meta: dict,
                     run_id: str) -> tuple[dict, dict]:
    """(per-finding columns, columns constant over the unit) of the unit's findings.
    ``input_bits``/``output_bits`` are ``_Values``; each distinct value is described once."""
    from operator import attrgetter

    from fuzzfarm.store.samples import sample_findings
    ins, outs, fin, fout = _signature(unit)
    target = unit.target
    fn = kind_of(target).function(target)
    fs, counts, classes = sample_findings(result, fn, target.fmt, unit.stored_seed)

    def col(name):
        return list(map(attrgetter(name), fs))

    cols = {"element": col("index"), "count": counts, "input_class": classes,
            "input_bits": _Values(col("inputs"), ins, fin),
            "output": col("output"),
            "output_bits": _Values(col("outputs"), outs, fout)}
    cols["inputs"] = cols["input_bits"].text
    cols["outputs"] = cols["output_bits"].text
    # a compare unit's other front end's findings name it (verdict.front_ends)
    cols["front_end"] = [f.front_end or target.front_end for f in fs]
    for name in ("expected", "rule_id", "section", "sentence", "severity", "reading",
                 "ulp_error"):
        cols[name] = col(name)
    cols["text"], cols["verb"] = (list(c) for c in zip(*map(modality.governing,
                                                             cols["rule_id"]))) \
        if fs else ([], [])
    const = {**unit_columns(unit, run_id, device_meta), "time": datetime.now(timezone.utc)}
    return cols, const


def finding_rows(result: CheckResult, unit: WorkUnit, device_meta: dict,
                 run_id: str) -> list[dict]:
    """Findings of one checked unit as rows of store.FINDINGS_SCHEMA.  ``input_bits`` and
    ``output_bits`` hold raw bits as unsigned 64-bit integers (integers in two's
    complement); ``inputs``/``outputs`` the same as readable text.  (``finding_table``
    gives the same as a pyarrow Table, without a dict per row.)"""
    cols, const = _finding_columns(result, unit, device_meta, run_id)
    cols = {**cols, "input_bits": cols["input_bits"].as_lists(),
            "output_bits": cols["output_bits"].as_lists()}
    return [{**const, **dict(zip(_FINDING_FIELDS, vals))}
            for vals in zip(*(cols[k] for k in _FINDING_FIELDS))]


def finding_table(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str):
    """The unit's findings as a pyarrow Table of store.FINDINGS_SCHEMA (the rows of
    ``finding_rows``), built column by column."""
    import pyarrow as pa

    from fuzzfarm.store import dataset as store
    cols, const = _finding_columns(result, unit, device_meta, run_id)
    n = len(cols["element"])
    arrays = []
    for f in store.FINDINGS_SCHEMA:
        if isinstance(cols.get(f.name), _Values):
            arrays.append(cols[f.name].as_arrow(f.type))
        elif f.name in cols:
            arrays.append(pa.array(cols[f.name], type=f.type))
        else:
            value = const.get(f.name)
            arrays.append(pa.array([value] * n, type=f.type) if n < 64 else
                          pa.repeat(pa.scalar(value, type=f.type), n))
    return pa.Table.from_arrays(arrays, schema=store.FINDINGS_SCHEMA)


def stats_row(result: CheckResult, unit: WorkUnit, inputs: dict, device_meta: dict,
              run_id: str, device_seconds: float, check_seconds: float,
              by_class: dict | None = None, tally: tuple | None = None,
              inputs_at=None) -> dict:
    """The unit's row of store.STATS_SCHEMA (the inputs' classes and distinct inputs
    counted with numpy: ``strategies.class_tally``, unless the caller knows the classes:
    ``by_class``, for inputs distinct by construction such as a sweep's chunk; or
    ``tally``, (by class, distinct by class, distinct rows) counted elsewhere: the device's
    for inputs it made, with ``inputs_at(pos)`` giving the inputs the row names instead of
    ``inputs``).
    The result's error histogram (``ulp_hist``) is stored as its nonzero cells."""
    target = unit.target
    kind = kind_of(target)
    if tally is not None:
        by_class, distinct, rows = tally
    elif by_class is None:
        by_class, distinct, rows = kind.tally(target, inputs)
    else:
        distinct, rows = by_class, result.n
    fails = result.counts_by_rule("fail")
    notes = result.counts_by_rule("note")
    row = {
        **unit_columns(unit, run_id, device_meta), "inputs_tested": result.n,
        "inputs_by_class": list(by_class.items()), "unjudged": result.unjudged,
        "distinct_by_class": list(distinct.items()), "distinct_inputs": rows,
        "failures": sum(fails.values()), "failures_by_rule": list(fails.items()),
        "notes": sum(notes.values()), "notes_by_rule": list(notes.items()),
        "max_ulp_error": None if np.isnan(result.max_ulp_error) else result.max_ulp_error,
        "screened": result.screened, "exact": result.exact,
        "device_seconds": device_seconds, "check_seconds": check_seconds,
        "time": datetime.now(timezone.utc),
    }
    if result.ulp_hist is not None:
        from fuzzfarm.oracle.histogram import to_cells
        row["ulp_histogram"] = to_cells(result.ulp_hist)
    e = result.max_ulp_element
    if e >= 0:                    # the inputs of the element with the largest error
        at = kind.element_inputs(target, inputs if inputs_at is None else
                                 inputs_at(np.array([e])), e if inputs_at is None else 0)
        if at is not None:
            row["max_ulp_inputs"] = at
    return row


def unit_kernel_source(unit: WorkUnit) -> str:
    """The OpenCL C source of the kernel ``unit`` runs (the sweep kernel for a range of the
    input space), for a device-fault finding; '' where it cannot be made.  Never raises."""
    try:
        target = unit.target
        return kind_of(target).kernel_source(target, isinstance(unit.source, IndexRange))
    except Exception:           # noqa: BLE001 - a description, never a reason to stop
        return ""


#: The device-fault findings (``fault_rows``): rule id, section and sentence per reason.
DEVICE_FAULTS = {
    "crash": ("device.crash", "OpenCL runtime: kernel execution",
              "Running this unit killed the process that drives the device, twice (the "
              "second time alone on the device)."),
    "hang": ("device.hang", "OpenCL runtime: kernel execution",
             "This unit stayed on the device past its watchdog limit (derived from the "
             "time units of its target take, at most unit.timeout), twice (the second "
             "time alone on the device)."),
    "build_failure": ("device.build_failure", "OpenCL 3.0 API §5.8.4 clBuildProgram",
                      "clBuildProgram returns CL_SUCCESS if the function is executed "
                      "successfully; CL_BUILD_PROGRAM_FAILURE if there is a failure to build "
                      "the program executable."),
    "enqueue_error": ("device.enqueue_error", "OpenCL 3.0 API §5.10 and §5.2 (enqueue, "
                      "buffers, finish)",
                      "An OpenCL call that runs this unit's kernel or moves its data "
                      "returned an error instead of CL_SUCCESS."),
    "integer_arithmetic": ("device.integer_arithmetic", "OpenCL C 3.0 §6.15.1-§6.15.7 "
                           "(ulong arithmetic, shift and relational operators)",
                           "The device made this unit's inputs with exact integer "
                           "operations (fuzzfarm/device/generate.cl) and some of them "
                           "differ from the inputs the host makes from the same recipe "
                           "with the same operations: the unit's outputs were not judged."),
}

#: What a fault finding expects instead, per reason.
_FAULT_EXPECTED = {"crash": "completion", "hang": "completion",
                   "build_failure": "a successful build (CL_SUCCESS)",
                   "enqueue_error": "CL_SUCCESS",
                   "integer_arithmetic": "the inputs the host makes from the same recipe"}


def fault_rows(unit: WorkUnit, device_meta: dict, run_id: str, reason: str,
               detail: dict | None = None) -> tuple[dict, dict]:
    """(finding row, stats row) recording ``unit`` as a device fault (``reason``: a key of
    DEVICE_FAULTS: "crash", "hang", "build_failure", "enqueue_error",
    "integer_arithmetic"): severity "fault",
    no outputs, the unit's recipe (a crash's or hang's inputs are saved beside, see
    store.write_fault_inputs).  ``detail`` (JSON-able; e.g. ``kernel_source``,
    ``kernel_name``, ``build_log``, ``error_code``, ``error``) is stored as JSON in the
    ``fault_detail`` column, and its ``build_log`` or ``error`` as the readable
    ``reading``.  The stats row counts nothing as tested.  Raises KeyError for another
    reason."""
    rule, section, sentence = DEVICE_FAULTS[reason]
    detail = detail or {}
    reading = detail.get("error") or ""
    if detail.get("build_log"):
        lines = detail["build_log"].strip().splitlines()
        reading = "build log: " + " | ".join(lines[:8]) + (" | ..." if len(lines) > 8 else "")
    now = datetime.now(timezone.utc)
    common = {**unit_columns(unit, run_id, device_meta), "time": now}
    what = f"kernel {detail['kernel_name']}" if detail.get("kernel_name") else \
        f"unit {unit.unit_id}"
    finding = {**common, "element": -1, "input_bits": [], "inputs": what,
               "output": "", "output_bits": [], "outputs": detail.get("error_name", ""),
               "expected": _FAULT_EXPECTED[reason], "rule_id": rule, "section": section,
               "sentence": sentence, "severity": "fault", "reading": reading, "text": None,
               "verb": None, "ulp_error": None,
               "fault_detail": json.dumps(detail, sort_keys=True) if detail else None}
    stats = {**common, "inputs_tested": 0, "inputs_by_class": [], "failures": 0,
             "failures_by_rule": [], "notes": 0, "notes_by_rule": [], "max_ulp_error": None,
             "screened": 0, "exact": 0, "unjudged": 0, "device_seconds": None,
             "check_seconds": None}
    return finding, stats


def write_fault(out, run_id: str, unit: WorkUnit, device_meta: dict, reason: str,
                detail: dict | None = None, inputs: dict | None = None) -> dict:
    """Record ``unit`` as a device fault: its inputs first where given (a crash's or a
    hang's: store.write_fault_inputs), then its finding and its stats row (``fault_rows``;
    each file atomically, the stats row last, which makes the unit done).  The one place
    a device fault is written, whoever saw it (the device's process for a build failure,
    an enqueue error or inputs that disagree; a campaign's driver for a crash or a
    hang).  Returns the finding row."""
    from fuzzfarm.store import dataset as store
    if inputs is not None:
        store.write_fault_inputs(out, run_id, unit.unit_id, inputs)
    finding, stats = fault_rows(unit, device_meta, run_id, reason, detail)
    store.write_findings(out, run_id, unit.unit_id, [finding])
    store.write_stats(out, run_id, unit.unit_id, stats)
    return finding
