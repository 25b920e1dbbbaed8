"""The ``fuzzfarm`` command line.

``main`` is the click group (console script ``fuzzfarm = "fuzzfarm.cli:main"``, and
``python -m fuzzfarm``); each subcommand is a function below it, registered with
``@main.command()``.  Keep commands thin: parse options, call the library, print.  Heavy
imports (pyopencl through ``fuzzfarm.device.runner``, Ray) happen inside the command that needs
them, so ``fuzzfarm --help`` works everywhere.

Shared pieces for new commands: ``DEVICE_OPTION`` (the ``--device`` selector, see
``fuzzfarm.device.discovery.select_devices``) and ``load_devices`` (the device module, with a clean
error where pyopencl is missing).
"""
from __future__ import annotations

import json
import os
import time
from collections import Counter

import click

from fuzzfarm import __version__
from fuzzfarm.errors import BadInput, FuzzfarmError

__all__ = ["main", "DEVICE_OPTION", "load_devices"]

STARTED = time.time()       # the command's start: a run's time budget counts from it


class _OneLineErrors(click.Group):
    """A click group whose errors are one line (``Error: ...``): the one place where the
    error hierarchy (fuzzfarm.errors) becomes exit statuses: bad input and corrupt results
    2, a device fault, a finding that no longer reproduces or malformed spec data 1."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except FuzzfarmError as exc:
            click.echo(f"Error: {' '.join(str(exc).split())}", err=True)
            raise SystemExit(exc.exit_status) from None
        except click.UsageError as exc:
            click.echo(f"Error: {exc.format_message()}", err=True)
            raise SystemExit(2) from None
        except click.ClickException as exc:
            exc.show()
            raise SystemExit(exc.exit_code) from None
        except click.Abort:
            click.echo("Aborted.", err=True)
            raise SystemExit(130) from None
        raise SystemExit(rv if isinstance(rv, int) else 0)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fuzzfarm")
def main() -> None:
    """Find where OpenCL devices' built-in math departs from the OpenCL specification."""


#: ``--device`` for any command that runs on devices; pass its value to select_devices.
DEVICE_OPTION = click.option(
    "--device", "-d", "device", default=None, metavar="SEL",
    help="Devices to use: 'all' (default), indices '0,2', 'P:D' pairs, fingerprints (or "
         "their first 6+ hex digits), or names ('pocl', 'nvidia', 'gpu'); see `fuzzfarm "
         "devices`.")


#: ``--workers`` of the commands that check in a pool of processes on this machine.
WORKERS_OPTION = click.option("--workers", "-j", type=click.IntRange(1, 1024), default=None,
                              help="Checking processes (default: one per core).")


def need_dashboard(option: str = "--dashboard") -> None:
    """Raise click.UsageError (exit 2, one line) when Ray's dashboard packages
    (ray[default]) are missing, before anything starts."""
    from ray._private.utils import get_dashboard_dependency_error
    err = get_dashboard_dependency_error()
    if err is not None:
        raise click.UsageError(f"{option} needs Ray's dashboard, which this installation "
                               f"lacks ({err}); pip install 'fuzzfarm[dashboard]'")


def load_devices():
    """The ``fuzzfarm.device.discovery`` module; raises click.ClickException (exit 1, one
    line) when pyopencl cannot be imported."""
    try:
        from fuzzfarm.device import discovery as device
    except ImportError as exc:
        raise click.ClickException(
            f"cannot import pyopencl ({exc}); install it with "
            f"`pip install pyopencl pocl-binary-distribution`") from None
    return device


@main.command()
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON list of device records instead of a table.")
def devices(as_json: bool) -> None:
    """List every OpenCL device with its identity and floating-point claims."""
    dev = load_devices()
    infos = dev.list_devices()
    if as_json:
        click.echo(json.dumps([d.to_dict() for d in infos], indent=2))
        return

    from fuzzfarm.report.devices import print_devices
    print_devices(infos)


LOG_OPTIONS = [
    click.option("--log-format", type=click.Choice(["auto", "rich", "text", "json"]),
                 default="auto", show_default=True,
                 help="Progress as rich live tables (a terminal), one line per event "
                      "(text), or JSON lines; auto: rich on a terminal, text elsewhere "
                      "(cron, CI, a file)."),
    click.option("--quiet", "-q", is_flag=True,
                 help="No progress lines: the start (run id, seed), warnings and the "
                      "end only."),
]


def log_options(f):
    for opt in reversed(LOG_OPTIONS):
        f = opt(f)
    return f


def _line_log(log_format: str, quiet: bool):
    """A LineLog on stdout for the line forms, None for rich (orchestrate.progress)."""
    import sys

    from fuzzfarm.orchestrate.progress import LineLog, resolve
    mode = resolve(log_format, sys.stdout)
    if mode == "rich" and not quiet:
        return None
    return LineLog("json" if mode == "json" else "text", stream=sys.stdout, quiet=quiet)


