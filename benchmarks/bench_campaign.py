#!/usr/bin/env python3
"""Benchmark: a campaign on one vs two devices of one pool, and the coordinator's cost.

    python3 benchmarks/bench_campaign.py [--devices 0 0,1] [--budget 60] [--out DIR]
    python3 benchmarks/bench_campaign.py --overhead-only

Figures (no assertions):

* **throughput** per device selection (``--devices``: one ``devices`` selector list per
  configuration, e.g. ``0`` then ``0,1``): checked inputs per second over the working
  phase of a time-budgeted recipes campaign (sin, exp, sinpi, log, pow in binary32 by
  default): inputs in its stats rows / (last stats row's time - first unit's issue),
  and per device.  Two PoCL devices on one node: ``POCL_DEVICES="cpu cpu"`` (PoCL 4+;
  ``pthread pthread`` before) makes PoCL offer its CPU twice, with one fingerprint, so
  they share one pool;
* **coordinator overhead per unit**: (a) the ``Scheduler`` alone (lease + complete of a
  unit, in-process), (b) the same through the ``Coordinator`` actor from another process,
  as a device actor calls it (``lease`` round trip + ``on_device`` x2 + ``complete``),
  (c) the journal's share (one line written and flushed per unit issued).

``--out DIR`` writes ``bench_campaign.json`` there.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _campaign(functions, budget: float, devices: str):
    from fuzzfarm.orchestrate.campaign import loads
    fl = ", ".join(f'"{f}"' for f in functions)
    return loads(f'name = "bench"\nseed = 1\ndevices = ["{devices}"]\n'
                 f'[budget]\ntime = "{budget:g}s"\n[[jobs]]\nfunctions = [{fl}]\n',
                 "<bench>")


def throughput(devices: str, functions, budget: float) -> dict:
    import pyarrow.compute as pc

    from cluster.driver import run_campaign
    from fuzzfarm.store import dataset as store
    out = tempfile.mkdtemp(prefix="bench-campaign-")
    t0 = time.time()
    meta = run_campaign(_campaign(functions, budget, devices), out)
    wall = time.time() - t0
    stats = store.read_stats(out, meta["run_id"])
    inputs = int(pc.sum(stats["inputs_tested"]).as_py() or 0)
    times = stats["time"].to_pylist()
    work = json.loads((Path(out) / "_runs" / f"{meta['run_id']}.json").read_text())
    status = store.read_status(out, meta["run_id"])
    started = status["session_started"]
    last = max(t.timestamp() for t in times) if times else time.time()
    phase = max(1e-9, last - started)
    per_device = {k: {"label": d["label"], "units": d["units"], "inputs": d["inputs"],
                      "inputs_per_second": d["inputs"] / phase}
                  for k, d in status["devices"].items()}
    return {"devices": devices, "n_devices": len(status["devices"]), "units": stats.num_rows,
            "inputs": inputs, "working_seconds": phase, "wall_seconds": wall,
            "inputs_per_second": inputs / phase, "per_device": per_device,
            "cpus": work.get("cpus"), "status": meta["status"]}


def overhead(n: int = 20000) -> dict:
    """Seconds per unit of the scheduler, the coordinator actor and the journal."""
    from fuzzfarm.store import dataset as store
    from fuzzfarm.orchestrate.scheduler import Scheduler, Stream
    pool = "p" * 12
    streams = [Stream(pool, 1, "recipes", ("sin", "binary32", 1), "", 1)]

    def pure(journal=None):
        s = Scheduler(streams=[Stream(**{**vars(x), "next_serial": 0}) for x in streams],
                      unit_inputs=1024, journal=journal)
        s.add_device("d", pool)
        t = time.perf_counter()
        for _ in range(n):
            spec = s.lease("d")
            s.on_device("d", [spec["unit_id"]])
            s.on_device("d", [])
            s.complete(spec["unit_id"], "d", 1024)
        return (time.perf_counter() - t) / n

    res = {"units": n, "scheduler_seconds_per_unit": pure()}
    with tempfile.TemporaryDirectory() as d:
        j = store.Journal(Path(d) / "journal.jsonl")
        res["scheduler_with_journal_seconds_per_unit"] = pure(j.append)
        j.close()

    import ray

    from cluster.farm import Coordinator
    from fuzzfarm.orchestrate.campaign import loads
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR",
             log_to_driver=False)
    try:
        c = loads('name = "o"\nseed = 1\n[unit]\ninputs = 1024\n[budget]\ntime = "1h"\n'
                  '[[jobs]]\nfunctions = ["sin"]\n')
        with tempfile.TemporaryDirectory() as out:
            coord = Coordinator.remote(c.to_dict(), {pool: {"precisions": ["binary32"],
                                                            "jobs": [1]}},
                                       {"d": pool}, out, "bench", None)

            @ray.remote
            def device_side(coord, n):
                t = time.perf_counter()
                for _ in range(n):
                    spec = ray.get(coord.lease.remote("d"))
                    coord.on_device.remote("d", [spec["unit_id"]])
                    coord.on_device.remote("d", [])
                    coord.complete.remote(spec["unit_id"], "d", 1024)
                ray.get(coord.snapshot.remote())      # everything sent is processed
                return (time.perf_counter() - t) / n

            m = min(n, 5000)
            ray.get(device_side.remote(coord, 200))   # warm
            res["coordinator_actor_seconds_per_unit"] = ray.get(device_side.remote(coord, m))
            res["coordinator_actor_units"] = m
    finally:
        ray.shutdown()
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--devices", nargs="+", default=["0", "0,1"],
                    help="device selector lists, one configuration each")
    ap.add_argument("--functions", default="sin,exp,sinpi,log,pow")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds per configuration")
    ap.add_argument("--overhead-only", action="store_true")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    result = {"machine": {"cpu": platform.processor(), "cores": os.cpu_count(),
                          "python": platform.python_version()},
              "date": time.strftime("%Y-%m-%d %H:%M:%S"), "POCL_DEVICES":
              os.environ.get("POCL_DEVICES")}
    try:
        from benchmarks.bench_run import _cpu_model
        result["machine"]["cpu"] = _cpu_model()
    except ImportError:
        pass
    result["overhead"] = overhead()
    print(json.dumps(result["overhead"], indent=2), flush=True)
    if not a.overhead_only:
        result["throughput"] = []
        for sel in a.devices:
            r = throughput(sel, a.functions.split(","), a.budget)
            result["throughput"].append(r)
            print(f"devices {sel}: {r['n_devices']} device(s), {r['inputs']:,} inputs in "
                  f"{r['working_seconds']:.1f}s = {r['inputs_per_second']:,.0f}/s "
                  f"({r['units']} units; {r['status']})", flush=True)
            for k, d in r["per_device"].items():
                print(f"    {d['label']} [{k}]: {d['units']} units, "
                      f"{d['inputs_per_second']:,.0f}/s", flush=True)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        Path(a.out, "bench_campaign.json").write_text(json.dumps(result, indent=2,
                                                                 default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
