"""`fuzzfarm history` builds that the tool makes and runs: naming them, installing pip
builds into the cache (a stand-in pip: no download), each build's drivers and devices,
bisecting, the HTML report; and one short run of real driver builds (Intel's CPU runtime
of the `[intel]` extra, a library that is no driver)."""
import json
import math
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster import history as runner
from fuzzfarm.cli import main
from fuzzfarm.device import icd
from fuzzfarm.orchestrate import builds as specs
from fuzzfarm.orchestrate import campaign as campaigns
from fuzzfarm.report import history as hist
from test_history import planted_builds
from test_triage import unit

@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Builds and ICD folders go to a cache of the test's own, not the user's."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


INDEX = ["2023.2.0", "2024.0.0", "2024.0.1", "2024.1.0", "2025.0.0"]


def _index(runtime):
    assert runtime is specs.RUNTIMES["intel"]
    return list(INDEX)


# --------------------------------------------------------------------------- naming
def test_specs_in_order_with_ranges_from_the_index(tmp_path):
    (tmp_path / "res").mkdir()
    (tmp_path / "x.icd").write_text("/opt/x/libx.so\n")
    got = specs.parse(["intel==2024.0.1..2025.0.0", f"old={tmp_path / 'res'}",
                       "intel-opencl-rt==2023.2.0", f"x={tmp_path / 'x.icd'}"], _index)
    assert [b.label for b in got] == ["2024.0.1", "2024.1.0", "2025.0.0", "old", "2023.2.0", "x"]
    assert [b.kind for b in got] == ["pip", "pip", "pip", "results", "pip", "driver"]
    assert got[0].source == "pip intel-opencl-rt==2024.0.1 intel-cmplr-lib-rt==2024.0.1"
    assert got[3].source.startswith("results ")


@pytest.mark.parametrize("text, words", [
    ("amd==1.0", "unknown runtime 'amd'"),
    ("intel==2024.0.0..", "FIRST..LAST"),
    ("intel==2022.0.0..2024.1.0", "no release '2022.0.0'"),
    ("intel==2025.0.0..2024.0.0", "newer than"),
    ("v1", "LABEL=RESULTS_DIR"),
    ("v1=/nonexistent/dir", "does not exist"),
])
def test_a_bad_spec_is_one_line(text, words):
    with pytest.raises(specs.BuildError, match=words.replace(".", r"\.").replace("(", r"\(")):
        specs.parse([text], _index)


def test_a_label_given_twice(tmp_path):
    with pytest.raises(specs.BuildError, match="given twice"):
        specs.parse(["intel==2024.0.0", f"2024.0.0={tmp_path}"], _index)


# ------------------------------------------------------------------------- installing
FAKE_PIP = """
import sys
from pathlib import Path
args = sys.argv[1:]
prefix = Path(args[args.index("--prefix") + 1])
if any(a.endswith("==6.6.6") for a in args):
    print("WARNING: a warning pip gives", file=sys.stderr)
    print("ERROR: No matching distribution found for intel-opencl-rt==6.6.6", file=sys.stderr)
    sys.exit(1)
(prefix / "etc/OpenCL/vendors").mkdir(parents=True)
(prefix / "lib").mkdir()
# as Intel's wheels: the ICD file names the library where the wheel was built
(prefix / "etc/OpenCL/vendors/fake-cpu.icd").write_text("/opt/built/here/libfake.so\\n")
(prefix / "lib/libfake.so").write_bytes(b"")
(prefix.parent / "calls").open("a").write(" ".join(a for a in args if "==" in a) + "\\n")
"""


@pytest.fixture
def fake_pip(tmp_path):
    script = tmp_path / "pip.py"
    script.write_text(FAKE_PIP)
    return [sys.executable, str(script)]


def _pip_spec(version):
    return specs.BuildSpec(version, "pip", runtime=specs.RUNTIMES["intel"], version=version)


