"""OpenCL devices: enumeration, selection, identity, and running built-in kernels.

The only module of fuzzfarm that imports pyopencl (STYLE.md point 1); nothing else in the
package imports it at import time, so the catalogue, formats and verdict logic load
without an OpenCL installation.

* ``list_devices()`` enumerates every device of every platform as a ``DeviceInfo`` (a
  plain, picklable record: it can travel to a Ray actor, which then opens the device).
* ``select_devices(selector)`` turns a ``--device`` string into a list of them.
* ``DeviceRunner(info)`` owns one context, one in-order queue and the compiled programs
  for one device (DESIGN.md decision 7) and runs a built-in over arrays of bit patterns:
  ``run`` waits for the result; ``submit`` only enqueues (host-to-device copy, kernel,
  device-to-host copy, none blocking) and returns a ``PendingRun`` to ``wait()`` on, so
  a caller can prepare the next batch, or hand the previous one on, while the device
  works.  Buffers are reused between launches (two or more staging slots per buffer
  layout: double buffering), and the host side of every copy is pinned memory
  (``CL_MEM_ALLOC_HOST_PTR`` buffers mapped once), which a GPU driver can DMA directly.

A runner is not thread-safe (kernel arguments are set on shared kernel objects); use one
per thread or actor.
"""
from __future__ import annotations

import functools
import glob
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from fuzzfarm.device import icd
from fuzzfarm.errors import BadInput, DeviceFault

# Before pyopencl loads the ICD loader: make the drivers pip installed into this
# environment (Intel's CPU runtime) visible (fuzzfarm/device/icd.py).
icd.register()

import pyopencl as cl  # noqa: E402

from edgecases.catalogue import Function  # noqa: E402
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, FloatFormat  # noqa: E402
from fuzzfarm.device.kernels import (  # noqa: E402
    CONSTANTS_KERNEL, FP_CONFIG_SHORT, buffer_dtype, constants_source, fp_config_names, kernel_name,
    kernel_source, program_source,
)

__all__ = [
    "DeviceInfo", "DeviceSelectionError", "KernelBuildError", "DeviceRunner", "PendingRun",
    "list_devices", "select_devices", "fp_config_names", "FP_CONFIG_SHORT",
]

_PRECISIONS = (BINARY16.name, BINARY32.name, BINARY64.name)

# cl_device_type bits (OpenCL API spec, table "CL_DEVICE_TYPE"); DEFAULT (1) is a role,
# not a kind, and is named only when nothing else is set.
_DEVICE_TYPES = (("CPU", 1 << 1), ("GPU", 1 << 2), ("ACCELERATOR", 1 << 3), ("CUSTOM", 1 << 4))

#: The work-group size the runner launches with (or the largest power of two the kernel
#: allows, if smaller).  The runner pads the element count to a multiple of it (times the
#: vector width) with all-zero bits: a fixed local size means PoCL, which generates code
#: per kernel *and local size* at the first launch, compiles each kernel once, and a prime
#: element count never forces a local size of 1.
LOCAL_SIZE = 64

#: Lines of a build log quoted in a KernelBuildError message.
BUILD_LOG_LINES = 20

#: Staging slots are allocated for a power-of-two number of elements, at least this many,
#: so batches of similar sizes share them.
MIN_SLOT_ELEMENTS = 1 << 12
#: Idle staging slots kept for reuse (per runner); more are released.
MAX_IDLE_SLOTS = 6


def _clean(text: str) -> str:
    """The string as the driver reports it, less NULs and outer blanks (some drivers pad
    names with them); inner spacing is kept, it is part of the identity."""
    return str(text).replace("\x00", "").strip()


def _type_name(bits: int) -> str:
    names = [name for name, bit in _DEVICE_TYPES if bits & bit]
    return "|".join(names) if names else ("DEFAULT" if bits & 1 else f"0x{bits:x}")


