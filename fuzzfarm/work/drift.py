"""Drift samples: what a campaign's ``source = "drift"`` job runs for each target, so that
a built-in's ULP maximum can be compared across builds on the same inputs.

A target's drift sample is fixed by the job's seed alone: ``DRIFT_INPUTS`` inputs in
``DRIFT_INPUTS // DRIFT_UNIT_INPUTS`` units, each drawn by one recipe (``drift_recipe``)
whose float arguments are normal numbers of an exponent uniform over the whole normal
range and subnormals in proportion to their binades -- spread evenly by binade over the
finite range, both signs -- and whose integer arguments are the recipes' usual classes.
A built-in of one binary16 argument has only 2^16 inputs: it is swept whole instead
(``exhaustive``).  Every build of a history runs the same units, so a maximum that
changes is a change on the same inputs.  No Ray and no pyopencl here.
"""
from __future__ import annotations

from fuzzfarm.target import Target
from fuzzfarm.work.make import unit_seed
from fuzzfarm.work.unit import Drawn, WorkUnit

__all__ = ["DRIFT_INPUTS", "DRIFT_UNIT_INPUTS", "DRIFT_UNITS", "drift_recipe", "drift_unit",
           "exhaustive", "drifts"]

#: Inputs of a target's drift sample, and of each of its units.
DRIFT_INPUTS = 1 << 20
DRIFT_UNIT_INPUTS = 1 << 18
DRIFT_UNITS = DRIFT_INPUTS // DRIFT_UNIT_INPUTS


def drifts(target) -> bool:
    """Whether ``target`` has a drift sample: an element-wise built-in (conversions are
    exact and geometric built-ins are vectors: no ULP maximum to follow here)."""
    return Target.of(target).kind == "elementwise"


def exhaustive(target) -> bool:
    """Whether ``target``'s drift sample is its whole input space: a binary16 built-in of
    one float argument (2^16 inputs, fewer than a sample would draw)."""
    t = Target.of(target)
    return (drifts(t) and t.precision == "binary16" and len(t.fn.inputs) == 1
            and t.fn.inputs[0].kind == "float")


def drift_recipe(target, seed: int) -> dict:
    """The recipe (a Drawn unit's recipe dict, with its ``"n"``) of a drift unit of
    ``target`` seeded ``seed``: normal numbers (exponent uniform over the normal range)
    and subnormals weighted by their binades, p - 1 of them against emax - emin + 1."""
    from strategies import Recipe
    fmt = Target.of(target).fmt
    normal_binades = fmt.emax - fmt.emin + 1
    recipe = Recipe(float_weights={"normal": 1.0,
                                   "subnormal": (fmt.precision - 1) / normal_binades},
                    seed=int(seed))
    return {**recipe.to_dict(), "n": DRIFT_UNIT_INPUTS}


def drift_unit(unit_id: str, target, serial: int, seed: int,
               build_options: str = "") -> WorkUnit:
    """Drift unit ``serial`` (0 .. DRIFT_UNITS - 1) of ``target``: DRIFT_UNIT_INPUTS inputs
    of ``drift_recipe``, seeded by ``unit_seed(seed, serial, target)``; its recipe is fixed
    here, never drawn (``work.make.draw`` leaves it)."""
    target = Target.of(target)
    s = unit_seed(seed, serial, target)
    return WorkUnit(unit_id, target, Drawn(s, (DRIFT_UNIT_INPUTS,), (drift_recipe(target, s),)),
                    build_options)
