"""`fuzzfarm triage`: synthetic result sets (no device, no Ray) compared and reported."""
import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone

import pytest
from click.testing import CliRunner

from fuzzfarm.store import signatures
from fuzzfarm.store import dataset as store
from fuzzfarm.report import triage, triage_report
from fuzzfarm.cli import main

ONE = 0x3F800000            # 1.0f: x:pos_normal
HALF = 0x3F000000           # 0.5f
SUB = 0x00000001            # the smallest subnormal: x:pos_subnormal


def _device(device, driver):
    return {"device_fingerprint": f"fp-{device}-{driver}", "platform": "Synthetic",
            "device": device, "driver_version": driver, "opencl_version": "OpenCL 3.0",
            "opencl_c_version": "OpenCL C 1.2", "profile": "FULL_PROFILE", "fp_config": ""}


def stats_row(run, unit, function, *, device="dev-A", driver="1.0", precision="binary32",
              width=1, opts="", inputs=100, classes=None, max_ulp=None, failures=0, seed=1,
              max_inputs=None, front_end=None):
    """A valid STATS_SCHEMA row; ``classes`` defaults to every input x:pos_normal."""
    classes = {"x:pos_normal": inputs} if classes is None else classes
    return {"run_id": run, "unit_id": unit, **_device(device, driver), "function": function,
            "precision": precision, "vector_width": width, "build_options": opts, "seed": seed,
            "recipe": "{}", "inputs_tested": inputs, "inputs_by_class": list(classes.items()),
            "failures": failures, "failures_by_rule": [], "notes": 0, "notes_by_rule": [],
            "max_ulp_error": max_ulp, "max_ulp_inputs": max_inputs, "screened": inputs, "exact": 0,
            "unjudged": 0, "device_seconds": 0.1, "check_seconds": 0.1,
            "time": datetime.now(timezone.utc), "front_end": front_end}


def finding(run, unit, function, rule, *, bits=(ONE,), severity="fail", ulp=None,
            device="dev-A", driver="1.0", precision="binary32", width=1, opts="",
            front_end=None):
    """A valid FINDINGS_SCHEMA row (``front_end`` None: a row of before the column)."""
    return {"run_id": run, "unit_id": unit, **_device(device, driver), "function": function,
            "precision": precision, "vector_width": width, "build_options": opts,
            "element": 0, "input_bits": list(bits),
            "inputs": ", ".join(f"x=0x{b:08x}" for b in bits), "output": "ret",
            "output_bits": [0x80000000], "outputs": "ret=0x80000000 (-0.0)",
            "expected": "0x00000000 (+0)", "rule_id": rule, "section": "7.5",
            "sentence": f"the sentence of {rule}", "severity": severity, "reading": "",
            "ulp_error": ulp, "seed": 1, "recipe": "{}", "time": datetime.now(timezone.utc),
            "front_end": front_end}


def unit(out, run, function, findings=(), **kw):
    """Write one unit of ``function``: its findings and its stats row."""
    uid = f"{function}-{kw.pop('serial', 0)}"
    fkw = {k: kw[k] for k in ("device", "driver", "precision", "width", "opts", "front_end")
           if k in kw}
    rows = [finding(run, uid, function, rule, **{**fkw, **fk}) for rule, fk in findings]
    store.write_findings(out, run, uid, rows)
    store.write_stats(out, run, uid, stats_row(run, uid, function, failures=len(rows), **kw))


def issue(function, rule_class, device="dev-A", precision="binary32", width=1, opts=""):
    return signatures.issue_id({"device": device, "function": function,
                                "precision": precision, "vector_width": width,
                                "build_options": opts, "rule_class": rule_class})


