"""A campaign on a real multi-node Ray cluster on this machine: a head and two worker nodes
started with `ray start` on loopback (tests/ray_cluster.py), each offering "its own" OpenCL
device (PyPI's PoCL, declared as each node's device resource, as `fuzzfarm node` does).
Midway one device actor is SIGKILLed and one worker node is SIGKILLed whole; the campaign
completes with every unit's results present exactly once."""
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

from devices import require_device
from ray_cluster import LoopbackCluster

from fuzzfarm.store import dataset as store

pytestmark = [pytest.mark.device, pytest.mark.cluster, pytest.mark.timeout(600)]

CAMPAIGN = """\
name = "loopback"
seed = 9
[unit]
inputs = 32768
[[jobs]]
functions = ["sinpi", "cospi", "exp", "log"]
units = 8
[[jobs]]
source = "sweep"
functions = ["tanpi"]
chunk_bits = 18
units = 6
"""
#: The campaign's units: 4 targets x (special unit + 8), and 6 sweep chunks.
N_UNITS = 4 * 9 + 6


def _written(out: Path) -> int:
    d = out / "_stats"
    return len(list(d.glob("*/*.parquet"))) if d.exists() else 0


def _wait_written(out: Path, n: int, proc, timeout=300) -> None:
    deadline = time.time() + timeout
    while _written(out) < n:
        assert proc.poll() is None, "the campaign ended before the faults were planted"
        assert time.time() < deadline, f"fewer than {n} units written in {timeout}s"
        time.sleep(0.05)


def test_campaign_survives_a_killed_actor_and_a_lost_node(tmp_path):
    from cluster.placement import local_resources
    from fuzzfarm.device.discovery import list_devices
    pocl = [require_device()]
    resources = local_resources(pocl, list_devices())
    nodes = [{"num_cpus": 1, "resources": resources} for _ in range(3)]
    spec = tmp_path / "campaign.toml"
    spec.write_text(CAMPAIGN)
    out = tmp_path / "res"
    with LoopbackCluster(nodes).start(timeout=180) as cluster:
        ids = cluster.node_ids()
        env = {**os.environ, **cluster.driver_env(), "COLUMNS": "200"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(spec), "--out",
             str(out), "--address", cluster.address],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        try:
            _wait_written(out, 6, proc)
            # 1. SIGKILL the device actor of worker node 1 (Ray restarts it there)
            actors = [pid for pid, _, cmd in cluster.processes(1) if "DeviceActor" in cmd]
            assert actors, cluster.processes(1)
            os.kill(actors[0], signal.SIGKILL)
            _wait_written(out, _written(out) + 4, proc)
            # 2. SIGKILL worker node 2 whole (its raylet, agents and workers)
            cluster.kill_node(2)
            cluster.wait_node_dead(2, timeout=60)
            _, err = proc.communicate(timeout=480)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 0, err[-4000:]

    # every unit's stats row exactly once, and nothing else
    rows = ds.dataset(out / "_stats").to_table().to_pylist()
    per_unit = Counter(r["unit_id"] for r in rows)
    assert len(per_unit) == N_UNITS and set(per_unit.values()) == {1}, per_unit
    serials = Counter(u.rsplit("-", 1)[0] for u in per_unit)
    assert sorted(serials.values()) == [6, 9, 9, 9, 9]
    # findings only of written units (the session's end compacted their files)
    assert not list(out.rglob(".compact-*"))
    # nothing half-written stays, whatever was killed during the run (issue 30, item 7)
    assert not list(out.rglob(store.TEMP_PREFIX + "*")), list(out.rglob(".tmp-*"))
    findings = ds.dataset(out).to_table(columns=["unit_id", "severity"]).to_pylist()
    assert {r["unit_id"] for r in findings} <= set(per_unit)
    assert all(r["severity"] != "fault" for r in findings)      # no false device fault
    counted = Counter(r["unit_id"] for r in findings)
    stats = {r["unit_id"]: r for r in rows}
    for u, n in counted.items():        # at most 1000 per rule are recorded per unit
        assert n <= stats[u]["failures"] + stats[u]["notes"]
    # the status file tells the story: three devices, a restart, a node lost
    status = json.loads(next((out / "_campaign").glob("*/status.json")).read_text())
    assert status["state"] == "completed" and status["units"]["done"] == N_UNITS
    devs = status["devices"]
    assert len(devs) == 3
    assert sum(d["lost"] for d in devs.values()) >= 2
    lost = [d for d in devs.values() if d["given_up"] == "node lost"]
    assert [d["node"] for d in lost] == [ids[2]]
    assert "actor crash; restarting" in err and "node lost" in err
