"""The ``fuzzfarm`` command line.

``main`` is the click group (console script ``fuzzfarm = "fuzzfarm.cli:main"``, and
``python -m fuzzfarm``); each subcommand is a function below it, registered with
``@main.command()``.  Keep commands thin: parse options, call the library, print.  Heavy
imports (pyopencl through ``fuzzfarm.device``, Ray) happen inside the command that needs
them, so ``fuzzfarm --help`` works everywhere.

Shared pieces for new commands: ``DEVICE_OPTION`` (the ``--device`` selector, see
``fuzzfarm.device.select_devices``) and ``load_devices`` (the device module, with a clean
error where pyopencl is missing).
"""
from __future__ import annotations

import json

import click

from fuzzfarm import __version__

__all__ = ["main", "DEVICE_OPTION", "load_devices"]


class _OneLineErrors(click.Group):
    """A click group whose usage errors are one line (``Error: ...``) and exit code 2."""

    def main(self, *args, **kwargs):
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
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
    help="Devices to use: 'all' (default), indices '0,2', 'P:D' pairs, fingerprint "
         "prefixes, or names ('pocl', 'nvidia', 'gpu'); see `fuzzfarm devices`.")


def load_devices():
    """The ``fuzzfarm.device`` module; raises click.ClickException (exit 1, one line)
    when pyopencl cannot be imported."""
    try:
        from fuzzfarm import device
    except ImportError as exc:
        raise click.ClickException(
            f"cannot import pyopencl ({exc}); install it with "
            f"`pip install pyopencl pocl-binary-distribution`") from None
    return device


def _flags(info, precision: str) -> str:
    """Short flag names of one precision ('denorm inf_nan rte ...'), or '-' when absent."""
    dev = load_devices()
    flags = info.fp_flags(precision)
    return " ".join(dev.FP_CONFIG_SHORT[f] for f in flags) if flags else "-"


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

    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not infos:
        console.print("No OpenCL device found. `pip install pocl-binary-distribution` "
                      "gives a CPU device.")
        return
    rows = [_device_row(d) for d in infos]
    if console.width >= _WIDE:
        table = Table(title="OpenCL devices", show_lines=True)
        table.add_column("#", no_wrap=True)
        table.add_column("platform", min_width=12)
        table.add_column("device", min_width=12)
        table.add_column("driver", min_width=7)
        table.add_column("OpenCL C", min_width=5)
        table.add_column("profile", no_wrap=True)
        for col in ("fp32", "fp64", "fp16"):
            table.add_column(col, min_width=11)    # 'cr_div_sqrt' unbroken
        table.add_column("fingerprint", no_wrap=True)
        for row in rows:
            table.add_row(*row.values())
        console.print(table)
    else:                                          # narrow terminal: one block per device
        for row in rows:
            index, pd = row["#"].splitlines()
            table = Table(show_header=False, title=f"device {index} (platform:device {pd})",
                          title_justify="left")
            table.add_column(style="bold", no_wrap=True)
            table.add_column()
            for key, value in row.items():
                if key != "#":
                    table.add_row(key, value)
            console.print(table)
    console.print("fp config flags: denorm inf_nan rte (round to nearest) rtz rtp fma "
                  "soft (soft float) cr_div_sqrt (correctly rounded divide and sqrt). "
                  "Select devices by index, P:D, fingerprint or name with --device.")


#: Console width from which `fuzzfarm devices` prints one table row per device.
_WIDE = 130


def _device_row(d) -> dict[str, str]:
    """The cells of one device in `fuzzfarm devices`, by column name."""
    cl_c = d.opencl_c_version.removeprefix("OpenCL C").strip() or d.opencl_c_version
    return {
        "#": f"{d.index}\n{d.platform_index}:{d.device_index}",
        "platform": f"{d.platform_name}\n{d.platform_short}",
        "device": f"{' '.join(d.name.split())}\n{d.device_type}, {d.vendor}",
        "driver": d.driver_version,
        "OpenCL C": cl_c,
        "profile": "EMBEDDED" if d.is_embedded else d.profile.removesuffix("_PROFILE"),
        "fp32": _flags(d, "binary32"),
        "fp64": f"cl_khr_fp64 {'yes' if d.has_fp64 else 'no'}\n" + _flags(d, "binary64"),
        "fp16": f"cl_khr_fp16 {'yes' if d.has_fp16 else 'no'}\n" + _flags(d, "binary16"),
        "fingerprint": d.fingerprint,
    }


@main.command()
@click.option("--functions", "-f", default=None, metavar="NAMES",
              help="Comma-separated built-ins (default: all of `fuzzfarm catalogue`), "
                   "e.g. sinpi,pow,frexp.")
@DEVICE_OPTION
@click.option("--budget", "-b", default="5m", show_default=True, metavar="DURATION",
              help="Wall time for the run: 90s, 5m, 2h, 1h30m.")
@click.option("--seed", type=int, default=None, help="Base seed (default: random; printed).")
@click.option("--out", "-o", default="results", show_default=True, type=click.Path(),
              help="Results directory (Parquet dataset; see README).")
@click.option("--address", default=None, metavar="ADDR",
              help="Join an existing Ray cluster (e.g. 'auto' or 'HOST:6379') instead of "
                   "starting a local one.")
@click.option("--fail-on-findings", is_flag=True,
              help="Exit with status 1 when a failure was found (for CI gates).")
def run(functions, device, budget, seed, out, address, fail_on_findings) -> None:
    """Fuzz the selected devices' built-ins for a time budget and report violations.

    Exit status: 0 when the run completed (whatever it found), 1 with --fail-on-findings
    and a failure, 2 for bad input, 130 when interrupted (finished units are kept).
    """
    from rich.console import Console

    from fuzzfarm import run as runner

    load_devices()
    try:
        opts = runner.validate(functions, budget, seed, out, device, address)
    except runner.UsageError as exc:
        raise click.UsageError(str(exc)) from None
    console = Console(stderr=True)
    meta = runner.execute(opts, console)
    report = Console()
    for table in runner.summary_tables(opts.out, meta["run_id"]):
        report.print(table)
    failures = sum(t.get("failures", 0) for t in meta.get("totals", []))
    report.print(f"run {meta['run_id']}: {meta['status']}; results in {opts.out}/ "
                 f"(pyarrow.dataset.dataset({opts.out!r}))")
    if meta.get("interrupted"):
        raise SystemExit(130)
    if fail_on_findings and failures:
        raise SystemExit(1)
