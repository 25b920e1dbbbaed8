"""Work units: what a device actor pulls, runs and checks, and the rows it writes.

A unit is one built-in, one seed and a few hypothesis-drawn batch recipes (DESIGN.md
decision 5), each expanded by the vectorized sampler (``strategies.expand``) into ``n``
inputs; ``n`` is stored with the recipe, so a unit can hold anything from a few thousand
inputs (a target the exact path judges slowly) to millions (a screened binary32 one).
``make_inputs`` regenerates its inputs deterministically from the unit alone, so a
finding's ``seed`` and ``recipe`` columns are enough to rebuild its batch.  Unit 0 of
each built-in is the special-value pool instead (every combination of the catalogue's
landmark values), so that every rule meets its inputs early in every run.

No Ray and no pyopencl here: the device is passed in as an object with ``run(fn, inputs)``
(or ``submit``, which returns a pending run to ``wait()`` on).  Nothing here loops over the
inputs in Python: generation, class tallies and the stats row are numpy; finding rows are
built column by column from the checker's findings.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache

import numpy as np

from edgecases import catalogue, modality
from fuzzfarm import formats
from fuzzfarm.verdict.claims import Claims
from fuzzfarm.verdict.findings import CheckResult
from fuzzfarm.formats import FloatFormat, format_named
from fuzzfarm.target import Target
from fuzzfarm.work.kinds import kind_of

__all__ = ["WorkUnit", "make_unit", "make_inputs", "check_unit",
           "finding_rows", "finding_table", "stats_row", "split_size", "submit_unit",
           "run_unit", "UnitSizer", "UNIT_MAX_BYTES", "bytes_per_input", "fault_rows", "write_fault", "DEVICE_FAULTS",
           "unit_kernel_source", "VERIFIED_ROWS", "verified_rows"]


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work.  ``recipes`` are Recipe dicts (strategies.Recipe.to_dict()) each
    with an extra key ``"n"``, the inputs expanded from it (``per_recipe`` where a dict
    has none: units written before sizes varied); for a conversion they are
    ``{"seed": s, "n": n}`` parts.  An empty tuple with ``special=True`` means the
    special-value pool, preceded by the ``replay`` inputs (tuples of raw input bits, one
    per argument: failures saved by ``fuzzfarm repro``, replayed first)."""

    unit_id: str
    function: str
    seed: int
    per_recipe: int
    recipes: tuple = ()
    special: bool = False
    precision: str = "binary32"
    vector_width: int = 1
    replay: tuple = ()

    @property
    def target(self) -> Target:
        """What the unit checks: (function, precision, vector_width) as a Target."""
        return Target(self.function, self.precision, self.vector_width)

    @property
    def recipe_json(self) -> str:
        if self.special:
            return json.dumps({"special": True, **({"replay": [list(t) for t in self.replay]}
                                                   if self.replay else {})}, sort_keys=True)
        return json.dumps(list(self.recipes), sort_keys=True)

    def part_sizes(self) -> list[int]:
        """Inputs (vectors for a geometric built-in) of each recipe, in order."""
        return [int(r.get("n", self.per_recipe)) for r in self.recipes]

    @property
    def size(self) -> int | None:
        """Inputs the unit expands to (vectors for a geometric built-in; None for the
        special-value pool, whose size depends on the built-in)."""
        if self.special:
            return None
        if not self.recipes:                  # a conversion unit of the old layout
            return self.per_recipe
        return sum(self.part_sizes())


#: Inputs per recipe a unit of a given size aims at: a unit of S inputs draws
#: ``split_size(S)`` recipes (at least one, at most ``MAX_RECIPES``).
MIN_PER_RECIPE = 8192
#: The most recipes one unit draws (hypothesis draws a few hundred recipes a second: on a
#: small machine the draw is a visible part of generating a unit).
MAX_RECIPES = 4