@dataclass(frozen=True)
class DeviceInfo:
    """What fuzzfarm knows of one OpenCL device, read once at enumeration.

    ``index`` is the position in the global enumeration order (platforms in order, devices
    of each platform in order); ``platform_index``/``device_index`` the two-level position.
    The ``*_fp_config`` fields are raw cl_device_fp_config values: ``half_fp_config`` is
    None without cl_khr_fp16 (or when the query fails), ``double_fp_config`` None without
    cl_khr_fp64.  ``profile`` is 'FULL_PROFILE' or 'EMBEDDED_PROFILE'; ``device_type`` e.g.
    'CPU', 'GPU', 'ACCELERATOR' ('|'-joined when several bits are set).
    """

    index: int
    platform_index: int
    device_index: int
    platform_name: str
    platform_version: str
    name: str
    vendor: str
    version: str
    driver_version: str
    opencl_c_version: str
    profile: str
    extensions: tuple[str, ...]
    half_fp_config: int | None
    single_fp_config: int
    double_fp_config: int | None
    device_type: str

    @property
    def fingerprint(self) -> str:
        """12 hex digits identifying this device *and its driver build* (STYLE.md point 8):
        a sha1 over platform name and version, device name, vendor, device version, driver
        version, OpenCL C version, profile and the three fp configs.  Stable across runs
        and machines with the same stack; changes when the driver is updated.  Use it for
        result partitions, kernel caches and actor placement."""
        parts = (self.platform_name, self.platform_version, self.name, self.vendor,
                 self.version, self.driver_version, self.opencl_c_version, self.profile,
                 self.half_fp_config, self.single_fp_config, self.double_fp_config)
        text = "\x1f".join("-" if p is None else str(p) for p in parts)
        return hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]

    @property
    def platform_short(self) -> str:
        """The platform-specific part of the platform version ('PoCL 3.0-rc2',
        'CUDA 12.2.148'), or the platform name when the version has none."""
        rest = re.sub(r"^\s*OpenCL\s+\d+\.\d+\s*", "", self.platform_version)
        rest = re.split(r"\s{2,}|,", rest.strip())[0].strip() if rest.strip() else ""
        return rest[:40] if rest else self.platform_name

    @property
    def label(self) -> str:
        """A short human name: ``'pthread-AMD EPYC 7R13 48-Core Processor (PoCL 3.0-rc2)'``."""
        return f"{' '.join(self.name.split())} ({self.platform_short})"

    @property
    def is_embedded(self) -> bool:
        return self.profile.upper().startswith("EMBEDDED")

    @property
    def has_fp16(self) -> bool:
        return "cl_khr_fp16" in self.extensions

    @property
    def has_fp64(self) -> bool:
        return "cl_khr_fp64" in self.extensions

    def fp_config(self, precision: str) -> int | None:
        """The raw config of 'binary16' | 'binary32' | 'binary64' (C names 'half', 'float',
        'double' too).  Raises ValueError for another precision."""
        c_names = {"half": "binary16", "float": "binary32", "double": "binary64"}
        key = c_names.get(precision, precision)
        if key not in _PRECISIONS:
            raise ValueError(f"precision={precision!r} is unknown; choose one of {_PRECISIONS}")
        return {"binary16": self.half_fp_config, "binary32": self.single_fp_config,
                "binary64": self.double_fp_config}[key]

    def fp_flags(self, precision: str) -> tuple[str, ...]:
        """Names of the fp config flags set for ``precision`` ('binary16' | 'binary32' |
        'binary64'), e.g. ``('DENORM', 'INF_NAN', 'ROUND_TO_NEAREST', ...)``; ``()`` when
        the device does not support that precision.  Raises ValueError for another
        precision."""
        return fp_config_names(self.fp_config(precision))

    def supports(self, fmt: FloatFormat) -> bool:
        """Whether kernels in ``fmt`` can be built here (binary32 always; binary64 needs
        cl_khr_fp64, binary16 cl_khr_fp16)."""
        return {BINARY16.name: self.has_fp16, BINARY32.name: True,
                BINARY64.name: self.has_fp64}.get(fmt.name, False)

    def columns(self, precision: str = "binary32") -> dict:
        """The device columns of a findings or stats row (store.FINDINGS_SCHEMA), with
        the FP config flags of ``precision``."""
        return {"device_fingerprint": self.fingerprint, "platform": self.platform_name,
                "device": self.name, "driver_version": self.driver_version,
                "opencl_version": self.version, "opencl_c_version": self.opencl_c_version,
                "profile": self.profile, "fp_config": " ".join(self.fp_flags(precision))}

    @classmethod
    def from_dict(cls, d: dict) -> "DeviceInfo":
        """The DeviceInfo a ``to_dict()`` describes (derived keys ignored): a device of
        another node, described there.  Raises KeyError for a missing field."""
        import dataclasses
        fields = {f.name for f in dataclasses.fields(cls)}
        kw = {k: d[k] for k in fields}
        kw["extensions"] = tuple(kw["extensions"])
        return cls(**kw)

    def to_dict(self) -> dict:
        """A JSON-able dict of every field plus ``fingerprint``, ``label``, ``has_fp16``,
        ``has_fp64``, ``is_embedded`` and ``fp_flags`` ({precision: [flag names]})."""
        d = {
            "index": self.index, "platform_index": self.platform_index,
            "device_index": self.device_index, "fingerprint": self.fingerprint,
            "label": self.label, "platform_name": self.platform_name,
            "platform_version": self.platform_version, "name": self.name,
            "vendor": self.vendor, "version": self.version,
            "driver_version": self.driver_version, "opencl_c_version": self.opencl_c_version,
            "profile": self.profile, "device_type": self.device_type,
            "is_embedded": self.is_embedded, "has_fp16": self.has_fp16,
            "has_fp64": self.has_fp64, "half_fp_config": self.half_fp_config,
            "single_fp_config": self.single_fp_config,
            "double_fp_config": self.double_fp_config,
            "fp_flags": {p: list(self.fp_flags(p)) for p in _PRECISIONS},
            "extensions": list(self.extensions),
        }
        return d


def _query(fn, default=None):
    try:
        return fn()
    except (cl.Error, AttributeError, ValueError):
        return default


def _describe(dev, index: int, pi: int, di: int, platform) -> DeviceInfo:
    extensions = tuple(sorted(set(str(_query(lambda: dev.extensions, "")).split())))
    half = double = None
    if "cl_khr_fp16" in extensions:
        half = _query(lambda: int(dev.half_fp_config))
    if "cl_khr_fp64" in extensions:
        double = _query(lambda: int(dev.double_fp_config))
    return DeviceInfo(
        index=index, platform_index=pi, device_index=di,
        platform_name=_clean(_query(lambda: platform.name, "?")),
        platform_version=_clean(_query(lambda: platform.version, "?")),
        name=_clean(_query(lambda: dev.name, "?")),
        vendor=_clean(_query(lambda: dev.vendor, "?")),
        version=_clean(_query(lambda: dev.version, "?")),
        driver_version=_clean(_query(lambda: dev.driver_version, "?")),
        opencl_c_version=_clean(_query(lambda: dev.opencl_c_version, "?")),
        profile=_clean(_query(lambda: dev.profile, "?")),
        extensions=extensions,
        half_fp_config=half,
        single_fp_config=int(_query(lambda: dev.single_fp_config, 0)),
        double_fp_config=double,
        device_type=_type_name(int(_query(lambda: dev.type, 0))),
    )


