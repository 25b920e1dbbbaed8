"""`fuzzfarm history`: builds made of results directories with a planted history (no
device, no download): introduced, fixed, intermittent, untested where a build lacks
binary16, a build that did not run, ULP maxima per build."""
import json

import pytest
from click.testing import CliRunner

from fuzzfarm.cli import main
from fuzzfarm.report import history as hist
from test_triage import HALF, SUB, issue, unit

LABELS = ["v1", "v2", "v3", "v4", "v5"]


@pytest.fixture
def builds(tmp_path):
    """Five builds of driver "dev-A"; v4 did not install (no results)."""
    return planted_builds(tmp_path)


def planted_builds(tmp_path):
    """Five builds of driver "dev-A" with a planted history (the ``builds`` fixture)."""
    dirs = {lab: tmp_path / lab for lab in LABELS}
    for k, lab in enumerate(LABELS):
        if lab == "v4":
            continue
        d, run, kw = dirs[lab], f"run-{lab}", {"driver": lab}
        # sinpi: passes in v1, fails from v2 on -> introduced in v2, still failing
        unit(d, run, "sinpi", [("CL.sinpi.positive_integer", {})] if k >= 1 else [], **kw)
        # cospi: fails in v1, v2, passes from v3 -> failing since v1, fixed in v3
        unit(d, run, "cospi", [("CL.cospi.half_integer", {"bits": (HALF,)})] if k <= 1
             else [], **kw)
        # tan: fails, passes, fails -> intermittent
        unit(d, run, "tan", [("CL.tan.rule", {})] if k in (0, 2, 4) else [], **kw)
        # exp binary16: only v3 tests binary16 (the others lack cl_khr_fp16) -> the
        # failure there is "at or before v3", never fixed by the others' silence
        if lab == "v3":
            unit(d, run, "exp", [("CL.exp.rule", {})], precision="binary16", **kw)
        # sqrt: fails on a subnormal in v1; v2 tests only normals (untested there),
        # v3 tests subnormals and passes -> fixed in v3, not in v2
        if k == 0:
            unit(d, run, "sqrt", [("ulp.sqrt", {"bits": (SUB,), "ulp": 9.0})],
                 classes={"x:pos_normal": 50, "x:pos_subnormal": 50}, max_ulp=9.0, **kw)
        elif k == 1:
            unit(d, run, "sqrt", classes={"x:pos_normal": 100}, max_ulp=0.5, **kw)
        else:
            unit(d, run, "sqrt", classes={"x:pos_normal": 50, "x:pos_subnormal": 50},
                 max_ulp=0.5, **kw)
        # cos: no failure, its ULP maximum drifts 1.0 -> 2.5 from v3 on
        unit(d, run, "cos", max_ulp=1.0 if k < 2 else 2.5, **kw)
    return [hist.Build(lab, dirs[lab]) if lab != "v4" else
            hist.Build(lab, None, "install failed", "pip: no matching distribution")
            for lab in LABELS]


def _row(h, function, rule_class, precision="binary32"):
    iss = issue(function, rule_class, precision=precision)
    return next(i for i in h.issues if i.issue == iss)


def test_planted_history_introduced_fixed_intermittent_untested(builds):
    h = hist.history(builds)
    sinpi = _row(h, "sinpi", "CL.sinpi.positive_integer")
    assert sinpi.states == ("pass", "fail", "fail", "untested", "fail")
    assert (sinpi.introduced, sinpi.since_first, sinpi.fixed, sinpi.status) == \
        ("v2", False, None, "still failing")
    cospi = _row(h, "cospi", "CL.cospi.half_integer")
    assert cospi.states[:3] == ("fail", "fail", "pass")
    assert (cospi.introduced, cospi.since_first, cospi.fixed, cospi.status) == \
        ("v1", True, "v3", "fixed")
    tan = _row(h, "tan", "CL.tan.rule")
    assert tan.status == "intermittent" and tan.fixed is None
    exp = _row(h, "exp", "CL.exp.rule", "binary16")
    assert exp.states == ("untested", "untested", "fail", "untested", "untested")
    assert (exp.status, exp.fixed, exp.since_first) == ("still failing", None, True)
    sqrt = _row(h, "sqrt", "ulp.sqrt[x:pos_subnormal]")
    assert sqrt.states[:3] == ("fail", "untested", "pass")     # v2 had no subnormals
    assert (sqrt.fixed, sqrt.status) == ("v3", "fixed")
    assert all(s == "untested" for s in (r.states[3] for r in h.issues))   # v4 never ran
    assert sinpi.failures == (0, 1, 1, 0, 1)


def test_ulp_maxima_per_build_and_the_same_inputs(builds):
    h = hist.history(builds)
    cos = next(v for t, v in h.ulp_max.items() if t[1] == "cos")
    assert cos == [1.0, 1.0, 2.5, None, 2.5]
    assert h.same_inputs                  # every run recorded seed 1
    assert h.drivers["v2"] == ["v2"] and h.drivers["v4"] == []


def test_cli_writes_markdown_and_json(builds, tmp_path):
    args = ["history", "--out", str(tmp_path / "rep")]
    for b in builds:
        if b.results is not None:
            args += ["--results", f"{b.label}={b.results}"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert "4 builds" in res.output
    data = json.loads((tmp_path / "rep" / "history.json").read_text())
    assert [b["label"] for b in data["builds"]] == ["v1", "v2", "v3", "v5"]
    sinpi = next(i for i in data["issues"] if i["function"] == "sinpi")
    assert sinpi["introduced_in"] == "v2" and sinpi["failing_builds"] == ["v2", "v3", "v5"]
    assert sinpi["states"] == ["pass", "fail", "fail", "fail"]     # in the builds' order
    cos = next(t for t in data["ulp_max"] if t["function"] == "cos")
    assert cos["by_build"] == [1.0, 1.0, 2.5, 2.5]
    md = (tmp_path / "rep" / "history.md").read_text()
    assert "## Still failing" in md and "## Fixed" in md and "## Intermittent" in md
    assert "| cos binary32 w1 (dev-A) | 1 | 1 | 2.5 | 2.5 |" in md
    assert not list((tmp_path / "rep").glob("*.part"))


def test_a_build_that_did_not_run_is_a_row_that_says_so(builds):
    md = hist.markdown(hist.history(builds))
    assert "| v4 | install failed: pip: no matching distribution | - |" in md


def test_bad_input_is_one_line_exit_2(builds, tmp_path):
    runner = CliRunner()
    for args, words in (
            (["--results", "v1"], "LABEL=RESULTS_DIR"),
            (["--results", f"v1={tmp_path / 'nope'}"], "does not exist"),
            (["--results", f"v1={builds[0].results}", "--results",
              f"v1={builds[1].results}"], "given twice")):
        res = runner.invoke(main, ["history", *args, "--out", str(tmp_path / "r")])
        assert res.exit_code == 2, res.output
        assert words in res.output
        assert "Traceback" not in res.output
    with pytest.raises(hist.HistoryError):
        hist.history([])