@main.command()
@click.option("--functions", "-f", default=None, metavar="NAMES",
              help="Comma-separated built-ins, conversions or groups (default: all of "
                   "`fuzzfarm catalogue`), e.g. sinpi,pow,frexp or "
                   "'common,convert_int_sat_rte(float)'. Groups: math, half, native, common, "
                   "geometric, operator, conversions.")
@click.option("--precisions", "-p", default="binary32", show_default=True, metavar="LIST",
              help="Formats to test: binary16 (cl_khr_fp16), binary32, binary64 (cl_khr_fp64); "
                   "also half, float, double.")
@click.option("--widths", "-w", default="1", show_default=True, metavar="LIST",
              help="Vector widths to call the built-ins at: 1,2,3,4,8,16 (every lane checked).")
@click.option("--front-end", "front_ends", default="opencl-c", show_default=True,
              metavar="LIST", help="How kernels enter the driver: opencl-c (source), spirv "
                                   "(SPIR-V modules; devices whose IL version names it).")
@click.option("--build-options", default="", metavar="OPTS",
              help="OpenCL build options, e.g. '-cl-fast-relaxed-math' (relaxed ULP table) or "
                   "'-cl-denorms-are-zero' (flush-to-zero allowances).")
@DEVICE_OPTION
@click.option("--budget", "-b", default="5m", show_default=True, metavar="DURATION",
              help="Wall time for the run: 90s, 5m, 2h, 1h30m.")
@click.option("--seed", type=int, default=None, help="Base seed (default: random; printed).")
@click.option("--out", "-o", default="results", show_default=True, type=click.Path(),
              help="Results directory (Parquet dataset; see README).")
@click.option("--address", default=None, metavar="ADDR",
              help="Join an existing Ray cluster (e.g. 'auto' or 'HOST:6379') instead of "
                   "starting a local one.")
@click.option("--campaign", "campaign_file", default=None, metavar="FILE",
              help="Run the campaign in this TOML file (see cluster/campaigns/example.toml) "
                   "instead of the options above.")
@click.option("--resume", "resume_dir", default=None, metavar="DIR",
              help="Continue the latest unfinished campaign in results directory DIR.")
@click.option("--dashboard", is_flag=True,
              help="Start Ray's dashboard with the local cluster and print its URL.")
@click.option("--fail-on-findings", is_flag=True,
              help="Exit with status 1 when a failure or a device fault was found (for CI "
                   "gates).")
@click.option("--screen", type=click.Choice(["auto", "host"]), default="auto",
              show_default=True,
              help="auto: binary16, binary32 and binary64 results of built-ins with a "
                   "device reference are screened on the device (docs/device_screen.md), "
                   "the rest on the host; host: every result on the host.")
@click.option("--inputs", "inputs_at", type=click.Choice(["auto", "host"]), default="auto",
              show_default=True,
              help="auto: drawn units that the device screens (binary32 and binary64 "
                   "built-ins of one to three float arguments, in binary32 also of an int "
                   "argument or a second output, in binary64 of a float second output; "
                   "conversions) make their inputs on the "
                   "device from the recipe, with integer operations only, and the host "
                   "regenerates those it judges to check (fuzzfarm/device/generate.py); "
                   "host: every unit's inputs are made on the host and copied to the "
                   "device.")
@log_options
@click.pass_context
def run(ctx, functions, precisions, widths, front_ends, build_options, device, budget, seed,
        out, address,
        campaign_file, resume_dir, dashboard, fail_on_findings, screen, inputs_at, log_format,
        quiet) -> None:
    """Fuzz the selected devices' built-ins for a time budget, or run a campaign, and
    report violations.

    Exit status: 0 when the run completed (whatever it found, device faults included: a
    kernel that does not build, an OpenCL error, a crash or hang is a finding), 1 with
    --fail-on-findings and a failure or a device fault, 2 for bad input, 3 when devices
    were lost and units are left (resume with --resume), 130 when interrupted (finished
    units are kept).
    """
    from rich.console import Console

    from cluster.driver import run_campaign
    from fuzzfarm.orchestrate import campaign as campaigns
    from fuzzfarm.orchestrate import run as runner

    load_devices()
    if dashboard:
        need_dashboard()
    created = not os.path.exists(out)       # --out made by this command (a campaign: below)
    given = [p.opts[0] for p in ctx.command.params if p.name in
             ("functions", "precisions", "widths", "front_ends", "build_options", "budget",
              "seed")
             and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT]
    if resume_dir and device:
        given.insert(0, "--device")
    run_id = None
    if campaign_file or resume_dir:
        default_out = ctx.get_parameter_source("out") is click.core.ParameterSource.DEFAULT
        from fuzzfarm.orchestrate.stored import stored_campaign
        run_id, camp, out, created = stored_campaign(campaign_file, resume_dir, device,
                                                     address, out, default_out, given)
    else:
        opts = runner.validate(functions, budget, seed, out, device, address,
                               build_options, precisions, widths, front_ends)
        camp, out = campaigns.of_run_options(opts), opts.out
    log = _line_log(log_format, quiet)
    try:
        meta = run_campaign(camp, out, address=address, run_id=run_id, dashboard=dashboard,
                            started=STARTED,
                            console=log or Console(stderr=True), screen=screen,
                            inputs=inputs_at)
    except BadInput:        # found once the devices were seen: leave no empty --out
        if created:
            from fuzzfarm.store.dataset import remove_unused
            remove_unused(out)
        raise
    from fuzzfarm.orchestrate.run import print_report
    failures = print_report(meta, out, log)
    if meta.get("interrupted"):
        raise SystemExit(130)
    if meta["status"] == "incomplete":
        raise SystemExit(3)
    if fail_on_findings and (failures or meta.get("faults")):
        raise SystemExit(1)


