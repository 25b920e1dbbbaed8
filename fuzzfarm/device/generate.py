"""A drawn unit's inputs made on the device (issue 17, item 5).

A version-2 recipe's inputs are an integer-only function of the recipe and the row
(``strategies.expand_plans``): per part of a unit, a ``distinct.LanePlan`` names, for each
class variant, how many members it gives and where its keyed bijection starts.  Here that
plan is encoded as a small table of segments (``SEGW`` ulongs each) and ``generate.cl``
makes the unit's patterns on the device, so a run unit moves no inputs from the host:
the host keeps the recipe, and the check regenerates only the inputs it reads (the device
screen's candidates and counted failures: ``inputs_at``, ``distinct.realize_at``) -- the
same function, bit for bit (``tests/test_device_generate.py`` compares the two on every
class variant).

Variants are made on the device by a *builder* (``B_NORMAL`` sign, exponent and fraction
fields; ``B_INTCONV`` an integer n * a0 + a1 below 2**p, exactly, scaled by 2**-a2;
``B_OR`` sign | constant | field; ``B_OFFSET`` sign | (constant + signed field);
``B_BINADE``; ``B_HALFPI``; ``B_RANDOM``) or, the small
ones (at most ``distinct.TABLE_LIMIT`` members), looked up in a table of their members
built once per format on the host.  No floating-point operation of the device makes an
input: the device under test is not trusted to make its own inputs.  Nor is its integer
arithmetic trusted for a verdict: the device also hands back its own inputs at the
positions the check reads, and the check records an ``integer_arithmetic`` device fault
instead of a verdict wherever they differ from the host's (``fuzzfarm.work.check``).

The tally kernel counts the unit's inputs and *distinct* inputs per IEEE class on the
device (a hash set; the stats row's ``inputs_by_class``, ``distinct_by_class``): the
statistics ``strategies.class_tally`` computes on the host by sorting.

A built-in of two or three arguments (floats; in binary32 also an int, made from the int
class table) has a plan per argument (one column each, ``UnitPlan.columns``), each made
as a one-argument unit's; then, where its recipes tie
(version 3: ``strategies.tie_masks``, a hash of the row), the ties kernel copies the first
argument into the later ones at the tied rows (the sign flipped at half of them).  The
tally counts every argument's classes and the distinct rows (tuples of the arguments) in
a hash set of row numbers, comparing the rows themselves: exact, whatever the width.

``unit_plan`` raises ``NotOnDevice`` for a unit the device does not make (special-value
units, version-1 recipes, lanes, int arguments beside binary64 patterns, formats other
than binary32 and binary64, plans that repeat members, version-2 recipes that tie); the
host makes those as before.
"""
from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import NamedTuple

import numpy as np

from fuzzfarm.formats import BINARY32, BINARY64, FloatFormat
from strategies._internal.distinct import _bits_for

__all__ = ["NotOnDevice", "UnitPlan", "PartPlan", "TiePart", "TALLY_WORDS", "PartLanes",
           "unit_plan", "plan_or_none", "lane_plans", "encode", "inputs_at", "tally",
           "DeviceGenerator", "SEGW", "WG"]

#: ulongs per segment (layout: generate.cl, S_*)
SEGW = 20
#: work-group size of the generator and the tally (its counts are summed per group first)
WG = 64
B_TABLE, B_NORMAL, B_BINADE, B_INTCONV, B_OR, B_RANDOM, B_HALFPI, B_OFFSET = range(8)
_M64 = (1 << 64) - 1


class NotOnDevice(Exception):
    """A unit whose inputs the device generator does not make (the host makes them)."""


class PartPlan(NamedTuple):
    """One part (recipe) of a unit's argument: rows ``offset .. offset + n`` of the unit,
    its segments (uint64, shape (segments, SEGW)) and its shuffle (kbits, keys) or None."""

    offset: int
    n: int
    segments: np.ndarray
    shuffle: tuple | None


