"""Work units of a campaign: what a device does next, leases, retries, device faults, resume.

Pure bookkeeping, no Ray and no OpenCL: the coordinator actor (``cluster.coordinator``)
holds one ``Scheduler`` for a campaign on Ray, the local pipeline (``fuzzfarm sweep``,
``fuzzfarm.orchestrate.pipeline``) holds one itself, and the tests drive one directly.  What
it hands out is a ``Ticket``: a typed ``fuzzfarm.work.unit.WorkUnit`` (its recipes not drawn
yet: a unit maker draws them) with the stream it belongs to.

**Streams and pools.**  A campaign job (``fuzzfarm.orchestrate.campaign.Job``) gives one *stream* of
units per (target, build options) and per *pool*: the devices of one fingerprint (the same
model, driver and FP configuration; ``DeviceInfo.fingerprint``).  Devices of one pool are
interchangeable, so they share its units (pull, not push: a slow device takes fewer, and
a lost device's units go to the others); devices of different fingerprints each run the
whole campaign.  A stream's units are numbered by ``serial``:

- ``recipes``: unit 0 is the special-value pool of the target, units 1, 2, ... draw
  hypothesis recipes (``fuzzfarm.work.make``); the stream ends after ``job.units``
  recipe units or ``job.inputs`` inputs, or never (the campaign's budget ends it);
- ``catalogue``: unit 0 only;
- ``sweep``: range units of the input space (``fuzzfarm.orchestrate.ranges``): chunk k of
  ``2**job.chunk_bits`` inputs, or its parts where it holds the rare classes, all of them
  or the first ``job.units`` chunks.

A unit's id names its pool, job, target, build options and serial, so it is the same
whenever and wherever the unit is made, and its results are the files of that name
(``fuzzfarm.store.dataset``): written once, atomically.  With a fixed unit size (``[unit]
inputs``) the set of unit ids of a finite campaign is fixed; with adaptive sizing a unit's
size is decided when it is first issued and journaled with it.

**Exactly once.**  A unit is *done* when its stats file exists (written last, after its
findings).  ``lease`` never hands out a done unit; every unit issued is journaled (the
``journal`` callable: one JSON-able event per call) before it is handed out, so after a
crash of the driver, ``restore`` re-issues every journaled unit that is not done with the
same spec, and new units continue after the largest serial issued.

**Faults.**  ``lost(device, reason)`` returns a lost device's leased units to its pool's
retry queue.  With reason ``"crash"`` (the actor died) or ``"hang"`` (a unit stayed on the
device past the watchdog, see ``overdue``) each unit that was on the device gets a
*strike* and is retried *isolated* (its device runs nothing else meanwhile), so a second
crash or hang is the unit's own: it is returned as a device fault (the caller records a
finding and marks it done) and never retried.  Units that were only queued, and every
unit of a lost node (reason ``"node"``), are retried without a strike.
"""
from __future__ import annotations

import hashlib
import time
from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from fuzzfarm.target import Target
from fuzzfarm.work import drift
from fuzzfarm.work.drift import drift_unit
from fuzzfarm.work.make import split_size, stream_unit
from fuzzfarm.work.unit import Drawn, IndexRange, Special, WorkUnit

__all__ = ["Scheduler", "Stream", "Ticket", "Wait", "unit_id", "streams_for",
           "FAULT_STRIKES"]

#: Strikes after which a unit is a device fault: a unit that kills or hangs its device
#: twice, the second time alone on it (docs/design.md, decision 6).
FAULT_STRIKES = 2

#: The hang watchdog (``overdue``): a unit is a hang once it has been the oldest on its
#: device for HANG_FACTOR times the device time its size takes at the slowest rate seen
#: for its target on its pool, and at least HANG_MIN_SECONDS (first launches compile);
#: never longer than the campaign's ``unit.timeout``, which also applies before any rate
#: is known.
HANG_FACTOR = 50.0
HANG_MIN_SECONDS = 30.0


def _options_tag(build_options: str) -> str:
    bo = " ".join(build_options.split())
    return "" if not bo else "-o" + hashlib.sha1(bo.encode()).hexdigest()[:8]


