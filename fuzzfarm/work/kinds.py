"""What each kind of target does in a work unit: one class per ``Target.kind``.

A work unit's life is the same for every target (make inputs, run a kernel, check the
outputs, count the inputs' classes, describe a fault); how each step is done depends on the
kind alone, and lives here rather than in branches over names:

* ``Elementwise``: a catalogue built-in applied lane by lane (math, half_, native_, common,
  integer arguments included).  Inputs from hypothesis recipes expanded by
  ``strategies.expand``, the special-value pool, or a range of the enumerated input space
  (``strategies.Space``: a sweep's chunk); kernels of one program per (precision, width);
  verdict ``fuzzfarm.verdict.checker.check_batch``.
* ``Geometric``: a built-in on whole vectors (dot, cross, length, normalize, ...): inputs
  and special vectors from ``fuzzfarm.verdict.geometric``, verdict ``check_batch``.
* ``Conversion``: ``convert_<dst>[_sat][_<mode>](<src>)``: inputs from
  ``strategies.conversions`` (counter-based recipes, made on the device too:
  ``fuzzfarm.device.conversion_generate``), one small kernel per conversion
  (``fuzzfarm.device.conversion_kernels``; built together up front where the device is
  not PoCL), judged bit for bit on the device (``fuzzfarm.oracle.conversion_screen``) and
  on the host (``fuzzfarm.verdict.conversions``) under the claims of every format it
  touches.

``kind_of(target)`` gives the class's one instance.  No pyopencl here: a device is a
``fuzzfarm.device.runner.DeviceRunner`` (``submit``/``run``, ``submit_source``/``run_source``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fuzzfarm import formats
from fuzzfarm.formats import BINARY32, FloatFormat
from fuzzfarm.target import Target
from fuzzfarm.work.unit import Drawn, IndexRange, Special, WorkUnit

__all__ = ["Kind", "Elementwise", "Geometric", "Conversion", "kind_of", "Buffer",
           "MadeRows", "InputsDisagree"]


@dataclass(frozen=True)
class Buffer:
    """One kernel buffer of a target: ``kind`` 'float' (bit patterns of ``fmt``), 'int'
    or 'uint' (values of ``dtype``); ``scalar``: one value per work-item (a geometric
    sgentype result such as dot's)."""

    name: str
    kind: str
    dtype: np.dtype
    fmt: FloatFormat | None = None
    scalar: bool = False

    @property
    def bits(self) -> int:
        """The float format's width, 0 for an integer buffer."""
        return self.fmt.bits if self.kind == "float" and self.fmt is not None else 0

    def describe(self, v: int) -> str:
        """``v`` as fuzzfarm prints it (formats.describe_value): an integer as its
        buffer's type, so a ulong result prints unsigned."""
        kind = self.kind if self.kind in ("float", "uint") else self.dtype.name
        return formats.describe_value(kind, v, self.fmt)


@dataclass
class MadeRows:
    """The inputs a device made for a drawn unit (``fuzzfarm.device.generate``) and the
    rows of them its verdict may read: ``n`` rows in all; ``marked``: ``inputs`` ({argument
    name: patterns}) and ``outputs`` ({name: array}) hold only the rows the screen marked,
    gathered on the device in input order, with ``top`` the passed row of the largest
    error (-1: none) and ``count`` how many it marked; else they hold every row.
    ``tally``: the device's class counts of its inputs (uint32, generate.tally; None where
    the device counts none); ``pos``: the positions of the gathered rows as the device
    gave them (int64, in the device's order, the rows of ``inputs`` and ``outputs`` in the
    same order), where it gave them (conversions: their ``judge_made`` sorts them)."""

    n: int
    marked: bool
    inputs: dict
    outputs: dict
    tally: np.ndarray | None
    top: int = -1
    count: int = 0
    pos: np.ndarray | None = None


class InputsDisagree(Exception):
    """The inputs a device made (fuzzfarm.device.generate) differ from the host's for the
    same recipe at some positions the check read, or the rows it gathered are not those
    its screen marked (``why``): its integer arithmetic is wrong.  ``kernels``: the names
    of the (gathering, generating) kernels the fault names."""

    def __init__(self, pos, host, device, why: str = "",
                 kernels: tuple = ("fuzzfarm_mark_write", "fuzzfarm_generate"),
                 argument: str = "x"):
        super().__init__(why or f"{len(pos)} input(s) made on the device differ from the "
                                f"host's")
        self.pos, self.host, self.device, self.why = pos, host, device, why
        self.kernels, self.argument = kernels, argument

    def detail(self) -> dict:
        """The ``integer_arithmetic`` fault's detail (work.rows.fault_rows)."""
        if self.why:
            return {"kernel_name": self.kernels[0], "error": self.why}
        arg = "" if self.argument == "x" else f" ({self.argument})"
        shown = ", ".join(f"row {int(p)}{arg}: device {int(d):#010x}, host {int(h):#010x}"
                          for p, h, d in list(zip(self.pos, self.host, self.device))[:4])
        return {"kernel_name": self.kernels[1],
                "error": f"{len(self.pos)} input(s) the device made differ from the host's "
                         f"for the same recipe ({shown})"}


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

    def inputs(self, unit: WorkUnit) -> dict:
        """The inputs of ``unit`` (its recipes drawn: ``fuzzfarm.work.make.draw``), made
        from its source: the special-value pool, its drawn recipes, or its range of the
        input space (``space``)."""
        s = unit.source
        if isinstance(s, Special):
            return self.special_inputs(unit.target, s.replay)
        if isinstance(s, IndexRange):
            return self.space(unit.target).inputs(s.start, s.count)
        return self.drawn_inputs(unit.target, s)

    def special_inputs(self, target: Target, replay: tuple = ()) -> dict:
        """Unit 0: the special-value pool (preceded by ``replay``'s input tuples)."""
        raise NotImplementedError

    def drawn_inputs(self, target: Target, drawn: Drawn) -> dict:
        """The inputs of ``drawn`` (recipes drawn), deterministic in it."""
        raise NotImplementedError

    def space(self, target: Target):
        """The enumerable input space of ``target`` (``strategies.Space``), what range
        units (sweeps) number.  Raises strategies.SpaceError where there is none."""
        from strategies import SpaceError
        raise SpaceError(f"sweep: {target.name} has no enumerable input space; use "
                         f"`fuzzfarm run -f {target.name}`")

    def claims(self, by_precision: dict, target: Target):
        """What the device claims for ``target``: ``by_precision`` ({precision: Claims},
        verdict.claims.Claims.by_precision) at the target's precision."""
        return by_precision[target.precision]

    def function(self, target: Target):
        """The catalogue ``Function`` of the target, or None for a conversion (which has
        no argument classes of its own)."""
        return target.fn

    def lanes_per_input(self, target: Target) -> int:
        """Elements of each argument one input holds (a geometric built-in's input is a
        vector of ``width``; 1 otherwise)."""
        return 1

    def device_screened(self, target: Target) -> bool:
        """Whether the target's shape fits a device screen (a built-in: one or two float
        inputs, one output ``ret``, lane by lane; a conversion); which targets have a
        device reference is the oracle's (``device_screen``)."""
        return False

    def device_screen(self, runner, target: Target, claims, size: int):
        """The device screen of ``target`` on ``runner`` under ``claims`` (what the kind
        judges under, ``claims``) for launches of up to ``size`` inputs: (screen, "") or
        (None, why not, in words).  Raises device.runner.KernelBuildError where the device
        fails to build it (a finding)."""
        return None, f"{target.name} does not fit the device screen"

    def submit(self, runner, target: Target, inputs: dict):
        """Start the target's kernel on ``runner``; returns what ``wait()`` gives the
        outputs by name."""
        return runner.submit(target.fn, inputs, target.fmt, target.width)

    def submit_screened(self, runner, target: Target, inputs: dict, screen):
        """``submit`` with ``screen`` (``device_screen``'s) enqueued after the kernel on
        its buffers: (what ``wait()`` gives the outputs by name, the screen's answer in host
        memory, written by the time ``wait()`` returns)."""
        raise NotImplementedError

    def check_screened(self, target: Target, inputs: dict, outputs: dict, answer, claims):
        """The verdict on one unit whose results the device screened (``answer``): the
        host judges what the device did not decide, every index a position in the unit."""
        raise NotImplementedError

    # -- inputs made on the device (docs/device_screen.md, "Inputs made on the device")
    def device_plan(self, target: Target, drawn: Drawn):
        """The plan by which the device makes the inputs of ``drawn`` (recipes drawn), or
        None where the host makes them."""
        return None

    def generator_format(self, target: Target):
        """The FloatFormat the kind's input generator is built for, for ``target``
        (``make_generator``): the target's; None where one generator serves every
        format."""
        return target.fmt

    def make_generator(self, runner, fmt):
        """The kind's input generator built on ``runner`` for targets of FloatFormat
        ``fmt`` (``generator_format``).  Raises KernelBuildError where the device does not
        build it."""
        raise NotImplementedError

    def launch_made(self, runner, target: Target, plan, screen, generator) -> tuple:
        """Enqueue a unit whose inputs ``generator`` makes from ``plan``, its kernel and
        ``screen``, gathering the rows the verdict reads: (pending run, answer, landing,
        tally) for ``land_made``."""
        raise NotImplementedError

    def land_made(self, target: Target, pending, landing, tally, every_row: bool) -> tuple:
        """After the launch: (the screen's answer, MadeRows), the gathered rows or, where
        they did not fit or ``every_row``, every row read back."""
        raise NotImplementedError

    def judge_made(self, target: Target, made: MadeRows, answer, claims) -> tuple:
        """(CheckResult over the unit, inputs_at(pos) -> {argument name: the device's
        inputs}, the positions the verdict read) of a made unit.  Raises InputsDisagree
        where the rows gathered are not those the answer names."""
        raise NotImplementedError

    def made_inputs_at(self, target: Target, drawn: Drawn, rows: np.ndarray) -> dict:
        """{argument name: the inputs the recipe gives at ``rows`` (int64)}, made on the
        host."""
        raise NotImplementedError

    def made_tally(self, target: Target, made: MadeRows) -> tuple:
        """The stats row's (by class, distinct by class, distinct rows) of a made unit of
        ``target``."""
        raise NotImplementedError

    def made_kernels(self) -> tuple:
        """(gathering, generating) kernel names an InputsDisagree fault names."""
        return ("fuzzfarm_mark_write", "fuzzfarm_generate")

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

    def buffers(self, target: Target) -> tuple[list, list]:
        """(input Buffers, output Buffers, ``ret`` first) of the target's kernel."""
        from fuzzfarm.device.kernels import buffer_dtype
        fn, fmt, vec = target.fn, target.fmt, not target.fn.is_elementwise
        return ([Buffer(a.name, a.kind, np.dtype(buffer_dtype(a, fmt)), fmt)
                 for a in fn.inputs],
                [Buffer(o.name, o.kind, np.dtype(buffer_dtype(o, fmt)), fmt,
                        bool(o.scalar and vec)) for o in fn.outputs])

    def kernel(self, target: Target) -> tuple[str, str]:
        """(kernel name, OpenCL C source) of the kernel a unit of the target runs, as a
        reproducer quotes it."""
        from fuzzfarm.device.kernels import kernel_name
        return kernel_name(target.fn), self.kernel_source(target)

    def kernel_source(self, target: Target, sweep: bool = False) -> str:
        """The OpenCL C source of the kernel a unit runs (a sweep kernel with ``sweep``)."""
        from fuzzfarm.device import kernels
        if sweep:
            return kernels.sweep_source(target.fn, target.fmt)
        return kernels.kernel_source(target.fn, target.fmt, target.width)

    def builds_with_others(self) -> bool:
        """True when the targets of this kind share one program per (precision, width)."""
        return True

    def prepare_own(self, runner, targets: list) -> None:
        """Build up front, as this kind sees fit, the kernels of ``targets`` (of this kind,
        in precisions the device has) where they do not share one program per (precision,
        width): nothing by default (each is built at its first use)."""


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

    def drawn_inputs(self, target, drawn):
        from strategies import Recipe, Stream, expand
        from fuzzfarm.device.kernels import buffer_dtype
        fn, fmt = target.fn, target.fmt
        sizes = drawn.sizes
        out = {a.name: np.empty(sum(sizes), dtype=buffer_dtype(a, fmt)) for a in fn.inputs}
        pos = 0
        stream = Stream(drawn.seed)     # the parts of a unit never take a member twice
        for r, n in zip(drawn.recipes, sizes):
            recipe = Recipe.from_dict({k: v for k, v in r.items() if k != "n"})
            part = expand(recipe, fn, n, fmt, lanes=target.width, stream=stream)
            for a in fn.inputs:
                out[a.name][pos:pos + n] = part[a.name]
            pos += n
        return out

    def element_inputs(self, target, inputs, element):
        return [int(inputs[a.name][element]) & ((1 << 64) - 1) for a in target.fn.inputs]

    def space(self, target):
        from strategies import space_of
        return space_of(target.fn, target.fmt)

    def device_screened(self, target):
        # a float argument, and a second float or int, and a third float
        # (fuzzfarm.oracle.device_references' TWO_ARGS, INT_SECOND, THREE_ARGS), or a ugentype
        # one (nan's nancode: patterns of the result's width); ``ret``, and a second output
        # (SECOND_OUTPUT: plain_bound refuses a built-in without one)
        fn = target.fn
        kinds = [a.kind for a in fn.inputs]
        return (kinds in (["float"], ["uint"], ["float", "float"], ["float", "int"],
                          ["float", "float", "float"])
                and fn.outputs[0].name == "ret" and len(fn.outputs) <= 2)

    def device_screen(self, runner, target, claims, size):
        if not self.device_screened(target):
            return super().device_screen(runner, target, claims, size)
        from fuzzfarm.oracle.device_screen import screen_for
        return screen_for(runner, target.name, target.precision, claims, size)

    def submit_screened(self, runner, target, inputs, screen):
        from fuzzfarm.oracle.screen_answer import ScreenChunk
        answer = ScreenChunk.empty(len(inputs[target.fn.inputs[0].name]))

        def after(queue, dev_in, dev_out, n):
            return screen.enqueue(dev_out[0], 0, n, answer, xbuf=dev_in[0], blocking=False,
                                  zbuf=dev_in[1] if len(dev_in) > 1 else None,
                                  wbuf=dev_in[2] if len(dev_in) > 2 else None,
                                  y2buf=dev_out[1] if len(dev_out) > 1 else None)

        return runner.submit(target.fn, inputs, target.fmt, target.width, after=after), answer

    def check_screened(self, target, inputs, outputs, answer, claims):
        from fuzzfarm.verdict.screened import judge_unit
        return judge_unit(target.fn, lambda p: {k: v[p] for k, v in inputs.items()},
                          len(inputs[target.fn.inputs[0].name]), outputs, answer, claims)

    def device_plan(self, target, drawn):
        # the marked rows are gathered as columns of the patterns' width: binary64's int
        # columns (ilogb's result, frexp's and remquo's second output; ldexp's, pown's and
        # rootn's int argument: unit_plan) are not, so those units are made on the host
        if target.fmt != BINARY32 and any(o.kind == "int" for o in target.fn.outputs):
            return None
        from fuzzfarm.device.generate import plan_or_none
        return plan_or_none(target, drawn)

    def make_generator(self, runner, fmt):
        from fuzzfarm.device.generate import DeviceGenerator
        return DeviceGenerator(runner, fmt)

    def launch_made(self, runner, target, plan, screen, generator):
        k = len(plan.names)
        two = len(target.fn.outputs) > 1
        land = screen.landing(plan.n, k + two)
        box = []

        def fill(queue, dev_in, n):
            first, _, total = generator.enqueue(queue, plan, dev_in[:k])
            box.append(total)
            return first

        def after(queue, dev_in, dev_out, n):
            ev = screen.enqueue(dev_out[0], 0, n, land.answer, xbuf=dev_in[0], blocking=False,
                                zbuf=dev_in[1] if k > 1 else None,
                                wbuf=dev_in[2] if k > 2 else None,
                                y2buf=dev_out[1] if two else None)
            return screen.enqueue_marked(dev_in[0], dev_out[0], n, land, wait_for=[ev],
                                         more=list(dev_in[1:k]) + list(dev_out[1:2]))

        try:
            pending = runner.submit_made(target.fn, plan.n, fill, target.fmt, target.width,
                                         after=after, copy_back=False)
        except BaseException:
            land.release()
            raise
        return pending, land.answer, land, box[0]

    def land_made(self, target, pending, landing, tally, every_row):
        # the screen's rule bits left out where it counts no failures
        from fuzzfarm.device.kernels import buffer_dtype
        from fuzzfarm.oracle.screen_answer import ScreenChunk
        pending.wait(copy=False)
        a = landing.answer
        if not landing.screen.aggregate:    # no failure counted: nothing to read there
            a = a._replace(agg_c0=a.agg_c0[:0], agg_c1=a.agg_c1[:0])
        answer = ScreenChunk(*a)
        count, top, cols, gy = landing.marked()
        fn = target.fn
        names = [arg.name for arg in fn.inputs]
        tally = np.array(tally)
        if cols is not None and not every_row:  # gathered as patterns: an int's as uint32
            k = len(fn.inputs)
            inputs = {a.name: g.view(buffer_dtype(a, target.fmt))
                      for a, g in zip(fn.inputs, cols[:k])}
            outputs = {o.name: g.view(buffer_dtype(o, target.fmt))
                       for o, g in zip(fn.outputs, (gy, *cols[k:]))}
            return answer, MadeRows(landing.count, True, inputs, outputs, tally, top, count)
        outputs = pending.read_made()
        inputs = dict(zip(names, pending.made_inputs))
        return answer, MadeRows(len(inputs[names[0]]), False, inputs, dict(outputs), tally,
                                top, count)

    def judge_made(self, target, made, answer, claims):
        from fuzzfarm.verdict.screened import (MarkedPositions, SparseOutputs, judge_unit,
                                               outputs_reader, top_position)
        n = made.n
        read = MarkedPositions.of(answer, n)
        first = next(iter(made.inputs.values()))
        if not made.marked:
            outputs, device_at = made.outputs, outputs_reader(made.inputs)
        else:
            top = top_position(answer)
            if read.size != first.size or made.top != top:
                raise InputsDisagree([], [], [], why=(
                    f"the device gathered {first.size} rows with the passed row of largest "
                    f"error at {made.top}; its screen's answer marks {read.size} with it at "
                    f"{top}"))
            outputs = SparseOutputs(n, read, made.outputs)
            device_at = SparseOutputs(n, read, made.inputs).at

        def inputs_at(pos):
            p = pos if isinstance(pos, MarkedPositions) else np.asarray(pos, np.int64)
            return {k: np.asarray(v) for k, v in device_at(p).items()}

        # nothing counted on the device: the candidates are the marked rows themselves
        cands = read if made.marked and not answer.agg_count.any() else None
        return judge_unit(target.fn, inputs_at, n, outputs, answer, claims, cands), \
            inputs_at, read

    def made_inputs_at(self, target, drawn, rows):
        from fuzzfarm.device import generate
        return generate.inputs_at(target, drawn, rows)

    def made_tally(self, target, made):
        from fuzzfarm.device import generate
        return generate.tally(made.tally, tuple(made.inputs),
                              tuple(a.kind for a in target.fn.inputs))


class Geometric(Kind):
    name = "geometric"

    def special_inputs(self, target, replay=()):
        from fuzzfarm.verdict import geometric
        return geometric.special_inputs(target.fn, target.fmt, target.width)

    def tally(self, target, inputs):
        counts, distinct, _ = super().tally(target, inputs)
        return counts, distinct, None       # a call is a whole vector: not counted

    def drawn_inputs(self, target, drawn):
        from fuzzfarm.verdict import geometric
        return geometric.inputs(target.fn, target.fmt, target.width, drawn.size, drawn.seed)

    def space(self, target):
        from strategies import SpaceError
        raise SpaceError(f"sweep: {target.name} is a geometric built-in (its inputs are "
                         f"vectors); use `fuzzfarm run -f {target.name}`")

    def lanes_per_input(self, target):
        return target.width

    def device_screened(self, target):
        # the geometric group in every precision (oracle.geometric_screen.screened)
        from fuzzfarm.oracle.geometric_screen import screened
        return screened(target.name, target.precision)

    def device_screen(self, runner, target, claims, size):
        from fuzzfarm.oracle.geometric_screen import GeometricScreen, geometric_bound
        if geometric_bound(target.name, target.precision, target.width, claims) is None:
            return None, (f"no device screen for {target.name} in {target.precision} with "
                          f"these build options")
        if not runner.info.has_fp64:
            return None, "the device lacks cl_khr_fp64, which the device screen computes in"
        return GeometricScreen(runner, target.name, claims), ""

    def submit_screened(self, runner, target, inputs, screen):
        width = target.width
        nvec = len(inputs[target.fn.inputs[0].name]) // width
        answer = np.empty(nvec, np.float32)

        def after(queue, dev_in, dev_out, n):
            return screen.enqueue(dev_in[0], dev_in[-1], dev_out[0], nvec, width, answer)

        return runner.submit(target.fn, inputs, target.fmt, width, after=after), answer

    def check_screened(self, target, inputs, outputs, answer, claims):
        from fuzzfarm.verdict.geometric import check_screened
        return check_screened(target.fn, inputs, outputs, answer, claims, target.width)


class Conversion(Kind):
    name = "conversion"

    #: Mixed into the unit's seed to derive the seeds of its parts.
    _PART_SALT = 0x636f6e76

    def draw_recipes(self, target, unit_seed, parts):
        # one part per seed derived from the unit's: regenerated part by part
        from strategies.conversions import COUNTER_RECIPE
        seeds = np.random.SeedSequence([unit_seed, self._PART_SALT]).generate_state(
            len(parts), np.uint32)
        return tuple({"seed": int(s), "n": n, "v": COUNTER_RECIPE}
                     for s, n in zip(seeds, parts))

    def special_inputs(self, target, replay=()):
        from strategies import conversions as conversion_inputs
        return {"x": conversion_inputs.special_inputs(target.conversion)}

    def drawn_inputs(self, target, drawn):
        from strategies import conversions as conversion_inputs
        conv = target.conversion
        if not drawn.recipes:           # the layout before units recorded their parts
            return {"x": conversion_inputs.inputs(conv, drawn.sizes[0], drawn.seed)}
        return {"x": np.concatenate([
            conversion_inputs.counter_inputs(conv, n, int(r["seed"]))
            if r.get("v") == conversion_inputs.COUNTER_RECIPE
            else conversion_inputs.inputs(conv, n, int(r["seed"]))
            for r, n in zip(drawn.recipes, drawn.sizes)])}

    def space(self, target):
        from strategies import SpaceError
        raise SpaceError(f"sweep: {target.name!r} is a conversion; sweeps cover the math "
                         f"built-ins (use `fuzzfarm run -f {target.name}`)")

    def function(self, target):
        return None

    def claims(self, by_precision, target):
        # a conversion may touch two formats: it is judged under the claims of every one
        return by_precision

    def _program(self, target):
        """(source, kernel name, output dtype) of the one program the conversion runs:
        the source a fault row and a reproducer quote (``kernel``)."""
        kname, src = self.kernel(target)
        return src, kname, target.conversion.dst_dtype

    def submit(self, runner, target, inputs):
        # one small kernel per conversion, built once (alone, or with the others: prepare_own)
        # and cached by the runner
        src, kname, dtype = self._program(target)
        return _Renamed(runner.submit_source(src, kname, [inputs["x"]], [dtype], target.width))

    def device_screened(self, target):
        return True

    def device_screen(self, runner, target, claims, size):
        from fuzzfarm.oracle.conversion_screen import screen_for
        return screen_for(runner, target.conversion)

    def submit_screened(self, runner, target, inputs, screen):
        from fuzzfarm.oracle.conversion_screen import ConversionAnswer
        src, kname, dtype = self._program(target)
        n = len(inputs["x"])
        answer = ConversionAnswer.empty(n)

        def after(queue, dev_in, dev_out, count):
            return screen.enqueue(dev_in[0], dev_out[0], count, answer)

        pending = runner.submit_source(src, kname, [inputs["x"]], [dtype], target.width,
                                       after=after)
        return _Renamed(pending), answer

    def check_screened(self, target, inputs, outputs, answer, claims):
        from fuzzfarm.verdict import conversions
        return conversions.check_screened(target.conversion, inputs["x"], outputs["ret"],
                                          answer, claims)

    def device_plan(self, target, drawn):
        from fuzzfarm.device.conversion_generate import conversion_plan
        return conversion_plan(target.conversion, drawn)

    def generator_format(self, target):
        return None                     # one generator makes every conversion's sources

    def make_generator(self, runner, fmt):
        from fuzzfarm.device.conversion_generate import ConversionGenerator
        return ConversionGenerator(runner)

    def launch_made(self, runner, target, plan, screen, generator):
        src, kname, dtype = self._program(target)
        land = screen.landing(plan.n)
        sample = plan.parts[0][0] if plan.parts else 0

        def fill(queue, dev_in, n):
            return generator.enqueue(queue, plan, dev_in[0])

        def after(queue, dev_in, dev_out, n):
            ev = screen.enqueue(dev_in[0], dev_out[0], n, land.answer, sample=sample)
            return screen.enqueue_gather(dev_in[0], dev_out[0], n, land, wait_for=[ev])

        try:
            pending = runner.submit_source_made(src, kname, plan.n,
                                                [target.conversion.src_dtype], [dtype],
                                                fill, target.width, after=after)
        except BaseException:
            land.release()
            raise
        return pending, land.answer, land, None

    def land_made(self, target, pending, landing, tally, every_row):
        from fuzzfarm.oracle.conversion_screen import ConversionAnswer
        pending.wait(copy=False)
        a = landing.answer
        answer = ConversionAnswer(a.decided.copy(), a.counts.copy())
        rows = None if every_row else landing.rows()
        if rows is not None:
            pos, x, y = rows
            return answer, MadeRows(landing.n, True, {"x": x}, {"ret": y}, None, -1,
                                    len(pos), pos)
        outputs = pending.read_made()
        x = pending.made_inputs[0]
        return answer, MadeRows(len(x), False, {"x": x},
                                {"ret": next(iter(outputs.values()))}, None)

    def judge_made(self, target, made, answer, claims):
        from fuzzfarm.verdict import conversions
        todo = answer.undecided(made.n)
        if made.marked:         # the gathered rows, in the device's order: in input order
            order = np.argsort(made.pos, kind="stable")
            if not np.array_equal(made.pos[order], todo):
                raise InputsDisagree([], [], [], kernels=self.made_kernels(), why=(
                    f"the device gathered {made.pos.size} rows; its answer leaves "
                    f"{todo.size} undecided"
                    + ("" if made.pos.size != todo.size else ", at other positions")))
            xs, ys = made.inputs["x"][order], made.outputs["ret"][order]
        else:
            xs, ys = made.inputs["x"][todo], made.outputs["ret"][todo]
        result = conversions.check_rows(target.conversion, made.n, todo, xs, ys, answer,
                                        claims)

        def inputs_at(pos):
            pos = np.asarray(pos, np.int64)
            if not made.marked:
                return {"x": made.inputs["x"][pos]}
            k = np.searchsorted(todo, pos)
            if pos.size and (k.max() >= todo.size or not np.array_equal(todo[k], pos)):
                raise KeyError("a position the device did not gather")
            return {"x": xs[k]}

        return result, inputs_at, todo

    def made_inputs_at(self, target, drawn, rows):
        from strategies.conversions import counter_inputs_at
        conv = target.conversion
        rows = np.asarray(rows, np.int64)
        out = np.empty(rows.size, conv.src_dtype)
        start = 0
        for r, n in zip(drawn.recipes, drawn.sizes):
            here = (rows >= start) & (rows < start + n)
            if here.any():
                out[here] = counter_inputs_at(conv, int(r["seed"]), n, rows[here] - start)
            start += n
        return {"x": out}

    def made_tally(self, target, made):
        return {}, {}, None

    def made_kernels(self):
        return ("fuzzfarm_convert_gather", "fuzzfarm_convert_make")

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

    def buffers(self, target):
        c = target.conversion
        return ([Buffer("x", "float" if c.src_format else "int", np.dtype(c.src_dtype),
                        c.src_format)],
                [Buffer("ret", "float" if c.dst_format else "int", np.dtype(c.dst_dtype),
                        c.dst_format)])

    def kernel(self, target):
        from fuzzfarm.device import conversion_kernels
        return conversion_kernels.kernel_name(target.conversion), self.kernel_source(target)

    def builds_with_others(self):
        # PoCL 3.0-rc2 corrupts its heap building one program of a few hundred
        # conversion kernels: each is built alone at first use there (prepare_own)
        return False

    def prepare_own(self, runner, targets):
        # elsewhere one program per (extension pragmas, width), each kernel cached as its
        # own source's: 260 builds took 33 s of a 120-s catalogue run on the H100
        if "portable computing language" in runner.info.platform_name.lower():
            return
        from edgecases.conversions import extensions
        from fuzzfarm.device import conversion_kernels as ck
        groups: dict = {}
        for t in targets:
            groups.setdefault((tuple(sorted(extensions(t.conversion))), t.width), []).append(t)
        for (_, width), ts in groups.items():
            convs = list(dict.fromkeys(t.conversion for t in ts))
            runner.prepare_sources(
                ck.program_source(convs, width),
                {ck.kernel_name(c): ck.kernel_source(c, width) for c in convs},
                f"{len(convs)} conversion kernels (width {width})")


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