@main.command()
@click.argument("results", type=click.Path())
@click.option("--run", "run_id", default=None, metavar="RUN_ID",
              help="Verify one run only (default: every run in RESULTS).")
@click.option("--sample", default=200, show_default=True, type=click.IntRange(min=0),
              help="At most this many failures per (device, function, precision, width, "
                   "rule); 0 verifies all.")
@click.option("--no-device", is_flag=True,
              help="Only re-derive the verdicts; do not re-execute on the devices.")
@click.option("--json", "json_path", default=None, type=click.Path(dir_okay=False),
              help="Also write the verdicts per (device, function, precision, width, rule) "
                   "with an example, and the coverage of the runs, to this JSON file.")
def verify(results, run_id, sample, no_device, json_path) -> None:
    """Re-execute stored failures on their device and re-derive each verdict with an
    independent high-precision mpmath evaluation; print those that do not hold up.

    Exit status: 0 when every failure holds up, 1 when one does not, 2 for bad input.
    """
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from fuzzfarm.store import dataset as store
    from fuzzfarm.report import verify as verifier

    if not Path(results).is_dir():
        raise click.UsageError(f"RESULTS {results!r} is not a results directory")
    table = store.read_findings(results, run_id)
    rows = [r for r in table.to_pylist() if r["severity"] == "fail"]
    if run_id and not (Path(results) / run_id).is_dir():
        raise click.UsageError(f"--run {run_id!r}: no such run in {results!r}")
    picked, seen = [], Counter()
    for r in rows:
        key = (r["device_fingerprint"], r["function"], r["precision"], r["vector_width"],
               r["rule_id"])
        seen[key] += 1
        if not sample or seen[key] <= sample:
            picked.append(r)
    console = Console()
    if not picked:
        console.print(f"no failures to verify in {results}")
        return
    runners = {}
    if not no_device:
        dev = load_devices()
        from fuzzfarm.device.runner import DeviceRunner
        infos = {d.fingerprint: d for d in dev.list_devices()}
        for fp, opts in {(r["device_fingerprint"], r["build_options"] or "") for r in picked}:
            if fp in infos:
                runners[fp] = DeviceRunner(infos[fp], opts)
    report = verifier.verify_findings(picked, runners, verifier.run_constants(results),
                                      per_recipe=verifier.run_per_recipe(results))
    # each stored row stands for its `count` findings (store.samples)
    total = sum(r.get("count") or 1 for r in rows)
    t = Table(title=f"verify {results}: {len(picked)} of {len(rows)} stored failures "
                    f"(standing for {total:,})")
    for col in ("function", "rule", "confirmed", "refuted", "not reproduced"):
        t.add_column(col, justify="left" if col in ("function", "rule") else "right")
    counts = report.counts()
    for fn, rule in sorted({(k[0], k[1]) for k in counts}):
        t.add_row(fn, rule, *(str(counts.get((fn, rule, s), 0))
                              for s in ("confirmed", "refuted", "not reproduced")))
    console.print(t)
    for fp in sorted(report.absent_devices):
        console.print(f"[yellow]device {fp} is not attached here: verdicts re-derived, "
                      f"not re-executed[/]")
    for v in report.bad[:50]:
        r = v.row
        console.print(f"[red]does not hold up[/]: {r['function']} {r['rule_id']} "
                      f"{r['inputs']} -> {r['outputs']}: {v.detail}")
    console.print(f"{len(report.verdicts) - len(report.bad)} of {len(report.verdicts)} "
                  f"failures hold up")
    if json_path:
        data = {"results": str(results), "total_failures": total, "stored_failures": len(rows),
                "violations": verifier.violation_summary(report),
                "coverage": verifier.coverage(results, run_id)}
        Path(json_path).write_text(json.dumps(data, indent=2, default=str))
    if report.bad:
        raise SystemExit(1)


