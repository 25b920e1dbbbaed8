"""What each kind of target does in a work unit: one class per ``Target.kind``.

A work unit's life is the same for every target (make inputs, run a kernel, check the
outputs, count the inputs' classes, describe a fault); how each step is done depends on the
kind alone, and lives here rather than in branches over names:

* ``Elementwise``: a catalogue built-in applied lane by lane (math, half_, native_, common,
  integer arguments included).  Inputs from hypothesis recipes expanded by
  ``strategies.expand``, unit 0 the special-value pool; kernels of one program per
  (precision, width); verdict ``fuzzfarm.verdict.checker.check_batch``.
* ``Geometric``: a built-in on whole vectors (dot, cross, length, normalize, ...): inputs
  and special vectors from ``fuzzfarm.verdict.geometric``, verdict ``check_batch``.
* ``Conversion``: ``convert_<dst>[_sat][_<mode>](<src>)``: inputs from
  ``strategies.conversions``, one small program per conversion
  (``fuzzfarm.device.conversion_kernels``), verdict ``fuzzfarm.verdict.conversions.check``.

``kind_of(target)`` gives the class's one instance.  No pyopencl here: a device is any
object with ``run``/``submit`` (``fuzzfarm.device.runner.DeviceRunner``) or
``run_source``/``submit_source``.
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.target import Target

__all__ = ["Kind", "Elementwise", "Geometric", "Conversion", "kind_of"]


class Kind:
    """The steps of a work unit that depend on the kind of its target.  ``inputs`` dicts
    map input names to arrays (float arguments as bit patterns of their format's unsigned
    dtype, int arguments int32, a conversion's source in its buffer dtype)."""

    name = ""

    def draw_recipes(self, target: Target, unit_seed: int, parts: list[int]) -> tuple:
        """Recipe dicts (each with its ``n``) for a unit of ``parts`` inputs per part."""
        from strategies import draw_recipes
        drawn = draw_recipes(target.fn, unit_seed, len(parts))
        return tuple({**r.to_dict(), "n": n} for r, n in zip(drawn, parts))

    def special_inputs(self, target: Target, replay: tuple = ()) -> dict:
        """Unit 0: the special-value pool (preceded by ``replay``'s input tuples)."""
        raise NotImplementedError

    def drawn_inputs(self, target: Target, unit) -> dict:
        """A drawn unit's inputs, deterministic in ``unit`` (a WorkUnit)."""
        raise NotImplementedError

    def submit(self, runner, target: Target, inputs: dict):
        """Start the target's kernel on ``runner``; returns what ``wait()`` gives the
        outputs by name."""
        return runner.submit(target.fn, inputs, target.fmt, target.width)

    def run(self, runner, target: Target, inputs: dict) -> dict:
        """Run the target's kernel on a runner without ``submit``; the outputs by name."""
        return runner.run(target.fn, inputs, target.fmt, target.width)

    def check(self, target: Target, inputs: dict, outputs: dict, claims,
              prec: int | None = None):
        """The verdict on one unit's outputs (a ``CheckResult``); ``prec``: the mpmath
        working precision of the reference in bits (None: the checker's default)."""
        from fuzzfarm.verdict.checker import check_batch
        return check_batch(target.fn, inputs, outputs, claims, prec, width=target.width)

    def tally(self, target: Target, inputs: dict) -> tuple[dict, dict, int | None]:
        """(inputs per IEEE class, distinct inputs per IEEE class, distinct input rows):
        ``strategies.class_tally``; ({}, {}, ...) where no classes apply, None where
        distinct calls are not counted."""
        from strategies import class_tally
        return class_tally(inputs, target.fn, target.fmt)

    def element_inputs(self, target: Target, inputs: dict, element: int) -> list | None:
        """The raw input bits (uint64 two's complement) of one element, where an element
        is one call (element-wise built-ins); None otherwise."""
        return None

    def values_per_element(self, target: Target) -> tuple[dict, dict]:
        """({input name: (values per element, buffer dtype)}, same for outputs): how a
        stored finding's ``input_bits``/``output_bits`` split into buffers."""
        from fuzzfarm.device.kernels import buffer_dtype
        fn, fmt = target.fn, target.fmt
        per = 1 if fn.is_elementwise else target.width
        ins = {a.name: (per, buffer_dtype(a, fmt)) for a in fn.inputs}
        outs = {o.name: (1 if (fn.is_elementwise or o.scalar) else target.width,
                         buffer_dtype(o, fmt)) for o in fn.outputs}
        return ins, outs

    def kernel_source(self, target: Target, sweep: bool = False) -> str:
        """The OpenCL C source of the kernel a unit runs (a sweep kernel with ``sweep``)."""
        from fuzzfarm.device import kernels
        if sweep:
            return kernels.sweep_source(target.fn, target.fmt)
        return kernels.kernel_source(target.fn, target.fmt, target.width)

    def builds_with_others(self) -> bool:
        """True when the targets of this kind share one program per (precision, width)."""
        return True


class Elementwise(Kind):
    name = "elementwise"

    def special_inputs(self, target, replay=()):
        from strategies import special_inputs
        fn, fmt = target.fn, target.fmt
        pool = special_inputs(fn, fmt)
        if not replay:
            return pool
        first = {}
        for j, a in enumerate(fn.inputs):
            bits = np.array([int(t[j]) for t in replay], dtype=np.uint64)
            if a.kind == "int":       # two's complement in the low 32 bits
                first[a.name] = (bits & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32)
            else:
                first[a.name] = bits.astype(fmt.uint)
        return {a.name: np.concatenate([first[a.name].astype(pool[a.name].dtype),
                                        pool[a.name]]) for a in fn.inputs}

    def drawn_inputs(self, target, unit):
        from strategies import Recipe, Stream, expand
        from fuzzfarm.device.kernels import buffer_dtype
        fn, fmt = target.fn, target.fmt
        sizes = unit.part_sizes()
        out = {a.name: np.empty(sum(sizes), dtype=buffer_dtype(a, fmt)) for a in fn.inputs}
        pos = 0
        stream = Stream(unit.seed)      # the parts of a unit never take a member twice
        for r, n in zip(unit.recipes, sizes):
            recipe = Recipe.from_dict({k: v for k, v in r.items() if k != "n"})
            part = expand(recipe, fn, n, fmt, lanes=target.width, stream=stream)
            for a in fn.inputs:
                out[a.name][pos:pos + n] = part[a.name]
            pos += n
        return out

    def element_inputs(self, target, inputs, element):
        return [int(inputs[a.name][element]) & ((1 << 64) - 1) for a in target.fn.inputs]


class Geometric(Kind):
    name = "geometric"

    def special_inputs(self, target, replay=()):
        from fuzzfarm.verdict import geometric
        return geometric.special_inputs(target.fn, target.fmt, target.width)

    def tally(self, target, inputs):
        counts, distinct, _ = super().tally(target, inputs)
        return counts, distinct, None       # a call is a whole vector: not counted

    def drawn_inputs(self, target, unit):
        from fuzzfarm.verdict import geometric
        n = unit.size if unit.recipes else unit.per_recipe
        return geometric.inputs(target.fn, target.fmt, target.width, n, unit.seed)


class Conversion(Kind):
    name = "conversion"

    #: Mixed into the unit's seed to derive the seeds of its parts.
    _PART_SALT = 0x636f6e76

    def draw_recipes(self, target, unit_seed, parts):
        # one part per seed derived from the unit's: regenerated part by part
        seeds = np.random.SeedSequence([unit_seed, self._PART_SALT]).generate_state(
            len(parts), np.uint32)
        return tuple({"seed": int(s), "n": n} for s, n in zip(seeds, parts))

    def special_inputs(self, target, replay=()):
        from strategies import conversions as conversion_inputs
        return {"x": conversion_inputs.special_inputs(target.conversion)}

    def drawn_inputs(self, target, unit):
        from strategies import conversions as conversion_inputs
        conv = target.conversion
        if not unit.recipes:            # the layout before units recorded their parts
            return {"x": conversion_inputs.inputs(conv, unit.per_recipe, unit.seed)}
        return {"x": np.concatenate([conversion_inputs.inputs(conv, n, int(r["seed"]))
                                     for r, n in zip(unit.recipes, unit.part_sizes())])}

    def _program(self, target):
        from fuzzfarm.device import conversion_kernels
        conv = target.conversion
        return (conversion_kernels.program_source([conv], target.width),
                conversion_kernels.kernel_name(conv), conv.dst_dtype)

    def submit(self, runner, target, inputs):
        # one small program per conversion, built once and cached by the runner
        src, kname, dtype = self._program(target)
        return _Renamed(runner.submit_source(src, kname, [inputs["x"]], [dtype], target.width))

    def run(self, runner, target, inputs):
        src, kname, dtype = self._program(target)
        (got,) = runner.run_source(src, kname, [inputs["x"]], [dtype], target.width)
        return {"ret": got}

    def check(self, target, inputs, outputs, claims, prec=None):
        # exact: integer arithmetic and correctly rounded references, no working precision
        from fuzzfarm.verdict import conversions
        return conversions.check(target.conversion, inputs["x"], outputs["ret"], claims)

    def tally(self, target, inputs):
        from strategies import distinct_count
        return {}, {}, distinct_count(inputs["x"])

    def values_per_element(self, target):
        conv = target.conversion
        return {"x": (1, conv.src_dtype)}, {"ret": (1, conv.dst_dtype)}

    def kernel_source(self, target, sweep=False):
        from fuzzfarm.device import conversion_kernels
        return conversion_kernels.kernel_source(target.conversion, target.width)

    def builds_with_others(self):
        # PoCL 3.0-rc2 corrupts its heap building one program of a few hundred
        # conversion kernels: each is built alone at first use
        return False


class _Renamed:
    """A pending conversion run whose one output is ``ret``."""

    def __init__(self, pending):
        self._pending = pending

    @property
    def device_seconds(self):
        return self._pending.device_seconds

    def wait(self, copy: bool = True) -> dict:
        (got,) = self._pending.wait(copy)
        return {"ret": got}


_KINDS = {k.name: k for k in (Elementwise(), Geometric(), Conversion())}


def kind_of(target: Target) -> Kind:
    """The behaviour of ``target``'s kind (``Target.kind``)."""
    return _KINDS[Target.of(target).kind]
