"""Signatures of findings (fuzzfarm.store.signatures) and `fuzzfarm findings`."""
from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pyarrow as pa
from click.testing import CliRunner

from fuzzfarm.store import dataset as store
from fuzzfarm.cli import main
from fuzzfarm.store.signatures import (ISSUE_FIELDS, SIGNATURE_FIELDS, issue_id, rule_class,
                                 signature_id, summarize, with_signatures)

T0 = datetime(2026, 11, 1, tzinfo=timezone.utc)


def finding(**kw) -> dict:
    """A valid FINDINGS_SCHEMA row (sinpi(1.0f) = -0 on a PoCL device) with overrides."""
    row = {"run_id": "r1", "unit_id": "u1", "device_fingerprint": "042d3307469e",
           "platform": "Portable Computing Language", "device": "pthread-cpu",
           "driver_version": "3.0-rc2", "opencl_version": "OpenCL 3.0 PoCL",
           "opencl_c_version": "OpenCL C 1.2 PoCL", "profile": "FULL_PROFILE",
           "fp_config": "DENORM INF_NAN", "function": "sinpi", "precision": "binary32",
           "vector_width": 1, "build_options": "", "element": 0,
           "input_bits": [0x3F800000], "inputs": "x=0x3f800000 (1.0)", "output": "ret",
           "output_bits": [0x80000000], "outputs": "ret=0x80000000 (-0.0)",
           "expected": "0x00000000 (+0)", "rule_id": "CL.sinpi.positive_integer",
           "section": "7.5.1", "sentence": "sinpi( +n) returns +0 for positive integers n.",
           "severity": "fail", "reading": "", "ulp_error": None, "seed": 1, "recipe": "[]",
           "time": T0}
    row.update(kw)
    return row


def table(rows) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=store.FINDINGS_SCHEMA)


def fields(**kw) -> dict:
    base = {"device": "pthread-cpu", "driver_version": "3.0-rc2", "function": "sinpi",
            "precision": "binary32", "vector_width": 1, "build_options": "",
            "rule_class": "CL.sinpi.positive_integer"}
    return {**base, **kw}


def test_rule_class_is_the_rule_or_the_bound_with_the_input_classes():
    assert rule_class("CL.sinpi.positive_integer", "sinpi", "binary32",
                      [0x3F800000]) == "CL.sinpi.positive_integer"
    assert rule_class("ulp.sin", "sin", "binary32", [0x4A47AE3B]) == "ulp.sin[x:pos_normal]"
    assert rule_class("ulp.sin", "sin", "binary32", [0x80000001]) == \
        "ulp.sin[x:neg_subnormal]"
    assert rule_class("ulp.pow", "pow", "binary64",
                      [0x3FF0000000000000, 0x8000000000000000]) == \
        "ulp.pow[x:pos_normal,y:neg_zero]"
    assert rule_class("ulp.pown", "pown", "binary32", [0x40000000, 0xFFFFFFFF]) == \
        "ulp.pown[x:pos_normal,y:int_neg]"   # pown(x, y) in the catalogue
    # geometric built-ins and conversions: the rule alone
    assert rule_class("ulp.length", "length", "binary32", [1, 2, 3]) == "ulp.length"
    assert rule_class("ulp.convert", "convert_int_rte(float)", "binary32", [1]) == \
        "ulp.convert"


def test_signature_ids_differ_by_every_field_and_issue_ignores_the_driver():
    base = signature_id(fields())
    assert base.startswith("s") and len(base) == 13
    for f in SIGNATURE_FIELDS:
        changed = fields(**{f: 2 if f == "vector_width" else "other"})
        assert signature_id(changed) != base, f
    assert signature_id(fields(build_options="  -cl-denorms-are-zero ")) == \
        signature_id(fields(build_options="-cl-denorms-are-zero"))
    assert issue_id(fields(driver_version="3.1")) == issue_id(fields())
    for f in ISSUE_FIELDS:
        assert issue_id(fields(**{f: 2 if f == "vector_width" else "other"})) != \
            issue_id(fields()), f