class TiePart(NamedTuple):
    """The ties of one part for one later argument: at rows ``offset .. offset + n`` of
    the unit, the argument copies the first where the top 53 bits of
    ``strategies.tie_hash(key, row - offset)`` are below ``tie``, with the sign flipped
    where they are below ``flip`` (``strategies.tie_thresholds``; 0, 0: no ties)."""

    offset: int
    n: int
    key: int
    tie: int
    flip: int


class UnitPlan(NamedTuple):
    """A unit's inputs as the device makes them: ``n`` rows of the arguments ``names``
    (of ``kinds``: 'float', binary32 or binary64 patterns, or 'int', int32), made from
    ``columns`` (per argument, its PartPlans), then tied by ``ties`` (per later argument,
    ``names[1:]``, its TieParts; empty where no recipe ties)."""

    n: int
    names: tuple
    columns: tuple
    ties: tuple = ()
    kinds: tuple = ()


@lru_cache(maxsize=None)
def _builders(fmt: FloatFormat) -> dict:
    """(class, variant) -> (builder, a0, a1, a2) for the variants built on the device
    (B_HALFPI's a0 and a1, its table's offset and k's lowest value, are filled in by
    ``encode``)."""
    return {
        ("integer", "below_2p"): (B_INTCONV, 1, 0, 0),
        ("integer", "odd"): (B_INTCONV, 2, 1, 0),
        ("integer", "large"): (B_NORMAL, 0, 0, 0),
        ("normal", "random"): (B_NORMAL, 0, 0, 0),
        ("normal", "binade_edge"): (B_BINADE, 0, 0, 0),
        ("half_integer", "any"): (B_INTCONV, 2, 1, 1),
        ("subnormal", "random"): (B_OR, 0, 0, 0),
        ("qnan", "random"): (B_OR, fmt.exp_mask | fmt.quiet_bit, 0, 0),
        ("snan", "random"): (B_OR, fmt.exp_mask, 0, 0),
        ("half_pi_multiple", "large"): (B_HALFPI, 0, 0, 0),
        ("near_one", "wide"): (B_OFFSET, fmt.emax << fmt.frac_bits, 0, 0),    # 1.0 + d
        ("random_bits", "uniform"): (B_RANDOM, 0, 0, 0),
    }


#: (class, variant) -> builder of the int variants built on the device (an int value's
#: low 32 bits are its int32 pattern: random_bits' field runs over INT32_MIN .. INT32_MAX)
_INT_BUILDERS = {("random_bits", "uniform"): (B_RANDOM, 0, 0, 0)}


@lru_cache(maxsize=None)
def _tables(fmt: FloatFormat) -> tuple[np.ndarray, dict]:
    """(the table blob (uint64), {(class, variant): offset} and {("int", class,
    variant): offset}): every float variant without a device builder (their members under
    default Params, by number), every int variant without one (int64 values as their
    two's complement), then the magnitudes of k * pi / 2 for the B_HALFPI variant's k
    range (as classes.py rounds them)."""
    import math

    from strategies._internal.classes import FLOAT_DEFS, INT_DEFS, Params, _mag_of_f64
    from strategies._internal.distinct import TABLE_LIMIT, _table, variant_size
    parts, offsets, at = [], {}, 0
    for kind, defs, builders in (("float", FLOAT_DEFS, _builders(fmt)),
                                 ("int", INT_DEFS, _INT_BUILDERS)):
        for cdef in defs:
            for v in cdef.variants:
                if (v.cls, v.name) in builders:
                    continue
                if variant_size(v, fmt, Params()) > TABLE_LIMIT:
                    continue                # neither: such a unit is made on the host
                t = np.asarray(_table(kind, v.cls, v.name, fmt, Params()))
                t = t.astype(np.int64).view(np.uint64) if kind == "int" else t.astype(np.uint64)
                offsets[(v.cls, v.name) if kind == "float" else ("int", v.cls, v.name)] = at
                parts.append(t)
                at += t.size
    k_field = _halfpi_k(fmt)
    k = np.arange(k_field.lo, k_field.hi + 1, dtype=np.int64)
    parts.append(_mag_of_f64(k.astype(np.float64) * (math.pi / 2), fmt).astype(np.uint64))
    offsets[("half_pi_multiple", "large")] = at
    blob = np.concatenate(parts)
    blob.setflags(write=False)
    return blob, offsets


