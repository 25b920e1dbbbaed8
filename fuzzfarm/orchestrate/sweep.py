"""``fuzzfarm sweep``: every input of a function's space, checked.

For a binary32 function of one float argument the whole input space is 2^32 bit patterns;
for binary16, 2^16 for one argument and 2^32 pairs for two.  A sweep enumerates all of them:

* **on the device**, the inputs come from the global id (``kernels.sweep_source``): no input
  crosses from host to device.  The space is cut into chunks (2^24 inputs by default); each
  chunk is one launch whose outputs are copied into a free slot of a fixed pool of shared
  host buffers;
* **on the host**, a pool of worker processes (one per core, forked before OpenCL starts)
  checks each chunk in sub-batches with the same checker as ``run`` (prescribed results,
  NaN rules, then the two-tier oracle: the float64 screen, mpmath for the rest) and writes
  the chunk's findings and stats row atomically, as a work unit of the results directory
  (fuzzfarm.store.dataset);
* the pipeline is **bounded**: the device waits for a free slot, so memory stays at
  ``slots x chunk`` whatever the space size;
* a sweep is **resumable by chunk**: its run id is derived from the device, function,
  precision and build options, a chunk is done when its stats row exists, and running the
  same command again continues where it stopped (Ctrl-C finishes the chunks in flight).

The result is the exact answer for the whole space: every failure counted (at most
``checker.FINDINGS_PER_RULE`` recorded per rule and sub-batch), and the maximum ULP error
with the input that attains it, measured by the exact path (see ``checker._screen``).
"""
from __future__ import annotations

import hashlib
import mmap
import multiprocessing as mp
import os
import queue
import signal
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from edgecases import catalogue
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import INPUT_CLASSES, FloatFormat, format_named
from fuzzfarm.device.kernels import buffer_dtype
from fuzzfarm.orchestrate.sweep_kernel import LANES, HostSlot, SweepKernel, run_chunk_on
from fuzzfarm.work.units import WorkUnit

__all__ = ["SweepError", "Space", "space_for", "SweepUnit", "SweepOptions", "chunk_unit",
           "check_chunk", "resume_state", "sweep", "sweep_run_id", "summarize",
           "MAX_SPACE_BITS", "SweepKernel", "run_chunk_on", "without_pandas", "chunk_units",
           "RARE_UNIT"]

#: The largest space a sweep enumerates: 2^32 inputs.
MAX_SPACE_BITS = 32

#: The shared output slots of a sweep hold at most this many bytes together (the driver
#: process maps all of them; each worker at most all of them too): the pipeline's bound.
SLOT_MEMORY = 2 << 30


class SweepError(BadInput):
    """The function, precision or options cannot be swept (one-line reason)."""


