#!/usr/bin/env python3
"""Build and launch once every program a whole-catalogue run uses -- the built-ins' kernels,
every device screen and its gathering, the input generators -- on one device, as a
campaign's start does (fuzzfarm.work.warm; docs/cold_start.md), so that the driver's
compiled-program cache is warm before a timed run.

    python3 benchmarks/warm_programs.py [--device SEL] [-p binary32,binary64] [--helpers N]

Prints the targets warmed, those whose warm-up met an error (a finding for a real run,
which records it) and the seconds taken.
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
    p.add_argument("--helpers", type=int, default=None,
                   help="helper processes (default: one per core where they help, else "
                        "none: the warm-up runs in this process)")
    args = p.parse_args(argv)
    from fuzzfarm.device.discovery import select_devices
    from fuzzfarm.orchestrate.run import _names, targets_for
    from fuzzfarm.work.session import DeviceSession
    from fuzzfarm.work.warm import helpers_useful, warm_in_helpers, warm_in_process
    t0 = time.perf_counter()
    info = select_devices(args.device)[0]
    targets = {"": targets_for(_names(""), tuple(args.precisions.split(",")), (1,))}
    if args.helpers != 0 and (args.helpers or helpers_useful(info)):
        report = warm_in_helpers(info, targets, processes=args.helpers)
        progress, how = report.progress, f"{report.helpers} helper processes"
    else:
        session = DeviceSession(info)
        session.prepare_kernels(targets)
        progress, how = warm_in_process(session, targets), "in this process"
    print(f"warm: {progress.done} of {progress.total} targets ({progress.failed} met an "
          f"error), {how}, {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