def test_install_once_into_the_cache_then_reuse(tmp_path, fake_pip):
    root = tmp_path / "cache"
    first = specs.install(_pip_spec("2024.0.0"), root, fake_pip)
    assert not first.reused and first.seconds > 0
    assert first.prefix == root / "intel-2024.0.0"
    again = specs.install(_pip_spec("2024.0.0"), root, fake_pip)
    assert again.reused and again.seconds == 0.0 and again.prefix == first.prefix
    assert (root / "calls").read_text().splitlines() == \
        ["intel-opencl-rt==2024.0.0 intel-cmplr-lib-rt==2024.0.0"]      # pip ran once
    folder = specs.driver_folder(_pip_spec("2024.0.0"), first.prefix)
    (entry,) = folder.glob("*.icd")
    assert entry.read_text().strip() == str(first.prefix / "lib" / "libfake.so")


def test_a_failed_install_says_why_and_leaves_nothing(tmp_path, fake_pip):
    root = tmp_path / "cache"
    with pytest.raises(specs.InstallFailed, match="No matching distribution"):
        specs.install(_pip_spec("6.6.6"), root, fake_pip)
    assert [p.name for p in root.iterdir() if not p.name.endswith(".lock")] == []


def test_driver_folders_of_an_icd_file_and_of_a_library(tmp_path):
    lib = tmp_path / "libdrv.so"
    lib.write_bytes(b"")
    (tmp_path / "good.icd").write_text(f"{lib}\n")
    (tmp_path / "bad.icd").write_text("/nonexistent/libgone.so\n")
    for spec in (specs.BuildSpec("a", "driver", path=tmp_path / "good.icd"),
                 specs.BuildSpec("b", "driver", path=lib)):
        (entry,) = specs.driver_folder(spec).glob("*.icd")
        assert entry.read_text().strip() == str(lib)
    with pytest.raises(specs.InstallFailed, match="libgone"):
        specs.driver_folder(specs.BuildSpec("c", "driver", path=tmp_path / "bad.icd"))


def test_the_environment_names_only_the_builds_folder(tmp_path):
    env = specs.environment(tmp_path, {"RAY_ADDRESS": "x:1", icd.MARKER: "y", "HOME": "/h"})
    assert env == {"HOME": "/h", "OCL_ICD_VENDORS": str(tmp_path)}
    empty = Path(specs.environment(None, {})["OCL_ICD_VENDORS"])
    assert empty.is_dir() and not list(empty.iterdir())


def _device(name, platform, driver, kind="CPU"):
    """A device as `fuzzfarm devices --json` describes it."""
    from fuzzfarm.device.discovery import DeviceInfo
    return DeviceInfo.from_dict({"index": 0, "platform_index": 0, "device_index": 0, "platform_name": platform,
            "platform_version": f"OpenCL 3.0 {platform}", "name": name, "vendor": platform,
            "version": "OpenCL 3.0", "driver_version": driver, "opencl_c_version": "OpenCL C 3.0",
            "profile": "FULL_PROFILE", "extensions": [], "half_fp_config": None,
            "single_fp_config": 6, "double_fp_config": 63, "device_type": kind}).to_dict()


def test_a_builds_devices_are_those_its_driver_adds():
    pocl = _device("pthread-AMD EPYC", "Portable Computing Language", "6.0")
    cpu = _device("AMD EPYC", "Intel(R) OpenCL", "2024.0")
    fpga = _device("Intel FPGA Emulation Device", "Intel(R) FPGA Emulation", "2024.0",
                   "ACCELERATOR")
    fp = {n: d["fingerprint"] for n, d in
          (("pocl", pocl), ("cpu", cpu), ("fpga", fpga))}
    assert specs.build_devices([pocl, cpu, fpga], [pocl], "all") == ((fp["cpu"], fp["fpga"]), "")
    assert specs.build_devices([pocl, cpu, fpga], [pocl], "cpu") == ((fp["cpu"],), "")
    assert specs.build_devices([pocl], [pocl], "all")[0] == ()
    fps, why = specs.build_devices([pocl, fpga], [pocl], "gpu")
    assert fps == () and "gpu" in why


