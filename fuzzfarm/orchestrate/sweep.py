"""``fuzzfarm sweep``: every input of a function's space, checked -- a campaign of range units
on the local executor.

For a binary32 function of one float argument the whole input space is 2^32 bit patterns;
for binary16, 2^16 for one argument and 2^32 pairs for two (``strategies.Space``).  A sweep
is one stream of range units (``fuzzfarm.orchestrate.ranges``: chunks of 2^24 inputs by
default, the chunks of rare classes in parts, those first) run through the one pipeline
(``fuzzfarm.orchestrate.pipeline``) with its local executor:

* **on the device**, the inputs come from the global id (the sweep kernel): no input crosses
  from host to device; each unit's results (and the device screen's answer, where the
  device screens) land in a free slot of a fixed pool of shared memory;
* **on the host**, a pool of checking processes (one per core, forked before OpenCL starts)
  checks each unit with the same checker as ``run`` and writes its findings and stats row
  atomically, a work unit of the results directory (``fuzzfarm.store.dataset``);
* the pipeline is **bounded**: the device waits for a free slot, so memory stays at
  ``slots x chunk`` whatever the space size;
* a sweep is **resumable by unit**: its run id is derived from the device, function,
  precision and build options, a unit is done when its stats row exists, and running the
  same command again continues where it stopped (Ctrl-C finishes the units in flight).  Its
  unit ids are those earlier versions wrote, so a sweep they started resumes here.

The same range units run on the Ray executor as a campaign's ``source = "sweep"`` job (a
sweep spread over several devices).  The result is the exact answer for the whole space:
every failure counted (at most ``checker.FINDINGS_PER_RULE`` recorded per rule and
sub-batch), and the maximum ULP error with the input that attains it, measured by the
exact path (see ``checker._screen``).
"""
from __future__ import annotations

import hashlib
import os
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fuzzfarm.errors import BadInput
from fuzzfarm.orchestrate.ranges import RARE_UNIT, range_plan
from fuzzfarm.target import Target, TargetError
from fuzzfarm.work.session import SCREENS

__all__ = ["SweepError", "space_for", "SweepOptions", "MAX_CHUNK_BITS", "SLOT_MEMORY",
           "resume_state", "sweep",
           "sweep_run_id", "summarize", "without_pandas", "RARE_UNIT", "unit_prefix"]

#: The shared output slots of a sweep hold at most this many bytes together (the driver
#: process maps all of them; each worker at most all of them too): the pipeline's bound.
SLOT_MEMORY = 2 << 30

#: The largest chunk a sweep takes is 2^MAX_CHUNK_BITS inputs (``--chunk-bits``' range).
MAX_CHUNK_BITS = 26


class SweepError(BadInput):
    """The function, precision or options cannot be swept (one-line reason)."""


def space_for(name: str, precision: str = "binary32"):
    """The sweepable space (strategies.Space) of built-in ``name`` in ``precision``.
    Raises SweepError for an unknown built-in or precision, or one whose space cannot be
    enumerated (a conversion, a geometric built-in, an int argument, a space above 2^32
    inputs)."""
    from strategies import SpaceError
    from fuzzfarm.work.kinds import kind_of
    try:
        target = Target.parse(name, precision)
    except TargetError as exc:
        msg = str(exc)
        if "unknown" in msg and precision not in ("binary16", "binary32", "binary64"):
            raise SweepError(f"sweep: unknown precision {precision!r}; use binary16, "
                             f"binary32 or binary64") from None
        if "has no" in msg:
            raise SweepError(f"sweep: {name} has no {precision} overload") from None
        raise SweepError(f"sweep: unknown built-in {name!r}; `fuzzfarm catalogue` lists "
                         f"them") from None
    try:
        return kind_of(target).space(target)
    except SpaceError as exc:
        raise SweepError(str(exc)) from None


