"""Making units and their inputs: a stream's unit ``serial`` as a ``WorkUnit``, its recipes
drawn, its inputs expanded, and how large a unit should be.

A stream (one target with one build-options set; ``fuzzfarm.orchestrate.scheduler``) numbers
its units: unit 0 is the special-value pool, the others draw hypothesis recipes from a seed
derived from (the stream's seed, the serial, the target), each recipe expanded by the
vectorized sampler (``strategies.expand``) into ``n`` inputs.  Hypothesis draws recipes
slowly (a few hundred a second), millions of inputs come from a few recipes, so a unit can
hold anything from a few thousand inputs to millions (``UnitSizer``).  ``make_inputs``
regenerates a unit's inputs deterministically from the unit alone, so a finding's
``seed`` and ``recipe`` columns rebuild its batch (``fuzzfarm.work.unit.unit_from_row``).
No Ray and no pyopencl here.
"""
from __future__ import annotations

import zlib
from dataclasses import replace

import numpy as np

from fuzzfarm.target import CONSTANTS_DOORS, Target, TargetError
from fuzzfarm.work.kinds import kind_of
from fuzzfarm.work.unit import Drawn, IndexRange, Special, WorkUnit

__all__ = ["make_unit", "stream_unit", "draw", "make_inputs", "split_size", "unit_seed",
           "UnitSizer", "UNIT_MAX_BYTES", "RESIDENT_MAX_BYTES", "resident_bytes",
           "bytes_per_input", "MIN_PER_RECIPE", "MAX_RECIPES", "MAX_PER_RECIPE",
           "MAX_LITERAL_INPUTS", "literal_sample"]

#: Inputs per recipe a unit of a given size aims at: a unit of S inputs draws
#: ``split_size(S)`` recipes (at least one, at most ``MAX_RECIPES`` up to 2**23 inputs).
MIN_PER_RECIPE = 8192
#: The most recipes one unit of up to MAX_RECIPES * MAX_PER_RECIPE inputs draws
#: (hypothesis draws a few hundred recipes a second: on a small machine the draw is a
#: visible part of generating a unit) ...
MAX_RECIPES = 4
#: ... and a larger unit (one kept on the device, up to 2**26 inputs) one recipe per
#: MAX_PER_RECIPE inputs, so that its inputs are as varied as those of units of 2**23
#: (a recipe of a narrow class -- subnormals of one exponent window, say -- repeats
#: inputs when drawn too densely).
MAX_PER_RECIPE = 1 << 21


