"""The driver of ``fuzzfarm run``: validate, start Ray, show progress, summarize.

Everything a user can get wrong is checked before Ray starts or a file is written
(``validate``); errors are ``UsageError`` with one line naming the problem.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from fuzzfarm.errors import BadInput

try:
    from rich.console import Console
    from rich.table import Table
except ImportError:             # a bare image (the GPU machine): plain progress lines
    Console = Table = None

__all__ = ["RunOptions", "UsageError", "parse_budget", "validate", "summary_tables",
           "BUILD_OPTION_PREFIXES"]


#: Build options the checker knows how to read start with one of these.
BUILD_OPTION_PREFIXES = ("-cl-", "-D", "-I", "-w", "-Werror")


class UsageError(BadInput):
    """Bad input from the user: one line, exit code 2."""


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_budget(text: str, option: str = "--budget") -> float:
    """'90s', '5m', '2h', '1h30m', '1d' or plain seconds ('45') -> seconds (float).

    Raises UsageError, naming ``option``, for anything else or a non-positive duration.
    """
    t = str(text).strip().lower()
    if re.fullmatch(r"\d+(\.\d+)?", t):
        secs = float(t)
    else:
        parts = re.findall(r"(\d+(?:\.\d+)?)([smhd])", t)
        if not parts or "".join(a + b for a, b in parts) != t:
            raise UsageError(f"{option} {text!r} is not a duration; write e.g. 90s, 5m, 2h "
                             f"or 1h30m")
        secs = sum(float(a) * _UNITS[b] for a, b in parts)
    if secs <= 0:
        raise UsageError(f"{option} {text!r} must be positive")
    return secs


@dataclass
class RunOptions:
    functions: list
    budget: float
    seed: int
    out: str
    devices: list = field(default_factory=list)   # DeviceInfo
    address: str | None = None
    build_options: str = ""
    per_recipe: int = 8192          # inputs per recipe of a target's first units
    recipes_per_unit: int = 4       # recipes of a target's first units
    unit_seconds: float = 0.5       # units sized to take about this long to check
    min_unit_inputs: int = 1024     # a target's first units (then sized by its rate)
    max_unit_inputs: int = 1 << 26   # campaign.MAX_UNIT_INPUTS (host units: UNIT_MAX_BYTES)
    in_flight: int | None = None    # check tasks pending per device (default: the CPUs)
    makers: int | None = None       # unit-generating actors per device (0: in the actor;
    #                                 default from 8 CPUs up: 3/4 of the CPUs shared by the
    #                                 node's devices; else 0)
    profile_dir: str | None = None  # cProfile each device actor's loop into this folder
    screen: str = "auto"            # 'auto': the device screen where it applies; 'host'
    inputs: str = "auto"            # 'auto': inputs made on the device where it can; 'host'

    num_cpus: int | None = None
    precisions: tuple = ("binary32",)
    widths: tuple = (1,)
    front_ends: tuple = ("opencl-c",)
    targets: list = field(default_factory=list)   # Target


#: Names a user may give for a precision.
PRECISION_NAMES = {"binary16": "binary16", "half": "binary16", "fp16": "binary16",
                   "binary32": "binary32", "float": "binary32", "fp32": "binary32",
                   "binary64": "binary64", "double": "binary64", "fp64": "binary64"}
#: Groups a user may name in --functions.
GROUPS = ("math", "half", "native", "common", "geometric", "operator", "conversions")


def _names(functions: str | None, what: str = "--functions") -> list:
    """Built-in names and conversion ids from --functions (groups expanded); ``what`` names
    the option or campaign key in the UsageError messages."""
    from edgecases import catalogue, conversions
    from fuzzfarm.target import TargetError, canonical_name
    fns = catalogue.functions()
    if not functions:
        return list(fns) + [c.id for c in conversions.conversions() if c.precision]
    out = []
    # conversion ids hold commas only inside parentheses: split outside them
    for name in re.split(r",(?![^()]*\))", functions):
        name = name.strip()
        if not name:
            continue
        if name in fns:
            out.append(name)
        elif name == "conversions":
            out += [c.id for c in conversions.conversions() if c.precision]
        elif name in GROUPS:
            out += [f.name for f in fns.values() if f.family == name]
        else:
            try:
                out.append(canonical_name(name))
            except TargetError as exc:
                raise UsageError(f"{what}: {exc}; see `fuzzfarm catalogue` (groups: "
                                 f"{', '.join(GROUPS)})") from None
    if not out:
        raise UsageError(f"{what} is empty")
    return list(dict.fromkeys(out))


def targets_for(names, precisions, widths, front_ends=("opencl-c",)) -> list:
    """The Target of every name (built-in or conversion id) in every precision and width it
    exists in, through each of ``front_ends``, in that order.  Raises TargetError (a
    BadInput) for an unknown name."""
    from fuzzfarm.target import Target, TargetError
    out = []
    for name in names:
        Target(name).spec                     # an unknown name is an error, not a skip
        for p in precisions:
            for w in widths:
                for fe in front_ends:
                    try:
                        out.append(Target.parse(name, p, w, fe))
                    except TargetError:       # no such form of the built-in
                        continue
    return out


def _parse_list(text, what, parse) -> tuple:
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise UsageError(f"--{what} is empty")
    return tuple(dict.fromkeys(parse(t) for t in items))


def _precision(t: str, what: str = "--precisions") -> str:
    if t.lower() not in PRECISION_NAMES:
        raise UsageError(f"{what}: unknown precision {t!r}; use binary16, binary32, "
                         f"binary64 (or half, float, double)")
    return PRECISION_NAMES[t.lower()]


def _front_end(t: str, what: str = "--front-end") -> str:
    from fuzzfarm.target import FRONT_ENDS
    if t.lower() not in FRONT_ENDS:
        raise UsageError(f"{what}: unknown front end {t!r}; use {' or '.join(FRONT_ENDS)}")
    return t.lower()


def _width(t: str, what: str = "--widths") -> int:
    from edgecases.catalogue import WIDTHS
    if not (t.isascii() and t.isdigit()) or int(t) not in WIDTHS:
        raise UsageError(f"{what}: {t!r} is not an OpenCL vector width; use some of "
                         f"{', '.join(map(str, WIDTHS))}")
    return int(t)


def validate(functions: str | None, budget: str, seed: int | None, out: str,
             device: str | None, address: str | None, build_options: str = "",
             precisions: str = "binary32", widths: str = "1",
             front_ends: str = "opencl-c") -> RunOptions:
    """Check every option; returns RunOptions.  Raises UsageError naming the problem."""
    from fuzzfarm.store import dataset as store
    names = _names(functions)
    precs = _parse_list(precisions, "precisions", _precision)
    wids = _parse_list(widths, "widths", _width)
    fes = _parse_list(front_ends, "front-end", _front_end)
    secs = parse_budget(budget)
    if seed is not None and seed < 0:
        raise UsageError(f"--seed {seed} must be >= 0")
    bad = [t for t in (build_options or "").split() if not t.startswith(BUILD_OPTION_PREFIXES)]
    if bad:
        raise UsageError(f"--build-options: {bad[0]!r} is not an OpenCL build option "
                         f"(e.g. -cl-fast-relaxed-math, -cl-denorms-are-zero)")
    try:
        from fuzzfarm.device.discovery import DeviceSelectionError, select_devices
    except ImportError as exc:      # no pyopencl: the one line, not a traceback
        raise UsageError(f"cannot import pyopencl ({exc}); install it with `pip install "
                         f"pyopencl pocl-binary-distribution`") from None
    try:
        devices = select_devices(device)
    except DeviceSelectionError as exc:
        raise UsageError(str(exc)) from None
    if not devices:
        raise UsageError("no OpenCL device found; `pip install pocl-binary-distribution` "
                         "gives a CPU device")
    from fuzzfarm.formats import format_named
    usable = [p for p in precs if any(d.supports(format_named(p)) for d in devices)]
    if not usable:
        raise UsageError(f"--precisions {','.join(precs)}: no selected device supports "
                         f"{' or '.join(precs)} (binary16 needs cl_khr_fp16, binary64 cl_khr_fp64)")
    from fuzzfarm.work.session import capabilities_of
    can = [set(capabilities_of(d)) for d in devices]
    if "spirv" in fes and not any("spirv" in c for c in can):
        raise UsageError("--front-end spirv: no selected device takes SPIR-V "
                         "(CL_DEVICE_IL_VERSION names none; see `fuzzfarm devices`)")
    targets = [t for t in targets_for(names, usable, wids, fes)
               if any(t.requirements <= c for c in can)]
    if not targets:
        raise UsageError(f"--functions/--precisions/--widths: none of the functions exists in "
                         f"precisions {','.join(usable)} at widths {','.join(map(str, wids))}")
    try:
        store.check_writable(out)
    except store.StoreError as exc:
        raise UsageError(str(exc)) from None
    return RunOptions(names, secs, seed if seed is not None else int.from_bytes(os.urandom(3), "big"),
                      out, devices, address, build_options, precisions=tuple(usable),
                      widths=wids, front_ends=fes, targets=targets)


def _per_function(out: str, run_id: str) -> dict:
    from fuzzfarm.store import dataset as store

    stats = store.read_stats(out, run_id).to_pylist()
    per_fn: dict = {}
    for s in stats:
        # a SPIR-V unit's function is named with its front end: 'sin [spirv]'
        fe = s.get("front_end") or "opencl-c"
        name = s["function"] if fe == "opencl-c" else f"{s['function']} [{fe}]"
        d = per_fn.setdefault(name, {"inputs": 0, "failures": 0, "notes": 0,
                                     "max_ulp": None, "rules": set()})
        d["inputs"] += s["inputs_tested"]
        d["failures"] += s["failures"]
        d["notes"] += s["notes"]
        for rule, _ in s["failures_by_rule"]:
            d["rules"].add(rule)
        m = s["max_ulp_error"]
        if m is not None and (d["max_ulp"] is None or m > d["max_ulp"]):
            d["max_ulp"] = m
    return per_fn


def summary_rows(out: str, run_id: str) -> list[dict]:
    """Per function of run ``run_id``: inputs, failures, notes, the largest ULP error and
    the failing rules (a line log's 'summary' events)."""
    return [{"function": name, "inputs": d["inputs"], "failures": d["failures"],
             "notes": d["notes"], "max_ulp": d["max_ulp"] if d["max_ulp"] is not None else "-",
             "failing_rules": ",".join(sorted(d["rules"])) or "-"}
            for name, d in _per_function(out, run_id).items()]


def summary_tables(out: str, run_id: str) -> list[Table]:
    """Per-function summary and one example per failing rule, from the stored Parquet."""
    import pyarrow.compute as pc

    from fuzzfarm.store import dataset as store

    findings = store.read_findings(out, run_id)
    per_fn = _per_function(out, run_id)
    t = Table(title=f"Summary of run {run_id}")
    for col in ("function", "inputs", "failing inputs", "inputs with notes", "max ULP error",
                "failing rules"):
        t.add_column(col, justify="left" if col in ("function", "failing rules") else "right")
    for name, d in per_fn.items():
        t.add_row(name, f"{d['inputs']:,}", f"{d['failures']:,}", f"{d['notes']:,}",
                  "-" if d["max_ulp"] is None else f"{d['max_ulp']:.3g}",
                  ", ".join(sorted(d["rules"])))
    tables = [t]
    if findings.num_rows:
        import pyarrow as pa
        from fuzzfarm.store.samples import counts
        cols = ["function", "rule_id", "sentence", "inputs", "outputs", "expected"]
        fails = findings.filter(pc.equal(findings["severity"], "fail"))
        weights = counts(fails)
        fails = fails.select(cols)
        ex = Table(title="Failures: one example per function and rule", show_lines=True)
        for col in ("function", "rule", "failing inputs", "stored examples",
                    "example: input -> got (expected)"):
            ex.add_column(col, overflow="fold",
                          justify="right" if col.endswith(("inputs", "examples")) else "left")
        # counted inputs, stored rows and first row per (function, rule) with Arrow
        keyed = fails.select(["function", "rule_id"]).append_column(
            "row", pa.array(range(fails.num_rows), type=pa.int64())).append_column(
            "n", weights)
        groups = keyed.group_by(["function", "rule_id"]).aggregate(
            [("row", "count"), ("row", "min"), ("n", "sum")]).to_pylist()
        firsts = fails.take(pa.array([g["row_min"] for g in groups], pa.int64())).to_pylist()
        for g, r in sorted(zip(groups, firsts), key=lambda gr: (gr[0]["function"],
                                                                  gr[0]["rule_id"])):
            ex.add_row(g["function"], f"{g['rule_id']}\n[dim]{r['sentence']}[/]",
                       f"{g['n_sum']:,}", f"{g['row_count']:,}",
                       f"{r['inputs']} -> {r['outputs']}\n(expected {r['expected']})")
        if groups:
            tables.append(ex)
        faults = findings.filter(pc.equal(findings["severity"], "fault"))
        if faults.num_rows:
            ft = Table(title="Device faults (kernels that did not build, OpenCL errors, units "
                             "that crashed or hung their device twice)")
            for col in ("device", "target", "fault", "what the device said"):
                ft.add_column(col, overflow="fold")
            for r in faults.select(["device", "function", "precision", "vector_width",
                                    "unit_id", "rule_id", "reading",
                                    "build_options"]).to_pylist():
                said = r["reading"] or f"inputs saved in {out}/_faults/{run_id}/" \
                                       f"{r['unit_id']}.npz"
                ft.add_row(r["device"], f"{r['function']} {r['precision']} "
                           f"w{r['vector_width']} {r['build_options']}".strip(), r["rule_id"],
                           said[:300])
            tables.append(ft)
    return tables


def print_report(meta: dict, out, log=None) -> int:
    """Print a run's summary: ``summary`` lines and an ``end`` line on ``log`` (a
    fuzzfarm.orchestrate.progress.LineLog), else rich tables and a closing sentence on
    stdout; both say the time to the first failure (seconds from the run's start).
    ``meta``: the run's metadata (``cluster.driver.run_campaign``).  Returns the run's
    failures."""
    from rich.console import Console

    failures = sum(t.get("failures", 0) for t in meta.get("totals", []))
    first = meta.get("first_failure_s")     # seconds from the budget's start (None: none)
    if log is not None:
        for row in summary_rows(out, meta["run_id"]):
            log.event("summary", **row)
        log.event("end", run_id=meta["run_id"], status=meta["status"], failures=failures,
                  faults=len(meta.get("faults") or []), results=str(out),
                  first_failure_s="-" if first is None else first)
    else:
        report = Console()
        for table in summary_tables(out, meta["run_id"]):
            report.print(table)
        report.print(f"run {meta['run_id']}: {meta['status']}; "
                     f"{'' if first is None else f'first failure after {first:g} s; '}"
                     f"results in {out}/ (pyarrow.dataset.dataset({str(out)!r}))")
    return failures
