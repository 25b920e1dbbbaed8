"""The OpenCL device the end-to-end tests run on.

A machine may have several OpenCL devices (PyPI's PoCL, a system PoCL, a GPU); a test that
runs a whole job must name exactly one, or its units run once per device.  ``one_device()``
is that device: the first one ``FUZZFARM_TEST_DEVICES`` selects when it is set, else PyPI's
PoCL (the embedded default of the README), else the first PoCL device, else the first
device; None when there is none (``require_device()`` skips the test then).
``selector(info)`` is a ``--device`` string naming it alone (its index).
"""
from __future__ import annotations

import functools
import os

import pytest


@functools.lru_cache(maxsize=None)
def pypi_pocl():
    """PyPI's PoCL (the libpocl that pyopencl's wheel bundles) as a DeviceInfo, or None."""
    from fuzzfarm.device.discovery import bundled_pocl_library, list_devices
    return next((d for d in list_devices() if bundled_pocl_library(d)), None)


@functools.lru_cache(maxsize=None)
def one_device():
    """The one device the end-to-end tests use (see the module docstring), or None."""
    from fuzzfarm.device.discovery import list_devices, select_devices
    devices = list_devices()
    chosen = os.environ.get("FUZZFARM_TEST_DEVICES")
    if chosen:
        return select_devices(chosen, devices)[0]
    pocl = [d for d in devices if "pocl" in d.platform_version.lower()]
    return pypi_pocl() or (pocl or devices or [None])[0]


def require_device():
    """``one_device()``; skips the test when there is no device."""
    info = one_device()
    if info is None:
        pytest.skip("no OpenCL device")
    return info


def spirv_device():
    """The first device that takes SPIR-V modules (Intel's CPU runtime, the [intel] extra)
    where SPIRV-Tools are installed; skips the test otherwise."""
    from fuzzfarm.device import spirv
    from fuzzfarm.device.discovery import list_devices
    try:
        spirv.tool("spirv-as")
        found = [d for d in list_devices() if d.spirv_versions]
    except spirv.SpirvToolMissing:
        found = []
    if not found:
        pytest.skip("no device here takes SPIR-V (the [intel] extra has one), or no "
                    "SPIRV-Tools")
    return found[0]


def selector(info=None) -> str:
    """A --device selector naming ``info`` (default ``require_device()``) alone."""
    return str((info or require_device()).index)


_SCREENS: dict = {}


def device_screen(name: str, precision: str = "binary32", chunk: int = 1 << 16):
    """The device screen (oracle.device_screen.DeviceScreen) of built-in ``name`` in
    ``precision`` at its plain build's bound (``plain_bound``), for chunks of ``chunk``
    inputs, on ``require_device()``'s device: one runner and one screen per (name,
    precision, chunk) for the whole session.  Skips the test where the device lacks
    cl_khr_fp64, which the screen computes in."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.oracle.device_references import plain_bound
    from fuzzfarm.oracle.device_screen import DeviceScreen
    from fuzzfarm.verdict.claims import Claims
    info = require_device()
    if not info.has_fp64:
        pytest.skip("the test device lacks cl_khr_fp64")
    key = (name, precision, chunk)
    if key not in _SCREENS:
        if "runner" not in _SCREENS:
            _SCREENS["runner"] = DeviceRunner(info, "")
        bound = plain_bound(name, precision, Claims(precision))
        _SCREENS[key] = DeviceScreen(_SCREENS["runner"], name, bound, chunk,
                                     precision=precision)
    return _SCREENS[key]


def run_campaign(tmp_path, text: str) -> tuple[list, list]:
    """Run the campaign ``text`` (TOML) with ``fuzzfarm run`` in a child process into a
    results folder under ``tmp_path``: (its stats rows, its findings rows) as dicts.
    Fails the test, with the run's stderr, where the run exits non-zero."""
    import subprocess
    import sys

    from fuzzfarm.store import dataset as store
    camp = tmp_path / "c.toml"
    camp.write_text(text)
    out = tmp_path / "res"
    run = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "--campaign", str(camp),
                          "-o", str(out), "--log-format", "text"], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return store.read_stats(out).to_pylist(), store.read_findings(out).to_pylist()


def failed_at(rows: list, row: dict) -> bool:
    """Whether a failure of ``rows`` is at ``row``'s input (its unit and element)."""
    return any(o["element"] == row["element"] and o["unit_id"] == row["unit_id"]
               and o["severity"] == "fail" for o in rows)