@main.command()
@click.argument("function")
@click.option("--precision", "-p", default="binary32", show_default=True,
              help="binary32 (2^32 inputs of one argument) or binary16 (2^16 of one, 2^32 "
                   "pairs of two); also float, half.")
@DEVICE_OPTION
@click.option("--out", "-o", default="results", show_default=True, type=click.Path(),
              help="Results directory (the sweep is one run in it; see README).")
@click.option("--build-options", default="", metavar="OPTS", help="OpenCL build options.")
@WORKERS_OPTION
@click.option("--chunk-bits", type=click.IntRange(16, 26), default=24, show_default=True,
              help="log2 of the inputs per chunk (the unit of resumption and of memory: "
                   "each in-flight chunk holds 2^bits outputs).")
@click.option("--chunks", "limit", type=click.IntRange(1), default=None,
              help="Do at most this many chunks now (resume later by running it again).")
@click.option("--screen", type=click.Choice(["auto", "device", "host"]), default="auto",
              show_default=True,
              help="Where the common case is judged: on the device (docs/device_screen.md; "
                   "auto falls back to the host where it cannot) or on the host.")
@click.option("--front-end", type=click.Choice(["opencl-c", "spirv"]), default="opencl-c",
              show_default=True, help="The sweep kernel as OpenCL C or a SPIR-V module.")
@click.option("--here", is_flag=True, help="Run in this process even where `fuzzfarm "
              "serve` holds the device (also: FUZZFARM_NO_SERVER=1).")
@log_options
@click.pass_context
def sweep(ctx, function, precision, device, out, build_options, workers, chunk_bits, limit,
          screen, front_end, here, log_format, quiet) -> None:
    """Check every input of FUNCTION's space on one device (all 2^32 binary32 bit patterns
    of a one-argument built-in), generated on the device from the global id.  Where
    `fuzzfarm serve` holds the device, the sweep runs there (its output printed here).

    Running the same command again resumes an unfinished sweep (chunk by chunk).  Exit
    status: 0 when complete, 1 when a failure was found or the device faulted (a kernel
    that does not build, an OpenCL error: recorded as a finding), 2 for bad input, 130 when
    interrupted (finished chunks are kept).
    """
    resident = ctx.obj          # the server's (orchestrate.resident) when it runs this
    if resident is None and not here:
        from fuzzfarm.orchestrate import resident as rs
        status = rs.forward(_argv(ctx), device, workers)
        if status is not None:
            raise SystemExit(status)
    from fuzzfarm.orchestrate import sweep as sw
    from fuzzfarm.store import dataset as store
    from fuzzfarm.orchestrate.progress import sweep_end, sweep_with_progress
    from fuzzfarm.orchestrate.run import _precision

    dev = load_devices()
    space = sw.space_for(function, _precision(precision))
    infos = dev.select_devices(device, resident.infos if resident else None)
    if len(infos) != 1:
        raise click.UsageError(f"--device: a sweep runs on one device; {device or 'all'!r} "
                               f"selects {len(infos)} (see `fuzzfarm devices`)")
    info = infos[0]
    if not info.supports(space.fmt) or (front_end == "spirv" and not info.spirv_versions):
        raise click.UsageError(f"--device: {info.label} lacks " + (
            space.fmt.name if not info.supports(space.fmt) else "SPIR-V (CL_DEVICE_IL_VERSION)"))
    store.check_writable(out)
    lock = store.ResultsLock(out, f"sweep {function} {space.fmt.name}")
    lock.acquire()          # before anything is printed: a second writer gets one line
    log = _line_log(log_format, quiet)
    try:
        with sw.without_pandas():
            meta = sweep_with_progress(sw, space, info, out, chunk_bits, build_options,
                                       limit, workers, function, lock, log, screen,
                                       front_end, resident)
    finally:
        lock.release()
    sweep_end(meta, space, out, log)
    if meta.get("interrupted"):
        raise SystemExit(130)
    if meta["failures"] or meta.get("device_fault") or meta.get("screen_fault"):
        raise SystemExit(1)


def _argv(ctx: click.Context) -> list[str]:
    """The arguments that give ``ctx``'s command its parsed values again."""
    args = [ctx.info_name]
    for p in ctx.command.params:
        v = ctx.params.get(p.name)
        flag = isinstance(p, click.Option) and p.is_flag
        args += [str(v)] if isinstance(p, click.Argument) else [p.opts[0]] if flag and v \
            else [p.opts[0], str(v)] if v is not None and not flag else []
    return args