@pytest.fixture
def sets(tmp_path):
    """A baseline (driver 1.0, one run) and a current set (driver 2.0, two runs)."""
    b, c = tmp_path / "base", tmp_path / "cur"
    B, C1, C2 = "b-run1", "c-run1", "c-run2"
    new = {"driver": "2.0"}
    # sinpi: tested in the baseline without a failure; fails now -> new
    unit(b, B, "sinpi")
    unit(c, C1, "sinpi", [("CL.sinpi.positive_integer", {})], **new)
    # cospi: fails in the baseline; tested now (pos_normal inputs) and passes -> fixed
    unit(b, B, "cospi", [("CL.cospi.half_integer", {"bits": (HALF,)})])
    unit(c, C1, "cospi", **new)
    # tan: fails in both -> still failing
    unit(b, B, "tan", [("CL.tan.rule", {})])
    unit(c, C1, "tan", [("CL.tan.rule", {})], **new)
    # sin: tested in both current runs, fails in one -> flaky (not new)
    unit(b, B, "sin", max_ulp=1.0)
    unit(c, C1, "sin", [("ulp.sin", {"ulp": 7.5})], max_ulp=7.5, **new)
    unit(c, C2, "sin", max_ulp=1.5, **new)
    # exp: fails in the baseline; not tested now -> untested, never fixed
    unit(b, B, "exp", [("CL.exp.rule", {})])
    # sqrt: fails on a subnormal in the baseline; tested now on normals only -> untested
    unit(b, B, "sqrt", [("ulp.sqrt", {"bits": (SUB,), "ulp": 9.0})],
         classes={"x:pos_normal": 50, "x:pos_subnormal": 50}, max_ulp=9.0)
    unit(c, C1, "sqrt", classes={"x:pos_normal": 100, "x:pos_subnormal": 0}, max_ulp=0.5,
         **new)
    # cos: ULP maximum grows 1.0 -> 3.5, no failure
    unit(b, B, "cos", max_ulp=1.0)
    unit(c, C1, "cos", max_ulp=3.5, **new)
    # log: tested only now; fabs: a note only now (informational, not new)
    unit(c, C1, "log", **new)
    unit(b, B, "fabs")
    unit(c, C1, "fabs", [("nan.payload", {"severity": "note"})], **new)
    return b, c


def _section(md: str, title: str) -> str:
    """The text of the Markdown section whose heading starts with ``title``."""
    m = re.search(rf"^## {re.escape(title)}.*?$(.*?)(?=^## |\Z)", md, re.M | re.S)
    assert m, f"no section {title!r}"
    return m.group(1)


def test_compare_classifies_every_issue(sets):
    b, c = sets
    t = triage.compare(b, c)
    status = {i.issue: i.status for i in t.issues}
    assert status[issue("sinpi", "CL.sinpi.positive_integer")] == "new"
    assert status[issue("cospi", "CL.cospi.half_integer")] == "fixed"
    assert status[issue("tan", "CL.tan.rule")] == "still failing"
    assert status[issue("sin", "ulp.sin[x:pos_normal]")] == "flaky"
    assert status[issue("exp", "CL.exp.rule")] == "untested"
    assert status[issue("sqrt", "ulp.sqrt[x:pos_subnormal]")] == "untested"
    assert status[issue("fabs", "nan.payload")] == "note"
    assert t.counts == {"new": 1, "fixed": 1, "still failing": 1, "flaky": 1,
                        "untested": 2, "note": 1}
    assert t.exit_code == 1
    flaky = t.flaky[0]
    assert (flaky.current.runs_failing, flaky.current.runs_tested) == (1, 2)
    assert "1 of 2 runs" in flaky.detail
    exp = next(i for i in t.untested if i.function == "exp")
    assert exp.untested_in == "current" and "did not test" in exp.detail
    sqrt = next(i for i in t.untested if i.function == "sqrt")
    assert "x:pos_subnormal" in sqrt.detail
    # the driver changed (1.0 -> 2.0) and the device model still matched
    assert t.devices_baseline == {"dev-A": ["1.0"]}
    assert t.devices_current == {"dev-A": ["2.0"]}
    assert t.common_devices == ["dev-A"] and not t.devices_disjoint
    # ULP regressions: cos and sin grew; sqrt shrank
    reg = {r.function: r for r in t.ulp_regressions}
    assert set(reg) == {"cos", "sin"}
    assert reg["cos"].baseline_max == 1.0 and reg["cos"].current_max == 3.5
    assert reg["cos"].ratio == pytest.approx(3.5)
    assert reg["sin"].ulp_failures_current == 1 and reg["cos"].ulp_failures_current == 0
    # coverage
    assert [r.function for r in t.only_baseline] == ["exp"]
    assert [r.function for r in t.only_current] == ["log"]
    sinrow = next(r for r in t.coverage if r.function == "sin")
    assert (sinrow.inputs_baseline, sinrow.inputs_current) == (100, 200)
    assert (sinrow.runs_baseline, sinrow.runs_current) == (1, 2)