# ----------------------------------------------------------------------------- bisect
@pytest.mark.parametrize("n", range(2, 21))
def test_bisect_order_finds_the_change_within_the_bound(n):
    bound = math.ceil(math.log2(n)) + 1
    for change in range(n):
        for before, after in (("pass", "fail"), ("fail", "pass")):
            states = [before] * change + [after] * (n - change)
            ran = []
            first, other, newest = runner.bisect_order(
                n, lambda i: ran.append(i) or states[i])
            assert (first, newest) == (change, after)
            assert other == (change - 1 if change else None)
            assert len(ran) <= bound and len(set(ran)) == len(ran)


def test_bisect_order_skips_untested_builds():
    states = ["pass", "untested", "pass", "pass", "untested", "fail", "fail", "fail"]
    first, other, newest = runner.bisect_order(len(states), lambda i: states[i])
    assert (first, other, newest) == (5, 3, "fail")
    assert runner.bisect_order(3, lambda i: "untested") == (None, None, "untested")


def test_restrict_keeps_each_jobs_seed():
    text = runner.DEFAULT_CAMPAIGN.read_text()
    full = campaigns.loads(text)
    one = campaigns.loads(runner.restrict(text, ("sinpi", "binary32", 1, "")))
    assert [j.seed for j in one.jobs] == [j.seed for j in full.jobs]
    assert [j.source for j in one.jobs] == [j.source for j in full.jobs]
    assert all(len(j.targets) == 1 and "sinpi" in str(j.targets[0]) for j in one.jobs)
    assert one.seed == full.seed and one.unit_inputs == full.unit_inputs
    assert "drift" in [j.source for j in one.jobs]
    # a conversion has no drift sample: the drift job is left out of its restriction
    conv = campaigns.loads(runner.restrict(text, ("convert_int_rte(float)", "binary32", 1,
                                                  "")))
    assert [j.source for j in conv.jobs] == [j.source for j in full.jobs
                                             if j.source != "drift"]


def test_a_history_through_one_front_end_runs_every_job_s_kernels_through_it():
    """--front-end spirv: every job of the campaign (not a sweep) through SPIR-V alone,
    each keeping its seed; the bisection's restriction and the replay of worst inputs keep
    the front end; no front end given leaves the campaign as it is."""
    plain = campaigns.loads(runner.campaign_text(None))
    spirv = campaigns.loads(runner.campaign_text(None, "spirv"))
    assert {t.front_end for j in plain.jobs for t in j.targets} == {"opencl-c"}
    assert {t.front_end for j in spirv.jobs for t in j.targets} == {"spirv"}
    assert [j.seed for j in spirv.jobs] == [j.seed for j in plain.jobs]
    assert [tuple(t)[:3] for j in spirv.jobs for t in j.targets] == \
        [tuple(t)[:3] for j in plain.jobs for t in j.targets]
    one = campaigns.loads(runner.restrict(spirv.text, ("sinpi", "binary32", 1, "")))
    assert {t.front_end for j in one.jobs for t in j.targets} == {"spirv"}
    replay = campaigns.loads(runner.replay_campaign(spirv.text, {
        ("sinpi", "binary32", 1, "", "spirv"): [(0x3F800000,)]}))
    assert {t.front_end for j in replay.jobs for t in j.targets} == {"spirv"}


def _series(tmp_path, n, first_failing, rule="CL.sinpi.positive_integer"):
    """Results of n builds: sinpi passes before ``first_failing``, fails from it on;
    cospi passes throughout."""
    out = []
    for k in range(n):
        d = tmp_path / f"b{k}"
        unit(d, f"run{k}", "sinpi", [(rule, {})] if k >= first_failing else [], driver=f"{k}")
        unit(d, f"run{k}", "cospi", driver=f"{k}")
        out.append(f"r{k:02d}={d}")
    return out


