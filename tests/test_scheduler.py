"""The scheduler of work units (fuzzfarm.orchestrate.scheduler): pure bookkeeping, no Ray."""
from __future__ import annotations

import pytest

from fuzzfarm.orchestrate.scheduler import FAULT_STRIKES, Scheduler, Stream, Wait, unit_id
from fuzzfarm.work.make import UnitSizer
from fuzzfarm.work.unit import Drawn, IndexRange

T1 = ("sinpi", "binary32", 1)
T2 = ("cospi", "binary32", 1)


def finite_streams(pools=("aaaaaaaaaaaa",), units=3, options=("",)):
    return [Stream(p, 1, "recipes", t, bo, 7, max_units=units)
            for p in pools for t in (T1, T2) for bo in options]


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def drain(s: Scheduler, device: str, complete=True) -> list:
    """Lease everything the device gets (completing each one at once)."""
    got = []
    while True:
        spec = s.lease(device)
        if spec is None or isinstance(spec, Wait):
            return got
        got.append(spec)
        if complete:
            s.complete(spec.unit_id, device, inputs=spec.size)


def test_unit_ids_name_pool_job_target_options_and_serial():
    assert unit_id("abc", 2, T1, "", 5) == "abc-j2-sinpi.binary32.w1-000005"
    with_opts = unit_id("abc", 2, T1, "-cl-fast-relaxed-math", 5)
    assert with_opts.startswith("abc-j2-sinpi.binary32.w1-o") and with_opts.endswith("-000005")
    # whitespace does not change the options' identity; different options do
    assert unit_id("abc", 2, T1, " -cl-fast-relaxed-math ", 5) == with_opts
    assert unit_id("abc", 2, T1, "-cl-denorms-are-zero", 5) != with_opts


def test_a_finite_campaign_issues_each_unit_once_then_finishes():
    s = Scheduler(finite_streams(units=3, options=("", "-cl-denorms-are-zero")))
    s.add_device("d0", "aaaaaaaaaaaa")
    got = drain(s, "d0")
    ids = [g.unit_id for g in got]
    assert len(ids) == len(set(ids)) == 2 * 2 * 3          # targets x options x units
    assert {g.serial for g in got} == {0, 1, 2}
    assert s.lease("d0") is None and s.pool_finished("aaaaaaaaaaaa")
    # unit 0 is the special-value unit (no size); the others have the default size
    assert all((g.unit.size is None) == (g.serial == 0) for g in got)


def test_devices_of_one_pool_share_its_units_and_pools_are_separate():
    s = Scheduler(finite_streams(pools=("aaaaaaaaaaaa", "bbbbbbbbbbbb"), units=4))
    for k, p in (("a0", "aaaaaaaaaaaa"), ("a1", "aaaaaaaaaaaa"), ("b0", "bbbbbbbbbbbb")):
        s.add_device(k, p)
    a_ids = []
    while True:     # two devices of pool a alternate
        progressed = False
        for dev in ("a0", "a1"):
            spec = s.lease(dev)
            if spec and not isinstance(spec, Wait):
                a_ids.append(spec.unit_id)
                s.complete(spec.unit_id, dev)
                progressed = True
        if not progressed:
            break
    b_ids = [g.unit_id for g in drain(s, "b0")]
    assert len(a_ids) == len(set(a_ids)) == 8 and len(b_ids) == 8
    assert all(u.startswith("aaaaaaaaaaaa-") for u in a_ids)
    assert all(u.startswith("bbbbbbbbbbbb-") for u in b_ids)
    snap = s.snapshot()
    assert snap["devices"]["a0"]["units"] + snap["devices"]["a1"]["units"] == 8


def test_a_pool_waits_while_another_device_holds_units_that_may_come_back():
    s = Scheduler(finite_streams(units=1))
    s.add_device("d0", "aaaaaaaaaaaa")
    s.add_device("d1", "aaaaaaaaaaaa")
    held = [s.lease("d1"), s.lease("d1")]           # every unit of the pool, on d1
    assert s.lease("d0") == Wait(0.25)
    s.lost("d1", "node")
    got = drain(s, "d0")
    assert sorted(g.unit_id for g in got) == sorted(h.unit_id for h in held)
    assert s.lease("d0") is None


