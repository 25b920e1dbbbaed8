#!/usr/bin/env python3
"""Demonstration: a mixed two-node Ray cluster on one machine, started with `fuzzfarm node`
(a head offering the NVIDIA GPU, a worker offering PoCL's CPU device), and one campaign
across both; prints the status and where each pool's units ran.

    python3 benchmarks/demo_mixed_cluster.py [--head-devices nvidia] [--worker-devices pocl]
                                             [--out DIR]

Both nodes run on this machine (loopback), with the flags two Ray nodes on one machine
need (own temp dirs and ports; tests/ray_cluster.py explains them).  Everything started
is killed at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CAMPAIGN = """\
name = "mixed"
seed = 4
[unit]
inputs = 1048576
[[jobs]]
functions = ["sinpi", "cospi", "tanpi", "exp", "log", "pow"]
units = 4
[[jobs]]
source = "catalogue"
functions = ["math"]
[[jobs]]
source = "sweep"
functions = ["tanpi"]
chunk_bits = 24
units = 16
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--head-devices", default="nvidia")
    ap.add_argument("--worker-devices", default="pocl")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="mixed-"))
    out = Path(a.out or tmp / "results")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    ff = [sys.executable, "-m", "fuzzfarm"]
    common = ["--block", "--", "--node-ip-address", "127.0.0.1",
              "--dashboard-agent-listen-port", "0", "--disable-usage-stats",
              "--object-store-memory", str(2 << 30)]
    from ray._private.utils import get_ray_client_dependency_error
    head = ff + ["node", "--head", "--port", str(port), "--devices", a.head_devices] + \
        common + ["--temp-dir", str(tmp / "n0"), "--dashboard-port", str(free_port())]
    if get_ray_client_dependency_error() is None:      # ray[client]: a server on 10001
        head += ["--ray-client-server-port", str(free_port())]
    worker = ff + ["node", "--address", f"127.0.0.1:{port}", "--devices",
                   a.worker_devices] + common + ["--temp-dir", str(tmp / "n1")]
    procs = []
    try:
        t0 = time.time()
        procs.append(subprocess.Popen(head, env=env, start_new_session=True,
                                      stdout=open(tmp / "head.log", "w"),
                                      stderr=subprocess.STDOUT))
        time.sleep(6)
        procs.append(subprocess.Popen(worker, env=env, start_new_session=True,
                                      stdout=open(tmp / "worker.log", "w"),
                                      stderr=subprocess.STDOUT))
        import ray
        for _ in range(120):
            try:
                if not ray.is_initialized():
                    ray.init(address=f"127.0.0.1:{port}", logging_level="ERROR",
                             log_to_driver=False)
                if sum(n["Alive"] for n in ray.nodes()) >= 2:
                    break
            except Exception:           # noqa: BLE001 - the head is not up yet
                pass
            time.sleep(1)
        nodes = [(n["NodeID"][:8], {k: v for k, v in n["Resources"].items()
                                    if k.startswith("fuzzfarm_dev_")})
                 for n in ray.nodes() if n["Alive"]]
        ray.shutdown()
        print(f"cluster up in {time.time() - t0:.1f}s: {nodes}", flush=True)
        for name in ("head", "worker"):
            print(f"--- {name}.log\n" + (tmp / f"{name}.log").read_text()[-600:], flush=True)
        spec = tmp / "mixed.toml"
        spec.write_text(CAMPAIGN)
        t1 = time.time()
        run = subprocess.run(ff + ["run", "--campaign", str(spec), "--out", str(out),
                                   "--address", f"127.0.0.1:{port}"], env=env,
                             capture_output=True, text=True, timeout=900)
        print(f"fuzzfarm run: exit {run.returncode} in {time.time() - t1:.1f}s", flush=True)
        print("\n".join(line for line in run.stderr.splitlines()
                        if not line.startswith(("│", "┃", "┏", "┗", "┡", "└", "├", "─")))[-3000:])
        st = subprocess.run(ff + ["status", str(out), "--json"], capture_output=True, text=True,
                            env=env)
        status = json.loads(st.stdout)
        for key, d in status["devices"].items():
            print(f"{d['label']} [{key}] pool {d['pool']}: {d['units']} units, "
                  f"{d['inputs']:,} inputs, {d['failures']} failures")
        import pyarrow.dataset as ds
        stats = ds.dataset(out / "_stats").to_table(
            columns=["unit_id", "device", "failures"]).to_pylist()
        per = Counter((r["device"], r["unit_id"].split("-")[0]) for r in stats)
        print("units per (device, pool):", dict(per))
        rows = ds.dataset(out).to_table(columns=["device", "rule_id"]).to_pylist()
        print("failing rules per device:",
              dict(Counter((r["device"][:24], r["rule_id"]) for r in rows).most_common(12)))
        if a.out:
            (Path(a.out) / "demo.json").write_text(json.dumps(status, indent=2))
        return run.returncode
    finally:
        for p in procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["pkill", "-9", "-f", str(tmp)], check=False)


if __name__ == "__main__":
    raise SystemExit(main())
