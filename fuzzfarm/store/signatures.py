"""Signatures: one id per distinct problem, for deduplicating findings.

A finding's **signature** is the tuple of ``SIGNATURE_FIELDS``: the device model and its
driver version, the built-in (or conversion), precision, vector width, build options, the
front end (for SPIR-V only: an OpenCL C finding's id is the one it had before the front
end was recorded), and the **rule class**: the rule id for a prescribed-result, NaN or FTZ rule
(``CL.sinpi.positive_integer``), and for a ULP bound (rule ids ``ulp.<function>``) the rule
id with the IEEE class of each input (``ulp.sin[x:pos_normal]``), so that a bound broken
for subnormal inputs and one broken for large normal inputs are two problems.  Its id is
``s`` + the first 12 hex digits of a sha1 over the fields (``signature_id``): the same on
every machine and in every run.

The **issue key** (``issue``, id ``i`` + 12 hex) is the signature without the driver version:
what triage matches between two result sets, so that last night's and tonight's findings
of one device model meet even when the driver changed.

Pure functions over Arrow tables of ``fuzzfarm.store.dataset.FINDINGS_SCHEMA`` rows (no device).
"""
from __future__ import annotations

import hashlib
import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["SIGNATURE_FIELDS", "ISSUE_FIELDS", "ACCURACY_FIELDS", "rule_class", "signature_id",
           "issue_id", "accuracy_id", "with_signatures", "summarize", "SIGNATURE_RE",
           "normalize_options", "input_kinds"]

#: The fields that make a signature, in order.  ``front_end`` enters the hash only for
#: SPIR-V ('opencl-c' and null leave it out), so OpenCL C signatures keep their ids.
SIGNATURE_FIELDS = ("device", "driver_version", "function", "precision", "vector_width",
                    "build_options", "rule_class", "front_end")
#: The fields that make an issue key (a signature without the driver version).
ISSUE_FIELDS = tuple(f for f in SIGNATURE_FIELDS if f != "driver_version")
#: The fields that make an accuracy id: a target, whose ULP maximum a history follows.
ACCURACY_FIELDS = tuple(f for f in ISSUE_FIELDS if f != "rule_class")
#: What a signature or issue id looks like on the command line.
SIGNATURE_RE = re.compile(r"^[si][0-9a-f]{12}$")


def _hash(prefix: str, values) -> str:
    text = "\x1f".join("" if v is None else str(v) for v in values)
    return prefix + hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]


def _values(fields: dict, names) -> list:
    out = []
    for k in names:
        if k == "front_end":
            if (fields.get(k) or "opencl-c") != "opencl-c":
                out.append(fields[k])
            continue
        out.append(_norm(k, fields[k]))
    return out


def signature_id(fields: dict) -> str:
    """The signature id (``s`` + 12 hex digits) of a dict holding ``SIGNATURE_FIELDS``
    (``front_end`` may be absent: OpenCL C).  Build options are compared with their
    whitespace normalized.  Raises KeyError for another missing field."""
    return _hash("s", _values(fields, SIGNATURE_FIELDS))


def issue_id(fields: dict) -> str:
    """The issue id (``i`` + 12 hex digits): the signature without the driver version."""
    return _hash("i", _values(fields, ISSUE_FIELDS))


def accuracy_id(fields: dict) -> str:
    """The accuracy id (``a`` + 12 hex digits) of a target's ULP maximum: a dict holding
    ``ACCURACY_FIELDS`` (``front_end`` may be absent: OpenCL C), hashed as an issue id
    is.  Raises KeyError for another missing field."""
    return _hash("a", _values(fields, ACCURACY_FIELDS))


def normalize_options(build_options) -> str:
    """Build options as signatures compare them: whitespace-separated tokens joined by
    one space ("" for none)."""
    return " ".join(str(build_options or "").split())


def _norm(key: str, value):
    return normalize_options(value) if key == "build_options" else value


def input_kinds(function: str) -> list[tuple[str, str]] | None:
    """(argument name, "float" | "int") of an element-wise built-in, or None (geometric
    built-ins, conversions and unknown names get no input class)."""
    from edgecases import catalogue
    try:
        fn = catalogue.function(function)
    except KeyError:
        return None
    if not fn.is_elementwise:
        return None
    return [(a.name, a.kind) for a in fn.inputs]


