"""A campaign's coordinator: its ``Scheduler`` behind a Ray actor, and the orders a device's
pipeline takes from it.

Device actors *pull* units from the ``Coordinator`` (docs/design.md, decision 6: pull,
durably), which runs on the driver's node and journals every unit it issues to
``DIR/_campaign/<run_id>/journal.jsonl``: a slow device simply takes fewer, devices of one
fingerprint share one pool of units, and a lost device's units go back to its pool.  The
actor tells it which units are on its device (submitted, not landed), so the driver can kill
an actor whose oldest unit stays there past the campaign's ``unit.timeout`` (a hang).
``RayOrders`` is the coordinator as a pipeline's orders (fuzzfarm.orchestrate.pipeline),
always one lease ahead.
"""
from __future__ import annotations

import time

import ray

__all__ = ["Coordinator", "RayOrders"]


@ray.remote(num_cpus=0)
class Coordinator:
    """A campaign's ``fuzzfarm.orchestrate.scheduler.Scheduler`` as a Ray actor, journaling
    to ``DIR/_campaign/<run_id>/journal.jsonl``.

    ``campaign``: ``Campaign.to_dict()``; ``pools``: {fingerprint: {"precisions": [...],
    "jobs": [job numbers]}}; ``devices``: {device key: fingerprint}; ``deadline``: a
    ``time.time()`` after which no new unit is issued (None: no time budget);
    ``resume``: replay the journal first (``Scheduler.restore``); ``per_recipe`` and
    ``recipes_per_unit``: see Scheduler."""

    def __init__(self, campaign: dict, pools: dict, devices: dict, out: str, run_id: str,
                 deadline: float | None, resume: bool = False, per_recipe: int = 8192,
                 recipes_per_unit: int = 4):
        from fuzzfarm.orchestrate.campaign import Campaign
        from fuzzfarm.orchestrate.scheduler import Scheduler, streams_for
        from fuzzfarm.store import dataset as store
        from fuzzfarm.work.make import UnitSizer, resident_bytes
        c = Campaign.from_dict(campaign)
        streams = [s for fp, p in pools.items()
                   for s in streams_for(c, fp, p["precisions"], set(p["jobs"]))]
        path = store.campaign_dir(out, run_id) / "journal.jsonl"
        events = store.read_journal(path) if resume else []
        self.journal = store.Journal(path)
        sizer = None if c.unit_inputs else UnitSizer(
            c.unit_seconds, c.unit_min_inputs, c.unit_max_inputs,
            resident_bytes={fp: resident_bytes(p.get("max_alloc", 0)) for fp, p in pools.items()})
        self.s = Scheduler(streams, store.done_units(out, run_id), self.journal.append,
                           sizer, c.unit_inputs, deadline, c.input_budget, per_recipe,
                           recipes_per_unit, replay=_replays(out, streams))
        if events:
            self.s.restore(events)
        for key, fp in devices.items():
            self.s.add_device(key, fp)
        self.started = time.time()

    def lease(self, device: str):
        """The next Ticket for ``device``, a Wait, or None (Scheduler.lease)."""
        return self.s.lease(device)

    def on_device(self, device: str, unit_ids) -> None:
        self.s.on_device(device, unit_ids)

    def complete(self, unit_id: str, device: str, inputs: int = 0, failures: int = 0,
                 notes: int = 0, seconds: float = 0.0, target=None,
                 check_seconds: float | None = None) -> bool:
        return self.s.complete(unit_id, device, inputs, failures, notes, seconds, target,
                               check_seconds)

    def report(self, device: str, r) -> bool:
        """A checked unit's UnitReport from ``device`` (Scheduler.report); a device fault
        its check found is journalled as one (``fault``)."""
        if r.fault is not None:
            return self.fault(r.unit_id, device, r.fault)
        return self.s.report(device, r)

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
        """(unit id, reason) of every unit recorded as a device fault."""
        return list(self.s.faults)

    def lost(self, device: str, reason: str) -> list:
        """The Tickets of ``device`` that are now device faults (Scheduler.lost)."""
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


class RayOrders:
    """The coordinator ``coordinator`` as the orders of device ``key``'s pipeline, one
    lease always asked ahead; what the device recorded is awaited (so it is known before
    the unit counts as done)."""

    def __init__(self, coordinator, key: str):
        self.coordinator, self.key = coordinator, key
        self._asked = coordinator.lease.remote(key)

    def next(self):
        """The next Ticket, a Wait (ask again later) or None (the pool is finished)."""
        from fuzzfarm.orchestrate.scheduler import Ticket
        if self._asked is None:
            self._asked = self.coordinator.lease.remote(self.key)
        ticket = ray.get(self._asked)
        self._asked = None
        if isinstance(ticket, Ticket):          # the next one is asked for at once
            self._asked = self.coordinator.lease.remote(self.key)
        return ticket

    def on_device(self, unit_ids, wait: bool = False) -> None:
        ref = self.coordinator.on_device.remote(self.key, list(unit_ids))
        if wait:
            ray.get(ref)

    def complete(self, report) -> None:
        ray.get(self.coordinator.complete.remote(report.unit_id, self.key))

    def fault(self, unit_id: str, reason: str) -> None:
        ray.get(self.coordinator.fault.remote(unit_id, self.key, reason))

    def withdraw(self, target, build_options: str) -> None:
        ray.get(self.coordinator.withdraw.remote(self.key, tuple(target), build_options))
