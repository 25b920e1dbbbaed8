"""Compiling a run's programs before its units start: every program a target's units use
(its built-in's or conversion's kernel, its device screen and the screen's gathering, the
input generator) built *and launched once*, so that a driver which generates a kernel's
machine code at its first launch (PoCL: per kernel and work-group size) does it here, on
every core, and not one unit at a time on the device's queue (docs/cold_start.md).

A target is warmed by running small units of it through the device's real path
(``DeviceSession.launch`` and ``land``): its special-value unit and a drawn unit of each
launch shape the campaign's units take (``warm_units``), made on the device where the
session would make them there.  Nothing is checked or stored:
the campaign's own units, which come next, give every verdict.  What a target's warm-up
meets -- a kernel that does not build, an OpenCL error -- is left for its first real
unit, which records it as a device fault as it always has (``Pipeline._fault``): the
warm-up only counts it (``WarmReport.failed``).

``warm_in_helpers`` spreads the targets over helper processes (one per core by
default), each with its own context on the same device: a driver that compiles under one
lock per process (PoCL 3.0 serializes its kernel compiler within a process) then compiles
on every core, and the device's on-disk program cache (PoCL's kernel cache; pyopencl's
binary cache for drivers without one) hands the results to the device actor.  A helper
that crashes or hangs costs only its unfinished targets, which the actor builds itself.
On a GPU, which compiles at build time, the helpers build and do not launch: each
program in one helper (NVIDIA's CUDA cache then serves the actor).
``warm_in_process`` does the same in the caller's process (each helper's loop).  A
finished warm-up leaves a stamp in fuzzfarm's cache, keyed by the device, the targets and
the content of every file the programs' text comes from: the next run of the same job
starts its units at once.
"""
from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from fuzzfarm.target import Target
from fuzzfarm.work.kinds import kind_of

__all__ = ["WarmReport", "WarmProgress", "warm_units", "warm_in_process", "warm_in_helpers",
           "helpers_useful", "targets_of", "is_warm", "stamp_path", "WARM_ITEMS",
           "HELPER_MIN_TARGETS"]

#: The fewest targets warmed in helper processes (each helper at least this many).
HELPER_MIN_TARGETS = 8

#: The sizes of a target's drawn warm-up units, in work items: PoCL generates a kernel's
#: code per work-group size and again for a grid of 2**16 work items or more (its
#: "smallgrid" specialization ends there, measured on PyPI's PoCL 3.0), and a campaign's
#: units are of both kinds (the special-value unit and the first drawn ones small, the
#: later ones large), so the warm-up launches one of each.
WARM_ITEMS = (1024, 1 << 16)


@dataclass
class WarmProgress:
    """How far a warm-up is: ``done`` of ``total`` targets (a target counts as done
    whatever its warm-up met), ``failed`` of them met an error, and ``seconds`` since it
    started.  What the live table and the line log show while programs build."""

    done: int = 0
    total: int = 0
    failed: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"done": self.done, "total": self.total, "failed": self.failed,
                "seconds": round(self.seconds, 3)}


@dataclass
class WarmReport:
    """The outcome of a warm-up: ``progress`` at its end, ``helpers`` (processes used; 0
    for in-process), ``lost`` (targets a helper that crashed, hung or ran out of time
    left unwarmed), ``stopped`` (the deadline came first) and ``warm`` (nothing to do: a
    stamp says these targets were warmed already, ``is_warm``)."""

    progress: WarmProgress = field(default_factory=WarmProgress)
    helpers: int = 0
    lost: int = 0
    stopped: bool = False
    warm: bool = False

    def to_json(self) -> dict:
        return {**self.progress.to_json(), "helpers": self.helpers, "lost": self.lost,
                "stopped": self.stopped, "warm": self.warm}


def helpers_useful(info) -> bool:
    """Whether building ``info``'s programs in helper processes can save the device actor
    time: a device whose compiler runs on the host's cores and keeps what it compiled
    where another process finds it -- a CPU device (PoCL compiles at first launch, under
    one lock per process) or a GPU (NVIDIA's compiler keeps its programs in the CUDA
    cache, ``~/.nv/ComputeCache``).  Not Oclgrind: it keeps nothing (it interprets every
    launch) and is seen to crash with several host threads."""
    return "oclgrind" not in info.platform_name.lower() and (info.is_gpu or
                                                               "CPU" in info.device_type)