def _platforms() -> list:
    try:
        return list(cl.get_platforms())
    except (cl.Error, RuntimeError):   # no ICD / CL_PLATFORM_NOT_FOUND_KHR
        return []


def _platform_devices(platform) -> list:
    try:
        return list(platform.get_devices())
    except (cl.Error, RuntimeError):   # CL_DEVICE_NOT_FOUND, a broken driver
        return []


def list_devices() -> list[DeviceInfo]:
    """Every OpenCL device of every platform, in enumeration order (``DeviceInfo.index``
    is the position in this list).  A platform whose devices cannot be listed is skipped;
    no platform at all gives ``[]``.  Never raises for a missing or broken driver."""
    out: list[DeviceInfo] = []
    for pi, platform in enumerate(_platforms()):
        for di, dev in enumerate(_platform_devices(platform)):
            out.append(_describe(dev, len(out), pi, di, platform))
    return out


class DeviceSelectionError(BadInput):
    """A ``--device`` selector matches no device (or the device has gone away)."""


def _brief(devices: Sequence[DeviceInfo]) -> str:
    if not devices:
        return ("none found (no OpenCL platform; `pip install pocl-binary-distribution` "
                "gives a CPU device)")
    return "; ".join(f"{d.index} {d.label} [{d.fingerprint}]" for d in devices)


_HEX = re.compile(r"^[0-9a-f]{6,12}$")
_PD = re.compile(r"^(\d+):(\d+)$")


def _match(term: str, devices: Sequence[DeviceInfo]) -> list[DeviceInfo]:
    low = term.lower()
    if low.isdigit():
        return [d for d in devices if d.index == int(low)]
    m = _PD.match(low)
    if m:
        p, i = int(m.group(1)), int(m.group(2))
        return [d for d in devices if (d.platform_index, d.device_index) == (p, i)]
    if _HEX.match(low):
        hits = [d for d in devices if d.fingerprint.startswith(low)]
        if hits:
            return hits
    # An implementation's name first ('intel', 'pocl', 'oclgrind', 'nvidia'): PoCL on an
    # Intel CPU calls its device "pthread-Intel(R) Xeon(R) ...", yet 'intel' means Intel's
    # runtime.  Only a term no platform matches is looked up in the device's own names.
    hits = [d for d in devices
            if any(low in s.lower() for s in (d.platform_name, d.platform_version))]
    return hits or [d for d in devices
                    if any(low in s.lower() for s in (d.name, d.vendor, d.device_type))]


def select_devices(selector: str | None,
                   devices: Sequence[DeviceInfo] | None = None) -> list[DeviceInfo]:
    """The devices a ``--device`` string names, in the order named, duplicates removed.

    ``selector`` is None or 'all' for every device, or comma-separated terms, each one of:
    an index into ``list_devices()`` ('0'); 'P:D' platform and device indices ('0:1'); a
    fingerprint or a prefix of it of at least 6 hex digits; a case-insensitive substring of
    the platform name or version -- the implementation ('pocl', 'intel', 'oclgrind',
    'nvidia', 'cuda') -- or, where no platform matches, of the device name, vendor or
    device type ('gpu', 'cpu', 'epyc').
    ``devices`` defaults to ``list_devices()`` (give a list to select from a known set).

    Raises DeviceSelectionError, with one line naming the term and listing the devices
    available, when a term matches nothing or is empty.  None/'all' with no device at all
    gives ``[]``.
    """
    devices = list_devices() if devices is None else list(devices)
    if selector is None or selector.strip().lower() == "all":
        return list(devices)
    chosen: list[DeviceInfo] = []
    for raw in selector.split(","):
        term = raw.strip()
        if not term:
            raise DeviceSelectionError(
                f"--device {selector!r} has an empty term; give indices, P:D pairs, "
                f"fingerprints or names separated by commas; available: {_brief(devices)}")
        hits = devices if term.lower() == "all" else _match(term, devices)
        if not hits:
            raise DeviceSelectionError(
                f"--device {term!r} matches no OpenCL device; available: {_brief(devices)}")
        chosen.extend(d for d in hits if d not in chosen)
    return chosen


def _bundled_pocl_libraries() -> list[str]:
    """Absolute paths of the libpocl shared libraries that pyopencl's wheel (and
    pocl-binary-distribution) bundle: PyPI's PoCL."""
    dirs = []
    for mod in ("pyopencl", "pocl_binary_distribution"):
        try:
            m = __import__(mod)
        except ImportError:
            continue
        base = os.path.dirname(os.path.abspath(m.__file__))
        dirs += [os.path.join(base, ".libs"), os.path.join(base, "lib")]
    found = []
    for d in dirs:
        found += sorted(glob.glob(os.path.join(d, "libpocl*.so*")))
    return list(dict.fromkeys(os.path.abspath(p) for p in found))


