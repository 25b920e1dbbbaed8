"""The whole input space of an element-wise built-in, enumerated: what a sweep checks.

For a binary32 built-in of one float argument the space is the 2^32 bit patterns; for
binary16, 2^16 for one argument and 2^32 pairs for two.  ``Space`` numbers the inputs as
the sweep kernel does (``fuzzfarm.device.kernels.sweep_source``), so a range of numbers is
a unit of work (``fuzzfarm.work.unit.IndexRange``) whose inputs are made on the device
from the global id and made again here, on the host, only where the verdict reads them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from edgecases import catalogue
from fuzzfarm.formats import INPUT_CLASSES, FloatFormat
from strategies._internal.errors import InvalidArgument

__all__ = ["Space", "SpaceError", "MAX_SPACE_BITS", "space_of"]

#: The largest space a sweep enumerates: 2^32 inputs.
MAX_SPACE_BITS = 32


class SpaceError(InvalidArgument):
    """A built-in whose input space cannot be enumerated (one line naming why)."""


@dataclass(frozen=True)
class Space:
    """The input space of built-in ``fn`` in format ``fmt``, numbered as the sweep kernel
    numbers it.  One argument: input ``g`` is the pattern ``g >> 1`` with the sign bit
    ``g & 1``, so each value is followed by its negation (the screen then evaluates an odd
    or even function's reference once per pair).  Two arguments: argument k is bits
    ``[k*fmt.bits, (k+1)*fmt.bits)`` of ``g``."""

    fn: catalogue.Function
    fmt: FloatFormat

    @property
    def bits(self) -> int:
        return self.fmt.bits * len(self.fn.inputs)

    @property
    def size(self) -> int:
        return 1 << self.bits

    def class_counts(self, start: int, count: int) -> dict[str, int] | None:
        """Inputs per IEEE class of inputs ``start .. start+count-1``, as
        ``strategies.input_class_counts`` gives them ({"x:pos_normal": n, ...}), computed
        from the numbering alone (no pass over the data); None for a space of two
        arguments (counted from the data)."""
        if len(self.fn.inputs) != 1:
            return None
        f = self.fmt
        end = start + count
        # magnitude ranges [lo, hi) of each class, positive then negative
        ranges = {"zero": (0, 1), "subnormal": (1, f.min_normal),
                  "normal": (f.min_normal, f.pos_inf), "inf": (f.pos_inf, f.pos_inf + 1),
                  "snan": (f.pos_inf + 1, f.pos_inf | f.quiet_bit),
                  "qnan": (f.pos_inf | f.quiet_bit, f.abs_mask + 1)}
        name = self.fn.inputs[0].name
        out = {}
        for cls in INPUT_CLASSES:
            if cls in ("qnan", "snan"):
                n = sum(_inside(*ranges[cls], s, start, end) for s in (0, 1))
            else:
                sign = 1 if cls.startswith("neg_") else 0
                n = _inside(*ranges[cls.split("_", 1)[1]], sign, start, end)
            out[f"{name}:{cls}"] = n
        return out

    def rare_inputs(self, start: int, count: int) -> int:
        """Inputs of ``start .. start+count-1`` in the rare classes (zeros, subnormals,
        infinities, NaNs: those a device screen leaves to the host, every input but the
        normal ones); 0 for a space of two arguments (not counted)."""
        if len(self.fn.inputs) != 1:
            return 0
        f, end = self.fmt, start + count
        return count - sum(_inside(f.min_normal, f.pos_inf, s, start, end) for s in (0, 1))

    def inputs_at(self, start: int, positions: np.ndarray) -> dict[str, np.ndarray]:
        """Inputs ``start + positions`` (int array, (m,)) as {argument name: fmt.uint array
        (m,)}: the candidates a device screen left to the host."""
        if len(self.fn.inputs) == 1:
            return self._numbered(positions.astype(self.fmt.uint), start)
        return self._numbered(positions.astype(np.uint64), start)

    def inputs(self, start: int, count: int) -> dict[str, np.ndarray]:
        """Inputs ``start .. start+count-1`` as {argument name: fmt.uint array (count,)}."""
        one = len(self.fn.inputs) == 1     # in fmt.uint arithmetic: no 64-bit temporaries
        return self._numbered(np.arange(count, dtype=self.fmt.uint if one else np.uint64),
                              start)

    def _numbered(self, u: np.ndarray, start: int) -> dict[str, np.ndarray]:
        """The inputs numbered ``start + u`` (``u``: offsets, fmt.uint for one argument,
        uint64 for two; overwritten)."""
        if len(self.fn.inputs) == 1:
            t = self.fmt.uint
            u += t(start & ((1 << self.fmt.bits) - 1))
            x = u >> t(1)
            u <<= t(self.fmt.bits - 1)
            x |= u
            return {self.fn.inputs[0].name: x}
        u += np.uint64(start)
        out = {}
        for k, a in enumerate(self.fn.inputs):
            shift = np.uint64(k * self.fmt.bits)
            out[a.name] = (u >> shift).astype(self.fmt.uint) if k else u.astype(self.fmt.uint)
        return out


def _inside(lo: int, hi: int, sign: int, start: int, end: int) -> int:
    """How many input numbers g in [start, end) of a one-argument space have magnitude m
    in [lo, hi) and sign ``sign`` (g = 2 m + sign)."""
    a = max(lo, -(-(start - sign) // 2))
    b = min(hi, (end - 1 - sign) // 2 + 1)
    return max(0, b - a)


def space_of(fn: catalogue.Function, fmt: FloatFormat) -> Space:
    """The enumerable input space of element-wise built-in ``fn`` in ``fmt``.  Raises
    SpaceError for an integer argument or a space above 2^MAX_SPACE_BITS inputs (binary64,
    binary32 of two arguments)."""
    if any(a.kind != "float" for a in fn.inputs):
        raise SpaceError(f"sweep: {fn.name} has an integer argument; sweeps enumerate float "
                         f"bit patterns only (use `fuzzfarm run -f {fn.name}`)")
    space = Space(fn, fmt)
    if space.bits > MAX_SPACE_BITS:
        raise SpaceError(f"sweep: {fn.name} in {fmt.name} has 2^{space.bits} inputs, beyond "
                         f"the 2^{MAX_SPACE_BITS} a sweep covers (use `fuzzfarm run`)")
    return space