def test_resume_after_a_crash_gives_the_same_units_as_an_uninterrupted_run():
    pool = "aaaaaaaaaaaa"

    def fresh(journal=None, done=()):
        return Scheduler(finite_streams(units=5), done=done, journal=journal,
                         unit_inputs=4096)

    whole = fresh()
    whole.add_device("d", pool)
    everything = {g.unit_id: g for g in drain(whole, "d")}

    events: list = []
    first = fresh(journal=events.append)
    first.add_device("d", pool)
    done = set()
    for k in range(7):                       # 7 issued, 4 of them written, then the crash
        spec = first.lease("d")
        if k % 2 == 0:
            first.complete(spec.unit_id, "d")
            done.add(spec.unit_id)
    second = fresh(done=done)
    second.restore(events)
    second.add_device("d", pool)
    rest = {g.unit_id: g for g in drain(second, "d")}
    assert not done & set(rest)                              # nothing twice
    assert done | set(rest) == set(everything)               # nothing lost
    for u, spec in rest.items():                             # the same units
        assert spec.unit == everything[u].unit and spec.size == everything[u].size


def test_resume_keeps_adaptive_sizes_as_journaled():
    pool = "aaaaaaaaaaaa"
    events: list = []
    sizer = UnitSizer(0.5, 1024, 1 << 20)
    s = Scheduler([Stream(pool, 1, "recipes", T1, "", 7, max_units=6)], journal=events.append,
                  sizer=sizer)
    s.add_device("d", pool)
    first = s.lease("d")
    s.complete(first.unit_id, "d", inputs=2000, target=T1, check_seconds=0.01)
    issued = [s.lease("d") for _ in range(3)]     # sized by the rate measured
    assert issued[-1].size > 1024
    again = Scheduler([Stream(pool, 1, "recipes", T1, "", 7, max_units=6)],
                      done={first.unit_id}, sizer=UnitSizer(0.5, 1024, 1 << 20))
    again.restore(events)
    again.add_device("d", pool)
    redo = [again.lease("d") for _ in range(3)]
    assert [r.size for r in redo] == [i.size for i in issued]
    assert [r.unit_id for r in redo] == [i.unit_id for i in issued]


def test_a_crash_strikes_the_units_on_the_device_and_retries_them_alone():
    s = Scheduler(finite_streams(units=4))
    s.add_device("d", "aaaaaaaaaaaa")
    a, b, c = s.lease("d"), s.lease("d"), s.lease("d")
    s.on_device("d", [b.unit_id])                 # a is being checked, c queued
    assert s.lost("d", "crash") == []
    assert s.strikes[b.unit_id] == 1 and not s.strikes[a.unit_id]
    again = [s.lease("d") for _ in range(3)]
    assert [x.unit_id for x in again] == [a.unit_id, b.unit_id, c.unit_id]
    assert [x.isolate for x in again] == [False, True, False]
    # b crashes its device again, alone: a device fault, never retried
    s.on_device("d", [b.unit_id])
    faults = s.lost("d", "crash")
    assert [f.unit_id for f in faults] == [b.unit_id] and s.faults[-1] == (b.unit_id, "crash")
    assert s.strikes[b.unit_id] == FAULT_STRIKES
    s.complete(b.unit_id)                          # the caller wrote the fault
    rest = drain(s, "d")
    assert b.unit_id not in {r.unit_id for r in rest}
    assert {a.unit_id, c.unit_id} <= {r.unit_id for r in rest}


def test_a_lost_node_strikes_nothing_and_strands_a_pool_without_devices():
    s = Scheduler(finite_streams(units=2))
    s.add_device("d", "aaaaaaaaaaaa")
    spec = s.lease("d")
    s.on_device("d", [spec.unit_id])
    assert s.lost("d", "node") == []
    assert not s.strikes[spec.unit_id]
    assert s.stranded() == ["aaaaaaaaaaaa"]
    s.add_device("e", "aaaaaaaaaaaa")
    assert spec.unit_id in {g.unit_id for g in drain(s, "e")}
    assert s.stranded() == []


