"""The Ray layer: a coordinator of work units, one actor per OpenCL device, placement.

**Placement** (DESIGN.md decision 7).  Every OpenCL device is a Ray custom resource of the
node that has it, named ``fuzzfarm_dev_<fingerprint>_<i>`` (the i-th device of that
fingerprint on the node; ``resource_name``), declared when the node starts
(``fuzzfarm node`` wraps ``ray start --resources``; ``local_resources`` gives the dict; a
driver that starts Ray itself declares its own devices).  The driver finds the devices of
the cluster in its nodes' resources (``cluster_devices``), asks each node to describe its
devices (``describe_node``), and starts each ``DeviceActor`` on its node, holding its
resource, with Ray restarting it where it dies.

**Pulling units** (DESIGN.md decision 6).  Device actors *pull* unit specs from the
``Coordinator`` (a ``fuzzfarm.orchestrate.scheduler.Scheduler`` behind a Ray actor, on the driver's
node, journaling every unit it issues): a slow device simply takes fewer, devices of one
fingerprint share one pool of units, and a lost device's units go back to its pool.  The
pipeline of one device actor, every stage overlapping the others:

    coordinator.lease -> UnitMaker actors (hypothesis recipes + vectorized sampler, a few
    units ahead, in their own processes; on a machine of fewer than 8 CPUs the actor
    generates its units itself) -> device (copy in, kernel, copy out, from pinned staging
    buffers; the next unit is enqueued before the previous one is collected) ->
    check_and_write tasks (as many pending as the cluster has CPUs, by default)

Inputs travel once: a maker puts them in Ray's object store, the actor reads them there
(zero-copy) to fill its staging buffers, and the check task gets the same object; the
outputs go from the staging buffers into the object store, once.  A sweep unit's inputs
are not stored at all: the kernel makes them from the global id and the check task makes
them again (``fuzzfarm.orchestrate.sweep.Space.inputs``).  Each check task writes its unit's findings
and then its stats row (atomically: ``fuzzfarm.store.dataset``) and then tells the coordinator the
unit is done; a unit whose stats file exists is never run again.

**Watching the device.**  The actor tells the coordinator which units are on its device
(submitted, not collected); the driver kills an actor whose oldest one stays there past the
campaign's ``unit.timeout`` (a hang), and a unit that crashes or hangs its device a second
time, run alone, becomes a device-fault finding (``fuzzfarm.orchestrate.scheduler``).

``work`` returns, with its totals, where the actor's time went (see ``DeviceActor.work``):
the first place to look for the bottleneck of a run.
"""
from __future__ import annotations

import os
import time
from collections import deque

import ray

__all__ = ["Coordinator", "DeviceActor", "UnitMaker", "check_and_write", "unit_from_spec",
           "warm_checker", "RESOURCE_PREFIX", "resource_name", "parse_resource",
           "local_resources", "cluster_devices", "describe_node"]

#: Prefix of the custom resource of an OpenCL device.
RESOURCE_PREFIX = "fuzzfarm_dev_"


def resource_name(fingerprint: str, i: int) -> str:
    """The Ray custom resource of the ``i``-th device of ``fingerprint`` on a node."""
    return f"{RESOURCE_PREFIX}{fingerprint}_{int(i)}"


def parse_resource(name: str) -> tuple[str, int] | None:
    """(fingerprint, i) of a device resource name, or None for another resource."""
    if not name.startswith(RESOURCE_PREFIX):
        return None
    fp, _, i = name[len(RESOURCE_PREFIX):].rpartition("_")
    return (fp, int(i)) if fp and i.isdigit() else None


def local_resources(devices, every=None) -> dict[str, float]:
    """{resource name: 1.0} for ``devices`` (DeviceInfo of this machine), numbering each
    device among the devices of its fingerprint in ``every`` (default ``devices``; give
    ``list_devices()`` when ``devices`` is a selection, so that the number is the one
    ``DeviceActor`` finds)."""
    every = list(devices) if every is None else list(every)
    out = {}
    for d in devices:
        same = [e for e in every if e.fingerprint == d.fingerprint]
        i = next((k for k, e in enumerate(same) if e.index == d.index), 0)
        out[resource_name(d.fingerprint, i)] = 1.0
    return out


def cluster_devices() -> list[tuple[str, str, str, int]]:
    """(node id, resource name, fingerprint, i) of every device resource of every live
    node of the connected cluster, in node order."""
    out = []
    for node in ray.nodes():
        if not node.get("Alive"):
            continue
        for name in sorted(node.get("Resources", {})):
            parsed = parse_resource(name)
            if parsed:
                out.append((node["NodeID"], name, *parsed))
    return out


