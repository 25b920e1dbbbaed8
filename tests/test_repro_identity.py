"""Reproducers that cannot lie (issue 30, item 1): a reproducer runs on the finding's own
device and driver unless told otherwise, finds a runtime pip installed without help, and
never says "fixed" on another device or driver.  The scenario of the issue: a finding on
Intel's CPU runtime (the `[intel]` extra, device "AMD EPYC ...") with PyPI's PoCL beside
it, whose device "pthread-AMD EPYC ..." contains the first's name."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from devices import pypi_pocl
from fuzzfarm.cli import main
from fuzzfarm.store import dataset as store
from test_repro import _c_toolchain_or_skip, tiny_campaign

pytestmark = pytest.mark.device


@pytest.fixture(scope="module")
def pair():
    """(Intel's CPU device, PyPI's PoCL) where the second's name contains the first's."""
    from fuzzfarm.device.discovery import list_devices
    intel = next((d for d in list_devices()
                  if "intel" in d.platform_name.lower() and d.device_type == "CPU"), None)
    pocl = pypi_pocl()
    if intel is None or pocl is None:
        pytest.skip("needs Intel's CPU runtime (the [intel] extra) and PyPI's PoCL")
    if intel.name.strip() not in pocl.name:
        pytest.skip(f"PoCL's device {pocl.name!r} does not contain {intel.name!r} here")
    return intel, pocl


@pytest.fixture(scope="module")
def exported(pair, tmp_path_factory):
    """A reproducer of an Intel finding (lgamma_r's pole sign: Intel fails it in every
    release since 2024.0), exported by `fuzzfarm repro`."""
    intel, _ = pair
    tmp = tmp_path_factory.mktemp("identity")
    res = tmp / "res"
    tiny_campaign(res, intel, "lgamma_r", serials=(0,))
    rows = [r for r in store.read_findings(res).to_pylist() if r["severity"] == "fail"]
    if not rows:
        pytest.skip("this Intel release passes lgamma_r's special values")
    row = rows[0]
    out = tmp / "repro"
    r = CliRunner().invoke(main, ["repro", f"{row['run_id']}/{row['unit_id']}#{row['element']}",
                                  str(res), "--out", str(out), "--max-examples", "20",
                                  "--device", str(intel.index)])
    if r.exit_code == 1:
        pytest.skip(f"not reproducible here: {r.output}")
    assert r.exit_code == 0, r.output
    return out


def _clean_env() -> dict:
    """This environment without OCL_ICD_VENDORS: a user who set nothing."""
    return {k: v for k, v in os.environ.items()
            if k not in ("OCL_ICD_VENDORS", "FUZZFARM_ICD_VENDORS", "FUZZFARM_REPRO_DEVICE")}


def _py(out: Path, *args, script="repro.py"):
    return subprocess.run([sys.executable, str(out / script), *args], cwd=out,
                          capture_output=True, text=True, timeout=300, env=_clean_env())


def test_the_python_reproducer_finds_its_device_and_never_says_fixed_elsewhere(pair, exported):
    intel, pocl = pair
    spec = json.loads((exported / "repro.json").read_text())
    assert spec["icd_files"] and (exported / spec["icd_files"][0]).is_file()
    # no argument, no OCL_ICD_VENDORS: the shipped ICD files find Intel's pip runtime
    r = _py(exported)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"device: {intel.name.strip()}" in r.stdout and "BUG:" in r.stdout
    # a term both names contain, as in the issue: the finding's device is chosen
    r = _py(exported, intel.name.strip())
    assert r.returncode == 1 and "other device" not in r.stdout, r.stdout + r.stderr
    # PoCL by its own name: whatever its result, "other device", never "fixed"
    r = _py(exported, "pthread")
    assert r.returncode in (1, 3), r.stdout + r.stderr
    assert "other device" in r.stdout and "(fixed)" not in r.stdout
    # the same device under another driver version: "other driver", never "fixed" --
    # neither when the result stands nor when it is acceptable there
    text = (exported / "repro.py").read_text()
    other = text.replace(f"DRIVER = {spec['device']['driver_version']!r}",
                         "DRIVER = '0.0.0-not-this-one'")
    assert other != text
    (exported / "other.py").write_text(other)
    r = _py(exported, script="other.py")
    assert r.returncode == 1 and "BUG (other driver)" in r.stdout, r.stdout + r.stderr
    accepting = other.replace("ACCEPT = [", "ACCEPT = [{'kind': 'differs', 'values': []},", 1)
    (exported / "accepting.py").write_text(accepting)
    r = _py(exported, script="accepting.py")
    assert r.returncode == 3 and "OK (other driver)" in r.stdout, r.stdout + r.stderr
    assert "(fixed)" not in r.stdout
    # a device that is not here: exit 2, the devices that are, one line
    r = _py(exported, "no-such-device-xyz")
    assert r.returncode == 2 and "devices here:" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_c_reproducer_likewise(pair, exported):
    intel, _ = pair
    exe = _c_toolchain_or_skip(exported)
    run = lambda *a: subprocess.run([str(exe), *a], cwd=exported, capture_output=True,  # noqa: E731
                                    text=True, timeout=300, env=_clean_env())
    r = run()
    assert r.returncode == 1 and f"device: {intel.name.strip()}" in r.stdout, r.stdout + r.stderr
    r = run("pthread")
    assert r.returncode in (1, 3) and "other device" in r.stdout, r.stdout + r.stderr
    assert "(fixed)" not in r.stdout
    r = run("no-such-device-xyz")
    assert r.returncode == 2 and "devices here:" in r.stderr
    assert shutil.which("gcc")