def sweep_run_id(fingerprint: str, space, build_options: str = "",
                 front_end: str = "opencl-c") -> str:
    """The run id of a sweep: the same device, function, precision, build options and
    front end give the same id, which is what makes ``fuzzfarm sweep`` resumable."""
    rid = f"sweep-{space.fn.name}.{space.fmt.name}-{fingerprint}"
    if front_end != "opencl-c":
        rid += f"-{front_end}"
    if build_options.strip():
        rid += "-" + hashlib.sha1(build_options.strip().encode()).hexdigest()[:8]
    return rid


def unit_prefix(fingerprint: str, space, front_end: str = "opencl-c") -> str:
    """The start of a sweep's unit ids: ``<fingerprint>-<target id>``
    (``sin.binary32.w1``, ``sin.binary32.w1.spirv``)."""
    return f"{fingerprint}-{Target(space.fn.name, space.fmt.name, 1, front_end).id}"


def output_bytes(space) -> int:
    """Bytes of output per input of ``space`` (every output's buffer element)."""
    from fuzzfarm.device.kernels import buffer_dtype
    return sum(buffer_dtype(o, space.fmt).itemsize for o in space.fn.outputs)


def default_workers() -> int:
    """One checking process per core this process may run on (its CPU affinity: a
    ``taskset`` or a container's cpuset; all the machine's where the platform cannot say).
    (On the 16-core H100 host, 16 workers swept sin in 20.7-23.8 s, 15 workers, leaving
    one core to the driver process, in 24.3 s.)"""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):           # no affinity on this platform
        return os.cpu_count() or 1