def warm_units(target: Target, build_options: str = "", seed: int = 1,
               largest: int | None = None) -> list:
    """The units that warm ``target``'s programs: its special-value unit and a drawn unit
    of each of WARM_ITEMS work items (inputs times the vector width; vectors for a
    geometric built-in) -- of the larger only where the campaign's units can reach it
    (``largest``: its largest unit, inputs; None: no limit).  Their ids start with
    ``warm-``; nothing of them is stored."""
    from fuzzfarm.work.make import make_unit
    target = Target.of(target)
    # an element-wise input is one lane of a work item's vector; a geometric one, a vector
    lanes = target.width if kind_of(target).lanes_per_input(target) == 1 else 1
    units = [make_unit("warm", target, 0, seed, 1, 1, build_options=build_options)]
    units += [make_unit("warm", target, k + 1, seed, 1, 1, size=items * lanes,
                        build_options=build_options)
              for k, items in enumerate(WARM_ITEMS)
              if k == 0 or largest is None or items * lanes <= largest]
    return units


def _warm_target(session, target: Target, build_options: str,
                 largest: int | None = None) -> bool:
    """Run ``target``'s warm-up units (``warm_units``) on ``session`` (a DeviceSession);
    whether all of them ran.  Any error is the real units' to meet and record."""
    from fuzzfarm.work.make import make_inputs
    from fuzzfarm.work.session import is_device_plan, prepare_inputs
    ok = True
    for unit in warm_units(target, build_options, largest=largest):
        try:
            unit, inputs = prepare_inputs(unit, on_device=session.makes_inputs)
            if is_device_plan(inputs) and not session.makes(unit, inputs):
                inputs = make_inputs(unit)
            launch = session.launch(unit, inputs)
            try:
                session.land(launch)
            finally:
                launch.release()
        except Exception:           # noqa: BLE001 - the campaign's units record it
            ok = False
    return ok


def targets_of(info, targets_by_options: dict) -> list:
    """[(build options, Target)] of ``targets_by_options`` ({build options: [Target,
    ...]}) that device ``info`` (a DeviceInfo) runs: those within its capabilities
    (``work.session.capabilities_of``: precisions, SPIR-V), each once."""
    from fuzzfarm.work.session import capabilities_of
    return _targets(capabilities_of(info), targets_by_options)


def _targets(capabilities: tuple, targets_by_options: dict) -> list:
    """[(build options, Target)] of ``targets_by_options`` within ``capabilities`` (those the
    device has), each once."""
    have = set(capabilities)
    return [(bo, t) for bo, targets in targets_by_options.items()
            for t in dict.fromkeys(map(Target.of, targets)) if t.requirements <= have]


def warm_in_process(session, targets_by_options: dict,
                    on_target: Callable[[bool], None] | None = None,
                    deadline: float | None = None,
                    keep_going: Callable[[], bool] | None = None,
                    largest: int | None = None) -> WarmProgress:
    """Warm every target of ``targets_by_options`` ({build options: [Target, ...]}) on
    ``session`` (a DeviceSession) in this process, one after another (``warm_units``,
    ``largest`` the campaign's largest unit); ``on_target(ok)`` after each; stops at
    ``deadline`` (a ``time.time()``) or when ``keep_going()`` says no.  Returns the
    progress at the end."""
    t0 = time.perf_counter()
    todo = _targets(session.capabilities, targets_by_options)
    progress = WarmProgress(total=len(todo))
    for bo, t in todo:
        if (deadline is not None and time.time() >= deadline) or \
                (keep_going is not None and not keep_going()):
            break
        ok = _warm_target(session, t, bo, largest)
        progress.done += 1
        progress.failed += not ok
        if on_target is not None:
            on_target(ok)
    progress.seconds = time.perf_counter() - t0
    return progress