@ray.remote(num_cpus=0)
def describe_node() -> list[dict]:
    """The DeviceInfo dicts (``to_dict``) of the OpenCL devices of the node it runs on."""
    from fuzzfarm.device.discovery import list_devices
    return [d.to_dict() for d in list_devices()]


def unit_from_spec(spec: dict):
    """The WorkUnit a coordinator spec describes (fuzzfarm.work.units.make_unit, or a
    fuzzfarm.orchestrate.sweep.SweepUnit for a sweep chunk), with the spec's unit id."""
    from dataclasses import replace

    from fuzzfarm.work.units import make_unit
    name, precision, width = spec["target"]
    if spec.get("sweep"):
        from fuzzfarm.orchestrate.sweep import SweepUnit
        sw = spec["sweep"]
        return SweepUnit(spec["unit_id"], name, sw["start"], sw["count"], (), False,
                         precision, 1)
    unit = make_unit(spec["pool"], (name, precision, width), spec["serial"], spec["seed"],
                     spec["per_recipe"], spec["recipes_per_unit"], spec.get("size"),
                     spec.get("replay", ()))
    return replace(unit, unit_id=spec["unit_id"])


@ray.remote(num_cpus=0)
class Coordinator:
    """A campaign's ``fuzzfarm.orchestrate.scheduler.Scheduler`` as a Ray actor, journaling to
    ``DIR/_campaign/<run_id>/journal.jsonl``.

    ``campaign``: ``Campaign.to_dict()``; ``pools``: {fingerprint: {"precisions": [...],
    "jobs": [job numbers]}}; ``devices``: {device key: fingerprint}; ``deadline``: a
    ``time.time()`` after which no new unit is issued (None: no time budget);
    ``resume``: replay the journal first (``Scheduler.restore``); ``per_recipe`` and
    ``recipes_per_unit``: see Scheduler."""

    def __init__(self, campaign: dict, pools: dict, devices: dict, out: str, run_id: str,
                 deadline: float | None, resume: bool = False, per_recipe: int = 8192,
                 recipes_per_unit: int = 4):
        from fuzzfarm.store import dataset as store
        from fuzzfarm.orchestrate.campaign import Campaign
        from fuzzfarm.orchestrate.scheduler import Scheduler, streams_for
        from fuzzfarm.work.units import UnitSizer
        c = Campaign.from_dict(campaign)
        streams = [s for fp, p in pools.items()
                   for s in streams_for(c, fp, p["precisions"], set(p["jobs"]))]
        path = store.campaign_dir(out, run_id) / "journal.jsonl"
        events = store.read_journal(path) if resume else []
        self.journal = store.Journal(path)
        sizer = None if c.unit_inputs else UnitSizer(c.unit_seconds, c.unit_min_inputs,
                                                     c.unit_max_inputs)
        self.s = Scheduler(streams, store.done_units(out, run_id), self.journal.append,
                           sizer, c.unit_inputs, deadline, c.input_budget, per_recipe,
                           recipes_per_unit, replay=_replays(out, streams))
        if events:
            self.s.restore(events)
        for key, fp in devices.items():
            self.s.add_device(key, fp)
        self.started = time.time()

    def lease(self, device: str):
        return self.s.lease(device)

    def on_device(self, device: str, unit_ids) -> None:
        self.s.on_device(device, unit_ids)

    def complete(self, unit_id: str, device: str, inputs: int = 0, failures: int = 0,
                 notes: int = 0, seconds: float = 0.0, target=None,
                 check_seconds: float | None = None) -> bool:
        return self.s.complete(unit_id, device, inputs, failures, notes, seconds, target,
                               check_seconds)

    def trim_journal(self) -> int:
        """Rewrite the journal to the scheduler's checkpoint (``Scheduler.checkpoint``):
        the units in flight, not every unit issued.  Returns its lines."""
        events = self.s.checkpoint()
        self.journal.rewrite(events)
        return len(events)

    def fault_done(self, unit_id: str) -> None:
        """A device fault's finding is written: journal it and count the unit done."""
        self.journal.append({"event": "fault", "unit_id": unit_id})
        self.s.complete(unit_id)

    def fault(self, unit_id: str, device: str, reason: str) -> bool:
        """A device recorded unit ``unit_id`` as a device fault of ``reason`` (its finding
        and stats row are written): journal it, count it done and a fault."""
        self.journal.append({"event": "fault", "unit_id": unit_id, "reason": reason})
        return self.s.record_fault(unit_id, device, reason)

    def withdraw(self, device: str, target, build_options: str) -> int:
        """No more units of ``target`` with ``build_options`` for ``device``'s pool."""
        return self.s.withdraw(self.s.devices[device].pool, target, build_options)

    def faults(self) -> list:
        """The specs recorded as device faults (with their ``fault`` reason)."""
        return list(self.s.faults)

    def lost(self, device: str, reason: str) -> list:
        return self.s.lost(device, reason)

    def revive(self, device: str) -> None:
        self.s.revive(device)

    def overdue(self, timeout: float) -> list:
        return self.s.overdue(timeout)

    def stop(self) -> None:
        self.s.stop()

    def finished(self) -> bool:
        """Every pool is finished."""
        return all(self.s.pool_finished(p) for p in {d.pool for d in self.s.devices.values()})

    def stranded(self) -> list:
        return self.s.stranded()

    def snapshot(self) -> dict:
        snap = self.s.snapshot()
        snap["elapsed"] = time.time() - self.started
        return snap