def test_signature_ids_are_the_same_in_another_process():
    code = ("from fuzzfarm.store.signatures import signature_id\n"
            f"print(signature_id({fields()!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == signature_id(fields())


def test_summary_counts_dates_maximum_and_the_earliest_example():
    rows = [finding(time=T0 + timedelta(hours=2), run_id="r2", element=5,
                    input_bits=[0x40000000], inputs="x=0x40000000 (2.0)"),
            finding(time=T0),                                       # the earliest
            finding(time=T0 + timedelta(hours=1), driver_version="3.1"),   # another sig
            finding(rule_id="ulp.sin", function="sin", input_bits=[0x4A47AE3B],
                    ulp_error=4.5, time=T0, severity="fail"),
            finding(rule_id="ulp.sin", function="sin", input_bits=[0x4A47AE3C],
                    ulp_error=7.25, time=T0, severity="fail"),
            finding(rule_id="CL.nan.one_of_operands", severity="note"),
            finding(rule_id="device.crash", severity="fault", input_bits=[])]
    s = {(r["rule_class"], r["driver_version"]): r for r in summarize(table(rows)).to_pylist()}
    sinpi = s[("CL.sinpi.positive_integer", "3.0-rc2")]
    assert sinpi["count"] == 2 and sinpi["runs"] == 2
    assert sinpi["first_seen"] == T0 and sinpi["last_seen"] == T0 + timedelta(hours=2)
    assert sinpi["example_inputs"] == "x=0x3f800000 (1.0)" and sinpi["example_run_id"] == "r1"
    assert s[("CL.sinpi.positive_integer", "3.1")]["count"] == 1
    ulp = s[("ulp.sin[x:pos_normal]", "3.0-rc2")]
    assert ulp["count"] == 2 and ulp["max_ulp_error"] == 7.25
    order = [r["severity"] for r in summarize(table(rows)).to_pylist()]
    assert order == sorted(order, key=["fault", "fail", "note"].index)
    sigs = with_signatures(table(rows))
    assert sigs["signature"][0].as_py() == sigs["signature"][1].as_py() != \
        sigs["signature"][2].as_py()
    assert sigs["issue"][0].as_py() == sigs["issue"][2].as_py()       # driver aside


def test_summary_of_nothing_is_empty():
    assert summarize(store.FINDINGS_SCHEMA.empty_table()).num_rows == 0


def test_findings_command_lists_filters_and_rejects_bad_directories(tmp_path):
    store.write_findings(tmp_path, "r1", "u1", [finding(), finding(element=3),
                                                finding(rule_id="CL.nan.one_of_operands",
                                                        severity="note")])
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--json"])
    assert res.exit_code == 0, res.output
    lines = [json.loads(ln) for ln in res.output.splitlines()]
    assert [(r["rule_class"], r["count"]) for r in lines] == [
        ("CL.sinpi.positive_integer", 2), ("CL.nan.one_of_operands", 1)]
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--json", "--severity", "note"])
    assert [json.loads(ln)["severity"] for ln in res.output.splitlines()] == ["note"]
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--function", "cos", "--json"])
    assert res.output == ""
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--wide"],
                             env={"COLUMNS": "200"})
    assert res.exit_code == 0 and signature_id(fields()) in res.output
    res = CliRunner().invoke(main, ["findings", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such results directory" in res.output
    (tmp_path / "r1" / "broken.parquet").write_bytes(b"PAR1 not really")
    res = CliRunner().invoke(main, ["findings", str(tmp_path)])
    assert res.exit_code == 2 and "corrupt" in res.output


def test_vectorized_ulp_classes_equal_the_one_by_one_rule_class():
    import numpy as np
    rng = np.random.default_rng(3)
    specials = [0, 0x80000000, 1, 0x80000001, 0x7F800000, 0x7FC00000, 0x7F800001,
                0x3F800000, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000]
    rows = []
    for k in range(300):
        fn, prec = [("sin", "binary32"), ("pow", "binary32"), ("pown", "binary32"),
                    ("exp", "binary64"), ("length", "binary32")][k % 5]
        width = {"pow": 2, "pown": 2, "length": 3}.get(fn, 1)
        bits = [int(rng.choice(specials)) if rng.random() < 0.5 else
                int(rng.integers(0, 2**32 if prec == "binary32" else 2**64, dtype=np.uint64))
                for _ in range(width)]
        rows.append(finding(function=fn, precision=prec, rule_id=f"ulp.{fn}",
                            input_bits=bits, element=k))
    rows.append(finding())                               # a prescribed-result rule
    t = with_signatures(table(rows))
    assert t["rule_class"].to_pylist() == [
        rule_class(r["rule_id"], r["function"], r["precision"], r["input_bits"])
        for r in rows]


def test_findings_record_the_governing_text_and_fill_it_for_older_files():
    """work.rows.finding_rows stores the text and verb of each finding's rule; a file written
    before they were stored (null) gets them from edgecases/data/modality.toml; a device
    fault has none."""
    from fuzzfarm.work import make, rows as unit_rows
    from fuzzfarm.verdict.checker import CheckResult, Finding
    r = CheckResult("sinpi", 2)
    for i, rid in enumerate(("CL.sinpi.positive_integer", "CL.nan.signaling_should_quiet")):
        r.findings.append(Finding(i, "sinpi", rid, "s", "t", "fail", "ret", (0x3F800000,),
                                  (0x80000000,), "+0", None, ""))
    u = make.make_unit("dev", ("sinpi", "binary32", 1), 3, 1, 8192, 4, size=2048)
    rows = unit_rows.finding_rows(r, u, {}, "run")
    assert [(x["text"], x["verb"]) for x in rows] == [("OpenCL SPIR-V Env", "is"),
                                                        ("OpenCL SPIR-V Env", "should")]
    old = [finding(), finding(rule_id="CL.convert.sat_nan_zero", severity="note",
                              function="convert_int_sat(float)"),
           finding(rule_id="device.crash", severity="fault", input_bits=[]),
           finding(rule_id="F9.acos.1", text="C99 Annex F", verb="is")]
    assert all(x.get("text") is None for x in old[:3])
    s = {x["rule_id"]: (x["text"], x["verb"]) for x in summarize(table(old)).to_pylist()}
    assert s == {"CL.sinpi.positive_integer": ("OpenCL SPIR-V Env", "is"),
                 "CL.convert.sat_nan_zero": ("OpenCL C 3.0", "should"),
                 "device.crash": (None, None), "F9.acos.1": ("C99 Annex F", "is")}


def test_findings_command_shows_failures_apart_from_notes_with_their_texts(tmp_path):
    store.write_findings(tmp_path, "r1", "u1", [
        finding(), finding(element=3),
        finding(rule_id="CL.convert.sat_nan_zero", severity="note",
                function="convert_int_sat(float)", element=4),
        finding(rule_id="device.hang", severity="fault", element=-1, input_bits=[])])
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--wide"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0, res.output
    out = res.output
    fails, notes, faults = (out.index(t) for t in ("Failures: 1 signature",
                                                    "Notes: 1 signature",
                                                    "Device faults: 1 signature"))
    assert fails < notes < faults
    assert "OpenCL SPIR-V Env" in out[fails:notes] and "(is)" in out[fails:notes]
    assert "OpenCL C 3.0" in out[notes:faults] and "(should)" in out[notes:faults]
    assert out.strip().splitlines()[-1].endswith(
        "2 failing inputs in 1 signature; 1 inputs with notes in 1 signature; 1 device faults in 1 signature")
    res = CliRunner().invoke(main, ["findings", str(tmp_path), "--severity", "note", "--wide"],
                             env={"COLUMNS": "250"})
    assert "Failures:" not in res.output and "0 failing inputs in 0 signatures" in res.output
