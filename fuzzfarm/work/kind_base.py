"""The protocol every kind of target follows in a work unit (``Kind``: make inputs, run a
kernel, check the outputs, count the inputs' classes, describe a fault), and the values a
kind hands the session: a kernel ``Buffer``, the ``MadeRows`` of a unit made on the
device, and ``InputsDisagree``.  The kinds themselves are fuzzfarm.work.kinds
(element-wise, geometric, ``kind_of``) and fuzzfarm.work.conversion_kind."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fuzzfarm import formats
from fuzzfarm.formats import FloatFormat
from fuzzfarm.target import Target
from fuzzfarm.work.unit import Drawn, IndexRange, Special, WorkUnit

__all__ = ["Kind", "Buffer", "MadeRows", "InputsDisagree"]


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
        return runner.submit(target.fn, inputs, target.fmt, target.width,
                             front_end=target.front_end)

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
        return runner.run(target.fn, inputs, target.fmt, target.width, target.front_end)

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
        """(kernel name, program text) of the kernel a unit of the target runs, as a
        reproducer quotes it: OpenCL C source, or a SPIR-V module's assembly text."""
        from fuzzfarm.device.kernels import kernel_name
        return kernel_name(target.fn), self.kernel_source(target)

    def kernel_source(self, target: Target, sweep: bool = False) -> str:
        """The program text of the kernel a unit runs (a sweep kernel with ``sweep``, OpenCL
        C only): OpenCL C source, or for a SPIR-V target its module's assembly text."""
        from fuzzfarm.device import kernels, spirv
        if sweep:
            return kernels.sweep_source(target.fn, target.fmt)
        if target.front_end == "spirv":
            return spirv.program_module([target.fn], target.fmt, target.width)
        return kernels.kernel_source(target.fn, target.fmt, target.width)

    def builds_with_others(self) -> bool:
        """True when the targets of this kind share one program per (precision, width)."""
        return True

    def prepare_own(self, runner, targets: list) -> None:
        """Build up front, as this kind sees fit, the kernels of ``targets`` (of this kind,
        in precisions the device has) where they do not share one program per (precision,
        width): nothing by default (each is built at its first use)."""