def test_bisect_over_results_builds_through_the_cli(tmp_path):
    base = ["history", "--out", str(tmp_path / "rep")]
    for b in _series(tmp_path, 9, 6):
        base += ["--build", b]
    res = CliRunner().invoke(main, [*base, "--bisect", "sinpi/binary32/CL.sinpi"])
    assert res.exit_code == 0, res.output
    assert "fails from r06 on; r05 does not (introduced in r06)" in res.output
    doc = json.loads((tmp_path / "rep" / "bisect.json").read_text())
    assert (doc["first"], doc["last_other"], doc["newest_state"]) == ("r06", "r05", "fail")
    assert len(doc["probes"]) <= doc["bound"] == 5
    assert "Builds run, in order" in (tmp_path / "rep" / "bisect.md").read_text()
    # cospi never fails: the newest build passes, and so does every build probed
    res = CliRunner().invoke(main, [*base, "--bisect", "cospi/binary32"])
    assert res.exit_code == 0 and "no change in this range" in res.output
    # a rule class the failure is not of: never "fail"
    res = CliRunner().invoke(main, [*base, "--bisect", "sinpi/binary32/ulp"])
    assert res.exit_code == 0 and "passes" in res.output


def test_bisect_an_accuracy_change_through_the_cli(tmp_path):
    """--max-ulp-above: the first build whose maximum on the campaign's inputs is above
    the threshold, within ceil(log2 N) + 1 builds run; bisect.md/json give each probe's
    maximum and the input that attains it."""
    base = ["history", "--out", str(tmp_path / "rep")]
    for k in range(9):
        d = tmp_path / f"b{k}"
        worse = k >= 5                   # from r05 on: 2.4 ULP at x = 2.0, else 0.8 at 1.0
        unit(d, f"run{k}", "cos", max_ulp=2.4 if worse else 0.8,
             max_inputs=[0x40000000 if worse else 0x3F800000], driver=f"{k}")
        unit(d, f"run{k}", "exp", max_ulp=0.5, max_inputs=[0x3F000000], driver=f"{k}")
        base += ["--build", f"r{k:02d}={d}"]
    res = CliRunner().invoke(main, [*base, "--bisect", "cos/binary32", "--max-ulp-above",
                                    "2"])
    assert res.exit_code == 0, res.output
    assert "cos binary32 w1 ULP maximum: is above 2 ULP from r05 on; r04 does not" in \
        res.output
    doc = json.loads((tmp_path / "rep" / "bisect.json").read_text())
    assert (doc["first"], doc["last_other"], doc["max_ulp_above"]) == ("r05", "r04", 2.0)
    assert len(doc["probes"]) <= doc["bound"] == 5
    for p in doc["probes"]:
        above = int(p["label"][1:]) >= 5
        assert p["state"] == ("fail" if above else "pass")
        assert p["max_ulp"] == (2.4 if above else 0.8)
        assert p["worst_inputs"] == [0x40000000 if above else 0x3F800000]
    assert "0x40000000" in (tmp_path / "rep" / "bisect.md").read_text()
    # a maximum that never comes above it: nothing changes in the range
    res = CliRunner().invoke(main, [*base, "--bisect", "exp/binary32", "--max-ulp-above",
                                    "1"])
    assert res.exit_code == 0 and "no change in this range" in res.output
    # without --bisect, or with a rule class: one line, exit 2
    for extra in (["--max-ulp-above", "2"],
                  ["--bisect", "cos/binary32/ulp", "--max-ulp-above", "2"]):
        res = CliRunner().invoke(main, [*base, *extra])
        assert res.exit_code == 2 and "--max-ulp-above" in res.output, res.output


