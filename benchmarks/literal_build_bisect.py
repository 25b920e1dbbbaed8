#!/usr/bin/env python3
"""Which constants make a literal program hang: the smallest set of a target's literal
calls whose program does not build, or whose kernel does not finish, within a time
limit (docs/constants.md).

    python3 benchmarks/literal_build_bisect.py remainder -p binary32 -d nvidia
        [--rows 0:64] [--seed 0] [--timeout 30] [--build-options OPTS] [--out DIR]

The constants job (``compare = "constants"``) builds a target's special values 64 calls
to a program (``DeviceRunner.run_literals``); a program whose build does not end is a
hang of its unit.  This takes the same calls (``work.make.make_inputs`` of the target's
special-value unit of ``--seed`` against the constants door, rows ``--rows`` of it),
builds their program and runs it on one work-item in a child process
(``kernels.literal_source``; killed after ``--timeout`` seconds: a hang, building or
running), and, where it hangs, halves the set while one half still hangs, then
drops single calls while the rest still hangs: what is left is a set of calls every
proper subset of which the tries so far ran, each tried once more alone.  Every try is
timed; ``--out DIR`` writes ``literal_build_bisect.json`` there.  No assertions.  (Give
build options with ``=``: ``--build-options=-cl-denorms-are-zero``.)
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _build(selector: str, source: str, options: str, name: str, outputs: list,
           stage) -> None:
    """In the child: build ``source`` on the device ``selector`` names and run its kernel
    ``name`` on one work-item (``outputs``: the byte sizes of its output buffers),
    telling ``stage`` (a Value) how far it got: 1 built, 2 ran; exit 1 when the driver
    refused it."""
    from fuzzfarm.device.discovery import list_devices, open_device, select_devices
    import pyopencl as cl
    info = select_devices(selector, list_devices())[0]
    device = open_device(info)
    ctx = cl.Context([device])
    try:
        program = cl.Program(ctx, source).build(options=options, devices=[device])
        stage.value = 1
        queue = cl.CommandQueue(ctx, device)
        bufs = [cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, n) for n in outputs]
        getattr(program, name)(queue, (1,), (1,), *bufs)
        queue.finish()
        stage.value = 2
    except cl.Error:
        sys.exit(1)


def _try(args, fn, fmt, rows: list) -> dict:
    from fuzzfarm.device.kernels import buffer_dtype, literal_kernel_name, literal_source
    ctx = mp.get_context("spawn")
    stage = ctx.Value("i", 0)
    sizes = [len(rows) * buffer_dtype(o, fmt).itemsize for o in fn.outputs]
    child = ctx.Process(target=_build, args=(
        args.device, literal_source(fn, fmt, rows), args.build_options,
        literal_kernel_name(fn), sizes, stage))
    t0 = time.perf_counter()
    child.start()
    child.join(args.timeout)
    hung = child.is_alive()
    if hung:
        child.kill()
        child.join()
    seconds = round(time.perf_counter() - t0, 2)
    verdict = ("hang building" if stage.value == 0 else "hang running") if hung else \
        "ran" if child.exitcode == 0 else "refused"
    print(f"  {len(rows):3d} calls: {verdict} ({seconds} s)", flush=True)
    return {"calls": len(rows), "rows": rows, "verdict": verdict, "seconds": seconds}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("function")
    ap.add_argument("-p", "--precision", default="binary32")
    ap.add_argument("-d", "--device", default="nvidia")
    ap.add_argument("--rows", default="0:64", help="first:last of the special values")
    ap.add_argument("--seed", type=int, default=0, help="the special-value unit's seed")
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--build-options", default="")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    from edgecases.catalogue import function
    from fuzzfarm.formats import format_named
    from fuzzfarm.target import CONSTANTS_DOORS, Target
    from fuzzfarm.work.make import make_inputs
    from fuzzfarm.work.unit import Special, WorkUnit
    fn, fmt = function(args.function), format_named(args.precision)
    unit = WorkUnit("bisect", Target(args.function, args.precision, 1, "opencl-c"),
                    Special(args.seed), args.build_options, against=CONSTANTS_DOORS[0])
    inputs = make_inputs(unit)
    lo, hi = (int(v) for v in args.rows.split(":"))
    cols = [inputs[a.name] for a in fn.inputs]
    rows = [tuple(int(c[i]) for c in cols) for i in range(lo, min(hi, len(cols[0])))]
    tries = []

    def hangs(subset: list) -> bool:
        tries.append(_try(args, fn, fmt, subset))
        return tries[-1]["verdict"].startswith("hang")

    print(f"{args.function} {args.precision} rows {lo}:{lo + len(rows)} on {args.device}")
    left = rows
    if hangs(left):
        while len(left) > 1:                 # halves while one of them still hangs
            half = len(left) // 2
            if hangs(left[:half]):
                left = left[:half]
            elif hangs(left[half:]):
                left = left[half:]
            else:
                break
        k = 0
        while k < len(left) and len(left) > 1:   # then single calls out while it hangs
            rest = left[:k] + left[k + 1:]
            if hangs(rest):
                left = rest
            else:
                k += 1
        alone = [_try(args, fn, fmt, [row]) for row in left] if len(left) > 1 else []
        tries += alone
    else:
        left = []
    from fuzzfarm.formats import describe_value
    names = [a.name for a in fn.inputs]
    kinds = [a.kind for a in fn.inputs]
    found = [", ".join(f"{n}={describe_value(k, v, fmt)}" for n, k, v in zip(names, kinds, r))
             for r in left]
    print("hanging calls:" if found else "no hang", *found, sep="\n  ")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "literal_build_bisect.json").write_text(json.dumps({
            "benchmark": "literal_build_bisect",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "host": platform.node(), "cpus": os.cpu_count(), "function": args.function,
            "precision": args.precision, "device": args.device, "rows": args.rows,
            "seed": args.seed,
            "timeout_s": args.timeout, "build_options": args.build_options,
            "hanging_calls": found, "tries": tries}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