def stream_prefix(pool: str, job: int, target, build_options: str) -> str:
    """The start of the unit ids of a campaign stream: ``<pool>-j<job>-<name>.<precision>
    .w<width>[-o<sha1 of build options, 8 hex>]``."""
    return f"{pool}-j{job}-{Target.of(target).id}{_options_tag(build_options)}"


def unit_id(pool: str, job: int, target, build_options: str, serial: int) -> str:
    """The id of unit ``serial`` of a stream of drawn units: ``<stream prefix>-<serial,
    6 digits>``.  File-name safe except for a conversion's parentheses and comma, which
    are kept (they name the conversion)."""
    return f"{stream_prefix(pool, job, target, build_options)}-{serial:06d}"


class Wait(NamedTuple):
    """``Scheduler.lease``'s answer when the pool has nothing now but units leased
    elsewhere may yet come back: ask again after ``seconds``."""

    seconds: float


@dataclass(frozen=True)
class Ticket:
    """A unit leased to a device: the ``unit`` (recipes not drawn yet), the ``pool`` and
    ``job`` of its stream, its ``serial`` in it, and ``isolate`` (a retry after a crash or
    hang: the device runs nothing else meanwhile).  ``to_json``/``from_json`` are its
    journal form; ``from_json`` also reads the specs journals held before units were
    typed, so a campaign journaled by an older version resumes."""

    unit: WorkUnit
    pool: str
    job: int
    serial: int
    isolate: bool = False

    @property
    def unit_id(self) -> str:
        return self.unit.unit_id

    @property
    def size(self) -> int:
        """Inputs the unit has (0 for the special pool, whose size is not known yet)."""
        return int(self.unit.size or 0)

    @property
    def stream_key(self) -> tuple:
        return (self.pool, self.job, tuple(self.unit.target), self.unit.build_options)

    def to_json(self) -> dict:
        """The journal's form of the ticket (JSON-able)."""
        u, src = self.unit, self.unit.source
        if isinstance(src, IndexRange):
            what = {"range": {"start": src.start, "count": src.count}}
        elif isinstance(src, Special):
            what = {"special": {"seed": src.seed, "replay": [list(t) for t in src.replay]}}
        else:           # a drift unit's recipes are fixed at creation: journaled
            what = {"drawn": {"seed": src.seed, "sizes": list(src.sizes),
                              **({"recipes": list(src.recipes)} if src.recipes else {})}}
        return {"unit_id": u.unit_id, "pool": self.pool, "job": self.job,
                "target": list(u.target), "build_options": u.build_options,
                "serial": self.serial, "size": u.size, "input": what,
                **({"against": u.against} if u.against else {})}

    @classmethod
    def from_json(cls, d: dict) -> "Ticket":
        """A ticket from ``to_json``'s form, or from an older journal's spec (keys
        ``seed``, ``per_recipe``, ``recipes_per_unit``, ``size``, ``sweep``, ``replay``).
        Raises KeyError or ValueError for neither."""
        target = Target.of(d["target"])
        serial, bo = int(d["serial"]), str(d.get("build_options") or "")
        what = d.get("input")
        if what is None:        # a spec of the journal before units were typed
            if d.get("sweep"):
                span = IndexRange(int(d["sweep"]["start"]), int(d["sweep"]["count"]))
                unit = stream_unit(d["unit_id"], target, serial, 0, span=span,
                                   build_options=bo)
            else:
                sizes = split_size(d["size"]) if d.get("size") else \
                    [int(d["per_recipe"])] * max(1, int(d["recipes_per_unit"]))
                unit = stream_unit(d["unit_id"], target, serial, int(d["seed"]), sizes,
                                   d.get("replay", ()), bo)
        elif "range" in what:
            r = what["range"]
            unit = WorkUnit(d["unit_id"], target, IndexRange(int(r["start"]), int(r["count"])),
                            bo)
        elif "special" in what:
            sp = what["special"]
            unit = WorkUnit(d["unit_id"], target, Special(
                int(sp["seed"]), tuple(tuple(int(b) for b in t) for t in sp["replay"])), bo)
        else:
            dr = what["drawn"]
            recipes = tuple(dr["recipes"]) if dr.get("recipes") else None
            unit = WorkUnit(d["unit_id"], target,
                            Drawn(int(dr["seed"]), tuple(int(n) for n in dr["sizes"]),
                                  recipes), bo)
        if d.get("against"):
            unit = replace(unit, against=str(d["against"]))
        return cls(unit, str(d["pool"]), int(d["job"]), serial, bool(d.get("isolate")))


