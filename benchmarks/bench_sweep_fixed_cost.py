#!/usr/bin/env python3
"""Benchmark: what a `fuzzfarm sweep` costs besides its device time (docs/cold_start.md).

    python3 benchmarks/bench_sweep_fixed_cost.py [FUNCTION] [--device nvidia] [-p binary32]
                                                 [--runs 3] [--server] [--out DIR]

Each figure is taken ``--runs`` times in fresh child processes, with the caches as they
are (run the sweep once first for a warm kernel cache: the benchmark does, and says so);
the medians are reported, every run kept:

* ``interpreter``: ``python -c pass``;
* ``import_cli``: ``import fuzzfarm.cli`` (what every command pays);
* ``import_sweep``: ``import fuzzfarm.orchestrate.sweep`` (with the catalogue, numpy);
* ``opencl``: in one child, pyopencl's import, ``clGetPlatformIDs`` (the ICD loader
  loads every driver it is told of), the devices' description (``list_devices``), and a
  context on the selected device;
* ``sweep``: the whole command's wall (``sweep FUNCTION -d DEVICE -q --here`` into a
  fresh results folder) and its phases from the run's metadata (``phase_seconds``):
  ``units`` is the device's time with the checking that overlaps it; ``fixed`` = wall -
  units;
* with ``--server``, the same through ``fuzzfarm serve -d DEVICE`` (a server of the
  benchmark's own, in a temporary ``XDG_RUNTIME_DIR``): ``server_start`` (until it
  listens), ``server_first_sweep`` (its programs built in the server), ``server_sweep``
  (each run; the same ``fixed``), and ``client`` (``fuzzfarm serve --list``: the
  interpreter, the command line and one exchange with the server).

No assertions; ``--out DIR`` writes ``bench_sweep_fixed_cost.json`` there.  Python that
cannot write bytecode (``PYTHONDONTWRITEBYTECODE``, a read-only tree) compiles every
module at each start: the record says whether fuzzfarm's bytecode was there.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_OPENCL_PROBE = """
import json, sys, time
t = time.perf_counter()
from fuzzfarm.device import discovery
import pyopencl as cl
out = {"import": time.perf_counter() - t}
t = time.perf_counter()
platforms = cl.get_platforms()
out["platforms"] = time.perf_counter() - t
t = time.perf_counter()
infos = discovery.list_devices()
info = discovery.select_devices(sys.argv[1], infos)[0]
out["describe"] = time.perf_counter() - t
t = time.perf_counter()
device = platforms[info.platform_index].get_devices()[info.device_index]
cl.Context([device])
out["context"] = time.perf_counter() - t
print(json.dumps(out))
"""


def _child(args: list, env: dict) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    return time.perf_counter() - t0, proc


def _sweep(fn: str, device: str, precision: str, env: dict, here: bool = True) -> dict:
    out = Path(tempfile.mkdtemp(prefix="fuzzfarm-bench-sweep-"))
    try:
        wall, proc = _child(["-m", "fuzzfarm", "sweep", fn, "-d", device, "-p", precision,
                             "-o", str(out), "-q"] + (["--here"] if here else []), env)
        metas = sorted((out / "_runs").glob("*.json"))
        meta = json.loads(metas[-1].read_text()) if metas else {}
        phases = meta.get("phase_seconds") or {}
        units = float(phases.get("units", 0.0))
        return {"wall_s": round(wall, 3), "returncode": proc.returncode,
                "status": meta.get("status"), "inputs": meta.get("inputs"),
                "phase_seconds": phases, "units_s": round(units, 3),
                "fixed_s": round(wall - units, 3),
                "stderr_tail": proc.stderr[-400:] if proc.returncode not in (0, 1) else ""}
    finally:
        shutil.rmtree(out, ignore_errors=True)


def _through_server(args, env: dict) -> dict:
    """``server_*`` and ``client`` figures (module docstring)."""
    runtime = tempfile.mkdtemp(prefix="fuzzfarm-bench-rt-")
    env = {**env, "XDG_RUNTIME_DIR": runtime}
    t0 = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "fuzzfarm", "serve", "-d", args.device,
                               "--idle", "10m"], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        first_line = server.stdout.readline()
        out: dict = {"server_start": round(time.perf_counter() - t0, 3),
                     "server_line": first_line.strip()}
        if "serving sweeps" not in first_line:
            return out
        out["server_first_sweep"] = _sweep(args.function, args.device, args.precision, env,
                                           here=False)
        out["server_sweep"] = [_sweep(args.function, args.device, args.precision, env,
                                      here=False) for _ in range(args.runs)]
        out["client"] = [round(_child(["-m", "fuzzfarm", "serve", "--list"], env)[0], 3)
                         for _ in range(args.runs)]
        return out
    finally:
        server.terminate()
        server.wait(timeout=120)
        shutil.rmtree(runtime, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("function", nargs="?", default="sin")
    ap.add_argument("--device", default="nvidia")
    ap.add_argument("-p", "--precision", default="binary32")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--server", action="store_true",
                    help="also sweep through `fuzzfarm serve` (module docstring)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}
    first = _sweep(args.function, args.device, args.precision, env)   # the kernel cache
    runs: dict = {"interpreter": [], "import_cli": [], "import_sweep": [], "opencl": [],
                  "sweep": []}
    for _ in range(args.runs):
        runs["interpreter"].append(round(_child(["-c", "pass"], env)[0], 3))
        runs["import_cli"].append(round(_child(["-c", "import fuzzfarm.cli"], env)[0], 3))
        runs["import_sweep"].append(round(
            _child(["-c", "import fuzzfarm.orchestrate.sweep"], env)[0], 3))
        _, proc = _child(["-c", _OPENCL_PROBE, args.device], env)
        try:
            runs["opencl"].append({k: round(v, 3) for k, v in json.loads(
                proc.stdout.strip().splitlines()[-1]).items()})
        except (json.JSONDecodeError, IndexError):
            runs["opencl"].append({"error": proc.stderr[-400:]})
        runs["sweep"].append(_sweep(args.function, args.device, args.precision, env))
    median = {k: statistics.median(v) for k, v in runs.items()
              if k in ("interpreter", "import_cli", "import_sweep")}
    for part in ("import", "platforms", "describe", "context"):
        vals = [r[part] for r in runs["opencl"] if part in r]
        if vals:
            median[f"opencl_{part}"] = statistics.median(vals)
    for part in ("wall_s", "units_s", "fixed_s"):
        median[f"sweep_{part}"] = statistics.median(r[part] for r in runs["sweep"])
    if args.server:
        runs.update(_through_server(args, env))
        for part in ("wall_s", "units_s", "fixed_s"):
            if runs.get("server_sweep"):
                median[f"server_sweep_{part}"] = statistics.median(
                    r[part] for r in runs["server_sweep"])
        if runs.get("client"):
            median["client"] = statistics.median(runs["client"])
    record = {
        "benchmark": "bench_sweep_fixed_cost",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version(),
        "function": args.function, "device": args.device, "precision": args.precision,
        "bytecode_cached": any((ROOT / "fuzzfarm" / "__pycache__").glob("cli.*.pyc")),
        "dont_write_bytecode": bool(os.environ.get("PYTHONDONTWRITEBYTECODE")),
        "first_sweep": first, "median": median, "runs": runs,
    }
    print(json.dumps(median))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_sweep_fixed_cost.json").write_text(json.dumps(record, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
