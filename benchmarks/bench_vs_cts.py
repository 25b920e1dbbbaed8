#!/usr/bin/env python3
"""Benchmark: full binary32 sweeps of fuzzfarm beside the Khronos conformance suite's
math test (``test_bruteforce``) on the same device, in the same session (issue 17).

For each function, in turn: the suite's ``test_bruteforce -d -r -1 <fn>`` (binary32 only:
``-d`` and ``-r`` switch off double and relaxed-math testing, ``-1`` tests scalars only, no
``-w``: every one of the 2^32 inputs; its thread pool takes every host CPU: 16 threads on
the GPU machine.  Passing ``-t 16`` instead was measured to leave it on about one core:
100 s for 7/16 of sin), then ``python -m fuzzfarm sweep
<fn>`` into a fresh results directory; each timed from outside as a whole process (start,
kernel builds and the final summary included).  Writes
``benchmarks/results/vs_cts-<device>-<date>.json`` after each function (an interrupted
run keeps the finished ones): a list of ``{function, cts_s, fuzzfarm_s, inputs, failures,
ratio, cts_result, ...}`` records, merged with that day's file where it exists (``failures``: fuzzfarm's count; the suite stops a function at its
first failure and says only passed/failed).

The suite's binary: ``--cts PATH``, else ``$FUZZFARM_CTS``, else built here with cmake and
ninja from ``--cts-source DIR`` (a folder holding checkouts of KhronosGroup/OpenCL-CTS,
OpenCL-Headers, OpenCL-ICD-Loader and SPIRV-Headers; DEVELOPERS.md says where they come
from): ``python benchmarks/bench_vs_cts.py --cts-source /tmp/cts --build-only``.

The suite runs on the first device it sees: ``--cts-icd DIR`` sets ``OCL_ICD_VENDORS`` and
``OCL_ICD_FILENAMES`` for it alone to a folder holding only that device's ``.icd`` file
(the GPU machine: NVIDIA's), ``--cts-device-type`` its ``CL_DEVICE_TYPE``, and ``--loader
DIR`` picks the ``libOpenCL.so.1`` it runs through (e.g. Debian's ocl-icd). fuzzfarm's
sweep gets ``--device``. A record whose suite ran on another device than fuzzfarm's
(its "Device Name") gets ``cts_result`` "wrong device: ..." and no ratio.

    python benchmarks/bench_vs_cts.py --device nvidia sin exp sinpi log tanpi cos log2 exp2

No assertions: figures only (record them in benchmarks/RESULTS.md).  Exit status 2 with
a one-line message for a missing binary, an unknown function or a failed build.
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_sweep import cpu_model, sweep_once  # noqa: E402
from fuzzfarm.orchestrate.sweep import default_workers  # noqa: E402

FUNCTIONS = ("sin", "exp", "sinpi", "log", "tanpi", "cos", "log2", "exp2")
#: Every one-argument binary32 built-in with one result that the suite's test_bruteforce
#: tests (its function_list.cpp at b8f8906c, unaryF, i_unaryF and the half_ unaryOF
#: entries), which ``fuzzfarm sweep`` sweeps in full: ``--suite-unary`` runs them all.
SUITE_UNARY = (
    "acos", "acosh", "acospi", "asin", "asinh", "asinpi", "atan", "atanh", "atanpi",
    "cbrt", "ceil", "cos", "cosh", "cospi", "erf", "erfc", "exp", "exp2", "exp10", "expm1",
    "fabs", "floor", "ilogb", "lgamma", "log", "log2", "log10", "log1p", "logb", "rint",
    "round", "rsqrt", "sin", "sinh", "sinpi", "sqrt", "tan", "tanh", "tanpi", "tgamma",
    "trunc", "half_cos", "half_exp", "half_exp2", "half_exp10", "half_log", "half_log2",
    "half_log10", "half_recip", "half_rsqrt", "half_sin", "half_sqrt", "half_tan")
_REPOS = ("OpenCL-CTS", "OpenCL-Headers", "OpenCL-ICD-Loader", "SPIRV-Headers")


def fail(msg: str) -> None:
    print(f"bench_vs_cts: {msg}", file=sys.stderr)
    raise SystemExit(2)


def build_cts(src: Path) -> Path:
    """Build the ICD loader and ``test_bruteforce`` under ``src/build-*``; returns the
    binary.  Exits 2 naming the step that failed."""
    for r in _REPOS:
        if not (src / r).is_dir():
            fail(f"{src / r} is missing; --cts-source needs checkouts of {', '.join(_REPOS)}")
    steps = [
        ["cmake", "-S", src / "OpenCL-ICD-Loader", "-B", src / "build-icd", "-G", "Ninja",
         f"-DOPENCL_ICD_LOADER_HEADERS_DIR={src / 'OpenCL-Headers'}",
         "-DCMAKE_BUILD_TYPE=Release", "-DBUILD_TESTING=OFF"],
        ["ninja", "-C", src / "build-icd"],
        ["cmake", "-S", src / "OpenCL-CTS", "-B", src / "build-cts", "-G", "Ninja",
         f"-DCL_INCLUDE_DIR={src / 'OpenCL-Headers'}", f"-DCL_LIB_DIR={src / 'build-icd'}",
         f"-DSPIRV_INCLUDE_DIR={src / 'SPIRV-Headers'}", "-DOPENCL_LIBRARIES=OpenCL",
         "-DCMAKE_BUILD_TYPE=Release"],
        ["ninja", "-C", src / "build-cts", "test_bruteforce"],
    ]
    for cmd in steps:
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        if r.returncode != 0:
            tail = (r.stderr or r.stdout).strip().splitlines()[-1:] or ["?"]
            fail(f"`{' '.join(map(str, cmd[:2]))} ...` failed: {tail[0]}")
    return src / "build-cts" / "test_conformance" / "math_brute_force" / "test_bruteforce"


def find_cts(args) -> Path:
    if args.cts:
        p = Path(args.cts)
    elif os.environ.get("FUZZFARM_CTS"):
        p = Path(os.environ["FUZZFARM_CTS"])
    elif args.cts_source:
        p = build_cts(Path(args.cts_source))
    else:
        fail("no test_bruteforce: give --cts PATH, set FUZZFARM_CTS or --cts-source DIR")
    p = p.resolve()
    if not (p.is_file() and os.access(p, os.X_OK)):
        fail(f"{p} is not an executable test_bruteforce")
    return p


def run_cts(binary: Path, fn: str, args) -> dict:
    """One ``test_bruteforce`` run of ``fn``: wall seconds, passed/failed, its log tail."""
    env = dict(os.environ)
    if args.cts_icd:
        # both: Debian's ocl-icd was seen to load /etc/OpenCL/vendors' PoCL beside the
        # folder's NVIDIA and give the suite PoCL's CPU as platform 0 (2026-11-25)
        env["OCL_ICD_VENDORS"] = args.cts_icd
        libs = [p.read_text().strip() for p in sorted(Path(args.cts_icd).glob("*.icd"))]
        env["OCL_ICD_FILENAMES"] = ":".join(lib for lib in libs if lib)
    if args.cts_device_type:
        env["CL_DEVICE_TYPE"] = args.cts_device_type
    if args.loader:
        env["LD_LIBRARY_PATH"] = str(Path(args.loader).resolve()) + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    cmd = [str(binary), "-d", "-r", "-1"]
    if args.threads:            # -t N: measured to leave it on one thread (CTS 2026-11)
        cmd += ["-t", str(args.threads)]
    cmd += (["-w"] if args.wimpy else []) + [fn]
    t0 = time.perf_counter()
    try:
        r = subprocess.run(cmd, cwd=binary.parent, env=env, capture_output=True, text=True,
                           timeout=args.timeout)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode(errors="replace") if isinstance(exc.stdout, bytes) \
            else (exc.stdout or "")
        return {"cts_s": None, "cts_result": f"timeout after {args.timeout} s",
                "cts_tail": out.strip().splitlines()[-8:]}
    wall = time.perf_counter() - t0
    out = r.stdout + r.stderr
    if "FAILED test." in out:
        result = "failed"               # a wrong result (it stops at the first)
    elif "PASSED test." in out and r.returncode == 0:
        result = "passed"
    else:
        result = "error"                # it did not run: no device, no such function
    ulps = re.search(rf"{re.escape(fn)}\s+fp32\s+[.\s]*(?:Wimp pass|passed)?\s*"
                     rf"([0-9.]+)\s+@\s+(\S+)", out)
    device = next((m.group(1).strip() for m in
                   [re.search(r"Device Name:\s*(.+)", out)] if m), "")
    return {"cts_s": round(wall, 2), "cts_result": result, "cts_rc": r.returncode,
            "cts_device": device, "cts_max_ulps": float(ulps.group(1)) if ulps else None,
            "cts_tail": out.strip().splitlines()[-6:]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("functions", nargs="*", default=None,
                    help=f"built-ins to time (default: {' '.join(FUNCTIONS)})")
    ap.add_argument("--suite-unary", action="store_true",
                    help="every unary binary32 built-in the suite tests (SUITE_UNARY)")
    ap.add_argument("--device", default=None, help="fuzzfarm --device selector")
    ap.add_argument("--cts", help="path of test_bruteforce")
    ap.add_argument("--cts-source", help="folder of the four checkouts, to build it")
    ap.add_argument("--build-only", action="store_true", help="build the suite and stop")
    ap.add_argument("--loader", help="folder of the libOpenCL.so.1 the suite runs through")
    ap.add_argument("--cts-icd", help="OCL_ICD_VENDORS for the suite only: a folder with "
                                      "the one device's .icd file")
    ap.add_argument("--cts-device-type", default=None,
                    help="CL_DEVICE_TYPE for the suite (gpu, cpu, ...): its harness then "
                         "takes that type's first device")
    ap.add_argument("--threads", type=int, default=0,
                    help="the suite's -t (default: not given: its thread pool uses every "
                         "host CPU, 16 on the GPU machine)")
    ap.add_argument("--timeout", type=float, default=600.0,
                    help="seconds a suite run may take before it is recorded as a timeout")
    ap.add_argument("--workers", type=int, default=None, help="fuzzfarm sweep -j")
    ap.add_argument("--skip-cts", action="store_true", help="time fuzzfarm only")
    ap.add_argument("--chunk-bits", type=int, default=24, help="fuzzfarm sweep --chunk-bits")
    ap.add_argument("--screen", choices=["auto", "device", "host"], default=None,
                    help="fuzzfarm sweep --screen (default: the sweep's own, auto)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results"))
    ap.add_argument("--tag", default=None, help="device part of the file name")
    ap.add_argument("--wimpy", action="store_true",
                    help="the suite's -w subset (a smoke test, never for the figures)")
    ap.add_argument("--chunks", type=int, default=None,
                    help="sweep only this many chunks (a smoke test; the suite still runs all)")
    args = ap.parse_args()
    if args.suite_unary and args.functions:
        fail("--suite-unary and a list of functions: give one of them")
    args.functions = list(SUITE_UNARY if args.suite_unary else args.functions or FUNCTIONS)
    binary = None if (args.skip_cts and not args.build_only) else find_cts(args)
    if args.build_only:
        print(binary)
        return
    from edgecases import catalogue
    for fn in args.functions:
        if fn not in catalogue.functions():
            fail(f"unknown function {fn!r}")
    sweep_args = argparse.Namespace(precision="binary32", chunk_bits=args.chunk_bits,
                                    device=args.device,
                                    chunks=args.chunks, workers=args.workers,
                                    screen=args.screen)
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    records = []
    device_label = ""
    for fn in args.functions:
        rec = {"function": fn, "date": when, "machine": cpu_model(),
               "host_cpus": default_workers()}
        if binary is not None:
            rec.update(run_cts(binary, fn, args))
            print(f"{fn:8s} suite: {rec['cts_s']} s, {rec['cts_result']}: "
                  f"{' | '.join(rec['cts_tail'][-3:])}", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-vs-cts-") as tmp:
            meta = sweep_once(fn, sweep_args, Path(tmp) / "res")
        dev = (meta.get("devices") or [{}])[0]
        device_label = device_label or dev.get("name", "")
        rec.update({"fuzzfarm_s": round(meta["wall"], 2), "inputs": meta.get("inputs"),
                    "failures": meta.get("failures"),
                    "fuzzfarm_failures_by_rule": meta.get("failures_by_rule"),
                    "fuzzfarm_status": meta.get("status"),
                    "max_ulp_error": meta.get("max_ulp_error"),
                    "screen": meta.get("screen"), "screened": meta.get("screened"),
                    "ulp_p50": meta.get("ulp_p50"), "ulp_p99": meta.get("ulp_p99"),
                    "exact": meta.get("exact"),
                    "device_seconds": round(meta.get("device_seconds") or 0.0, 2),
                    "check_seconds": round(meta.get("check_seconds") or 0.0, 2),
                    "fuzzfarm_phases": meta.get("phase_seconds"),
                    "device": dev.get("label"), "driver": dev.get("driver_version")})
        model = dev.get("name") or ""
        if rec.get("cts_device") is not None and model and model not in rec["cts_device"]:
            # the suite ran elsewhere (another platform came first): no comparison
            rec["cts_result"] = f"wrong device: {rec['cts_device']!r}, not {model!r}"
            print(f"{fn:8s} the suite ran on {rec['cts_device']!r}, not on {model!r}: "
                  f"no ratio (set --cts-icd / --cts-device-type)", flush=True)
        elif "cts_s" in rec and rec["cts_s"]:
            rec["ratio"] = round(rec["fuzzfarm_s"] / rec["cts_s"], 3)
        records.append(rec)
        print(f"{fn:8s} suite {rec.get('cts_s', '-')} s ({rec.get('cts_result', '-')}), "
              f"fuzzfarm {rec['fuzzfarm_s']} s for {rec['inputs']:,} inputs, "
              f"{rec['failures']:,} failures, ratio {rec.get('ratio', '-')}; phases (s): "
              f"{rec['fuzzfarm_phases']}", flush=True)
        path = save(records, args, device_label)    # after each: a stop keeps the finished
    print(f"wrote {path}")


def save(records: list, args, device_label: str) -> Path:
    """Merge ``records`` into ``--out``'s file of the day for this device (its other
    functions' records kept) by an atomic replace; returns its path."""
    tag = args.tag or re.sub(r"[^a-z0-9]+", "-", device_label.lower()).strip("-") or "device"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"vs_cts-{tag}-{dt.date.today().isoformat()}.json"
    mine = {r["function"] for r in records}
    kept = [r for r in json.loads(path.read_text()) if r["function"] not in mine] \
        if path.exists() else []            # another batch of functions the same day
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(kept + records, indent=1) + "\n")
    tmp.replace(path)
    return path


if __name__ == "__main__":
    main()
