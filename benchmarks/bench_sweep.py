"""Benchmark: wall time of full binary32 sweeps (`fuzzfarm sweep`), as the conformance
suite's math test is timed: process start and kernel build included.

Each function is swept by a fresh `python -m fuzzfarm sweep` process into a fresh results
directory; the wall time is measured from outside.  Prints per function: wall seconds,
inputs checked, inputs/s (and per host core), the screened/exact/unjudged split, failures,
the maximum ULP error with its input, and the peak resident memory of the largest process
(the driver or one checking worker; ru_maxrss of the waited-for descendants).

    python benchmarks/bench_sweep.py --device nvidia sin exp sinpi log tanpi
    python benchmarks/bench_sweep.py --device pocl --chunks 16 sin    # a part, extrapolated

No assertions: figures only (record them in benchmarks/RESULTS.md).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def sweep_once(name: str, args, out: Path) -> dict:
    cmd = [sys.executable, "-m", "fuzzfarm", "sweep", name, "-p", args.precision,
           "--out", str(out), "--chunk-bits", str(args.chunk_bits)]
    if args.device:
        cmd += ["--device", args.device]
    if args.chunks:
        cmd += ["--chunks", str(args.chunks)]
    if args.workers:
        cmd += ["-j", str(args.workers)]
    if getattr(args, "screen", None):
        cmd += ["--screen", args.screen]
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t0 = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"{name}: sweep exited {r.returncode}:\n{r.stderr[-3000:]}")
    meta = json.loads(next((out / "_runs").glob("*.json")).read_text())
    meta["wall"] = wall
    meta["stdout"] = r.stdout.strip()
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("functions", nargs="*", default=["sin", "exp", "sinpi", "log", "tanpi"])
    ap.add_argument("--device", default=None)
    ap.add_argument("--precision", default="binary32")
    ap.add_argument("--chunk-bits", type=int, default=24)
    ap.add_argument("--chunks", type=int, default=None, help="sweep only this many chunks")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--screen", choices=["auto", "device", "host"], default=None,
                    help="fuzzfarm sweep --screen (default: the sweep's own, auto)")
    ap.add_argument("--keep", default=None, help="keep results under this directory")
    ap.add_argument("--json", default=None, help="also write the figures as JSON here")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    print(f"# bench_sweep  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# host: {cpu_model()}, {cores} cores, Python {platform.python_version()}")
    records = []
    for name in args.functions:
        base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-sweep-"))
        out = base / name
        try:
            m = sweep_once(name, args, out)
        finally:                # a benchmark leaves nothing behind unless asked to
            if not args.keep:
                shutil.rmtree(base, ignore_errors=True)
        dev = m["devices"][0]
        rate = m["inputs"] / m["wall"]
        rec = {"function": name, "precision": args.precision, "device": dev.get("name"),
               "platform": dev.get("platform_name"), "driver": dev.get("driver_version"),
               "wall_s": round(m["wall"], 2), "inputs": m["inputs"],
               "inputs_per_s": rate, "inputs_per_s_per_core": rate / cores,
               "screened": m["screened"], "exact": m["exact"], "unjudged": m["unjudged"],
               "failures": m["failures"], "failures_by_rule": m["failures_by_rule"],
               "max_ulp_error": m["max_ulp_error"], "max_ulp_inputs": m["max_ulp_inputs"],
               "check_cpu_s": round(m["check_seconds"], 1),
               "device_s": round(m["device_seconds"], 2),
               "peak_rss_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
               "status": m["status"]}
        records.append(rec)
        full = f" (extrapolated full: {m['space_size'] / rate:.1f} s)" \
            if m["inputs"] < m["space_size"] else ""
        print(f"{name:8s} {rec['device']} [{rec['platform']} {rec['driver']}]: "
              f"{rec['wall_s']:.1f} s wall for {m['inputs']:,} inputs{full}; "
              f"{rate / 1e6:.1f} M/s ({rate / cores / 1e6:.2f} M/s per core); "
              f"screened {m['screened']:,}, exact {m['exact']:,}, unjudged "
              f"{m['unjudged']:,}; failures {m['failures']:,} {m['failures_by_rule']}; "
              f"max ULP {m['max_ulp_error']} at {m['max_ulp_inputs']}; "
              f"peak RSS {rec['peak_rss_mib']:.0f} MiB; {m['status']}")
    if args.json:
        Path(args.json).write_text(json.dumps(records, indent=2))


if __name__ == "__main__":
    main()
