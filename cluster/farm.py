"""The Ray layer: a coordinator of work units and one actor per OpenCL device.

Device actors *pull* units from the coordinator (DESIGN.md decision 6: a slow device simply
takes fewer), run them on their device, and hand each batch to a Ray task that checks it and
writes its findings and stats atomically.  The coordinator hands out units round-robin over
the built-ins until the budget's deadline, then none: units in flight finish and are written.

The pipeline of one device actor, every stage overlapping the others:

    coordinator.next_spec -> UnitMaker actors (hypothesis recipes + vectorized sampler,
    a few units ahead, in their own processes; on a machine of fewer than 8 CPUs the
    actor generates its units itself) -> device (copy in, kernel, copy out, from pinned
    staging buffers; the next unit is enqueued before the previous one is collected) ->
    check_and_write tasks (as many pending as the cluster has CPUs, by default)

Inputs travel once: a maker puts them in Ray's object store, the actor reads them there
(zero-copy) to fill its staging buffers, and the check task gets the same object; the
outputs go from the staging buffers into the object store, once.  ``work`` returns, with
its totals, where the actor's time went (see ``DeviceActor.work``): the first place to
look for the bottleneck of a run.

Unit sizes adapt per (device, target): the coordinator sizes each unit so that checking it
takes about ``unit_seconds`` at the rate measured so far (from 1024 inputs for a target the
exact path judges slowly to ``max_unit_inputs`` for a screened binary32 one), so per-unit
costs (a Ray task, a Parquet file, a hypothesis draw) stay small against the checking.

Each actor owns its pyopencl context, queue and compiled kernels (DESIGN.md decision 7) and
is placed on a node that has its device (the driver enumerates devices locally for now; a
custom resource per device is the plan for multi-node campaigns).
"""
from __future__ import annotations

import time
from collections import defaultdict, deque

import ray

__all__ = ["Coordinator", "DeviceActor", "UnitMaker", "check_and_write", "unit_from_spec",
           "warm_checker"]

#: Unit sizing defaults (inputs; vectors for geometric built-ins): fuzzfarm.units.UnitSizer.
DEFAULT_UNIT_SECONDS = 0.5
DEFAULT_MIN_UNIT = 1024
DEFAULT_MAX_UNIT = 1 << 21


def unit_from_spec(spec: dict):
    """The WorkUnit a coordinator spec describes (fuzzfarm.units.make_unit)."""
    from fuzzfarm.units import make_unit
    return make_unit(spec["device"], tuple(spec["target"]), spec["serial"], spec["seed"],
                     spec["per_recipe"], spec["recipes_per_unit"], spec.get("size"))


