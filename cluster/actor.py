"""The device actor: one Ray actor per OpenCL device, running the device's pipeline
(``fuzzfarm.orchestrate.pipeline``) with the Ray parts: its orders from the campaign's
coordinator (``cluster.coordinator.RayOrders``), unit makers in their own processes
(``RayMakers``), and checks as Ray tasks (``RayExecutor``).

Inputs travel once: a maker puts them in Ray's object store, the actor reads them there
(zero-copy) to fill its staging buffers, and the check task gets the same object; what the
device gives back goes into the object store once, as one ``Landed`` value.  A range unit's
inputs are not stored at all: the kernel makes them from the global id and the check task
makes again those it reads.  Each check task writes its unit's findings and then its stats
row (atomically: ``fuzzfarm.store.dataset``) and then tells the coordinator the unit is
done (awaited); a unit whose stats file exists is never run again.

``work`` returns the pipeline's totals, with where the actor's time went: the first place
to look for the bottleneck of a run.
"""
from __future__ import annotations

import os
import time
from contextlib import contextmanager
from dataclasses import replace

import ray

from fuzzfarm.orchestrate.pipeline import Maker

__all__ = ["DeviceActor", "UnitMaker", "RayMakers", "RayExecutor", "check_unit_task",
           "warm_checker"]


@ray.remote(num_cpus=1)
def check_unit_task(landed, inputs, claims, device_meta, run_id, out, coordinator,
                    device_key):
    """Check one landed unit and write its rows (work.check.check_and_write), then tell
    the coordinator it is done, or that it is a device fault (inputs the device made
    wrong).  ``inputs``: the unit's inputs from the object store where a maker made them
    (``landed`` then holds none).  Returns the unit's UnitReport."""
    from fuzzfarm.work.check import check_and_write
    if inputs is not None:
        landed = replace(landed, inputs=inputs)
    with _profiled():
        r = check_and_write(landed, claims, device_meta, run_id, out)
    # awaited, not sent and forgotten: a task whose node dies after it returned but before
    # its call left the node lost the unit's completion, and its lease kept the pool open
    # for ever (the fault-tolerance test hung once in 36 runs).  Awaited, the node's death
    # fails the task instead, Ray runs it again and a duplicate completion is ignored.
    ray.get(coordinator.report.remote(device_key, r))
    return r


#: A folder to write each checking process's cProfile statistics to
#: (``check-<pid>.prof``, every PROFILE_EVERY checks), for benchmarks/bench_run.py
#: --profile-checks; unset in normal use.
PROFILE_ENV = "FUZZFARM_PROFILE_CHECKS"
PROFILE_EVERY = 16
_profile: list = []         # [cProfile.Profile, checks profiled] of this process


@contextmanager
def _profiled():
    """The check within it under this process's cProfile where PROFILE_ENV names a
    folder; nothing otherwise."""
    folder = os.environ.get(PROFILE_ENV)
    if not folder:
        yield
        return
    import cProfile
    if not _profile:
        _profile.extend([cProfile.Profile(), 0])
    prof = _profile[0]
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        _profile[1] += 1
        if _profile[1] % PROFILE_EVERY == 1:
            os.makedirs(folder, exist_ok=True)
            prof.dump_stats(os.path.join(folder, f"check-{os.getpid()}.prof"))


@ray.remote(num_cpus=1)
def warm_checker() -> float:
    """Start a worker and load the checking path in it (modules, catalogue, Parquet
    writer), so the first check tasks do not pay for it; run once per CPU while the
    kernels build.  Returns the seconds it took."""
    t0 = time.perf_counter()
    import numpy as np
    import pyarrow.parquet  # noqa: F401

    from edgecases import catalogue
    from fuzzfarm.store import dataset as store  # noqa: F401
    from fuzzfarm.verdict.checker import check_batch
    from fuzzfarm.work import check  # noqa: F401
    fn = catalogue.function("sin")
    x = np.array([0x3F800000, 0x7FC00000, 0x00000001], dtype=np.uint32)
    check_batch(fn, {"x": x}, {"ret": x})
    return time.perf_counter() - t0


@ray.remote(num_cpus=0)
class UnitMaker:
    """Makes units ahead of a device actor in its own process: the hypothesis recipe draw
    and the vectorized expansion (work.session.prepare_inputs).  Its two results go to the
    object store: the unit (small) and its inputs (read zero-copy by the actor and by the
    check task), or the device plan of inputs the device makes."""

    def warm(self) -> bool:
        """Import and exercise the generation path once (hypothesis's first draw is slow)."""
        from fuzzfarm.target import Target
        from fuzzfarm.work.make import stream_unit
        from fuzzfarm.work.session import prepare_inputs
        prepare_inputs(stream_unit("warm", Target("sin"), 1, 0, [64]), False)
        return True

    @ray.method(num_returns=2)
    def make(self, unit, on_device: bool = False):
        """(the unit, recipes drawn; its inputs, its device plan, or None for a range)."""
        from fuzzfarm.work.session import prepare_inputs
        return prepare_inputs(unit, on_device)