@dataclass
class SweepOptions:
    """A validated sweep: ``space`` (strategies.Space), ``device`` (a DeviceInfo), ``out``
    directory, ``chunk`` inputs per chunk (a power of two), ``workers`` checking
    processes, ``slots`` shared output buffers (the pipeline's bound), ``build_options``,
    ``limit`` chunks to do in this invocation (None: all), ``screen`` where the common
    case is judged: 'auto' (on the device where oracle.device_screen can, else on the
    host), 'device' (an error where it cannot) or 'host'; ``front_end``: the sweep
    kernel as OpenCL C source or a SPIR-V module ('spirv'); ``resident``: the
    orchestrate.resident.Resident of the server the sweep runs in (its checking
    processes and device runners are used; None: the sweep's own).  Raises SweepError
    for an unknown screen or a chunk above 2^MAX_CHUNK_BITS inputs."""

    space: object
    device: object
    out: Path
    chunk: int = 1 << 24
    workers: int = field(default_factory=default_workers)
    slots: int = 0
    build_options: str = ""
    limit: int | None = None
    screen: str = "auto"
    front_end: str = "opencl-c"
    resident: object = None

    def __post_init__(self):
        if self.screen not in SCREENS:
            raise SweepError(f"sweep: unknown screen {self.screen!r}; use one of "
                             f"{', '.join(SCREENS)}")
        if self.chunk > 1 << MAX_CHUNK_BITS:
            raise SweepError(f"sweep: chunks of {self.chunk} inputs; at most "
                             f"2^{MAX_CHUNK_BITS}")
        self.chunk = min(self.chunk, self.space.size)
        if not self.slots:
            per_slot = self.chunk * output_bytes(self.space)
            self.slots = max(2, min(self.workers + 2, SLOT_MEMORY // per_slot))

    @property
    def target(self) -> Target:
        return Target(self.space.fn.name, self.space.fmt.name, 1, self.front_end)

    @property
    def slot_bytes(self) -> int:
        """Bytes of one slot: a chunk's outputs, then the device screen's answer."""
        from fuzzfarm.oracle.screen_answer import ScreenChunk
        return self.chunk * output_bytes(self.space) + ScreenChunk.nbytes(self.chunk)


def _load_meta(path: Path) -> dict | None:
    import json
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SweepError(f"sweep: {str(path)!r} is corrupt ({exc}); remove it to start "
                         f"the sweep again") from None


def resume_state(opts: SweepOptions, limit: bool = True) -> tuple[str, dict, tuple]:
    """(run id, run metadata, units still to do: (id suffix, IndexRange) as
    ranges.range_plan gives them) of the sweep ``opts`` describes: a new sweep, or the
    unfinished one with the same run id in ``opts.out`` (its units done whole or by
    parts are left out; ``opts.limit``, unless ``limit`` is False: the first undone chunks
    only).  Raises SweepError
    when that one was started with another chunk size or its metadata is corrupt."""
    from fuzzfarm.store import dataset as store
    space, info = opts.space, opts.device
    run_id = sweep_run_id(info.fingerprint, space, opts.build_options, opts.front_end)
    meta = _load_meta(Path(opts.out) / "_runs" / f"{run_id}.json") or {
        "run_id": run_id, "kind": "sweep", "functions": [space.fn.name],
        "precisions": [space.fmt.name], "widths": [1], "space_size": space.size,
        "chunk": opts.chunk, "build_options": opts.build_options,
        "devices": [info.to_dict()], "started": time.time()}
    if meta.get("chunk") != opts.chunk:
        raise SweepError(f"sweep: {run_id} in {str(opts.out)!r} was started with chunks of "
                         f"{meta.get('chunk')} inputs; resume it with --chunk-bits "
                         f"{int(meta.get('chunk') or 1).bit_length() - 1}")
    done = store.done_units(opts.out, run_id)
    prefix = unit_prefix(info.fingerprint, space, opts.front_end)
    todo = range_plan(space, opts.chunk, range(-(-space.size // opts.chunk)), done, prefix)
    return run_id, meta, _limited(todo, opts) if limit else todo


def _limited(todo: tuple, opts: SweepOptions) -> tuple:
    """``todo`` cut to the first ``opts.limit`` chunks (with all their units)."""
    if opts.limit is None:
        return todo
    first = set(sorted({r.start // opts.chunk for _, r in todo})[:opts.limit])
    return tuple(u for u in todo if u[1].start // opts.chunk in first)


def sweep(opts: SweepOptions, progress=None, locked: bool = False) -> dict:
    """Run (or resume) a sweep; returns the run metadata with its summary (see
    ``summarize``), ``status`` ('completed', 'partial' after --chunks, 'interrupted',
    'device fault') and ``interrupted``.

    ``progress(done_inputs, total_inputs, report)`` (a work.check.UnitReport) is called
    after each unit.  The first Ctrl-C stops launching and finishes the units in flight;
    a second one abandons them (their files are never half-written).  The sweep holds the
    results directory's ResultsLock (``locked``: the caller holds it already).  Raises
    SweepError (see ``resume_state``), store.ResultsInUse, and whatever a checking
    process raised."""
    from fuzzfarm.store import dataset as store

    if locked:
        return _sweep_locked(opts, progress)
    with store.ResultsLock(opts.out, f"sweep {opts.space.fn.name} {opts.space.fmt.name}"):
        return _sweep_locked(opts, progress)


class _Phases:
    """Wall seconds of a sweep's phases, in order ({phase: seconds}): where its fixed
    costs go (``meta['phase_seconds']``; benchmarks/bench_vs_cts.py reports them)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(self.seconds.get(name, 0.0) + now - self._t, 4)
        self._t = now


def _sweep_locked(opts: SweepOptions, progress) -> dict:
    from fuzzfarm.store import dataset as store

    space = opts.space
    run_id, meta, every = resume_state(opts, limit=False)
    todo = _limited(every, opts)
    done_inputs = space.size - sum(r.count for _, r in every)
    started = time.perf_counter()
    phases = _Phases()
    interrupted, tables = False, {}
    if todo:
        interrupted, tables = _run_units(opts, run_id, todo, meta, progress, done_inputs,
                                         phases)
    try:    # one file per directory instead of one per unit; then summed from it (a
        # summary of 256 unit files read them all once more: ~0.35 s of an H100 sweep)
        store.compact(opts.out, min_files=2, known=tables)
    except (OSError, store.StoreError) as exc:
        meta["not_compacted"] = str(exc)
    phases.lap("compact")
    meta.update(summarize(opts.out, run_id, space))
    phases.lap("summarize")
    meta["phase_seconds"] = phases.seconds
    meta["status"] = "device fault" if meta.get("device_fault") else \
        "interrupted" if interrupted else (
        "completed" if meta["inputs"] == space.size else "partial")
    meta["wall_seconds_last"] = time.perf_counter() - started
    store.write_run(opts.out, run_id, meta)
    meta["interrupted"] = interrupted
    return meta


def _stats(out, run_id: str) -> list:
    from fuzzfarm.store import dataset as store
    return store.read_stats(out, run_id).to_pylist()


def _run_units(opts: SweepOptions, run_id: str, todo: tuple, meta: dict, progress,
               done_inputs: int, phases: _Phases) -> tuple[bool, dict]:
    """The sweep's units through the pipeline on the local executor; returns (interrupted,
    the tables the checks wrote)."""
    from fuzzfarm.orchestrate.pipeline import LocalExecutor, LocalOrders, LocalMaker, Pipeline
    from fuzzfarm.orchestrate.scheduler import Scheduler, Stream
    from fuzzfarm.store import dataset as store
    from fuzzfarm.work.session import DeviceSession

    space, info = opts.space, opts.device
    # fork the checking processes before OpenCL starts any driver thread in this process
    resident = opts.resident
    executor = LocalExecutor(opts.workers, opts.slots, opts.slot_bytes, opts.chunk, opts.out,
                             run_id, lambda unit: info.columns(unit.target.precision),
                             pool=resident.pool if resident else None)
    phases.lap("pool")
    stream = Stream(info.fingerprint, 0, "sweep", opts.target, opts.build_options, 0,
                    ranges=todo, prefix=unit_prefix(info.fingerprint, space, opts.front_end))
    scheduler = Scheduler([stream])
    scheduler.add_device("local", info.fingerprint)
    orders = executor.orders = LocalOrders(scheduler, "local")
    from fuzzfarm.device.runner import planted_faults
    session = DeviceSession(info, opts.screen, plants=planted_faults(),
                            runners=resident.runners if resident else None)
    total = [done_inputs]

    def on_report(r):
        total[0] += r.inputs
        if progress:
            progress(total[0], space.size, r)

    pipeline = Pipeline(session, opts.out, run_id, orders, LocalMaker(), executor,
                        on_report=on_report)
    old = signal.getsignal(signal.SIGINT)
    sigints = [0]

    def on_sigint(signum, frame):
        # the first Ctrl-C only stops new units; the second abandons the units in flight
        sigints[0] += 1
        orders.stop()
        if sigints[0] > 1:
            raise KeyboardInterrupt

    abandon = False
    try:
        claims = session.claims_by_precision(opts.build_options)[space.fmt.name]
        phases.lap("context")
        meta.update(claims={"precision": claims.precision, "profile": claims.profile,
                            "denormals": claims.denormals, "rounding": list(claims.rounding),
                            "relaxed": claims.relaxed},
                    device_constants={info.fingerprint: session.device_constants()})
        store.write_run(opts.out, run_id, meta | {"status": "running"})
        signal.signal(signal.SIGINT, on_sigint)
        pipeline.run()
        phases.lap("units")
    except KeyboardInterrupt:
        abandon = True
    finally:
        signal.signal(signal.SIGINT, old)
        executor.close(abandon=abandon)
        phases.lap("join")
    _fault_meta(pipeline, session, meta, space)
    meta["slot_wait_seconds"] = round(executor.slot_wait_seconds, 4)
    meta["write_seconds"] = round(executor.write_seconds, 4)
    return bool(sigints[0]) or abandon, executor.tables


def _fault_meta(pipeline, session, meta: dict, space) -> None:
    """The sweep's metadata of where it screened and what faults it recorded:
    ``screen`` ('device', 'host', or 'host: why'), ``screen_fault`` and ``device_fault``
    ({rule_id, unit_id, error, reason})."""
    for (_, name, precision), choice in session.screen_choices.items():
        if (name, precision) == (space.fn.name, space.fmt.name):
            meta["screen"] = choice
    for uid, reason, detail in pipeline.faults:
        if reason == "screen_build_failure":
            meta.setdefault("screen_fault", {"rule_id": "device.build_failure",
                                             "unit_id": uid, "error": meta.get("screen", "")})
        else:
            meta.setdefault("device_fault", {"reason": reason,
                                             "rule_id": f"device.{reason}", "unit_id": uid,
                                             "error": detail.get("error", "")})


def summarize(out, run_id: str, space) -> dict:
    """Totals of a sweep from its stats rows: inputs, failures and notes by rule, the
    screened/exact/unjudged split and the maximum ULP error with its input bits."""
    from fuzzfarm.oracle.histogram import distribution, from_cells
    t = _stats(out, run_id)
    fails: dict = {}
    notes: dict = {}
    best = None
    cells = [r["ulp_histogram"] for r in t if r.get("ulp_histogram")]
    hist = sum(map(from_cells, cells)) if cells else None
    for r in t:
        for k, v in r["failures_by_rule"]:
            fails[k] = fails.get(k, 0) + v
        for k, v in r["notes_by_rule"]:
            notes[k] = notes.get(k, 0) + v
        m = r["max_ulp_error"]
        if m is not None and (best is None or m > best[0]):
            best = (m, r.get("max_ulp_inputs"))
    return {"chunks_done": len(t), "inputs": sum(r["inputs_tested"] for r in t),
            "failures": sum(fails.values()), "failures_by_rule": fails,
            "notes": sum(notes.values()), "notes_by_rule": notes,
            "screened": sum(r["screened"] for r in t), "exact": sum(r["exact"] for r in t),
            "unjudged": sum(r["unjudged"] for r in t),
            "max_ulp_error": None if best is None else best[0],
            "max_ulp_inputs": None if best is None or best[1] is None else
            [space.fmt.hex(int(v)) for v in best[1]],
            "check_seconds": sum(r["check_seconds"] or 0.0 for r in t),
            "device_seconds": sum(r["device_seconds"] or 0.0 for r in t),
            **({} if hist is None else distribution(hist))}


# --------------------------------------------------------------------------- pandas
class _NoPandas:
    """A meta path finder and loader under which ``import pandas`` raises ImportError
    (``importlib.util.find_spec`` still answers, as it would for a module that fails to
    load, and nothing is left in ``sys.modules``)."""

    def find_spec(self, name, path=None, target=None):
        import importlib.util
        if name == "pandas" or name.startswith("pandas."):
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        raise ImportError("pandas is kept out of a sweep (orchestrate.sweep.without_pandas)",
                          name=spec.name)

    def exec_module(self, module):     # never reached: create_module raised
        raise ImportError(module.__name__)


@contextmanager
def without_pandas():
    """Within it, keep pandas out of this process and the ones it forks (the sweep command
    runs the sweep within it).  pyarrow imports pandas, where it is installed, the first
    time it builds any array (``pa.array``, ``Table.from_pylist``): 1.1-1.2 s on the GPU
    machine, in the sweep's driver and again in each checking process at its first
    unit, for nothing (fuzzfarm never converts to pandas).  pyarrow takes the
    ImportError as "not installed" (and keeps that answer in this process).
    (``sys.modules['pandas'] = None`` is not enough: pyarrow's compiled import then gets
    None and fails.)  A process that imported pandas already keeps it."""
    import sys
    finder = None
    if "pandas" not in sys.modules:
        finder = _NoPandas()
        sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        if finder is not None:
            sys.meta_path.remove(finder)
