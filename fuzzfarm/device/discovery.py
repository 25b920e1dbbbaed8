"""OpenCL devices: enumeration, identity and selection.

* ``list_devices()`` enumerates every device of every platform as a ``DeviceInfo`` (a
  plain, picklable record: it can travel to a Ray actor, which then opens the device).
* ``select_devices(selector)`` turns a ``--device`` string into a list of them.
* ``bundled_pocl_library(info)`` says whether a device is the PoCL that PyPI's
  pocl-binary-distribution wheel ships (the reproducers name it).

``fuzzfarm.device.runner`` opens a ``DeviceInfo`` and runs kernels on it.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from fuzzfarm.device import icd
from fuzzfarm.errors import BadInput

# Before pyopencl loads the ICD loader: make the drivers pip installed into this
# environment (Intel's CPU runtime) visible (fuzzfarm/device/icd.py).
icd.register()

import pyopencl as cl  # noqa: E402

from fuzzfarm.device.kernels import fp_config_names  # noqa: E402
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, FloatFormat  # noqa: E402

__all__ = ["DeviceInfo", "DeviceSelectionError", "list_devices", "select_devices",
           "bundled_pocl_library", "bundled_pocl_libraries", "open_device"]

_PRECISIONS = (BINARY16.name, BINARY32.name, BINARY64.name)

# cl_device_type bits (OpenCL API spec, table "CL_DEVICE_TYPE"); DEFAULT (1) is a role,
# not a kind, and is named only when nothing else is set.
_DEVICE_TYPES = (("CPU", 1 << 1), ("GPU", 1 << 2), ("ACCELERATOR", 1 << 3), ("CUSTOM", 1 << 4))


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
    #: CL_DEVICE_MAX_MEM_ALLOC_SIZE in bytes (0 where the query fails): the largest
    #: buffer, which bounds the size of a unit kept on the device (work.make.resident_bytes)
    max_alloc_bytes: int = 0
    #: CL_DEVICE_IL_VERSION, the intermediate languages clCreateProgramWithIL takes
    #: ('SPIR-V_1.0 SPIR-V_1.1 ...'; '' where none or the query fails)
    il_version: str = ""

    @property
    def spirv_versions(self) -> tuple[str, ...]:
        """The SPIR-V versions the device consumes (``('1.0', '1.1', ...)``), from
        ``il_version``; ``()`` for a device that takes no SPIR-V."""
        return tuple(re.findall(r"SPIR-V_(\d+\.\d+)", self.il_version))

    @property
    def fingerprint(self) -> str:
        """12 hex digits identifying this device *and its driver build* (docs/design.md, decision 7):
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
    def is_gpu(self) -> bool:
        """A GPU and nothing else in its CL_DEVICE_TYPE (Oclgrind says
        CPU|GPU|ACCELERATOR): its compiler runs when a program is built, not at a
        kernel's first launch."""
        kinds = self.device_type.split("|")
        return "GPU" in kinds and "CPU" not in kinds

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
        another node, described there; a field with a default may be absent (a
        description of an older version).  Raises KeyError for another missing field."""
        import dataclasses
        kw = {f.name: d[f.name] if f.default is dataclasses.MISSING else d.get(f.name, f.default)
              for f in dataclasses.fields(cls)}
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
            "extensions": list(self.extensions), "max_alloc_bytes": self.max_alloc_bytes,
            "il_version": self.il_version, "spirv_versions": list(self.spirv_versions),
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
        max_alloc_bytes=int(_query(lambda: dev.max_mem_alloc_size, 0) or 0),
        il_version=_clean(_query(lambda: dev.il_version, "") or ""),
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
    if low.isascii() and low.isdigit() and len(low) < 6:    # longer: a fingerprint's
        return [d for d in devices if d.index == int(low)]   # digits ('579766307866')
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
    an index into ``list_devices()`` ('0'; fewer than 6 digits); 'P:D' platform and device indices ('0:1'); a
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


def bundled_pocl_libraries() -> list[str]:
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
    code = ("from fuzzfarm.device.discovery import list_devices\n"
            "print(' '.join(d.fingerprint for d in list_devices()))")
    root = str(Path(__file__).resolve().parents[2])   # the folder holding fuzzfarm/
    out: dict[str, str] = {}
    for lib in bundled_pocl_libraries():
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


def open_device(info: DeviceInfo):
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