@dataclass(frozen=True)
class Space:
    """The input space of built-in ``fn`` in format ``fmt``, numbered as the sweep kernel
    (kernels.sweep_source) numbers it.  One argument: input ``g`` is the pattern ``g >> 1``
    with the sign bit ``g & 1``, so each value is followed by its negation (the screen
    then evaluates an odd or even function's reference once per pair).  Two arguments:
    argument k is bits ``[k*fmt.bits, (k+1)*fmt.bits)`` of ``g``."""

    fn: catalogue.Function
    fmt: FloatFormat

    @property
    def bits(self) -> int:
        return self.fmt.bits * len(self.fn.inputs)

    @property
    def size(self) -> int:
        return 1 << self.bits

    @property
    def output_bytes(self) -> int:
        """Bytes of output per input (every output's buffer element)."""
        return sum(buffer_dtype(o, self.fmt).itemsize for o in self.fn.outputs)

    def class_counts(self, start: int, count: int) -> dict[str, int] | None:
        """Inputs per IEEE class of inputs ``start .. start+count-1``, as
        ``strategies.input_class_counts`` gives them ({"x:pos_normal": n, ...}), computed
        from the numbering alone (no pass over the data); None for a space of two
        arguments (counted from the data)."""
        if len(self.fn.inputs) != 1:
            return None
        f = self.fmt
        end = start + count
        # magnitude ranges [lo, hi) of each class, positive then negative
        ranges = {"zero": (0, 1), "subnormal": (1, f.min_normal),
                  "normal": (f.min_normal, f.pos_inf), "inf": (f.pos_inf, f.pos_inf + 1),
                  "snan": (f.pos_inf + 1, f.pos_inf | f.quiet_bit),
                  "qnan": (f.pos_inf | f.quiet_bit, f.abs_mask + 1)}

        def inside(lo: int, hi: int, sign: int) -> int:
            # g = 2 m + sign for magnitude m: how many g in [start, end) have m in [lo, hi)
            a = max(lo, -(-(start - sign) // 2))
            b = min(hi, (end - 1 - sign) // 2 + 1)
            return max(0, b - a)

        name = self.fn.inputs[0].name
        out = {}
        for cls in INPUT_CLASSES:
            if cls in ("qnan", "snan"):
                n = sum(inside(*ranges[cls], s) for s in (0, 1))
            else:
                sign = 1 if cls.startswith("neg_") else 0
                n = inside(*ranges[cls.split("_", 1)[1]], sign)
            out[f"{name}:{cls}"] = n
        return out

    def inputs_at(self, start: int, positions: np.ndarray) -> dict[str, np.ndarray]:
        """Inputs ``start + positions`` (int array, (m,)) as {argument name: fmt.uint array
        (m,)}: the candidates a device screen left to the host."""
        if len(self.fn.inputs) == 1:
            return self._numbered(positions.astype(self.fmt.uint), start)
        return self._numbered(positions.astype(np.uint64), start)

    def inputs(self, start: int, count: int) -> dict[str, np.ndarray]:
        """Inputs ``start .. start+count-1`` as {argument name: fmt.uint array (count,)}."""
        one = len(self.fn.inputs) == 1     # in fmt.uint arithmetic: no 64-bit temporaries
        return self._numbered(np.arange(count, dtype=self.fmt.uint if one else np.uint64),
                              start)

    def _numbered(self, u: np.ndarray, start: int) -> dict[str, np.ndarray]:
        """The inputs numbered ``start + u`` (``u``: offsets, fmt.uint for one argument,
        uint64 for two; overwritten)."""
        if len(self.fn.inputs) == 1:
            t = self.fmt.uint
            u += t(start & ((1 << self.fmt.bits) - 1))
            x = u >> t(1)
            u <<= t(self.fmt.bits - 1)
            x |= u
            return {self.fn.inputs[0].name: x}
        u += np.uint64(start)
        out = {}
        for k, a in enumerate(self.fn.inputs):
            shift = np.uint64(k * self.fmt.bits)
            out[a.name] = (u >> shift).astype(self.fmt.uint) if k else u.astype(self.fmt.uint)
        return out


def space_for(name: str, precision: str = "binary32") -> Space:
    """The sweepable space of built-in ``name`` in ``precision``.  Raises SweepError for an
    unknown built-in, a non-element-wise (geometric) one, an int argument, a conversion or
    a space above 2^32 inputs (binary64, binary32 of two arguments)."""
    if name.startswith("convert_"):
        raise SweepError(f"sweep: {name!r} is a conversion; sweeps cover the math built-ins "
                         f"(use `fuzzfarm run -f {name}`)")
    try:
        fn = catalogue.function(name)
    except KeyError:
        raise SweepError(f"sweep: unknown built-in {name!r}; `fuzzfarm catalogue` lists "
                         f"them") from None
    try:
        fmt = format_named(precision)
    except (KeyError, ValueError):
        raise SweepError(f"sweep: unknown precision {precision!r}; use binary16, binary32 "
                         f"or binary64") from None
    if precision not in fn.precisions:
        raise SweepError(f"sweep: {name} has no {precision} overload")
    if not fn.is_elementwise:
        raise SweepError(f"sweep: {name} is a geometric built-in (its inputs are vectors); "
                         f"use `fuzzfarm run -f {name}`")
    if any(a.kind != "float" for a in fn.inputs):
        raise SweepError(f"sweep: {name} has an integer argument; sweeps enumerate float "
                         f"bit patterns only (use `fuzzfarm run -f {name}`)")
    space = Space(fn, fmt)
    if space.bits > MAX_SPACE_BITS:
        raise SweepError(f"sweep: {name} in {precision} has 2^{space.bits} inputs, beyond "
                         f"the 2^{MAX_SPACE_BITS} a sweep covers (use `fuzzfarm run`)")
    return space


@dataclass(frozen=True)
class SweepUnit(WorkUnit):
    """One chunk of a sweep as a work unit: inputs ``start .. start+count-1`` of the space
    (``seed`` holds ``start``, ``per_recipe`` holds ``count``)."""

    @property
    def recipe_json(self) -> str:
        import json
        return json.dumps({"sweep": {"start": self.seed, "count": self.per_recipe}},
                          sort_keys=True)


def chunk_unit(fingerprint: str, space: Space, index: int, chunk: int) -> SweepUnit:
    """Chunk ``index`` (of size ``chunk``) of ``space`` on the device ``fingerprint``."""
    start = index * chunk
    count = min(chunk, space.size - start)
    uid = f"{fingerprint}-{space.fn.name}.{space.fmt.name}.w1-sweep{index:06d}"
    return SweepUnit(uid, space.fn.name, start, count, (), False, space.fmt.name, 1)


#: A chunk holding zeros, subnormals, infinities or NaNs is swept as units of at most this
#: many inputs: the device screen leaves such inputs to the host, whose check of a whole
#: 2^24-input chunk of them took 0.75-1.7 s on the GPU machine (one process), the last
#: second of a sweep; as 16 units they are checked side by side.
RARE_UNIT = 1 << 20


def chunk_units(fingerprint: str, space: Space, index: int, chunk: int) -> list:
    """The units of chunk ``index``: the chunk itself, or where it holds inputs of the
    rare classes and is larger than RARE_UNIT, its RARE_UNIT-input parts (unit ids
    ``<chunk's id>-NNN``)."""
    return _parts(space, chunk_unit(fingerprint, space, index, chunk))


def _parts(space: Space, u: SweepUnit) -> list:
    """``chunk_units`` of the chunk ``u``."""
    counts = space.class_counts(u.seed, u.per_recipe)
    if u.per_recipe <= RARE_UNIT or not counts or not _rare_inputs(counts):
        return [u]
    return [replace(u, unit_id=f"{u.unit_id}-{k:03d}", seed=s,
                    per_recipe=min(RARE_UNIT, u.seed + u.per_recipe - s))
            for k, s in enumerate(range(u.seed, u.seed + u.per_recipe, RARE_UNIT))]


def _rare_inputs(counts: dict) -> int:
    """Inputs of the rare classes (zeros, subnormals, infinities, NaNs) in ``counts``
    (Space.class_counts)."""
    return sum(n for k, n in counts.items() if not k.endswith("_normal"))


def sweep_run_id(fingerprint: str, space: Space, build_options: str = "") -> str:
    """The run id of a sweep: the same device, function, precision and build options give
    the same id, which is what makes ``fuzzfarm sweep`` resumable."""
    rid = f"sweep-{space.fn.name}.{space.fmt.name}-{fingerprint}"
    if build_options.strip():
        rid += "-" + hashlib.sha1(build_options.strip().encode()).hexdigest()[:8]
    return rid


# --------------------------------------------------------------------------- worker side
#: Shared output slots, created by the parent before the workers fork (inherited).
_SLOTS: list = []


#: Where a sweep judges the common case (SweepOptions.screen).
SCREENS = ("auto", "device", "host")


def _worker_init() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # the parent decides when to stop
    # the check's modules now, while the parent opens the device and builds its kernels:
    # imported at a worker's first chunk, they held up the first slots (~1 s on the GPU host)
    import importlib
    for name in ("fuzzfarm.store.dataset", "fuzzfarm.verdict.checker",
                 "fuzzfarm.verdict.screened", "fuzzfarm.work.units"):
        importlib.import_module(name)


#: Findings rows a sweep keeps in memory for its closing compaction (store.compact's
#: ``known``); beyond them the compaction reads the files back.  Stats rows: always kept.
KNOWN_FINDINGS_ROWS = 1 << 20


@dataclass
class _Written:
    """The tables a sweep's checked chunks wrote ({key: table}, store.compact's
    ``known``), findings only while ``KNOWN_FINDINGS_ROWS`` allows."""

    tables: dict = field(default_factory=dict)
    findings_rows: int = 0

    def add(self, tables: dict) -> None:
        for key, t in tables.items():
            if "ulp_histogram" not in t.schema.names:     # findings
                if self.findings_rows + t.num_rows > KNOWN_FINDINGS_ROWS:
                    continue
                self.findings_rows += t.num_rows
            self.tables[key] = t


def launch_order(space: Space, todo: list) -> list:
    """``todo`` (SweepUnits) with the units holding zeros, subnormals, infinities or NaNs
    first: the device screen leaves them to the host, whose check of such a unit is the
    longest (see RARE_UNIT), which at the end of a sweep would be its last second.  The
    rest in order; a two-argument space unchanged."""
    if len(space.fn.inputs) != 1:
        return list(todo)
    return sorted(todo, key=lambda u: -_rare_inputs(space.class_counts(u.seed, u.per_recipe)))


def _slot_views(slot: int, space: Space, count: int) -> dict[str, np.ndarray]:
    """The outputs of one chunk inside shared slot ``slot``: {name: array (count,)}."""
    views, offset = {}, 0
    buf = _SLOTS[slot]
    for o in space.fn.outputs:
        dt = buffer_dtype(o, space.fmt)
        views[o.name] = np.frombuffer(buf, dtype=dt, count=count, offset=offset)
        offset += count * dt.itemsize
    return views


def _slot_answer(slot: int, space: Space, count: int, chunk: int):
    """The device screen's answer for one chunk inside shared slot ``slot`` (after the
    outputs of a full ``chunk``)."""
    from fuzzfarm.oracle.device_screen import ScreenChunk
    return ScreenChunk.views(_SLOTS[slot], chunk * space.output_bytes, count)


def judge_chunk(space: Space, start: int, count: int, outputs: dict, claims, answer=None):
    """The verdict on inputs ``start .. start+count-1`` of ``space`` given their
    ``outputs`` ({name: array (count,)}): the checker over all of them, or with ``answer``
    (the device screen's, oracle.device_screen.ScreenChunk) over its candidates, the
    device's error histogram added.  Returns (CheckResult, the inputs its
    ``max_ulp_element`` indexes)."""
    if answer is None:
        from fuzzfarm.verdict.checker import check_batch
        inputs = space.inputs(start, count)
        return check_batch(space.fn, inputs, outputs, claims), inputs
    from fuzzfarm.verdict.screened import judge_screened
    total, inputs, _ = judge_screened(space.fn, lambda pos: space.inputs_at(start, pos),
                                      count, outputs, answer, claims)
    return total, inputs


def check_chunk(job: dict, outputs: dict | None = None, answer=None) -> dict:
    """Check one chunk and write its findings and stats row (atomically).

    ``job``: {unit (SweepUnit), space (Space), claims (verdict.claims.Claims), meta (device
    columns of store.STATS_SCHEMA), run_id, out, build_options, device_seconds, slot}.
    ``outputs`` (tests): the chunk's outputs instead of shared slot ``job['slot']``;
    ``answer`` (tests) the device screen's answer (oracle.device_screen.ScreenChunk)
    instead of the slot's, where ``job['device_screen']``.
    Returns {unit_id, inputs, failures, notes, max_ulp_error, max_inputs (the input bits
    of the largest error, or None), check_seconds, tables (the tables written, as
    store.compact's ``known``), write_seconds (of check_seconds: writing the two files)}.
    """
    from fuzzfarm.store import dataset as store
    from fuzzfarm.work.units import finding_rows, stats_row

    t0 = time.perf_counter()
    unit, space = job["unit"], job["space"]
    start, count = unit.seed, unit.per_recipe
    if outputs is None:
        outputs = _slot_views(job["slot"], space, count)
    if not job.get("device_screen"):
        answer = None
    elif answer is None:
        answer = _slot_answer(job["slot"], space, count, job["chunk"])
    total, inputs = judge_chunk(space, start, count, outputs, job["claims"], answer)
    dt = time.perf_counter() - t0
    rows = finding_rows(total, unit, job["meta"], job["run_id"], job["build_options"])
    stats = stats_row(total, unit, inputs, job["meta"], job["run_id"],
                      job["device_seconds"], dt, job["build_options"],
                      by_class=space.class_counts(start, count))
    tables: dict = {}       # what was written, for the sweep's compaction at its end
    t1 = time.perf_counter()
    store.write_findings(job["out"], job["run_id"], unit.unit_id, rows, keep=tables)
    store.write_stats(job["out"], job["run_id"], unit.unit_id, stats, keep=tables)
    t2 = time.perf_counter()
    return {"unit_id": unit.unit_id, "inputs": count, "failures": stats["failures"],
            "notes": stats["notes"], "max_ulp_error": stats["max_ulp_error"],
            "max_inputs": stats.get("max_ulp_inputs"),
            "check_seconds": t2 - t0, "write_seconds": t2 - t1, "tables": tables}


# --------------------------------------------------------------------------- parent side
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
    chunk, for nothing (fuzzfarm never converts to pandas).  pyarrow takes the
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


def default_workers() -> int:
    """One checking process per core.  (On the 16-core H100 host, 16 workers swept sin in
    20.7-23.8 s, 15 workers, leaving one core to the driver process, in 24.3 s.)"""
    return os.cpu_count() or 1


@dataclass
class SweepOptions:
    """A validated sweep: ``space``, ``device`` (device.DeviceInfo), ``out`` directory,
    ``chunk`` inputs per chunk (a power of two), ``workers`` checking processes,
    ``slots`` shared output buffers (the pipeline's bound), ``build_options``,
    ``limit`` chunks to do in this invocation (None: all), ``screen`` where the common
    case is judged: 'auto' (on the device where oracle.device_screen can, else on the
    host), 'device' (a SweepError where it cannot) or 'host'."""

    space: Space
    device: object
    out: Path
    chunk: int = 1 << 24
    workers: int = field(default_factory=default_workers)
    slots: int = 0
    build_options: str = ""
    limit: int | None = None
    screen: str = "auto"

    def __post_init__(self):
        if self.screen not in SCREENS:
            raise SweepError(f"sweep: unknown screen {self.screen!r}; use one of "
                             f"{', '.join(SCREENS)}")
        self.chunk = min(self.chunk, self.space.size)
        if not self.slots:
            per_slot = self.chunk * self.space.output_bytes
            self.slots = max(2, min(self.workers + 2, SLOT_MEMORY // per_slot))


def resume_state(opts: SweepOptions) -> tuple[str, dict, list]:
    """(run id, run metadata, chunks still to do) of the sweep ``opts`` describes: a new
    sweep, or the unfinished one with the same run id in ``opts.out``.  Raises SweepError
    when that one was started with another chunk size or its metadata is corrupt."""
    from fuzzfarm.store import dataset as store
    space, info = opts.space, opts.device
    run_id = sweep_run_id(info.fingerprint, space, opts.build_options)
    meta = _load_meta(Path(opts.out) / "_runs" / f"{run_id}.json") or {
        "run_id": run_id, "kind": "sweep", "functions": [space.fn.name],
        "precisions": [space.fmt.name], "widths": [1], "space_size": space.size,
        "chunk": opts.chunk, "build_options": opts.build_options,
        "devices": [info.to_dict()], "started": time.time()}
    if meta.get("chunk") != opts.chunk:
        raise SweepError(f"sweep: {run_id} in {str(opts.out)!r} was started with chunks of "
                         f"{meta.get('chunk')} inputs; resume it with --chunk-bits "
                         f"{int(meta.get('chunk') or 1).bit_length() - 1}")
    n_chunks = -(-space.size // opts.chunk)
    done = store.done_units(opts.out, run_id)
    todo = []
    for i in range(n_chunks):       # a chunk done whole (an earlier session) or by parts
        whole = chunk_unit(info.fingerprint, space, i, opts.chunk)
        if whole.unit_id not in done:
            todo += [u for u in _parts(space, whole) if u.unit_id not in done]
    return run_id, meta, todo


def sweep(opts: SweepOptions, progress=None, locked: bool = False) -> dict:
    """Run (or resume) a sweep; returns the run metadata with its summary (see
    ``summarize``), ``status`` ('completed', 'partial' after --chunks, 'interrupted') and
    ``interrupted``.

    ``progress(done_inputs, total_inputs, chunk_summary)`` is called after each chunk.
    The first Ctrl-C stops launching and finishes the chunks in flight; a second one
    abandons them (their files are never half-written).  The sweep holds the results
    directory's ResultsLock (``locked``: the caller holds it already).  Raises SweepError
    (see ``resume_state``), store.ResultsInUse, and whatever a worker raised."""
    from fuzzfarm.store import dataset as store

    if locked:
        return _sweep_locked(opts, progress)
    with store.ResultsLock(opts.out, f"sweep {opts.space.fn.name} {opts.space.fmt.name}"):
        return _sweep_locked(opts, progress)


def _sweep_locked(opts: SweepOptions, progress) -> dict:
    from fuzzfarm.store import dataset as store

    space = opts.space
    run_id, meta, todo = resume_state(opts)
    done_inputs = space.size - sum(u.per_recipe for u in todo)
    if opts.limit is not None:      # the first ``limit`` chunks (with all their units)
        first = sorted({u.seed // opts.chunk for u in todo})[:opts.limit]
        todo = [u for u in todo if u.seed // opts.chunk in first]
    todo = launch_order(space, todo)
    from fuzzfarm.oracle.device_screen import ScreenChunk
    slot_bytes = opts.chunk * space.output_bytes + ScreenChunk.nbytes(opts.chunk)
    started = time.perf_counter()
    phases = _Phases()
    interrupted = False
    written = _Written()    # the tables the chunks wrote, for the compaction below
    if todo:
        interrupted = _pipeline(opts, run_id, todo, slot_bytes, meta, progress, done_inputs,
                                phases, written)
    try:    # one file per directory instead of one per chunk; then summed from it (a
        # summary of 256 chunk files read them all once more: ~0.35 s of an H100 sweep)
        store.compact(opts.out, min_files=2, known=written.tables)
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


def _load_meta(path: Path) -> dict | None:
    import json
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise SweepError(f"sweep: {str(path)!r} is corrupt ({exc}); remove it to start "
                         f"the sweep again") from None


def _pipeline(opts, run_id, todo, slot_bytes, meta, progress, done_inputs,
              phases: _Phases, written: _Written) -> bool:
    """Device -> shared slots -> worker pool; returns True if interrupted.  ``phases``
    gets the laps pool, context, build, chunks (to the last chunk's launch), drain (to
    the last check) and join (the pool's end);
    ``written`` the tables the checked chunks wrote."""
    global _SLOTS
    from fuzzfarm.store import dataset as store
    from fuzzfarm.verdict.claims import Claims

    space, info = opts.space, opts.device
    _SLOTS = [mmap.mmap(-1, slot_bytes) for _ in range(opts.slots)]
    ctx = mp.get_context("fork")
    # Fork the workers before OpenCL starts any driver thread in this process.
    pool = ctx.Pool(opts.workers, initializer=_worker_init)
    phases.lap("pool")
    free: queue.Queue = queue.Queue()
    for s in range(opts.slots):
        free.put(("slot", s, None))
    interrupted = False
    old = signal.getsignal(signal.SIGINT)
    try:
        from fuzzfarm.device.runner import DeviceRunner
        runner = DeviceRunner(info, opts.build_options)
        consts = runner.device_constants()
        phases.lap("context")
        claims = Claims.for_device(info, space.fmt.name, consts, opts.build_options)
        meta.update(claims={"precision": claims.precision, "profile": claims.profile,
                            "denormals": claims.denormals, "rounding": list(claims.rounding),
                            "relaxed": claims.relaxed},
                    device_constants={info.fingerprint: consts})
        store.write_run(opts.out, run_id, meta | {"status": "running"})
        dmeta = info.columns(space.fmt.name)
        from fuzzfarm.device.runner import KernelBuildError
        try:
            kernel = SweepKernel(runner, space, opts.chunk)
        except KernelBuildError as exc:     # a finding about the device: recorded, the end
            _device_fault(opts, run_id, todo[0], dmeta, "build_failure", exc.detail(), meta)
            return False
        screen = _device_screen(opts, runner, claims, meta,
                                fault_at=(run_id, replace(todo[0], unit_id=todo[0].unit_id
                                                          + "-screen"), dmeta))
        phases.lap("build")

        sigints = [0]

        def on_sigint(signum, frame):
            # the first Ctrl-C only stops new chunks (wherever it lands: in a kernel run,
            # a progress line...); the second abandons the chunks in flight
            sigints[0] += 1
            if sigints[0] > 1:
                raise KeyboardInterrupt
        signal.signal(signal.SIGINT, on_sigint)
        in_flight = 0
        errors: list = []

        def finished(res):
            free.put(("done", res["slot"], res))

        def failed(exc):
            free.put(("error", None, exc))

        meta["slot_wait_seconds"] = meta["write_seconds"] = 0.0     # this session's
        pending = list(todo)
        launched = None     # (unit, slot, Launch): on the device, not landed yet
        lane = 0
        hosts: dict = {}    # slot -> its HostSlot, or None where the driver refused one

        def slot_host(slot: int):
            from fuzzfarm.oracle.device_screen import ScreenChunk
            if slot not in hosts:
                answer_bytes = 0 if screen is None else ScreenChunk.nbytes(opts.chunk)
                try:
                    hosts[slot] = HostSlot(runner, _SLOTS[slot],
                                           opts.chunk * space.output_bytes, answer_bytes)
                except cl_error() as exc:   # copied into pageable memory then (slower)
                    hosts[slot] = None
                    meta.setdefault("slot_copies", f"pageable: {str(exc).splitlines()[0]}")
            return hosts[slot]

        def enqueue_fault(unit, exc) -> None:   # the driver said no: recorded, then stop
            from fuzzfarm.device.runner import enqueue_error_detail
            from fuzzfarm.device.kernels import sweep_source
            _device_fault(opts, run_id, unit, dmeta, "enqueue_error", enqueue_error_detail(
                exc, sweep_source(space.fn, space.fmt), opts.build_options), meta)

        def hand_over() -> None:                # land the launched chunk; a worker checks it
            nonlocal launched, in_flight, pending
            (unit, slot, run), launched = launched, None
            try:
                seconds = kernel.land(run)
            except cl_error() as exc:
                enqueue_fault(unit, exc)
                pending = []
                return
            job = {"unit": unit, "space": space, "claims": claims, "meta": dmeta,
                   "run_id": run_id, "out": str(opts.out), "build_options": opts.build_options,
                   "device_seconds": seconds, "slot": slot,
                   "device_screen": screen is not None, "chunk": opts.chunk}
            in_flight += 1
            pool.apply_async(_check_slot, (job,), callback=finished, error_callback=failed)

        while pending or in_flight or launched:
            if sigints[0] and not interrupted:
                interrupted, pending = True, []
            if launched and (not pending or free.empty()):
                hand_over()         # nothing to launch beside it now
                continue
            if not (pending or in_flight):
                break
            t_wait = time.perf_counter()
            kind, slot, res = free.get()
            if pending:         # the device waited for a free slot this long
                meta["slot_wait_seconds"] = meta.get("slot_wait_seconds", 0.0) + \
                    time.perf_counter() - t_wait
            if sigints[0]:
                interrupted, pending = True, []
            if kind == "error":
                errors.append(res)
                in_flight -= 1
                pending = []
                continue
            if kind == "done":
                in_flight -= 1
                written.add(res.pop("tables", {}))
                meta["write_seconds"] = meta.get("write_seconds", 0.0) + res["write_seconds"]
                done_inputs += res["inputs"]
                if progress:
                    progress(done_inputs, space.size, res)
            if not pending or errors:
                continue
            unit = pending.pop(0)
            answer = None if screen is None else \
                _slot_answer(slot, space, unit.per_recipe, opts.chunk)
            try:        # the next chunk on the device, then the one before it landed
                run = kernel.launch(unit.seed, unit.per_recipe,
                                    _slot_views(slot, space, unit.per_recipe), screen,
                                    answer, lane, slot_host(slot))
            except cl_error() as exc:
                enqueue_fault(unit, exc)
                pending = []
                continue
            lane = (lane + 1) % LANES
            if launched:
                hand_over()
            launched = (unit, slot, run)
            if not pending:
                phases.lap("chunks")
        if errors:
            raise errors[0]
    except KeyboardInterrupt:
        pool.terminate()
        interrupted = True
        return interrupted
    finally:
        signal.signal(signal.SIGINT, old)
        phases.lap("drain")
        pool.close()
        pool.join()
        phases.lap("join")
    return interrupted


def _device_screen(opts, runner, claims, meta: dict, fault_at=None):
    """The sweep's oracle.device_screen.DeviceScreen, or None to screen on the host;
    ``meta['screen']`` says which and why.  A device that fails to build the screen (valid
    OpenCL C) is a finding: recorded as a device fault of unit ``fault_at`` = (run id,
    unit, device columns), and the sweep goes on screening on the host.  Raises
    SweepError for ``--screen device`` where the device screen cannot be used."""
    from fuzzfarm.device.runner import KernelBuildError
    from fuzzfarm.oracle.device_screen import screen_for
    space = opts.space
    if opts.screen == "host":
        meta["screen"] = "host"
        return None
    try:
        screen, why = screen_for(runner, space.fn.name, space.fmt.name, claims, opts.chunk)
    except KernelBuildError as exc:
        screen, why = None, f"the device screen did not build ({str(exc).splitlines()[0]})"
        if fault_at is not None:
            from fuzzfarm.work.units import write_fault
            run_id, unit, dmeta = fault_at
            finding = write_fault(opts.out, run_id, unit, dmeta, "", "build_failure",
                                  exc.detail())
            meta["screen_fault"] = {"rule_id": finding["rule_id"], "unit_id": unit.unit_id,
                                    "error": why}
    if screen is not None:
        meta["screen"] = "device"
        return screen
    if opts.screen == "device":
        raise SweepError(f"sweep: --screen device: {why}")
    meta["screen"] = f"host: {why}"
    return None


def cl_error():
    """pyopencl's error class (imported late: workers fork before OpenCL starts)."""
    import pyopencl as cl
    return cl.Error


def _device_fault(opts, run_id: str, unit, dmeta: dict, reason: str, detail: dict,
                  meta: dict) -> None:
    """Record chunk ``unit`` as a device fault (units.fault_rows) and say so in ``meta``
    (``device_fault``: the reason and the error's first line)."""
    from fuzzfarm.work.units import write_fault
    finding = write_fault(opts.out, run_id, unit, dmeta, opts.build_options, reason, detail)
    meta["device_fault"] = {"reason": reason, "rule_id": finding["rule_id"],
                            "unit_id": unit.unit_id, "error": detail.get("error", "")}


def _check_slot(job: dict) -> dict:
    res = check_chunk(job)
    res["slot"] = job["slot"]
    return res


def summarize(out, run_id: str, space: Space) -> dict:
    """Totals of a sweep from its stats rows: inputs, failures and notes by rule, the
    screened/exact/unjudged split and the maximum ULP error with its input bits."""
    from fuzzfarm.oracle.histogram import distribution, from_cells
    from fuzzfarm.store import dataset as store
    t = store.read_stats(out, run_id).to_pylist()
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