def test_a_unit_on_the_device_past_the_timeout_is_overdue():
    clock = Clock()
    s = Scheduler(finite_streams(units=3), clock=clock)
    s.add_device("d", "aaaaaaaaaaaa")
    a, b = s.lease("d"), s.lease("d")
    s.on_device("d", [a.unit_id])
    clock.t += 50
    s.on_device("d", [a.unit_id, b.unit_id])     # b queued behind: a's clock runs on
    assert s.overdue(60) == []
    clock.t += 20
    assert s.overdue(60) == ["d"]
    s.on_device("d", [b.unit_id])                   # a came back: b's clock starts
    assert s.overdue(60) == []
    faults = s.lost("d", "hang")
    assert faults == [] and s.strikes[b.unit_id] == 1


def test_a_late_duplicate_completion_counts_nothing():
    s = Scheduler(finite_streams(units=1))
    s.add_device("d", "aaaaaaaaaaaa")
    spec = s.lease("d")
    assert s.complete(spec.unit_id, "d", inputs=10, failures=1)
    assert not s.complete(spec.unit_id, "d", inputs=10, failures=1)
    assert s.snapshot()["devices"]["d"]["failures"] == 1
    assert s.snapshot()["devices"]["d"]["inputs"] == 10


def test_a_unit_report_completes_its_unit_or_counts_its_device_fault():
    from fuzzfarm.work.check import UnitReport
    s = Scheduler(finite_streams(units=2))
    s.add_device("d", "aaaaaaaaaaaa")
    checked, faulted = s.lease("d"), s.lease("d")
    assert s.report("d", UnitReport(checked.unit_id, T1, inputs=10, failures=2, notes=1))
    assert s.report("d", UnitReport(faulted.unit_id, T1, fault="integer_arithmetic"))
    assert not s.report("d", UnitReport(faulted.unit_id, T1, fault="integer_arithmetic"))
    d = s.snapshot()["devices"]["d"]
    assert (d["inputs"], d["failures"], d["notes"], d["faults"]) == (10, 2, 1, 1)
    assert s.faults == [(faulted.unit_id, "integer_arithmetic")]
    assert {checked.unit_id, faulted.unit_id} <= s.done


def test_budgets_end_the_issue_of_new_units():
    clock = Clock()
    s = Scheduler([Stream("p", 1, "recipes", T1, "", 7)], unit_inputs=1000,
                  input_budget=2500, clock=clock)
    s.add_device("d", "p")
    got = drain(s, "d")
    assert [g.unit.size for g in got] == [None, 1000, 1000, 1000]    # stops at >= 2500
    t = Scheduler([Stream("p", 1, "recipes", T1, "", 7)], unit_inputs=1000,
                  deadline=clock.t + 10, clock=clock)
    t.add_device("d", "p")
    first = t.lease("d")
    assert t.lease("d") is not None and first is not None
    clock.t += 11
    assert t.lease("d") == Wait(0.25)       # units leased may yet come back
    t.complete(first.unit_id)
    t.lost("d", "crash")                        # the other one is retried after the deadline
    retried = t.lease("d")
    assert retried.serial == 1
    t.complete(retried.unit_id)
    assert t.lease("d") is None


def test_a_stream_input_budget_truncates_its_last_unit():
    s = Scheduler([Stream("p", 1, "recipes", T1, "", 7, max_inputs=2500)], unit_inputs=1000)
    s.add_device("d", "p")
    assert [g.unit.size for g in drain(s, "d")] == [None, 1000, 1000, 500]


def test_sweep_and_catalogue_streams():
    from types import SimpleNamespace

    from fuzzfarm.orchestrate.scheduler import streams_for
    jobs = (SimpleNamespace(number=1, source="sweep", targets=(T1,), build_options=("",),
                            seed=3, chunk_bits=30, units=None, inputs=None, against=None),
            SimpleNamespace(number=2, source="catalogue", targets=(T1, T2),
                            build_options=("",), seed=3, chunk_bits=22, units=None,
                            inputs=None, against=None))
    streams = streams_for(SimpleNamespace(jobs=jobs), "p", ["binary32"])
    s = Scheduler(streams)
    s.add_device("d", "p")
    got = drain(s, "d")
    spans = sorted((g.unit.source.start, g.unit.source.count) for g in got
                   if isinstance(g.unit.source, IndexRange))
    at = 0                  # the range units cover the space once, in chunks or parts
    for start, count in spans:
        assert start == at and count <= 1 << 30
        at += count
    assert at == 1 << 32
    sweep_ids = [g.unit_id for g in got if isinstance(g.unit.source, IndexRange)]
    assert "p-j1-sinpi.binary32.w1-sweep000001" in sweep_ids       # normal values: whole
    assert "p-j1-sinpi.binary32.w1-sweep000000-000" in sweep_ids   # zeros, subnormals: parts
    assert sorted(g.unit_id for g in got if g.job == 2) == sorted(
        [unit_id("p", 2, T1, "", 0), unit_id("p", 2, T2, "", 0)])


