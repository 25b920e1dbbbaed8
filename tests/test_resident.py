"""``fuzzfarm serve``: a resident process holding one device for ``fuzzfarm sweep``
(fuzzfarm.orchestrate.resident).

Host-only: the request a client sends, the arguments it rebuilds, the code stamp, the
stream the server writes a sweep's output through, and a client with no server.  On a
device (PyPI's PoCL is enough): a sweep through a server prints and stores what it does in
its own process; bad input, a planted build failure, a Ctrl-C, a busy server, a client
running other code, a second server of a device, an idle server, and a server killed in
the middle of a sweep.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from fuzzfarm.cli import _argv, main
from fuzzfarm.orchestrate import resident as rs

ROOT = Path(__file__).resolve().parent.parent


# --------------------------------------------------------------------------- host only
def test_rebuilt_arguments_give_the_same_parameters():
    sweep = main.commands["sweep"]
    args = ["sin", "-p", "binary16", "-d", "pocl", "-o", "out dir", "--build-options",
            "-cl-denorms-are-zero -cl-fast-relaxed-math", "-j", "3", "--chunk-bits", "18",
            "--chunks", "7", "--screen", "host", "--front-end", "spirv", "--log-format",
            "json", "--quiet"]
    for given in (args, ["cos"]):
        ctx = sweep.make_context("sweep", list(given))
        again = _argv(ctx)
        assert again[0] == "sweep"
        assert sweep.make_context("sweep", again[1:]).params == ctx.params


def test_a_request_survives_the_wire():
    r = rs.Request(("sweep", "sin", "-d", "0"), "0", None, "/tmp", "abc", {"POCL_X": "1"},
                   {"FUZZFARM_PLANT_FAULTS": "{}"}, (True, False))
    assert rs.Request.from_message(json.loads(json.dumps({"sweep": r.__dict__}))) == r
    with pytest.raises(ValueError, match="not a sweep request"):
        rs.Request.from_message({"ping": True})
    with pytest.raises(ValueError, match="not a sweep request"):
        rs.Request.from_message({"sweep": {"argv": []}})


def test_the_code_stamp_follows_every_file(tmp_path, monkeypatch):
    pkg = tmp_path / "stampedpkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "rules.toml").write_text("a = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(rs, "_PACKAGES", ("stampedpkg",))
    first = rs.code_stamp()
    assert rs.code_stamp() == first
    (pkg / "sub" / "rules.toml").write_text("a = 10\n")      # data, not only code
    second = rs.code_stamp()
    assert second != first
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert rs.code_stamp() == second                          # bytecode is not code


def test_the_stream_takes_text_only_and_sends_it_as_lines():
    a, b = socket.socketpair()
    out = rs._Stream(a, "out", True, threading.Lock())
    with pytest.raises(TypeError):          # click's probe for a binary stream
        out.write(b"")
    assert out.write("é\n") == 2 and out.isatty() and out.encoding == "utf-8"
    a.close()
    assert json.loads(b.makefile("rb").readline()) == {"out": "é\n"}
    out.write("a client gone: nothing raised")
    b.close()


def test_without_a_server_the_sweep_runs_here(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    argv = ["sweep", "sin"]
    assert rs.forward(argv, None, None) is None                  # no folder
    folder = tmp_path / "fuzzfarm"
    folder.mkdir()
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)   # a killed server's socket
    left.bind(str(folder / "0123456789ab.sock"))
    left.close()
    assert rs.forward(argv, None, None) is None
    assert rs.server_lines() == [f"no fuzzfarm server listens in {folder}"]
    monkeypatch.setenv(rs.NO_SERVER_ENV, "1")
    assert rs.forward(argv, None, None) is None


def test_serve_says_what_is_wrong_in_one_line(tmp_path, monkeypatch):
    from click.testing import CliRunner
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    r = CliRunner().invoke(main, ["serve", "--idle", "5x"])
    assert r.exit_code == 2
    assert r.output == "Error: --idle '5x' is not a duration; write e.g. 90s, 5m, 2h or 1h30m\n"
    r = CliRunner().invoke(main, ["serve", "--list"])
    assert r.exit_code == 0
    assert r.output == f"no fuzzfarm server listens in {tmp_path / 'fuzzfarm'}\n"


# --------------------------------------------------------------------------- a device
pyopencl = pytest.importorskip("pyopencl", reason="pyopencl is not installed")
from devices import require_device, selector  # noqa: E402


def _env(**extra) -> dict:
    env = {**os.environ, **extra}
    env.pop(rs.NO_SERVER_ENV, None)
    return env


def _fuzzfarm(*args, env=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fuzzfarm", *args], cwd=ROOT,
                          capture_output=True, text=True, env=env or _env(), timeout=300,
                          **kw)


class Server:
    """``fuzzfarm serve -d <the test device>`` in a child process, listening."""

    def __init__(self, *args):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "fuzzfarm", "serve", "-d", selector(), *args], cwd=ROOT,
            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.first = self.proc.stdout.readline()        # "... serving sweeps on ..."
        assert "serving sweeps" in self.first, self.first + self.proc.stdout.read()

    def log(self) -> str:
        self.stop()
        return self.first + self.proc.stdout.read()

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=120)


@pytest.fixture(scope="module")
def server():
    require_device()
    s = Server("--idle", "10m")
    yield s
    s.stop()


@pytest.fixture
def own_folder(tmp_path, monkeypatch):
    """A server folder of the test's own, beside the module's server (one per device)."""
    require_device()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))


def _long_sweep(out: Path) -> subprocess.Popen:
    """``fuzzfarm sweep cos`` in chunks of 2^16 (65,536 of them: it runs until stopped),
    started; its JSON lines on ``stdout``, the ``sweep`` event read."""
    client = subprocess.Popen(
        [sys.executable, "-m", "fuzzfarm", "sweep", "cos", "-d", selector(), "--chunk-bits",
         "16", "-o", str(out), "--log-format", "json"],
        cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert '"event": "sweep"' in client.stdout.readline()
    return client


def _meta(out: Path) -> dict:
    return json.loads(next((out / "_runs").glob("*.json")).read_text())


def _events(stdout: str) -> list:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


@pytest.mark.device
def test_a_sweep_through_the_server_is_the_sweep_here(server, tmp_path):
    args = ["sweep", "exp2", "-d", selector(), "--chunk-bits", "16", "--chunks", "3",
            "--log-format", "json"]
    there = _fuzzfarm(*args, "-o", str(tmp_path / "there"))
    here = _fuzzfarm(*args, "-o", str(tmp_path / "here"), "--here")
    assert there.returncode == here.returncode == 0, there.stderr + here.stderr
    assert [rs.ping_servers()[0]["pid"]] == [server.proc.pid]
    a, b = _meta(tmp_path / "there"), _meta(tmp_path / "here")
    for key in ("run_id", "inputs", "failures_by_rule", "notes_by_rule", "screened", "exact",
                "unjudged", "max_ulp_error", "max_ulp_inputs", "status", "screen"):
        assert a.get(key) == b.get(key), key
    assert a["inputs"] == 3 << 16
    ends = [[e for e in _events(r.stdout) if e["event"] == "end"] for r in (there, here)]
    for e in ends:
        e[0].pop("time"), e[0].pop("seconds")
    assert ends[0] == ends[1] and len(ends[0]) == 1
    # the same run resumed through the server: the next chunks, none done twice
    again = _fuzzfarm(*args, "-o", str(tmp_path / "there"))
    assert again.returncode == 0 and _meta(tmp_path / "there")["inputs"] == 6 << 16


@pytest.mark.device
def test_bad_input_and_a_planted_build_failure_come_back_as_they_would(server, tmp_path):
    bad = _fuzzfarm("sweep", "nosuch", "-d", selector(), "-o", str(tmp_path / "a"))
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines() == [
        "Error: sweep: unknown built-in 'nosuch'; `fuzzfarm catalogue` lists them"]
    args = ["sweep", "tan", "-d", selector(), "--chunk-bits", "16", "--chunks", "1",
            "--log-format", "json"]
    planted = _fuzzfarm(*args, "-o", str(tmp_path / "b"),
                        env=_env(FUZZFARM_PLANT_FAULTS='{"build": ["tan"]}'))
    assert planted.returncode == 1, planted.stderr
    faults = [e for e in _events(planted.stdout) if e["event"] == "device_fault"]
    assert [f["rule_id"] for f in faults] == ["device.build_failure"]
    # the program the planted failure replaced is not the one kept: the next sweep builds
    clean = _fuzzfarm(*args, "-o", str(tmp_path / "c"))
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert _meta(tmp_path / "c")["inputs"] == 1 << 16
    assert rs.ping_servers()[0]["pid"] == server.proc.pid      # it served them all


@pytest.mark.device
def test_ctrl_c_stops_the_sweep_not_the_server_and_a_busy_server_declines(server, tmp_path):
    long = _long_sweep(tmp_path / "long")
    try:
        assert rs.ping_servers()[0]["busy"]
        short = _fuzzfarm("sweep", "sin", "-d", selector(), "--chunk-bits", "16",
                          "--chunks", "1", "-o", str(tmp_path / "short"), "-q")
        assert short.returncode == 0
        assert "did not take this sweep (it is running another sweep); running it here" \
            in short.stderr
        assert '"event": "progress"' in long.stdout.readline()       # units are running
        long.send_signal(signal.SIGINT)
        assert long.wait(timeout=120) == 130
    finally:
        long.kill()
    meta = _meta(tmp_path / "long")
    assert meta["status"] == "interrupted" and meta["inputs"] > 0
    assert meta["inputs"] % (1 << 16) == 0          # whole units only
    assert rs.ping_servers()[0]["pid"] == server.proc.pid


@pytest.mark.device
def test_a_client_gone_counts_as_one_ctrl_c(server, tmp_path):
    client = _long_sweep(tmp_path)
    try:
        assert '"event": "progress"' in client.stdout.readline()     # units are running
    finally:
        client.kill()
        client.wait()
    # the server finishes the units in flight, writes the run's end and lets go of RESULTS
    from filelock import FileLock
    with FileLock(str(tmp_path / ".fuzzfarm.lock"), timeout=120):
        meta = _meta(tmp_path)
    assert meta["status"] == "interrupted" and meta["inputs"] % (1 << 16) == 0
    assert rs.ping_servers()[0]["pid"] == server.proc.pid


@pytest.mark.device
def test_a_second_server_of_the_device_is_refused_in_one_line(server):
    r = _fuzzfarm("serve", "-d", selector())
    assert r.returncode == 2
    assert r.stderr.startswith("Error: a fuzzfarm server of ") and \
        r.stderr.count("\n") == 1 and "serve --stop" in r.stderr


@pytest.mark.device
def test_a_client_of_other_code_stops_the_server(own_folder):
    s = Server("--idle", "10m")
    try:
        path = Path(rs.ping_servers()[0]["socket"])
        request = rs.Request.here(["sweep", "sin", "-d", selector()], selector(), None)
        stale = rs.Request(**{**request.__dict__, "code": "0" * 16})
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.connect(str(path))
        answer, _ = rs._ask(conn, {"sweep": stale.__dict__})
        conn.close()
        assert answer == {"decline": "it was started from other fuzzfarm code or Python; "
                                     "it stops now", "tell": True}
        assert s.proc.wait(timeout=60) == 0
        assert not path.exists()
    finally:
        s.stop()


@pytest.mark.device
def test_an_idle_server_stops_by_itself(own_folder):
    s = Server("--idle", "1s")
    assert s.proc.wait(timeout=60) == 0
    assert "idle for 1 s: stopping" in s.log()
    assert rs.ping_servers() == []


@pytest.mark.device
def test_a_server_killed_mid_sweep_ends_the_client_in_one_line(own_folder, tmp_path):
    s = Server("--idle", "10m")
    out = tmp_path / "killed"
    client = _long_sweep(out)
    try:
        s.proc.kill()               # as a driver's crash would
        assert client.wait(timeout=60) == 1
        err = client.stderr.read()
        assert err.startswith("Error: the fuzzfarm server at ") and err.count("\n") == 1
        assert "the same command resumes the sweep" in err
    finally:
        client.kill()
        s.stop()
    # the same command resumes it here (the killed server's results lock is gone)
    r = _fuzzfarm("sweep", "cos", "-d", selector(), "--chunk-bits", "16", "--chunks", "1",
                  "-o", str(out), "-q")
    assert r.returncode == 0, r.stderr
