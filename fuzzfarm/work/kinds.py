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
* ``Conversion`` (fuzzfarm.work.conversion_kind): ``convert_<dst>[_sat][_<mode>](<src>)``:
  inputs from
  ``strategies.conversions`` (counter-based recipes, made on the device too:
  ``fuzzfarm.device.conversion_generate``), one small kernel per conversion
  (``fuzzfarm.device.conversion_kernels``; built up front, several to a program), judged bit for bit on the device (``fuzzfarm.oracle.conversion_screen``) and
  on the host (``fuzzfarm.verdict.conversions``) under the claims of every format it
  touches.

``kind_of(target)`` gives the class's one instance; their protocol, ``Kind``, and the
values they hand the session are fuzzfarm.work.kind_base's.  No pyopencl here: a device is a
``fuzzfarm.device.runner.DeviceRunner`` (``submit``/``run``, ``submit_source``/``run_source``).
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import BINARY32
from fuzzfarm.target import Target
from fuzzfarm.work.conversion_kind import Conversion
from fuzzfarm.work.kind_base import Buffer, InputsDisagree, Kind, MadeRows

__all__ = ["Kind", "Elementwise", "Geometric", "Conversion", "kind_of", "Buffer",
           "MadeRows", "InputsDisagree"]


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

        return runner.submit(target.fn, inputs, target.fmt, target.width, after=after,
                             front_end=target.front_end), answer

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
                                         after=after, copy_back=False,
                                         front_end=target.front_end)
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

        return runner.submit(target.fn, inputs, target.fmt, width, after=after,
                             front_end=target.front_end), answer

    def check_screened(self, target, inputs, outputs, answer, claims):
        from fuzzfarm.verdict.geometric import check_screened
        return check_screened(target.fn, inputs, outputs, answer, claims, target.width)


_KINDS = {k.name: k for k in (Elementwise(), Geometric(), Conversion())}


def kind_of(target: Target) -> Kind:
    """The behaviour of ``target``'s kind (``Target.kind``)."""
    return _KINDS[Target.of(target).kind]