@main.command()
@DEVICE_OPTION
@WORKERS_OPTION
@click.option("--idle", default="30m", show_default=True, metavar="DURATION",
              help="Stop after this long without a sweep (e.g. 90s, 30m, 8h).")
@click.option("--stop", is_flag=True, help="Stop every server listening and exit.")
@click.option("--list", "listing", is_flag=True, help="List the servers listening and exit.")
def serve(device, workers, idle, stop, listing) -> None:
    """Hold one device for `fuzzfarm sweep`: its context, programs and checking processes
    stay ready, so that a sweep pays only for its device time (docs/cold_start.md).
    Runs until --idle passes without a sweep, `fuzzfarm serve --stop`, SIGTERM or Ctrl-C."""
    from fuzzfarm.orchestrate import resident as rs
    from fuzzfarm.orchestrate.run import parse_budget
    if stop or listing:
        for line in rs.server_lines(stop):
            click.echo(line)
        return
    seconds, origin = parse_budget(idle, "--idle"), rs.Origin.now()  # before the drivers load
    dev = load_devices()
    infos = dev.list_devices()
    chosen = dev.select_devices(device, infos)
    if len(chosen) != 1:
        raise click.UsageError(f"--device: a server holds one device; {device or 'all'!r} "
                               f"selects {len(chosen)} (see `fuzzfarm devices`)")
    rs.serve_device(chosen[0], infos, workers, seconds, origin, main,
                    say=lambda text: click.echo(f"{time.strftime('%H:%M:%S')} {text}"))


@main.command("catalogue")
@click.option("--json", "as_json", is_flag=True, help="Print the whole catalogue as JSON.")
@click.option("--function", "-f", "only", default=None, metavar="NAME",
              help="Show one built-in: its bounds in every precision and profile and its rules.")
@click.option("--precisions", "-p", default="binary16,binary32,binary64", show_default=True,
              metavar="LIST", help="Formats to list.")
def catalogue_cmd(as_json, only, precisions) -> None:
    """List what is checked: functions x precisions x profiles with their bounds, and every
    rule with its id, condition, prescribed result and spec citation."""
    from edgecases import catalogue
    from fuzzfarm.orchestrate.run import _parse_list, _precision
    from fuzzfarm.report.catalogue import catalogue_data, print_catalogue

    precs = _parse_list(precisions, "precisions", _precision)
    if only and only not in catalogue.functions():
        raise click.UsageError(f"--function: unknown function {only!r}; see `fuzzfarm catalogue`")
    data = catalogue_data(precs, only)
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    print_catalogue(data, whole=not only)


#: How ``fuzzfarm findings`` groups signatures: (severity, title, what it means).
@main.command("check")
@click.argument("results", type=click.Path())
@click.option("--quarantine", is_flag=True,
              help="Move the damaged files to RESULTS/_quarantine/ (kept, never read).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per damaged file.")
def check_cmd(results, quarantine, as_json) -> None:
    """List the files of RESULTS that a reader would trip on (truncated or foreign
    Parquet files, a journal torn before its end), one line each, and with --quarantine
    move them aside so the rest reads.  Exit status: 0 when nothing is damaged (or all of
    it was quarantined), 1 when damage is left, 2 for a missing directory."""
    import os

    from fuzzfarm.store import dataset as store
    if not os.path.isdir(results):
        raise click.UsageError(f"no such results directory: {results!r}")
    bad = store.damaged_files(results)
    moved = store.quarantine(results, [f for f, _ in bad]) if quarantine and bad else []
    for k, (f, why) in enumerate(bad):
        if as_json:
            click.echo(json.dumps({"file": str(f), "problem": why,
                                   "quarantined": str(moved[k]) if moved else None}))
        else:
            click.echo(f"{'quarantined' if moved else 'damaged'}: {f}: {why}")
    if not as_json:
        click.echo(f"{results}: {len(bad)} damaged file(s)"
                   + (f", moved to {os.path.join(results, store.QUARANTINE)}" if moved else ""))
    if bad and not moved:
        raise SystemExit(1)


@main.command()
@click.argument("results", type=click.Path())
@click.option("--severity", type=click.Choice(["fail", "fault", "note", "all"]),
              default="all", show_default=True,
              help="Which findings: failures, device faults, notes, or all.")
@click.option("--function", "functions", default=None, metavar="LIST",
              help="Only these built-ins or conversion ids (comma-separated).")
@click.option("--limit", type=int, default=50, show_default=True,
              help="Signatures to list of each kind (0: all); a heading says how many "
                   "more there are.")
@click.option("--json", "as_json", is_flag=True,
              help="Print every signature as JSON lines (NDJSON), every field.")