@ray.remote(num_cpus=0)
class Coordinator:
    """Hands out work units and gathers progress.

    ``targets``: (built-in or conversion id, precision, vector width) triples; ``seed``:
    the run's base seed; ``deadline``: a ``time.time()`` after which no unit starts.
    Sizes: a target's first units have ``min_unit_inputs`` inputs (vectors for a
    geometric built-in); once a check of the target has been reported (its special-value
    unit 0 is the first), each unit is sized to take about ``unit_seconds`` to check at
    the rate measured so far, at most 8 times the previous unit and within
    [``min_unit_inputs``, ``max_unit_inputs``].  With ``unit_seconds=0`` every unit has
    ``per_recipe * recipes_per_unit`` inputs.
    """

    def __init__(self, targets, seed: int, deadline: float, per_recipe: int = 8192,
                 recipes_per_unit: int = 4, unit_seconds: float = DEFAULT_UNIT_SECONDS,
                 min_unit_inputs: int = DEFAULT_MIN_UNIT,
                 max_unit_inputs: int = DEFAULT_MAX_UNIT):
        self.targets = [tuple(t) for t in targets]
        self._mine = {}     # device precisions -> the targets such a device can run
        self.seed = seed
        self.deadline = deadline
        self.per_recipe = per_recipe
        self.recipes_per_unit = recipes_per_unit
        from fuzzfarm.units import UnitSizer
        self.sizer = UnitSizer(unit_seconds, min_unit_inputs, max_unit_inputs) \
            if unit_seconds > 0 else None
        self.stopped = False
        self.issued = defaultdict(int)  # per (device, target): units handed out
        self.cursor = defaultdict(int)  # per device: round-robin position
        self.progress = defaultdict(lambda: {"inputs": 0, "failures": 0, "notes": 0,
                                             "units": 0, "busy_seconds": 0.0,
                                             "issued": 0})
        self.started = time.time()

    def _size(self, device: str, target: tuple) -> int:
        if self.sizer is None:
            return self.per_recipe * self.recipes_per_unit
        return self.sizer.next_size((device, target))

    def next_spec(self, device: str, precisions=("binary32",)) -> dict | None:
        """The next unit for ``device`` (a fingerprint) among the targets in one of its
        ``precisions``, as a small dict for ``unit_from_spec`` (the hypothesis draw is
        left to the caller), or None when the run is over."""
        from fuzzfarm.units import required_precisions
        if self.stopped or time.time() >= self.deadline:
            return None
        key = tuple(sorted(precisions))
        if key not in self._mine:
            self._mine[key] = [t for t in self.targets if required_precisions(t) <= set(key)]
        mine = self._mine[key]
        if not mine:
            return None
        k = self.cursor[device]
        self.cursor[device] += 1
        target = mine[k % len(mine)]
        serial = self.issued[(device, target)]
        self.issued[(device, target)] += 1
        self.progress[device]["issued"] += 1
        return {"device": device, "target": target, "serial": serial, "seed": self.seed,
                "per_recipe": self.per_recipe, "recipes_per_unit": self.recipes_per_unit,
                "size": self._size(device, target) if serial else None}

    def next_unit(self, device: str, precisions=("binary32",)):
        """The next WorkUnit for ``device``, or None (``next_spec`` made here)."""
        spec = self.next_spec(device, precisions)
        return None if spec is None else unit_from_spec(spec)

    def report(self, device: str, inputs: int, failures: int, notes: int, seconds: float,
               target=None, task_seconds: float | None = None):
        """One unit done: ``seconds`` of device and checking time; ``target`` and
        ``task_seconds`` (its check task's time) feed the unit sizing."""
        p = self.progress[device]
        p["inputs"] += inputs
        p["failures"] += failures
        p["notes"] += notes
        p["units"] += 1
        p["busy_seconds"] += seconds
        if target is not None and task_seconds and self.sizer is not None:
            self.sizer.observe((device, tuple(target)), inputs, task_seconds)

    def stop(self):
        self.stopped = True

    def snapshot(self) -> dict:
        return {"elapsed": time.time() - self.started, "deadline": self.deadline,
                "stopped": self.stopped, "devices": {k: dict(v) for k, v in self.progress.items()}}


@ray.remote(num_cpus=1)
def check_and_write(unit, inputs, outputs, claims, device_meta, run_id, out, device_seconds,
                    build_options, coordinator):
    """Check one unit and write its findings and stats (atomically).  Returns counts.
    ``inputs``/``outputs`` arrive from the object store (zero-copy, read-only)."""
    from fuzzfarm import store
    from fuzzfarm.units import check_unit

    t0 = time.perf_counter()
    table, stats, result = check_unit(unit, inputs, outputs, claims, device_meta, run_id,
                                      device_seconds, build_options, table=True)
    store.write_findings_table(out, run_id, unit.unit_id, table)
    store.write_stats(out, run_id, unit.unit_id, stats)
    fails, notes = stats["failures"], stats["notes"]
    dt = time.perf_counter() - t0
    coordinator.report.remote(device_meta["device_fingerprint"], result.n, fails, notes,
                              dt + device_seconds,
                              (unit.function, unit.precision, unit.vector_width), dt)
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
    from fuzzfarm import store  # noqa: F401
    from fuzzfarm.checker import check_batch
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
        from fuzzfarm.units import make_inputs, make_unit
        make_inputs(make_unit("warm", ("sin", "binary32", 1), 1, 0, 64, 1))
        return True

    @ray.method(num_returns=2)
    def make(self, spec: dict):
        from fuzzfarm.units import make_inputs
        unit = unit_from_spec(spec)
        return unit, make_inputs(unit)