def split_size(size: int, max_recipes: int | None = None) -> list[int]:
    """``size`` inputs split into recipe parts: as many parts of at least MIN_PER_RECIPE
    as fit, at most ``max_recipes`` (default: MAX_RECIPES, or one per MAX_PER_RECIPE
    inputs where that is more), sizes differing by at most one."""
    size = max(1, int(size))
    if max_recipes is None:
        max_recipes = max(MAX_RECIPES, -(-size // MAX_PER_RECIPE))
    k = max(1, min(int(max_recipes), size // MIN_PER_RECIPE))
    q, r = divmod(size, k)
    return [q + 1] * r + [q] * (k - r)


def unit_seed(seed: int, serial: int, target) -> int:
    """The seed unit ``serial`` of a stream of ``target`` with seed ``seed`` draws its
    recipes from (a 31-bit integer)."""
    # not the front end: the same stream draws the same inputs through either
    name, precision, width, _ = Target.of(target)
    key = zlib.crc32(f"{name}.{precision}.{width}".encode()) % 65521
    return (seed * 1_000_003 + serial * 7919 + key) % (2**31)


def stream_unit(unit_id: str, target, serial: int, seed: int, sizes=None,
                replay=(), build_options: str = "", span: IndexRange | None = None
                ) -> WorkUnit:
    """Unit ``serial`` of a stream of ``target`` with seed ``seed``, its recipes not drawn
    yet (``draw``): the special-value pool for serial 0 (preceded by ``replay``'s input-bit
    tuples), else inputs drawn in parts of ``sizes`` (a list of ints) from
    ``unit_seed(seed, serial, target)``; with ``span``, that range of the input space."""
    target = Target.of(target)
    if span is not None:
        source = span
    elif serial == 0:
        source = Special(int(seed), tuple(tuple(int(b) for b in t) for t in replay))
    else:
        source = Drawn(unit_seed(seed, serial, target), tuple(int(n) for n in sizes))
    return WorkUnit(unit_id, target, source, build_options)


def draw(unit: WorkUnit) -> WorkUnit:
    """``unit`` with its recipes drawn and held (``WorkUnit.recipes``): what a unit maker
    hands on, so that nothing downstream draws them again.  Any other unit as it is."""
    s = unit.source
    if not isinstance(s, Drawn) or s.recipes is not None:
        return unit
    recipes = kind_of(unit.target).draw_recipes(unit.target, s.seed, list(s.sizes))
    return replace(unit, source=replace(s, recipes=recipes))


def make_unit(device: str, target, serial: int, seed: int, per_recipe: int,
              recipes_per_unit: int, size: int | None = None, replay=(),
              build_options: str = "") -> WorkUnit:
    """Unit number ``serial`` of ``target`` (a Target or its (name, precision, width))
    for ``device`` (a fingerprint, the prefix of its id), recipes drawn.  Size: ``size``
    inputs (vectors for a geometric built-in) split by ``split_size`` into recipes, or,
    with ``size=None``, ``recipes_per_unit`` recipes of ``per_recipe`` inputs each."""
    target = Target.of(target)
    sizes = [int(per_recipe)] * max(1, int(recipes_per_unit)) if size is None \
        else split_size(size)
    return draw(stream_unit(f"{device}-{target.id}-{serial:06d}", target, serial, seed,
                            sizes, replay, build_options))


def make_inputs(unit: WorkUnit) -> dict[str, np.ndarray]:
    """The unit's inputs: arrays by input name (float arguments as bit patterns of their
    format's unsigned dtype, int arguments int32, a conversion's source in its buffer
    dtype).  Element-wise built-ins: any length (the device pads to the width); geometric
    built-ins: a multiple of the width (whole vectors).  Deterministic in the unit
    (``fuzzfarm.work.kinds``: its kind makes them from its source).  Raises SpaceError
    (a BadInput) for a range of a target whose space cannot be enumerated.  A unit
    compared with a constants door (``WorkUnit.against``) keeps at most
    MAX_LITERAL_INPUTS of its special values (``literal_sample``)."""
    inputs = kind_of(unit.target).inputs(draw(unit))
    return literal_sample(inputs) if unit.against in CONSTANTS_DOORS else inputs


#: The most inputs of a unit compared with the constants door: each is a call the
#: compiler folds or inlines (DeviceRunner.run_literals builds them 64 to a program), and a
#: built-in of two or three arguments has tens of thousands of special-value tuples.
MAX_LITERAL_INPUTS = 512


def literal_sample(inputs: dict) -> dict:
    """``inputs`` ({name: array (n,)}) cut to at most MAX_LITERAL_INPUTS rows, every k-th
    (k = ceil(n / MAX_LITERAL_INPUTS), from the first): deterministic, spread over the
    pool's order (its classes and their combinations)."""
    n = len(next(iter(inputs.values())))
    step = -(-n // MAX_LITERAL_INPUTS)
    return inputs if step <= 1 else {k: np.ascontiguousarray(v[::step])
                                     for k, v in inputs.items()}


#: The most host memory one unit's inputs and outputs may take (UnitSizer): a drawn unit
#: of a binary32 built-in of one argument gets up to 2**23 inputs, binary64 2**22.  Larger
#: units on a fast device keep the stats rows (one per unit, ~200 bytes compacted) under
#: 1 GB a day: the H100 checks binary32 sin at ~1.8e8 inputs/s.
UNIT_MAX_BYTES = 64 << 20
#: ... and the most device memory one *resident* unit may take: a unit whose inputs the
#: device makes and whose results it judges (the host holds only the rows it judges:
#: work.check.UnitReport.resident), bounded by the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE
#: so that every buffer fits (``resident_bytes``).  A binary32 built-in of one argument
#: then gets up to 2**26 inputs: eight times fewer units, each with the same fixed costs
#: (a lease, a launch, a hand-off to a check task).
RESIDENT_MAX_BYTES = 512 << 20


def resident_bytes(max_alloc_bytes: int) -> int:
    """The byte bound of resident units (``RESIDENT_MAX_BYTES``) on a device whose
    CL_DEVICE_MAX_MEM_ALLOC_SIZE is ``max_alloc_bytes`` (bytes; 0: unknown, then
    ``UNIT_MAX_BYTES``, the bound of every unit, which OpenCL's least allowed value
    fits).  Pure."""
    if max_alloc_bytes <= 0:
        return UNIT_MAX_BYTES
    return max(UNIT_MAX_BYTES, min(RESIDENT_MAX_BYTES, int(max_alloc_bytes)))


def bytes_per_input(target) -> int:
    """Bytes of host memory one input of ``target`` (a Target or its tuple) takes with its
    outputs: every argument and output at the widest of its formats (an upper bound); a
    geometric built-in's input is a vector of ``width`` elements."""
    t = Target.of(target)
    size = max(np.dtype(t.input_format.uint).itemsize, np.dtype(t.output_format.uint).itemsize)
    return (len(t.inputs) + len(t.outputs)) * size * kind_of(t).lanes_per_input(t)


class UnitSizer:
    """How many inputs the next unit of a target gets: about ``unit_seconds`` of checking
    at the rate measured so far for that target (inputs per second of its check tasks),
    growing at most ``growth`` times from one unit to the next, within [``min_inputs``,
    ``max_inputs``] and at most ``max_bytes`` of inputs and outputs (``bytes_per_input``
    of the key's last item, a Target); ``min_inputs`` while nothing is measured.  A key
    whose units came back resident (``observe``) is bounded by its pool's
    ``resident_bytes`` instead ({pool: bytes}, the key's first item; ``max_bytes`` for a
    pool not named), and its rate counts the device's seconds too (the slower of device
    and check).  Sizes of 1024 and more are multiples of 1024.  Pure bookkeeping (the
    scheduler holds one)."""

    def __init__(self, unit_seconds: float = 0.5, min_inputs: int = 1024,
                 max_inputs: int = 1 << 26, growth: float = 8.0,
                 max_bytes: int = UNIT_MAX_BYTES, resident_bytes: dict | None = None):
        self.unit_seconds = float(unit_seconds)
        self.min_inputs = max(1, int(min_inputs))
        self.max_inputs = max(self.min_inputs, int(max_inputs))
        self.max_bytes = int(max_bytes)
        self.resident_bytes = dict(resident_bytes or {})
        self.growth = float(growth)
        self.rate: dict = {}           # key -> inputs per second (moving average)
        self.last: dict = {}           # key -> size of the last unit handed out
        self.resident: set = set()     # keys whose last unit came back resident
        self._caps: dict = {}          # (key, resident) -> its largest size

    def cap(self, key) -> int:
        """The largest unit of ``key``: ``max_inputs``, or fewer where its byte bound
        binds (``max_bytes``; a resident key's pool's ``resident_bytes``; never below
        ``min_inputs``).  A key whose last item is not a target has no byte bound."""
        resident = key in self.resident
        if (key, resident) not in self._caps:
            last = key[-1] if isinstance(key, tuple) and key else None
            try:
                per = bytes_per_input(last) if isinstance(last, tuple) else 0
            except (TargetError, ValueError):   # not a target: no byte bound
                per = 0
            limit = self.max_bytes
            if resident and isinstance(key, tuple):
                limit = max(limit, self.resident_bytes.get(key[0], limit))
            cap = self.max_inputs if per <= 0 else min(self.max_inputs, limit // per)
            self._caps[(key, resident)] = max(self.min_inputs, cap)
        return self._caps[(key, resident)]

    def observe(self, key, inputs: int, seconds: float, resident: bool = False,
                device_seconds: float = 0.0) -> None:
        """A unit of ``key`` with ``inputs`` inputs took ``seconds`` to check (and
        ``device_seconds`` on the device); ``resident``: its inputs were made and its
        results judged on the device (then its rate is of the slower of the two)."""
        if resident:
            self.resident.add(key)
            seconds = max(seconds or 0.0, device_seconds or 0.0)
        else:
            self.resident.discard(key)
        if inputs <= 0 or not seconds or seconds <= 0:
            return
        r = inputs / seconds
        old = self.rate.get(key)
        self.rate[key] = r if old is None else 0.5 * old + 0.5 * r

    def next_size(self, key) -> int:
        """The size of the next unit of ``key`` (inputs; see the class docstring)."""
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