def _halfpi_k(fmt: FloatFormat):
    """The k field of the B_HALFPI variant (its table is indexed by k - k.lo)."""
    from strategies._internal.classes import FLOAT_BY_NAME, Params
    v = next(v for v in FLOAT_BY_NAME["half_pi_multiple"].variants if v.name == "large")
    return next(f for f in v.fields(fmt, Params()) if f.name == "k")


def encode(plan, fmt: FloatFormat, params) -> np.ndarray:
    """A ``distinct.LanePlan`` of a float or int argument as segments (uint64, shape
    (segments, SEGW)); raises NotOnDevice where a variant has neither a device builder
    nor a table valid under ``params``, or the plan repeats members."""
    from strategies._internal.classes import Params
    if plan.repeat or not plan.segments:
        raise NotOnDevice("the plan repeats members (every variant exhausted)")
    _, offsets = _tables(fmt)
    out = np.zeros((len(plan.segments), SEGW), dtype=np.uint64)
    end = 0
    for row, seg in zip(out, plan.segments):
        v, take = seg.variant, seg.take
        key = (v.cls, v.name)
        fields = v.fields(fmt, params)
        if seg.kind == "int":
            builders, key = _INT_BUILDERS, key if key in _INT_BUILDERS else ("int", *key)
        else:
            builders = _builders(fmt)
        if key in builders:
            builder, a0, a1, a2 = builders[key]
            if builder == B_HALFPI:
                if fields != v.fields(fmt, Params()):
                    raise NotOnDevice(f"variant {v.cls}/{v.name}: its table is for default Params")
                a0, a1 = offsets[key], _halfpi_k(fmt).lo
        elif key in offsets and fields == v.fields(fmt, Params()):
            builder, a0, a1, a2 = B_TABLE, offsets[key], 0, 0
        else:
            raise NotOnDevice(f"variant {v.cls}/{v.name} has no device builder")
        if len(fields) > 3:
            raise NotOnDevice(f"variant {v.cls}/{v.name} has more than 3 fields")
        end += take.count
        whole = take.first is None
        spans = [f.hi - f.lo + 1 for f in fields]
        row[:] = 0
        row[0] = end
        row[1] = take.size & _M64                   # 2**64: 0
        row[2] = 0 if whole else take.first
        row[3] = int(whole)
        row[4:7] = [k & _M64 for k in take.keys]
        row[7] = _bits_for(take.size)
        row[8] = builder
        row[9:12] = [a0 & _M64, a1 & _M64, a2 & _M64]
        row[12] = len(fields)
        row[13:13 + len(spans)] = [s & _M64 for s in spans]
        row[16:16 + len(fields)] = [f.lo & _M64 for f in fields]
    return out


def unit_plan(target, drawn) -> UnitPlan:
    """The device plan of the drawn inputs ``drawn`` (a fuzzfarm.work.unit.Drawn with its
    recipes) of ``target``, a binary32 or binary64 built-in of one, two or three
    arguments at width 1, the first a float, the others floats or (binary32) an int;
    raises NotOnDevice for any other."""
    from strategies._internal.sampler import tie_key, tie_order, tie_thresholds
    if not drawn.recipes:
        raise NotOnDevice("units without recipes are made on the host")
    if (target.kind != "elementwise" or target.width != 1
            or target.fmt not in (BINARY32, BINARY64)):
        raise NotOnDevice("only binary32 and binary64 scalar element-wise built-ins")
    fn = target.fn
    kinds = tuple(a.kind for a in fn.inputs)
    if not 1 <= len(kinds) <= 3 or kinds[0] != "float" or not set(kinds) <= {"float", "int"}:
        raise NotOnDevice("only built-ins of one to three float or int arguments, x a float")
    if "int" in kinds and target.fmt != BINARY32:
        # an int column beside 64-bit patterns: no binary64 screen takes one either
        raise NotOnDevice("int arguments of binary64 built-ins are made on the host")
    names = tuple(a.name for a in fn.inputs)
    later = tie_order(fn)[1:]                 # x, the first float, is the one copied
    columns = [[] for _ in names]
    ties = [[] for _ in names[1:]]
    for part in lane_plans(target, drawn):
        recipe, offset, n = part.recipe, part.offset, part.n
        if recipe.tie_rate > 0 and len(names) > 1 and recipe.version < 3:
            raise NotOnDevice("version-2 recipes tie by numpy's generator: made on the host")
        for parts, lane in zip(columns, part.lanes):
            segs = encode(lane, target.fmt, part.params)
            shuffle = None if lane.shuffle is None else (_bits_for(n), *lane.shuffle)
            parts.append(PartPlan(offset, n, segs, shuffle))
        tie, flip = tie_thresholds(recipe.tie_rate)
        for k, parts in zip(later, ties):
            parts.append(TiePart(offset, n, tie_key(recipe.seed, k), tie, flip) if k else
                         TiePart(offset, n, 0, 0, 0))
    any_tie = any(t.tie for parts in ties for t in parts)
    return UnitPlan(sum(p.n for p in columns[0]), names, tuple(map(tuple, columns)),
                    tuple(map(tuple, ties)) if any_tie else (), kinds)


