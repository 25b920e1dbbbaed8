"""Explicit conversions judged bit for bit on the device (docs/device_screen.md,
"Conversions"): the reference of every float->int, int->float and float->float
conversion in integer arithmetic (``conversion_screen.cl``), compared with the device's
result where it ran, so that only the elements whose verdict is not certain reach the host.

``screen_for(runner, conv)`` gives a ``ConversionScreen``; its ``enqueue`` runs on the
device buffers of a conversion's launch and writes a ``ConversionAnswer``: one bit per
element the device *decided* (its verdict certain: the reference bit for bit, or an
implementation-defined result no note applies to) and how many of those were
implementation-defined.  The host judges the rest with ``verdict.conversions.check``
(``verdict.conversions.check_screened``).  The device never decides a failure, a note or
a flush-to-zero allowance: a fault of its arithmetic can only send more elements to the
host or pass one that should have failed (the soundness tests compare its reference with
the host's on every conversion).  Decided elements follow OpenCL C's texts (a _sat
conversion's NaN decided where the result is 0: the "should" of §6.4.3.3); SPIR-V's
stricter rule is judged on the host only.
"""
from __future__ import annotations

import weakref
from importlib import resources
from typing import NamedTuple

import numpy as np

from edgecases.conversions import INT_TYPES, Conversion

__all__ = ["ConversionAnswer", "ConversionScreen", "screen_for", "LOCAL", "MODES"]

#: Work items per work group (one element each; the kernel keeps LOCAL / 32 words).
LOCAL = 256
#: The kernel's codes of the effective rounding modes.
MODES = {"rte": 0, "rtz": 1, "rtp": 2, "rtn": 3}


def _words(count: int) -> int:
    """Words of ``decided`` for ``count`` elements (whole work groups)."""
    return -(-max(int(count), 1) // LOCAL) * (LOCAL // 32)


class ConversionAnswer(NamedTuple):
    """The device's answer for one launch of ``count`` elements: ``decided`` uint32
    (words,), bit j of word w for element 32 w + j; ``counts`` uint32 (1,): how many of
    the decided elements were implementation-defined (unjudged)."""

    decided: np.ndarray
    counts: np.ndarray

    @staticmethod
    def empty(count: int) -> "ConversionAnswer":
        """A zeroed answer for ``count`` elements in fresh memory."""
        return ConversionAnswer(np.zeros(_words(count), np.uint32), np.zeros(1, np.uint32))

    def undecided(self, count: int) -> np.ndarray:
        """Positions (int64, sorted) of the first ``count`` elements the device did not
        decide: those the host judges."""
        bits = np.unpackbits(self.decided.view(np.uint8), bitorder="little")[:count]
        return np.flatnonzero(bits == 0).astype(np.int64)

    @property
    def unjudged(self) -> int:
        """Decided elements whose result is implementation-defined."""
        return int(self.counts[0])


def _shape(conv: Conversion) -> tuple[int, int, int, int, int, int]:
    """(sfmt, sbits, ssigned, dfmt, dbits, dsigned) of the kernel's arguments."""
    def one(t: str, fmt) -> tuple[int, int, int]:
        if fmt is not None:
            return fmt.bits, 0, 0
        bits, signed = INT_TYPES[t]
        return 0, bits, int(signed)
    return one(conv.src, conv.src_format) + one(conv.dst, conv.dst_format)


class _Program:
    """The screen's program on one runner, built once, and the device buffers of its
    answer (grown as needed; launches on the runner's in-order queue reuse them, each
    answer copied to its host memory before the next launch writes them)."""

    def __init__(self, runner):
        from fuzzfarm.device import commands
        source = resources.files("fuzzfarm.oracle").joinpath("conversion_screen.cl").read_text()
        # built without the runner's build options: the reference is integer arithmetic,
        # but nothing of -cl-fast-relaxed-math belongs in it
        program = runner.build(source, "the conversion screen", options="")
        self.kernel = commands.kernels(runner, program, ["fuzzfarm_convert_screen"],
                                       "the conversion screen", source)["fuzzfarm_convert_screen"]
        self.runner = runner
        self.words = 0
        self.decided = None
        self.counts = commands.buffer(runner, 4)
        self.zero = np.zeros(1, np.uint32)

    def room(self, count: int):
        """The ``decided`` buffer, holding at least ``count`` elements."""
        from fuzzfarm.device import commands
        w = _words(count)
        if w > self.words:
            self.words = max(w, 2 * self.words)
            self.decided = commands.buffer(self.runner, self.words * 4)
        return self.decided


_PROGRAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def screen_for(runner, conv: Conversion):
    """The device's judge of ``conv`` on ``runner`` (a device.runner.DeviceRunner):
    (ConversionScreen, "") or (None, the reason in words) where it does not apply
    (int->int conversions, which the catalogue's runs do not hold).  The program is built
    once per runner.  Raises device.runner.KernelBuildError where the device fails to build
    it (a finding)."""
    if conv.kind == "int_to_int":
        return None, f"{conv.id} converts between integer types: judged on the host"
    prog = _PROGRAMS.get(runner)
    if prog is None:
        prog = _PROGRAMS[runner] = _Program(runner)
    return ConversionScreen(prog, conv), ""


class ConversionScreen:
    """The device's judge of one conversion (``screen_for``)."""

    def __init__(self, program: _Program, conv: Conversion):
        self.program, self.conv = program, conv
        self._args = tuple(np.int32(v) for v in _shape(conv)) + (
            np.int32(MODES[conv.mode]), np.int32(int(conv.sat)))

    def enqueue(self, xbuf, ybuf, count: int, answer: ConversionAnswer, wait_for=None):
        """Judge the first ``count`` elements of the device buffers ``xbuf`` (sources) and
        ``ybuf`` (the device's results) into ``answer`` (host memory, written when the
        returned event completes).  Raises pyopencl.Error from the driver."""
        from fuzzfarm.device import commands
        p = self.program
        decided = p.room(count)
        ev = commands.copy(p.runner, p.counts, p.zero, wait_for=wait_for)
        p.kernel.set_args(xbuf, ybuf, np.uint32(count), *self._args, decided, p.counts)
        words = _words(count)
        ev = commands.launch(p.runner, p.kernel, words * 32, LOCAL, wait_for=[ev])
        commands.copy(p.runner, answer.decided[:words], decided, wait_for=[ev])
        return commands.copy(p.runner, answer.counts, p.counts, wait_for=[ev])
