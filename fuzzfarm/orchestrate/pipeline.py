"""The one pipeline of a device: lease, make, launch, land, check, write.

``Pipeline.run`` drives one device (a ``fuzzfarm.work.session.DeviceSession``) through a
stream of units, every stage overlapping the others::

    orders.next() -> maker (draw recipes, make inputs or the device plan, a few units
    ahead) -> session.launch (the next unit is enqueued before the previous one lands)
    -> session.land -> executor.submit (a checking process: check_and_write)

Three parts are given by whoever runs it, each a small interface:

* **orders**, where tickets come from and where what happened to them goes: ``next()``
  (a scheduler.Ticket, a scheduler.Wait, or None when there is no more), ``on_device``,
  ``complete``, ``fault``, ``withdraw``.  ``LocalOrders`` holds a ``Scheduler`` in this
  process; ``cluster.coordinator.RayOrders`` asks the campaign's coordinator actor.
* **maker**: ``start(ticket)`` and ``finish(handle)`` -> (unit, inputs, inputs handle for
  the executor).  ``LocalMaker`` makes in this process; ``cluster.actor.RayMakers`` in
  unit-maker actors.
* **executor**: where checks run.  ``slot()`` (host memory to land a unit in, or None),
  ``submit(landed, claims, slot, inputs_handle)``, ``reap(timeout)`` -> UnitReports,
  ``drain()``, ``sparse`` (whether landing cuts screened results to what the check reads).
  ``LocalExecutor`` (below): a fork pool of checking processes reading shared-memory
  slots; ``cluster.actor.RayExecutor``: Ray tasks reading the object store.

Device faults are recorded here and only here (``_fault``): a kernel that does not build, an
OpenCL error from the driver, a device screen that does not build; a target whose kernel
does not build, or that errs twice, is withdrawn.  A crash or a hang kills or stalls the
process: whoever watches it records those (``cluster.driver``), through the same
``work.rows.write_fault``.
"""
from __future__ import annotations

import mmap
import multiprocessing as mp
import os
import pickle
import queue
import signal
import time
from collections import deque
from dataclasses import dataclass, field, replace

import numpy as np

from fuzzfarm.device.kernels import literal_kernel_name
from fuzzfarm.orchestrate.scheduler import Ticket, Wait
from fuzzfarm.target import CONSTANTS_DOORS
from fuzzfarm.work.check import UnitReport
from fuzzfarm.work.session import Slot, is_device_plan, prepare_inputs

__all__ = ["Pipeline", "Totals", "LocalOrders", "Maker", "LocalMaker",
           "LocalExecutor", "CheckPool", "TIME_KEYS"]

#: Where a device's pipeline spends its wall time (``Totals.seconds``): asking for units,
#: waiting for made units, enqueueing, waiting for the device, handing results to the
#: executor, waiting for a free check slot, idle (no unit to run).
TIME_KEYS = ("coordinator", "generate", "submit", "device_wait", "hand_off",
             "check_slot_wait", "idle")