def _replays(out: str, streams) -> dict:
    """{(function, precision): input-bit tuples} saved by ``fuzzfarm repro`` in ``out``'s
    example database for the element-wise built-ins among ``streams``' targets."""
    from fuzzfarm.report.repro import db_dir, replay_examples
    from fuzzfarm.store.signatures import input_kinds
    path = db_dir(out)
    if not path.is_dir():
        return {}
    found = {}
    for fn, prec in {tuple(s.target[:2]) for s in streams if s.source != "sweep"}:
        if input_kinds(fn) is not None:
            examples = replay_examples(path, fn, prec)
            if examples:
                found[(fn, prec)] = examples
    return found


@ray.remote(num_cpus=1)
def check_and_write(unit, inputs, outputs, claims, device_meta, run_id, out, device_seconds,
                    build_options, coordinator, device_key, answer=None, made=None):
    """Check one unit, write its findings and then its stats row (atomically), then tell
    the coordinator it is done.  ``inputs``/``outputs`` arrive from the object store
    (zero-copy, read-only); ``inputs`` None: a sweep chunk, whose inputs are made here.
    ``answer``: the device screen's (oracle.device_screen.ScreenChunk), where the actor
    screened the chunk or unit on the device: only its candidates are judged here.
    ``made``: for a unit whose inputs the device made (fuzzfarm.device.generate), what its
    check needs (``fuzzfarm.work.units.made_handoff``; ``outputs`` and ``answer`` None); where they
    are not the host's the unit is recorded as a device fault (``integer_arithmetic``),
    not judged.  Returns its counts."""
    from fuzzfarm.store import dataset as store
    from fuzzfarm.work.units import check_unit, finding_table, stats_row

    t0 = time.perf_counter()
    if made is not None:        # made on the device: read where the verdict reads
        from fuzzfarm.work.units import InputsDisagree, check_made_unit, write_fault
        try:
            table, stats, result = check_made_unit(unit, made, claims, device_meta, run_id,
                                                   device_seconds, build_options)
        except InputsDisagree as exc:
            write_fault(out, run_id, unit, device_meta, build_options, "integer_arithmetic",
                        exc.detail())
            ray.get(coordinator.fault.remote(unit.unit_id, device_key, "integer_arithmetic"))
            return {"function": unit.function, "inputs": 0, "failures": 0, "notes": 0,
                    "unit_id": unit.unit_id, "check_seconds": 0.0,
                    "task_seconds": time.perf_counter() - t0, "device_seconds": device_seconds}
    elif inputs is None:        # a sweep chunk (fuzzfarm.orchestrate.sweep)
        from fuzzfarm.orchestrate.sweep import judge_chunk, space_for
        space = space_for(unit.function, unit.precision)
        start, count = unit.seed, unit.per_recipe
        result, inputs = judge_chunk(space, start, count, outputs, claims, answer)
        table = finding_table(result, unit, device_meta, run_id, build_options)
        stats = stats_row(result, unit, inputs, device_meta, run_id, device_seconds,
                          time.perf_counter() - t0, build_options,
                          by_class=space.class_counts(start, count))
    else:
        table, stats, result = check_unit(unit, inputs, outputs, claims, device_meta,
                                          run_id, device_seconds, build_options, table=True,
                                          answer=answer)
    store.write_findings_table(out, run_id, unit.unit_id, table)
    store.write_stats(out, run_id, unit.unit_id, stats)
    fails, notes = stats["failures"], stats["notes"]
    dt = time.perf_counter() - t0
    # awaited, not sent and forgotten: a task whose node dies after it returned but before
    # its call left the node lost the unit's completion, and its lease kept the pool open
    # for ever (the fault-tolerance test hung once in 36 runs).  Awaited, the node's death
    # fails the task instead, Ray runs it again and a duplicate completion is ignored.
    ray.get(coordinator.complete.remote(unit.unit_id, device_key, result.n, fails, notes,
                                        dt + device_seconds,
                                        (unit.function, unit.precision, unit.vector_width),
                                        dt))
    return {"function": unit.function, "inputs": result.n, "failures": fails, "notes": notes,
            "unit_id": unit.unit_id, "check_seconds": stats["check_seconds"],
            "task_seconds": dt, "device_seconds": device_seconds}


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
    fn = catalogue.function("sin")
    x = np.array([0x3F800000, 0x7FC00000, 0x00000001], dtype=np.uint32)
    check_batch(fn, {"x": x}, {"ret": x})
    return time.perf_counter() - t0