@click.option("--wide", is_flag=True,
              help="Tables with every column (device, driver, governing text, runs, dates, "
                   "max ULP, expected) instead of one line per signature.")
def findings(results, severity, functions, limit, as_json, wide) -> None:
    """List the distinct problems (signatures) of the findings in RESULTS: failures (the
    governing text says shall, must, or states the result) apart from notes (should, may,
    implementation-defined) and device faults.  Per signature the device and driver,
    function, precision, width, build options, rule class, the text that governed it and
    its verb, how many findings and runs, first and last seen, the largest ULP error and
    one example; a last line counts each kind.

    A signature id (s + 12 hex digits) is what `fuzzfarm repro` takes.  Exit status: 0;
    2 when RESULTS is missing or corrupt.
    """
    import os

    from fuzzfarm.store import signatures
    from fuzzfarm.store import dataset as store
    if not os.path.isdir(results):
        raise click.UsageError(f"no such results directory: {results!r}")
    table = store.read_findings(results)
    summary = signatures.summarize(table).to_pylist()
    if severity != "all":
        summary = [r for r in summary if r["severity"] == severity]
    if functions:
        wanted = {f.strip() for f in functions.split(",") if f.strip()}
        summary = [r for r in summary if r["function"] in wanted]
    if as_json:
        for r in summary:
            click.echo(json.dumps(r, default=str, sort_keys=True))
        return
    from fuzzfarm.report import findings as report
    if wide:
        from rich.console import Console
        report.print_signatures(Console(), summary, limit, results)
        return
    import shutil
    width = shutil.get_terminal_size((80, 24)).columns
    for line in report.lines(summary, limit, results, width):
        click.echo(line)


@main.command()
@click.argument("results", type=click.Path())
@click.option("--run", "run_id", default=None, metavar="RUN_ID",
              help="The campaign to show (default: the latest in RESULTS).")
@click.option("--json", "as_json", is_flag=True, help="Print the status file as JSON.")
def status(results, run_id, as_json) -> None:
    """Show the progress of a campaign from its status file (written every few seconds
    by the running driver, and once more when it ends).

    Exit status: 0 shown, 2 when RESULTS holds no campaign status (or it is corrupt).
    """
    import time

    from fuzzfarm.store import dataset as store
    st = store.read_status(results, run_id)
    if st is None:
        raise click.UsageError(f"no campaign status in {results!r}"
                               + (f" for run {run_id!r}" if run_id else "")
                               + " (`fuzzfarm run --campaign FILE --out DIR` writes one)")
    age = time.time() - float(st.get("updated", 0))
    stale = st.get("state") == "running" and age > 3 * float(st.get("status_interval", 2)) + 10
    if as_json:
        click.echo(json.dumps({**st, "age_seconds": age, "driver_responding": not stale},
                              indent=2, sort_keys=True))
        return
    from rich.console import Console

    from fuzzfarm.report.status import status_table
    Console().print(status_table(st, results, stale, age))
    for f in st.get("faults", []):
        click.echo(f"device fault: {f['unit_id']} ({f['reason']}) on {f['device']}")
    if st.get("dashboard"):
        click.echo(f"Ray dashboard: http://{st['dashboard']}")


@main.command(context_settings={"ignore_unknown_options": True})
@click.option("--head", is_flag=True, help="Start the head node of a new cluster.")
@click.option("--address", default=None, metavar="HOST:PORT",
              help="Join the cluster whose head is at HOST:PORT as a worker node.")
@click.option("--port", type=int, default=6379, show_default=True,
              help="The head's GCS port (with --head).")
@click.option("--devices", "selector", default=None, metavar="SEL",
              help="This node's devices to offer (as --device: 'all', 'pocl', 'nvidia', "
                   "indices, fingerprint prefixes); default all.")
@click.option("--num-cpus", type=int, default=None, help="CPUs to offer (default: all).")
@click.option("--dashboard", is_flag=True, help="Start Ray's dashboard (with --head).")
@click.option("--block", is_flag=True, help="Stay in the foreground (as `ray start --block`).")
@click.option("--print-resources", is_flag=True,
              help="Print the JSON for `ray start --resources` and start nothing.")