def _helper(info, screen: str, inputs: str, plants: dict, every: dict, share: dict,
            results, largest: int | None, kernels: dict | None = None) -> None:
    """A helper process: its own DeviceSession on ``info``, making the programs the device
    actor makes next (the same text, so the driver's cache serves the actor); one
    result per target of its ``share`` on ``results`` (a multiprocessing queue).

    ``kernels`` None (a CPU device, whose compiler works at a kernel's first launch):
    the kernels of ``every`` target are built (cheap there) and the ``share``'s targets
    warmed by launching them.  Otherwise (a GPU, which compiles at build time) only the
    kernel programs of ``kernels`` (whole groups of ``kernel_programs``) and the device
    screens of the ``share`` are built, each program in one helper only; nothing runs."""
    from fuzzfarm.work.session import DeviceSession
    parent = os.getppid()
    try:
        session = DeviceSession(info, screen, inputs, plants)
        session.prepare_kernels(every if kernels is None else kernels)
    except Exception:               # noqa: BLE001 - the actor opens the device itself
        return
    # a helper whose actor was killed stops after its current target
    if kernels is None:
        warm_in_process(session, share, on_target=results.put,
                        keep_going=lambda: os.getppid() == parent, largest=largest)
        return
    for bo, targets in share.items():
        for t in targets:
            if os.getppid() != parent:
                return
            try:
                session.prepare_screens(bo, [t], threads=1)
                results.put(True)
            except Exception:       # noqa: BLE001 - the actor builds it and records it
                results.put(False)


def _kernel_shares(info, targets_by_options: dict, n: int) -> list:
    """``targets_by_options``'s kernel programs (``kernel_programs``) dealt out to ``n``
    helpers in turn: [{build options: [Target, ...]}, ...], whole groups each."""
    from fuzzfarm.work.session import capabilities_of, kernel_programs
    shares: list = [{} for _ in range(n)]
    k = 0
    for bo, groups in kernel_programs(targets_by_options, capabilities_of(info)).items():
        for ts in groups.values():
            shares[k % n].setdefault(bo, []).extend(ts)
            k += 1
    return shares


#: The package folders whose files make the programs' text (kernel sources, the screens'
#: generators, the catalogue's data): a warm-up stamp is for their exact content.
_PROGRAM_SOURCES = ("fuzzfarm/device", "fuzzfarm/oracle", "fuzzfarm/work", "edgecases/data")


def stamp_path(info, targets_by_options: dict, largest: int | None) -> Path:
    """Where the stamp of a finished warm-up of these targets on device ``info`` lives:
    ``<fuzzfarm's cache>/warm/<key>.json``, the key a hash of the device's fingerprint,
    the targets, ``largest``, WARM_ITEMS and every file the programs' text comes from, so
    that a new fuzzfarm version or driver warms again."""
    import hashlib
    from fuzzfarm.device.icd import cache_root
    h = hashlib.sha256()
    h.update(repr((info.fingerprint, sorted((bo, t.id) for bo, t in
                                            targets_of(info, targets_by_options)),
                   largest, WARM_ITEMS)).encode())
    root = Path(__file__).resolve().parents[2]
    for folder in _PROGRAM_SOURCES:
        for f in sorted(Path(root, folder).glob("*")):
            if f.suffix in (".py", ".cl", ".toml"):
                h.update(f.name.encode() + f.read_bytes())
    return cache_root() / "warm" / f"{h.hexdigest()[:24]}.json"


def _driver_cache_present(info) -> bool:
    """Whether the program cache that serves the device's next run is where a stamp
    expects it: PoCL's kernel cache (``POCL_CACHE_DIR``, default ``~/.cache/pocl``),
    NVIDIA's CUDA cache (``CUDA_CACHE_PATH``, default ``~/.nv/ComputeCache``; none while
    ``CUDA_CACHE_DISABLE`` is 1), else pyopencl's binary cache (``~/.cache/pyopencl``)."""
    from fuzzfarm.device.icd import user_cache
    platform = info.platform_name.lower()
    if "portable computing language" in platform:
        folder = os.environ.get("POCL_CACHE_DIR") or user_cache() / "pocl"
    elif "nvidia" in platform:
        if os.environ.get("CUDA_CACHE_DISABLE", "0") == "1":
            return False
        folder = os.environ.get("CUDA_CACHE_PATH") or os.path.join(
            os.path.expanduser("~"), ".nv", "ComputeCache")
    else:
        folder = user_cache() / "pyopencl"
    return os.path.isdir(folder)


def is_warm(info, targets_by_options: dict, largest: int | None = None) -> bool:
    """Whether a warm-up of exactly these targets finished on device ``info`` with this
    fuzzfarm's program sources, and the driver's cache is still there (``stamp_path``)."""
    return stamp_path(info, targets_by_options, largest).is_file() and \
        _driver_cache_present(info)


