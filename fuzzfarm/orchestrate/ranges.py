"""The range units of a sweep: how an enumerated input space (``strategies.Space``) is cut
into units of work and in which order they run.

The space is cut into chunks of ``chunk`` inputs (a power of two); chunk k is one unit
(id suffix ``sweep<k, 6 digits>``), except that a chunk holding inputs of the rare classes
(zeros, subnormals, infinities, NaNs) and larger than RARE_UNIT is cut into RARE_UNIT-input
parts (suffix ``sweep<k>-<part, 3 digits>``): where the device screen is not used the host
judges every one of them, and its check of a whole 2^24-input chunk of them took 0.75-1.7 s
on the GPU machine (one process), the last second of a sweep; as 16 units they are checked
side by side.  (Since the device screen judges these classes too, 2026-11-27, the cut is
kept so that a sweep's unit ids stay those an earlier version wrote: resume.)  Those
units run first (``range_plan``), so that the longest checks do not come last.  A plan is
pure data: the same space, chunk and chunk numbers give the same units.
"""
from __future__ import annotations

from fuzzfarm.work.unit import IndexRange

__all__ = ["RARE_UNIT", "chunk_ranges", "range_plan"]

#: The largest unit of a chunk that holds rare-class inputs (module docstring).
RARE_UNIT = 1 << 20


def chunk_ranges(space, index: int, chunk: int) -> list[tuple[str, IndexRange]]:
    """(id suffix, range) of the units of chunk ``index`` of ``space`` (strategies.Space)
    cut in chunks of ``chunk`` inputs: the chunk itself, or its RARE_UNIT parts where it
    holds rare-class inputs and is larger than RARE_UNIT."""
    start = index * chunk
    count = min(chunk, space.size - start)
    whole = f"sweep{index:06d}"
    if count <= RARE_UNIT or not space.rare_inputs(start, count):
        return [(whole, IndexRange(start, count))]
    return [(f"{whole}-{k:03d}", IndexRange(s, min(RARE_UNIT, start + count - s)))
            for k, s in enumerate(range(start, start + count, RARE_UNIT))]


def range_plan(space, chunk: int, indices, done=frozenset(), prefix: str = ""
               ) -> tuple:
    """The units of chunks ``indices`` of ``space``, as (id suffix, IndexRange), the units
    holding rare-class inputs first (module docstring), the rest in order.  Units whose id
    (``prefix`` + "-" + suffix) is in ``done``, and every part of a chunk done whole, are
    left out (a sweep resumed from what an earlier session wrote)."""
    out = []
    for i in indices:
        whole = f"{prefix}-sweep{i:06d}"
        if whole in done:
            continue
        out += [(s, r) for s, r in chunk_ranges(space, i, chunk)
                if f"{prefix}-{s}" not in done]
    return tuple(sorted(out, key=lambda u: -space.rare_inputs(u[1].start, u[1].count)))
