"""Driver builds for ``fuzzfarm history``: what a build is, installing one, and the OpenCL
drivers (ICD files) that make it visible to one process.

A build (``BuildSpec``) is one of:

* a **release of a pip-distributed runtime** (``intel==2024.0.0``; ``PipRuntime``): its
  packages installed at that version by pip itself (``pip install --prefix``, no
  downloader of ours) into a prefix of the user's cache, ``<cache>/builds/<runtime>-<ver>``,
  once: a second history reuses it.  Its drivers are the ICD files the packages put under
  ``<prefix>/etc/OpenCL/vendors``, registered the way ``fuzzfarm.device.icd`` registers an
  environment's (the recorded library path replaced by ``<prefix>/lib``'s);
* **an ICD file or an OpenCL library** (``debian-pocl=/etc/OpenCL/vendors/pocl.icd``,
  ``mine=/opt/x/libOpenCL-impl.so``);
* **a results directory** already made (``2024.0.0=runs/v2024``): nothing is run.

``environment(folder)`` is the environment a build's processes run in: ``OCL_ICD_VENDORS``
naming a folder with the build's ICD files only (pyopencl's bundled loader still adds the
drivers of its own ``.libs`` folder -- PyPI's PoCL, Oclgrind -- so a build's devices are
those its folder adds to an empty one: ``build_devices``).

A spec's text (``parse``) is ``RUNTIME==VERSION``, ``RUNTIME==FIRST..LAST`` (every release
of the package index between the two, inclusive, oldest first: ``available_versions``),
or ``LABEL=PATH``.  This module imports neither pyopencl nor Ray.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from fuzzfarm.device import icd as icds
from fuzzfarm.errors import BadInput

__all__ = ["PipRuntime", "RUNTIMES", "BuildSpec", "BuildError", "Installed", "InstallFailed",
           "parse", "available_versions", "cache_root", "install", "driver_folder",
           "environment", "build_devices"]

#: The seconds pip may take to install one build before it is given up.
INSTALL_TIMEOUT = 1800.0


class BuildError(BadInput):
    """A build that cannot be named: unknown runtime, malformed spec, a version the index
    does not have, a path that does not exist."""


class InstallFailed(Exception):
    """pip could not install a build (``str``: pip's last error line)."""


@dataclass(frozen=True)
class PipRuntime:
    """An OpenCL runtime distributed as pip packages released together: ``name`` (as the
    user writes it), ``packages`` (installed at one version; the first is the one whose
    releases are listed) and ``devices`` (the selector, as ``--device``, of the devices
    to test among those the runtime's ICD files give)."""
    name: str
    packages: tuple
    devices: str = "all"


#: The runtimes a spec can name (``intel==2024.0.0``): Intel's CPU OpenCL runtime, whose
#: wheels also register an FPGA emulator (not tested: ``devices``).
RUNTIMES = {
    "intel": PipRuntime("intel", ("intel-opencl-rt", "intel-cmplr-lib-rt"), devices="cpu"),
}


@dataclass(frozen=True)
class BuildSpec:
    """One build, as named: ``label`` (its column in the report), ``kind`` ("pip",
    "driver" or "results") and what it is: ``runtime`` and ``version`` (pip), ``path``
    (the ICD file or library of a driver build; the directory of a results build)."""
    label: str
    kind: str
    runtime: PipRuntime | None = None
    version: str = ""
    path: Path | None = None

    @property
    def source(self) -> str:
        """How the build was obtained, one line (e.g. "pip intel-opencl-rt==2024.0.0 ...")."""
        if self.kind == "pip":
            return "pip " + " ".join(f"{p}=={self.version}" for p in self.runtime.packages)
        return f"{'results' if self.kind == 'results' else 'driver'} {self.path}"


def _version_key(v: str):
    from packaging.version import InvalidVersion, Version
    try:
        return (0, Version(v))
    except InvalidVersion:
        return (1, v)


def available_versions(runtime: PipRuntime) -> list[str]:
    """The releases of ``runtime``'s first package on the package index pip uses, oldest
    first (``pip index versions``).  Raises BuildError when pip cannot list them."""
    cmd = [sys.executable, "-m", "pip", "index", "versions", runtime.packages[0],
           "--disable-pip-version-check", "--no-input"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise BuildError(f"cannot list the releases of {runtime.packages[0]}: {exc}") from None
    m = re.search(r"Available versions:\s*(.+)", p.stdout)
    if p.returncode or not m:
        last = (p.stderr.strip().splitlines() or ["no answer"])[-1]
        raise BuildError(f"cannot list the releases of {runtime.packages[0]}: {last}")
    return sorted((v.strip() for v in m.group(1).split(",") if v.strip()), key=_version_key)


def _runtime(name: str, text: str) -> PipRuntime:
    low = name.strip().lower()
    for r in RUNTIMES.values():
        if low == r.name or low in r.packages:
            return r
    raise BuildError(f"build {text!r}: unknown runtime {name!r}; known: "
                     f"{', '.join(RUNTIMES)} (or LABEL=PATH for a driver or results)")


def parse(texts, versions=available_versions) -> list[BuildSpec]:
    """The builds ``texts`` name, in order: ``RUNTIME==VERSION``, ``RUNTIME==FIRST..LAST``
    (the index's releases between them, inclusive: ``versions(runtime)``, called only for
    ranges), ``LABEL=DIR`` (a results directory) or ``LABEL=FILE`` (an ICD file, ``*.icd``,
    or an OpenCL library).  Raises BuildError for an unknown runtime, a malformed spec, a
    range end the index does not list, a path that does not exist, or a label given twice."""
    out: list[BuildSpec] = []
    for text in texts:
        text = str(text).strip()
        if "==" in text:
            name, _, ver = text.partition("==")
            rt = _runtime(name, text)
            first, dots, last = ver.partition("..")
            if not first.strip() or (dots and not last.strip()):
                raise BuildError(f"build {text!r}: write {rt.name}==VERSION or "
                                 f"{rt.name}==FIRST..LAST")
            if dots:
                listed = versions(rt)
                for end in (first.strip(), last.strip()):
                    if end not in listed:
                        raise BuildError(f"build {text!r}: {rt.packages[0]} has no release "
                                         f"{end!r} (the index lists {listed[0]} ... {listed[-1]})")
                i, j = listed.index(first.strip()), listed.index(last.strip())
                if i > j:
                    raise BuildError(f"build {text!r}: {first.strip()} is newer than {last.strip()}")
                chosen = listed[i:j + 1]
            else:
                chosen = [ver.strip()]
            out += [BuildSpec(v, "pip", runtime=rt, version=v) for v in chosen]
            continue
        label, sep, path = text.partition("=")
        if not sep or not label.strip() or not path.strip():
            raise BuildError(f"build {text!r}: write RUNTIME==VERSION, LABEL=RESULTS_DIR or "
                             f"LABEL=ICD_FILE_OR_LIBRARY")
        p = Path(path.strip()).expanduser()
        if not p.exists():
            raise BuildError(f"build {text!r}: {str(p)!r} does not exist")
        out.append(BuildSpec(label.strip(), "results" if p.is_dir() else "driver", path=p))
    labels = [b.label for b in out]
    for lab in labels:
        if labels.count(lab) > 1:
            raise BuildError(f"build label {lab!r} given twice")
    return out


def cache_root() -> Path:
    """The folder of installed builds: ``$XDG_CACHE_HOME/fuzzfarm/builds`` (default
    ``~/.cache/fuzzfarm/builds``)."""
    return icds.cache_root() / "builds"


@dataclass(frozen=True)
class Installed:
    """An installed pip build: its ``prefix``, the ``seconds`` the install took (0.0 when
    ``reused``: installed by an earlier run)."""
    prefix: Path
    seconds: float
    reused: bool


_MARKER = "fuzzfarm-build.json"


def install(spec: BuildSpec, root: Path | None = None, pip=None) -> Installed:
    """Install ``spec`` (kind "pip") into ``<root>/<runtime>-<version>`` unless an earlier
    run did: pip installs into a temporary folder beside it, renamed into place when pip
    succeeded (an interrupted install leaves nothing that looks installed); a file lock
    keeps two processes from installing one build at once.  ``pip``: the command's first
    words (default this Python's pip).  Raises InstallFailed with pip's last error line."""
    from filelock import FileLock
    root = Path(root or cache_root())
    root.mkdir(parents=True, exist_ok=True)
    prefix = root / f"{spec.runtime.name}-{spec.version}"
    with FileLock(str(prefix) + ".lock"):
        if (prefix / _MARKER).is_file():
            return Installed(prefix, 0.0, True)
        shutil.rmtree(prefix, ignore_errors=True)        # a folder without the marker
        tmp = Path(tempfile.mkdtemp(prefix=f".{prefix.name}-", dir=root))
        cmd = [*(pip or [sys.executable, "-m", "pip"]), "install", "--prefix", str(tmp),
               "--ignore-installed", "--no-warn-script-location", "--disable-pip-version-check",
               "--no-input", "--quiet",
               *(f"{p}=={spec.version}" for p in spec.runtime.packages)]
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
            errors = [ln for ln in p.stderr.splitlines()
                      if ln.strip() and not ln.startswith("WARNING")]
            if p.returncode:
                raise InstallFailed((errors or [f"pip exited with status {p.returncode}"])[-1])
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise InstallFailed(f"pip did not run to its end: {exc}") from None
        except InstallFailed:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        seconds = time.monotonic() - t0
        (tmp / _MARKER).write_text(json.dumps({"packages": cmd[cmd.index("--quiet") + 1:],
                                               "seconds": seconds}) + "\n")
        os.rename(tmp, prefix)
        return Installed(prefix, seconds, False)


def driver_folder(spec: BuildSpec, prefix: Path | None = None) -> Path:
    """The folder of ICD files that makes ``spec``'s drivers, and only those, visible to the
    ocl-icd loader: a pip build's (``prefix``: where it is installed) with each library
    found under ``<prefix>/lib``; a driver build's ICD file or library.  Raises
    InstallFailed when no driver library exists (the package holds no ICD file, or the one
    given names a library that is not there)."""
    if spec.kind == "pip":
        found = icds.environment_icds([str(prefix)])
    elif spec.path.suffix == ".icd":
        lines = spec.path.read_text(errors="replace").strip().splitlines()
        lib = lines[0].strip() if lines else ""
        # a path must exist; a bare file name is the loader's to find (its library path)
        usable = bool(lib) and ("/" not in lib or os.path.exists(lib))
        found = [icds.Icd(spec.path.name, lib, lib if usable else None, "given")]
    else:
        found = [icds.Icd(spec.path.stem + ".icd", str(spec.path), str(spec.path.resolve()),
                          "given")]
    have = [i for i in found if i.library]
    if not have:
        raise InstallFailed(f"no OpenCL driver library found for {spec.source} "
                            f"({', '.join(i.recorded for i in found) or 'no ICD file'})")
    return icds.write_folder(have)


def environment(folder: Path | None, base=None) -> dict:
    """The environment of a build's processes: ``base`` (default ``os.environ``) with
    ``OCL_ICD_VENDORS`` naming ``folder`` (None: an empty folder, for the drivers every
    build sees) and Ray's variables of an enclosing worker removed, so that a campaign
    started in it starts its own local cluster."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if not k.startswith("RAY_") and k != icds.MARKER}
    env["OCL_ICD_VENDORS"] = str(folder if folder is not None else icds.write_folder([]))
    return env


def build_devices(listing: list[dict], every: list[dict], selector: str) -> tuple:
    """The fingerprints of a build's devices: those of ``listing`` (``fuzzfarm devices
    --json`` in the build's environment) not in ``every`` (the same with no build's driver),
    then narrowed by ``selector`` (a ``--device`` string, matched on the build's devices
    only).  Returns (fingerprints, why): ``why`` says what is missing when none is left.
    Raises nothing."""
    from dataclasses import replace

    from fuzzfarm.device.discovery import DeviceInfo, DeviceSelectionError, select_devices
    known = {d["fingerprint"] for d in every}
    mine = [replace(DeviceInfo.from_dict(d), index=k)
            for k, d in enumerate(d for d in listing if d["fingerprint"] not in known)]
    if not mine:
        return (), "the build's driver shows no OpenCL device"
    try:
        chosen = select_devices(selector, mine) if selector != "all" else mine
    except DeviceSelectionError as exc:
        return (), str(exc)
    if not chosen:
        return (), f"no device of the build matches {selector!r}"
    return tuple(d.fingerprint for d in chosen), ""
