"""Reproducers of device faults: a kernel that does not build (``device.build_failure``).

A build failure has no input to minimize: what a driver team needs is the kernel, the
build options, the log the compiler gave and a program that shows the log on their
machine.  ``export`` writes, from the finding's row alone:

* ``kernel.cl``      the program source fuzzfarm built (as recorded);
* ``build.py``       a pyopencl program that builds it on the device and prints the log;
* ``build.c``        the same in C (``gcc -std=c99 -O2 -o build build.c -lOpenCL``);
* ``README.md``      the device, driver, options, error code, rule and recorded build log;
* ``build_log.txt``  the recorded log, ``repro.json`` the finding's fields.

Both programs exit 1 while the kernel does not build and 0 once it does.  When the
finding's device (or the one ``device`` selects) is attached, the build is re-tried there
first: a kernel that now builds is NotReproducible; with no such device the reproducer is
written and marked as not re-verified.  The programs and the README are jinja2 templates
(``fuzzfarm/report/templates/build_failure.*.j2``).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["REPRODUCIBLE", "FaultReport", "export", "summary"]

from fuzzfarm.report.render import render
from fuzzfarm.report.repro import FAULT_REPRODUCIBLE as REPRODUCIBLE  # the fault rules it handles


@dataclass
class FaultReport:
    """What ``export`` did: the finding row, the device it re-verified on (None: not
    re-verified), the log of that build, the files written."""

    row: dict
    info: object | None
    log: str
    files: list = field(default_factory=list)
    out: Path | None = None


def export(row: dict, out, device: str | None = None, log=None) -> FaultReport:
    """Write the reproducer of build-failure finding ``row`` (a findings row, see module
    docstring) to ``out``.  Raises ReproError for a row of another kind, a row without the
    recorded source, or an unwritable ``out``; NotReproducible when the kernel now builds
    on the device it is re-verified on."""
    from fuzzfarm.store import dataset as store
    from fuzzfarm.report.repro import NotReproducible, ReproError, repro_device
    log = log or (lambda msg: None)
    if row.get("rule_id") not in REPRODUCIBLE:
        raise ReproError(f"{row.get('rule_id')!r} has no fault reproducer; "
                         f"{sorted(REPRODUCIBLE)} have")
    detail = json.loads(row.get("fault_detail") or "{}")
    source = detail.get("kernel_source") or ""
    if not source:
        raise ReproError(f"finding {row['unit_id']} records no kernel source (written by a "
                         f"fuzzfarm before build failures were findings)")
    try:
        store.check_writable(out)
    except store.StoreError as exc:
        raise ReproError(str(exc)) from None
    bo = detail.get("build_options", row.get("build_options") or "")
    info = repro_device(row, device)
    now_log = ""
    if info is not None:
        from fuzzfarm.device.runner import DeviceRunner, KernelBuildError
        log(f"building the recorded kernel on {info.label} [{info.fingerprint}]")
        runner = DeviceRunner(info, bo)
        runner.planted_build = ()           # the recorded source carries any #error
        try:
            runner.build(source, f"{row['function']} (recorded kernel)")
        except KernelBuildError as exc:
            now_log = exc.log
        else:
            raise NotReproducible(f"the recorded kernel of {row['function']} "
                                  f"{row['precision']} builds on {info.label} "
                                  f"[{info.fingerprint}] now")
    else:
        log(f"the finding's device {row['device']} [{row['device_fingerprint']}] is not "
            f"attached: exporting without re-verifying")
    values = {k: row.get(k) or "" for k in (
        "function", "precision", "device", "platform", "driver_version", "opencl_version",
        "opencl_c_version", "rule_id", "run_id", "unit_id", "section", "sentence")}
    values.update(width=row.get("vector_width") or 1, build_options=bo,
                  error_name=detail.get("error_name") or "",
                  error_code=detail.get("error_code"),
                  build_log=(detail.get("build_log") or "").strip(),
                  verified=(f"yes, on {info.label} [{info.fingerprint}]: still fails"
                            if info is not None else "no (the device is not attached here)"))
    from fuzzfarm.report.repro import shipped_icds
    icds = shipped_icds(info)
    values["icd_files"] = [name for name, _ in icds]
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {**{name: lib + "\n" for name, lib in icds}, "kernel.cl": source, "build_log.txt": values["build_log"] + "\n",
             "build.py": render("build_failure.py.j2", **values),
             "build.c": render("build_failure.c.j2", **values),
             "README.md": render("build_failure.md.j2", **values),
             "repro.json": json.dumps({**{k: v for k, v in row.items() if k != "time"},
                                       "fault_detail": detail,
                                       "verified_on": None if info is None else info.label},
                                      indent=1, default=str) + "\n"}
    written = []
    for name, text in files.items():
        path = out / name
        tmp = path.with_name(f".{name}.tmp-{os.getpid()}")
        tmp.write_text(text)
        os.replace(tmp, path)
        written.append(path)
    os.chmod(out / "build.py", 0o755)
    return FaultReport(row, info, now_log, written, out)


def summary(report: FaultReport) -> list[str]:
    """Lines for the terminal."""
    r = report.row
    lines = [f"{r['function']} {r['precision']} width {r.get('vector_width') or 1}: "
             f"{r['rule_id']} on {r['device']} (driver {r['driver_version']})"]
    if report.info is not None:
        first = next((ln for ln in report.log.splitlines() if ln.strip()), "")
        lines.append(f"  still fails to build on {report.info.label}: {first[:160]}")
    else:
        lines.append("  not re-verified: the device is not attached here")
    lines.append(f"  wrote {', '.join(p.name for p in report.files)} to {report.out}/")
    return lines