def test_unknown_reason_is_an_error():
    s = Scheduler(finite_streams())
    s.add_device("d", "aaaaaaaaaaaa")
    with pytest.raises(ValueError, match="unknown reason"):
        s.lost("d", "gremlins")


def test_unit_zero_carries_the_replayed_examples():
    s = Scheduler(finite_streams(units=2), replay={("sinpi", "binary32"): [(0x4AFFFFFE,)]})
    s.add_device("d", "aaaaaaaaaaaa")
    got = {(g.unit.target.name, g.serial): g for g in drain(s, "d")}
    assert got[("sinpi", 0)].unit.source.replay == ((0x4AFFFFFE,),)
    assert got[("cospi", 0)].unit.source.replay == ()
    assert isinstance(got[("sinpi", 1)].unit.source, Drawn)


def test_the_watchdog_limit_follows_the_time_a_target_takes():
    """A hang is declared after HANG_FACTOR times the expected device time of the unit
    (the slowest seconds per input seen for its target on the pool), at least
    HANG_MIN_SECONDS, at most the campaign's timeout; the timeout before any rate."""
    from fuzzfarm.orchestrate.scheduler import HANG_FACTOR, HANG_MIN_SECONDS
    clock = Clock()
    s = Scheduler(finite_streams(units=6), clock=clock, unit_inputs=1000)
    s.add_device("d", "aaaaaaaaaaaa")
    a = s.lease("d")
    assert s.limit(a.unit_id, 300) == 300                 # nothing measured yet
    s.complete(a.unit_id, "d", inputs=1000, seconds=2.5, target=tuple(a.unit.target),
               check_seconds=0.5)                            # 2 s on the device: 2 ms/input
    b = next(x for x in (s.lease("d"), s.lease("d")) if x.unit.target == a.unit.target)
    assert s.limit(b.unit_id, 300) == HANG_FACTOR * 0.002 * 1000
    assert s.limit(b.unit_id, 60) == 60
    s.on_device("d", [b.unit_id])
    clock.t += HANG_FACTOR * 2 - 1
    assert s.overdue(300) == []
    clock.t += 2
    assert s.overdue(300) == ["d"]
    fast = Scheduler(finite_streams(units=6), clock=clock, unit_inputs=1000)
    fast.add_device("d", "aaaaaaaaaaaa")
    c = fast.lease("d")
    fast.complete(c.unit_id, "d", inputs=1000, seconds=0.011, target=tuple(c.unit.target),
                  check_seconds=0.01)
    c2 = next(x for x in (fast.lease("d"), fast.lease("d")) if x.unit.target == c.unit.target)
    assert fast.limit(c2.unit_id, 300) == HANG_MIN_SECONDS