def test_cli_writes_the_three_reports_and_exits_1_on_new(sets, tmp_path):
    b, c = sets
    out = tmp_path / "report"
    res = CliRunner().invoke(main, ["triage", "--baseline", str(b), "--current", str(c),
                                    "--out", str(out)])
    assert res.exit_code == 1, res.output
    assert "new failures" in res.output
    md = (out / "report.md").read_text()
    assert issue("sinpi", "CL.sinpi.positive_integer") in _section(md, "New failures")
    assert issue("cospi", "CL.cospi.half_integer") in _section(md, "Fixed")
    assert issue("tan", "CL.tan.rule") in _section(md, "Still failing")
    assert issue("sin", "ulp.sin[x:pos_normal]") in _section(md, "Flaky")
    untested = _section(md, "Untested")
    assert issue("exp", "CL.exp.rule") in untested
    assert issue("sqrt", "ulp.sqrt[x:pos_subnormal]") in untested
    assert issue("fabs", "nan.payload") in _section(md, "Notes")
    for title in ("New failures", "Fixed", "Still failing", "Flaky", "Untested"):
        assert issue("fabs", "nan.payload") not in _section(md, title)
    assert issue("exp", "CL.exp.rule") not in _section(md, "Fixed")
    # the example of the new failure, and the coverage sections
    new = _section(md, "New failures")
    assert "x=0x3f800000 -> ret=0x80000000 (-0.0) (expected 0x00000000 (+0))" in new
    assert "| cos |" in _section(md, "ULP maximum regressions")
    assert "| exp |" in _section(md, "Tested only in the baseline")
    assert "| log |" in _section(md, "Tested only in the current set")

    page = (out / "report.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*https?://""", page, re.I)
    assert "<script" not in page.lower()
    assert re.search(r"<img[^>]+src='data:image/png;base64,[A-Za-z0-9+/]{100,}", page) \
        or "<svg" in page
    assert issue("sinpi", "CL.sinpi.positive_integer") in page
    assert "class='new'" in page and "class='fixed'" in page and "class='flaky'" in page

    root = ET.parse(out / "junit.xml").getroot()
    suites = root.findall("testsuite") if root.tag == "testsuites" else [root]
    assert [s.get("name") for s in suites] == ["fuzzfarm-triage"]
    cases = suites[0].findall("testcase")
    assert len(cases) == 7                      # every issue of either set
    failures = [f for case in cases for f in case.findall("failure")]
    # failing in the current set: new sinpi, still failing tan, flaky sin
    assert sorted(f.get("type") for f in failures) == ["flaky", "new", "still-failing"]
    assert suites[0].get("failures") == "3"
    assert suites[0].get("skipped") == "2"      # exp and sqrt: untested
    new_case = next(case for case in cases if case.find("failure") is not None
                    and case.find("failure").get("type") == "new")
    assert new_case.get("classname") == "dev-A.sinpi.binary32"
    assert new_case.get("name") == "CL.sinpi.positive_integer"
    assert "0x3f800000" in new_case.find("failure").get("message")
    fixed_case = next(case for case in cases if case.get("classname") == "dev-A.cospi.binary32")
    assert fixed_case.find("failure") is None and fixed_case.find("skipped") is None


