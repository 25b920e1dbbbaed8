#!/usr/bin/env python3
"""Benchmark: a long `fuzzfarm run`, watched from outside (issue 18, item 4).

Starts ``python -m fuzzfarm run -f FUNCTIONS -b DURATION --out TMP --log-format json`` and
every ``--every`` seconds samples: the resident memory (RSS) of the driver and of every
process under it (Ray's workers and actors included), their open file descriptors, the
bytes and files of the results directory.  At the end it fits lines through the series
(least squares) and writes ``benchmarks/results/soak-<device>-<date>.json``: the samples,
the slopes per hour (RSS MiB/h, open files/h, results MB/h and files/h, MB/h of
compacted parts, the storage that stays) and the
first and last values.  A constant failure rate (sinpi's integers on any device) makes
storage grow with time today: the slope is what the storage work must flatten.

    pip install psutil      # (or the bench extra: pip install -e '.[bench]')
    python benchmarks/bench_soak.py --duration 1h --device pocl

No assertions: figures only (record them in benchmarks/RESULTS.md).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]


def _tree(pid: int) -> list:
    try:
        p = psutil.Process(pid)
        return [p] + p.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _sample(pid: int, out: Path, t0: float) -> dict:
    rss, fds, n = 0, 0, 0
    for p in _tree(pid):
        try:
            rss += p.memory_info().rss
            fds += p.num_fds()
            n += 1
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    size = files = compacted = journal = 0
    for f in out.rglob("*") if out.exists() else ():
        if f.is_file():
            files += 1
            size += f.stat().st_size
            if f.name.startswith("part-"):      # what compaction made (store.compact)
                compacted += f.stat().st_size
            elif f.name == "journal.jsonl":     # cut at each compaction (Journal.rewrite)
                journal += f.stat().st_size
    driver = psutil.Process(pid).memory_info().rss if psutil.pid_exists(pid) else 0
    return {"t_s": round(time.monotonic() - t0, 1), "rss_mib": round(rss / 2**20, 1),
            "driver_rss_mib": round(driver / 2**20, 1), "processes": n, "open_fds": fds,
            "results_mb": round(size / 1e6, 3), "results_files": files,
            "compacted_mb": round(compacted / 1e6, 3), "journal_mb": round(journal / 1e6, 3)}


def _slope(xs, ys) -> float:
    n = len(xs)
    if n < 2:
        return 0.0
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / var if var else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", default="1h", help="the run's --budget")
    ap.add_argument("--functions", default="sinpi,exp")
    ap.add_argument("--device", default="pocl")
    ap.add_argument("--every", type=float, default=30.0, help="seconds between samples")
    ap.add_argument("--skip", type=float, default=120.0,
                    help="seconds of warm-up left out of the slopes")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-soak-") as tmp:
        res = Path(tmp) / "res"
        log = open(Path(tmp) / "run.log", "w")
        p = subprocess.Popen([sys.executable, "-m", "fuzzfarm", "run", "-f", args.functions,
                              "-b", args.duration, "--out", str(res), "-d", args.device,
                              "--log-format", "json"], cwd=ROOT, stdout=log,
                             stderr=subprocess.STDOUT,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                 [str(ROOT)] + [p for p in os.environ.get(
                                     "PYTHONPATH", "").split(os.pathsep) if p])})
        t0 = time.monotonic()
        samples = []
        while p.poll() is None:
            samples.append(_sample(p.pid, res, t0))
            s = samples[-1]
            print(f"{s['t_s']:8.0f} s  rss {s['rss_mib']:8.1f} MiB ({s['processes']} proc)  "
                  f"fds {s['open_fds']:5d}  results {s['results_mb']:9.2f} MB "
                  f"{s['results_files']:7d} files  compacted {s['compacted_mb']:8.2f} MB  "
                  f"journal {s['journal_mb']:6.2f} MB",
                  flush=True)
            deadline = time.monotonic() + args.every
            while p.poll() is None and time.monotonic() < deadline:
                time.sleep(0.5)
        final = _sample(p.pid, res, t0)
        log.close()
        end = [json.loads(ln) for ln in (Path(tmp) / "run.log").read_text().splitlines()
               if ln.startswith("{") and '"event": "end"' in ln]
    # after the warm-up, while the run is whole (its last sample may catch the shutdown)
    most = max((s["processes"] for s in samples), default=0)
    steady = [s for s in samples if s["t_s"] >= args.skip and s["processes"] == most] or samples
    hours = [s["t_s"] / 3600 for s in steady]
    doc = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": os.uname().nodename, "cpus": os.cpu_count(), "duration": args.duration,
        "functions": args.functions, "device": args.device, "returncode": p.returncode,
        "end": end[-1] if end else None, "final": final,
        "per_hour": {k: round(_slope(hours, [s[k] for s in steady]), 3)
                     for k in ("rss_mib", "driver_rss_mib", "open_fds", "results_mb",
                               "compacted_mb", "journal_mb", "results_files")},
        "samples": samples,
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"soak-{args.device}-{dt.date.today().isoformat()}.json"
    path.write_text(json.dumps(doc, indent=1) + "\n")
    print(json.dumps(doc["per_hour"]), f"\nwrote {path}")


if __name__ == "__main__":
    main()