@click.argument("ray_args", nargs=-1, type=click.UNPROCESSED)
def node(head, address, port, selector, num_cpus, dashboard, block, print_resources,
         ray_args) -> None:
    """Start a Ray node that offers this machine's OpenCL devices: `ray start` with one
    custom resource per device (fuzzfarm_dev_<fingerprint>_<i>), so that each device's
    actor lands on the node that has it.  Arguments after `--` go to `ray start`.

    Exit status: `ray start`'s; 2 for bad input (no --head/--address, a selector that
    matches no device).
    """
    import os
    import shutil
    import subprocess
    import sys

    from cluster.placement import local_resources
    dev = load_devices()
    try:
        every = dev.list_devices()
        chosen = dev.select_devices(selector, every)
    except dev.DeviceSelectionError as exc:
        raise click.UsageError(str(exc).replace("--device", "--devices")) from None
    resources = local_resources(chosen, every)
    if print_resources:
        click.echo(json.dumps(resources, sort_keys=True))
        return
    if dashboard:
        need_dashboard()
    if head == bool(address):
        raise click.UsageError("give exactly one of --head (a new cluster) and --address "
                               "HOST:PORT (join one)")
    if not chosen:
        click.echo("warning: this node has no OpenCL device; it offers CPUs for checking "
                   "only", err=True)
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    ray_bin = ray_bin if os.path.exists(ray_bin) else shutil.which("ray")
    # Ray's own command line, as a module where no `ray` script is installed
    ray_cmd = [ray_bin] if ray_bin else [sys.executable, "-m", "ray.scripts.scripts"]
    cmd = [*ray_cmd, "start", "--resources", json.dumps(resources)]
    cmd += ["--head", "--port", str(port)] if head else ["--address", address]
    if head:
        cmd += ["--include-dashboard", "true" if dashboard else "false"]
    if num_cpus is not None:
        cmd += ["--num-cpus", str(num_cpus)]
    if block:
        cmd.append("--block")
    cmd += list(ray_args)
    for d in chosen:
        click.echo(f"offering {d.label} [{d.fingerprint}]", err=True)
    raise SystemExit(subprocess.call(cmd))


@main.command("triage")
@click.option("--baseline", "-b", required=True, type=click.Path(), metavar="DIR",
              help="The results directory to compare against (e.g. last night's --out).")
@click.option("--current", "-c", required=True, type=click.Path(), metavar="DIR",
              help="The results directory to triage (e.g. tonight's --out).")
@click.option("--out", "-o", default="triage-report", show_default=True, type=click.Path(),
              help="Report directory: report.md, report.html (self-contained), junit.xml.")
@click.option("--pair", "pairs", multiple=True, metavar="BASE=CUR",
              help="Compare baseline device model BASE as current model CUR (two driver "
                   "builds naming one device differently); one model each is paired "
                   "by itself.")
def triage_cmd(baseline, current, out, pairs) -> None:
    """Compare two result sets: new / fixed / still failing / flaky / untested issues
    (matched by issue id, devices by model name), ULP maximum regressions per target and
    coverage differences; write a Markdown, HTML and JUnit report.

    Exit status: 1 when there are new failures, 0 otherwise, 2 for bad input.
    """
    from fuzzfarm.report import triage_report as triager
    mapping = {}
    for p in pairs:
        base, sep, cur = p.partition("=")
        if not sep or not base.strip() or not cur.strip():
            raise click.UsageError(f"--pair {p!r}: write BASELINE_MODEL=CURRENT_MODEL")
        mapping[base.strip()] = cur.strip()
    t = triager.run(baseline, current, out, mapping or None)
    triager.print_summary(t, out)
    if t.exit_code:
        raise SystemExit(t.exit_code)


@main.command("history")
@click.option("--build", "--results", "builds", multiple=True, required=True, metavar="BUILD",
              help="A build, oldest first: RUNTIME==VERSION (intel==2024.0.0, installed into "
                   "the cache), RUNTIME==FIRST..LAST (every release between), LABEL=DIR "
                   "(results already made) or LABEL=FILE (an ICD file or OpenCL library).")
@click.option("--campaign", "campaign_file", default=None, metavar="FILE",
              help="The campaign run on each build (default: cluster/campaigns/history.toml,"
                   " fixed seed: special values and recipe units, binary16/32/64).")
@click.option("--device", "-d", default=None, metavar="SEL",
              help="Which of each build's devices to test (default: intel's CPU device; "
                   "all a driver build adds).")
@click.option("--parallel", "-j", type=click.IntRange(1), default=None,
              help="Builds run at once, one Ray actor each (default: cores/8, at least 1; "
                   "with --address every build).")
@click.option("--address", default=None, metavar="ADDR", help="A running Ray cluster.")
@click.option("--timeout", default="1h", show_default=True, metavar="DURATION",
              help="A build's campaign running longer is a hang (a row that says so).")
@click.option("--bisect", "bisect_what", default=None, metavar="ID|FN/PREC[/RULE]",
              help="Only find the first build where this fails (or stops failing): an issue "
                   "of --out's history.json or sinpi/binary32[/RULE_CLASS]; writes bisect.md.")
@click.option("--max-ulp-above", type=click.FloatRange(min=0), default=None, metavar="ULPS",
              help="With --bisect FN/PREC or a ULP maximum's id of --out's history.json: "
                   "the first build whose ULP maximum is above this.")