def test_identical_sets_exit_0_nothing_new(sets, tmp_path):
    b, _ = sets
    out = tmp_path / "same"
    res = CliRunner().invoke(main, ["triage", "-b", str(b), "-c", str(b), "-o", str(out)])
    assert res.exit_code == 0, res.output
    t = triage.compare(b, b)
    assert not t.new and not t.fixed and not t.untested and not t.ulp_regressions
    assert not t.only_baseline and not t.only_current
    assert {i.status for i in t.issues} == {"still failing"}
    assert "None." in _section((out / "report.md").read_text(), "New failures")


def test_notes_alone_are_never_new_failures(tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "fabs")
    unit(c, "r2", "fabs", [("nan.payload", {"severity": "note"})])
    t = triage_report.run(b, c, tmp_path / "out")
    assert t.exit_code == 0 and not t.new
    assert [i.status for i in t.issues] == ["note"]
    root = ET.parse(tmp_path / "out" / "junit.xml").getroot()
    assert root.find("testsuite").get("failures") == "0"


def test_flaky_is_by_runs_not_by_units(tmp_path):
    """Two units of ONE run, the issue in one of them: random inputs, not flakiness."""
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi")
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})], serial=0)
    unit(c, "r2", "sinpi", serial=1)
    t = triage.compare(b, c)
    assert [i.status for i in t.issues] == ["new"]
    # a second run of the target without the issue makes it flaky instead
    unit(c, "r3", "sinpi")
    t = triage.compare(b, c)
    assert [i.status for i in t.issues] == ["flaky"] and t.exit_code == 0


def test_flaky_in_the_baseline_is_not_fixed(tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi", [("CL.sinpi.positive_integer", {})])
    unit(b, "r2", "sinpi")
    unit(c, "r3", "sinpi")
    t = triage.compare(b, c)
    assert [i.status for i in t.issues] == ["flaky"]
    assert "flaky in baseline: fails in 1 of 2 runs" == t.issues[0].detail


def test_new_needs_the_baseline_to_have_tested_the_target(tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "cos")
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})])
    t = triage.compare(b, c)
    (row,) = t.issues
    assert row.status == "untested" and row.untested_in == "baseline"
    assert t.exit_code == 0
    triage_report.write_junit(t, tmp_path / "j.xml")
    (f,) = ET.parse(tmp_path / "j.xml").getroot().iter("failure")
    assert f.get("type") == "not-in-baseline"


def test_disjoint_devices_are_reported(tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi", [("CL.sinpi.positive_integer", {})], device="NVIDIA H100")
    unit(b, "r1", "sinpi", serial=1, device="Other GPU")
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})], device="pthread-cpu")
    t = triage_report.run(b, c, tmp_path / "out")
    assert t.devices_disjoint and t.common_devices == [] and not t.paired
    assert not t.new and not t.fixed and len(t.untested) == 2 and t.exit_code == 0
    md = (tmp_path / "out" / "report.md").read_text()
    assert "no device model in common" in md
    assert "no device model in common" in (tmp_path / "out" / "report.html").read_text()


def test_build_options_and_widths_are_part_of_the_target(tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi", opts="-cl-fast-relaxed-math", width=4)
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})],
         opts="-cl-fast-relaxed-math  ", width=4)     # whitespace normalized
    t = triage.compare(b, c)
    (row,) = t.issues
    assert row.status == "new" and row.build_options == "-cl-fast-relaxed-math"
    assert row.issue == issue("sinpi", "CL.sinpi.positive_integer", width=4,
                              opts="-cl-fast-relaxed-math")
    triage_report.write_junit(t, tmp_path / "j.xml")
    (case,) = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert case.get("name") == "CL.sinpi.positive_integer [w4] [-cl-fast-relaxed-math]"