def _arg_classes(kind: str, bits: np.ndarray, fmt) -> np.ndarray:
    """Class names (object array) of raw bits (uint64 array) of one argument."""
    from fuzzfarm import formats
    if kind == "int":
        v = (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
        return np.array(formats.INT_CLASSES, dtype=object)[formats.classify_int(v)]
    return np.array(formats.INPUT_CLASSES, dtype=object)[formats.classify(bits, fmt)]


def rule_class(rule_id: str, function: str, precision: str, input_bits) -> str:
    """The rule class of one finding: ``rule_id`` itself, or for a ULP bound (``ulp.*``)
    of an element-wise built-in the rule id with each argument's IEEE class,
    ``ulp.pow[x:pos_normal,y:neg_subnormal]`` (``formats.INPUT_CLASSES``; int arguments
    by ``formats.INT_CLASSES``).  ``input_bits``: the finding's raw input bits (uint64,
    one per argument)."""
    if not rule_id.startswith("ulp.") or input_bits is None:
        return rule_id
    kinds = input_kinds(function)
    if kinds is None or len(input_bits) != len(kinds):
        return rule_id
    from fuzzfarm import formats
    fmt = formats.format_named(precision)
    parts = [f"{name}:{_arg_classes(kind, np.array([int(b)], dtype=np.uint64), fmt)[0]}"
             for (name, kind), b in zip(kinds, input_bits)]
    return f"{rule_id}[{','.join(parts)}]"


def _ulp_classes(findings: pa.Table, rows: list[int], classes: list) -> None:
    """``rule_class`` of the ULP findings at ``rows``, vectorized per (function,
    precision): written into ``classes``."""
    from fuzzfarm import formats
    sub = findings.take(pa.array(rows, type=pa.int64())).select(
        ["function", "precision", "rule_id", "input_bits"])
    fns, precs = sub["function"].to_pylist(), sub["precision"].to_pylist()
    groups: dict = {}
    for k, key in enumerate(zip(fns, precs)):
        groups.setdefault(key, []).append(k)
    bits_col = sub["input_bits"].combine_chunks()
    lengths = pc.list_value_length(bits_col).to_numpy(zero_copy_only=False)
    rule_ids = sub["rule_id"].to_pylist()
    for (fn, prec), ks in groups.items():
        kinds = input_kinds(fn)
        ks = np.asarray(ks)
        if kinds is None:
            continue
        ok = ks[lengths[ks] == len(kinds)]
        if not len(ok):
            continue
        flat = pc.list_flatten(bits_col.take(pa.array(ok))).to_numpy(
            zero_copy_only=False).astype(np.uint64).reshape(len(ok), len(kinds))
        fmt = formats.format_named(prec)
        names = [_arg_classes(kind, flat[:, j], fmt) for j, (_, kind) in enumerate(kinds)]
        for i, k in enumerate(ok):
            parts = ",".join(f"{kinds[j][0]}:{names[j][i]}" for j in range(len(kinds)))
            classes[rows[k]] = f"{rule_ids[k]}[{parts}]"


def with_governing_text(findings: pa.Table) -> pa.Table:
    """``findings`` with ``text`` and ``verb`` (the text that governed each finding's rule
    and its modal verb, e.g. 'C99 Annex F' and 'is') filled from
    edgecases/data/modality.toml where a file written before they were stored left them
    null.  A device fault keeps null: no text governs it."""
    from edgecases.modality import governing
    if findings.num_rows == 0 or (findings["text"].null_count == 0
                                  and findings["verb"].null_count == 0):
        return findings
    # one lookup per distinct rule id, spread over the rows by Arrow
    rules = pc.unique(findings["rule_id"])
    where = pc.index_in(findings["rule_id"], value_set=rules)
    found = [governing(r or "") for r in rules.to_pylist()]
    for k, name in enumerate(("text", "verb")):
        table_value = pa.array([f[k] for f in found], pa.string()).take(where)
        findings = findings.set_column(findings.schema.get_field_index(name), name,
                                       pc.coalesce(findings[name], table_value))
    return findings


def with_signatures(findings: pa.Table) -> pa.Table:
    """``findings`` (FINDINGS_SCHEMA) with three columns added: ``rule_class``,
    ``signature`` and ``issue`` (strings), and ``text``/``verb`` filled where null
    (``with_governing_text``).  Rows of one (SIGNATURE_FIELDS without the rule class)
    group are hashed once; ULP rows are classified per (function, precision) with
    numpy."""
    findings = with_governing_text(findings)
    n = findings.num_rows
    rule_ids = findings["rule_id"].to_pylist()
    classes = list(rule_ids)
    ulp = [k for k, r in enumerate(rule_ids) if r and r.startswith("ulp.")]
    if ulp:
        _ulp_classes(findings, ulp, classes)
    cols = {f: findings[f].to_pylist() if f in findings.column_names else [None] * n
            for f in SIGNATURE_FIELDS if f != "rule_class"}
    cols["rule_class"] = classes
    sig_cache: dict = {}
    sigs, issues = [], []
    for k in range(n):
        key = tuple(cols[f][k] for f in SIGNATURE_FIELDS)
        hit = sig_cache.get(key)
        if hit is None:
            d = dict(zip(SIGNATURE_FIELDS, key))
            hit = sig_cache[key] = (signature_id(d), issue_id(d))
        sigs.append(hit[0])
        issues.append(hit[1])
    return (findings.append_column("rule_class", pa.array(classes, pa.string()))
            .append_column("signature", pa.array(sigs, pa.string()))
            .append_column("issue", pa.array(issues, pa.string())))


#: Columns of ``summarize``'s table.
SUMMARY_COLUMNS = ("signature", "issue", *SIGNATURE_FIELDS, "rule_id", "severity", "count",
                   "runs", "first_seen", "last_seen", "max_ulp_error", "example_run_id",
                   "example_unit_id", "example_element", "example_inputs",
                   "example_outputs", "example_expected", "sentence", "text", "verb")


def summarize(findings: pa.Table) -> pa.Table:
    """One row per signature (and severity) of ``findings`` (FINDINGS_SCHEMA, with or
    without ``with_signatures``' columns): ``count`` of findings (the sum of the rows'
    ``count``: store.samples), ``runs`` they occur in,
    ``first_seen``/``last_seen`` (their earliest and latest ``time``), ``max_ulp_error``
    (ULPs; null where no bound was measured), and one example (the earliest finding:
    its run, unit, element, inputs, outputs, expected, the rule's sentence, the text that
    governed it and its modal verb, ``text``/``verb``: edgecases/data/modality.toml).  Sorted
    by severity (fault, fail, note), then count, largest first."""
    if "signature" not in findings.column_names:
        findings = with_signatures(findings)
    if findings.num_rows == 0:
        return pa.table({c: pa.array([], pa.string()) for c in SUMMARY_COLUMNS})
    from fuzzfarm.store.samples import counts
    keyed = findings.append_column("row", pa.array(np.arange(findings.num_rows)))
    keyed = keyed.append_column("_count", counts(findings))
    g = keyed.group_by(["signature", "severity"]).aggregate([
        ("_count", "sum"), ("run_id", "count_distinct"), ("time", "min"), ("time", "max"),
        ("ulp_error", "max"), ("row", "min")])
    # the earliest finding of each group is its example
    times = keyed.select(["signature", "severity", "time", "row"]).sort_by(
        [("time", "ascending"), ("row", "ascending")])
    first: dict = {}
    for s, sev, r in zip(times["signature"].to_pylist(), times["severity"].to_pylist(),
                         times["row"].to_pylist()):
        first.setdefault((s, sev), r)
    rows = [first[(s, sev)] for s, sev in zip(g["signature"].to_pylist(),
                                               g["severity"].to_pylist())]
    ex = findings.take(pa.array(rows, type=pa.int64()))
    out = {"signature": g["signature"], "issue": ex["issue"]}
    for f in SIGNATURE_FIELDS:          # a table from before the front end: null (OpenCL C)
        out[f] = ex[f] if f in ex.column_names else pa.nulls(ex.num_rows, pa.string())
    out.update({"rule_id": ex["rule_id"], "severity": g["severity"],
                "count": g["_count_sum"], "runs": g["run_id_count_distinct"],
                "first_seen": g["time_min"], "last_seen": g["time_max"],
                "max_ulp_error": g["ulp_error_max"], "example_run_id": ex["run_id"],
                "example_unit_id": ex["unit_id"], "example_element": ex["element"],
                "example_inputs": ex["inputs"], "example_outputs": ex["outputs"],
                "example_expected": ex["expected"], "sentence": ex["sentence"],
                "text": ex["text"], "verb": ex["verb"]})
    table = pa.table(out)
    order = pc.index_in(table["severity"], pa.array(["fault", "fail", "note"]))
    table = table.append_column("_order", pc.fill_null(order, 3))
    table = table.sort_by([("_order", "ascending"), ("count", "descending"),
                           ("signature", "ascending")])
    return table.drop_columns(["_order"])