class RayMakers(Maker):
    """Makes units in ``makers`` UnitMaker actors, round robin (none: in this process);
    ``on_device``: let the device make the inputs where it can (``Maker``)."""

    def __init__(self, makers: list, on_device: bool):
        super().__init__(on_device)
        self.makers = makers
        self._turn = 0

    def start(self, ticket):
        if not self.makers:
            return ticket
        m = self.makers[self._turn % len(self.makers)]
        self._turn += 1
        unit_ref, inputs_ref = m.make.remote(ticket.unit, self.on_device_for(ticket.unit))
        # a future tells whether the unit is made without asking Ray (``first_ready``: a
        # ray.wait took ~1 ms on the H100's host)
        return unit_ref, inputs_ref, inputs_ref.future()

    def finish(self, handle):
        from fuzzfarm.orchestrate.scheduler import Ticket
        from fuzzfarm.work.session import prepare_inputs
        if isinstance(handle, Ticket):          # made here
            unit, inputs = prepare_inputs(handle.unit, self.on_device_for(handle.unit))
            return unit, inputs, None
        unit_ref, inputs_ref, _ = handle
        unit, inputs = ray.get([unit_ref, inputs_ref])
        return unit, inputs, inputs_ref if isinstance(inputs, dict) else None

    def first_ready(self, handles):
        import concurrent.futures
        from fuzzfarm.orchestrate.scheduler import Ticket
        for k, h in enumerate(handles):
            if isinstance(h, Ticket) or h[2].done():    # made here at ``finish``, or made
                return k
        concurrent.futures.wait([h[2] for h in handles],
                                return_when=concurrent.futures.FIRST_COMPLETED)
        return next(k for k, h in enumerate(handles) if h[2].done())


class RayExecutor:
    """Checks as Ray tasks (``check_unit_task``), at most ``max_in_flight`` pending: the
    landed unit goes into the object store once (inputs a maker stored are passed by
    reference), a screened range cut to the results its check reads."""

    sparse = True

    def __init__(self, coordinator, key: str, run_id: str, out: str, meta_of,
                 max_in_flight: int):
        self.coordinator, self.key, self.run_id, self.out = coordinator, key, run_id, out
        self.meta_of, self.max_in_flight = meta_of, max(1, int(max_in_flight))
        self.pending: list = []

    @property
    def in_flight(self) -> int:
        return len(self.pending)

    def slot(self):
        return None

    def free(self, slot) -> None:
        pass

    def submit(self, landed, claims, slot=None, inputs_ref=None) -> None:
        if inputs_ref is not None:
            landed = replace(landed, inputs=None)
        self.pending.append(check_unit_task.remote(
            ray.put(landed), inputs_ref, claims, self.meta_of(landed.unit), self.run_id,
            self.out, self.coordinator, self.key))

    def reap(self, timeout: float = 0.0, bounded: bool = False) -> list:
        """Reports of finished checks: those done now, waiting ``timeout`` seconds for one
        where none is; with ``bounded``, waiting until fewer than ``max_in_flight`` are
        pending."""
        out = []
        while self.pending:
            must = bounded and len(self.pending) >= self.max_in_flight
            done, rest = ray.wait(self.pending, num_returns=1,
                                  timeout=None if must else timeout)
            if not done:
                break
            self.pending = rest
            out.append(ray.get(done[0]))
            timeout = 0.0
        return out

    def drain(self) -> list:
        out = ray.get(self.pending)
        self.pending = []
        return out