def test_the_front_end_is_part_of_the_target(tmp_path):
    """A baseline through OpenCL C only (rows of before the front-end column) and a
    current set through both: an issue of the SPIR-V kernels is untested in the baseline,
    not new, and the ULP maxima of the two front ends are never merged or compared."""
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi", max_ulp=1.0)
    unit(c, "r2", "sinpi", max_ulp=1.0, front_end="opencl-c")
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})], serial=1, max_ulp=3.0,
         front_end="spirv")
    t = triage.compare(b, c)
    (row,) = t.issues
    assert (row.status, row.untested_in, row.front_end) == ("untested", "baseline", "spirv")
    assert t.exit_code == 0 and not t.ulp_regressions and not t.ulp_not_comparable
    assert {(r.front_end, r.inputs_baseline > 0, r.inputs_current > 0)
            for r in t.coverage} == {("opencl-c", True, True), ("spirv", False, True)}
    triage_report.write_junit(t, tmp_path / "j.xml")
    (case,) = ET.parse(tmp_path / "j.xml").getroot().iter("testcase")
    assert case.get("name") == "CL.sinpi.positive_integer [spirv]"


def _one_error_line(res, *words):
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error"), res.output
    for w in words:
        assert w in lines[0]


def test_bad_inputs_are_one_line_exit_2(sets, tmp_path):
    b, _ = sets
    run = CliRunner().invoke
    missing = tmp_path / "nope"
    out = tmp_path / "out"
    _one_error_line(run(main, ["triage", "-b", str(missing), "-c", str(b), "-o", str(out)]),
                    str(missing), "--baseline")
    empty = tmp_path / "empty"
    empty.mkdir()
    _one_error_line(run(main, ["triage", "-b", str(b), "-c", str(empty), "-o", str(out)]),
                    str(empty), "no fuzzfarm results")
    only_runs = tmp_path / "only-runs"
    (only_runs / "_runs").mkdir(parents=True)
    _one_error_line(run(main, ["triage", "-b", str(b), "-c", str(only_runs), "-o", str(out)]),
                    str(only_runs), "no fuzzfarm results")
    corrupt = tmp_path / "corrupt"
    (corrupt / "_stats" / "r1").mkdir(parents=True)
    (corrupt / "_stats" / "r1" / "u.parquet").write_bytes(b"not parquet at all\n" * 10)
    _one_error_line(run(main, ["triage", "-b", str(corrupt), "-c", str(b), "-o", str(out)]),
                    "corrupt")
    _one_error_line(run(main, ["triage", "-c", str(b)]), "--baseline")
    assert not out.exists()                     # nothing written for bad input
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_error_line(run(main, ["triage", "-b", str(b), "-c", str(b), "-o",
                               str(blocker / "sub")]), "--out")
    with pytest.raises(triage.TriageError):
        triage.compare(missing, b)


def test_one_device_model_each_is_paired_and_pairs_can_be_named(tmp_path):
    """Two driver builds that name one CPU differently (PoCL 3.0 "pthread-<cpu>", 3.1
    "pthread-skylake-avx512-<cpu>") meet: by themselves with one model each, or by
    --pair."""
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r1", "sinpi", [("CL.sinpi.positive_integer", {})], device="pthread-cpu",
         driver="3.0")
    unit(b, "r1", "cospi", [("CL.cospi.half_integer", {})], device="pthread-cpu",
         driver="3.0")
    unit(c, "r2", "sinpi", [("CL.sinpi.positive_integer", {})], device="pthread-avx-cpu",
         driver="3.1")
    unit(c, "r2", "cospi", device="pthread-avx-cpu", driver="3.1")
    t = triage_report.run(b, c, tmp_path / "out")
    assert t.paired == {"pthread-cpu": "pthread-avx-cpu"} and not t.devices_disjoint
    assert [i.rule_class for i in t.still_failing] == ["CL.sinpi.positive_integer"]
    assert [i.rule_class for i in t.fixed] == ["CL.cospi.half_integer"]
    assert "compared as current 'pthread-avx-cpu'" in (tmp_path / "out" / "report.md").read_text()
    # a second model in the baseline: no automatic pairing, but --pair names it
    unit(b, "r1", "sinpi", serial=2, device="Other GPU")
    assert triage.compare(b, c).devices_disjoint
    res = CliRunner().invoke(main, ["triage", "-b", str(b), "-c", str(c), "-o",
                                    str(tmp_path / "o2"), "--pair",
                                    "pthread-cpu=pthread-avx-cpu"])
    assert res.exit_code == 0, res.output
    assert triage.compare(b, c, {"pthread-cpu": "pthread-avx-cpu"}).still_failing
    _one_error_line(CliRunner().invoke(main, ["triage", "-b", str(b), "-c", str(c), "--pair",
                                              "nosuch=pthread-avx-cpu"]), "--pair")
    _one_error_line(CliRunner().invoke(main, ["triage", "-b", str(b), "-c", str(c), "--pair",
                                              "no-equals-sign"]), "--pair")


