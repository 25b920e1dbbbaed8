"""One device's side of the pipeline: launch a unit on the device and land what its check
needs.

A ``DeviceSession`` owns, for one OpenCL device, a ``DeviceRunner`` (context, queue, built
kernels) per build-options set with the device's claims, and what it builds on demand: the
device screens of the built-ins with a device reference (``fuzzfarm.oracle.device_screen``),
the input generator (``fuzzfarm.device.generate``) and the sweep kernels of range units
(``fuzzfarm.device.sweep_kernel``).  A unit takes one of three routes:

* **range** (``IndexRange``): the sweep kernel makes the inputs from their numbers; the
  results (and the screen's answer) land in host memory the executor gives (a shared-memory
  slot: ``Slot``) or in fresh arrays, cut to the positions the verdict may read where the
  executor asks for that (``sparse``);
* **made** (a drawn binary32 or binary64 unit of a built-in of one to three float
  arguments the device screens, or a conversion's counter-based unit): the device makes
  the inputs from the recipe's plan,
  runs the kernel, screens the results and gathers the rows the verdict may read; only
  those come back (``MadeRows``; the kind's ``launch_made``, ``land_made``);
* **host** (everything else): the inputs the host made are copied in and every result
  copied back (screened on the device where it can be).

``launch`` enqueues and returns at once; ``land`` waits and returns a ``Landed``
(``fuzzfarm.work.check``) whose arrays stay valid until the launch is ``release``d, after the
executor has moved them on.  Screen choice lives here and only here (``screen``).  Errors
from the driver (``pyopencl.Error``, ``KernelBuildError``) propagate: the pipeline records
them as device faults (``fuzzfarm.device.commands.fault_reason``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from fuzzfarm.errors import BadInput
from fuzzfarm.formats import format_named
from fuzzfarm.target import CONSTANTS_DOORS, Target
from fuzzfarm.work.check import Landed
from fuzzfarm.work.kinds import kind_of
from fuzzfarm.work.unit import Drawn, IndexRange, WorkUnit

__all__ = ["DeviceSession", "Slot", "Launch", "ScreenUnavailable", "SCREENS", "INPUTS",
           "prepare_inputs", "is_device_plan", "run_unit", "precisions_of", "capabilities_of",
           "kernel_programs"]

#: Where results are screened: 'auto' (on the device where a device reference applies,
#: else on the host), 'device' (ScreenUnavailable where it cannot), 'host'.
SCREENS = ("auto", "device", "host")
#: Where a drawn unit's inputs are made: 'auto' (on the device where it can), 'host'.
INPUTS = ("auto", "host")

#: The smallest device screen a drawn unit gets (it serves every unit up to its size).
MIN_SCREEN_INPUTS = 1 << 21


class ScreenUnavailable(BadInput):
    """``screen='device'`` for a unit the device screen cannot judge (one line, why)."""


@dataclass
class Slot:
    """Host memory an executor lands a unit's results in: ``memory`` (a writable buffer,
    e.g. an mmap shared with a checking process) for up to ``capacity`` inputs of a
    range unit, ``index`` naming it (the session keeps the OpenCL buffers made over it)."""

    index: int
    memory: object
    capacity: int


@dataclass
class Launch:
    """A unit enqueued on the device (``DeviceSession.launch``): its route, the pending
    run (a device.runner.PendingRun or a device.sweep_kernel.Launch), and what landing
    it needs.  ``release`` after the executor has taken its Landed."""

    unit: WorkUnit
    route: str
    pending: object
    inputs: dict | None = None
    answer: object = None
    landing: object = None
    sweep: object = None
    tally: object = None            # a made unit's class counts (generate.tally's input)
    other: object = None            # a compare unit's run through its other front end
    started: float = field(default_factory=time.perf_counter)

    def release(self) -> None:
        """Give the launch's pinned landing memory back for a later unit."""
        if self.landing is not None:
            self.landing.release()
            self.landing = None


def precisions_of(info) -> tuple:
    """The precisions device ``info`` (a DeviceInfo) computes in: binary32, and binary16
    with cl_khr_fp16, binary64 with cl_khr_fp64, in that order of width."""
    return tuple(p for p in ("binary16", "binary32", "binary64")
                 if info.supports(format_named(p)))


