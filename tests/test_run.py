"""`fuzzfarm run` end to end on PyPI's PoCL (device + Ray), and its bad-input errors."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from fuzzfarm.cli import main
from fuzzfarm.run import UsageError, parse_budget


def test_parse_budget():
    assert parse_budget("90s") == 90
    assert parse_budget("5m") == 300
    assert parse_budget("1h30m") == 5400
    assert parse_budget("45") == 45
    for bad in ("", "5x", "m5", "-3s", "0s", "5m garbage"):
        with pytest.raises(UsageError):
            parse_budget(bad)


@pytest.mark.parametrize("args, words", [
    (["--functions", "sinpi,nosuch"], "nosuch"),
    (["--budget", "5 parsecs"], "--budget"),
    (["--device", "no-such-device-xyz"], "no-such-device-xyz"),
    (["--seed", "-4"], "--seed"),
    (["--frobnicate"], "frobnicate"),
    (["--precisions", "quad"], "quad"),
    (["--widths", "1,5"], "--widths"),
    (["--build-options", "fast please"], "--build-options"),
    (["--functions", "convert_int_sat_rte(quaternion)"], "quaternion"),
    (["--functions", "cross", "--widths", "2"], "--widths"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, words):
    out = tmp_path / "out"
    res = CliRunner().invoke(main, ["run", "--out", str(out), "--budget", "5s", *args])
    assert res.exit_code == 2, res.output
    assert words in res.output
    error_lines = [line for line in res.output.splitlines() if line.startswith("Error")]
    assert len(error_lines) == 1
    assert not out.exists() or not any(out.iterdir())


def test_unwritable_out_is_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = CliRunner().invoke(main, ["run", "--out", str(blocker / "sub"), "--budget", "5s"])
    assert res.exit_code == 2
    assert "--out" in res.output


def _fuzzfarm(*args, timeout=240, **kw):
    return subprocess.run([sys.executable, "-m", "fuzzfarm", *args], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"}, **kw)


@pytest.mark.device
@pytest.mark.cluster
def test_run_finds_sinpi_of_one_on_pocl(tmp_path):
    """The acceptance example: sinpi(+1.0f) = -0.0f on PyPI's PoCL 3.0."""
    out = tmp_path / "res"
    res = _fuzzfarm("run", "--functions", "sinpi,sin", "--budget", "8s", "--seed", "3",
                    "--out", str(out), "--device", "pocl")
    assert res.returncode == 0, res.stderr[-2000:]
    table = ds.dataset(out).to_table().to_pylist()
    hits = [r for r in table if r["rule_id"] == "CL.sinpi.positive_integer"
            and r["input_bits"] == [0x3F800000]]
    if not any("PoCL 3.0" in r["platform"] or "3.0" in r["opencl_version"] for r in table):
        pytest.skip("the first PoCL device here is not PyPI's PoCL 3.0")
    assert hits, "sinpi(1.0f) = -0.0f not reported"
    row = hits[0]
    assert row["output_bits"] == [0x80000000]
    assert row["sentence"] == "sinpi( +n) returns +0 for positive integers n."
    assert row["severity"] == "fail" and row["seed"] is not None
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    assert {s["function"] for s in stats} == {"sinpi", "sin"}
    assert all(s["inputs_tested"] > 0 for s in stats)
    assert "CL.sinpi.positive_integer" in res.stdout  # the summary names the rule
    runs = list((out / "_runs").glob("*.json"))
    assert json.loads(runs[0].read_text())["status"] == "completed"
    # --fail-on-findings turns the same result into exit 1
    res = _fuzzfarm("run", "--functions", "sinpi", "--budget", "3s", "--seed", "3",
                    "--out", str(out), "--device", "pocl", "--fail-on-findings")
    assert res.returncode == 1


@pytest.mark.device
@pytest.mark.cluster
def test_interrupted_run_leaves_only_complete_files(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-m", "fuzzfarm", "run", "--functions", "sinpi,fract",
                             "--budget", "60s", "--out", str(out), "--device", "pocl"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and not list(out.glob("_stats/*/*.parquet")):
        time.sleep(0.5)
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    try:
        proc.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
    assert proc.returncode in (130, 0)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert not [p for p in files if p.name.startswith(".tmp-")]
    ds.dataset(out).to_table()          # every file complete and readable
    stats = ds.dataset(out / "_stats").to_table()
    assert stats.num_rows > 0
    meta = json.loads(next((out / "_runs").glob("*.json")).read_text())
    assert meta["status"] in ("interrupted", "completed")


def test_catalogue_lists_everything_as_json():
    res = CliRunner().invoke(main, ["catalogue", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    from edgecases import catalogue
    assert data["counts"]["functions"] == len(catalogue.functions()) >= 117
    assert data["counts"]["rules"] == len(catalogue.rules())
    sinpi = [f for f in data["functions"] if f["function"] == "sinpi" and f["precision"] == "binary32"]
    assert sinpi[0]["bounds"]["full"]["bound"] == "<= 4 ulp"
    assert "CL.sinpi.positive_integer" in sinpi[0]["rules"]
    rule = [r for r in data["rules"] if r["id"] == "CL.sinpi.positive_integer"][0]
    assert rule["result"] == "ret = +0" and "3.8.2" in rule["section"]
    bad = CliRunner().invoke(main, ["catalogue", "--function", "sinq"])
    assert bad.exit_code == 2 and "sinq" in bad.output


def test_verify_rejects_a_missing_results_directory(tmp_path):
    res = CliRunner().invoke(main, ["verify", str(tmp_path / "none")])
    assert res.exit_code == 2 and "not a results directory" in res.output


@pytest.mark.device
@pytest.mark.cluster
def test_vector_widths_precisions_conversions_and_verify_on_pocl(tmp_path):
    """A short run at widths 1 and 4 in binary32 and binary64, with a geometric built-in and
    a conversion; `fuzzfarm verify` re-executes and confirms every failure it reports."""
    out = tmp_path / "out"
    fns = "sinpi,normalize,convert_int_sat_rte(float)"
    res = _fuzzfarm("run", "--functions", fns, "--precisions", "float,double", "--widths", "1,4",
                    "--budget", "15s", "--seed", "3", "--out", str(out))
    assert res.returncode == 0, res.stderr[-3000:]
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    seen = {(s["function"], s["precision"], s["vector_width"]) for s in stats}
    assert ("sinpi", "binary32", 4) in seen and ("sinpi", "binary64", 1) in seen
    report = tmp_path / "verify.json"
    res = _fuzzfarm("verify", str(out), "--json", str(report))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    data = json.loads(report.read_text())
    rules = {(v["function"], v["rule"]) for v in data["violations"]}
    assert ("sinpi", "CL.sinpi.positive_integer") in rules   # PyPI's PoCL 3.0 bug
    assert all(v["refuted"] == 0 and v["not_reproduced"] == 0 for v in data["violations"])
