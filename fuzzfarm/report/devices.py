"""`fuzzfarm devices`: the OpenCL devices as a table (one row per device on a wide
terminal, one block per device on a narrow one)."""
from __future__ import annotations

__all__ = ["print_devices"]


def _flags(info, precision: str) -> str:
    """Short flag names of one precision ('denorm inf_nan rte ...'), or '-' when absent."""
    from fuzzfarm.device.kernels import FP_CONFIG_SHORT
    flags = info.fp_flags(precision)
    return " ".join(FP_CONFIG_SHORT[f] for f in flags) if flags else "-"


def print_devices(infos, console=None) -> None:
    """Print ``infos`` (DeviceInfo, in enumeration order) on ``console`` (default a rich
    Console on stdout): identity, driver, the SPIR-V versions it consumes
    (CL_DEVICE_IL_VERSION), profile and the fp config flags of each precision, and how to
    select devices."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
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
        table.add_column("SPIR-V", min_width=6)
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
        "SPIR-V": " ".join(d.spirv_versions) or "-",
        "profile": "EMBEDDED" if d.is_embedded else d.profile.removesuffix("_PROFILE"),
        "fp32": _flags(d, "binary32"),
        "fp64": f"cl_khr_fp64 {'yes' if d.has_fp64 else 'no'}\n" + _flags(d, "binary64"),
        "fp16": f"cl_khr_fp16 {'yes' if d.has_fp16 else 'no'}\n" + _flags(d, "binary16"),
        "fingerprint": d.fingerprint,
    }
