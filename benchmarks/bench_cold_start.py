#!/usr/bin/env python3
"""Benchmark: the README's main job from a cold cache, then again warm (docs/cold_start.md).

    python3 benchmarks/bench_cold_start.py [--budget 5m] [--device pocl] [-p binary32]
                                           [--runs cold,warm] [--campaign FILE] [--out DIR]

Each run is `fuzzfarm run --budget B --log-format json` (or `--campaign FILE`) in a child
process whose ``HOME`` is a fresh folder made for the benchmark: no PoCL kernel cache, no
pyopencl binary cache, no fuzzfarm ICD cache -- a new user's machine.  The "warm" run reuses
the folder the cold run filled.  Figures per run (no assertions): the wall time of the
process, the building phase (from its ``building`` lines and "devices ready"), inputs
checked (the stats rows), the rate over the wall time, the time to the first failure (the
``end`` line), the progress lines' last rate.  ``--out DIR`` writes
``bench_cold_start.json`` there; the results directories are removed.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _inputs(results: Path) -> int:
    import pyarrow.dataset as ds
    stats = results / "_stats"
    if not stats.is_dir():
        return 0
    t = ds.dataset(stats, format="parquet").to_table(columns=["inputs_tested"])
    return int(sum(t.column("inputs_tested").to_pylist()))


def run_once(home: Path, args, label: str) -> dict:
    """One run of the job with ``HOME=home``; its figures."""
    results = Path(tempfile.mkdtemp(prefix="fuzzfarm-bench-res-"))
    shutil.rmtree(results)
    cmd = [sys.executable, "-m", "fuzzfarm", "run", "--out", str(results), "--log-format",
           "json"]
    # a campaign names its own seed and devices
    cmd += ["--campaign", args.campaign] if args.campaign else \
        ["--budget", args.budget, "--device", args.device, "--precisions", args.precisions,
         "--seed", str(args.seed)]
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    t0, t_start = time.perf_counter(), time.time()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    events = []
    for line in proc.stdout.splitlines() + proc.stderr.splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    stamps = [datetime.fromisoformat(e["time"].replace("Z", "+00:00")).timestamp()
              for e in events if "time" in e]
    building = [e for e in events if e.get("event") == "building"]
    progress = [e for e in events if e.get("event") == "progress"]
    end = next((e for e in events if e.get("event") == "end"), {})
    inputs = _inputs(results)
    shutil.rmtree(results, ignore_errors=True)
    ready = next((e for e in events if "devices ready" in str(e.get("text", ""))), None)
    first_progress = next((e for e in events if e.get("event") == "progress"), None)
    return {"run": label, "returncode": proc.returncode, "wall_s": round(wall, 1),
            # the process's start to its first line, to the first progress line (units
            # under way), and its end line to its exit
            "to_first_line_s": round(min(stamps) - t_start, 1) if stamps else None,
            "to_units_s": round(datetime.fromisoformat(first_progress["time"].replace(
                "Z", "+00:00")).timestamp() - t_start, 1) if first_progress else None,
            "end_line_to_exit_s": round(t_start + wall - max(stamps), 1) if stamps else None,
            "devices_ready": ready.get("text") if ready else None,
            "inputs": inputs, "inputs_per_s_over_wall": round(inputs / wall),
            "building_lines": len(building),
            "built": building[-1].get("built") if building else None,
            "targets": building[-1].get("targets") if building else None,
            "last_building_elapsed_s": building[-1].get("elapsed_s") if building else None,
            "last_progress_rate_per_s": progress[-1].get("rate_per_s") if progress else None,
            "first_failure_s": end.get("first_failure_s"), "status": end.get("status"),
            "stderr_tail": proc.stderr[-800:] if proc.returncode else ""}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", default="5m")
    p.add_argument("--device", default="pocl")
    p.add_argument("--precisions", "-p", default="binary32")
    p.add_argument("--campaign", default=None, help="a campaign file instead of --budget")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", default="cold,warm")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="fuzzfarm-bench-home-"))
    figures = []
    try:
        for label in args.runs.split(","):
            f = run_once(home, args, label)
            print(json.dumps(f), flush=True)
            figures.append(f)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    doc = {"benchmark": "bench_cold_start", "date": datetime.now(timezone.utc).isoformat(),
           "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
           "args": vars(args), "runs": figures}
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "bench_cold_start.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