@functools.lru_cache(maxsize=None)
def _bundled_pocl_fingerprints() -> dict[str, str]:
    """fingerprint -> bundled libpocl path, for every device each bundled library gives
    when it is the only ICD (OCL_ICD_VENDORS naming it alone, in a child process)."""
    code = ("from fuzzfarm.device.runner import list_devices\n"
            "print(' '.join(d.fingerprint for d in list_devices()))")
    root = str(Path(__file__).resolve().parent.parent)
    out: dict[str, str] = {}
    for lib in _bundled_pocl_libraries():
        with tempfile.TemporaryDirectory(prefix="fuzzfarm-icd-") as tmp:
            Path(tmp, "pocl.icd").write_text(lib + "\n")
            env = {**os.environ, "OCL_ICD_VENDORS": tmp,
                   "PYTHONPATH": os.pathsep.join(
                       [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                 if p])}
            try:
                res = subprocess.run([sys.executable, "-c", code], env=env,
                                     capture_output=True, text=True, timeout=120)
            except (OSError, subprocess.SubprocessError):
                continue
        for fp in res.stdout.split():
            out.setdefault(fp, lib)
    return out


def bundled_pocl_library(info: DeviceInfo) -> str | None:
    """The path of the libpocl that pyopencl's wheel (or pocl-binary-distribution)
    bundles, if it provides ``info``'s device -- i.e. the device is PyPI's PoCL, the
    embedded default -- else None (a system PoCL, any other platform).

    A system PoCL of the same version is told apart by fingerprint: each bundled library
    is enumerated alone in a child process (once per process; the answer is cached).
    Never raises."""
    if "portable computing language" not in info.platform_name.lower() \
            and "pocl" not in info.platform_version.lower():
        return None
    return _bundled_pocl_fingerprints().get(info.fingerprint)


#: Test hook: JSON {"crash": [unit id substrings], "hang": [...], "enqueue": [...],
#: "build": [built-in names]}: a unit whose id contains one of them kills its actor
#: (SIGKILL, as a crashing driver would), never returns from the device, or gets an
#: OpenCL error from the driver (cluster.farm); a program calling a named built-in gets an
#: ``#error`` line, so the driver's compiler rejects it (``DeviceRunner.planted_build``).
#: Planted faults for the fault tests; never set in a real campaign.
FAULTS_ENV = "FUZZFARM_PLANT_FAULTS"


def planted_faults() -> dict:
    """The planted faults of ``FAULTS_ENV`` ({} when unset).  Raises ValueError when it is
    not a JSON object of lists."""
    import json
    text = os.environ.get(FAULTS_ENV, "").strip()
    if not text:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{FAULTS_ENV} must be a JSON object of lists")
    return data


class KernelBuildError(DeviceFault):
    """An OpenCL program failed to build.  The message names the device, the kernels and
    the build options and quotes the first lines of the build log; ``source``, ``log`` and
    ``options`` keep the whole of each (STYLE.md point 7), ``code`` the OpenCL error code
    (e.g. -11, CL_BUILD_PROGRAM_FAILURE; None when unknown) and ``code_name`` its name.
    ``kernels``: the kernel names the program defines.  ``failed``: where a program of
    several kernels failed, {function name: the KernelBuildError of building it alone}
    for each one that fails alone."""

    def __init__(self, message: str, source: str = "", log: str = "", options: str = "",
                 code: int | None = None, code_name: str = "", kernels=(),
                 failed: dict | None = None):
        super().__init__(message)
        self.source, self.log, self.options = source, log, options
        self.code, self.code_name = code, code_name
        self.kernels, self.failed = tuple(kernels), dict(failed or {})

    def detail(self) -> dict:
        """What a device-fault finding records of it (units.fault_rows ``detail``)."""
        return {"kernel_source": self.source, "build_log": self.log,
                "build_options": self.options, "error_code": self.code,
                "error_name": self.code_name,
                "kernel_name": ", ".join(self.kernels) if self.kernels else "",
                "error": str(self).splitlines()[0]}