def test_bisect_the_accuracy_row_of_an_earlier_history(tmp_path):
    """history.json gives each target's ULP maximum an id (store.signatures.accuracy_id);
    ``--bisect ID --max-ulp-above X`` bisects that target's maximum, the id without a
    threshold is one line naming --max-ulp-above, an id of no row another."""
    out, builds = tmp_path / "rep", []
    for k in range(5):
        d = tmp_path / f"b{k}"
        worse = k >= 3                   # from r03 on: 2.4 ULP, else 0.8
        unit(d, f"run{k}", "cos", max_ulp=2.4 if worse else 0.8,
             max_inputs=[0x40000000 if worse else 0x3F800000], driver=f"{k}")
        builds += ["--build", f"r{k:02d}={d}"]
    args = ["history", "--out", str(out), "--no-replay", *builds]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    (row,) = [r for r in json.loads((out / "history.json").read_text())["ulp_max"]
              if r["function"] == "cos"]
    assert row["id"].startswith("a") and row["changed"]
    assert row["id"] in (out / "history.md").read_text()
    res = CliRunner().invoke(main, [*args, "--bisect", row["id"], "--max-ulp-above", "2"])
    assert res.exit_code == 0, res.output
    assert "cos binary32 w1 ULP maximum: is above 2 ULP from r03 on; r02 does not" in \
        res.output
    res = CliRunner().invoke(main, [*args, "--bisect", row["id"]])
    assert res.exit_code == 2 and "--max-ulp-above" in res.output, res.output
    res = CliRunner().invoke(main, [*args, "--bisect", "a000000000000", "--max-ulp-above",
                                    "2"])
    assert res.exit_code == 2 and "no such ULP maximum" in res.output, res.output


def test_bisect_by_an_issue_of_an_earlier_history(tmp_path):
    series = _series(tmp_path, 4, 2)
    out = tmp_path / "rep"
    args = ["history", "--out", str(out), *[a for b in series for a in ("--build", b)]]
    assert CliRunner().invoke(main, args).exit_code == 0
    iss = json.loads((out / "history.json").read_text())["issues"][0]
    assert iss["introduced_in"] == "r02"
    assert runner.bisect_target(iss["issue"], out) == \
        (("sinpi", "binary32", 1, ""), "CL.sinpi.positive_integer")
    res = CliRunner().invoke(main, [*args, "--bisect", iss["issue"]])
    assert res.exit_code == 0 and "introduced in r02" in res.output
    for what, words in (("i-nothing", "no such issue"), ("sinpi/quad", "no history.json")):
        res = CliRunner().invoke(main, [*args, "--bisect", what, "--out", str(tmp_path / "o")
                                        if what == "sinpi/quad" else str(out)])
        assert res.exit_code == 2 and words in res.output, res.output


# ---------------------------------------------------------------------------- report
def test_same_inputs_compares_the_targets_both_builds_tested(tmp_path):
    """A build with cl_khr_fp16 runs binary16 units besides: still the same inputs for
    the targets both ran; a target whose unit seeds differ is not."""
    def build(label, **units):
        d = tmp_path / label
        for fn, (prec, seed) in units.items():
            unit(d, f"run-{label}", fn, precision=prec, seed=seed, max_ulp=1.0)
        return hist.Build(label, d)
    a = build("a", cos=("binary32", 1))
    b = build("b", cos=("binary32", 1), exp=("binary16", 7))
    c = build("c", cos=("binary32", 2))
    assert hist.history([a, b]).same_inputs
    assert not hist.history([a, b, c]).same_inputs


