"""A conversion unit's sources made on the device: the counter-based recipe
(``strategies.conversions.COUNTER_RECIPE``), an integer-only function of (key, row) that
``conversion_generate.cl`` computes bit for bit as ``strategies.conversions.counter_inputs_at``
does on the host.  A unit made this way moves no inputs from the host, and its results are
judged on the device (``fuzzfarm.oracle.conversion_screen``): only the rows the host judges
come back, gathered (``ConversionScreen.enqueue_gather``).  The device's integer arithmetic is
not trusted for the inputs either: the check makes every gathered row's source again on the
host and records an ``integer_arithmetic`` device fault where one differs
(``fuzzfarm.verdict.conversions.check_made``).
"""
from __future__ import annotations

import weakref
from importlib import resources
from typing import NamedTuple

import numpy as np

from edgecases.conversions import Conversion

__all__ = ["ConversionPlan", "conversion_plan", "ConversionGenerator", "generator_for"]


class ConversionPlan(NamedTuple):
    """A drawn conversion unit's sources as the device makes them: ``n`` rows in all, its
    parts' (seed, n) in order (every part a counter-based recipe)."""

    conv: Conversion
    n: int
    parts: tuple


def conversion_plan(conv: Conversion, drawn) -> ConversionPlan | None:
    """The plan of ``drawn`` (a work.unit.Drawn of a conversion, recipes drawn), or None
    where a part is not counter-based (an older unit's recipes: made on the host)."""
    from strategies.conversions import COUNTER_RECIPE
    if not drawn.recipes or any(r.get("v") != COUNTER_RECIPE for r in drawn.recipes):
        return None
    parts = tuple((int(r["seed"]), int(n)) for r, n in zip(drawn.recipes, drawn.sizes))
    return ConversionPlan(conv, sum(n for _, n in parts), parts)


class ConversionGenerator:
    """The generator kernel built on a DeviceRunner, with each conversion's landmark pool
    on the device.  Raises KernelBuildError (a finding) where the device does not build
    it."""

    def __init__(self, runner):
        from fuzzfarm.device import commands
        source = resources.files("fuzzfarm.device").joinpath(
            "conversion_generate.cl").read_text()
        program = runner.build(source, "the conversion input generator", options="")
        self.kernel = commands.kernels(runner, program, ["fuzzfarm_convert_make"],
                                       "the conversion input generator",
                                       source)["fuzzfarm_convert_make"]
        self.runner = runner
        self._pools: dict = {}

    def _pool(self, conv: Conversion):
        from fuzzfarm.device import commands
        from strategies.conversions import pool_patterns
        if conv not in self._pools:
            pool = np.ascontiguousarray(pool_patterns(conv))
            self._pools[conv] = (commands.buffer(self.runner, host=pool, read_only=True),
                                 pool.size)
        return self._pools[conv]

    def enqueue(self, queue, plan: ConversionPlan, out, wait_for=None):
        """Make ``plan``'s sources into device buffer ``out`` (rows 0 .. plan.n, the
        source's buffer type); returns the last event.  Raises pyopencl.Error from the
        driver."""
        from fuzzfarm.device import commands
        from strategies.conversions import counter_key, counter_shape
        sh = counter_shape(plan.conv)
        pool, size = self._pool(plan.conv)
        shape = [np.int32(v) for v in sh]
        ev, offset = None, 0
        for seed, n in plan.parts:
            if n:
                self.kernel.set_args(out, np.uint64(plan.n), np.uint64(offset), np.uint64(n),
                                     np.uint64(counter_key(plan.conv, seed)), pool,
                                     np.uint64(size), *shape)
                items = -(-n // 64) * 64
                ev = commands.launch(self.runner, self.kernel, items, 64,
                                     wait_for=wait_for if ev is None else [ev])
            offset += n
        return ev


_GENERATORS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def generator_for(runner) -> ConversionGenerator:
    """The ConversionGenerator of ``runner`` (built at first use).  Raises
    KernelBuildError where the device does not build it."""
    g = _GENERATORS.get(runner)
    if g is None:
        g = _GENERATORS[runner] = ConversionGenerator(runner)
    return g
