"""Kill at random moments, over and over (issue 18, item 1): a campaign whose driver (and
with it its local Ray cluster), a Ray worker (device actor, check task, unit maker) or the
raylet (the node) is SIGKILLed at a random moment, then resumed, cycle after cycle, ends
with every unit's results present exactly once, no temporary file left, and a dataset that
reads whole.  A few cycles here; the long tier (``-m soak``,
``FUZZFARM_KILL_CYCLES``, default 20) kills more."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from devices import selector

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.device, pytest.mark.timeout(1800)]

CAMPAIGN = """\
name = "killed"
seed = 5
[unit]
inputs = 16384
[[jobs]]
functions = ["sinpi", "exp"]
units = {units}
"""


def _session_processes(sessions, pattern: str = ".") -> set[int]:
    """Processes of the sessions ``sessions`` (the drivers this test started, each in a
    session of its own, which its Ray cluster's processes share) whose command line
    matches ``pattern``: never another test's Ray cluster on the same machine."""
    if not sessions:
        return set()
    r = subprocess.run(["pgrep", "-s", ",".join(map(str, sessions)), "-f", pattern],
                       capture_output=True, text=True)
    return {int(p) for p in r.stdout.split()}


def _start(args: list, out: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "fuzzfarm", "run", *args, "--out", str(out),
                             "--log-format", "text"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)


def _next_args(spec: Path, out: Path) -> list | None:
    """How to go on: resume the unfinished campaign, start it (a kill before it was saved
    leaves nothing to resume), or None when it has completed."""
    from fuzzfarm.store import dataset as store
    if out.exists() and store.latest_campaign(out, unfinished=True):
        return ["--resume", str(out)]
    if out.exists() and store.latest_campaign(out):
        return None
    return ["--campaign", str(spec)]


#: What a cycle kills, by weight: the driver (its local Ray cluster shares its fate), a
#: Ray worker (the device actor, a check task, a unit maker: Ray restarts or retries it and
#: the campaign goes on; the driver is killed later in the cycle), or the raylet (the
#: node: on this one-node cluster the driver loses its cluster).
VICTIMS = (("driver", 2), ("worker", 1), ("node", 1))
_WORKERS = r"ray::(DeviceActor|check_and_write|UnitMaker)"


def _kill_one(pattern: str, rng: random.Random, session: int) -> bool:
    """SIGKILL one random process of ``session`` (a driver's) whose command line matches
    ``pattern``; False if none."""
    pids = sorted(_session_processes([session], pattern))
    if not pids:
        return False
    try:
        os.kill(rng.choice(pids), signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def _stats_files(out: Path) -> int:
    """Units done so far (their stats rows), whether in per-unit files or compacted parts
    (a session that ends, even by losing its node, compacts them)."""
    from fuzzfarm.store import dataset as store
    d = out / "_stats"
    if not d.exists():
        return 0
    n = 0
    for run in d.iterdir():
        try:
            n += len(store.done_units(out, run.name))
        except Exception:       # noqa: BLE001 - a part being written: count it next time
            pass
    return n


def _kill_cycles(tmp_path, cycles: int, seed: int) -> None:
    """``cycles`` starts of the campaign, each SIGKILLed once a random number of its units
    are written (its size grows with ``cycles`` so that each start has units to do)."""
    rng = random.Random(seed)
    units = 6 * cycles
    n_units = 2 * (units + 1)                   # 2 targets x (special unit + units)
    spec = tmp_path / "campaign.toml"
    spec.write_text(CAMPAIGN.format(units=units).replace(
        'name = "killed"', f'name = "killed"\ndevices = ["{selector()}"]'))
    out = tmp_path / "res"
    sessions = []                               # each driver's, which its Ray's share
    kills = 0
    killed = Counter()
    for cycle in range(cycles):
        args = _next_args(spec, out)
        if args is None:
            break
        p = _start(args, out)
        sessions.append(p.pid)
        # a random moment: during start-up (no unit yet), among the units, or at the end
        done = _stats_files(out)
        # spread the kills over the campaign: a random point of this cycle's share
        share = max(1, (n_units - done) // (cycles - cycle + 1))
        target = min(n_units - 1, done + rng.randint(0, share))
        jitter = rng.uniform(0.0, 0.5)
        victim = rng.choices([v for v, _ in VICTIMS], [w for _, w in VICTIMS])[0]
        if victim == "worker":      # first a worker, half way to the driver's moment
            half = done + (target - done) // 2
            while p.poll() is None and _stats_files(out) < half:
                time.sleep(0.02)
            if p.poll() is None and _kill_one(_WORKERS, rng, p.pid):
                killed["worker"] += 1
        while p.poll() is None and _stats_files(out) < target:
            time.sleep(0.02)
        time.sleep(jitter)
        hit = alone = False
        if p.poll() is None and victim == "node" and _kill_one("raylet --raylet_socket", rng,
                                                               p.pid):
            killed["node"] += 1
            hit = True
            try:                    # the driver notices its node is gone, or is killed
                p.wait(timeout=20)
                alone = True
            except subprocess.TimeoutExpired:
                pass
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            killed["driver"] += not hit
            hit = True
        kills += hit
        _, cycle_err = p.communicate(timeout=120)
        if alone:                   # it saw its node go: one line and "incomplete", or done
            assert "Traceback" not in cycle_err and p.returncode in (0, 3), cycle_err[-3000:]
        print(f"cycle {cycle}: {args[0]} rc={p.returncode} {cycle_err.strip()[-200:]!r}")
    # finish the campaign
    args = _next_args(spec, out)
    if args is not None:
        p = _start(args, out)
        sessions.append(p.pid)
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err[-3000:]
    assert kills >= cycles - max(1, cycles // 5)       # a few runs may end before their kill
    print(f"{kills} cycles ended by a kill in {cycle + 1} ({dict(killed)}), then a resume "
          f"to the end; {n_units} units each once")

    rows = ds.dataset(out / "_stats").to_table().to_pylist()
    per_unit = Counter(r["unit_id"] for r in rows)
    assert len(per_unit) == n_units and set(per_unit.values()) == {1}, per_unit
    files = [f for f in out.rglob("*") if f.is_file()]
    assert not [f for f in files if f.name.startswith(".tmp-")]
    findings = ds.dataset(out).to_table()               # reads whole
    assert set(findings["unit_id"].to_pylist()) <= set(per_unit)
    # and so do the other readers a user points at it (the [test] extra installs them)
    import duckdb
    import polars as pl
    files = sorted(str(f) for f in out.glob("*/*.parquet") if not f.parent.name.startswith("_"))
    if files:
        assert pl.scan_parquet(files).select(pl.len()).collect().item() == findings.num_rows
        assert duckdb.sql(f"select count(*) from read_parquet({files!r})").fetchall()[0][0] \
            == findings.num_rows
    stats = sorted(str(f) for f in (out / "_stats").glob("*/*.parquet"))
    assert pl.scan_parquet(stats).select(pl.len()).collect().item() == len(rows)
    assert not list(out.rglob(".compact-*"))                 # no compaction half-done
    # Ray's own processes die with their driver (fate sharing), within seconds
    deadline = time.monotonic() + 60
    while _session_processes(sessions) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _session_processes(sessions) == set(), "a killed driver left Ray processes"


def test_a_driver_killed_at_random_moments_loses_nothing(tmp_path):
    _kill_cycles(tmp_path, cycles=3, seed=int(os.environ.get("FUZZFARM_KILL_SEED", "1")))


@pytest.mark.soak
def test_a_driver_killed_twenty_times(tmp_path):
    _kill_cycles(tmp_path, cycles=int(os.environ.get("FUZZFARM_KILL_CYCLES", "20")),
                 seed=int(os.environ.get("FUZZFARM_KILL_SEED", "2")))