def plan_or_none(target, drawn) -> UnitPlan | None:
    """``unit_plan(target, drawn)``, or None where the device does not make the inputs."""
    try:
        return unit_plan(target, drawn)
    except NotOnDevice:
        return None


class PartLanes(NamedTuple):
    """One part of drawn inputs: rows ``offset .. offset + n`` of the unit, its Recipe,
    the distinct.LanePlan of each argument (fn.inputs order) and its class Params."""

    offset: int
    n: int
    recipe: object
    lanes: list
    params: object


def lane_plans(target, drawn) -> list:
    """The PartLanes of each part of drawn inputs ``unit_plan`` accepts, in row order."""
    from strategies import Recipe, Stream, expand_plans
    from strategies._internal.classes import Params
    stream = Stream(drawn.seed)
    out, pos = [], 0
    for r, n in zip(drawn.recipes, drawn.sizes):
        recipe = Recipe.from_dict({k: v for k, v in r.items() if k != "n"})
        if recipe.version < 2:
            raise NotOnDevice("version-1 recipes are made on the host")
        lanes = [arg[0] for arg in expand_plans(recipe, target.fn, n, target.fmt, 1, stream)]
        out.append(PartLanes(pos, int(n), recipe, lanes,
                             Params(recipe.exponent_window, recipe.nan_payload)))
        pos += n
    return out


def inputs_at(target, drawn, rows: np.ndarray, plans: list | None = None) -> dict:
    """{argument name: patterns (target.fmt.uint, shape of ``rows``)} at ``rows``
    (integers below the unit's size) of drawn inputs ``unit_plan`` accepts, as the host
    makes them (fuzzfarm.work.make.make_inputs), without making the others
    (``distinct.realize_at``; the ties by ``strategies.tie_masks``).  ``plans``:
    ``lane_plans(target, drawn)``, where the caller keeps them."""
    from strategies._internal.distinct import realize_at
    from strategies._internal.sampler import tie_columns
    rows = np.asarray(rows, dtype=np.int64)
    fn, fmt = target.fn, target.fmt
    out = {a.name: np.zeros(rows.shape, fmt.uint if a.kind == "float" else np.int32)
           for a in fn.inputs}
    for part in (plans if plans is not None else lane_plans(target, drawn)):
        at = np.flatnonzero((rows >= part.offset) & (rows < part.offset + part.n))
        if not at.size:
            continue
        local = rows.flat[at] - part.offset
        cols = {a.name: realize_at(lane, local, fmt, part.params)
                for a, lane in zip(fn.inputs, part.lanes)}
        if part.recipe.tie_rate > 0:
            tie_columns(part.recipe, fn, cols, local, fmt)
        for name, col in cols.items():
            out[name].flat[at] = col
    return out


#: uint32 counts per argument in the tally's output: by class, distinct by class, whether
#: the all-ones pattern was seen (generate.cl, fuzzfarm_tally)
TALLY_WORDS = 21