@click.option("--no-replay", is_flag=True, help="Do not replay each build's worst inputs "
              "on the others (a second, short campaign per build).")
@click.option("--front-end", "front_end", type=click.Choice(["opencl-c", "spirv"]),
              default=None, help="Every job's kernels through this front end (default: "
              "as the campaign says; spirv: SPIR-V modules, docs/spirv.md).")
@click.option("--out", "-o", default="history-report", show_default=True,
              type=click.Path(file_okay=False), help="Report directory: history.md, .html, "
              ".json; builds/<label>/ holds each run build's results.")
def history_cmd(builds, campaign_file, device, parallel, address, timeout, bisect_what,
                max_ulp_above, no_replay, front_end, out):
    """A driver's history over ordered builds: every build runs one fixed-seed campaign
    (in parallel, one Ray actor and one OCL_ICD_VENDORS each); per issue the builds where
    it fails, the build that introduced it, the one that fixed it, or still failing /
    intermittent ("untested" where a build did not test its target: never a fix); each
    target's ULP maximum per build, and on every build's worst inputs replayed on each.
    A build that does not install, shows no device or
    whose campaign fails is a row that says so.  Example: fuzzfarm history --build
    intel==2024.0.0 --build intel==2025.0.0 --build intel==2026.2.0 -o intel-history

    Exit status 0, 2 for bad input, 130 when interrupted (the report covers the builds
    that finished).
    """
    from cluster import history as runner
    from fuzzfarm.orchestrate.run import UsageError, parse_budget

    try:
        seconds = parse_budget(timeout)
    except UsageError as exc:
        raise click.UsageError(str(exc).replace("--budget", "--timeout")) from None
    lines, code = runner.main(builds, out, campaign_file, device, parallel, address, seconds,
                              bisect_what, not no_replay, log=lambda m: click.echo(m, err=True),
                              front_end=front_end, max_ulp_above=max_ulp_above)
    for line in lines:
        click.echo(line)
    if code:
        raise SystemExit(code)


@main.command("repro")
@click.argument("ref", metavar="SIGNATURE|FINDING")
@click.argument("results", required=False, default="results", type=click.Path())
@click.option("--out", "-o", "out", required=True, type=click.Path(file_okay=False),
              help="Directory for the reproducer: kernel.cl, repro.py, repro.c, README.md, "
                   "repro.json (and pocl.icd for PyPI's PoCL).")
@click.option("--device", "-d", "device", default=None, metavar="SEL",
              help="Reproduce on this device (index, P:D, fingerprint prefix or name) "
                   "instead of the finding's own, found by its fingerprint.")
@click.option("--no-shrink", is_flag=True,
              help="Keep the original input (still one element, re-verified and exported).")
@click.option("--max-examples", type=click.IntRange(min=1), default=300, show_default=True,
              help="Hypothesis examples of the minimization (each one kernel launch).")
def repro_cmd(ref, results, out, device, no_shrink, max_examples) -> None:
    """Make a minimized, self-contained reproducer of one finding: SIGNATURE (s + 12 hex,
    from `fuzzfarm findings RESULTS`) or FINDING ([RUN_ID/]UNIT_ID#ELEMENT) in RESULTS
    (default results).  The input is reduced to one element and minimized with
    hypothesis on the live device (the simplest input that still fails the same rule
    class), run three more times, and written to --out as a pyopencl script, a C
    program, the kernel and a README; the example is saved in RESULTS/_hypothesis.  Where
    the finding's device is not attached (and no --device) the recorded finding is exported,
    marked not re-verified; a kernel that did not build gives its build log and programs.

    Exit status: 0 exported (the bug reproduces), 1 not reproducible, 2 bad input.
    """
    from fuzzfarm.report import fault_repro
    from fuzzfarm.report import repro as reproducer

    load_devices()

    def log(msg):
        click.echo(msg, err=True)
    try:
        row = reproducer.lookup(results, ref)
        if row["rule_id"] in fault_repro.REPRODUCIBLE:      # a kernel that does not build
            for line in fault_repro.summary(fault_repro.export(row, out, device, log=log)):
                click.echo(line)
            return
        if device is None and reproducer.repro_device(row, None) is None:
            from fuzzfarm.report.repro_recorded import export_recorded
            report = export_recorded(results, row, out, log)     # device not here
        else:
            report = reproducer.reproduce(results, ref, out, device=device, row=row, log=log,
                                          do_shrink=not no_shrink, max_examples=max_examples)
    except reproducer.ReproError as exc:
        raise click.UsageError(" ".join(str(exc).split())) from None
    except reproducer.NotReproducible as exc:
        click.echo(f"not reproducible: {' '.join(str(exc).split())}", err=True)
        raise SystemExit(1) from None
    for line in reproducer.summary(report):
        click.echo(line)