@ray.remote(num_cpus=0)
class UnitMaker:
    """Makes units ahead of a device actor in its own process: the hypothesis recipe draw
    (``make_unit``) and the vectorized expansion (``make_inputs``).  Its two results go to
    the object store: the unit (small) and its inputs (read zero-copy by the actor and by
    the check task)."""

    def warm(self) -> bool:
        """Import and exercise the generation path once (hypothesis's first draw is slow)."""
        from fuzzfarm.work.units import make_inputs, make_unit
        make_inputs(make_unit("warm", ("sin", "binary32", 1), 1, 0, 64, 1))
        return True

    @ray.method(num_returns=2)
    def make(self, spec: dict, on_device: bool = False):
        """(the unit, its inputs) or, with ``on_device`` where the device can make them,
        (the unit, its fuzzfarm.device.generate.UnitPlan)."""
        from fuzzfarm.device.generate import plan_or_none
        from fuzzfarm.work.units import make_inputs
        unit = unit_from_spec(spec)
        plan = plan_or_none(unit) if on_device else None
        return unit, make_inputs(unit) if plan is None else plan


class _Sweeping:
    """A sweep chunk being run (synchronously, the kernel making its inputs): the
    ``PendingRun`` interface over its outputs."""

    def __init__(self, kernel, start: int, count: int, screen=None):
        import numpy as np

        from fuzzfarm.device.kernels import buffer_dtype
        space = kernel.space
        self._out = {o.name: np.empty(count, buffer_dtype(o, space.fmt))
                     for o in space.fn.outputs}
        self.answer = None
        if screen is not None:      # screened on the device (oracle.device_screen)
            from fuzzfarm.oracle.device_screen import ScreenChunk
            self.answer = ScreenChunk.empty(count)
        self.device_seconds = kernel.run_into(start, count, self._out, screen, self.answer)

    def wait(self, copy: bool = True):
        return self._out


