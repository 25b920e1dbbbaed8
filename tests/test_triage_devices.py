"""Triage of one campaign run on two PoCL builds of one CPU (PyPI's PoCL 3.0 and Debian's
pocl-opencl-icd 3.1, where both are installed): the report pairs the two device names and
finds sinpi(+1.0f) = -0.0f failing on both."""
from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

pytestmark = [pytest.mark.device, pytest.mark.cluster]

CAMPAIGN = """\
name = "two-pocls"
seed = 8
[unit]
inputs = 16384
[[jobs]]
source = "catalogue"
functions = ["sinpi", "cospi", "sqrt", "fract"]
[[jobs]]
functions = ["sinpi"]
units = 1
"""


def _pocls():
    from fuzzfarm.device.discovery import list_devices
    seen = {}
    for d in list_devices():
        if "portable computing language" in d.platform_name.lower():
            seen.setdefault(d.fingerprint, d)
    return list(seen.values())


def test_triage_of_two_pocl_builds(tmp_path):
    pocls = _pocls()
    if len(pocls) < 2:
        pytest.skip("needs two PoCL builds (apt install pocl-opencl-icd beside PyPI's)")
    spec = tmp_path / "c.toml"
    spec.write_text(CAMPAIGN)
    outs = []
    for k, d in enumerate(pocls[:2]):
        out = tmp_path / f"set{k}"
        r = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(spec),
                            "--device", d.fingerprint, "--out", str(out)],
                           capture_output=True, text=True, timeout=600,
                           env={**os.environ, "COLUMNS": "200"})
        assert r.returncode == 0, r.stderr[-3000:]
        outs.append(out)
    report = tmp_path / "report"
    r = subprocess.run([sys.executable, "-m", "fuzzfarm", "triage", "--baseline", str(outs[0]),
                        "--current", str(outs[1]), "--out", str(report)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr[-3000:]
    md = (report / "report.md").read_text()
    names = sorted({pocls[0].name, pocls[1].name})
    if names[0] != names[1]:
        assert "Paired:" in md
    still = md.split("## Still failing", 1)[1].split("\n## ", 1)[0]
    assert "CL.sinpi.positive_integer" in still          # on both builds
    html = (report / "report.html").read_text()
    assert "data:image/png;base64," in html and "http://" not in html and \
        "https://" not in html
    suite = ET.parse(report / "junit.xml").getroot()
    assert suite.get("name") == "fuzzfarm-triage"
    names_fail = {c.get("name") for c in suite.iter("testcase") if c.find("failure") is not None}
    assert "CL.sinpi.positive_integer" in names_fail