def test_the_html_report_is_self_contained(tmp_path):
    builds = [replace(b, source="pip x", install_s=12.5, reused=False, run_s=100.0)
              if b.ran else b for b in planted_builds(tmp_path)]
    paths = hist.write(hist.history(builds), tmp_path)
    page = (tmp_path / "history.html").read_text()
    assert [p.name for p in paths] == ["history.md", "history.html", "history.json"]
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "<td class='fail'>FAIL 1</td>" in page and "<td class='untested'>--</td>" in page
    assert "data:image/png;base64," in page                 # cos's maximum changed
    assert "12.5 s, 100.0 s" in page
    doc = json.loads((tmp_path / "history.json").read_text())
    assert doc["builds"][0]["install_seconds"] == 12.5
    assert doc["builds"][3]["status"] == "install failed"


def test_worst_inputs_of_the_changed_targets_and_their_replay(tmp_path):
    """Each build's input of its largest error, for the targets whose maximum changed;
    the replay campaign runs those targets' special-value units; the replayed maxima
    are reported beside the campaign's."""
    def build(label, cos_ulp, cos_at, exp_at):
        d = tmp_path / label
        unit(d, f"run-{label}", "cos", max_ulp=cos_ulp, max_inputs=[cos_at], serial=1)
        unit(d, f"run-{label}", "cos", max_ulp=0.5, max_inputs=[0x3F000000], serial=2)
        unit(d, f"run-{label}", "exp", max_ulp=1.0, max_inputs=[exp_at])
        return hist.Build(label, d)
    h = hist.history([build("a", 1.0, 0x3F800000, 1), build("b", 2.5, 0x40000000, 2)])
    worst = hist.worst_inputs(h)
    assert worst == {("cos", "binary32", 1, "", "opencl-c"):    # exp: the same maximum
                     [(0x3F800000,), (0x40000000,)]}
    text = runner.replay_campaign(runner.DEFAULT_CAMPAIGN.read_text(), worst)
    c = campaigns.loads(text)
    assert [(j.source, [(t.name, t.precision) for t in j.targets]) for j in c.jobs] == \
        [("catalogue", [("cos", "binary32")])]
    # one job of every function and precision: a build without binary16 runs the rest
    two = campaigns.loads(runner.replay_campaign(runner.DEFAULT_CAMPAIGN.read_text(), {
        ("cos", "binary16", 1, "", "opencl-c"): [(1,)],
        ("exp", "binary64", 1, "", "opencl-c"): [(2,)]}))
    assert len(two.jobs) == 1 and {(t.name, t.precision) for t in two.jobs[0].targets} >= \
        {("cos", "binary16"), ("exp", "binary64")}
    again = [build("a2", 2.5, 0x40000000, 1), build("b2", 2.5, 0x40000000, 2)]
    again = [replace(b, label=lab) for b, lab in zip(again, "ab")]
    r = hist.with_replayed(h, again)
    (t,) = r.replayed
    assert t[1] == "cos" and r.replayed[t] == [2.5, 2.5]
    md = hist.markdown(r)
    assert "every build's worst inputs replayed on each" in md
    doc = hist.to_json(r)
    cos = next(x for x in doc["ulp_max"] if x["function"] == "cos")
    assert cos["by_build"] == [1.0, 2.5] and cos["replayed_by_build"] == [2.5, 2.5]
    # the same inputs give one maximum on both builds: no change of the driver's
    assert cos["changed"] and cos["confirmed_on_same_inputs"] is False
    assert "## ULP maximum per target, where it changed (0)" in md
    assert "Not confirmed on the same inputs, not shown: cos binary32 w1" in md
    page = hist.write_html(r, tmp_path / "h.html").read_text()
    assert "No target's ULP maximum changed between builds." in page
    # where the same inputs do differ, the change is shown
    worse = [build("a3", 1.0, 0x3F800000, 1), build("b3", 2.5, 0x40000000, 2)]
    worse = [replace(b, label=lab) for b, lab in zip(worse, "ab")]
    r2 = hist.with_replayed(h, worse)
    assert hist.confirmed(r2, t) is True
    assert "## ULP maximum per target, where it changed (1)" in hist.markdown(r2)
    assert "1 of the 1 targets whose maximum changed" in \
        hist.write_html(r2, tmp_path / "h2.html").read_text()


