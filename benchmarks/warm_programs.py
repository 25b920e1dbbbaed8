#!/usr/bin/env python3
"""Build every program a whole-catalogue run builds -- the built-ins' kernels, every device
screen, the input generators -- once on one device, so that the driver's compiled-program
cache is warm before a timed run (a fresh machine's first run is otherwise paced by its
compiler: NVIDIA's built the 430 screens and the catalogue's kernels in 78 s cold, 8 s
cached, issue 28's eighth stop).

    python3 benchmarks/warm_programs.py [--device SEL] [-p binary32,binary64]

Prints the targets, the screens built and the seconds taken; a target whose program the
device does not build is listed (a finding for a real run, skipped here).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="0", help="device selector (default: the first)")
    p.add_argument("--precisions", "-p", default="binary32,binary64")
    args = p.parse_args(argv)
    from fuzzfarm.device.discovery import select_devices
    from fuzzfarm.orchestrate.run import _names, targets_for
    from fuzzfarm.work.make import make_unit
    from fuzzfarm.work.session import (MIN_SCREEN_INPUTS, DeviceSession, is_device_plan,
                                       prepare_inputs)
    t0 = time.perf_counter()
    session = DeviceSession(select_devices(args.device)[0])
    targets = targets_for(_names(""), tuple(args.precisions.split(",")), (1,))
    session.prepare({"": targets})
    screens = 0
    for t in targets:
        unit, plan = prepare_inputs(make_unit("warm", (t.name, t.precision, 1), 1, 1, 0, 1,
                                              size=1024), on_device=True)
        try:
            screens += session.screen(unit, MIN_SCREEN_INPUTS) is not None
            if is_device_plan(plan):
                session.makes(unit, plan)   # builds the kind's input generator
        except Exception as exc:            # noqa: BLE001 - listed, the others go on
            print(f"not built: {t} ({type(exc).__name__}: {str(exc)[:100]})")
    print(f"warm: {len(targets)} targets, {screens} device screens, "
          f"{time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
