"""Explicit conversions judged bit for bit on the device (docs/device_screen.md,
"Conversions"): the reference of every explicit conversion (float->int, int->float,
float->float and int->int) in integer arithmetic (``conversion_screen.cl``), compared
with the device's result where it ran, so that only the elements whose verdict is not
certain reach the host.

``screen_for(runner, conv)`` gives a ``ConversionScreen``; its ``enqueue`` runs on the
device buffers of a conversion's launch and writes a ``ConversionAnswer``: one bit per
element the device *decided* (its verdict certain: the reference bit for bit, or an
implementation-defined result no note applies to) and how many of those were
implementation-defined.  The host judges the rest with ``verdict.conversions.check``
(``verdict.conversions.check_screened``).  The device never decides a failure, a note or
a flush-to-zero allowance: a fault of its arithmetic can only send more elements to the
host or pass one that should have failed (the soundness tests compare its reference with
the host's on every conversion).  Decided elements follow the texts of the kernel's front
end (a _sat
conversion's NaN decided where the result is 0: the "should" of §6.4.3.3); SPIR-V's
stricter rule is judged on the host only.
"""
from __future__ import annotations

import weakref
from importlib import resources
from typing import NamedTuple

import numpy as np

from edgecases.conversions import INT_TYPES, Conversion

__all__ = ["ConversionAnswer", "ConversionScreen", "ConversionLanding", "screen_for", "LOCAL",
           "MODES", "SAMPLE"]

