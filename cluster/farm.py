"""The Ray layer: a coordinator of work units and one actor per OpenCL device.

Device actors *pull* units from the coordinator (DESIGN.md decision 6: a slow device simply
takes fewer), run them on their device, and hand each batch to a Ray task that checks it and
writes its findings and stats atomically; the actor meanwhile runs the next batch, so the
device and the checkers overlap.  The coordinator hands out units round-robin over the
built-ins until the budget's deadline, then none: units in flight finish and are written.

Each actor owns its pyopencl context, queue and compiled kernels (DESIGN.md decision 7) and
is placed on a node that has its device (the driver enumerates devices locally for now; a
custom resource per device is the plan for multi-node campaigns).
"""
from __future__ import annotations

import itertools
import time
from collections import defaultdict

import ray

__all__ = ["Coordinator", "DeviceActor", "check_and_write"]


@ray.remote(num_cpus=0)
class Coordinator:
    """Hands out work units and gathers progress.

    ``targets``: (built-in or conversion id, precision, vector width) triples; ``seed``:
    the run's base seed; ``deadline``: a ``time.time()`` after which no unit starts;
    ``per_recipe`` and ``recipes_per_unit`` size a unit (inputs = their product).
    """

    def __init__(self, targets, seed: int, deadline: float, per_recipe: int = 8192,
                 recipes_per_unit: int = 4):
        self.targets = [tuple(t) for t in targets]
        self._mine = {}     # device precisions -> the targets such a device can run
        self.seed = seed
        self.deadline = deadline
        self.per_recipe = per_recipe
        self.recipes_per_unit = recipes_per_unit
        self.stopped = False
        self.issued = defaultdict(int)  # per (device, target): units handed out
        self.cursor = defaultdict(int)  # per device: round-robin position
        self.progress = defaultdict(lambda: {"inputs": 0, "failures": 0, "notes": 0,
                                             "units": 0, "busy_seconds": 0.0})
        self.started = time.time()

    def next_unit(self, device: str, precisions=("binary32",)):
        """The next unit for ``device`` (a fingerprint) among the targets in one of its
        ``precisions``, or None when the run is over."""
        from fuzzfarm.units import make_unit, required_precisions
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
        return make_unit(device, target, serial, self.seed, self.per_recipe,
                         self.recipes_per_unit)

    def report(self, device: str, inputs: int, failures: int, notes: int, seconds: float):
        p = self.progress[device]
        p["inputs"] += inputs
        p["failures"] += failures
        p["notes"] += notes
        p["units"] += 1
        p["busy_seconds"] += seconds

    def stop(self):
        self.stopped = True

    def snapshot(self) -> dict:
        return {"elapsed": time.time() - self.started, "deadline": self.deadline,
                "stopped": self.stopped, "devices": {k: dict(v) for k, v in self.progress.items()}}


@ray.remote(num_cpus=1)
def check_and_write(unit, inputs, outputs, claims, device_meta, run_id, out, device_seconds,
                    build_options, coordinator):
    """Check one unit and write its findings and stats (atomically).  Returns counts."""
    from fuzzfarm import store
    from fuzzfarm.units import check_unit

    t0 = time.perf_counter()
    rows, stats, result = check_unit(unit, inputs, outputs, claims, device_meta, run_id,
                                     device_seconds, build_options)
    store.write_findings(out, run_id, unit.unit_id, rows)
    store.write_stats(out, run_id, unit.unit_id, stats)
    fails, notes = stats["failures"], stats["notes"]
    coordinator.report.remote(device_meta["device_fingerprint"], result.n, fails, notes,
                              time.perf_counter() - t0 + device_seconds)
    return {"function": unit.function, "inputs": result.n, "failures": fails, "notes": notes}


@ray.remote(num_cpus=0)
class DeviceActor:
    """Owns one OpenCL device: its context, queue and compiled kernels."""

    def __init__(self, device_index: int, build_options: str = ""):
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

    def describe(self) -> dict:
        return self.info.to_dict()

    def constants(self) -> dict:
        """The device's FP_ILOGB0 and FP_ILOGBNAN (for `fuzzfarm verify`)."""
        return self.runner.device_constants()

    def device_meta(self, precision: str = "binary32") -> dict:
        i = self.info
        return {"device_fingerprint": i.fingerprint, "platform": i.platform_name,
                "device": i.name, "driver_version": i.driver_version,
                "opencl_version": i.version, "opencl_c_version": i.opencl_c_version,
                "profile": i.profile,
                "fp_config": " ".join(i.fp_flags(precision))}

    def prepare(self, targets) -> float:
        """Compile every target's kernel up front, one program per (precision, width);
        returns seconds spent.  Targets in a precision the device lacks are skipped."""
        from fuzzfarm.units import prepare_targets, required_precisions
        t0 = time.perf_counter()
        prepare_targets(self.runner, [t for t in targets
                                      if required_precisions(t) <= set(self.precisions)])
        return time.perf_counter() - t0

    def work(self, coordinator, run_id: str, out: str, max_in_flight: int = 2) -> dict:
        """Pull units until the coordinator has none; returns totals."""
        from fuzzfarm.units import is_conversion, make_inputs, run_unit
        fp = self.info.fingerprint
        pending = []
        totals = {"units": 0, "inputs": 0, "failures": 0, "notes": 0}
        for _ in itertools.count():
            unit = ray.get(coordinator.next_unit.remote(fp, self.precisions))
            if unit is None:
                break
            inputs = make_inputs(unit)
            t0 = time.perf_counter()
            outputs = run_unit(self.runner, unit, inputs)
            dt = time.perf_counter() - t0
            # a conversion may touch two formats: it gets the claims of every one
            claims = self.claims if is_conversion(unit.function) else self.claims[unit.precision]
            pending.append(check_and_write.remote(
                unit, inputs, outputs, claims,
                self.device_meta(unit.precision), run_id, out, dt, self.build_options,
                coordinator))
            while len(pending) >= max_in_flight:
                done, pending = ray.wait(pending, num_returns=1)
                _add(totals, ray.get(done[0]))
        for ref in pending:
            _add(totals, ray.get(ref))
        return totals


def _add(totals: dict, r: dict) -> None:
    totals["units"] += 1
    for k in ("inputs", "failures", "notes"):
        totals[k] += r[k]