@dataclass
class Totals:
    """What one device's pipeline did: units checked, inputs, failures, notes, device
    faults, units whose inputs the device made, seconds summed over the check tasks
    (checking, whole tasks, the device) and where the pipeline's own time went
    (``seconds``: TIME_KEYS and "total")."""

    device: str = ""
    fingerprint: str = ""
    units: int = 0
    inputs: int = 0
    failures: int = 0
    notes: int = 0
    faults: int = 0
    issued: int = 0
    made_on_device: int = 0
    check_seconds: float = 0.0
    task_seconds: float = 0.0
    device_seconds: float = 0.0
    seconds: dict = field(default_factory=lambda: dict.fromkeys(TIME_KEYS, 0.0))

    def add(self, r: UnitReport) -> None:
        """Count one unit's report."""
        self.units += 1
        self.inputs += r.inputs
        self.failures += r.failures
        self.notes += r.notes
        self.faults += r.fault is not None
        self.check_seconds += r.check_seconds
        self.task_seconds += r.task_seconds
        self.device_seconds += r.device_seconds

    def to_json(self) -> dict:
        """The run metadata's form (``totals``; ``actor_seconds`` the time split)."""
        return {"device": self.device, "fingerprint": self.fingerprint, "units": self.units,
                "inputs": self.inputs, "failures": self.failures, "notes": self.notes,
                "faults": self.faults, "issued": self.issued,
                "made_on_device": self.made_on_device,
                "check_seconds": round(self.check_seconds, 6),
                "task_seconds": round(self.task_seconds, 6),
                "device_seconds": round(self.device_seconds, 6),
                "actor_seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


class _Withdrawn(Exception):
    """A unit of a target whose device fault is recorded: skipped."""


class Pipeline:
    """One device's pipeline (module docstring).  ``session``: its DeviceSession; ``out``,
    ``run_id``: the results directory and run; ``orders``, ``maker``, ``executor``: the
    three parts; ``prefetch``: units being made ahead; ``plants``: planted crash and hang
    faults (device.runner.planted_faults, tests); ``on_report(report)``: called for each
    checked unit (progress)."""

    def __init__(self, session, out: str, run_id: str, orders, maker, executor,
                 prefetch: int = 1, plants: dict | None = None, on_report=None):
        self.session, self.out, self.run_id = session, str(out), run_id
        self.orders, self.maker, self.executor = orders, maker, executor
        self.prefetch = max(1, int(prefetch))
        self.plants = plants or {}
        self.on_report = on_report
        self.totals = Totals(fingerprint=session.info.fingerprint)
        self.withdrawn: set = set()
        self.enqueue_errors: dict = {}
        self.faults: list = []          # (unit id, reason, detail) recorded here
        self._screen_faults = 0
        self._ahead: deque = deque()    # (ticket, maker handle)
        self._device: list = []         # unit ids on the device, in order
        self._exhausted = False
        self._retry_at = 0.0

    # ------------------------------------------------------------------ the loop
    def run(self) -> Totals:
        """Run units until the orders have none; every unit leased is run, checked and
        written before this returns.  Returns the totals."""
        clock, spent = time.perf_counter, self.totals.seconds
        t_start = clock()
        on_device = None                # (Launch, slot, inputs handle, isolate)
        while True:
            self._refill()
            nxt = None
            if self._ahead:
                if self._ahead[0][0].isolate and on_device is not None:
                    self._hand_over(*on_device)         # drain the device first
                    on_device = None
                nxt = self._launch_next()
                if nxt is not None and nxt[3]:
                    self._hand_over(*nxt)               # alone on the device
                    nxt = None
                self._refill()          # the makers work while the device does
            if on_device is not None:
                self._hand_over(*on_device)
            on_device = nxt
            if on_device is None and not self._ahead:
                if self._exhausted:
                    break
                t = clock()
                wait = max(0.0, min(1.0, self._retry_at - clock()))
                reports = self.executor.reap(wait)
                if reports:         # units came back: the pool may have more, or be done
                    self._retry_at = 0.0
                elif not self.executor.in_flight:
                    time.sleep(wait)
                self._take(reports)
                spent["idle"] += clock() - t
        t = clock()
        self._take(self.executor.drain())
        spent["check_slot_wait"] += clock() - t
        spent["total"] = clock() - t_start
        return self.totals

    def _refill(self) -> None:
        clock = time.perf_counter
        while not self._exhausted and len(self._ahead) < self.prefetch:
            if clock() < self._retry_at:
                return
            t = clock()
            ticket = self.orders.next()
            self.totals.seconds["coordinator"] += clock() - t
            if ticket is None:
                self._exhausted = True
                return
            if isinstance(ticket, Wait):
                self._retry_at = clock() + float(ticket.seconds)
                return
            self.totals.issued += 1
            self._ahead.append((ticket, self.maker.start(ticket)))
            if ticket.isolate:
                return          # nothing queued behind a unit that must run alone

    def _launch_next(self):
        """Make and launch the next unit: (Launch, slot, inputs handle, isolate), or None
        where it became a device fault or was skipped."""
        clock, spent = time.perf_counter, self.totals.seconds
        t = clock()
        k = 0
        if len(self._ahead) > 1 and not any(tk.isolate for tk, _ in self._ahead):
            k = self.maker.first_ready([h for _, h in self._ahead])
        ticket, handle = self._ahead[k]
        del self._ahead[k]
        unit, inputs, handle = self.maker.finish(handle)
        try:                # may open the device's context: a driver's error is a fault
            refused = is_device_plan(inputs) and not self.session.makes(unit, inputs)
        except Exception as exc:            # noqa: BLE001 - sorted by _fault
            self._fault(unit, exc)
            spent["generate"] += clock() - t
            return None
        if refused:
            self.maker.made_on_host(unit)       # and its target's next units, by the makers
            unit, inputs = prepare_inputs(unit, on_device=False)   # the host makes them
            handle = None
        self.totals.made_on_device += is_device_plan(inputs)
        t1 = clock()
        spent["generate"] += t1 - t
        slot = self.executor.slot()
        t2 = clock()
        spent["check_slot_wait"] += t2 - t1
        self._device.append(unit.unit_id)
        self.orders.on_device(list(self._device))
        self._plant(unit.unit_id)
        launched = None
        try:
            if (unit.build_options, unit.target) in self.withdrawn:
                raise _Withdrawn()
            launched = (self.session.launch(unit, inputs, slot), slot, handle, ticket.isolate)
        except Exception as exc:            # noqa: BLE001 - sorted by _fault
            self._off_device(unit.unit_id)
            self.executor.free(slot)
            self._fault(unit, exc)
        self._screen_fault_check()
        spent["submit"] += clock() - t2
        return launched

    def _hand_over(self, launch, slot, handle, isolate=False) -> None:
        """Land ``launch`` and hand it to the executor (or record its device fault)."""
        clock, spent = time.perf_counter, self.totals.seconds
        t = clock()
        unit = launch.unit
        try:
            landed = self.session.land(launch, sparse=self.executor.sparse)
            claims = self.session.claims(unit)      # (a context made again after a fault)
        except Exception as exc:            # noqa: BLE001 - sorted by _fault
            self._off_device(unit.unit_id)
            launch.release()
            self.executor.free(slot)
            self._fault(unit, exc)
            return
        self._off_device(unit.unit_id)
        t1 = clock()
        spent["device_wait"] += t1 - t
        self.executor.submit(landed, claims, slot, handle)
        launch.release()
        t2 = clock()
        spent["hand_off"] += t2 - t1
        self._take(self.executor.reap(0.0, bounded=True))
        spent["check_slot_wait"] += clock() - t2

    def _take(self, reports) -> None:
        for r in reports:
            self.totals.add(r)
            if self.on_report is not None:
                self.on_report(r)

    def _off_device(self, unit_id: str) -> None:
        if unit_id in self._device:
            self._device.remove(unit_id)
        self.orders.on_device(list(self._device))

    # ------------------------------------------------------------------ faults
    def _fault(self, unit, exc: BaseException) -> None:
        """Record ``unit`` as a device fault of ``exc`` (a KernelBuildError or an OpenCL
        error; ``_Withdrawn`` for a unit of a target already recorded, which gets a stats
        row only), and withdraw its target where it cannot run here (a build failure; a
        second enqueue error).  Re-raises anything else: a bug of fuzzfarm, not the
        device's."""
        from fuzzfarm.device.commands import fault_reason
        from fuzzfarm.store import dataset as store
        from fuzzfarm.work.rows import fault_rows, unit_kernel_source, write_fault
        meta = self.session.info.columns(unit.target.precision)
        if isinstance(exc, _Withdrawn):
            _, stats = fault_rows(unit, meta, self.run_id, "build_failure")
            store.write_stats(self.out, self.run_id, unit.unit_id, stats)
            self.orders.complete(UnitReport(unit.unit_id, tuple(unit.target)))
            return
        reason = fault_reason(exc)
        if reason is None:
            raise exc
        if reason == "build_failure":
            detail = exc.detail()
        else:
            from fuzzfarm.device.runner import enqueue_error_detail
            detail = enqueue_error_detail(exc, unit_kernel_source(unit), unit.build_options)
            self.session.reset(unit.build_options)      # the context may be unusable now
        write_fault(self.out, self.run_id, unit, meta, reason, detail)
        self.faults.append((unit.unit_id, reason, detail))
        self.totals.faults += 1
        self.orders.fault(unit.unit_id, reason)
        key = (unit.build_options, unit.target)
        self.enqueue_errors[key] = self.enqueue_errors.get(key, 0) + (reason == "enqueue_error")
        if unit.against in CONSTANTS_DOORS and reason == "build_failure" and \
                literal_kernel_name(unit.target.fn) in exc.kernels:
            return      # a program of the unit's inputs as constants: its own, not the target's
        if reason == "build_failure" or self.enqueue_errors[key] >= 2:
            self.withdrawn.add(key)
            self.orders.withdraw(unit.target, unit.build_options)

    def _screen_fault_check(self) -> None:
        """Record the device screens that did not build since the last look (each a
        device fault of its own, unit id ``<first unit>-screen``; the host screened)."""
        from fuzzfarm.work.rows import write_fault
        new = self.session.screen_faults[self._screen_faults:]
        self._screen_faults = len(self.session.screen_faults)
        for unit, exc in new:
            fake = replace(unit, unit_id=unit.unit_id + "-screen")
            write_fault(self.out, self.run_id, fake,
                        self.session.info.columns(unit.target.precision), "build_failure",
                        exc.detail())
            self.faults.append((fake.unit_id, "screen_build_failure", exc.detail()))

    def _plant(self, unit_id: str) -> None:
        """The planted crash or hang of ``unit_id``, if any (tests)."""
        crash = any(s in unit_id for s in self.plants.get("crash", ()))
        hang = any(s in unit_id for s in self.plants.get("hang", ()))
        if crash or hang:
            self.orders.on_device(list(self._device), wait=True)    # known before it dies
            if crash:
                os.kill(os.getpid(), signal.SIGKILL)
            while True:
                time.sleep(3600)


# ---------------------------------------------------------------------- in this process
class LocalOrders:
    """Orders from a ``Scheduler`` held in this process, for device ``device`` (its key
    there).  Completions come from the executor's reports."""

    def __init__(self, scheduler, device: str):
        self.s, self.device = scheduler, device

    def next(self):
        return self.s.lease(self.device)

    def on_device(self, unit_ids, wait: bool = False) -> None:
        self.s.on_device(self.device, unit_ids)

    def complete(self, r: UnitReport) -> None:
        self.s.report(self.device, r)

    def fault(self, unit_id: str, reason: str) -> None:
        self.s.record_fault(unit_id, self.device, reason)

    def withdraw(self, target, build_options: str) -> None:
        self.s.withdraw(self.s.devices[self.device].pool, target, build_options)

    def stop(self) -> None:
        self.s.stop()


class Maker:
    """Makes units ahead of the device: ``start(ticket)`` gives a handle, ``finish(handle)``
    (the unit, recipes drawn; its inputs or device plan; the inputs' object-store
    reference or None), ``first_ready(handles)`` the position of the first of the handles
    started whose unit is made (the device takes it next; a slow unit does not hold up
    those behind it).  Where it lets the inputs be made: on the device where ``on_device``
    and the device's session has not refused the unit's (build options, target) --
    ``made_on_host`` records a refusal (no device screen for it, say), so that the makers
    make that target's later units on the host themselves instead of handing the device
    actor plans it must redo."""

    def __init__(self, on_device: bool = False):
        self.on_device = on_device
        self._host: set = set()

    def start(self, ticket: Ticket):
        raise NotImplementedError

    def finish(self, handle) -> tuple:
        raise NotImplementedError

    def first_ready(self, handles: list) -> int:
        """Position in ``handles`` (``start``'s, in order) of the first made unit, waiting
        for one where none is: here, the first (made by ``finish`` itself)."""
        return 0

    def on_device_for(self, unit) -> bool:
        """Whether to offer ``unit``'s inputs to the device (a plan) rather than make them."""
        return self.on_device and (unit.build_options, unit.target) not in self._host

    def made_on_host(self, unit) -> None:
        """The device's session does not make ``unit``'s target's inputs."""
        self._host.add((unit.build_options, unit.target))


class LocalMaker(Maker):
    """Makes units in this process (``prepare_inputs``); ``on_device``: let the device
    make the inputs where it can."""

    def start(self, ticket: Ticket):
        return ticket

    def finish(self, ticket: Ticket):
        unit, inputs = prepare_inputs(ticket.unit, self.on_device_for(ticket.unit))
        return unit, inputs, None


#: Shared slots of the local executor, made before its workers fork (they inherit them).
_SLOTS: list = []


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent decides when to stop
    # the check's modules now, while the parent opens the device and builds its kernels:
    # imported at a worker's first unit, they held up the first slots (~1 s on the GPU host)
    import importlib
    for name in ("fuzzfarm.store.dataset", "fuzzfarm.verdict.checker",
                 "fuzzfarm.verdict.screened", "fuzzfarm.work.check"):
        importlib.import_module(name)


def _base(a) -> int:
    return int(np.frombuffer(a, np.uint8).ctypes.data) if len(memoryview(a)) else 0


def _pack(landed, slot: Slot | None) -> tuple:
    """``landed`` pickled for a checking process: the arrays inside ``slot``'s shared
    memory as (offset, bytes) places, every other one in the pickle."""
    places: list = []
    if slot is None:
        return pickle.dumps(landed, protocol=5), places
    lo = _base(slot.memory)
    hi = lo + len(slot.memory)

    def out_of_band(buf) -> bool:
        m = memoryview(buf)
        at = _base(m) if m.nbytes else -1
        if m.c_contiguous and lo <= at and at + m.nbytes <= hi:
            places.append((at - lo, m.nbytes))
            return False            # out of band: the worker maps it from the slot
        return True                 # in band: copied through the pipe

    return pickle.dumps(landed, protocol=5, buffer_callback=out_of_band), places


def _unpack(data: bytes, places: list, index: int | None):
    mem = memoryview(_SLOTS[index]) if index is not None else None
    return pickle.loads(data, buffers=[mem[o:o + n] for o, n in places])


def _check_in_worker(data, places, index, claims, meta, run_id, out) -> tuple:
    from fuzzfarm.work.check import check_and_write
    landed = _unpack(data, places, index)
    return index, check_and_write(landed, claims, meta, run_id, out, keep={})


class CheckPool:
    """``workers`` forked checking processes and ``slots`` shared-memory slots of
    ``slot_bytes`` each that units land in for them.  Create it before OpenCL starts in
    this process (the workers fork and inherit the slots; the slots' pages are taken only
    as they are written).  One pool can serve one LocalExecutor after another (a resident
    process, orchestrate.resident): ``release`` hands the slots' pages back between them."""

    def __init__(self, workers: int, slots: int, slot_bytes: int):
        global _SLOTS
        _SLOTS = [mmap.mmap(-1, max(1, int(slot_bytes))) for _ in range(slots)]
        self.memory = _SLOTS
        self.workers, self.slot_bytes = int(workers), max(1, int(slot_bytes))
        self.pool = mp.get_context("fork").Pool(workers, initializer=_worker_init)

    def fits(self, workers: int, slots: int, slot_bytes: int) -> bool:
        """Whether an executor of ``workers``, ``slots`` x ``slot_bytes`` can run on it."""
        return workers == self.workers and slots <= len(self.memory) and \
            slot_bytes <= self.slot_bytes

    def release(self) -> None:
        """Give the slots' pages back to the system (their contents are lost)."""
        advice = getattr(mmap, "MADV_REMOVE", None)     # shared anonymous memory: shmem
        if advice is None:                              # not Linux: the pages stay
            return
        for m in self.memory:
            try:
                m.madvise(advice)
            except OSError:
                pass

    def close(self, abandon: bool = False) -> None:
        """End the processes (``abandon``: without waiting for the checks in flight)."""
        if abandon:
            self.pool.terminate()
        else:
            self.pool.close()
        self.pool.join()


class LocalExecutor:
    """Checks in a pool of ``workers`` forked processes, the results landing in ``slots``
    shared-memory slots of ``slot_bytes`` each (``capacity`` inputs of a range unit): the
    device waits for a free slot, so memory stays at slots x slot_bytes whatever the
    work.  Create it before OpenCL starts in this process (the workers fork), or give it
    a CheckPool made then (``pool``, which must ``fit``; closing the executor leaves it
    running).  The checks' tables are kept (``tables``: store.compact's ``known``) up to
    ``keep_rows`` findings rows.  ``orders``: told of each completion."""

    sparse = False

    def __init__(self, workers: int, slots: int, slot_bytes: int, capacity: int, out: str,
                 run_id: str, meta_of, keep_rows: int = 1 << 20,
                 pool: CheckPool | None = None):
        if pool is not None and not pool.fits(workers, slots, slot_bytes):
            raise ValueError(f"the check pool ({pool.workers} workers, {len(pool.memory)} "
                             f"slots of {pool.slot_bytes} bytes) cannot take {workers} "
                             f"workers and {slots} slots of {slot_bytes} bytes")
        self._owned = pool is None
        self.checks = pool or CheckPool(workers, slots, slot_bytes)
        self.slots = [Slot(i, m, capacity) for i, m in enumerate(self.checks.memory[:slots])]
        self.out, self.run_id, self.meta_of = str(out), run_id, meta_of
        self.orders = None
        self._free: deque = deque(self.slots)
        self._done: queue.Queue = queue.Queue()
        self.in_flight = 0
        self.tables: dict = {}
        self._reports: list = []
        self.keep_rows, self._rows = int(keep_rows), 0
        self.write_seconds = 0.0
        self.slot_wait_seconds = 0.0

    def slot(self) -> Slot:
        """A free slot, waiting (and taking the finished checks' reports, kept for the
        next ``reap``) until one is."""
        t = time.perf_counter()
        while not self._free:
            self._collect(self._done.get())
        self.slot_wait_seconds += time.perf_counter() - t
        return self._free.popleft()

    def free(self, slot: Slot | None) -> None:
        """Give back a slot no unit was landed in."""
        if slot is not None:
            self._free.append(slot)

    def submit(self, landed, claims, slot: Slot, handle=None) -> None:
        data, places = _pack(landed, slot)
        meta = self.meta_of(landed.unit)
        self.in_flight += 1
        self.checks.pool.apply_async(
            _check_in_worker, (data, places, slot.index if places else None, claims, meta,
                               self.run_id, self.out),
            callback=lambda res, s=slot: self._done.put(("done", s, res[1])),
            error_callback=lambda exc, s=slot: self._done.put(("error", s, exc)))

    def _collect(self, item) -> None:
        kind, slot, res = item
        self.in_flight -= 1
        self._free.append(slot)
        if kind == "error":
            raise res
        self._keep(res)
        self._reports.append(res)

    def _keep(self, r: UnitReport) -> None:
        for key, t in r.tables.items():
            if "ulp_histogram" not in t.schema.names:     # findings
                if self._rows + t.num_rows > self.keep_rows:
                    continue
                self._rows += t.num_rows
            self.tables[key] = t
        r.tables = {}
        self.write_seconds += r.write_seconds
        if self.orders is not None:
            self.orders.complete(r)

    def reap(self, timeout: float = 0.0, bounded: bool = False) -> list:
        """Reports of the checks finished since the last call, waiting up to ``timeout``
        seconds for one where none has.  (``bounded``: the slots bound the checks in
        flight already.)"""
        try:
            while True:
                self._collect(self._done.get(block=timeout > 0 and not self._reports
                                             and self.in_flight > 0, timeout=timeout or None))
        except queue.Empty:
            pass
        out, self._reports = self._reports, []
        return out

    def drain(self) -> list:
        """Wait for every check in flight; their reports."""
        while self.in_flight:
            self._collect(self._done.get())
        out, self._reports = self._reports, []
        return out

    def close(self, abandon: bool = False) -> None:
        """End the pool (``abandon``: without waiting for the checks in flight).  A pool
        given to it is left running: its checks in flight are waited for (each writes
        its files whole), its slots' pages released."""
        if self._owned:
            self.checks.close(abandon)
            return
        self.drain()
        self.checks.release()