@ray.remote(num_cpus=0)
class DeviceActor:
    """Owns one OpenCL device: the ``i``-th of ``fingerprint`` on its node, its contexts
    (one ``DeviceRunner`` per build-options set), queues and compiled kernels; ``makers``
    UnitMaker actors generate its units ahead (0: generate in the actor itself).
    ``faults``: planted faults (``fuzzfarm.device.runner.FAULTS_ENV``), for tests.  Raises
    DeviceSelectionError when the node has no such device."""

    def __init__(self, fingerprint: str, i: int = 0, makers: int = 2,
                 faults: dict | None = None, screen: str = "auto", inputs: str = "auto"):
        from fuzzfarm.device.discovery import DeviceSelectionError, list_devices
        from fuzzfarm.formats import format_named
        mine = [d for d in list_devices() if d.fingerprint == fingerprint]
        if len(mine) <= i:
            raise DeviceSelectionError(f"this node has no device {i} of fingerprint "
                                       f"{fingerprint} ({len(mine)} found)")
        self.info = mine[i]
        self.precisions = tuple(p for p in ("binary16", "binary32", "binary64")
                                if self.info.supports(format_named(p)))
        self.runners: dict = {}
        self.claims: dict = {}      # build options -> {precision: Claims}
        self.sweeps: dict = {}
        self.screen = screen
        #: 'auto': drawn units of binary32 one-input built-ins screened on the device make
        #: their inputs on the device too (fuzzfarm.device.generate); 'host': every unit's
        #: inputs come from the host
        self.makes_inputs = inputs == "auto" and screen != "host"
        self.generators: dict = {}      # build options -> DeviceGenerator, or None
        #: (build options, target) -> (DeviceScreen or None, inputs it holds) for run units
        self.run_screens: dict = {}
        self.faults = faults or {}
        #: (build options, target) -> the KernelBuildError of a kernel that did not build
        self.unbuildable: dict = {}
        #: (build options, target) whose fault is recorded: later units are skipped
        self.withdrawn: set = set()
        self.enqueue_errors: dict = {}      # (build options, target) -> errors so far
        # started now, so their processes start and warm up while the kernels build (a
        # make() call queues behind the warm-up on the same actor)
        self.makers = [UnitMaker.remote() for _ in range(max(0, int(makers)))]
        for m in self.makers:
            m.warm.remote()

    def _runner(self, build_options: str):
        if build_options not in self.runners:
            from fuzzfarm.verdict.claims import Claims
            from fuzzfarm.device.runner import DeviceRunner
            r = DeviceRunner(self.info, build_options)
            r.planted_build = tuple(self.faults.get("build", ()))  # the driver's plants
            consts = r.device_constants()
            self.runners[build_options] = r
            self.claims[build_options] = Claims.by_precision(self.info, consts,
                                                             build_options)
        return self.runners[build_options]

    def _generator(self, build_options: str):
        """The input generator on this device for ``build_options``, or None where it does
        not build (the host makes the inputs then)."""
        if build_options not in self.generators:
            from fuzzfarm.device.generate import DeviceGenerator
            from fuzzfarm.device.runner import KernelBuildError
            try:
                self.generators[build_options] = DeviceGenerator(self._runner(build_options))
            except KernelBuildError:
                self.generators[build_options] = None
        return self.generators[build_options]

    def _device_screen(self, runner, unit, spec, count: int):
        """The oracle.device_screen.DeviceScreen of a sweep's chunks, or None to screen
        them on the host (where ``fuzzfarm sweep`` would: fuzzfarm.orchestrate.sweep)."""
        from fuzzfarm.device.runner import KernelBuildError
        from fuzzfarm.oracle.device_screen import screen_for
        claims = self.claims[spec["build_options"]][unit.precision]
        try:
            return screen_for(runner, unit.function, unit.precision, claims, count)[0]
        except KernelBuildError:        # `fuzzfarm sweep` records it; here: the host's
            return None

    def _run_screen(self, runner, spec: dict, unit, inputs):
        """The DeviceScreen of a drawn unit (``fuzzfarm run``), or None to check it on the
        host: binary32 built-ins with a device reference (oracle.device_screen.screen_for),
        unless the session asked for the host's screen."""
        if self.screen == "host" or unit.target.kind != "elementwise" or inputs is None:
            return None
        fn = unit.target.fn
        if [a.name for a in fn.inputs] != ["x"] or [o.name for o in fn.outputs] != ["ret"]:
            return None
        n = inputs.n if hasattr(inputs, "parts") else len(inputs["x"])
        key = (spec["build_options"], unit.function, unit.precision)
        screen, size = self.run_screens.get(key, (None, -1))
        if size >= n:
            return screen
        size = max(n, 1 << 21)
        screen = self._device_screen(runner, unit, spec, size)
        self.run_screens[key] = (screen, size)
        return screen

    def _makes(self, spec: dict, unit, plan) -> bool:
        """Whether this device makes ``unit``'s inputs from ``plan``: its generator and
        the unit's device screen are built (the check of a unit made on the device reads
        only the screen's candidates)."""
        try:
            bo = spec["build_options"]
            return (self._generator(bo) is not None and
                    self._run_screen(self._runner(bo), spec, unit, plan) is not None)
        except Exception:           # noqa: BLE001 - the host makes them; _submit records
            return False            # what the device does wrong

    def describe(self) -> dict:
        return self.info.to_dict()

    def pid(self) -> int:
        return os.getpid()

    def constants(self) -> dict:
        """The device's FP_ILOGB0 and FP_ILOGBNAN (for `fuzzfarm verify`)."""
        return self._runner("").device_constants()

    def prepare(self, targets_by_options: dict) -> float:
        """Compile every target's kernel up front, one program per (build options,
        precision, width): ``targets_by_options`` is {build options: [(name, precision,
        width), ...]}; returns seconds spent.  Targets in a precision the device lacks
        are skipped."""
        from fuzzfarm.target import Target
        from fuzzfarm.work.units import prepare_targets
        t0 = time.perf_counter()
        for bo, targets in targets_by_options.items():
            failed = prepare_targets(self._runner(bo), [
                Target.of(t) for t in targets
                if Target.of(t).required_precisions <= set(self.precisions)])
            for target, exc in failed.items():   # recorded when a unit of it comes up
                self.unbuildable[(bo, tuple(target))] = exc
        return time.perf_counter() - t0

    def work(self, coordinator, key: str, run_id: str, out: str, max_in_flight: int = 2,
             prefetch: int | None = None, profile_dir: str | None = None) -> dict:
        """Pull units as device ``key`` until the coordinator has none; returns totals.

        Up to ``prefetch`` units (default: makers + 1) are being generated ahead; the next
        unit is enqueued on the device before the previous one's outputs are collected and
        handed to a check task; at most ``max_in_flight`` check tasks are pending.  A unit
        to be run isolated (a retry after a crash or hang) runs alone on the device.
        Every unit leased is run, checked and written before this returns.

        The totals also say where this actor's time went (``actor_seconds``: waiting for
        the coordinator, for generated units, for the device, for a free check slot, and
        its own copying and submitting) and sum the check tasks' times; with
        ``profile_dir`` the loop runs under cProfile and its statistics are written there
        (``actor-<fingerprint>.prof`` and ``.txt``)."""
        if not profile_dir:
            return self._work(coordinator, key, run_id, out, max_in_flight, prefetch)
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        try:
            return self._work(coordinator, key, run_id, out, max_in_flight, prefetch)
        finally:
            prof.disable()
            os.makedirs(profile_dir, exist_ok=True)
            base = os.path.join(profile_dir, f"actor-{self.info.fingerprint}")
            prof.dump_stats(base + ".prof")
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(40)
            with open(base + ".txt", "w") as fh:
                fh.write(text.getvalue())

    def _unit_fault(self, coordinator, key: str, run_id: str, out: str, spec: dict, unit,
                    exc: BaseException) -> None:
        """Record ``unit`` as a device fault (``exc``: a KernelBuildError or an OpenCL
        error; ``_Withdrawn`` for a unit of a target already recorded, which is skipped
        with a stats row only), mark it done, and withdraw its target from this pool when
        it cannot run here (a build failure; a second enqueue error)."""
        from fuzzfarm.store import dataset as store
        from fuzzfarm.work.units import fault_rows, unit_kernel_source, write_fault
        bo = spec["build_options"]
        tkey = (bo, tuple(spec["target"]))
        meta = self.info.columns(unit.precision)
        if isinstance(exc, _Withdrawn):
            _, stats = fault_rows(unit, meta, run_id, bo, "build_failure")
            store.write_stats(out, run_id, unit.unit_id, stats)
            ray.get(coordinator.complete.remote(unit.unit_id, key))
            return
        reason = fault_reason(exc)
        if reason == "build_failure":
            detail = exc.detail()
        else:
            from fuzzfarm.device.runner import enqueue_error_detail
            detail = enqueue_error_detail(
                exc, unit_kernel_source(unit, bool(spec.get("sweep"))), bo)
            # the context may be unusable after an error: the next unit gets a fresh one
            self.runners.pop(bo, None)
            self.generators.pop(bo, None)
            self.sweeps = {k: v for k, v in self.sweeps.items() if k[0] != bo}
            self.run_screens = {k: v for k, v in self.run_screens.items() if k[0] != bo}
        write_fault(out, run_id, unit, meta, bo, reason, detail)
        ray.get(coordinator.fault.remote(unit.unit_id, key, reason))
        self.enqueue_errors[tkey] = self.enqueue_errors.get(tkey, 0) + (
            reason == "enqueue_error")
        if reason == "build_failure" or self.enqueue_errors[tkey] >= 2:
            self.withdrawn.add(tkey)
            ray.get(coordinator.withdraw.remote(key, list(spec["target"]), bo))

    def _plant(self, coordinator, key: str, unit_id: str, on_device: list) -> None:
        """The planted fault of ``unit_id``, if any (fuzzfarm.device.runner.FAULTS_ENV)."""
        crash = any(s in unit_id for s in self.faults.get("crash", ()))
        hang = any(s in unit_id for s in self.faults.get("hang", ()))
        if crash or hang:
            ray.get(coordinator.on_device.remote(key, on_device))   # known before it dies
            if crash:
                import signal
                os.kill(os.getpid(), signal.SIGKILL)
            while True:
                time.sleep(3600)

    def _submit(self, spec: dict, unit, inputs):
        from fuzzfarm.work.units import submit_unit
        tkey = (spec["build_options"], tuple(spec["target"]))
        if tkey in self.unbuildable:
            raise self.unbuildable[tkey]
        runner = self._runner(spec["build_options"])
        if any(s in unit.unit_id for s in self.faults.get("enqueue", ())):
            _planted_enqueue_error(runner)
        if spec.get("sweep"):
            from fuzzfarm.orchestrate.sweep import SweepKernel, space_for
            sw = spec["sweep"]
            k = (spec["build_options"], unit.function, unit.precision)
            if k not in self.sweeps or self.sweeps[k][1] < sw["count"]:
                space = space_for(unit.function, unit.precision)
                self.sweeps[k] = (SweepKernel(runner, space, sw["count"]), sw["count"],
                                  self._device_screen(runner, unit, spec, sw["count"]))
            kernel, _, screen = self.sweeps[k]
            return _Sweeping(kernel, sw["start"], sw["count"], screen)
        screen = self._run_screen(runner, spec, unit, inputs)
        if hasattr(inputs, "parts"):        # a UnitPlan: made on the device (``_makes``)
            return submit_unit(runner, unit, None, screen,
                               (self._generator(spec["build_options"]), inputs))
        return submit_unit(runner, unit, inputs, screen)

    def _work(self, coordinator, key, run_id, out, max_in_flight, prefetch) -> dict:
        from fuzzfarm.work.units import make_inputs
        fp = self.info.fingerprint
        ahead = max(1, int(prefetch) if prefetch else len(self.makers) + 1)
        max_in_flight = max(1, int(max_in_flight))
        made: deque = deque()   # (spec, unit ref, inputs ref) or (spec, None, None)
        exhausted = False
        turn = 0
        checks: list = []
        totals = {"units": 0, "inputs": 0, "failures": 0, "notes": 0, "issued": 0,
                  "made_on_device": 0,
                  "check_seconds": 0.0, "task_seconds": 0.0, "device_seconds": 0.0,
                  "makers": len(self.makers), "in_flight": max_in_flight, "device": key,
                  "fingerprint": fp}
        spent = dict.fromkeys(("coordinator", "generate", "submit", "device_wait",
                               "hand_off", "check_slot_wait", "idle"), 0.0)
        clock = time.perf_counter
        asked = coordinator.lease.remote(key)       # always one ask ahead
        retry_at = 0.0                              # the pool said "wait" until then
        device: list = []                           # unit ids on the device, in order

        def refill():
            nonlocal exhausted, turn, asked, retry_at
            while not exhausted and len(made) < ahead:
                if asked is None:
                    if clock() < retry_at:
                        return
                    asked = coordinator.lease.remote(key)
                t = clock()
                spec = ray.get(asked)
                spent["coordinator"] += clock() - t
                if spec is None:
                    exhausted = True
                    return
                if "wait" in spec:
                    asked, retry_at = None, clock() + float(spec["wait"])
                    return
                asked = coordinator.lease.remote(key)
                totals["issued"] += 1
                if self.makers and not spec.get("sweep"):
                    m = self.makers[turn % len(self.makers)]
                    made.append((spec, *m.make.remote(spec, self.makes_inputs)))
                    turn += 1
                else:
                    made.append((spec, None, None))
                if spec.get("isolate"):
                    return          # nothing queued behind a unit that must run alone

        def take():
            t = clock()
            spec, unit_ref, ref = made.popleft()
            if spec.get("sweep"):
                unit, inputs, ref = unit_from_spec(spec), None, None
            elif unit_ref is None:                  # generated here
                unit = unit_from_spec(spec)
                from fuzzfarm.device.generate import plan_or_none
                inputs = plan_or_none(unit) if self.makes_inputs else None
                if inputs is None:
                    inputs = make_inputs(unit)
                    ref = ray.put(inputs)
            else:                                   # generated by a maker: wait for it
                unit, inputs = ray.get([unit_ref, ref])
            if hasattr(inputs, "parts"):            # a UnitPlan: the device makes them
                ref = None
                if not self._makes(spec, unit, inputs):
                    inputs = make_inputs(unit)
                    ref = ray.put(inputs)
            spent["generate"] += clock() - t
            return spec, unit, inputs, ref

        def collect(spec, unit, inputs_ref, pending):
            t = clock()
            try:
                outputs = pending.wait(copy=False)  # staging views, copied by ray.put below
            except Exception as exc:                # noqa: BLE001 - sorted by fault_reason
                if fault_reason(exc) is None:
                    raise
                device.remove(unit.unit_id)
                coordinator.on_device.remote(key, list(device))
                self._unit_fault(coordinator, key, run_id, out, spec, unit, exc)
                return
            device.remove(unit.unit_id)
            coordinator.on_device.remote(key, list(device))
            t1 = clock()
            spent["device_wait"] += t1 - t
            bo = spec["build_options"]
            # a conversion may touch two formats: it gets the claims of every one
            claims = (self.claims[bo] if unit.target.is_conversion
                      else self.claims[bo][unit.precision])
            answer = getattr(pending, "answer", None)
            made = None
            if hasattr(pending, "made_inputs"):     # made on the device, in plain memory
                from fuzzfarm.work.units import made_handoff
                made, outputs, answer = made_handoff(pending, put=ray.put), None, None
            elif answer is not None and isinstance(pending, _Sweeping):
                # a sweep chunk (2**24 results in plain memory): only the results the
                # check may read.  Not a run unit's: its outputs are views of mapped
                # staging memory, where a scattered gather took the H100 run from 95 to
                # 6 M/s (RESULTS.md)
                from fuzzfarm.verdict.screened import SparseOutputs
                n = len(next(iter(outputs.values())))
                outputs = SparseOutputs.of(outputs, answer, n)
            checks.append(check_and_write.remote(
                unit, inputs_ref, None if outputs is None else ray.put(outputs), claims,
                self.info.columns(unit.precision),
                run_id, out, float(pending.device_seconds), bo, coordinator, key,
                answer=None if answer is None else ray.put(answer), made=made))
            totals["made_on_device"] += made is not None
            t2 = clock()
            spent["hand_off"] += t2 - t1
            while len(checks) >= max_in_flight:
                done, rest = ray.wait(checks, num_returns=1)
                checks[:] = rest
                _add(totals, ray.get(done[0]))
            spent["check_slot_wait"] += clock() - t2

        t_start = clock()
        on_device = None                # (spec, unit, inputs ref, pending run)
        while True:
            refill()
            nxt = None
            if made:
                if made[0][0].get("isolate") and on_device is not None:
                    collect(*on_device)             # drain the device first
                    on_device = None
                spec, unit, inputs, inputs_ref = take()
                t = clock()
                device.append(unit.unit_id)
                coordinator.on_device.remote(key, list(device))
                if self.faults:
                    self._plant(coordinator, key, unit.unit_id, list(device))
                try:
                    if (spec["build_options"], tuple(spec["target"])) in self.withdrawn:
                        raise _Withdrawn()
                    nxt = (spec, unit, inputs_ref, self._submit(spec, unit, inputs))
                except Exception as exc:            # noqa: BLE001 - sorted by fault_reason
                    if not isinstance(exc, _Withdrawn) and fault_reason(exc) is None:
                        raise
                    device.remove(unit.unit_id)
                    coordinator.on_device.remote(key, list(device))
                    self._unit_fault(coordinator, key, run_id, out, spec, unit, exc)
                spent["submit"] += clock() - t
                del inputs
                if nxt is not None and spec.get("isolate"):
                    collect(*nxt)                   # alone on the device
                    nxt = None
                refill()                 # the makers work while the device does
            if on_device is not None:
                collect(*on_device)
            on_device = nxt
            if on_device is None and not made:
                if exhausted:
                    break
                t = clock()
                if checks:          # reap while the pool has nothing for now
                    done, rest = ray.wait(checks, num_returns=1,
                                          timeout=max(0.0, retry_at - clock()))
                    checks[:] = rest
                    for ref in done:
                        _add(totals, ray.get(ref))
                else:
                    time.sleep(max(0.0, min(1.0, retry_at - clock())))
                spent["idle"] += clock() - t
        t = clock()
        for ref in checks:
            _add(totals, ray.get(ref))
        spent["check_slot_wait"] += clock() - t
        totals["actor_seconds"] = {k: round(v, 3) for k, v in spent.items()}
        totals["actor_seconds"]["total"] = round(clock() - t_start, 3)
        return totals