def tally(counts: np.ndarray, names=("x",), kinds=()) -> tuple[dict, dict, int]:
    """(inputs per class, distinct inputs per class, distinct input rows) of the
    arguments ``names`` (of ``kinds``, 'float' where not given) from the tally kernels'
    ``counts`` (uint32 (TALLY_WORDS * k + 1,) for k arguments: each argument's counts by
    class, distinct counts by class -- IEEE classes, formats.INPUT_CLASSES, or for an int
    formats.INT_CLASSES, in the first words of each half -- and whether the all-ones
    pattern was seen, then the distinct rows where k > 1): the keys and values
    ``strategies.class_tally`` gives."""
    from fuzzfarm.formats import INPUT_CLASSES, INT_CLASSES
    c = np.asarray(counts, dtype=np.int64)
    k = len(INPUT_CLASSES)
    by, distinct = {}, {}
    for i, name in enumerate(names):
        col = c[i * TALLY_WORDS:(i + 1) * TALLY_WORDS]
        classes = INT_CLASSES if i < len(kinds) and kinds[i] == "int" else INPUT_CLASSES
        by.update({f"{name}:{cls}": int(v) for cls, v in zip(classes, col[:k])})
        distinct.update({f"{name}:{cls}": int(v) for cls, v in zip(classes, col[k:2 * k])})
    rows = int(c[k:2 * k].sum()) if len(names) == 1 else int(c[TALLY_WORDS * len(names)])
    return by, distinct, rows


def source(fmt: FloatFormat = BINARY32) -> str:
    """The generator's OpenCL C source for ``fmt``."""
    ptype = {16: "ushort", 32: "uint", 64: "ulong"}[fmt.bits]
    defines = [
        f"#define BITS {fmt.bits}", f"#define FB {fmt.frac_bits}", f"#define EMAX {fmt.emax}L",
        f"#define FRAC_MASK {fmt.frac_mask}UL", f"#define MAX_FINITE {fmt.max_finite}UL",
        f"#define PTYPE {ptype}", f"#define SEGW {SEGW}", f"#define WG {WG}",
    ]
    body = resources.files("fuzzfarm.device").joinpath("generate.cl").read_text()
    return "\n".join(defines) + "\n" + body