def test_the_report_says_which_text_governed_each_issue_and_counts_both_kinds(sets, tmp_path):
    b, c = sets
    # a saturated conversion of a NaN to an integer other than 0: a note (OpenCL C "should")
    unit(c, "c-run1", "convert_int_sat(float)", [("CL.convert.sat_nan_zero",
                                                  {"severity": "note"})], driver="2.0")
    t = triage.compare(b, c)
    by_rule = {i.rule_id: i for i in t.issues}
    assert by_rule["CL.convert.sat_nan_zero"].governed_by == "OpenCL C 3.0 (should)"
    assert by_rule["CL.convert.sat_nan_zero"].status == "note"
    assert by_rule["CL.sinpi.positive_integer"].governed_by == "OpenCL SPIR-V Env (is)"
    line = triage_report.trust_line(t)
    fails = sum(i.status != "note" for i in t.issues)
    assert line.startswith(f"{fails} failure issue(s)") and f"{len(t.notes)} note(s)" in line
    triage_report.run(b, c, tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert line in _section(md, "Summary")
    assert "OpenCL C 3.0 (should)" in _section(md, "Notes")
    assert "OpenCL SPIR-V Env (is)" in _section(md, "New failures")


def test_the_cross_implementation_matrix_has_every_implementation_even_without_findings(
        tmp_path):
    b, c = tmp_path / "b", tmp_path / "c"
    unit(b, "r0", "sinpi")
    for dev, drv, found in (("impl-A", "1", [("CL.sinpi.positive_integer", {}),
                                             ("CL.sinpi.positive_integer", {})]),
                            ("impl-B", "7", [("CL.sinpi.positive_integer", {}),
                                             ("nan.payload", {"severity": "note"}),
                                             ("device.build_failure", {"severity": "fault"})]),
                            ("impl-C", "2", [])):
        unit(c, "r1", "sinpi", found, device=dev, driver=drv, serial=dev)
    t = triage.compare(b, c)
    assert t.implementations == ["Synthetic: impl-A (1)", "Synthetic: impl-B (7)",
                                 "Synthetic: impl-C (2)"]
    assert list(t.matrix) == ["CL.sinpi.positive_integer", "device.build_failure"]
    sinpi = t.matrix["CL.sinpi.positive_integer"]
    assert {k: v[0] for k, v in sinpi.items()} == {"Synthetic: impl-A (1)": 2,
                                                  "Synthetic: impl-B (7)": 1}
    assert all(sig.startswith("s") and len(sig) == 13 for _, sig in sinpi.values())
    triage_report.run(b, c, tmp_path / "rep")
    md = _section((tmp_path / "rep" / "report.md").read_text(), "Across implementations")
    assert "| rule | Synthetic: impl-A (1) | Synthetic: impl-B (7) | Synthetic: impl-C (2) |" in md
    assert "| device.build_failure | - | 1 (s" in md
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Across implementations" in html and "Synthetic: impl-C (2)" in html


def test_error_histograms_of_the_stats_rows_are_summed_and_plotted(tmp_path):
    """Stats rows with ``ulp_histogram`` cells (oracle.histogram layout; device- and
    host-screened sweeps and runs write them) are summed per function and precision and
    drawn in the HTML report; rows without them (older results) are left out."""
    from fuzzfarm.oracle.histogram import NBINS, NROWS, ROW_NEAR_ZERO
    base, cur = tmp_path / "b", tmp_path / "c"
    for out, run, cells in ((base, "rb", [(3, 10, 5), (4, 40, 7), (3, 20, 2)]),
                            (cur, "rc", [(3, 10, 1), (3, 44, 9), (ROW_NEAR_ZERO, 50, 3),
                                         (3, 30, 1)])):
        row = stats_row(run, "sin-0", "sin")
        row["ulp_histogram"] = [{"band": b, "bin": k, "count": n} for b, k, n in cells]
        store.write_stats(out, run, "sin-0", row)
        store.write_stats(out, run, "cos-0", stats_row(run, "cos-0", "cos"))   # none
        tan = stats_row(run, "tan-0", "tan")             # two bars: too few to plot
        tan["ulp_histogram"] = [{"band": 3, "bin": 10, "count": 4}, {"band": 3, "bin": 12,
                                                                       "count": 1}]
        store.write_stats(out, run, "tan-0", tan)
    t = triage.compare(base, cur)
    assert set(t.ulp_histograms) == {("sin", "binary32"), ("tan", "binary32")}
    d = t.ulp_histograms[("sin", "binary32")]
    b, c = d["baseline"].sum(axis=0), d["current"].sum(axis=0)
    assert d["baseline"].shape == (NROWS, NBINS) and b[10] == 5 and b[40] == 7
    assert c.sum() == 14 and c[44] == 9 and d["current"][ROW_NEAR_ZERO, 50] == 3
    html = triage_report.write_html(t, tmp_path / "r.html").read_text()
    assert "ULP error distribution of sin binary32 (and of its inputs near_zero)" in html
    assert "ULP error distribution of tan" not in html


def test_a_larger_maximum_on_other_inputs_is_not_a_regression(tmp_path):
    """Two runs of one driver with different seeds: cos's maximum is larger in the
    current set, over other inputs -- "not comparable", not a regression (issue 30,
    item 4); with the same seeds it is one."""
    b, c, same = tmp_path / "b", tmp_path / "c", tmp_path / "same"
    unit(b, "r1", "cos", max_ulp=1.0, seed=11)
    unit(c, "r2", "cos", max_ulp=2.0, seed=12)
    unit(same, "r3", "cos", max_ulp=2.0, seed=11)
    t = triage.compare(b, c)
    assert not t.ulp_regressions
    assert [(r.function, r.same_inputs) for r in t.ulp_not_comparable] == [("cos", False)]
    t = triage.compare(b, same)
    assert [r.function for r in t.ulp_regressions] == ["cos"] and not t.ulp_not_comparable
    out = tmp_path / "rep"
    triage_report.run(b, c, out)
    md = (out / "report.md").read_text()
    assert "## ULP maximum higher on different inputs, not comparable (1)" in md
    assert "## ULP maximum regressions (0)" in md


def _not_comparable(b_fp="fp-base", c_fp="fp-cur"):
    """A Triage with one ULP row over different inputs: baseline 1.0 at x=1, current 2.0
    at x=2."""
    row = triage.UlpRow("dev-A", "cos", "binary32", 1, "", "opencl-c", baseline_max=1.0,
                        current_max=2.0,
                        ulp_failures_baseline=0, ulp_failures_current=0, same_inputs=False,
                        baseline_worst=((0x3F800000,), b_fp),
                        current_worst=((0x40000000,), c_fp))
    t = triage.Triage.__new__(triage.Triage)
    t.ulp_regressions, t.ulp_not_comparable = [], [row]
    return t, row


@pytest.mark.parametrize("attached, errors, moved, words", [
    ({"fp-cur"}, {0x3F800000: 1.6}, True, "worse on the same input"),       # known bad
    ({"fp-cur"}, {0x3F800000: 1.0}, False, "not worse there"),              # known good
    ({"fp-base"}, {0x40000000: 0.9}, True, "worse on the same input"),       # known bad
    ({"fp-base"}, {0x40000000: 2.0}, False, "the sampling's"),              # known good
    (set(), {}, False, ""),                                                # nothing here
])
def test_a_replay_on_an_attached_build_tells_a_change_from_sampling(attached, errors, moved,
                                                                   words):
    from fuzzfarm.report import triage_replay
    t, row = _not_comparable()

    def measure(runner, r, inputs):
        return [errors[bits[0]] for bits in inputs]
    triage_replay.replay(t, lambda fp, opts: fp if fp in attached else None, measure)
    assert (row in t.ulp_regressions) is moved and (row in t.ulp_not_comparable) is not moved
    assert words in row.replay


def test_a_replay_of_one_build_is_sampling_and_a_failing_device_is_said():
    from fuzzfarm.report import triage_replay
    t, row = _not_comparable("fp", "fp")
    triage_replay.replay(t, lambda fp, opts: fp, lambda r, row, inputs: [1.0, 2.0])
    assert row in t.ulp_not_comparable and "sampling" in row.replay
    t, row = _not_comparable()

    def broken(runner, r, inputs):
        raise RuntimeError("clEnqueueNDRangeKernel failed: CL_OUT_OF_RESOURCES")
    triage_replay.replay(t, lambda fp, opts: fp, broken)
    assert row in t.ulp_not_comparable and "replay failed" in row.replay
    assert "CL_OUT_OF_RESOURCES" in row.replay


@pytest.mark.device
def test_the_replay_measures_on_the_device(tmp_path):
    """On a real device: the error of cos at a replayed input, as the checker measures."""
    from devices import require_device
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.report import triage_replay
    info = require_device()
    t, row = _not_comparable(info.fingerprint, info.fingerprint)
    (e1, e2) = triage_replay.measure(DeviceRunner(info), row, [(0x3F800000,), (0x40000000,)])
    assert 0.0 <= e1 <= 4.0 and 0.0 <= e2 <= 4.0        # cos's bound: 4 ULPs
    triage_replay.replay(t, triage_replay.attached_runner)
    assert "sampling" in row.replay and f"{e1:.4g}" in row.replay


def test_maxima_are_compared_on_the_units_both_sets_ran(tmp_path):
    """A target with a unit both sets ran (the same seed and recipe, a drift unit say)
    and units of their own: only the common unit's maxima say whether the driver changed;
    the others are other inputs."""
    def sets(common_b, common_c, own_b, own_c):
        b, c = tmp_path / f"b{common_b}{common_c}", tmp_path / f"c{common_b}{common_c}"
        unit(b, "r1", "cos", serial=1, seed=77, max_ulp=common_b, max_inputs=[0x3F800000])
        unit(b, "r1", "cos", serial=2, seed=5, max_ulp=own_b, max_inputs=[0x40000000])
        unit(c, "r2", "cos", serial=1, seed=77, max_ulp=common_c, max_inputs=[0x3F000000])
        unit(c, "r2", "cos", serial=2, seed=6, max_ulp=own_c, max_inputs=[0x40400000])
        return triage.compare(b, c)
    # worse on the common unit, although the whole current maximum is the smaller one
    t = sets(1.0, 1.5, 3.0, 0.9)
    (row,) = t.ulp_regressions
    assert (row.baseline_max, row.current_max, row.same_inputs) == (1.0, 1.5, True)
    assert row.baseline_worst[0] == (0x3F800000,) and row.current_worst[0] == (0x3F000000,)
    assert not t.ulp_not_comparable
    # the same on the common unit: no change, whatever the others' maxima
    t = sets(1.0, 1.0, 0.5, 2.5)
    assert not t.ulp_regressions and not t.ulp_not_comparable
