"""Logs for machines (issue 18, item 6): with stdout not a terminal, `run` and `sweep`
write one concise line per event (time, what, key=value), no tables and no escape codes;
`--log-format json` writes JSON lines; `--quiet` keeps the start, warnings and the end."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from devices import selector
from fuzzfarm.cli import main
from fuzzfarm.orchestrate.progress import LineLog, resolve

ROOT = Path(__file__).resolve().parent.parent
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ ")


def test_resolve_and_line_forms(capsys):
    class Tty:
        def isatty(self):
            return True

    assert resolve("auto", Tty()) == "rich" and resolve("text", Tty()) == "text"
    import io
    assert resolve("auto", io.StringIO()) == "text"
    with pytest.raises(ValueError):
        resolve("xml")
    log = LineLog("text", every=0)
    log.progress(units=3, inputs=1234, rate=4.5e6)
    log.print("[yellow]pocl [abc]: actor crashed; restarting[/]")
    lines = capsys.readouterr().err.splitlines()
    assert STAMP.match(lines[0]) and lines[0].endswith("progress units=3 inputs=1234 rate=4500000")
    assert lines[1].endswith("pocl [abc]: actor crashed; restarting") and "[/]" not in lines[1]
    quiet = LineLog("json", quiet=True, every=0)
    quiet.progress(units=1)
    quiet.event("end", status="completed")
    (only,) = capsys.readouterr().err.splitlines()
    assert json.loads(only)["event"] == "end"


@pytest.mark.device
def test_a_run_with_stdout_to_a_file_writes_a_line_log(tmp_path):
    """`fuzzfarm run ... > log` (its own process: Ray is started and stopped there)."""
    log = tmp_path / "run.log"
    with open(log, "w") as fh:
        p = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "-f", "sinpi", "-b", "12s",
                            "--out", str(tmp_path / "res"), "-d", selector()],
                           cwd=ROOT, stdout=fh, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    output = log.read_text()
    lines = output.splitlines()
    assert lines and all(STAMP.match(ln) for ln in lines), lines
    assert "\x1b[" not in output and "┃" not in output and "│" not in output
    events = [ln.split(" ", 2)[1] for ln in lines]
    assert "progress" in events and events[-1] == "end"
    end = dict(kv.split("=", 1) for kv in lines[-1].split(" ")[2:])
    assert end["status"] == "completed" and int(end["failures"]) > 0   # sinpi(n) on PoCL
    assert 0 < float(end["first_failure_s"]) <= 12 + 10       # within the budget and end


@pytest.mark.device
def test_a_sweep_writes_json_lines_and_quiet_keeps_the_end(tmp_path):
    out = str(tmp_path / "res")
    res = CliRunner().invoke(main, ["sweep", "exp", "--chunk-bits", "16", "--chunks", "2",
                                    "--out", out, "-d", selector(), "--log-format", "json"])
    assert res.exit_code == 0, res.output
    recs = [json.loads(ln) for ln in res.output.splitlines()]
    assert [r["event"] for r in recs][0] == "sweep" and recs[-1]["event"] == "end"
    assert recs[-1]["inputs"] == 2 << 16
    q = CliRunner().invoke(main, ["sweep", "exp", "--chunk-bits", "16", "--chunks", "1",
                                  "--out", out, "-d", selector(), "--quiet"])
    assert q.exit_code == 0 and [ln.split(" ")[1] for ln in q.output.splitlines()] == ["sweep", "end"]