@ray.remote(num_cpus=0, concurrency_groups={"progress": 1})
class DeviceActor:
    """Owns one OpenCL device: the ``i``-th of ``fingerprint`` on its node, its
    DeviceSession (contexts, queues and built kernels per build-options set); ``makers``
    UnitMaker actors make its units ahead (0: it makes them itself).  ``faults``: planted
    faults (``fuzzfarm.device.runner.FAULTS_ENV``), for tests.  Raises
    DeviceSelectionError when the node has no such device."""

    def __init__(self, fingerprint: str, i: int = 0, makers: int = 2,
                 faults: dict | None = None, screen: str = "auto", inputs: str = "auto"):
        from fuzzfarm.device.discovery import DeviceSelectionError, list_devices
        from fuzzfarm.work.session import DeviceSession
        mine = [d for d in list_devices() if d.fingerprint == fingerprint]
        if len(mine) <= i:
            raise DeviceSelectionError(f"this node has no device {i} of fingerprint "
                                       f"{fingerprint} ({len(mine)} found)")
        self.info = mine[i]
        self.faults = faults or {}
        self.session = DeviceSession(self.info, screen, inputs, self.faults)
        self.screen, self.inputs = screen, inputs
        from fuzzfarm.work.warm import WarmProgress
        self.building = WarmProgress()      # what ``build_progress`` reports
        # started now, so their processes start and warm up while the kernels build (a
        # make() call queues behind the warm-up on the same actor)
        self.makers = [UnitMaker.remote() for _ in range(max(0, int(makers)))]
        for m in self.makers:
            m.warm.remote()

    def describe(self):
        return self.info

    def pid(self) -> int:
        return os.getpid()

    def constants(self) -> dict:
        """The device's FP_ILOGB0 and FP_ILOGBNAN (for `fuzzfarm verify`)."""
        return self.session.device_constants()

    def prepare(self, targets_by_options: dict, deadline: float | None = None,
                largest: int | None = None) -> dict:
        """Build every program the targets' units use before the first unit (``{build
        options: [Target, ...]}``): on a device whose compiler runs on the host and keeps
        what it compiled (``work.warm.helpers_useful``: PoCL, Intel's CPU runtime) each
        target's programs are first built and launched once in helper processes, one per
        core, until ``deadline`` (a ``time.time()``, the campaign's budget); then
        DeviceSession.prepare builds every kernel and device screen here (from the
        driver's cache where the helpers ran); ``largest``: the campaign's largest unit
        (inputs), which decides the launch shapes warmed.  ``build_progress`` says how far
        it is.
        Returns the warm-up's report (``WarmReport.to_json``) with ``seconds``, the
        time spent in all."""
        from collections import Counter

        from fuzzfarm.work.warm import (WarmProgress, WarmReport, helpers_useful, targets_of,
                                        warm_in_helpers)
        t0 = time.perf_counter()
        mine = targets_of(self.info, targets_by_options)
        self.building = WarmProgress(total=len(mine))
        report = WarmReport(progress=self.building)
        if helpers_useful(self.info):
            report = warm_in_helpers(self.info, targets_by_options, self.screen, self.inputs,
                                     self.faults, on_progress=self._built, deadline=deadline,
                                     largest=largest)
        # built here, not warmed by helpers: a target counts once its screen is built
        per = Counter((t.name, t.precision) for _, t in mine)

        def on_built(name: str, precision: str) -> None:
            self.building.done += per.pop((name, precision), 0)
        self.session.prepare(targets_by_options, None if report.helpers else on_built)
        self.building.done = self.building.total
        report.progress = self.building          # every target's programs are built now
        self.building.seconds = time.perf_counter() - t0
        return {**report.to_json(), "seconds": round(time.perf_counter() - t0, 3)}

    def _built(self, progress) -> None:
        self.building = progress

    @ray.method(concurrency_group="progress")
    def build_progress(self) -> dict:
        """How far ``prepare`` is (WarmProgress.to_json: targets done of total), answered
        while it runs."""
        return self.building.to_json()

    def work(self, coordinator, key: str, run_id: str, out: str, max_in_flight: int = 2,
             prefetch: int | None = None, profile_dir: str | None = None) -> dict:
        """Pull units as device ``key`` until the coordinator has none; returns the
        pipeline's Totals (as JSON: ``Totals.to_json``).

        Up to ``prefetch`` units (default: makers + 1) are being made ahead; the next unit
        is enqueued on the device before the previous one lands and goes to a check task;
        at most ``max_in_flight`` check tasks are pending.  A unit to be run isolated (a
        retry after a crash or hang) runs alone on the device.  With ``profile_dir`` the
        loop runs under cProfile and its statistics are written there
        (``actor-<fingerprint>.prof`` and ``.txt``)."""
        from cluster.coordinator import RayOrders
        from fuzzfarm.orchestrate.pipeline import Pipeline
        info = self.info
        pipeline = Pipeline(
            self.session, out, run_id, RayOrders(coordinator, key),
            RayMakers(self.makers, self.session.makes_inputs),
            RayExecutor(coordinator, key, run_id, out,
                        lambda unit: info.columns(unit.target.precision), max_in_flight),
            prefetch=int(prefetch) if prefetch else len(self.makers) + 1, plants=self.faults)
        pipeline.totals.device = key
        if not profile_dir:
            return pipeline.run().to_json() | {"makers": len(self.makers),
                                               "in_flight": max_in_flight}
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        try:
            return pipeline.run().to_json() | {"makers": len(self.makers),
                                               "in_flight": max_in_flight}
        finally:
            prof.disable()
            os.makedirs(profile_dir, exist_ok=True)
            base = os.path.join(profile_dir, f"actor-{info.fingerprint}")
            prof.dump_stats(base + ".prof")
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(40)
            with open(base + ".txt", "w") as fh:
                fh.write(text.getvalue())