@dataclass
class Stream:
    """One sequence of units: a job's target with one build-options set on one pool.

    ``max_units``: serials ``0 .. max_units-1`` exist (None: unbounded); ``max_inputs``:
    the recipe units stop once this many inputs are issued; ``ranges``: a sweep stream's
    units ((id suffix, IndexRange) per serial: ``fuzzfarm.orchestrate.ranges``); ``prefix``:
    the start of its unit ids (default ``stream_prefix``); ``against``: a compare job's
    other front end (``WorkUnit.against``), None for the others."""

    pool: str
    job: int
    source: str
    target: tuple
    build_options: str
    seed: int
    max_units: int | None = None
    max_inputs: int | None = None
    ranges: tuple = ()
    prefix: str = ""
    next_serial: int = 0
    issued_inputs: int = 0
    against: str | None = None

    def __post_init__(self):
        self.target = Target.of(self.target)
        if not self.prefix:
            self.prefix = stream_prefix(self.pool, self.job, self.target, self.build_options)
        if self.source == "sweep" or self.ranges:      # a drift job's swept binary16
            self.max_units = len(self.ranges)

    @property
    def key(self) -> tuple:
        return (self.pool, self.job, tuple(self.target), self.build_options)

    @property
    def exhausted(self) -> bool:
        if self.max_units is not None and self.next_serial >= self.max_units:
            return True
        return (self.max_inputs is not None and self.next_serial > 0
                and self.issued_inputs >= self.max_inputs)