def test_a_history_of_one_build_against_itself_reports_no_change(tmp_path):
    d = tmp_path / "one"
    unit(d, "run-1", "cos", max_ulp=1.5, max_inputs=[0x3F800000], serial=1)
    unit(d, "run-1", "exp", max_ulp=0.75, max_inputs=[0x3F000000])
    h = hist.history([hist.Build("x", d), hist.Build("x-again", d)])
    assert hist.changed_targets(h) == [] and hist.worst_inputs(h) == {}
    assert "## ULP maximum per target, where it changed (0)" in hist.markdown(h)
    assert not any(x["changed"] for x in hist.to_json(h)["ulp_max"])


def test_a_device_renamed_by_a_release_is_one_device(tmp_path):
    """PoCL 3.1 calls the CPU PoCL 3.0 called "pthread-X" "pthread-skylake-avx512-X":
    builds of one model each are read as one device, so a fix is a fix, not an issue
    that stops being tested and another that starts."""
    a, b = tmp_path / "a", tmp_path / "b"
    unit(a, "r1", "sinpi", [("CL.sinpi.positive_integer", {"device": "pthread-X"})],
         device="pthread-X")
    unit(b, "r2", "sinpi", device="pthread-skylake-avx512-X")
    h = hist.history([hist.Build("3.0", a), hist.Build("3.1", b)])
    (row,) = [i for i in h.issues if i.function == "sinpi"]
    assert row.states == ("fail", "pass") and row.fixed == "3.1"
    assert h.renamed == {"3.0": "pthread-X"}
    assert "named differently" in hist.markdown(h)
    assert hist.to_json(h)["builds"][0]["device_as_named"] == "pthread-X"


# ----------------------------------------------------------------- real driver builds
INTEL_LIB = Path(sys.prefix, "lib", "libintelocl.so")
TINY = """name = "tiny"
seed = 3
[unit]
inputs = 1024
[[jobs]]
source = "catalogue"
functions = ["sinpi"]
precisions = ["binary16", "binary32"]
"""


@pytest.mark.device
@pytest.mark.skipif(not INTEL_LIB.exists(), reason="needs the [intel] extra")
def test_driver_builds_run_in_their_own_processes(tmp_path, monkeypatch):
    """Intel's CPU runtime of this environment as a driver build, a file that is no
    driver, and a pip release that does not exist (pip fails, online or not)."""
    (tmp_path / "c.toml").write_text(TINY)
    junk = tmp_path / "libjunk.so"
    junk.write_bytes(b"not a library")
    out = tmp_path / "rep"
    # a process of its own, as a user runs it: Ray started in this test process would
    # stay behind in it for the tests after
    res = subprocess.run([
        sys.executable, "-m", "fuzzfarm", "history", "--campaign", str(tmp_path / "c.toml"),
        "--out", str(out), "-j", "2", "--build", f"intel={INTEL_LIB}",
        "--build", f"junk={junk}", "--build", "intel==0.0.1"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "PIP_RETRIES": "0", "PIP_TIMEOUT": "5"})
    assert res.returncode == 0, res.stdout + res.stderr[-3000:]
    doc = json.loads((out / "history.json").read_text())
    rows = {b["label"]: b for b in doc["builds"]}
    assert rows["intel"]["status"] == "ran" and rows["intel"]["drivers"]
    assert rows["intel"]["campaign_seconds"] > 0
    assert rows["junk"]["status"] == "no device"
    assert rows["0.0.1"]["status"] == "install failed" and rows["0.0.1"]["detail"]
    assert (out / "builds" / "intel" / "_stats").is_dir()
    assert not (out / "builds" / "junk").exists()
    assert not [p for p in (out / "builds").iterdir() if p.name.startswith(".")]
    assert os.environ.get("OCL_ICD_VENDORS") != str(tmp_path)      # this process untouched