def test_a_checkpoint_restores_what_the_whole_journal_restores(tmp_path):
    """Scheduler.checkpoint + store.Journal.rewrite (issue 18: the journal grew a line per
    unit issued): a resume from the rewritten journal issues the same units next, retries
    the same unfinished ones (strikes kept), counts the same inputs issued; streams run
    to their end (exhausted) are not started again."""
    from fuzzfarm.store.dataset import Journal, read_journal

    def streams():
        return [Stream("aaaaaaaaaaaa", 1, "recipes", T1, "", 7, max_units=3),
                Stream("aaaaaaaaaaaa", 1, "recipes", T2, "", 7, max_units=40)]

    journal = Journal(tmp_path / "journal.jsonl")
    s = Scheduler(streams(), journal=journal.append, unit_inputs=1000)
    s.add_device("d", "aaaaaaaaaaaa")
    done = []
    for k in range(14):                       # T1 runs out; some units stay unfinished
        spec = s.lease("d")
        if k % 4 != 1:
            s.complete(spec.unit_id, "d", inputs=spec.size)
            done.append(spec.unit_id)
    s.on_device("d", [u for u in s.leases][:1])
    s.lost("d", "crash")                      # strikes one unfinished unit
    whole = read_journal(tmp_path / "journal.jsonl")
    journal.rewrite(s.checkpoint())
    journal.append({"event": "fault", "unit_id": "zzz"})     # appends go on after it
    trimmed = read_journal(tmp_path / "journal.jsonl")
    assert len(trimmed) < len(whole) and trimmed[-1]["unit_id"] == "zzz"

    def resumed(events):
        r = Scheduler(streams(), done=set(done), unit_inputs=1000)
        r.restore(events)
        r.add_device("d", "aaaaaaaaaaaa")
        return r, drain(r, "d", complete=True)

    a, got_a = resumed(whole)
    b, got_b = resumed(trimmed[:-1])
    assert [g.unit_id for g in got_a] == [g.unit_id for g in got_b]
    assert [g.isolate for g in got_a] == [g.isolate for g in got_b]
    assert a.issued_inputs == b.issued_inputs
    assert not any(tuple(g.unit.target) == T1 for g in got_b if g.serial >= 3)
    assert {s_.key: (s_.next_serial, s_.issued_inputs) for s_ in a.all_streams} == \
        {s_.key: (s_.next_serial, s_.issued_inputs) for s_ in b.all_streams}
    journal.close()


def test_a_journal_of_the_untyped_specs_restores_the_same_units():
    """Journals written before units were typed hold dict specs (seed of the stream,
    per_recipe, recipes_per_unit, size, sweep, replay); a resumed campaign reads them into
    the same units: same ids, sources and sizes as a fresh scheduler issues."""
    from fuzzfarm.orchestrate.scheduler import Ticket
    pool = "aaaaaaaaaaaa"
    fresh = Scheduler(finite_streams(units=3), unit_inputs=4096,
                      replay={("sinpi", "binary32"): [(0x4AFFFFFE,)]})
    fresh.add_device("d", pool)
    tickets = drain(fresh, "d", complete=False)

    def old_spec(t):               # the dict the scheduler journaled before Ticket
        d = {"unit_id": t.unit_id, "pool": t.pool, "job": t.job, "source": "recipes",
             "target": list(t.unit.target), "build_options": "", "serial": t.serial,
             "seed": 7, "per_recipe": 8192, "recipes_per_unit": 4, "size": t.unit.size,
             "isolate": False}
        if t.serial == 0 and t.unit.source.replay:
            d["replay"] = [list(r) for r in t.unit.source.replay]
        return d

    for t in tickets:
        assert Ticket.from_json(old_spec(t)) == t
        assert Ticket.from_json(t.to_json()) == t
    old = Ticket.from_json({"unit_id": "p-j1-sin.binary32.w1-000002", "pool": "p", "job": 1,
                            "source": "sweep", "target": ["sin", "binary32", 1],
                            "build_options": "", "serial": 2, "seed": 3, "per_recipe": 8192,
                            "recipes_per_unit": 4, "size": 1 << 22,
                            "sweep": {"start": 2 << 22, "count": 1 << 22}})
    assert old.unit.source == IndexRange(2 << 22, 1 << 22) and old.size == 1 << 22
    resumed = Scheduler(finite_streams(units=3), unit_inputs=4096)
    resumed.restore([{"event": "issue", "spec": old_spec(t)} for t in tickets[:4]])
    resumed.add_device("d", pool)
    again = drain(resumed, "d", complete=False)
    assert [t.unit for t in again] == [t.unit for t in tickets]


def test_the_first_failure_s_time_is_kept():
    clock = Clock()
    s = Scheduler([Stream("p", 1, "recipes", T1, "", 7)], unit_inputs=1000, clock=clock)
    s.add_device("d", "p")
    a, b, c = s.lease("d"), s.lease("d"), s.lease("d")
    clock.t += 3
    s.complete(a.unit_id, "d", inputs=10, failures=0)
    assert s.snapshot()["first_failure_at"] is None        # a unit without failures
    clock.t += 2
    s.complete(b.unit_id, "d", inputs=10, failures=4)
    at = clock.t
    clock.t += 5
    s.complete(c.unit_id, "d", inputs=10, failures=1)      # later ones change nothing
    assert s.snapshot()["first_failure_at"] == at