#: Work items per work group (one element each; the kernel keeps LOCAL / 32 words, at
#: most 8).
LOCAL = 64
#: The kernel's codes of the effective rounding modes.
MODES = {"rte": 0, "rtz": 1, "rtp": 2, "rtn": 3}
#: One row in SAMPLE of a unit whose inputs the device made is left to the host, which
#: makes its input again and compares (the device's generator checked on every unit).
SAMPLE = 1024


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
        if self.decided.size * 32 < count:
            raise ValueError(f"the answer holds {self.decided.size * 32} elements, not "
                             f"{count}")
        from fuzzfarm.oracle.screen_answer import bit_positions
        return bit_positions(~self.decided[:-(-count // 32)], count)

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
        self._runner = weakref.ref(runner)      # _PROGRAMS's key: not held alive by it
        self.words = 0
        self.decided = None
        self.counts = commands.buffer(runner, 4)
        self.zero = np.zeros(1, np.uint32)
        self.gather = commands.kernels(runner, program, ["fuzzfarm_convert_gather"],
                                       "the conversion screen", source)["fuzzfarm_convert_gather"]
        #: whether the device runs both kernels in groups of LOCAL work items
        self.fits = min(commands.work_group_limit(runner, k)
                        for k in (self.kernel, self.gather)) >= LOCAL
        self.landings: list = []        # idle ConversionLandings

    @property
    def runner(self):
        """The runner this program was built on."""
        return self._runner()

    def room(self, count: int):
        """The ``decided`` buffer, holding at least ``count`` elements."""
        from fuzzfarm.device import commands
        w = _words(count)
        if w > self.words:
            self.words = max(w, 2 * self.words)
            self.decided = commands.buffer(self.runner, self.words * 4)
        return self.decided


_PROGRAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def screen_for(runner, conv: Conversion, front_end: str = "opencl-c"):
    """The device's judge of ``conv`` on ``runner`` (a device.runner.DeviceRunner) for
    results of a kernel built through ``front_end`` ('opencl-c' or 'spirv': which text
    governs a saturated NaN, ``verdict.conversions.check``): (ConversionScreen, "") or
    (None, the reason in words) where it does not apply (a device that runs the screen in
    groups of fewer than LOCAL work items).  The program is built once per runner.
    Raises device.runner.KernelBuildError where the device fails to build it (a
    finding)."""
    prog = _PROGRAMS.get(runner)
    if prog is None:
        prog = _PROGRAMS[runner] = _Program(runner)
    if not prog.fits:
        return None, f"the device runs the conversion screen in groups of fewer than {LOCAL}"
    return ConversionScreen(prog, conv, front_end), ""


class ConversionScreen:
    """The device's judge of one conversion through one front end (``screen_for``)."""

    def __init__(self, program: _Program, conv: Conversion, front_end: str = "opencl-c"):
        self.program, self.conv, self.front_end = program, conv, front_end
        # the kernel's sat: 0 none, 1 OpenCL C's saturation, 2 SPIR-V's SaturatedConversion
        sat = 0 if not conv.sat else (2 if front_end == "spirv" else 1)
        self._args = tuple(np.int32(v) for v in _shape(conv)) + (
            np.int32(MODES[conv.mode]), np.int32(sat))

    def enqueue(self, xbuf, ybuf, count: int, answer: ConversionAnswer, wait_for=None,
                sample: int | None = None):
        """Judge the first ``count`` elements of the device buffers ``xbuf`` (sources) and
        ``ybuf`` (the device's results) into ``answer`` (host memory, written when the
        returned event completes).  ``sample``: leave the rows i with i mod SAMPLE ==
        ``sample`` to the host (inputs the device made).  Raises pyopencl.Error from the
        driver."""
        from fuzzfarm.device import commands
        p = self.program
        decided = p.room(count)
        ev = commands.copy(p.runner, p.counts, p.zero, wait_for=wait_for)
        mask, at = (0, 0) if sample is None else (SAMPLE, int(sample) % SAMPLE)
        p.kernel.set_args(xbuf, ybuf, np.uint32(count), *self._args, np.uint32(mask),
                          np.uint32(at), decided, p.counts)
        words = _words(count)
        ev = commands.launch(p.runner, p.kernel, words * 32, LOCAL, wait_for=[ev])
        commands.copy(p.runner, answer.decided[:words], decided, wait_for=[ev])
        return commands.copy(p.runner, answer.counts, p.counts, wait_for=[ev])

    def landing(self, count: int) -> "ConversionLanding":
        """Memory for the answer and the gathered rows of a launch of ``count`` elements
        (an idle one of this runner's, or new); ``release`` it after the check has them."""
        p = self.program
        for k, land in enumerate(p.landings):
            if land.capacity >= count:
                land = p.landings.pop(k)
                land.prepare(self.conv, count)
                return land
        land = ConversionLanding(p, max(int(count), 1 << 16))
        land.prepare(self.conv, count)
        return land

    def enqueue_gather(self, xbuf, ybuf, count: int, land: "ConversionLanding", wait_for=None):
        """After ``enqueue`` (into ``land.answer``): gather the rows it did not decide into
        ``land`` and start copying them home; returns the last event."""
        from fuzzfarm.device import commands
        p = self.program
        c = self.conv
        xbits = c.src_format.bits if c.src_format else 8 * c.src_dtype.itemsize
        ybits = c.dst_format.bits if c.dst_format else 8 * c.dst_dtype.itemsize
        ev = commands.copy(p.runner, land.dev_count, p.zero, wait_for=wait_for)
        p.gather.set_args(xbuf, ybuf, np.uint32(count), np.int32(xbits), np.int32(ybits),
                          p.decided, land.dev_count, np.uint32(land.rows_cap), land.dev_pos,
                          land.dev_x, land.dev_y)
        ev = commands.launch(p.runner, p.gather, _words(count) * 32, LOCAL, wait_for=[ev])
        head = land.head
        commands.copy(p.runner, land.count, land.dev_count, wait_for=[ev])
        commands.copy(p.runner, land.pos[:head], land.dev_pos, wait_for=[ev])
        commands.copy(p.runner, land.x[:head], land.dev_x, wait_for=[ev])
        return commands.copy(p.runner, land.y[:head], land.dev_y, wait_for=[ev])


class ConversionLanding:
    """Where one made conversion unit's answer and gathered rows land: device buffers for
    up to ``rows_cap`` rows (an eighth of ``capacity`` elements, at least 4096) and host
    memory for them, the first ``head`` rows copied home with the launch, the rest read by
    ``rows`` only where there are more.  Reused (``release``) by later launches."""

    def __init__(self, program: _Program, capacity: int):
        from fuzzfarm.device import commands
        self.program, self.capacity = program, int(capacity)
        self.rows_cap = max(4096, self.capacity // 8)
        r = program.runner
        self.dev_count = commands.buffer(r, 4)
        self.dev_pos = commands.buffer(r, 4 * self.rows_cap)
        self.dev_x = commands.buffer(r, 8 * self.rows_cap)
        self.dev_y = commands.buffer(r, 8 * self.rows_cap)
        self.count = np.zeros(1, np.uint32)
        self.pos = np.zeros(self.rows_cap, np.uint32)
        self.x = np.zeros(self.rows_cap, np.uint64)
        self.y = np.zeros(self.rows_cap, np.uint64)
        self._answer = ConversionAnswer.empty(self.capacity)     # for its capacity
        self.answer = self._answer

    def prepare(self, conv: Conversion, count: int) -> None:
        """Set up for a launch of ``count`` elements of ``conv``."""
        self.conv, self.n = conv, int(count)
        self.head = min(self.rows_cap, 4096 + self.n // 512)
        full = self._answer
        self.answer = ConversionAnswer(full.decided[:_words(count)], full.counts)

    def rows(self):
        """After the launch's events: (positions int64, sources ``conv.src_dtype``,
        results ``conv.dst_dtype``) of the rows the device did not decide, in the order the
        device gathered them (not sorted: the check task sorts them, off the device
        actor's thread, where a sort had cost it 19 % of a catalogue run on an H200), or
        None where they were more than ``rows_cap`` (then every row is read instead).
        Raises pyopencl.Error from the driver."""
        from fuzzfarm.device import commands
        c = int(self.count[0])
        if c > self.rows_cap:
            return None
        r = self.program.runner
        if c > self.head:
            for host, dev, size in ((self.pos, self.dev_pos, 4), (self.x, self.dev_x, 8),
                                    (self.y, self.dev_y, 8)):
                commands.copy(r, host[self.head:c], dev, src_offset=self.head * size,
                              blocking=True)
        conv = self.conv
        sx, dy = np.dtype(conv.src_dtype), np.dtype(conv.dst_dtype)
        x = self.x[:c].astype(np.dtype(f"u{sx.itemsize}")).view(sx)
        y = self.y[:c].astype(np.dtype(f"u{dy.itemsize}")).view(dy)
        return self.pos[:c].astype(np.int64), x, y

    def release(self) -> None:
        """Give this landing back for a later launch."""
        self.program.landings.append(self)