@ray.remote(num_cpus=0)
class DeviceActor:
    """Owns one OpenCL device: its context, queue and compiled kernels; ``makers``
    UnitMaker actors generate its units ahead (0: generate in the actor itself)."""

    def __init__(self, device_index: int, build_options: str = "", makers: int = 2):
        from fuzzfarm.checker import Claims
        from fuzzfarm.device import DeviceRunner, list_devices
        from fuzzfarm.formats import format_named
        self.info = list_devices()[device_index]
        self.runner = DeviceRunner(self.info, build_options)
        self.build_options = build_options
        consts = self.runner.device_constants()
        self.precisions = tuple(p for p in ("binary16", "binary32", "binary64")
                                if self.info.supports(format_named(p)))
        self.claims = {p: Claims.from_fp_config(self.info.fp_flags(p), self.info.profile, p,
                                                consts, build_options)
                       for p in self.precisions}
        # started now, so their processes start and warm up while the kernels build (a
        # make() call queues behind the warm-up on the same actor)
        self.makers = [UnitMaker.remote() for _ in range(max(0, int(makers)))]
        for m in self.makers:
            m.warm.remote()

    def describe(self) -> dict:
        return self.info.to_dict()

    def constants(self) -> dict:
        """The device's FP_ILOGB0 and FP_ILOGBNAN (for `fuzzfarm verify`)."""
        return self.runner.device_constants()

    def prepare(self, targets) -> float:
        """Compile every target's kernel up front, one program per (precision, width);
        returns seconds spent.  Targets in a precision the device lacks are skipped."""
        from fuzzfarm.units import prepare_targets, required_precisions
        t0 = time.perf_counter()
        prepare_targets(self.runner, [t for t in targets
                                      if required_precisions(t) <= set(self.precisions)])
        return time.perf_counter() - t0

    def work(self, coordinator, run_id: str, out: str, max_in_flight: int = 2,
             prefetch: int | None = None, profile_dir: str | None = None) -> dict:
        """Pull units until the coordinator has none; returns totals.

        Up to ``prefetch`` units (default: makers + 1) are being generated ahead; the next
        unit is enqueued on the device before the previous one's outputs are collected and
        handed to a check task; at most ``max_in_flight`` check tasks are pending.  Every
        unit the coordinator issued is run, checked and written before this returns.

        The totals also say where this actor's time went (``actor_seconds``: waiting for
        the coordinator, for generated units, for the device, for a free check slot, and
        its own copying and submitting) and sum the check tasks' times; with
        ``profile_dir`` the loop runs under cProfile and its statistics are written there
        (``actor-<fingerprint>.prof`` and ``.txt``)."""
        if not profile_dir:
            return self._work(coordinator, run_id, out, max_in_flight, prefetch)
        import cProfile
        import io
        import os
        import pstats
        prof = cProfile.Profile()
        prof.enable()
        try:
            return self._work(coordinator, run_id, out, max_in_flight, prefetch)
        finally:
            prof.disable()
            os.makedirs(profile_dir, exist_ok=True)
            base = os.path.join(profile_dir, f"actor-{self.info.fingerprint}")
            prof.dump_stats(base + ".prof")
            text = io.StringIO()
            pstats.Stats(prof, stream=text).sort_stats("tottime").print_stats(40)
            with open(base + ".txt", "w") as fh:
                fh.write(text.getvalue())

    def _work(self, coordinator, run_id, out, max_in_flight, prefetch) -> dict:
        from fuzzfarm.units import is_conversion, make_inputs, submit_unit
        fp = self.info.fingerprint
        ahead = max(1, int(prefetch) if prefetch else len(self.makers) + 1)
        max_in_flight = max(1, int(max_in_flight))
        made: deque = deque()           # (unit ref, inputs ref) or a spec, in issue order
        exhausted = False
        turn = 0
        checks: list = []
        totals = {"units": 0, "inputs": 0, "failures": 0, "notes": 0, "issued": 0,
                  "check_seconds": 0.0, "task_seconds": 0.0, "device_seconds": 0.0,
                  "makers": len(self.makers), "in_flight": max_in_flight}
        spent = dict.fromkeys(("coordinator", "generate", "submit", "device_wait",
                               "hand_off", "check_slot_wait"), 0.0)
        clock = time.perf_counter

        asked = coordinator.next_spec.remote(fp, self.precisions)   # always one ask ahead

        def refill():
            nonlocal exhausted, turn, asked
            while not exhausted and len(made) < ahead:
                t = clock()
                spec = ray.get(asked)
                spent["coordinator"] += clock() - t
                if spec is None:
                    exhausted = True
                    break
                asked = coordinator.next_spec.remote(fp, self.precisions)
                totals["issued"] += 1
                if self.makers:
                    made.append(tuple(self.makers[turn % len(self.makers)].make.remote(spec)))
                    turn += 1
                else:
                    made.append(spec)

        def take():
            t = clock()
            item = made.popleft()
            if isinstance(item, dict):          # generated here
                unit = unit_from_spec(item)
                inputs = make_inputs(unit)
                ref = ray.put(inputs)
            else:                               # generated by a maker: wait for it
                unit_ref, ref = item
                unit, inputs = ray.get([unit_ref, ref])
            spent["generate"] += clock() - t
            return unit, inputs, ref

        def reap(done):
            r = ray.get(done)
            _add(totals, r)

        def collect(unit, inputs_ref, pending):
            t = clock()
            outputs = pending.wait(copy=False)    # staging views, copied by ray.put below
            t1 = clock()
            spent["device_wait"] += t1 - t
            # a conversion may touch two formats: it gets the claims of every one
            claims = self.claims if is_conversion(unit.function) else self.claims[unit.precision]
            checks.append(check_and_write.remote(
                unit, inputs_ref, ray.put(outputs), claims, self.info.columns(unit.precision),
                run_id, out, float(pending.device_seconds), self.build_options, coordinator))
            t2 = clock()
            spent["hand_off"] += t2 - t1
            while len(checks) >= max_in_flight:
                done, rest = ray.wait(checks, num_returns=1)
                checks[:] = rest
                reap(done[0])
            spent["check_slot_wait"] += clock() - t2

        t_start = clock()
        on_device = None                # (unit, inputs ref, pending run)
        while True:
            refill()
            nxt = None
            if made:
                unit, inputs, inputs_ref = take()
                t = clock()
                nxt = (unit, inputs_ref, submit_unit(self.runner, unit, inputs))
                spent["submit"] += clock() - t
                del inputs
                refill()                 # the makers work while the device does
            if on_device is not None:
                collect(*on_device)
            on_device = nxt
            if on_device is None and not made:
                break
        t = clock()
        for ref in checks:
            reap(ref)
        spent["check_slot_wait"] += clock() - t
        totals["actor_seconds"] = {k: round(v, 3) for k, v in spent.items()}
        totals["actor_seconds"]["total"] = round(clock() - t_start, 3)
        return totals


def _add(totals: dict, r: dict) -> None:
    totals["units"] += 1
    for k in ("inputs", "failures", "notes"):
        totals[k] += r[k]
    for k in ("check_seconds", "task_seconds", "device_seconds"):
        totals[k] = round(totals.get(k, 0.0) + float(r.get(k) or 0.0), 6)