def enqueue_error_detail(exc, kernel_source: str, build_options: str) -> dict:
    """What a device-fault finding records of an OpenCL error raised running a kernel
    (units.fault_rows ``detail``): the source and options, the error code and name, the
    call that failed and the error's first line."""
    code, name = cl_error_code(exc)
    return {"kernel_source": kernel_source, "build_options": build_options,
            "error_code": code, "error_name": name,
            "routine": str(getattr(exc, "routine", "") or ""),
            "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}


def cl_error_code(exc) -> tuple[int | None, str]:
    """(OpenCL error code, its name) of a pyopencl error; (None, '') for anything else."""
    code = getattr(exc, "code", None)
    try:
        code = int(code) if code is not None else None
    except (TypeError, ValueError):
        code = None
    name = ""
    if code is not None:
        for attr in dir(cl.status_code):
            if not attr.startswith("_") and getattr(cl.status_code, attr) == code:
                name = "CL_" + attr
                break
    return code, name


def _check_available(fn: Function, fmt: FloatFormat, width: int) -> None:
    """Raise ValueError when built-in ``fn`` does not exist in ``fmt`` or at ``width``
    (functions.toml ``precisions`` / ``widths``: half_* and native_* are float only,
    geometric functions take vectors of 1 to 4 lanes, cross 3 or 4)."""
    if fmt.name not in fn.precisions:
        raise ValueError(f"{fn.name} does not exist in {fmt.name}; it exists in "
                         f"{', '.join(fn.precisions)}")
    if width not in fn.widths:
        raise ValueError(f"{fn.name} does not exist at vector width {width}; its widths are "
                         f"{', '.join(map(str, fn.widths))}")


def _cl_device(info: DeviceInfo):
    """The pyopencl Device ``info`` describes, checked by fingerprint."""
    platforms = _platforms()
    try:
        platform = platforms[info.platform_index]
        dev = _platform_devices(platform)[info.device_index]
    except IndexError:
        dev = None
    if dev is None or _describe(dev, info.index, info.platform_index, info.device_index,
                                platform).fingerprint != info.fingerprint:
        raise DeviceSelectionError(
            f"device {info.platform_index}:{info.device_index} [{info.fingerprint}] "
            f"{info.label} is no longer there; available: {_brief(list_devices())}")
    return dev


class DeviceRunner:
    """Runs built-ins on one device: one context, one in-order queue, compiled kernels
    cached per (function, format, width, build options).

    ``build_options`` go to every program build (e.g. '-cl-denorms-are-zero'; the relaxed
    table applies to '-cl-fast-relaxed-math').  ``pinned`` (default on) stages the copies
    in pinned host memory where the driver allows it (see ``submit``).  Raises
    DeviceSelectionError when the device of ``info`` is gone (or its driver changed: the
    fingerprint is checked).
    """

    def __init__(self, info: DeviceInfo, build_options: str = "", pinned: bool | None = None):
        self.info = info
        self.build_options = build_options
        self.device = _cl_device(info)
        self.context = cl.Context([self.device])
        try:    # profiling events give each launch's device time, overlap or not
            self.queue = cl.CommandQueue(
                self.context, self.device,
                properties=cl.command_queue_properties.PROFILING_ENABLE)
            self._profiling = True
        except cl.Error:
            self.queue = cl.CommandQueue(self.context, self.device)
            self._profiling = False
        #: Host side of the copies in pinned (mapped CL_MEM_ALLOC_HOST_PTR) memory, where
        #: the driver allows it: a GPU can DMA it directly; PoCL's copies from its
        #: page-aligned buffers measured twice as fast as from numpy arrays.
        self.pinned = True if pinned is None else bool(pinned)
        self._kernels: dict[tuple, object] = {}
        self._constants: dict[str, int] | None = None
        #: Built-in names whose programs get an ``#error`` line (tests plant build
        #: failures with it, FAULTS_ENV "build"); empty in normal use.
        self.planted_build: tuple = tuple(planted_faults().get("build", ()))
        self._idle: list[_Slot] = []      # staging slots free for reuse, oldest first

    # -- building ---------------------------------------------------------------------

    def _key(self, fn: Function, fmt: FloatFormat, width: int) -> tuple:
        return (fn.name, fmt.name, width, self.build_options)

    def _check_format(self, fmt: FloatFormat) -> None:
        if not self.info.supports(fmt):
            ext = "cl_khr_fp64" if fmt.name == BINARY64.name else "cl_khr_fp16"
            raise ValueError(f"fmt={fmt.name} needs {ext}, which {self.info.label} lacks; "
                             f"use a device whose extensions include it")

    def build(self, source: str, what: str):
        """Compile OpenCL C ``source`` with this runner's build options; returns the
        pyopencl Program.  ``what`` names it in errors.  Raises KernelBuildError with the
        build log on failure."""
        if any(re.search(rf"\b{re.escape(name)}\s*\(", source) for name in self.planted_build):
            source += '\n#error "fuzzfarm: planted build failure (tests)"\n'
        kernels = re.findall(r"__kernel\s+void\s+(\w+)", source)
        program = cl.Program(self.context, source)
        try:
            with warnings.catch_warnings():
                # pyopencl warns with the log of a successful build; it is noise here.
                warnings.simplefilter("ignore", cl.CompilerWarning)
                return program.build(options=self.build_options, devices=[self.device])
        except cl.Error as exc:
            try:
                with warnings.catch_warnings():   # "pre-build attribute access": harmless
                    warnings.simplefilter("ignore", UserWarning)
                    log = program.get_build_info(self.device, cl.program_build_info.LOG) or ""
            except cl.Error:
                log = ""
            log = log.strip() or str(exc)
            head = "\n".join(log.splitlines()[:BUILD_LOG_LINES])
            code, code_name = cl_error_code(exc)
            raise KernelBuildError(
                f"building {what} for {self.info.label} [{self.info.fingerprint}] with "
                f"build options {self.build_options!r} failed; build log (first "
                f"{BUILD_LOG_LINES} lines):\n{head}",
                source=source, log=log, options=self.build_options, code=code,
                code_name=code_name, kernels=kernels) from None

    def prepare(self, fns: Iterable[Function], fmt: FloatFormat = BINARY32,
                width: int = 1) -> None:
        """Compile the kernels of ``fns`` not yet cached, all in one program: on PoCL
        3.0-rc2 a cold build of the whole catalogue (51 kernels) takes about 0.25 s, one
        program per kernel about 10 s.  (PoCL still generates each kernel's machine code
        at its first launch, about 50 ms a kernel when its cache is cold.)

        If the program fails to build, each function is built alone so that the good ones
        are still cached; then KernelBuildError names the failing ones.  Raises
        ValueError when the device lacks ``fmt`` or ``width`` is not a vector width.

        Vector widths: PoCL 3.0-rc2's compiler crashes the whole process (SIGSEGV or
        SIGABRT, uncatchable) on most built-ins at width 16; run wide kernels in a process
        you can lose.
        """
        self._check_format(fmt)
        fns = list(dict.fromkeys(fns))
        for f in fns:
            _check_available(f, fmt, width)
        todo = [f for f in fns if self._key(f, fmt, width) not in self._kernels]
        if not todo:
            return
        src = program_source(todo, fmt, width)
        try:
            what = kernel_name(todo[0]) if len(todo) == 1 else f"{len(todo)} kernels"
            program = self.build(src, f"{what} ({fmt.name}, width {width})")
        except KernelBuildError as whole:
            if len(todo) == 1:
                raise
            failures = {}
            for f in todo:
                try:
                    self.prepare([f], fmt, width)
                except KernelBuildError as exc:
                    failures[f.name] = exc
            if failures:
                raise KernelBuildError(
                    f"{len(failures)} of {len(todo)} kernels failed to build:\n"
                    + "\n".join(str(e) for e in failures.values()),
                    source=src, log="\n".join(e.log for e in failures.values()),
                    options=self.build_options, code=whole.code, code_name=whole.code_name,
                    kernels=[k for e in failures.values() for k in e.kernels],
                    failed=failures) from None
            return
        for f in todo:
            try:
                kernel = cl.Kernel(program, kernel_name(f))
            except cl.Error as exc:
                # Seen on PoCL 3.0-rc2 after its compiler crashed the process mid-build: the
                # half-written cache entry then yields INVALID_KERNEL_NAME ever after.
                raise KernelBuildError(
                    f"the program built, but creating kernel {kernel_name(f)} on "
                    f"{self.info.label} [{self.info.fingerprint}] with build options "
                    f"{self.build_options!r} failed ({exc}); if this is PoCL, a cache entry "
                    f"left by a crashed compile can cause it: remove POCL_CACHE_DIR "
                    f"(default ~/.cache/pocl/kcache) and retry",
                    source=src, options=self.build_options) from None
            self._kernels[self._key(f, fmt, width)] = (kernel, self._local_size(kernel))

    def _local_size(self, kernel) -> int:
        """LOCAL_SIZE, or the largest power of two the kernel's work-group limit allows."""
        try:
            limit = int(kernel.get_work_group_info(
                cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device))
        except cl.Error:
            limit = 1
        size = 1
        while size * 2 <= min(limit, LOCAL_SIZE):
            size *= 2
        return size

    def source(self, fn: Function, fmt: FloatFormat = BINARY32, width: int = 1) -> str:
        """The OpenCL C source of ``fn``'s kernel as this runner builds it: the
        self-contained ``kernel_source`` text (``prepare`` concatenates exactly these
        kernel bodies under one preamble).  Quote it, with ``build_options``, in a
        reproducer."""
        return kernel_source(fn, fmt, width)

    def _kernel(self, fn: Function, fmt: FloatFormat, width: int):
        key = self._key(fn, fmt, width)
        if key not in self._kernels:
            self.prepare([fn], fmt, width)
        return self._kernels[key]

    # -- running ----------------------------------------------------------------------

    @staticmethod
    def _check_inputs(fn: Function, inputs: dict, fmt: FloatFormat, width: int) -> int:
        names = set(inputs)
        want = set(fn.arg_names)
        if names != want:
            raise ValueError(f"inputs for {fn.signature} have keys {sorted(names)}; "
                             f"give exactly {list(fn.arg_names)}")
        n = None
        for a in fn.inputs:
            arr = inputs[a.name]
            dtype = buffer_dtype(a, fmt)
            if not isinstance(arr, np.ndarray) or arr.ndim != 1:
                raise ValueError(f"inputs[{a.name!r}] must be a 1-D numpy array, "
                                 f"not {type(arr).__name__} of shape {np.shape(arr)}")
            if arr.dtype != dtype:
                hint = (f"pass {fmt.name} bit patterns, e.g. a.view(np.{dtype.name})"
                        if a.kind != "int" else "pass int32 values")
                raise ValueError(f"inputs[{a.name!r}].dtype={arr.dtype}; {a.name} is a "
                                 f"{ {'float': 'gentype', 'int': 'intn', 'uint': 'ugentype'}[a.kind]} "
                                 f"argument: {hint}")
            if n is None:
                n = len(arr)
            elif len(arr) != n:
                raise ValueError(f"inputs have different lengths "
                                 f"({ {k: len(v) for k, v in inputs.items()} }); "
                                 f"give arrays of one length")
        if not n:
            raise ValueError(f"inputs for {fn.name} are empty; give at least one element")
        if not fn.is_elementwise and n % width:
            raise ValueError(f"{fn.name} works on whole vectors: give a multiple of "
                             f"width={width} lanes, not {n}")
        return n

    def run(self, fn: Function, inputs: dict[str, np.ndarray], fmt: FloatFormat = BINARY32,
            width: int = 1) -> dict[str, np.ndarray]:
        """Call built-in ``fn`` on the device, element by element (or vector by vector).

        ``inputs`` maps each name of ``fn.arg_names`` to a 1-D array, all of one length
        n >= 1 (lanes): ``fmt.uint`` bit patterns (uint32 for binary32) for a gentype or
        ugentype argument, int32 for an intn argument; for a geometric built-in n is a
        multiple of ``width`` and lanes [i*width, (i+1)*width) form vector i.  Returns a dict
        with one array per name of ``fn.outputs`` ('ret' first): ``fmt.uint`` bits for a
        float output, int32 for an int output; of length n, or n / width for an sgentype
        (scalar) result such as dot's.  The arrays are copied to and from the device as raw
        bits.

        Compiles the kernel on first use (see ``prepare``).  Raises ValueError for
        missing/extra keys, wrong dtypes or shapes, empty or unequal lengths, or a format
        the device lacks; KernelBuildError when the kernel does not build.
        """
        return self.submit(fn, inputs, fmt, width).wait()

    def submit(self, fn: Function, inputs: dict[str, np.ndarray], fmt: FloatFormat = BINARY32,
               width: int = 1) -> "PendingRun":
        """``run`` without waiting: the inputs are copied into a staging slot now (so the
        caller may reuse or drop its arrays at once), the copies and the kernel are
        enqueued, and a PendingRun is returned whose ``wait()`` gives what ``run`` returns.
        Launches complete in submission order (one in-order queue); the same errors as
        ``run`` are raised here."""
        n = self._check_inputs(fn, inputs, fmt, width)
        self._check_format(fmt)
        kernel, local = self._kernel(fn, fmt, width)
        ins = [np.asarray(inputs[a.name]) for a in fn.inputs]
        outs = [(o.name, buffer_dtype(o, fmt), o.scalar) for o in fn.outputs]
        return self._launch(kernel, local, ins, outs, n, width)

    def run_source(self, source: str, name: str, inputs: list[np.ndarray],
                   out_dtypes: list, width: int = 1, what: str = "") -> list[np.ndarray]:
        """Run kernel ``name`` of program ``source`` (built once and cached, with this
        runner's build options) on 1-D input arrays of one length n (lanes), with one output
        array of length n per dtype of ``out_dtypes``; ``width`` lanes per work-item
        (vloadn/vstoren).  The buffers hold raw bits, copied as they are.  Used for kernels
        that are not a catalogue built-in (conversions).  Raises ValueError for empty or
        unequal inputs, KernelBuildError when the program does not build."""
        return self.submit_source(source, name, inputs, out_dtypes, width, what).wait()

    def submit_source(self, source: str, name: str, inputs: list[np.ndarray],
                      out_dtypes: list, width: int = 1, what: str = "") -> "PendingRun":
        """``run_source`` without waiting (see ``submit``); ``wait()`` returns the list of
        outputs."""
        n = len(inputs[0]) if inputs else 0
        if not n or any(len(a) != n for a in inputs):
            raise ValueError(f"inputs of {name} must be non-empty and of one length")
        key = ("source", source)
        if key not in self._kernels:
            program = self.build(source, what or name)
            kernel = getattr(program, name)
            self._kernels[key] = (kernel, self._local_size(kernel))
        kernel, local = self._kernels[key]
        outs = [(k, np.dtype(dt), False) for k, dt in enumerate(out_dtypes)]
        return self._launch(kernel, local, [np.asarray(a) for a in inputs], outs, n, width,
                            as_list=True)

    # -- staging and launching ------------------------------------------------------------

    def _slot(self, in_dtypes: tuple, out_dtypes: tuple, elements: int) -> "_Slot":
        """An idle staging slot for this buffer layout holding at least ``elements``, or a
        new one (a power of two of elements, at least MIN_SLOT_ELEMENTS)."""
        for k, slot in enumerate(self._idle):
            if slot.fits(in_dtypes, out_dtypes, elements):
                return self._idle.pop(k)
        cap = max(MIN_SLOT_ELEMENTS, 1 << (int(elements) - 1).bit_length())
        return _Slot(self, in_dtypes, out_dtypes, cap)

    def _release(self, slot: "_Slot") -> None:
        self._idle.append(slot)
        while len(self._idle) > MAX_IDLE_SLOTS:
            self._idle.pop(0).release()

    def _launch(self, kernel, local: int, ins: list, outs: list, n: int, width: int,
                as_list: bool = False) -> "PendingRun":
        chunk = width * local
        padded = -(-n // chunk) * chunk
        items = padded // width
        slot = self._slot(tuple(a.dtype for a in ins), tuple(dt for _, dt, _ in outs), padded)
        try:
            t0 = time.perf_counter()
            events = []
            for a, host, dev in zip(ins, slot.host_in, slot.dev_in):
                host[:n] = a
                host[n:padded] = 0          # padding: all-zero bits
                events.append(cl.enqueue_copy(self.queue, dev, host[:padded],
                                              is_blocking=False))
            kernel(self.queue, (items,), (local,), *slot.dev_in, *slot.dev_out)
            lengths = []
            for (_, _, scalar), host, dev in zip(outs, slot.host_out, slot.dev_out):
                m = items if scalar else padded
                lengths.append(n // width if scalar else n)
                events.append(cl.enqueue_copy(self.queue, host[:m], dev, is_blocking=False))
            self.queue.flush()
        except BaseException:
            slot.release()
            raise
        names = [name for name, _, _ in outs]
        return PendingRun(self, slot, events, names, lengths, t0, as_list)

    def device_constants(self) -> dict[str, int]:
        """The device's ``{"FP_ILOGB0": int, "FP_ILOGBNAN": int}``, read by running
        ``k_fp_ilogb_constants`` once (cached).  Raises KernelBuildError if it does not
        build."""
        if self._constants is None:
            program = self.build(constants_source(), CONSTANTS_KERNEL)
            out = np.zeros(2, dtype=np.int32)
            buf = cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY, size=out.nbytes)
            try:
                cl.Kernel(program, CONSTANTS_KERNEL)(self.queue, (1,), None, buf)
                cl.enqueue_copy(self.queue, out, buf)
                self.queue.finish()
            finally:
                buf.release()
            self._constants = {"FP_ILOGB0": int(out[0]), "FP_ILOGBNAN": int(out[1])}
        return dict(self._constants)

    def __repr__(self) -> str:
        opts = f", build_options={self.build_options!r}" if self.build_options else ""
        return f"DeviceRunner({self.info.label} [{self.info.fingerprint}]{opts})"


class _Slot:
    """Device buffers and host staging arrays for one buffer layout (input and output
    dtypes) and capacity; the host arrays are pinned (mapped CL_MEM_ALLOC_HOST_PTR
    buffers) when the runner's ``pinned`` is set and the driver allows it, else plain
    numpy arrays."""

    def __init__(self, runner: DeviceRunner, in_dtypes: tuple, out_dtypes: tuple, cap: int):
        self.in_dtypes, self.out_dtypes, self.cap = in_dtypes, out_dtypes, cap
        self._mem = []                    # every cl.Buffer, released together
        ctx, mf = runner.context, cl.mem_flags
        try:
            self.dev_in = [self._buffer(ctx, mf.READ_ONLY, cap * np.dtype(d).itemsize)
                           for d in in_dtypes]
            self.dev_out = [self._buffer(ctx, mf.WRITE_ONLY, cap * np.dtype(d).itemsize)
                            for d in out_dtypes]
            self.pinned = runner.pinned
            self.host_in = [self._host(runner, d) for d in in_dtypes]
            self.host_out = [self._host(runner, d) for d in out_dtypes]
        except BaseException:
            self.release()
            raise

    def _buffer(self, ctx, flags, nbytes):
        buf = cl.Buffer(ctx, flags, size=max(1, nbytes))
        self._mem.append(buf)
        return buf

    def _host(self, runner: DeviceRunner, dtype) -> np.ndarray:
        if self.pinned:
            try:
                mf = cl.mem_flags
                buf = self._buffer(runner.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR,
                                   self.cap * np.dtype(dtype).itemsize)
                arr, _ = cl.enqueue_map_buffer(
                    runner.queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                    (self.cap,), dtype, is_blocking=True)
                return arr
            except cl.Error:
                self.pinned = False       # the driver refuses: plain host memory
        return np.empty(self.cap, dtype=dtype)

    def fits(self, in_dtypes: tuple, out_dtypes: tuple, elements: int) -> bool:
        return (in_dtypes == self.in_dtypes and out_dtypes == self.out_dtypes
                and elements <= self.cap and (elements * 4 > self.cap
                                              or self.cap == MIN_SLOT_ELEMENTS))

    def release(self) -> None:
        self.host_in = self.host_out = []       # drop the mappings first
        for b in getattr(self, "_mem", []):
            try:
                b.release()
            except cl.Error:
                pass
        self._mem = []


class PendingRun:
    """A launch in flight on a DeviceRunner's queue (see ``DeviceRunner.submit``).

    ``wait()`` blocks until its results are on the host and returns them: a dict of
    output arrays by name (``submit``) or a list (``submit_source``), fresh arrays the
    caller owns.  ``device_seconds`` is the device's time for the launch (copies and
    kernel, from OpenCL profiling events; the wall time from submission to completion
    where the queue has no profiling), known after ``wait()``.
    """

    def __init__(self, runner: DeviceRunner, slot: _Slot, events: list, names: list,
                 lengths: list, t0: float, as_list: bool):
        self._runner, self._slot, self._events = runner, slot, events
        self._names, self._lengths, self._t0, self._as_list = names, lengths, t0, as_list
        self._result = None
        self.device_seconds = float("nan")

    @property
    def done(self) -> bool:
        return self._result is not None

    def wait(self, copy: bool = True):
        """The outputs (blocking until they are on the host).  With ``copy=False`` they
        are views of the runner's staging buffers, valid only until the runner's next
        ``submit``: for a caller that copies them on at once (into Ray's object store)."""
        if self._result is not None:
            return self._result
        try:
            cl.wait_for_events(self._events[-1:] or [])
            if self._events and not self._events[-1:]:
                self._runner.queue.finish()
            wall = time.perf_counter() - self._t0
            self.device_seconds = wall
            if self._runner._profiling and self._events:
                try:
                    start = self._events[0].profile.start
                    end = self._events[-1].profile.end
                    if end >= start > 0:
                        self.device_seconds = (end - start) * 1e-9
                except cl.Error:
                    pass
            outs = [self._slot.host_out[k][:m] for k, m in enumerate(self._lengths)]
            if copy:
                outs = [o.copy() for o in outs]
        except BaseException:
            self._slot.release()
            self._slot = None
            raise
        self._runner._release(self._slot)
        self._slot = None
        self._events = []
        self._result = outs if self._as_list else dict(zip(self._names, outs))
        return self._result

    def __del__(self):
        # an abandoned launch: its slot must not be reused while the device may write it
        slot = getattr(self, "_slot", None)
        if slot is not None:
            try:
                cl.wait_for_events(self._events[-1:])
            except Exception:
                pass