def streams_for(campaign, pool: str, precisions, selected_jobs=None) -> list[Stream]:
    """The streams of ``campaign`` (a fuzzfarm.orchestrate.campaign.Campaign) for ``pool`` (a device
    fingerprint) whose device supports ``precisions`` (``work.session.capabilities_of``:
    precisions, and 'spirv' for SPIR-V targets).  ``selected_jobs``: the job numbers
    that apply to this pool (a job's ``devices`` selectors are matched by the caller, who
    knows the devices); None means every job."""
    from fuzzfarm.orchestrate.ranges import range_plan
    from fuzzfarm.work.kinds import kind_of
    have = set(precisions)
    out = []
    for job in campaign.jobs:
        if selected_jobs is not None and job.number not in selected_jobs:
            continue
        for target in map(Target.of, job.targets):
            if not target.requirements <= have:
                continue
            for bo in job.build_options:
                ranges = ()
                if job.source == "sweep":
                    space = kind_of(target).space(target)
                    chunks = -(-space.size // (1 << job.chunk_bits))
                    if job.units is not None:       # the first chunks only
                        chunks = min(chunks, job.units)
                    ranges = range_plan(space, 1 << job.chunk_bits, range(chunks))
                elif job.source == "drift" and drift.exhaustive(target):   # all 2^16
                    space = kind_of(target).space(target)
                    ranges = range_plan(space, space.size, range(1))
                s = Stream(pool, job.number, job.source, target, bo, job.seed, ranges=ranges,
                           against=job.against)
                if job.source == "catalogue":
                    s.max_units = 1
                elif job.source == "drift" and not ranges:
                    s.max_units = drift.DRIFT_UNITS
                elif job.source != "sweep":
                    if job.units is not None:
                        s.max_units = job.units + 1       # + the special-value unit 0
                    s.max_inputs = job.inputs
                out.append(s)
    return out


@dataclass
class _Lease:
    ticket: Ticket
    device: str
    since: float


@dataclass
class _Device:
    pool: str
    on_device: list = field(default_factory=list)   # unit ids submitted, not collected
    since: float = 0.0                               # when the oldest one became oldest
    stats: dict = field(default_factory=lambda: {"units": 0, "inputs": 0, "failures": 0,
                                                 "notes": 0, "faults": 0, "retries": 0,
                                                 "busy_seconds": 0.0, "lost": 0})
    alive: bool = True


class Scheduler:
    """The state of a campaign's work units (see the module docstring).

    ``streams``: every Stream of every pool; ``done``: ids of units already done (their
    stats files exist); ``journal``: called with each event to make durable (``{"event":
    "issue", "spec": Ticket.to_json()}``, ``{"event": "strike", "unit_id": ...,
    "strikes": n}``) before the unit is handed out; ``sizer``: a
    fuzzfarm.work.make.UnitSizer for adaptive sizes, or
    None with ``unit_inputs`` fixed; ``deadline``: a ``clock()`` time after which no new
    unit is issued (retries still are); ``input_budget``: no new unit once this many
    inputs have been issued; ``per_recipe``/``recipes_per_unit``: the size of a recipe unit
    when neither fixes one; ``replay``: {(function, precision): [input-bit tuples]} that
    unit 0 of a recipes or catalogue stream runs first (failures saved by ``fuzzfarm
    repro``; the unit carries them, so a re-issued unit is the same).  ``clock`` is
    injectable for tests.
    """

    def __init__(self, streams, done=(), journal=None, sizer=None, unit_inputs=None,
                 deadline: float | None = None, input_budget: int | None = None,
                 per_recipe: int = 8192, recipes_per_unit: int = 4, clock=time.time,
                 replay: dict | None = None):
        self.streams: dict[str, list[Stream]] = defaultdict(list)
        self.all_streams: list[Stream] = list(streams)   # exhausted ones too (checkpoint)
        for s in self.all_streams:
            self.streams[s.pool].append(s)
        self.done: set = set(done)
        self.journal = journal or (lambda event: None)
        self.sizer, self.unit_inputs = sizer, unit_inputs
        self.deadline, self.input_budget = deadline, input_budget
        self.per_recipe, self.recipes_per_unit = per_recipe, recipes_per_unit
        self.clock = clock
        #: when the first unit with a failure was completed (a ``clock()`` time; None
        #: while none has been)
        self.first_failure_at: float | None = None
        self.replay = replay or {}
        self.stopped = False
        self.issued_inputs = 0
        self.retry: dict[str, deque] = defaultdict(deque)   # pool -> tickets to re-issue
        self.leases: dict[str, _Lease] = {}                 # unit id -> lease
        self.strikes: dict[str, int] = defaultdict(int)
        self.faults: list[tuple] = []                       # (unit id, reason) of faults
        self.withdrawn: list[tuple] = []                    # (pool, target, build options)
        #: (pool, target) -> the slowest device seconds per input seen (watchdog)
        self.seconds_per_input: dict[tuple, float] = {}
        self.devices: dict[str, _Device] = {}
        self.cursor: dict[str, int] = defaultdict(int)
        self.counts = {"issued": 0, "completed": 0, "retried": 0, "faults": 0}

    # ---------------------------------------------------------------- resume
    def restore(self, events) -> None:
        """Replay a journal (the events ``journal`` was given, in order) after a crash:
        every issued unit not done is queued for re-issue as it was issued (its strikes
        kept); each stream continues after the largest serial issued."""
        issued: dict[str, Ticket] = {}
        by_key = {s.key: s for s in self.all_streams}
        for ev in events:
            if ev.get("event") == "streams":        # a checkpoint (``checkpoint``)
                for (pool, job, target, bo), serial, inputs in ev["streams"]:
                    s = by_key.get((pool, job, tuple(Target.of(target)), bo))
                    if s is not None:
                        s.next_serial = max(s.next_serial, int(serial))
                        s.issued_inputs += int(inputs)
                self.issued_inputs += int(ev["issued_inputs"])
            elif ev.get("event") == "issue":
                t = Ticket.from_json(ev["spec"])
                issued[t.unit_id] = t
            elif ev.get("event") == "strike":
                self.strikes[ev["unit_id"]] = max(self.strikes[ev["unit_id"]],
                                                  int(ev["strikes"]))
            elif ev.get("event") == "fault":
                self.done.add(ev["unit_id"])
        for uid, t in issued.items():
            s = by_key.get(t.stream_key)
            if s is not None:
                s.next_serial = max(s.next_serial, t.serial + 1)
                s.issued_inputs += t.size
            self.issued_inputs += t.size
            if uid not in self.done:
                self.retry[t.pool].append(replace(t, isolate=self.strikes[uid] > 0))

    def checkpoint(self) -> list[dict]:
        """Events from which ``restore`` rebuilds what the whole journal so far would give
        it: one "streams" event (each stream's next serial and the inputs issued by units
        not listed after it) and the "issue" (and "strike") events of every unit issued
        and not done, leased or waiting for a retry.  A journal rewritten to these
        (``store.Journal.rewrite``) grows with the units in flight, not with the campaign's
        length (issue 18: an "issue" line per unit was ~2 GB a day on one H100)."""
        pending: dict[str, Ticket] = {}
        for t in [lease.ticket for lease in self.leases.values()] + \
                [t for q in self.retry.values() for t in q]:
            if t.unit_id not in self.done:
                pending.setdefault(t.unit_id, t)
        held: dict = defaultdict(int)
        for t in pending.values():
            held[t.stream_key] += t.size
        streams = [[[s.pool, s.job, list(s.target), s.build_options], s.next_serial,
                    s.issued_inputs - held[s.key]]
                   for s in self.all_streams]
        events = [{"event": "streams", "streams": streams,
                   "issued_inputs": self.issued_inputs - sum(held.values())}]
        for uid, t in pending.items():
            events.append({"event": "issue", "spec": t.to_json()})
            if self.strikes[uid]:
                events.append({"event": "strike", "unit_id": uid,
                               "strikes": self.strikes[uid]})
        return events

    # ---------------------------------------------------------------- devices
    def add_device(self, device: str, pool: str) -> None:
        """Register ``device`` (a key naming one actor, e.g. node and index) of ``pool``."""
        self.devices[device] = _Device(pool)

    def on_device(self, device: str, unit_ids) -> None:
        """``device`` now has ``unit_ids`` submitted and not yet collected (in order)."""
        d = self.devices[device]
        ids = list(unit_ids)
        if not ids or not d.on_device or ids[0] != d.on_device[0]:
            d.since = self.clock()
        d.on_device = ids

    def limit(self, unit: str, timeout: float) -> float:
        """The watchdog limit in seconds of ``unit`` on its device: derived from the time
        units of its target take on its pool (see HANG_FACTOR), at most ``timeout``."""
        lease = self.leases.get(unit)
        if lease is None:
            return timeout
        t = lease.ticket
        rate = self.seconds_per_input.get((t.pool, tuple(t.unit.target)))
        if rate is None or not t.size:
            return timeout
        return min(timeout, max(HANG_MIN_SECONDS, HANG_FACTOR * rate * t.size))

    def overdue(self, timeout: float) -> list[str]:
        """Devices whose oldest unit on the device has been there past its watchdog
        limit (``limit``: from its expected time, at most ``timeout`` seconds)."""
        now = self.clock()
        return [k for k, d in self.devices.items()
                if d.alive and d.on_device
                and now - d.since > self.limit(d.on_device[0], timeout)]

    # ---------------------------------------------------------------- leasing
    def _new_ticket(self, s: Stream) -> Ticket:
        serial = s.next_serial
        if s.ranges:
            suffix, span = s.ranges[serial]
            unit = stream_unit(f"{s.prefix}-{suffix}", s.target, serial, s.seed, span=span,
                               build_options=s.build_options)
        elif s.source == "drift":       # its fixed sample (work.drift), no special pool
            unit = drift_unit(f"{s.prefix}-{serial:06d}", s.target, serial, s.seed,
                              s.build_options)
        elif serial == 0:
            unit = stream_unit(f"{s.prefix}-{serial:06d}", s.target, 0, s.seed,
                               replay=self.replay.get(tuple(s.target[:2]), ()),
                               build_options=s.build_options)
        else:
            if self.unit_inputs is not None:
                size = int(self.unit_inputs)
            elif self.sizer is not None:
                size = self.sizer.next_size((s.pool, tuple(s.target)))
            else:
                size = self.per_recipe * self.recipes_per_unit
            if s.max_inputs is not None:
                size = max(1, min(size, s.max_inputs - s.issued_inputs))
            unit = stream_unit(f"{s.prefix}-{serial:06d}", s.target, serial, s.seed,
                               split_size(size), build_options=s.build_options)
        if s.against is not None:
            unit = replace(unit, against=s.against)
        s.next_serial += 1
        ticket = Ticket(unit, s.pool, s.job, serial)
        s.issued_inputs += ticket.size
        return ticket

    def _accepting_new(self) -> bool:
        if self.stopped:
            return False
        if self.deadline is not None and self.clock() >= self.deadline:
            return False
        return self.input_budget is None or self.issued_inputs < self.input_budget

    def lease(self, device: str) -> Ticket | Wait | None:
        """The next unit for ``device``; ``Wait`` when its pool has nothing now but units
        leased elsewhere may yet come back; None when the pool is finished (or the
        campaign stopped).  Retries come first, then new units round-robin over the pool's
        streams.  Raises KeyError for an unknown device."""
        d = self.devices[device]
        if self.stopped:
            return None
        q = self.retry[d.pool]
        while q:
            t = q.popleft()
            if t.unit_id in self.done:
                continue
            self.counts["retried"] += 1
            d.stats["retries"] += 1
            return self._grant(t, device)
        if self._accepting_new():
            streams = [s for s in self.streams[d.pool] if not s.exhausted]
            self.streams[d.pool] = streams
            while streams:
                k = self.cursor[d.pool] % len(streams)
                self.cursor[d.pool] += 1
                t = self._new_ticket(streams[k])
                if t.unit_id in self.done:          # done before a resume
                    if streams[k].exhausted:
                        streams.pop(k)
                    continue
                self.issued_inputs += t.size
                self.counts["issued"] += 1
                self.journal({"event": "issue", "spec": t.to_json()})
                return self._grant(t, device)
        if any(lease.ticket.pool == d.pool for lease in self.leases.values()):
            return Wait(0.25)
        return None

    def _grant(self, ticket: Ticket, device: str) -> Ticket:
        self.leases[ticket.unit_id] = _Lease(ticket, device, self.clock())
        return ticket

    def complete(self, unit: str, device: str | None = None, inputs: int = 0,
                 failures: int = 0, notes: int = 0, seconds: float = 0.0,
                 target=None, check_seconds: float | None = None, resident: bool = False,
                 device_seconds: float = 0.0) -> bool:
        """Unit ``unit`` is done (its files are written); ``check_seconds``,
        ``device_seconds`` and ``resident`` go to the sizer (``UnitSizer.observe``).
        Returns False when it was done already (a late duplicate): nothing is counted
        twice."""
        lease = self.leases.pop(unit, None)
        if unit in self.done:
            return False
        self.done.add(unit)
        self.counts["completed"] += 1
        dev = device or (lease.device if lease else None)
        if failures and self.first_failure_at is None:
            self.first_failure_at = self.clock()
        if dev in self.devices:
            st = self.devices[dev].stats
            st["units"] += 1
            st["inputs"] += int(inputs)
            st["failures"] += int(failures)
            st["notes"] += int(notes)
            st["busy_seconds"] += float(seconds)
        if self.sizer is not None and target is not None and check_seconds:
            pool = self.devices[dev].pool if dev in self.devices else None
            self.sizer.observe((pool, tuple(Target.of(target))), inputs, check_seconds, resident,
                               device_seconds)
        if target is not None and inputs and dev in self.devices:
            device_s = float(seconds) - float(check_seconds or 0.0)
            if device_s > 0:
                k = (self.devices[dev].pool, tuple(Target.of(target)))
                self.seconds_per_input[k] = max(self.seconds_per_input.get(k, 0.0),
                                                device_s / int(inputs))
        return True

    def lost(self, device: str, reason: str) -> list[Ticket]:
        """``device`` lost its units (``reason``: "crash", "hang" or "node"; see the
        module docstring).  Every unit leased to it and not done goes back to its pool's
        retry queue, except those that now have ``FAULT_STRIKES`` strikes: those are
        returned as device faults of ``reason``, to be recorded by the caller and then
        passed to ``complete``.  With reason "node" the device is marked gone."""
        if reason not in ("crash", "hang", "node"):
            raise ValueError(f"unknown reason {reason!r}")
        d = self.devices[device]
        d.stats["lost"] += 1
        struck = set(d.on_device) if reason in ("crash", "hang") else set()
        mine = [u for u, lease in self.leases.items() if lease.device == device]
        faults, back = [], []
        for u in mine:
            t = self.leases.pop(u).ticket
            if u in self.done:
                continue
            if u in struck:
                self.strikes[u] += 1
                self.journal({"event": "strike", "unit_id": u, "strikes": self.strikes[u],
                              "reason": reason})
                if self.strikes[u] >= FAULT_STRIKES:
                    faults.append(t)
                    continue
            back.append(replace(t, isolate=self.strikes[u] > 0))
        # first in the queue, in their issue order (the leases are kept in that order)
        for t in reversed(back):
            self.retry[d.pool].appendleft(t)
        for t in faults:
            self.faults.append((t.unit_id, reason))
            self.counts["faults"] += 1
            d.stats["faults"] += 1
        d.on_device = []
        if reason == "node":
            d.alive = False
        return faults

    def withdraw(self, pool: str, target, build_options: str) -> int:
        """Issue no more units of ``target`` with ``build_options`` to ``pool`` (its kernel
        does not build there, or its runs keep failing: recorded as a device fault by the
        caller).  Drops the matching streams of every job and the queued retries; units
        already leased finish (the device skips them).  Returns the streams dropped."""
        key = (tuple(Target.of(target)), " ".join(build_options.split()))

        def match(t, bo):
            return (tuple(t), " ".join(bo.split())) == key
        before = len(self.streams[pool])
        self.streams[pool] = [s for s in self.streams[pool]
                              if not match(s.target, s.build_options)]
        self.retry[pool] = deque(t for t in self.retry[pool]
                                 if not match(t.unit.target, t.unit.build_options))
        self.withdrawn.append((pool, key[0], key[1]))
        return before - len(self.streams[pool])

    def record_fault(self, unit: str, device: str, reason: str) -> bool:
        """Unit ``unit`` ended as a device fault the device itself recorded (a build
        failure, an enqueue error; its files are written): done, and counted as a fault.
        Returns False when it was done already."""
        if not self.complete(unit, device):
            return False
        self.faults.append((unit, reason))
        self.counts["faults"] += 1
        if device in self.devices:
            self.devices[device].stats["faults"] += 1
        return True

    def report(self, device: str, r) -> bool:
        """A checked unit's ``r`` (a work.check.UnitReport) from ``device``: done
        (``complete``) with its counts and seconds, or a device fault (``record_fault``)
        where its check found one.  Returns False when it was done already."""
        if r.fault is not None:
            return self.record_fault(r.unit_id, device, r.fault)
        return self.complete(r.unit_id, device, r.inputs, r.failures, r.notes,
                             r.task_seconds + r.device_seconds, r.target, r.task_seconds,
                             resident=r.resident, device_seconds=r.device_seconds)

    def revive(self, device: str) -> None:
        """``device`` is back (its actor restarted)."""
        self.devices[device].alive = True

    def stop(self) -> None:
        """Issue nothing more (units leased now still finish)."""
        self.stopped = True

    # ---------------------------------------------------------------- state
    def pool_finished(self, pool: str) -> bool:
        """No unit of ``pool`` is leased, queued for retry or left to issue."""
        if any(lease.ticket.pool == pool for lease in self.leases.values()):
            return False
        if any(t.unit_id not in self.done for t in self.retry[pool]):
            return False
        return not self._accepting_new() or all(s.exhausted for s in self.streams[pool])

    def stranded(self) -> list[str]:
        """Pools that have work left but no live device."""
        live = {d.pool for d in self.devices.values() if d.alive}
        return sorted(p for p in {d.pool for d in self.devices.values()}
                      if p not in live and not self.pool_finished(p))

    def snapshot(self) -> dict:
        """Progress as JSON-able data: per device its pool and stats, per pool units
        leased, queued for retry and done, and the campaign's counts."""
        pools: dict = {}
        for p in {d.pool for d in self.devices.values()}:
            pools[p] = {"leased": sum(1 for x in self.leases.values() if x.ticket.pool == p),
                        "retry": len(self.retry[p]), "finished": self.pool_finished(p)}
        return {"devices": {k: {"pool": d.pool, "alive": d.alive,
                                "on_device": len(d.on_device), **d.stats}
                            for k, d in self.devices.items()},
                "pools": pools, "done": len(self.done), "issued_inputs": self.issued_inputs,
                "stopped": self.stopped, "first_failure_at": self.first_failure_at,
                **self.counts}