class DeviceGenerator:
    """The generator and tally kernels built on a DeviceRunner for ``fmt`` (binary32, or
    binary64: its tally needs cl_khr_int64_base_atomics), with the member tables on the
    device.  Raises KernelBuildError (a finding) where the device does not build them."""

    def __init__(self, runner, fmt: FloatFormat = BINARY32):
        import pyopencl as cl
        self.runner, self.fmt = runner, fmt
        program = runner.build(source(fmt), "the input generator", options="")
        self.kernel = cl.Kernel(program, "fuzzfarm_generate")
        self.ties_kernel = cl.Kernel(program, "fuzzfarm_ties")
        self.tally_kernel = cl.Kernel(program, "fuzzfarm_tally")
        self.tally_int_kernel = cl.Kernel(program, "fuzzfarm_tally_int")
        self.rows_kernel = cl.Kernel(program, "fuzzfarm_tally_rows")
        blob, _ = _tables(fmt)
        mf = cl.mem_flags
        self.table = cl.Buffer(runner.context, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=blob)
        self._set, self._set_bits = None, 0

    def _hash_set(self, n: int):
        """The tallies' hash set for ``n`` inputs: 2**bits >= 2 n slots of a pattern each
        (of a row number, uint32, in ``enqueue_rows``)."""
        import pyopencl as cl
        bits = max(10, (2 * max(1, n) - 1).bit_length())
        if bits > self._set_bits:
            if self._set is not None:
                self._set.release()
            self._set = cl.Buffer(self.runner.context, cl.mem_flags.READ_WRITE,
                                  size=(self.fmt.bits // 8) << bits)
            self._set_bits = bits
        return self._set, self._set_bits

    def _table_buffer(self, rows: list) -> object:
        """A read-only device buffer of ``rows`` (lists of integers) as uint64."""
        import pyopencl as cl
        table = np.array(rows, dtype=np.uint64)
        return cl.Buffer(self.runner.context, cl.mem_flags.READ_ONLY | cl.mem_flags.COPY_HOST_PTR,
                         hostbuf=table)

    def enqueue(self, queue, plan: UnitPlan, outs) -> tuple:
        """Make ``plan``'s rows into device buffers ``outs`` (one per argument of
        ``plan.names``, rows 0 .. plan.n), tie them (``plan.ties``) and count them.
        Returns (first event, last event, counts): ``counts`` a uint32 array
        (TALLY_WORDS * k + 1,) for ``tally`` (k arguments), complete once the last event
        is."""
        import pyopencl as cl
        mf = cl.mem_flags
        k = len(plan.names)
        outs = list(outs)[:k]
        counts = np.zeros(TALLY_WORDS * k + 1, np.uint32)
        count_buf = cl.Buffer(self.runner.context, mf.READ_WRITE | mf.COPY_HOST_PTR,
                              hostbuf=counts)
        items = -(-plan.n // WG) * WG
        started = None
        for parts, out in zip(plan.columns, outs):
            rows, first = [], 0
            for p in parts:
                kb, k0, k1, k2 = p.shuffle if p.shuffle is not None else (1, 0, 0, 0)
                rows.append([p.offset, p.n, first, len(p.segments),
                             int(p.shuffle is not None), kb, k0, k1, k2])
                first += len(p.segments)
            segs = np.ascontiguousarray(np.concatenate([p.segments for p in parts]))
            ev = self.kernel(queue, (items,), (WG,), out, np.uint64(plan.n),
                             self._table_buffer(rows), np.uint32(len(parts)),
                             self._table_buffer(segs), self.table)
            started = started or ev
        for parts, out in zip(plan.ties, outs[1:]):
            self.ties_kernel(queue, (items,), (WG,), out, outs[0], np.uint64(plan.n),
                             self._table_buffer([list(t) for t in parts]),
                             np.uint32(len(parts)))
        for i, out in enumerate(outs):
            self.enqueue_tally(queue, out, plan.n, count_buf, TALLY_WORDS * i,
                               ints=plan.kinds[i:i + 1] == ("int",))
        if k > 1:
            self.enqueue_rows(queue, outs, plan.n, count_buf, TALLY_WORDS * k)
        ev = cl.enqueue_copy(queue, counts, count_buf, is_blocking=False)
        return started, ev, counts

    def enqueue_tally(self, queue, x, n: int, counts, at: int = 0, ints: bool = False
                      ) -> None:
        """Add the counts of ``n`` patterns of ``fmt`` (``ints``: int32 values) in device
        buffer ``x`` to device buffer ``counts`` (uint32, zeroed by the caller; words
        ``at .. at + TALLY_WORDS``, ``tally`` reads them)."""
        import pyopencl as cl
        hset, bits = self._hash_set(n)
        dtype = np.uint32 if ints else self.fmt.uint
        empty = np.full(1, np.iinfo(dtype).max, dtype)                      # EMPTY
        cl.enqueue_fill_buffer(queue, hset, empty, 0, empty.itemsize << bits)
        items = -(-n // WG) * WG
        kernel = self.tally_int_kernel if ints else self.tally_kernel
        kernel(queue, (items,), (WG,), x, np.uint64(n), hset, np.uint32(bits), counts,
               np.uint32(at))

    def enqueue_rows(self, queue, columns, n: int, counts, at: int) -> None:
        """Add the number of distinct rows of the 2 or 3 device buffers ``columns`` (``n``
        patterns of ``fmt`` each) to word ``at`` of device buffer ``counts`` (uint32)."""
        import pyopencl as cl
        hset, bits = self._hash_set(n)
        free = np.zeros(1, np.uint32)                                       # no row
        cl.enqueue_fill_buffer(queue, hset, free, 0, 4 << bits)
        items = -(-n // WG) * WG
        cols = list(columns) + [columns[0]] * (3 - len(columns))
        self.rows_kernel(queue, (items,), (WG,), *cols, np.uint32(len(columns)),
                         np.uint64(n), hset, np.uint32(bits), counts, np.uint32(at))