def split_size(size: int, max_recipes: int = MAX_RECIPES) -> list[int]:
    """``size`` inputs split into recipe parts: as many parts of at least MIN_PER_RECIPE
    as fit (at most ``max_recipes``), sizes differing by at most one."""
    size = max(1, int(size))
    k = max(1, min(int(max_recipes), size // MIN_PER_RECIPE))
    q, r = divmod(size, k)
    return [q + 1] * r + [q] * (k - r)


#: The most host memory one unit's inputs and outputs may take (UnitSizer): a drawn unit
#: of a binary32 built-in of one argument gets up to 2**23 inputs, binary64 2**22.  Larger
#: units on a fast device keep the stats rows (one per unit, ~200 bytes compacted) under
#: 1 GB a day (issue 18): the H100 checks binary32 sin at ~1.8e8 inputs/s.
UNIT_MAX_BYTES = 64 << 20


def bytes_per_input(target) -> int:
    """Bytes of host memory one input of ``target`` (a Target or its tuple) takes with its
    outputs: every argument and output at the widest of its formats (an upper bound); a
    geometric built-in's input is a vector of ``width`` elements."""
    t = Target.of(target)
    size = max(np.dtype(t.input_format.uint).itemsize, np.dtype(t.output_format.uint).itemsize)
    lanes = t.width if t.kind == "geometric" else 1
    return (len(t.inputs) + len(t.outputs)) * size * lanes


class UnitSizer:
    """How many inputs the next unit of a target gets: about ``unit_seconds`` of checking
    at the rate measured so far for that target (inputs per second of its check tasks),
    growing at most ``growth`` times from one unit to the next, within [``min_inputs``,
    ``max_inputs``] and at most ``max_bytes`` of inputs and outputs (``bytes_per_input``
    of the key's last item, a target; keys that are not targets get ``max_inputs``);
    ``min_inputs`` while nothing is measured.  Sizes of 1024 and more are multiples of
    1024.  Pure bookkeeping (the coordinator holds one)."""

    def __init__(self, unit_seconds: float = 0.5, min_inputs: int = 1024,
                 max_inputs: int = 1 << 23, growth: float = 8.0,
                 max_bytes: int = UNIT_MAX_BYTES):
        self.unit_seconds = float(unit_seconds)
        self.min_inputs = max(1, int(min_inputs))
        self.max_inputs = max(self.min_inputs, int(max_inputs))
        self.max_bytes = int(max_bytes)
        self.growth = float(growth)
        self.rate: dict = {}           # key -> inputs per second (moving average)
        self.last: dict = {}           # key -> size of the last unit handed out
        self._caps: dict = {}          # key -> its largest size

    def cap(self, key) -> int:
        """The largest unit of ``key``: ``max_inputs``, or fewer where ``max_bytes`` binds
        (never below ``min_inputs``)."""
        if key not in self._caps:
            try:
                per = bytes_per_input(key[-1])
            except Exception:               # noqa: BLE001 - not a target: no byte bound
                per = 0
            cap = self.max_inputs if per <= 0 else min(self.max_inputs, self.max_bytes // per)
            self._caps[key] = max(self.min_inputs, cap)
        return self._caps[key]

    def observe(self, key, inputs: int, seconds: float) -> None:
        """A unit of ``key`` with ``inputs`` inputs took ``seconds`` to check."""
        if inputs <= 0 or not seconds or seconds <= 0:
            return
        r = inputs / seconds
        old = self.rate.get(key)
        self.rate[key] = r if old is None else 0.5 * old + 0.5 * r

    def next_size(self, key) -> int:
        rate = self.rate.get(key)
        if rate is None:
            want = self.min_inputs
        else:
            want = min(rate * self.unit_seconds,
                       self.growth * self.last.get(key, self.min_inputs))
        want = int(min(self.cap(key), max(self.min_inputs, want)))
        if want >= 1024:
            want -= want % 1024
        self.last[key] = want
        return want


def _unit_seed(seed: int, serial: int, target: tuple) -> int:
    import zlib
    name, precision, width = target
    key = zlib.crc32(f"{name}.{precision}.{width}".encode()) % 65521
    return (seed * 1_000_003 + serial * 7919 + key) % (2**31)


def make_unit(device: str, target: tuple, serial: int, seed: int, per_recipe: int,
              recipes_per_unit: int, size: int | None = None, replay=()) -> WorkUnit:
    """Unit number ``serial`` of ``target`` = (built-in or conversion id, precision, vector
    width) for ``device`` (a fingerprint).  Unit 0 is the special-value pool; the others
    draw hypothesis recipes from a seed derived from (seed, serial, target), so a unit is
    rebuilt from its row alone.

    Size: ``size`` inputs (vectors for a geometric built-in) split by ``split_size`` into
    recipes, or, with ``size=None``, ``recipes_per_unit`` recipes of ``per_recipe`` inputs
    each.  Each recipe dict records its ``n``.  ``replay``: input-bit tuples unit 0 of an
    element-wise built-in runs before its special-value pool (``fuzzfarm.report.repro``)."""
    target = Target.of(target)
    name, precision, width = target
    unit_id = f"{device}-{target.id}-{serial:06d}"
    if serial == 0:
        return WorkUnit(unit_id, name, seed, 0, (), True, precision, width,
                        tuple(tuple(int(b) for b in t) for t in replay))
    unit_seed = _unit_seed(seed, serial, target)
    parts = [int(per_recipe)] * max(1, int(recipes_per_unit)) if size is None \
        else split_size(size)
    recipes = kind_of(target).draw_recipes(target, unit_seed, parts)
    return WorkUnit(unit_id, name, unit_seed, int(per_recipe), recipes, False, precision,
                    width)


def make_inputs(unit: WorkUnit) -> dict[str, np.ndarray]:
    """The unit's inputs: arrays by input name (float args as patterns, int args int32).
    Element-wise built-ins: any length (the device pads to the width); geometric
    built-ins: a multiple of the width (whole vectors); conversions: ``{"x": source
    values}`` in the source type's buffer dtype.  Deterministic in the unit: each recipe
    is expanded by ``strategies.expand`` straight into its slice of the result
    (``fuzzfarm.work.kinds``)."""
    target = unit.target
    kind = kind_of(target)
    if unit.special:
        return kind.special_inputs(target, unit.replay)
    return kind.drawn_inputs(target, unit)


def prepare_targets(runner, targets) -> dict:
    """Build the kernels of the built-ins among ``targets`` ((name, precision, width)
    triples) on ``runner`` (a fuzzfarm.device.runner.DeviceRunner), one program per (precision,
    width).  Conversions are built one program each at first use (``run_unit``): PoCL
    3.0-rc2 corrupts its heap building one program of a few hundred conversion kernels.

    Returns {target: fuzzfarm.device.runner.KernelBuildError} for each target whose kernel does
    not build (the others are built and cached): a build failure is a finding about the
    device, not a reason to stop."""
    from fuzzfarm.device.runner import KernelBuildError
    groups: dict = {}
    for target in map(Target.of, targets):
        if kind_of(target).builds_with_others():
            groups.setdefault((target.precision, target.width), []).append(target.name)
    failed: dict = {}
    for (precision, width), names in groups.items():
        try:
            runner.prepare([catalogue.function(n) for n in names], format_named(precision),
                           width)
        except KernelBuildError as exc:
            for n in names:
                if n in exc.failed or (not exc.failed and len(names) == 1):
                    failed[(n, precision, width)] = exc.failed.get(n, exc)
    return failed


def run_unit(runner, unit: WorkUnit, inputs: dict) -> dict[str, np.ndarray]:
    """Run the unit's kernel on ``runner``; returns the outputs by name."""
    return submit_unit(runner, unit, inputs).wait()


class _Finished:
    """A run that has completed: the ``PendingRun`` interface over known outputs."""

    def __init__(self, outputs, seconds: float):
        self._outputs, self.device_seconds = outputs, seconds

    def wait(self, copy: bool = True):
        return self._outputs


def submit_unit(runner, unit: WorkUnit, inputs: dict | None, screen=None, made=None):
    """Start the unit's kernel on ``runner`` without waiting: returns an object whose
    ``wait()`` gives the outputs by name and whose ``device_seconds`` is then set (a
    fuzzfarm.device.runner.PendingRun; a runner without ``submit`` runs at once).
    ``screen``: an oracle.device_screen.DeviceScreen for the unit's built-in (one binary32
    input ``x``, one output ``ret``): it screens the results on the device after the
    kernel, and the returned run's ``answer`` (a ScreenChunk) is complete after ``wait()``
    (``check_unit(..., answer=)``).  ``made``: (fuzzfarm.device.generate.DeviceGenerator,
    its UnitPlan of this unit): the device makes the inputs (``inputs`` unused, None); after
    ``wait()`` the run's ``made_inputs`` holds them as the device made them (a list of one
    array, views as ``wait(copy=False)``'s) and its ``made_tally`` their counts by class
    (generate.tally) (``check_made_unit``)."""
    target = unit.target
    kind = kind_of(target)
    if not hasattr(runner, "submit"):
        t0 = time.perf_counter()
        out = kind.run(runner, target, inputs)
        return _Finished(out, time.perf_counter() - t0)
    if screen is None and made is None:
        return kind.submit(runner, target, inputs)
    n = made[1].n if made is not None else len(inputs["x"])
    answer = land = None
    if screen is not None and made is not None:     # answer and gathered rows: pinned
        land = screen.landing(n)
        answer = land.answer
    elif screen is not None:
        from fuzzfarm.oracle.device_screen import ScreenChunk
        answer = ScreenChunk.empty(n)

    def after(queue, dev_in, dev_out, n):
        ev = screen.enqueue(dev_out[0], 0, n, answer, xbuf=dev_in[0], blocking=False)
        if land is None:
            return ev
        return screen.enqueue_marked(dev_in[0], dev_out[0], n, land, wait_for=[ev])

    if made is None:
        pending = runner.submit(target.fn, inputs, target.fmt, target.width,
                                after=after if screen is not None else None)
    else:
        generator, plan = made
        box = []

        def fill(queue, dev_in, n):
            first, _, total = generator.enqueue(queue, plan, dev_in[0])
            box.append(total)
            return first

        try:
            pending = runner.submit_made(target.fn, n, fill, target.fmt, target.width,
                                         after=after if screen is not None else None,
                                         copy_back=land is None)
        except BaseException:
            if land is not None:
                land.release()
            raise
        pending.made_tally = box[0]
        pending.landing = land
        pending.output_name = target.fn.outputs[0].name
    pending.answer = answer
    return pending


class InputsDisagree(Exception):
    """The inputs a device made (fuzzfarm.device.generate) differ from the host's for the
    same recipe at some positions the check read, or the rows it gathered are not those
    its screen marked (``why``): its integer arithmetic is wrong."""

    def __init__(self, pos, host, device, why: str = ""):
        super().__init__(why or f"{len(pos)} input(s) made on the device differ from the "
                                f"host's")
        self.pos, self.host, self.device, self.why = pos, host, device, why

    def detail(self) -> dict:
        """The ``integer_arithmetic`` fault's detail (``fault_rows``)."""
        if self.why:
            return {"kernel_name": "fuzzfarm_mark_write", "error": self.why}
        shown = ", ".join(f"row {int(p)}: device {int(d):#010x}, host {int(h):#010x}"
                          for p, h, d in list(zip(self.pos, self.host, self.device))[:4])
        return {"kernel_name": "fuzzfarm_generate",
                "error": f"{len(self.pos)} input(s) the device made differ from the host's "
                         f"for the same recipe ({shown})"}


def made_handoff(run, dense: bool = False, put=None):
    """What the check of a unit made on the device and screened there needs from its
    finished ``run`` (``submit_unit(..., made=)``, after ``wait(copy=False)``), as plain
    arrays (Ray moves them without pickling), before the runner's next submit: "n" rows;
    "marked" True where "x" (the inputs the device made) and "outputs" ({name: array})
    hold only the rows the verdict may read, gathered on the device in input order
    (oracle.device_screen.DeviceScreen.enqueue_marked), with "top" the device's passed
    input of the largest error (-1: none) and "count" how many it marked; False where they
    hold every row (the marked rows did not fit the landing, or ``dense``); "tally"
    (generate.tally) and "answer" (the screen's ScreenChunk; ``agg_c0`` and ``agg_c1``
    empty where the screen counts no failures).  ``put`` (e.g. ray.put): returns
    ``put(that dict)``, made straight from the run's memory; without it the dict, of
    copies.  Gives the run's landing back."""
    from fuzzfarm.oracle.device_screen import ScreenChunk
    land = getattr(run, "landing", None)
    out = {"tally": np.array(run.made_tally), "marked": False}
    take = (lambda a: a) if put is not None else np.copy
    try:
        if land is not None:
            a = land.answer
            if not land.screen.aggregate:       # no failure counted: nothing to read there
                a = a._replace(agg_c0=a.agg_c0[:0], agg_c1=a.agg_c1[:0])
            out["answer"] = ScreenChunk(*(take(v) for v in a))
            out["count"], out["top"], gx, gy = land.marked()
            if gx is not None and not dense:
                out.update(n=land.count, marked=True, x=take(gx),
                           outputs={run.output_name: take(gy)})
                return out if put is None else put(out)
            outputs = run.read_made()
        else:
            out["answer"] = run.answer
            outputs = run.wait(copy=False)
        x = run.made_inputs[0]
        out.update(n=len(x), x=take(x), outputs={k: take(v) for k, v in outputs.items()})
        return out if put is None else put(out)
    finally:
        if land is not None:
            land.release()
            run.landing = None


#: How many of the rows a made unit's verdict reads are made again on the host and
#: compared with the device's (``check_made_unit``), besides every finding's row.
VERIFIED_ROWS = 1 << 14


def verified_rows(unit: WorkUnit, read: np.ndarray, findings) -> np.ndarray:
    """The rows (int64, sorted) of a made unit whose inputs ``check_made_unit`` makes again
    on the host: every row in ``findings`` (positions: its findings' and its largest
    error's) and VERIFIED_ROWS of the rows ``read`` (all where fewer), drawn with a
    generator seeded by the unit's seed."""
    from fuzzfarm.verdict.screened import union
    read = np.asarray(read, np.int64)
    if read.size > VERIFIED_ROWS:
        rng = np.random.default_rng([int(unit.seed), 0x5EED])
        read = read[rng.choice(read.size, VERIFIED_ROWS, replace=False)]
    n = int(max(read.max(initial=-1), max(findings, default=-1))) + 1
    return union(n, read, list(findings))


def check_made_unit(unit: WorkUnit, made: dict, claims: Claims, device_meta: dict,
                    run_id: str, device_seconds: float, build_options: str = "") -> tuple:
    """``check_unit`` (with ``table=True``) for a unit whose inputs the device made and
    screened (``made``: ``made_handoff``'s).  The verdict is on the inputs the device made
    and the results it computed from them, as the screen's own verdicts are; the host
    makes again the inputs of every finding and of a sample of the rows it read
    (``verified_rows``) from the recipe (generate.inputs_at): they must be the device's.
    The class tallies are the device's.  Raises InputsDisagree where they differ, or
    where the rows the device gathered are not those its screen's answer marks (a device
    fault: no verdict)."""
    from fuzzfarm.device import generate
    from fuzzfarm.verdict.screened import SparseOutputs, outputs_reader, top_position
    t0 = time.perf_counter()
    n, answer = made["n"], made["answer"]
    if made["marked"]:
        pos = SparseOutputs.positions(answer, n)
        top = top_position(answer)
        if pos.size != made["x"].size or made["top"] != top:
            raise InputsDisagree([], [], [], why=(
                f"the device gathered {made['x'].size} rows with the passed row of largest "
                f"error at {made['top']}; its screen's answer marks {pos.size} with it at "
                f"{top}"))
        outputs = SparseOutputs(n, pos, made["outputs"])
        device_at = SparseOutputs(n, pos, {"x": made["x"]}).at
    else:
        outputs, device_at = made["outputs"], outputs_reader({"x": made["x"]})

    def inputs_at(pos):
        return {"x": np.asarray(device_at(np.asarray(pos, np.int64))["x"])}

    def verify(rows):
        host = generate.inputs_at(unit, rows, generate.lane_plans(unit))
        dev = inputs_at(rows)["x"]
        if not np.array_equal(host, dev):
            bad = np.flatnonzero(host != dev)
            raise InputsDisagree(rows[bad], host[bad], dev[bad])

    # nothing counted on the device: the candidates are the marked rows themselves
    cands = pos if made["marked"] and not answer.agg_count.any() else None
    result = _judge_unit(unit.target.fn, inputs_at, n, outputs, answer, claims, cands)
    read = pos if made["marked"] else SparseOutputs.positions(answer, n)
    verify(verified_rows(unit, read, [f.index for f in result.findings] +
                         ([result.max_ulp_element] if result.max_ulp_element >= 0 else [])))
    dt = time.perf_counter() - t0
    table = finding_table(result, unit, device_meta, run_id, build_options)
    stats = stats_row(result, unit, None, device_meta, run_id, device_seconds, dt,
                      build_options, tally=generate.tally(made["tally"]), inputs_at=inputs_at)
    return table, stats, result


@lru_cache(maxsize=1 << 16)
def _describe_cached(kind: str, v: int, fmt: FloatFormat) -> str:
    return formats.describe_value(kind, v, fmt)


def _hex_row(values, fmt: FloatFormat, which) -> str:
    """``name=0x1p+0 (0x3f800000), k=3``; vectors (more values than names) as tuples."""
    values = list(values)
    if not which:
        return ""
    per = max(1, len(values) // len(which))
    parts = []
    for k, a in enumerate(which):
        chunk = values[k * per:(k + 1) * per]
        text = [_describe_cached(a.kind, int(v), fmt) for v in chunk]
        parts.append(f"{a.name}={text[0]}" if len(text) == 1 else f"{a.name}=({', '.join(text)})")
    return ", ".join(parts)


#: Every value is stored as its raw bits in an unsigned 64-bit integer: float patterns as
#: they are, integers in two's complement (read back with the argument's dtype).
_U64 = (1 << 64) - 1


def _signature(unit: WorkUnit):
    """(input Args, output Args, input format, output format) of the unit's target: how
    its findings' bits are described."""
    target = unit.target
    return target.inputs, target.outputs, target.input_format, target.output_format


#: Finding columns that vary by finding (the rest are the same for a whole unit).
_FINDING_FIELDS = ("element", "input_bits", "inputs", "output", "output_bits", "outputs",
                   "expected", "rule_id", "section", "sentence", "severity", "reading",
                   "text", "verb", "ulp_error", "count", "input_class")



class _Values:
    """One side (inputs or outputs) of a unit's findings, column-wise: ``bits`` the raw
    bits of every finding as uint64 (two's complement for ints), ``per`` values per
    finding (None when findings differ), ``text`` the readable column."""

    def __init__(self, tuples: list, which, fmt: FloatFormat):
        n = len(tuples)
        lengths = {len(t) for t in tuples}
        self.per = lengths.pop() if len(lengths) == 1 else (0 if not n else None)
        if self.per is not None:
            self.bits = np.fromiter((int(v) & _U64 for t in tuples for v in t),
                                    dtype=np.uint64, count=n * self.per)
            self.lists = None
        else:                           # ragged (not seen in practice): row by row
            self.lists = [[int(v) & _U64 for v in t] for t in tuples]
            self.bits = None
        if self.per is not None and which and self.per == len(which):
            # one value per argument: describe each distinct value once, then index
            mat = self.bits.reshape(n, self.per)
            parts = []
            for k, a in enumerate(which):
                uniq, inv = np.unique(mat[:, k], return_inverse=True)
                names = np.array([f"{a.name}={_describe_cached(a.kind, int(u), fmt)}"
                                  for u in uniq], dtype=object)
                parts.append(names[inv.ravel()])
            self.text = list(parts[0]) if len(parts) == 1 else \
                [", ".join(row) for row in zip(*parts)]
        else:                           # vectors (geometric): as tuples, per finding
            self.text = [_hex_row(t, fmt, which) for t in tuples]

    def as_lists(self) -> list:
        if self.lists is not None:
            return self.lists
        return self.bits.reshape(-1, self.per).tolist() if self.per else \
            [[] for _ in self.text]

    def as_arrow(self, type_):
        import pyarrow as pa
        if self.lists is not None or not self.per:
            return pa.array(self.as_lists(), type=type_)
        offsets = pa.array(np.arange(0, self.bits.size + 1, self.per, dtype=np.int32))
        return pa.ListArray.from_arrays(offsets, pa.array(self.bits, type=pa.uint64()),
                                        type=type_)


def _finding_columns(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str,
                     build_options: str) -> tuple[dict, dict]:
    """(per-finding columns, columns constant over the unit) of the unit's findings.
    ``input_bits``/``output_bits`` are ``_Values``; each distinct value is described once."""
    from operator import attrgetter

    from fuzzfarm.store.samples import sample_findings
    ins, outs, fin, fout = _signature(unit)
    target = unit.target
    fn = None if target.is_conversion else target.fn
    fs, counts, classes = sample_findings(result, fn, target.fmt, unit.seed)

    def col(name):
        return list(map(attrgetter(name), fs))

    cols = {"element": col("index"), "count": counts, "input_class": classes,
            "input_bits": _Values(col("inputs"), ins, fin),
            "output": col("output"),
            "output_bits": _Values(col("outputs"), outs, fout)}
    cols["inputs"] = cols["input_bits"].text
    cols["outputs"] = cols["output_bits"].text
    for name in ("expected", "rule_id", "section", "sentence", "severity", "reading",
                 "ulp_error"):
        cols[name] = col(name)
    cols["text"], cols["verb"] = (list(c) for c in zip(*map(modality.governing,
                                                             cols["rule_id"]))) \
        if fs else ([], [])
    const = {"run_id": run_id, "unit_id": unit.unit_id, **device_meta,
             "function": unit.function, "precision": unit.precision,
             "vector_width": unit.vector_width, "build_options": build_options,
             "seed": unit.seed, "recipe": unit.recipe_json,
             "time": datetime.now(timezone.utc)}
    return cols, const


def finding_rows(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str,
                 build_options: str = "") -> list[dict]:
    """Findings of one checked unit as rows of store.FINDINGS_SCHEMA.  ``input_bits`` and
    ``output_bits`` hold raw bits as unsigned 64-bit integers (integers in two's
    complement); ``inputs``/``outputs`` the same as readable text.  (``finding_table``
    gives the same as a pyarrow Table, without a dict per row.)"""
    cols, const = _finding_columns(result, unit, device_meta, run_id, build_options)
    cols = {**cols, "input_bits": cols["input_bits"].as_lists(),
            "output_bits": cols["output_bits"].as_lists()}
    return [{**const, **dict(zip(_FINDING_FIELDS, vals))}
            for vals in zip(*(cols[k] for k in _FINDING_FIELDS))]


def finding_table(result: CheckResult, unit: WorkUnit, device_meta: dict, run_id: str,
                  build_options: str = ""):
    """The unit's findings as a pyarrow Table of store.FINDINGS_SCHEMA (the rows of
    ``finding_rows``), built column by column."""
    import pyarrow as pa

    from fuzzfarm.store import dataset as store
    cols, const = _finding_columns(result, unit, device_meta, run_id, build_options)
    n = len(cols["element"])
    arrays = []
    for f in store.FINDINGS_SCHEMA:
        if isinstance(cols.get(f.name), _Values):
            arrays.append(cols[f.name].as_arrow(f.type))
        elif f.name in cols:
            arrays.append(pa.array(cols[f.name], type=f.type))
        else:
            value = const.get(f.name)
            arrays.append(pa.array([value] * n, type=f.type) if n < 64 else
                          pa.repeat(pa.scalar(value, type=f.type), n))
    return pa.Table.from_arrays(arrays, schema=store.FINDINGS_SCHEMA)


def stats_row(result: CheckResult, unit: WorkUnit, inputs: dict, device_meta: dict,
              run_id: str, device_seconds: float, check_seconds: float,
              build_options: str = "", by_class: dict | None = None, tally: tuple | None = None,
              inputs_at=None) -> dict:
    """The unit's row of store.STATS_SCHEMA (the inputs' classes and distinct inputs
    counted with numpy: ``strategies.class_tally``, unless the caller knows the classes:
    ``by_class``, for inputs distinct by construction such as a sweep's chunk; or
    ``tally``, (by class, distinct by class, distinct rows) counted elsewhere: the device's
    for inputs it made, with ``inputs_at(pos)`` giving the inputs the row names instead of
    ``inputs``).
    The result's error histogram (``ulp_hist``) is stored as its nonzero cells."""
    target = unit.target
    kind = kind_of(target)
    if tally is not None:
        by_class, distinct, rows = tally
    elif by_class is None:
        by_class, distinct, rows = kind.tally(target, inputs)
    else:
        distinct, rows = by_class, result.n
    fails = result.counts_by_rule("fail")
    notes = result.counts_by_rule("note")
    row = {
        "run_id": run_id, "unit_id": unit.unit_id, **device_meta,
        "function": unit.function, "precision": unit.precision,
        "vector_width": unit.vector_width, "build_options": build_options,
        "seed": unit.seed, "recipe": unit.recipe_json, "inputs_tested": result.n,
        "inputs_by_class": list(by_class.items()), "unjudged": result.unjudged,
        "distinct_by_class": list(distinct.items()), "distinct_inputs": rows,
        "failures": sum(fails.values()), "failures_by_rule": list(fails.items()),
        "notes": sum(notes.values()), "notes_by_rule": list(notes.items()),
        "max_ulp_error": None if np.isnan(result.max_ulp_error) else result.max_ulp_error,
        "screened": result.screened, "exact": result.exact,
        "device_seconds": device_seconds, "check_seconds": check_seconds,
        "time": datetime.now(timezone.utc),
    }
    if result.ulp_hist is not None:
        from fuzzfarm.oracle.histogram import to_cells
        row["ulp_histogram"] = to_cells(result.ulp_hist)
    e = result.max_ulp_element
    if e >= 0:                    # the inputs of the element with the largest error
        at = kind.element_inputs(target, inputs if inputs_at is None else
                                 inputs_at(np.array([e])), e if inputs_at is None else 0)
        if at is not None:
            row["max_ulp_inputs"] = at
    return row


def check_result(unit: WorkUnit, inputs: dict, outputs: dict, claims: Claims,
                 answer=None) -> CheckResult:
    """The verdict on one unit's outputs (built-in, geometric or conversion); with
    ``answer`` (the device screen's ScreenChunk, ``submit_unit``) only its candidates are
    judged here (fuzzfarm.verdict.screened), every index still a position in the unit."""
    target = unit.target
    if answer is None:
        return kind_of(target).check(target, inputs, outputs, claims)
    return _judge_unit(target.fn, lambda p: {k: v[p] for k, v in inputs.items()},
                       len(inputs["x"]), outputs, answer, claims)


def _judge_unit(fn, inputs_at, n: int, outputs, answer, claims, cands=None) -> CheckResult:
    """verdict.screened.judge_screened for a drawn unit: its ``max_ulp_element`` made a
    position in the unit (a sweep's stays an index into the candidates' inputs)."""
    from fuzzfarm.verdict.screened import judge_screened
    res, _, pos = judge_screened(fn, inputs_at, n, outputs, answer, claims, cands)
    if res.max_ulp_element >= 0:
        res.max_ulp_element = int(pos[res.max_ulp_element])
    return res


def check_unit(unit: WorkUnit, inputs: dict, outputs: dict, claims: Claims,
               device_meta: dict, run_id: str, device_seconds: float,
               build_options: str = "", table: bool = False, answer=None) -> tuple:
    """Check one unit's device outputs; returns (finding rows, stats row, CheckResult), or
    with ``table=True`` (findings as a pyarrow Table, stats row, CheckResult).
    ``answer``: the device screen's (``check_result``)."""
    t0 = time.perf_counter()
    result = check_result(unit, inputs, outputs, claims, answer)
    dt = time.perf_counter() - t0
    make = finding_table if table else finding_rows
    rows = make(result, unit, device_meta, run_id, build_options)
    stats = stats_row(result, unit, inputs, device_meta, run_id, device_seconds, dt,
                      build_options)
    return rows, stats, result


def unit_kernel_source(unit: WorkUnit, sweep: bool = False) -> str:
    """The OpenCL C source of the kernel ``unit`` runs (a sweep kernel with ``sweep``),
    for a device-fault finding; '' where it cannot be made.  Never raises."""
    try:
        target = unit.target
        return kind_of(target).kernel_source(target, sweep)
    except Exception:           # noqa: BLE001 - a description, never a reason to stop
        return ""


#: The device-fault findings (``fault_rows``): rule id, section and sentence per reason.
DEVICE_FAULTS = {
    "crash": ("device.crash", "OpenCL runtime: kernel execution",
              "Running this unit killed the process that drives the device, twice (the "
              "second time alone on the device)."),
    "hang": ("device.hang", "OpenCL runtime: kernel execution",
             "This unit stayed on the device past its watchdog limit (derived from the "
             "time units of its target take, at most unit.timeout), twice (the second "
             "time alone on the device)."),
    "build_failure": ("device.build_failure", "OpenCL 3.0 API §5.8.4 clBuildProgram",
                      "clBuildProgram returns CL_SUCCESS if the function is executed "
                      "successfully; CL_BUILD_PROGRAM_FAILURE if there is a failure to build "
                      "the program executable."),
    "enqueue_error": ("device.enqueue_error", "OpenCL 3.0 API §5.10 and §5.2 (enqueue, "
                      "buffers, finish)",
                      "An OpenCL call that runs this unit's kernel or moves its data "
                      "returned an error instead of CL_SUCCESS."),
    "integer_arithmetic": ("device.integer_arithmetic", "OpenCL C 3.0 §6.15.1-§6.15.7 "
                           "(ulong arithmetic, shift and relational operators)",
                           "The device made this unit's inputs with exact integer "
                           "operations (fuzzfarm/device/generate.cl) and some of them "
                           "differ from the inputs the host makes from the same recipe "
                           "with the same operations: the unit's outputs were not judged."),
}

#: What a fault finding expects instead, per reason.
_FAULT_EXPECTED = {"crash": "completion", "hang": "completion",
                   "build_failure": "a successful build (CL_SUCCESS)",
                   "enqueue_error": "CL_SUCCESS",
                   "integer_arithmetic": "the inputs the host makes from the same recipe"}


def fault_rows(unit: WorkUnit, device_meta: dict, run_id: str, build_options: str,
               reason: str, detail: dict | None = None) -> tuple[dict, dict]:
    """(finding row, stats row) recording ``unit`` as a device fault (``reason``: a key of
    DEVICE_FAULTS: "crash", "hang", "build_failure", "enqueue_error"): severity "fault",
    no outputs, the unit's recipe (a crash's or hang's inputs are saved beside, see
    store.write_fault_inputs).  ``detail`` (JSON-able; e.g. ``kernel_source``,
    ``kernel_name``, ``build_log``, ``error_code``, ``error``) is stored as JSON in the
    ``fault_detail`` column, and its ``build_log`` or ``error`` as the readable
    ``reading``.  The stats row counts nothing as tested.  Raises KeyError for another
    reason."""
    rule, section, sentence = DEVICE_FAULTS[reason]
    detail = detail or {}
    reading = detail.get("error") or ""
    if detail.get("build_log"):
        lines = detail["build_log"].strip().splitlines()
        reading = "build log: " + " | ".join(lines[:8]) + (" | ..." if len(lines) > 8 else "")
    now = datetime.now(timezone.utc)
    common = {"run_id": run_id, "unit_id": unit.unit_id, **device_meta,
              "function": unit.function, "precision": unit.precision,
              "vector_width": unit.vector_width, "build_options": build_options,
              "seed": unit.seed, "recipe": unit.recipe_json, "time": now}
    what = f"kernel {detail['kernel_name']}" if detail.get("kernel_name") else \
        f"unit {unit.unit_id}"
    finding = {**common, "element": -1, "input_bits": [], "inputs": what,
               "output": "", "output_bits": [], "outputs": detail.get("error_name", ""),
               "expected": _FAULT_EXPECTED[reason], "rule_id": rule, "section": section,
               "sentence": sentence, "severity": "fault", "reading": reading, "text": None,
               "verb": None, "ulp_error": None,
               "fault_detail": json.dumps(detail, sort_keys=True) if detail else None}
    stats = {**common, "inputs_tested": 0, "inputs_by_class": [], "failures": 0,
             "failures_by_rule": [], "notes": 0, "notes_by_rule": [], "max_ulp_error": None,
             "screened": 0, "exact": 0, "unjudged": 0, "device_seconds": None,
             "check_seconds": None}
    return finding, stats


def write_fault(out, run_id: str, unit: WorkUnit, device_meta: dict, build_options: str,
                reason: str, detail: dict | None = None) -> dict:
    """Write ``unit``'s device-fault finding and then its stats row (``fault_rows``; each
    file atomically, the stats row last, which makes the unit done).  Returns the
    finding row."""
    from fuzzfarm.store import dataset as store
    finding, stats = fault_rows(unit, device_meta, run_id, build_options, reason, detail)
    store.write_findings(out, run_id, unit.unit_id, [finding])
    store.write_stats(out, run_id, unit.unit_id, stats)
    return finding