class _Withdrawn(Exception):
    """A unit of a target whose device fault is recorded: skipped."""


def _planted_enqueue_error(runner) -> None:
    """A real enqueue error from the driver (tests: fuzzfarm.device.runner.FAULTS_ENV
    "enqueue"): a kernel launched with its argument unset (CL_INVALID_KERNEL_ARGS)."""
    import pyopencl as cl
    prg = cl.Program(runner.context, "__kernel void planted(__global int *a) { a[0] = 1; }")
    cl.enqueue_nd_range_kernel(runner.queue, cl.Kernel(prg.build(), "planted"), (1,), None)


def fault_reason(exc: BaseException) -> str | None:
    """The device-fault kind of an exception raised running a unit: 'build_failure' (a
    KernelBuildError), 'enqueue_error' (an OpenCL error from the driver), or None for
    anything else (a bug of fuzzfarm: not the device's)."""
    from fuzzfarm.device.runner import KernelBuildError
    if isinstance(exc, KernelBuildError):
        return "build_failure"
    import pyopencl as cl
    if isinstance(exc, cl.Error):
        return "enqueue_error"
    return None


def _add(totals: dict, r: dict) -> None:
    totals["units"] += 1
    for k in ("inputs", "failures", "notes"):
        totals[k] += r[k]
    for k in ("check_seconds", "task_seconds", "device_seconds"):
        totals[k] = round(totals.get(k, 0.0) + float(r.get(k) or 0.0), 6)