def _write_stamp(path: Path, report: "WarmReport") -> None:
    """The stamp of a finished warm-up, written atomically (a temporary file renamed);
    a cache that cannot be written only means the next run warms again."""
    import json
    import tempfile
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        with os.fdopen(fd, "w") as fh:
            json.dump({**report.to_json(), "finished": time.time()}, fh)
        os.replace(tmp, path)
    except OSError:
        pass


def warm_in_helpers(info, targets_by_options: dict, screen: str = "auto",
                    inputs: str = "auto", plants: dict | None = None,
                    processes: int | None = None,
                    on_progress: Callable[[WarmProgress], None] | None = None,
                    deadline: float | None = None, patience: float = 120.0,
                    largest: int | None = None) -> WarmReport:
    """Warm the targets of ``targets_by_options`` ({build options: [Target, ...]}) on
    device ``info`` (a DeviceInfo) in ``processes`` helper processes (default: the host's
    cores), the targets dealt out in turn so that each helper gets every kind
    (``warm_units``; ``largest``: the campaign's largest unit, inputs).
    ``on_progress(WarmProgress)`` is called after each target; the helpers are stopped at
    ``deadline`` (a ``time.time()``), or when none has finished a target for
    ``patience`` seconds (a compiler that hangs).  Each helper takes at least
    HELPER_MIN_TARGETS targets, and fewer than two helpers are not worth their start (a
    few seconds of imports, no compiling in parallel): then none is started, and the
    report says so (``helpers`` 0, every target left to the actor).  Of ``plants``
    (planted faults, tests) the helpers take only the planted build failures, which the
    actor meets the same way: a planted crash, hang or OpenCL error is for the campaign's
    units.  A warm-up that finished every target without an error leaves a stamp
    (``stamp_path``); while it is there (``is_warm``) no helper is started and the report
    says ``warm``.  Returns the WarmReport."""
    t0 = time.perf_counter()
    todo = targets_of(info, targets_by_options)
    n = min(int(processes or os.cpu_count() or 1), len(todo) // HELPER_MIN_TARGETS)
    if n < 2:
        return WarmReport(progress=WarmProgress(total=len(todo)), helpers=0)
    stamp = stamp_path(info, targets_by_options, largest)
    if stamp.is_file() and _driver_cache_present(info):        # is_warm, hashed once
        return WarmReport(progress=WarmProgress(done=len(todo), total=len(todo)), helpers=0,
                          warm=True)
    report = WarmReport(progress=WarmProgress(total=len(todo)), helpers=n)
    shares: list = [{} for _ in range(n)]
    for k, (bo, t) in enumerate(todo):
        shares[k % n].setdefault(bo, []).append(t)
    ctx = multiprocessing.get_context("spawn")   # never fork a process holding a context
    results = ctx.Queue()
    build_plants = {"build": list((plants or {}).get("build", ()))}
    kernels = _kernel_shares(info, targets_by_options, n) if info.is_gpu else [None] * n
    procs = [ctx.Process(target=_helper, args=(info, screen, inputs, build_plants,
                                               targets_by_options, share, results,
                                               largest, own),
                         daemon=True)
             for share, own in zip(shares, kernels)]
    for p in procs:
        p.start()
    last = time.time()
    try:
        while report.progress.done < len(todo):
            try:
                ok = results.get(timeout=0.25)
            except queue_module.Empty:
                now = time.time()
                if deadline is not None and now >= deadline:
                    report.stopped = True
                    break
                if now - last > patience or not any(p.is_alive() for p in procs):
                    break
                continue
            last = time.time()
            report.progress.done += 1
            report.progress.failed += not ok
            report.progress.seconds = time.perf_counter() - t0
            if on_progress is not None:
                on_progress(report.progress)
    finally:
        for p in procs:
            p.join(timeout=0 if report.stopped else 1.0)
            if p.is_alive():
                p.kill()
                p.join()
        results.close()
    report.lost = len(todo) - report.progress.done
    report.progress.seconds = time.perf_counter() - t0
    if not report.lost and not report.stopped and not report.progress.failed:
        _write_stamp(stamp, report)
    return report