def capabilities_of(info) -> tuple:
    """What device ``info`` can run targets in (``Target.requirements``): its precisions
    (``precisions_of``), and 'spirv' where it consumes SPIR-V modules
    (CL_DEVICE_IL_VERSION)."""
    return precisions_of(info) + (("spirv",) if info.spirv_versions else ())


def prepare_inputs(unit: WorkUnit, on_device: bool):
    """(``unit`` with its recipes drawn, its inputs) for a launch: None for a range (made
    on the device from their numbers), the device plan (generate.UnitPlan) where
    ``on_device`` and the device can make them, else the inputs the host makes
    (work.make.make_inputs; always for a compare unit, whose inputs go through two
    kernels).  What a unit maker does, in whatever process it runs."""
    from fuzzfarm.work.make import draw, make_inputs
    unit = draw(unit)
    if isinstance(unit.source, IndexRange):
        return unit, None
    if on_device and isinstance(unit.source, Drawn) and unit.against is None:
        plan = kind_of(unit.target).device_plan(unit.target, unit.source)
        if plan is not None:
            return unit, plan
    return unit, make_inputs(unit)


def is_device_plan(inputs) -> bool:
    """Whether ``inputs`` (what ``prepare_inputs`` gave) is a device plan: neither None (a
    range) nor the host's inputs (a dict of arrays)."""
    return inputs is not None and not isinstance(inputs, dict)


def run_unit(runner, unit: WorkUnit, inputs: dict) -> dict:
    """Run the kernel of ``unit``'s target on ``runner`` (a DeviceRunner) over ``inputs``
    (host-made, as make_inputs gives them) and wait; the outputs by name (fresh arrays)."""
    target = unit.target
    return kind_of(target).run(runner, target, inputs)


def kernel_programs(targets_by_options: dict, capabilities) -> dict:
    """How ``DeviceSession.prepare_kernels`` groups targets into kernel programs:
    {build options: {(shared, key): [Target, ...]}}, where a shared program holds the
    built-ins of one (precision, width, front end) (``key``; ``shared`` True) and a kind
    that builds its own programs (conversions, ...) gets its targets as one entry (``key``
    its kind's name, ``shared`` False).  Targets whose requirements are not all in
    ``capabilities`` (``capabilities_of``: precisions, 'spirv') are left out; order and
    repeats are kept, since a program's text depends on its list: a process that builds a
    part of the groups (a warm-up helper) passes whole groups back to ``prepare_kernels``
    and makes the same programs."""
    have = set(capabilities)
    out: dict = {}
    for bo, targets in targets_by_options.items():
        groups = out.setdefault(bo, {})
        for t in map(Target.of, targets):
            if not t.requirements <= have:
                continue
            shared = kind_of(t).builds_with_others()
            key = (t.precision, t.width, t.front_end) if shared else kind_of(t).name
            groups.setdefault((shared, key), []).append(t)
    return out


