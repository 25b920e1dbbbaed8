"""The unit of work: one typed, immutable value from the scheduler to the stored rows.

A ``WorkUnit`` is what a device runs and a checker judges in one go: a ``Target`` (built-in
or conversion x precision x vector width), the *source* of its inputs, and the OpenCL build
options its kernel is built with.  The source is one of three values:

* ``Special(seed, replay)``: the special-value pool of the target (every combination of the
  catalogue's landmark values), preceded by ``replay``'s input tuples (failures saved by
  ``fuzzfarm repro``); unit 0 of every stream;
* ``Drawn(seed, sizes, recipes)``: inputs drawn from hypothesis recipes, one part of
  ``sizes[k]`` inputs per recipe, the recipes drawn from ``seed``
  (``fuzzfarm.work.make.draw``) or, for a unit rebuilt from a stored row, as stored;
* ``IndexRange(start, count)``: inputs ``start .. start+count-1`` of the target's whole input
  space in the sweep numbering (``strategies.Space``): one chunk of a sweep.

Everything the pipeline needs about a unit derives from these fields, in one place each:
its inputs (``fuzzfarm.work.kinds``), its size, and the ``seed`` and ``recipe`` columns of its
rows (``stored_seed``, ``recipe_json``), from which ``unit_from_row`` rebuilds it.  No Ray
and no OpenCL here.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Union

from fuzzfarm.target import CONSTANTS_DOORS, Target

__all__ = ["WorkUnit", "Special", "Drawn", "IndexRange", "Source", "unit_from_row",
           "UnitRowError", "UnitNotDrawn"]


@dataclass(frozen=True)
class Special:
    """The special-value pool (``seed``: the stream's seed, stored with the rows);
    ``replay``: input-bit tuples (one raw-bits integer per argument) run first."""

    seed: int
    replay: tuple = ()

    @property
    def size(self) -> None:
        """Unknown before the pool is made (it depends on the built-in)."""
        return None


@dataclass(frozen=True)
class Drawn:
    """Inputs drawn from hypothesis recipes: part k has ``sizes[k]`` inputs (vectors for a
    geometric built-in).  ``seed`` (the unit's, derived from the stream's seed and the
    unit's serial) is what the recipes are drawn from; ``recipes`` are the drawn recipe
    dicts, each with its ``"n"`` (None until drawn: ``fuzzfarm.work.make.draw``; a conversion's
    parts are ``{"seed", "n", "v"}``, ``"v"`` 2 for counter-based inputs
    (``strategies.conversions.COUNTER_RECIPE``; absent: version 1); ``()`` with one size: a conversion unit of the layout
    before parts, its inputs drawn from ``seed`` alone).  Units compare by seed and
    sizes: the recipes follow from them."""

    seed: int
    sizes: tuple
    recipes: tuple | None = field(default=None, compare=False)

    @property
    def size(self) -> int:
        return int(sum(self.sizes))


@dataclass(frozen=True)
class IndexRange:
    """Inputs ``start .. start+count-1`` of the target's input space, numbered as the sweep
    kernel numbers them (``strategies.Space``)."""

    start: int
    count: int

    @property
    def size(self) -> int:
        return int(self.count)


Source = Union[Special, Drawn, IndexRange]


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work: ``unit_id`` (names its result files; given by the scheduler),
    ``target``, ``source`` (``Special``, ``Drawn`` or ``IndexRange``),
    ``build_options`` (the OpenCL build options of its kernel, ``""`` for none) and
    ``against``: the other front end ('opencl-c' or 'spirv'), or its own front end's
    constants door (target.CONSTANTS_DOORS: the same inputs as compile-time constants), whose results on the same inputs, on the
    same device, this unit's are compared with bit for bit (a compare job's unit:
    fuzzfarm.verdict.front_ends), or None."""

    unit_id: str
    target: Target
    source: Source
    build_options: str = ""
    against: str | None = None

    @property
    def other_target(self) -> Target | None:
        """The target whose results a compare unit's are compared with: its own through
        the ``against`` front end (itself for the constants door, whose results its rules
        judge); None for any other unit."""
        if self.against is None:
            return None
        if self.against in CONSTANTS_DOORS:
            return self.target
        return self.target._replace(front_end=self.against)

    @property
    def size(self) -> int | None:
        """Inputs the unit has (vectors for a geometric built-in); None for the
        special-value pool, whose size depends on the built-in."""
        return self.source.size

    @property
    def stored_seed(self) -> int:
        """The ``seed`` column of the unit's rows: the stream's seed for the special pool,
        the unit's seed for drawn inputs, the first input's number for a range."""
        s = self.source
        return int(s.start if isinstance(s, IndexRange) else s.seed)

    @property
    def recipes(self) -> tuple:
        """The recipe dicts of a drawn unit (each with its ``"n"``), () for the other
        sources.  Raises UnitNotDrawn for a drawn unit whose recipes are not drawn yet
        (``fuzzfarm.work.make.draw`` draws them)."""
        s = self.source
        if not isinstance(s, Drawn):
            return ()
        if s.recipes is None:
            raise UnitNotDrawn(f"unit {self.unit_id}: its recipes are not drawn yet "
                               f"(fuzzfarm.work.make.draw)")
        return s.recipes

    @property
    def recipe_json(self) -> str:
        """The ``recipe`` column of the unit's rows (with ``stored_seed``, what
        ``unit_from_row`` rebuilds the unit from)."""
        s = self.source
        if isinstance(s, Special):
            return json.dumps({"special": True, **({"replay": [list(t) for t in s.replay]}
                                                   if s.replay else {})}, sort_keys=True)
        if isinstance(s, IndexRange):
            return json.dumps({"sweep": {"start": s.start, "count": s.count}}, sort_keys=True)
        return json.dumps(list(self.recipes), sort_keys=True)

    def __str__(self) -> str:
        return self.unit_id


class UnitNotDrawn(ValueError):
    """A drawn unit's recipes were read before they were drawn (a bug of the caller)."""


class UnitRowError(ValueError):
    """A stored row whose ``recipe``/``seed`` do not describe a unit."""


def unit_from_row(row: dict, width: int | None = None, per_recipe: int = 8192) -> WorkUnit:
    """The unit a stored finding or stats row was made by (its ``unit_id``, ``function``,
    ``precision``, ``vector_width``, ``front_end``, ``build_options``, ``seed`` and
    ``recipe`` columns),
    so that ``make_inputs`` regenerates its inputs bit for bit.  ``width`` overrides the
    row's vector width; ``per_recipe``: the size of a recipe stored without its ``"n"``
    (runs of the layout before sizes varied: their run metadata's ``per_recipe``).
    Raises UnitRowError where the recipe is not JSON of a known form."""
    try:
        recipe = json.loads(row.get("recipe") or "[]")
    except (TypeError, ValueError) as exc:
        raise UnitRowError(f"recipe of unit {row.get('unit_id')!r} is not JSON ({exc})") \
            from None
    target = Target(str(row["function"]), str(row["precision"]),
                    int(width if width is not None else row.get("vector_width") or 1),
                    str(row.get("front_end") or "opencl-c"))
    seed = int(row.get("seed") or 0)
    if isinstance(recipe, dict) and recipe.get("special"):
        source = Special(seed, tuple(tuple(int(b) for b in t)
                                     for t in recipe.get("replay", ())))
    elif isinstance(recipe, dict) and "sweep" in recipe:
        sw = recipe["sweep"]
        source = IndexRange(int(sw["start"]), int(sw["count"]))
    elif isinstance(recipe, list):
        parts = tuple(recipe)
        sizes = tuple(int(r.get("n", per_recipe)) if isinstance(r, dict) else per_recipe
                      for r in parts) or (int(per_recipe),)
        source = Drawn(seed, sizes, parts)
    else:
        raise UnitRowError(f"recipe of unit {row.get('unit_id')!r} has an unknown form")
    return WorkUnit(str(row.get("unit_id") or ""), target, source,
                    str(row.get("build_options") or ""))
