"""Campaigns end to end on PyPI's PoCL: the driver killed and resumed, planted device
faults, and malformed campaign files on the command line."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.dataset as ds
import pytest
from click.testing import CliRunner

from devices import selector
from fuzzfarm.cli import main

#: A finite campaign: fixed-size units, so that its set of units is fixed.
FINITE = """\
name = "finite"
seed = 5
[unit]
inputs = 8192
[[jobs]]
functions = ["sinpi", "cospi", "exp"]
units = 6
[[jobs]]
source = "catalogue"
functions = ["sin", "convert_int_sat_rte(float)"]
[[jobs]]
source = "sweep"
functions = ["tanpi"]
chunk_bits = 16
units = 3
"""


def _fuzzfarm(*args, env=None, **kw):
    return subprocess.Popen([sys.executable, "-m", "fuzzfarm", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "COLUMNS": "200", **(env or {})}, **kw)


def _units(out: Path) -> dict:
    """unit id -> (inputs tested, failures, notes), from the stats rows; asserts that no
    unit has two rows."""
    rows = ds.dataset(out / "_stats").to_table().to_pylist()
    ids = Counter(r["unit_id"] for r in rows)
    assert max(ids.values()) == 1, ids.most_common(3)
    return {r["unit_id"]: (r["inputs_tested"], r["failures"], r["notes"]) for r in rows}


def _finding_counts(out: Path) -> Counter:
    t = ds.dataset(out).to_table(columns=["unit_id", "severity"]).to_pylist()
    return Counter((r["unit_id"], r["severity"]) for r in t)


@pytest.mark.device
@pytest.mark.cluster
def test_driver_killed_midway_and_resumed_runs_the_same_units(tmp_path):
    """SIGKILL the driver once some units are written, resume: the same units (ids and
    verdicts) as an uninterrupted run, each written once."""
    spec = tmp_path / "finite.toml"
    spec.write_text(FINITE)
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(whole), "--device", selector())
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    expected = _units(whole)
    # 2 targets x 7 + 2 catalogue + 3 sweep chunks (exp is sized the same way)
    assert len(expected) == 3 * 7 + 2 + 3

    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(cut), "--device", selector())
    deadline = time.time() + 300
    while time.time() < deadline:
        written = list((cut / "_stats").glob("*/*.parquet")) if (cut / "_stats").exists() else []
        if len(written) >= 5 or p.poll() is not None:
            break
        time.sleep(0.05)
    assert p.poll() is None, "the run ended before it could be killed"
    os.kill(p.pid, signal.SIGKILL)                    # the driver alone, mid-run
    p.wait()
    time.sleep(1)
    try:                                              # what it started is orphaned: reap it
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    before = _units(cut)
    assert 5 <= len(before) < len(expected)
    status = json.loads(next((cut / "_campaign").glob("*/status.json")).read_text()) \
        if list((cut / "_campaign").glob("*/status.json")) else {"state": "running"}
    assert status["state"] == "running"               # what `fuzzfarm status` shows as stale

    p = _fuzzfarm("run", "--resume", str(cut))
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    after = _units(cut)
    assert after.keys() == expected.keys()
    assert after == expected                          # the same inputs, the same verdicts
    assert {k: v for k, v in after.items() if k in before} == before   # kept, not redone
    # findings: exactly the rows the uninterrupted run has, per unit
    assert _finding_counts(cut) == _finding_counts(whole)
    res = CliRunner().invoke(main, ["status", str(cut), "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["state"] == "completed"
    res = CliRunner().invoke(main, ["run", "--resume", str(cut)])
    assert res.exit_code == 2 and "no unfinished campaign" in res.output


PLANTED = """\
name = "planted"
seed = 2
[unit]
inputs = 4096
timeout = "4s"
max_restarts = 6
[[jobs]]
functions = ["sinpi", "cospi"]
units = 4
"""


@pytest.mark.device
@pytest.mark.cluster
@pytest.mark.parametrize("kind", ["crash", "hang"])
def test_a_unit_that_kills_or_hangs_its_device_twice_is_a_device_fault(tmp_path, kind):
    """A planted fault in one unit: its actor is restarted twice, the unit is recorded
    once as a device fault with its inputs saved, every other unit completes."""
    spec = tmp_path / "planted.toml"
    spec.write_text(PLANTED)
    out = tmp_path / "res"
    bad = "cospi.binary32.w1-000002"
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(out), "--device", selector(),
                  env={"FUZZFARM_PLANT_FAULTS": json.dumps({kind: [bad]})})
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    units = _units(out)
    assert len(units) == 2 * 5
    faulty = [u for u in units if u.endswith(bad)]
    assert len(faulty) == 1 and units[faulty[0]] == (0, 0, 0)
    rows = ds.dataset(out).to_table().to_pylist()
    faults = [r for r in rows if r["severity"] == "fault"]
    assert [(r["unit_id"], r["rule_id"]) for r in faults] == [(faulty[0], f"device.{kind}")]
    saved = list((out / "_faults").glob("*/*.npz"))
    assert [s.stem for s in saved] == faulty
    import numpy as np

    from fuzzfarm.orchestrate.scheduler import Ticket
    from fuzzfarm.store.dataset import read_journal
    from fuzzfarm.work.make import make_inputs
    journal = next((out / "_campaign").glob("*/journal.jsonl"))
    spec = next(e["spec"] for e in read_journal(journal)
                if e.get("event") == "issue" and e["spec"]["unit_id"] == faulty[0])
    with np.load(saved[0]) as z:            # the saved inputs are the unit's own
        assert z["x"].shape == (4096,)
        assert np.array_equal(z["x"], make_inputs(Ticket.from_json(spec).unit)["x"])
    status = json.loads(next((out / "_campaign").glob("*/status.json")).read_text())
    assert status["units"]["faults"] == 1 and status["state"] == "completed"
    assert f"device fault: {faulty[0]}" in err


@pytest.mark.device
@pytest.mark.cluster
def test_a_kernel_that_does_not_build_and_an_enqueue_error_are_findings(tmp_path):
    """Planted on PoCL: cospi's program gets an #error line (a real build failure, with
    the compiler's log), and one sinpi unit launches a kernel whose argument is unset (a
    real CL_INVALID_KERNEL_ARGS from the driver).  The campaign finishes with status 0;
    exactly one fault finding each, carrying the source, log and error code; cospi gets no
    more units; every sinpi unit but the faulty one is checked; no temporary file is left."""
    spec = tmp_path / "planted.toml"
    spec.write_text(PLANTED)
    out = tmp_path / "res"
    bad = "sinpi.binary32.w1-000002"
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(out), "--device", selector(),
                  env={"FUZZFARM_PLANT_FAULTS": json.dumps({"build": ["cospi"],
                                                             "enqueue": [bad]})})
    stdout, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    assert "Traceback" not in err + stdout
    units = _units(out)
    sinpi = {u: v for u, v in units.items() if "-sinpi." in u}
    cospi = {u: v for u, v in units.items() if "-cospi." in u}
    assert len(sinpi) == 5 and all(v[0] > 0 for u, v in sinpi.items() if not u.endswith(bad))
    assert [v[0] for v in cospi.values()] == [0]            # one unit, then withdrawn
    rows = ds.dataset(out).to_table().to_pylist()
    faults = sorted((r for r in rows if r["severity"] == "fault"), key=lambda r: r["rule_id"])
    assert [(r["rule_id"], r["function"]) for r in faults] == [
        ("device.build_failure", "cospi"), ("device.enqueue_error", "sinpi")]
    build, enq = (json.loads(r["fault_detail"]) for r in faults)
    assert "planted build failure" in build["build_log"] and "cospi(" in build["kernel_source"]
    assert (build["error_code"], build["error_name"]) == (-11, "CL_BUILD_PROGRAM_FAILURE")
    assert (enq["error_code"], enq["error_name"]) == (-52, "CL_INVALID_KERNEL_ARGS")
    assert faults[1]["unit_id"].endswith(bad) and "sinpi(" in enq["kernel_source"]
    assert faults[0]["device"] and faults[0]["driver_version"]
    # no temporary file, no holder note; the directory's (empty) lock file stays
    assert [f.name for f in out.rglob("*") if f.name.startswith(".")] == [".fuzzfarm.lock"]
    status = json.loads(next((out / "_campaign").glob("*/status.json")).read_text())
    assert status["units"]["faults"] == 2 and status["state"] == "completed"
    res = CliRunner().invoke(main, ["findings", str(out), "--severity", "fault"],
                             env={"COLUMNS": "250"})
    assert res.exit_code == 0 and "2 device faults in 2 signatures" in res.output
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(tmp_path / "gate"),
                  "--device", selector(), "--fail-on-findings",
                  env={"FUZZFARM_PLANT_FAULTS": json.dumps({"build": ["sinpi", "cospi"]})})
    _, err = p.communicate(timeout=600)
    assert p.returncode == 1 and "Traceback" not in err    # faults alone fail the gate


@pytest.mark.parametrize("text, where", [
    ('name = "x"\n[[jobs]]\nfunctions = ["sinpi"]\nprecisions = ["quad"]\n',
     ":4: jobs[1].precisions"),
    ('name = "x"\n[budget]\ntime = "soon"\n[[jobs]]\nfunctions = ["sinpi"]\n',
     ":3: budget.time"),
    ('name = "x"\nfrobnicate = 1\n[[jobs]]\nfunctions = ["sinpi"]\n', ":2: frobnicate"),
    ('name = "x"\nseed = = 3\n[[jobs]]\nfunctions = ["sinpi"]\n', ":2: not valid TOML"),
    ('name = "x"\ndevices = ["no-such-device-xyz"]\n[budget]\ntime = "1m"\n'
     '[[jobs]]\nfunctions = ["sinpi"]\n', ":2: devices"),
])
def test_a_malformed_campaign_names_key_and_line_exits_2_writes_nothing(tmp_path, text,
                                                                        where):
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["run", "--campaign", str(spec), "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and where in lines[0], lines
    assert str(spec) in lines[0]
    assert not out.exists()                 # bad input leaves nothing behind (issue 30)


def test_campaign_options_that_conflict_exit_2(tmp_path):
    spec = tmp_path / "c.toml"
    spec.write_text('[[jobs]]\nfunctions = ["sinpi"]\nunits = 1\n')
    for args, words in ((["--functions", "sin"], "--functions cannot be combined"),
                        (["--resume", str(tmp_path)], "exclude each other"),
                        (["--device", "no-such-device-xyz"], "--device 'no-such-device-xyz'")):
        out = tmp_path / "fresh"
        res = CliRunner().invoke(main, ["run", "--campaign", str(spec), *args,
                                        "--out", str(out)])
        assert res.exit_code == 2 and words in res.output, res.output
        assert not out.exists(), args
    res = CliRunner().invoke(main, ["run", "--resume", str(tmp_path), "--device", "pocl"])
    assert res.exit_code == 2 and "--device cannot be combined with --resume" in res.output
    res = CliRunner().invoke(main, ["run", "--resume", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "no such results directory" in res.output
    res = CliRunner().invoke(main, ["status", str(tmp_path)])
    assert res.exit_code == 2 and "no campaign status" in res.output


@pytest.mark.device
def test_a_campaign_no_device_can_run_leaves_no_directory(tmp_path):
    """Refused once the devices are seen (a binary16 job where no selected device has
    cl_khr_fp16): exit 2, one line, and no --out directory left behind."""
    from devices import require_device, selector
    info = require_device()
    if info.has_fp16:
        pytest.skip("the device has cl_khr_fp16")
    spec = tmp_path / "c.toml"
    spec.write_text('[[jobs]]\nsource = "catalogue"\nfunctions = ["sinpi"]\n'
                    'precisions = ["binary16"]\n')
    out = tmp_path / "fresh"
    # its own process (it starts Ray, which would stay behind in this one)
    res = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(spec),
                          "--device", selector(), "--out", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "cl_khr_fp16" in res.stderr, res.stderr[-2000:]
    assert len([ln for ln in res.stderr.splitlines() if ln.startswith("Error")]) == 1
    assert not out.exists()


def test_status_reads_the_status_file_and_tells_a_silent_driver(tmp_path):
    from fuzzfarm.store import dataset as store
    run_id = "c-20260101T000000Z-abcdef"
    status = {"run_id": run_id, "campaign": "c", "state": "running", "updated": time.time(),
              "status_interval": 2.0, "elapsed_work": 12.0, "time_budget": 60.0,
              "units": {"done": 3, "issued": 5, "completed": 3, "retried": 1, "faults": 0},
              "devices": {"n1/fp/0": {"label": "dev A", "node": "n1", "alive": True,
                                      "units": 3, "inputs": 3000,
                                      "inputs_per_second": 250.0, "failures": 7,
                                      "notes": 1, "faults": 0, "given_up": None}},
              "faults": []}
    store.write_json(store.campaign_dir(tmp_path, run_id) / "status.json", status)
    res = CliRunner().invoke(main, ["status", str(tmp_path)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "running" in res.output and "dev A" in res.output and "not responding" not in res.output
    status["updated"] = time.time() - 120           # the driver went silent
    store.write_json(store.campaign_dir(tmp_path, run_id) / "status.json", status)
    res = CliRunner().invoke(main, ["status", str(tmp_path)], env={"COLUMNS": "200"})
    assert "driver not responding" in res.output and "--resume" in res.output
    res = CliRunner().invoke(main, ["status", str(tmp_path), "--json"])
    assert json.loads(res.output)["driver_responding"] is False
    (store.campaign_dir(tmp_path, run_id) / "status.json").write_text("{torn")
    res = CliRunner().invoke(main, ["status", str(tmp_path)])
    assert res.exit_code == 2 and "corrupt" in res.output


@pytest.mark.device
def test_node_declares_one_resource_per_device_and_checks_its_options():
    from cluster.placement import parse_resource
    from fuzzfarm.device.discovery import list_devices
    res = CliRunner().invoke(main, ["node", "--print-resources"])
    assert res.exit_code == 0, res.output
    resources = json.loads(res.output)
    fps = [d.fingerprint for d in list_devices()]
    assert sorted(parse_resource(r)[0] for r in resources) == sorted(fps)
    assert set(resources.values()) == {1.0}
    res = CliRunner().invoke(main, ["node", "--devices", "no-such-device-xyz"])
    assert res.exit_code == 2 and "no-such-device-xyz" in res.output
    res = CliRunner().invoke(main, ["node"])
    assert res.exit_code == 2 and "exactly one of --head" in res.output


def test_journal_survives_a_torn_last_line_and_rejects_a_corrupt_middle(tmp_path):
    from fuzzfarm.store import dataset as store
    path = tmp_path / "journal.jsonl"
    j = store.Journal(path)
    j.append({"event": "issue", "spec": {"unit_id": "a"}})
    j.close()
    with open(path, "ab") as fh:
        fh.write(b'{"event": "iss')                    # killed mid-line
    assert store.read_journal(path) == [{"event": "issue", "spec": {"unit_id": "a"}}]
    j = store.Journal(path)                           # resumed: the torn tail is cut off
    j.append({"event": "issue", "spec": {"unit_id": "b"}})
    j.close()
    assert [e["spec"]["unit_id"] for e in store.read_journal(path)] == ["a", "b"]
    with open(path, "ab") as fh:                      # damage that no crash makes
        fh.write(b'garbage\n{"event": "issue", "spec": {"unit_id": "c"}}\n')
    with pytest.raises(store.StoreError, match="line 3"):
        store.read_journal(path)


def test_resume_of_a_corrupt_campaign_is_one_line_exit_2(tmp_path):
    from fuzzfarm.store import dataset as store
    d = store.campaign_dir(tmp_path, "c-20260101T000000Z-abcdef")
    d.mkdir(parents=True)
    (d / "campaign.json").write_text("{not json")
    res = CliRunner().invoke(main, ["run", "--resume", str(tmp_path)])
    assert res.exit_code == 2 and "corrupt" in res.output and len(res.output.splitlines()) == 1
    (d / "campaign.json").write_text("{}")
    (d / "journal.jsonl").write_text('junk\n{"event": "issue"}\n')
    res = CliRunner().invoke(main, ["run", "--resume", str(tmp_path)])
    assert res.exit_code == 2 and "journal.jsonl" in res.output and "line 1" in res.output


def test_dashboard_without_its_packages_is_one_line_exit_2(tmp_path, monkeypatch):
    import ray._private.utils as ru
    monkeypatch.setattr(ru, "get_dashboard_dependency_error",
                        lambda: ImportError("No module named 'aiohttp'"))
    for args in (["run", "--budget", "5s", "--out", str(tmp_path / "r"), "--dashboard"],
                 ["node", "--head", "--dashboard"]):
        res = CliRunner().invoke(main, args)
        assert res.exit_code == 2 and "fuzzfarm[dashboard]" in res.output, res.output
        assert len(res.output.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


@pytest.mark.device
@pytest.mark.cluster
def test_a_saved_reproducer_input_is_replayed_first_in_a_later_run(tmp_path):
    """`fuzzfarm repro` saves its input in RESULTS/_hypothesis; the next campaign into
    RESULTS runs it first, in unit 0 of the function, where it fails again."""
    from fuzzfarm.report.repro import Case, db_dir, save_example
    out = tmp_path / "res"
    target = Case("sinpi", "binary32", 1, "", "CL.sinpi.positive_integer")
    save_example(db_dir(out), target, (0x4AFFFFFE,))            # 8388607.0f
    spec = tmp_path / "c.toml"
    spec.write_text('name = "replay"\nseed = 1\n[[jobs]]\nsource = "catalogue"\n'
                    'functions = ["sinpi", "cospi"]\n')
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(out), "--device", selector())
    _, err = p.communicate(timeout=600)
    assert p.returncode == 0, err[-3000:]
    rows = ds.dataset(out).to_table().to_pylist()
    first = [r for r in rows if r["function"] == "sinpi" and r["element"] == 0]
    assert [(r["input_bits"], r["rule_id"]) for r in first] == [
        ([0x4AFFFFFE], "CL.sinpi.positive_integer")]
    assert '"replay": [[1258291198]]' in first[0]["recipe"]
    cospi = [r for r in rows if r["function"] == "cospi" and r["element"] == 0]
    assert all(r["input_bits"] != [0x4AFFFFFE] for r in cospi)


CROSS = """\
name = "cross"
seed = 3
devices = [{devices}]
[[jobs]]
source = "catalogue"
functions = ["sinpi", "fract", "dot"]
precisions = ["binary16", "binary32"]
"""


@pytest.mark.device
@pytest.mark.cluster
def test_one_campaign_across_every_implementation_this_machine_has(tmp_path):
    """PoCL, and Intel's runtime and Oclgrind where their extras are installed: one
    dataset, and triage's matrix has a column for each.  A device without cl_khr_fp16
    runs the binary32 units only; a kernel a device cannot build is a fault finding."""
    from fuzzfarm.device.discovery import list_devices
    impls = {}
    for d in list_devices():
        impls.setdefault(d.platform_name, d)
    if len(impls) < 2:
        pytest.skip("one OpenCL implementation here (pip install 'fuzzfarm[intel,oclgrind]')")
    spec = tmp_path / "cross.toml"
    spec.write_text(CROSS.format(devices=", ".join(f'"{d.fingerprint}"'
                                                   for d in impls.values())))
    out = tmp_path / "res"
    p = _fuzzfarm("run", "--campaign", str(spec), "--out", str(out))
    _, err = p.communicate(timeout=900)
    assert p.returncode == 0 and "Traceback" not in err, err[-3000:]
    stats = ds.dataset(out / "_stats").to_table().to_pylist()
    assert {r["device_fingerprint"] for r in stats} == {d.fingerprint for d in impls.values()}
    from fuzzfarm.report import triage
    t = triage.compare(out, out)
    assert len(t.implementations) == len(impls)
    for d in impls.values():
        units = {r["function"] for r in stats if r["device_fingerprint"] == d.fingerprint
                 and r["precision"] == "binary16"}
        assert bool(units) == d.has_fp16, (d.label, units)