class DeviceSession:
    """The device side of the pipeline for device ``info`` (a DeviceInfo; module
    docstring).  ``screen``: one of SCREENS; ``inputs``: one of INPUTS; ``plants``: planted
    faults (device.runner.planted_faults, tests); ``runners``: a dict {build options:
    DeviceRunner} the session takes its runners from and adds to, kept by its caller
    across sessions (a resident process, orchestrate.resident: contexts and built programs
    outlive a session; what a session found, its faults and choices, does not).  Raises
    DeviceSelectionError where the device is gone."""

    def __init__(self, info, screen: str = "auto", inputs: str = "auto",
                 plants: dict | None = None, runners: dict | None = None):
        if screen not in SCREENS:
            raise ScreenUnavailable(f"screen={screen!r} is unknown; use one of "
                                    f"{', '.join(SCREENS)}")
        self.info = info
        self.screen_mode = screen
        self.makes_inputs = inputs == "auto" and screen != "host"
        self.plants = plants or {}
        self.precisions = precisions_of(info)
        self.capabilities = capabilities_of(info)
        self._runners: dict = {} if runners is None else runners
        self._claims: dict = {}         # build options -> {precision: Claims}
        self._generators: dict = {}     # (build options, kind, format) -> generator or None
        self._screens: dict = {}        # (bo, name, precision, front end) -> (screen|None, size)
        self._sweeps: dict = {}         # (bo, name, precision, front end) -> SweepKernel
        self._hosts: dict = {}          # (bo, slot index) -> HostSlot or None
        self._lane = 0
        #: (build options, target) -> the KernelBuildError of a kernel that did not build
        self.unbuildable: dict = {}
        #: (unit, KernelBuildError) of device screens that did not build: device faults
        #: the pipeline records (each screen once); the host screens those units instead
        self.screen_faults: list = []
        #: what the session chose, for a report: {(bo, name, precision): 'device'|reason}
        self.screen_choices: dict = {}

    # ------------------------------------------------------------------ the device
    def runner(self, build_options: str = ""):
        """The DeviceRunner for ``build_options`` (made at first use, with the claims)."""
        if build_options not in self._claims or build_options not in self._runners:
            from fuzzfarm.device.runner import DeviceRunner
            from fuzzfarm.verdict.claims import Claims
            r = self._runners.get(build_options) or DeviceRunner(self.info, build_options)
            r.planted_build = tuple(self.plants.get("build", ()))
            self._claims[build_options] = Claims.by_precision(self.info, r.device_constants(),
                                                              build_options)
            self._runners[build_options] = r
        return self._runners[build_options]

    def claims(self, unit: WorkUnit):
        """What ``unit`` is judged under (its kind's choice of the device's claims)."""
        self.runner(unit.build_options)
        return kind_of(unit.target).claims(self._claims[unit.build_options], unit.target)

    def claims_by_precision(self, build_options: str = "") -> dict:
        """{precision: Claims} of the device under ``build_options``."""
        self.runner(build_options)
        return self._claims[build_options]

    def device_constants(self) -> dict:
        """The device's FP_ILOGB0 and FP_ILOGBNAN."""
        return self.runner("").device_constants()

    def reset(self, build_options: str) -> None:
        """Forget the context of ``build_options`` and what was built on it (after an
        OpenCL error it may be unusable): the next unit gets a fresh one.  The old
        context's idle memory is released now, not at the garbage collector's next pass
        (a device whose memory ran out cannot hold two)."""
        import gc
        old = self._runners.pop(build_options, None)
        if old is not None:
            old.release_idle()
        for k in [k for k in self._generators if k[0] == build_options]:
            del self._generators[k]
        for cache in (self._screens, self._sweeps, self._hosts):
            for k in [k for k in cache if k[0] == build_options]:
                del cache[k]
        del old
        gc.collect()

    def prepare(self, targets_by_options: dict, on_built=None) -> float:
        """Build every target's kernel up front (``prepare_kernels``) and the targets'
        device screens, several at once (``prepare_screens``; ``on_built(name,
        precision)`` as each screen is done).  Returns the seconds spent."""
        t0 = time.perf_counter()
        for bo, targets in self.prepare_kernels(targets_by_options).items():
            self.prepare_screens(bo, targets, on_built=on_built)
        return time.perf_counter() - t0

    def prepare_kernels(self, targets_by_options: dict) -> dict:
        """Build every target's kernel, one program per (build options, precision, width)
        (``targets_by_options``: {build options: [Target, ...]}; the program's text
        depends on the whole list, so a process that is to find another's programs in the
        driver's cache gives the same list); targets in a precision the device lacks are
        skipped.  A kernel that does not build is kept in ``unbuildable`` and raised when
        a unit of it is launched.  Returns {build options: [the built-ins of those
        programs]}, whose device screens ``prepare_screens`` builds."""
        from fuzzfarm.device.runner import KernelBuildError
        screened: dict = {}
        for bo, groups in kernel_programs(targets_by_options, self.capabilities).items():
            runner = self.runner(bo)
            for (shared, key), ts in groups.items():
                if not shared:
                    kind_of(ts[0]).prepare_own(runner, ts)
                    continue
                precision, width, front_end = key
                try:
                    runner.prepare([t.fn for t in ts], format_named(precision), width,
                                   front_end)
                except KernelBuildError as exc:
                    for t in ts:
                        if t.name in exc.failed or (not exc.failed and len(ts) == 1):
                            self.unbuildable[(bo, t)] = exc.failed.get(t.name, exc)
            screened[bo] = [t for (shared, _), ts in groups.items() if shared for t in ts]
        return screened

    def prepare_screens(self, build_options: str, targets: list, threads: int | None = None,
                        on_built=None) -> int:
        """Build the device screens of ``targets`` (built-ins; those ``screen`` would
        choose a device screen for) on ``threads`` threads at once (default: on a GPU
        (``DeviceInfo.is_gpu``) the host's cores, at most 8, so a run's first units do not
        wait for NVIDIA's compiler one screen at a time; elsewhere one -- a CPU device's compiler has the host's cores
        already, and Oclgrind 21.10 crashes when two programs build at once).  Screens that
        do not build are left to ``screen``, which records the fault when a unit needs
        them; ``on_built(name, precision)`` is called as each is done.  Returns how many
        programs were built."""
        import os

        from fuzzfarm.oracle.device_screen import build_screens, screen_key
        if self.screen_mode == "host":
            return 0
        runner = self.runner(build_options)
        keys = set()
        for t in targets:
            if kind_of(t).device_screened(t) and t.precision in ("binary32", "binary64"):
                claims = kind_of(t).claims(self._claims[build_options], t)
                key = screen_key(runner, t.name, t.precision, claims)
                if key is not None:
                    keys.add(key)
        threads = threads or (min(8, os.cpu_count() or 1) if self.info.is_gpu else 1)
        return build_screens(runner, sorted(keys), threads, on_built)

    # ------------------------------------------------------------------ choices
    def screen(self, unit: WorkUnit, size: int):
        """The device screen for ``unit`` (``size`` inputs), or None to screen on the
        host: the one place this is decided (module docstring).  A screen the device
        fails to build is a device fault (``screen_faults``), and the host screens.
        Raises ScreenUnavailable under screen='device' where none applies."""
        from fuzzfarm.device.runner import KernelBuildError
        t = unit.target
        key = (unit.build_options, t.name, t.precision)
        if self.screen_mode == "host" or not kind_of(t).device_screened(t):
            return self._no_screen(key, "host" if self.screen_mode == "host" else
                                   f"{t.name} does not fit the device screen")
        if isinstance(unit.source, IndexRange) and t.precision != "binary32":
            # the screen recomputes a range's inputs from their numbers in binary32 only
            return self._no_screen(key, f"no device screen for a {t.precision} range")
        # a conversion's screen decides by its front end's texts: one per front end
        cached = key + (t.front_end,)
        screen, have = self._screens.get(cached, (None, -1))
        if have >= size:
            return screen
        if have == 0:               # failed to build, or none applies: never again
            return self._no_screen(key, self.screen_choices.get(key, ""))
        runner = self.runner(unit.build_options)
        # a drawn unit's screen: a power of two of inputs, so that a catalogue's screens
        # share a few sizes of scratch and landing memory (oracle.device_screen._scratch)
        cap = size if isinstance(unit.source, IndexRange) else \
            max(1 << (int(size) - 1).bit_length(), MIN_SCREEN_INPUTS)
        try:
            screen, why = kind_of(t).device_screen(runner, t, self.claims(unit), cap)
        except KernelBuildError as exc:
            self.screen_faults.append((unit, exc))
            screen, why = None, f"the device screen did not build ({str(exc).splitlines()[0]})"
        self._screens[cached] = (screen, cap if screen is not None else 0)
        if screen is None:
            return self._no_screen(key, why)
        self.screen_choices[key] = "device"
        return screen

    def _no_screen(self, key, why: str):
        self.screen_choices.setdefault(key, f"host: {why}" if why != "host" else "host")
        if self.screen_mode == "device":
            raise ScreenUnavailable(f"--screen device: {why}")
        return None

    def _generator(self, build_options: str, target: Target):
        """The input generator of ``target``'s kind (for its format, where the kind's
        generator depends on it: ``generator_format``) for ``build_options``, or None where
        it does not build."""
        kind = kind_of(target)
        fmt = kind.generator_format(target)
        key = (build_options, kind.name, fmt)
        if key not in self._generators:
            from fuzzfarm.device.runner import KernelBuildError
            try:
                self._generators[key] = kind.make_generator(self.runner(build_options), fmt)
            except KernelBuildError:
                self._generators[key] = None
        return self._generators[key]

    def makes(self, unit: WorkUnit, plan) -> bool:
        """Whether the device makes ``unit``'s inputs from ``plan`` (its kind's
        ``device_plan``): its generator and the unit's device screen are built (the check
        of such a unit reads only what the screen leaves to the host)."""
        if not self.makes_inputs:
            return False
        try:
            return (self._generator(unit.build_options, unit.target) is not None
                    and self.screen(unit, plan.n) is not None)
        except Exception:           # noqa: BLE001 - the host makes them; launch records
            return False            # what the device does wrong

    # ------------------------------------------------------------------ launching
    def launch(self, unit: WorkUnit, inputs, slot: Slot | None = None) -> Launch:
        """Enqueue ``unit`` (its recipes drawn) on the device and return at once.
        ``inputs``: None for a range, a generate.UnitPlan for inputs the device makes
        (``makes`` said yes), else the host's inputs; ``slot``: where a range's results
        land (None: fresh arrays).  Raises KernelBuildError or pyopencl.Error from the
        driver."""
        key = (unit.build_options, unit.target)
        if key in self.unbuildable:
            raise self.unbuildable[key]
        runner = self.runner(unit.build_options)
        if self.plants.get("enqueue") and any(s in unit.unit_id
                                               for s in self.plants["enqueue"]):
            from fuzzfarm.device.commands import planted_enqueue_error
            planted_enqueue_error(runner)
        if isinstance(unit.source, IndexRange):
            return self._launch_range(unit, runner, slot)
        if is_device_plan(inputs):
            return self._launch_made(unit, runner, inputs)
        return self._launch_host(unit, runner, inputs)

    def _launch_host(self, unit: WorkUnit, runner, inputs: dict) -> Launch:
        target = unit.target
        kind = kind_of(target)
        if unit.against in CONSTANTS_DOORS:     # the inputs as constants too, built, run now
            return Launch(unit, "host", kind.submit(runner, target, inputs), inputs,
                          other=runner.run_literals(target.fn, inputs, target.fmt,
                                                    target.front_end))
        if unit.against is not None:    # both front ends' kernels, every result to the host
            return Launch(unit, "host", kind.submit(runner, target, inputs), inputs,
                          other=kind.submit(runner, unit.other_target, inputs))
        n = len(next(iter(inputs.values())))
        screen = self.screen(unit, n) if kind.device_screened(target) else None
        if screen is None:
            return Launch(unit, "host", kind.submit(runner, target, inputs), inputs)
        pending, answer = kind.submit_screened(runner, target, inputs, screen)
        return Launch(unit, "host", pending, inputs, answer)

    def _launch_made(self, unit: WorkUnit, runner, plan) -> Launch:
        target = unit.target
        kind = kind_of(target)
        screen = self.screen(unit, plan.n)
        generator = self._generator(unit.build_options, target)
        pending, answer, landing, tally = kind.launch_made(runner, target, plan, screen,
                                                           generator)
        return Launch(unit, "made", pending, answer=answer, landing=landing, tally=tally)

    def _sweep_kernel(self, unit: WorkUnit, runner, count: int):
        from fuzzfarm.device.sweep_kernel import SweepKernel
        t = unit.target
        key = (unit.build_options, t.name, t.precision, t.front_end)
        k = self._sweeps.get(key)
        if k is None or k.capacity < count:
            k = self._sweeps[key] = SweepKernel(runner, kind_of(t).space(t), count,
                                                t.front_end)
        return k

    def _launch_range(self, unit: WorkUnit, runner, slot: Slot | None) -> Launch:
        from fuzzfarm.device.kernels import buffer_dtype
        from fuzzfarm.oracle.screen_answer import ScreenChunk
        start, count = unit.source.start, unit.source.count
        cap = count if slot is None else max(count, slot.capacity)
        kernel = self._sweep_kernel(unit, runner, cap)
        screen = self.screen(unit, cap)
        space = kernel.space
        if slot is None:
            views = {o.name: np.empty(count, buffer_dtype(o, space.fmt))
                     for o in space.fn.outputs}
            answer = None if screen is None else ScreenChunk.empty(count)
            host = None
        else:
            views, answer, host = self._slot_views(unit, runner, kernel, slot, screen, count)
        lane, self._lane = self._lane, (self._lane + 1) % kernel.lanes_count
        run = kernel.launch(start, count, views, screen, answer, lane, host)
        return Launch(unit, "range", run, answer=answer, sweep=kernel)

    def _slot_views(self, unit, runner, kernel, slot: Slot, screen, count: int):
        """(output views, answer views or None, its HostSlot or None) of a range unit of
        ``count`` inputs in ``slot``: the outputs from byte 0, the answer after room for
        the slot's capacity of outputs."""
        from fuzzfarm.device.kernels import buffer_dtype
        from fuzzfarm.device.sweep_kernel import HostSlot
        from fuzzfarm.oracle.screen_answer import ScreenChunk
        space = kernel.space
        out_bytes = slot.capacity * sum(buffer_dtype(o, space.fmt).itemsize
                                        for o in space.fn.outputs)
        views, offset = {}, 0
        for o in space.fn.outputs:
            dt = buffer_dtype(o, space.fmt)
            views[o.name] = np.frombuffer(slot.memory, dt, count, offset)
            offset += count * dt.itemsize
        answer = None if screen is None else ScreenChunk.views(slot.memory, out_bytes, count)
        key = (unit.build_options, slot.index)
        if key not in self._hosts:
            from fuzzfarm.device.commands import OpenCLError
            answer_bytes = 0 if screen is None else ScreenChunk.nbytes(slot.capacity)
            try:
                self._hosts[key] = HostSlot(runner, slot.memory, out_bytes, answer_bytes)
            except OpenCLError:         # copied into pageable memory then (slower)
                self._hosts[key] = None
        return views, answer, self._hosts[key]

    # ------------------------------------------------------------------ landing
    def land(self, launch: Launch, sparse: bool = False, every_row: bool = False) -> Landed:
        """Wait for ``launch`` and return what its check needs (views of the launch's
        memory, valid until ``launch.release()`` and, for the host route, until the
        runner's next submit).  ``sparse``: cut a screened range's results to the
        positions the verdict may read (verdict.screened.SparseOutputs), for an executor
        that copies what it moves.  ``every_row``: a made unit's every row read back, not
        only the gathered ones (the check's verdict is the same: tests).  Raises
        pyopencl.Error from the driver."""
        unit = launch.unit
        if launch.route == "range":
            seconds = launch.sweep.land(launch.pending)
            outputs = launch.pending.views
            if sparse and launch.answer is not None:
                from fuzzfarm.verdict.screened import SparseOutputs
                outputs = SparseOutputs.of(outputs, launch.answer, unit.source.count)
            return Landed(unit, seconds, outputs, answer=launch.answer)
        if launch.route == "made":
            return self._land_made(launch, every_row)
        if launch.other is not None:    # two runs on one runner: each result copied out
            outputs, other = launch.pending.wait(), launch.other.wait()
            return Landed(unit, float(launch.pending.device_seconds) +
                          float(launch.other.device_seconds), outputs, launch.inputs,
                          other=other)
        outputs = launch.pending.wait(copy=False)
        return Landed(unit, float(launch.pending.device_seconds), outputs, launch.inputs,
                      launch.answer)

    def _land_made(self, launch: Launch, every_row: bool = False) -> Landed:
        """A made unit's Landed: the gathered rows where they fit the landing, else every
        row read back (the kind's ``land_made``)."""
        target = launch.unit.target
        answer, made = kind_of(target).land_made(target, launch.pending, launch.landing,
                                                 launch.tally, every_row)
        return Landed(launch.unit, float(launch.pending.device_seconds), answer=answer,
                      made=made)
