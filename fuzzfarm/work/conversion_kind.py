"""The conversion kind of target (``Target.kind`` 'conversion'):
``convert_<dst>[_sat][_<mode>](<src>)``, what a work unit of one does at each step
(fuzzfarm.work.kinds has the other kinds and ``kind_of``; fuzzfarm.work.kind_base the
protocol).

Inputs come from ``strategies.conversions`` (counter-based recipes, made on the device
too: ``fuzzfarm.device.conversion_generate``); one small kernel per conversion
(``fuzzfarm.device.conversion_kernels``, or a SPIR-V module of ``fuzzfarm.device.spirv``
for a SPIR-V target; built up front, CONVERSIONS_PER_PROGRAM to a program); judged bit
for bit on the device (``fuzzfarm.oracle.conversion_screen``) and on the
host (``fuzzfarm.verdict.conversions``, under the text its front end is governed by)
under the claims of every format it touches.
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.work.kind_base import Buffer, InputsDisagree, Kind, MadeRows

__all__ = ["Conversion", "CONVERSIONS_PER_PROGRAM"]

#: The most conversion kernels built in one program.  A program the driver refuses is
#: rebuilt one kernel at a time (``DeviceRunner.prepare_sources``), so a bound keeps that
#: cost small; well below it the build costs the same (PyPI's PoCL 3.0: about 35 ms from
#: its cache whatever the size, 1.7 s cold for all 900 binary32/binary64 conversions at
#: one width, which build and run as one program there as well).
CONVERSIONS_PER_PROGRAM = 64


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

    def device_plan(self, target, drawn):
        from fuzzfarm.device.conversion_generate import conversion_plan
        return conversion_plan(target.conversion, drawn)

    def device_screen(self, runner, target, claims, size):
        # a saturated NaN is decided by the text of the unit's front end
        from fuzzfarm.oracle.conversion_screen import screen_for
        return screen_for(runner, target.conversion, target.front_end)

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
                                          answer, claims, target.front_end)

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
                                        claims, target.front_end)

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
        return conversions.check(target.conversion, inputs["x"], outputs["ret"], claims,
                                 target.front_end)

    def tally(self, target, inputs):
        from strategies import distinct_count
        return {}, {}, distinct_count(inputs["x"])

    def values_per_element(self, target):
        conv = target.conversion
        return {"x": (1, conv.src_dtype)}, {"ret": (1, conv.dst_dtype)}

    def kernel_source(self, target, sweep=False):
        from fuzzfarm.device import conversion_kernels, spirv
        if target.front_end == "spirv":
            return spirv.conversion_module([target.conversion], target.width)
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
        # conversions have their own programs (prepare_own), apart from the built-ins'
        return False

    def prepare_own(self, runner, targets):
        # one program per (extension pragmas, width, front end) and at most
        # CONVERSIONS_PER_PROGRAM kernels, each kernel cached as its own source's: built
        # one program each, 260 builds took 33 s of a 120-s catalogue run on the H100, and
        # on PyPI's PoCL a warm-cache build costs 35 ms whatever the program's size
        from edgecases.conversions import extensions
        from fuzzfarm.device import conversion_kernels as ck
        from fuzzfarm.device import spirv
        groups: dict = {}
        for t in targets:
            groups.setdefault((tuple(sorted(extensions(t.conversion))), t.width,
                               t.front_end), []).append(t)
        for (_, width, front_end), ts in groups.items():
            convs = list(dict.fromkeys(t.conversion for t in ts))
            for k in range(0, len(convs), CONVERSIONS_PER_PROGRAM):
                chunk = convs[k:k + CONVERSIONS_PER_PROGRAM]
                if front_end == "spirv":
                    whole = spirv.conversion_module(chunk, width)
                    alone = {ck.kernel_name(c): spirv.conversion_module([c], width)
                             for c in chunk}
                else:
                    whole = ck.program_source(chunk, width)
                    alone = {ck.kernel_name(c): ck.kernel_source(c, width) for c in chunk}
                runner.prepare_sources(whole, alone, f"{len(chunk)} conversion kernels "
                                                     f"(width {width}, {front_end})")


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
