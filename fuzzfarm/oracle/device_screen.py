"""The device screen: a sweep's "within the bound" verdicts decided on the device itself
(issue 17; the soundness argument is docs/device_screen.md).

A full binary32 sweep checks 2**32 results; the host's numpy screen (fuzzfarm.oracle.screen)
does that at 13-17 M results/s per process on a 16-core host, which made a sweep several
times longer than the device needs to compute the results.  The device screen moves the
common case onto the device: after the sweep kernel has written the results of a chunk,
the screen kernel (``device_screen.cl``) recomputes every input from its number, evaluates
a binary64 reference of its own -- made of IEEE basic operations and integer arithmetic
only, never a built-in math function of the device -- and applies the host screen's
inequality (``screen`` module docstring, "The proof") with the same assumed relative error
REL = 2**-45 and the same margin.  Per chunk it returns

* ``passed``: one bit per input (uint32 words, bit j of word w = input 32 w + j), set only
  where the input x is a finite nonzero binary32 number (normal or subnormal) and either
  the result y is a finite nonzero binary32 number of f's sign provably within ``bound``
  ULPs of f(x), or f(x) has a prescribed result
  (a rule of the catalogue: the zeros and infinities of sinpi, cospi, tanpi) and y is it
  bit for bit, or a rule prescribes a NaN (log, log2 and log10 of x < 0) and y is a quiet
  NaN, or
  f(x) is provably beyond the overflow threshold (y = the infinity of its sign) or
  provably below half the smallest subnormal (y = a zero); or where x is a zero, an
  infinity or a NaN and y is what the catalogue's rules prescribe there
  (``special_answers``: a pattern bit for bit, or a quiet NaN);
* ``wmax`` (float32) and ``wpos`` (uint8) per word: the largest error among its passed
  inputs (ULPs, -1 where none) and its position, so that the chunk's maximum is found
  without the host evaluating a single reference;
* ``hist`` (uint32, NROWS x NBINS): the passed inputs by input class of x (exponent band,
  or near a zero or pole: oracle.histogram) and by ULP
  error, in the layout of oracle.histogram;
* with ``aggregate`` (``aggregates``): ``agg`` bits, ``agg_count`` per rule and the rule of
  each (``agg_c0``, ``agg_c1``) of the inputs whose prescribed zero or infinity came back
  as another zero or infinity: failures counted on the device, which the host confirms on
  a sample (fuzzfarm.orchestrate.sweep).

Everything else -- a special x whose result is not the prescribed one, zero, infinite
and NaN results of finite x, errors within the margin of the bound, failures -- is a
*candidate*: the host's checker
(verdict.checker.check_batch) judges the candidates exactly as it judges every input of a
host-screened sweep.  The device never passes a failure on its own say-so: a wrong
reference can cost speed (more candidates) but can only hide a failure if it is wrong by
more than the failure's excess over the bound (at least 2**9 binary64 ULPs) in the
direction of the device's wrong result; the tests compare every reference with mpmath and
with the host's float64 references (2**22 inputs each in the soundness tier), and check
the prescribed results the screen accepts against the catalogue's rules through the
checker itself.

Where it is used: binary32 built-ins of one float argument, or of two or three
(``TWO_ARGS``, ``THREE_ARGS``: every input with a zero, infinite or NaN argument is then
the host's), with a reference here
(``DEVICE_REFERENCES``; a half_* built-in takes the reference of the function it
approximates, ``reference_name``), a plain ULP bound (no absolute pieces) or, for the exact
built-ins (``BIT_EXACT``: fabs, floor, ceil, trunc, rint, round, logb, ilogb, sign, of
two arguments fmin, fmax, min, max, maxmag, minmag, copysign, nextafter, step, fmod,
remainder, and of three clamp), a result judged bit for bit, or for +, -, *, fdim, ldexp
and fma (``ROUNDED_ONCE``) 0.5 ULP, round to nearest, no
-cl-unsafe-math-optimizations or -cl-finite-math-only, a device with cl_khr_fp64, and
every rule of the built-in either confined to non-normal inputs or listed in
``HANDLED_RULES`` (a new rule in the catalogue turns the device screen off for that
built-in until its reference handles it).  ``plain_bound`` decides; otherwise the sweep
screens on the host as before.

binary64 results (``BINARY64_REFERENCES``: the trigonometric, hyperbolic and inverse
ones, roots, the exponentials and logarithms, +, -, *, /, fdim, hypot, atan2, the powers,
ldexp, the exact built-ins, those of a second output) are screened by
``device_screen64.cl`` in `run` units (drawn inputs; a sweep's binary64 range is the
host's): double-double references within ``rel64(name)`` (REL64 = 2**-90; the powers',
erf's and erfc's 2**-84) and the same inequality in binary64's ULPs; an int column (an int
argument, result or second output) read through its own type (``screen_columns``)
(docs/device_screen.md, "Binary64 results"); the kernel source of either precision follows
``screen_common.cl``.
"""
from __future__ import annotations

import threading
import warnings
import weakref

import numpy as np

from fuzzfarm.formats import format_named
from fuzzfarm.oracle.device_references import (EXACT_RULES, aggregates, plain_bound,
                                               screen_columns)
from fuzzfarm.oracle.histogram import NBINS, NROWS
from fuzzfarm.oracle.screen_answer import (LOCAL, NCLASSES, ScreenChunk, clean_candidates,
                                           words_for)
from fuzzfarm.oracle.screen_source import REL, gather_source, screen_source

__all__ = ["DeviceScreen", "screen_for", "screen_source", "REL", "Landing"]


def _bits(a, dtype=np.uint32) -> np.ndarray:
    """A contiguous view of an array of patterns as ``dtype`` (uint32 for 32-bit patterns:
    uint32, int32 or float32; uint64 for 64-bit ones)."""
    a = np.ascontiguousarray(a)
    dt = np.dtype(dtype)
    return a.view(dt) if a.dtype.itemsize == dt.itemsize else a.astype(dt)


def screen_key(runner, name: str, precision: str, claims) -> tuple | None:
    """(name, bound, aggregate, precision): what ``screen_for`` builds a screen of, for
    built-in ``name`` in ``precision`` on ``runner`` under ``claims``; None where it builds
    none (``screen_for``'s reasons)."""
    bound = plain_bound(name, precision, claims)
    if bound is None or not runner.info.has_fp64:
        return None
    return name, bound, aggregates(name, claims), precision


#: The stack of each thread that builds screens several at once (a precaution: a driver's
#: compiler recurses over a program's expressions, and LLVM's crash that made Oclgrind's
#: concurrent builds one at a time showed a thousand frames).
COMPILER_STACK_BYTES = 64 << 20


def build_screens(runner, keys, threads: int = 8, on_built=None) -> int:
    """Build the programs of the screens ``keys`` (``screen_key``'s) not yet built on
    ``runner``, ``threads`` at a time (the driver compiles them at once: a run's first
    minutes had been its compiler's, one screen after another); ``DeviceScreen`` then
    finds them built, and the gathering programs they share (``gather_kernels``).  A
    program that does not build is left unbuilt: ``screen_for`` raises its
    KernelBuildError when a unit needs it, where the fault is recorded.
    ``on_built(name, precision)``, if given, is called as each one is done (built or
    not).  Returns how many were built."""
    from concurrent.futures import ThreadPoolExecutor

    from fuzzfarm.device.runner import KernelBuildError
    built = _BUILT.setdefault(runner, {})
    todo = {}
    for name, bound, aggregate, precision in keys:
        source = screen_source(name, bound, aggregate and name in EXACT_RULES
                               and precision == "binary32", precision)
        if source not in built:
            todo[source] = name, precision

    def build(item):
        source, (name, precision) = item
        try:
            return source, name, runner.build(source, f"device screen of {name} "
                                                      f"({precision})", options="")
        except KernelBuildError:
            return source, name, None

    made = 0
    # runner.build sets warning filters around each build, which is not thread-safe:
    # whatever the threads leave, the filters are the caller's again at the end.  One
    # thread: in the caller's, as before the builds were prepared; several: threads of
    # COMPILER_STACK_BYTES
    with warnings.catch_warnings(), ThreadPoolExecutor(max(1, int(threads))) as pool:
        if int(threads) > 1:
            stack = threading.stack_size(COMPILER_STACK_BYTES)
            try:                    # map submits every build now: the threads start here
                mapped = pool.map(build, list(todo.items()))
            finally:
                threading.stack_size(stack)
        else:
            mapped = map(build, list(todo.items()))
        for source, name, program in mapped:
            if on_built is not None:
                on_built(name, todo[source][1])
            if program is None or source in built:
                continue
            try:
                built[source] = program, _screen_kernels(runner, program, name, source)
                made += 1
            except KernelBuildError:
                continue
    # the gathering programs the screens share, one per pattern width (a failure is the
    # first screen's to record, as its own program's)
    for width in sorted({np.dtype(format_named(k[3]).uint).itemsize for k in keys}):
        try:
            gather_kernels(runner, width)
        except KernelBuildError:
            continue
    return made


def _screen_kernels(runner, program, name: str, source: str) -> dict:
    """{kernel name: kernel} of a built screen program (KernelBuildError where the device
    cannot make one: Oclgrind builds sinpi's, then cannot make its kernel)."""
    from fuzzfarm.device import commands
    return commands.kernels(runner, program, ["fuzzfarm_screen", "fuzzfarm_reference",
                                              "fuzzfarm_screen_pairs"],
                            f"the device screen of {name}", source)


#: The gathering kernels (``gather_kernels``) built on each runner, by pattern width.
_GATHER: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

#: The gathering's kernels, by the names ``enqueue_marked`` uses.
GATHER_KERNELS = ("top", "mark_count", "mark_scan", "mark_write")


def gather_kernels(runner, itemsize: int) -> dict:
    """{"top", "mark_count", "mark_scan", "mark_write": kernel} of the gathering program
    for ``itemsize``-byte patterns on ``runner`` (screen_gather.cl), built once per runner
    and width and shared by its screens: their launches go to the runner's one in-order
    queue and set every argument at each enqueue.  Raises device.runner.KernelBuildError
    where the device does not build it (a finding, as a screen's own program)."""
    from fuzzfarm.device import commands
    mine = _GATHER.setdefault(runner, {})
    if itemsize not in mine:
        source = gather_source(itemsize)
        program = runner.build(source, f"the device screen's gathering ({itemsize * 8}-bit "
                                       f"patterns)", options="")
        made = commands.kernels(runner, program, [f"fuzzfarm_{k}" for k in GATHER_KERNELS],
                                "the device screen's gathering", source)
        mine[itemsize] = {k: made[f"fuzzfarm_{k}"] for k in GATHER_KERNELS}
    return mine[itemsize]


def screen_for(runner, name: str, precision: str, claims, chunk: int):
    """The device screen of built-in ``name`` in ``precision`` for chunks of ``chunk``
    inputs on ``runner`` (a device.runner.DeviceRunner) under ``claims``: (DeviceScreen,
    "") or, where it must not or cannot be used, (None, the reason in words).  Raises
    device.runner.KernelBuildError when the device fails to build it (a finding)."""
    bound = plain_bound(name, precision, claims)
    if bound is None:
        return None, f"no device screen for {name} in {precision} with these build options"
    if not runner.info.has_fp64:
        return None, "the device lacks cl_khr_fp64, which the device screen computes in"
    return DeviceScreen(runner, name, bound, chunk, aggregate=aggregates(name, claims),
                        precision=precision), ""


#: The programs and kernels of the screens built on each runner, by source: a unit larger
#: than a screen's chunk gets a screen of new buffers over the same kernels (the kernels'
#: arguments are set at each enqueue, as ``twin`` relies on).
_BUILT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class DeviceScreen:
    """The screen kernel of built-in ``name`` at ``bound`` ULPs for ``precision`` results
    (binary32, or binary64: ``BINARY64_REFERENCES``, drawn units only, no sweep numbering
    and no failures counted on the device) built on ``runner`` (a
    device.runner.DeviceRunner) for chunks of up to ``chunk`` inputs.  ``pattern``: the
    dtype of its inputs' and results' bit patterns (uint32 or uint64).  Built without the
    sweep's build options (the screen's arithmetic must be IEEE's).  Raises
    device.runner.KernelBuildError if the device cannot build it (no cl_khr_fp64, a
    compiler fault): the caller screens on the host instead."""

    def __init__(self, runner, name: str, bound: float, chunk: int,
                 aggregate: bool = False, precision: str = "binary32"):
        self.runner, self.name, self.bound = runner, name, bound
        self.precision = precision
        self.pattern = np.dtype(format_named(precision).uint)
        self.columns = screen_columns(name, precision)
        self.chunk = int(chunk)
        self.aggregate = aggregate and name in EXACT_RULES and precision == "binary32"
        source = screen_source(name, bound, self.aggregate, precision)
        built = _BUILT.setdefault(runner, {})
        if source not in built:     # a larger chunk of the same screen: built once
            program = runner.build(source, f"device screen of {name} ({precision})",
                                   options="")
            built[source] = program, _screen_kernels(runner, program, name, source)
        program, made = built[source]
        self.kernel = made["fuzzfarm_screen"]
        self._mark_kernels = gather_kernels(runner, self.pattern.itemsize)
        self._test_kernels = {k: made[f"fuzzfarm_{k}"] for k in ("reference", "screen_pairs")}
        self.program = program
        self._allocate()

    def _allocate(self, own: bool = False) -> None:
        """This screen's device buffers for chunks of ``self.chunk`` inputs: the answer's
        and the gathering's are the runner's, shared by its screens of that chunk and
        pattern width (``_scratch``), or with ``own`` this screen's alone."""
        from fuzzfarm.device.commands import buffer
        r = self.runner
        self._scratch = _Scratch(r, self.chunk, self.pattern.itemsize) if own else \
            _scratch(r, self.chunk, self.pattern.itemsize)
        sc = self._scratch
        self.passed, self.wmax, self.wpos, self.agg = sc.passed, sc.wmax, sc.wpos, sc.agg
        self.agg_c = sc.agg_c
        self.hist = buffer(r, NROWS * NBINS * 4)
        self.counts = buffer(r, 2 * NCLASSES * 4)
        self._zeros = np.zeros(NROWS * NBINS, np.uint32)

    def _check_count(self, count: int) -> None:
        """Raises ValueError for more than ``chunk`` inputs (the buffers' size)."""
        if count > self.chunk:
            raise ValueError(f"device screen: {count} inputs in a screen built for "
                             f"{self.chunk}")

    def twin(self) -> "DeviceScreen":
        """A screen of the same kernels (nothing built again) with device buffers of its
        own: one chunk can be screened while the host reads another's answer.  (A
        kernel's arguments are taken at each enqueue, so the two may share kernels while
        one host thread enqueues both.)"""
        import copy
        other = copy.copy(self)
        other._allocate(own=True)
        return other

    def enqueue(self, ybuf, start: int, count: int, out: ScreenChunk, wait_for=None,
                xbuf=None, blocking: bool = True, into=None, zbuf=None, wbuf=None,
                y2buf=None):
        """Screen the results in device buffer ``ybuf`` (uint32 patterns) of inputs
        ``start .. start+count-1`` of a sweep, or with ``xbuf``, of the inputs in that
        device buffer (uint32 patterns, a ``run`` unit's; ``zbuf``, ``wbuf``: the second
        and third argument's, for a built-in of two or three, ``TWO_ARGS``,
        ``THREE_ARGS``; ``y2buf``: the second output's, ``SECOND_OUTPUT``), into ``out``
        (host arrays,
        ScreenChunk.views), or with ``into`` = (buffer, byte offset), into that OpenCL
        buffer laid out as ScreenChunk.views lays out host memory (a host-memory buffer
        over the memory of ``out``: copied at pinned-memory speed).  Blocking, or with
        ``blocking=False`` returning the event of the last copy (``out`` is complete once
        it is, and ``into``'s buffer mapped)."""
        from fuzzfarm.device.commands import copy, launch
        self._check_count(count)
        r = self.runner
        ev0 = copy(r, self.hist, self._zeros)
        ev1 = copy(r, self.counts, self._zeros[:2 * NCLASSES])
        self.kernel.set_args(ybuf if xbuf is None else xbuf, np.uint32(xbuf is not None),
                             ybuf, np.uint64(start), np.uint32(count), self.passed,
                             self.wmax, self.wpos, self.hist, self.agg, self.counts,
                             *self.agg_c, *(ybuf if b is None else b
                                            for b in (zbuf, wbuf, y2buf)))
        w = words_for(count)
        ev = launch(r, self.kernel, w, LOCAL, wait_for=[ev0, ev1] + list(wait_for or []))
        if into is not None:
            return self._copy_into(into, count, ev, blocking)
        copy(r, out.passed, self.passed, wait_for=[ev])
        copy(r, out.wmax, self.wmax, wait_for=[ev])
        copy(r, out.wpos, self.wpos, wait_for=[ev])
        copy(r, out.agg, self.agg, wait_for=[ev])
        copy(r, out.agg_count, self.counts, wait_for=[ev])
        if self.aggregate:
            copy(r, out.agg_c0, self.agg_c[0], wait_for=[ev])
            copy(r, out.agg_c1, self.agg_c[1], wait_for=[ev])
        return copy(r, out.hist.reshape(-1), self.hist, wait_for=[ev], blocking=blocking)

    def _copy_into(self, into, count: int, ev, blocking: bool):
        """``enqueue``'s copies of the answer into OpenCL buffer ``into`` = (buffer, byte
        offset), at the places ScreenChunk.views gives its fields (the two rule-bit words
        only where this screen aggregates, as ``enqueue`` copies them)."""
        from fuzzfarm.device.commands import copy
        dst, base = into
        sources = {"passed": self.passed, "wmax": self.wmax, "wpos": self.wpos,
                   "agg": self.agg, "agg_count": self.counts, "hist": self.hist}
        if self.aggregate:
            sources.update(agg_c0=self.agg_c[0], agg_c1=self.agg_c[1])
        for name, _, _, at, size in ScreenChunk._placed(count):
            if name in sources:
                last = copy(self.runner, dst, sources[name], byte_count=size,
                            dst_offset=base + at, wait_for=[ev])
        if blocking:
            last.wait()
        return last

    def clean_candidates(self, answer: ScreenChunk, count: int) -> np.ndarray | None:
        """``clean_candidates`` of this screen's ``answer`` for ``count`` inputs."""
        return clean_candidates(answer, count)

    def landing(self, count: int, columns: int = 1) -> "Landing":
        """Host memory (pinned where the driver allows it) for the answer and the gathered
        rows of one drawn unit of ``count`` <= chunk inputs of ``columns`` columns each
        besides y (the arguments, and a second output: ``enqueue_marked``): an idle one of
        this screen's, or a new one.  Give it back with ``Landing.release``."""
        self._check_count(count)
        idle = _idle_landings(self, columns)
        land = idle.pop() if idle else Landing(self, columns)
        land.screen = self
        land.use(count)
        return land

    def enqueue_marked(self, xbuf, ybuf, count: int, land: "Landing", wait_for=None,
                       more=()):
        """After ``enqueue`` of a drawn unit (``xbuf``, ``ybuf``: its device buffers of
        the first argument's and the result's patterns; ``more``: further columns of the
        pattern's width -- the later arguments', then a second output's -- as many as
        ``land`` was made for; ``count`` inputs): gather on the device those columns and
        y of every input the host's verdict may read
        (verdict.screened.SparseOutputs.positions), in input order, and copy them and the
        count into ``land`` (``Landing.marked``).  Returns the event of the last copy
        (``land`` is complete once it is)."""
        from fuzzfarm.device.commands import copy, launch
        r = self.runner
        self._check_count(count)
        m = {**self._mark_kernels, **self._scratch.marks(len(more) + len(more) % 2)}
        w = words_for(count)
        n, cap = np.uint32(count), np.uint32(land.x.size)
        m["top"].set_args(self.wmax, self.wpos, np.uint32(w), m["hdr"])
        ev = launch(r, m["top"], LOCAL, LOCAL, wait_for=wait_for)
        m["mark_count"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"], m["gtot"])
        ev = launch(r, m["mark_count"], w, LOCAL, wait_for=[ev])
        m["mark_scan"].set_args(m["gtot"], np.uint32(w // LOCAL), m["hdr"])
        ev = launch(r, m["mark_scan"], LOCAL, LOCAL, wait_for=[ev])
        m["mark_write"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"], m["gtot"],
                                 xbuf, ybuf, cap, m["gx"], m["gy"])
        ev = launch(r, m["mark_write"], w, LOCAL, wait_for=[ev])
        copy(r, land.hdr, m["hdr"], wait_for=[ev])
        copy(r, land.x, m["gx"], wait_for=[ev])
        last = copy(r, land.y, m["gy"], wait_for=[ev])
        for j in range(0, len(more), 2):    # further columns: the same rows, two a launch
            pair = more[j:j + 2]
            m["mark_write"].set_args(self.passed, self.agg, n, m["hdr"], m["woff"],
                                     m["gtot"], pair[0], pair[-1], cap, m["extra"][j],
                                     m["extra"][j + 1])
            ev = launch(r, m["mark_write"], w, LOCAL, wait_for=[ev])
            for host, dev in zip(land.more[j:j + 2], m["extra"][j:j + 2]):
                last = copy(r, host, dev, wait_for=[ev])
        return last

    def screen_bits(self, start: int, ybits: np.ndarray) -> ScreenChunk:
        """Screen host results ``ybits`` (uint32, (n,)) of inputs ``start ..`` (tests,
        planted faults); returns a fresh ScreenChunk."""
        from fuzzfarm.device.commands import buffer
        n = int(ybits.size)
        out = ScreenChunk.empty(n)
        y = buffer(self.runner, host=np.ascontiguousarray(ybits, np.uint32), read_only=True)
        self.enqueue(y, start, n, out)
        return out

    def screen_drawn(self, xbits: np.ndarray, ybits: np.ndarray,
                     zbits: np.ndarray | None = None, wbits: np.ndarray | None = None,
                     y2bits: np.ndarray | None = None) -> ScreenChunk:
        """Screen host results ``ybits`` (and second outputs ``y2bits``,
        ``SECOND_OUTPUT``) of drawn inputs ``xbits`` (and second and third arguments
        ``zbits``, ``wbits``, ``TWO_ARGS``, ``THREE_ARGS``) (32-bit patterns, (n,) each),
        as a ``run`` unit is screened after its kernel (tests, planted faults); returns a
        fresh ScreenChunk."""
        from fuzzfarm.device.commands import buffer
        n = int(ybits.size)
        out = ScreenChunk.empty(n)
        c = self.columns
        x, y, z, w, y2 = (buffer(self.runner, host=_bits(ybits if a is None else a,
                                                          c.y if a is None else d),
                                 read_only=True)
                          for a, d in zip((xbits, ybits, zbits, wbits, y2bits),
                                          (c.x, c.y, c.z, c.w, c.y2)))
        self.enqueue(y, 0, n, out, xbuf=x, zbuf=z, wbuf=w, y2buf=y2)
        return out

    def references(self, xbits: np.ndarray, zbits: np.ndarray | None = None,
                   wbits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The device reference at patterns ``xbits`` (and second and third arguments
        ``zbits``, ``wbits``, ``TWO_ARGS``, ``THREE_ARGS``) (uint32 (n,), or uint64 for a
        binary64 screen), for tests: (r float64 (n,) -- for binary64 (n, 2), the
        double-double's high and low parts --, kind int32 (n,): 0 value, 1 exact, 2 beyond
        the overflow threshold, 3 below half the smallest subnormal, 4 a NaN prescribed,
        5 undefined; screen_common.cl)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        xb = _bits(xbits, self.pattern)
        n = int(xb.size)
        r = np.empty((n, 2) if self.pattern.itemsize == 8 else n, np.float64)
        kind = np.empty(n, np.int32)
        if n == 0:
            return r, kind
        dev = self.runner
        xbuf = buffer(dev, host=xb, read_only=True)     # kept alive until the copies end
        zbuf, wbuf = (xbuf if a is None else buffer(dev, host=_bits(a, d), read_only=True)
                      for a, d in ((zbits, self.columns.z), (wbits, self.columns.w)))
        rbuf, kbuf = buffer(dev, r.nbytes), buffer(dev, kind.nbytes)
        k = self._test_kernels["reference"]
        k.set_args(xbuf, rbuf, kbuf, zbuf, wbuf)
        ev = launch(dev, k, n)
        copy(dev, r, rbuf, wait_for=[ev], blocking=True)
        copy(dev, kind, kbuf, blocking=True)
        return r, kind

    def screen_pairs(self, xbits: np.ndarray, ybits: np.ndarray,
                     zbits: np.ndarray | None = None, wbits: np.ndarray | None = None,
                     y2bits: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The screen's verdicts on arbitrary pairs of patterns (32-bit, or 64-bit for a
        binary64 screen; (n,) each; with ``zbits``, ``wbits``, the second and third arguments,
        ``TWO_ARGS``, ``THREE_ARGS``; ``y2bits``, the second outputs, ``SECOND_OUTPUT``),
        for tests: (passed bool
        (n,), err float32 (n,) in ULPs where passed).
        ``self.last_verdicts`` keeps the raw verdicts (0 host, 1 passed, 2 + c a counted
        failure of rule c)."""
        from fuzzfarm.device.commands import buffer, copy, launch
        dev = self.runner
        c = self.columns
        xb, yb = _bits(xbits, c.x), _bits(ybits, c.y)
        n = int(xb.size)
        passed, err = np.zeros(n, np.uint8), np.zeros(n, np.float32)
        self.last_verdicts = passed
        if n == 0:
            return passed.astype(bool), err
        zb, wb, y2b = (xb if a is None else _bits(a, d)
                       for a, d in ((zbits, c.z), (wbits, c.w), (y2bits, c.y2)))
        bufs = [buffer(dev, host=a, read_only=True) for a in (xb, yb, zb, wb, y2b)]
        pbuf, ebuf = buffer(dev, passed.nbytes), buffer(dev, err.nbytes)
        k = self._test_kernels["screen_pairs"]
        k.set_args(bufs[0], bufs[1], pbuf, ebuf, *bufs[2:])
        ev = launch(dev, k, n)
        copy(dev, passed, pbuf, wait_for=[ev], blocking=True)
        copy(dev, err, ebuf, blocking=True)
        self.last_verdicts = passed
        return passed == 1, err


class _Scratch:
    """Device buffers a screen's launch writes and copies out at once: the answer
    (passed, wmax, wpos, agg and the two rule-bit words, for ``chunk`` inputs) and the
    gathering's (``marks``: the header, the word offsets and group totals, and the
    gathered columns, GATHER_FRACTION of ``chunk`` rows of ``itemsize`` bytes each).
    Shared by the screens of one runner, chunk and pattern width (``_scratch``): their
    launches go to the runner's one in-order queue, each copying the answer and the
    gathered rows home before the next launch writes them (as the conversion screen's
    answer buffers are shared), so a catalogue of screens holds one set, not one each."""

    def __init__(self, runner, chunk: int, itemsize: int):
        from fuzzfarm.device.commands import buffer
        # a weak reference: _SCRATCH's key, which a strong one would keep alive for ever
        # (a runner dropped after an enqueue error must free its context's memory)
        self._runner = weakref.ref(runner)
        self.chunk, self.itemsize = int(chunk), int(itemsize)
        w = self.words = words_for(self.chunk)
        self.passed = buffer(runner, w * 4)
        self.wmax = buffer(runner, w * 4)
        self.wpos = buffer(runner, w)
        self.agg = buffer(runner, w * 4)
        self.agg_c = [buffer(runner, w * 4) for _ in range(2)]
        self._marks: dict | None = None

    def marks(self, extra: int) -> dict:
        """The gathering's buffers ({"hdr", "woff", "gtot", "gx", "gy", "extra"}), with
        at least ``extra`` further gathered columns."""
        from fuzzfarm.device.commands import buffer
        r, w = self._runner(), self.words
        size = max(1, int(self.chunk * GATHER_FRACTION)) * self.itemsize
        if self._marks is None:
            self._marks = {"hdr": buffer(r, 8), "woff": buffer(r, w * 4),
                           "gtot": buffer(r, max(1, w // LOCAL) * 4),
                           "gx": buffer(r, size), "gy": buffer(r, size), "extra": []}
        while len(self._marks["extra"]) < extra:
            self._marks["extra"].append(buffer(r, size))
        return self._marks


#: Each runner's shared _Scratch by (chunk, pattern bytes).
_SCRATCH: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _scratch(runner, chunk: int, itemsize: int) -> _Scratch:
    """The runner's shared _Scratch for screens of ``chunk`` inputs of ``itemsize``-byte
    patterns (made at first use)."""
    mine = _SCRATCH.setdefault(runner, {})
    key = (int(chunk), int(itemsize))
    if key not in mine:
        mine[key] = _Scratch(runner, chunk, itemsize)
    return mine[key]


#: The most of a drawn unit's inputs a Landing takes back gathered (``enqueue_marked``);
#: a unit with more marked inputs is read whole.  The verdict of a ``run`` unit reads 7-49%
#: of its inputs (PyPI PoCL, 2**21-input units of sin, exp, sinpi, tanpi and log).
GATHER_FRACTION = 0.5


class Landing:
    """Host memory for one drawn unit's screen answer and gathered rows, pinned where the
    driver allows it (device.runner.DeviceRunner.host_array), sized for its screen's
    chunk and ``columns`` (besides y: the arguments and a second output, 1 to 4) and reused
    (``DeviceScreen.landing``, ``release``).
    After ``use(count)``: ``answer`` (ScreenChunk views for ``count`` inputs), ``hdr``
    uint32 (2,): the marked inputs' count and the position of the passed input of the
    largest error (0xffffffff: none), ``x``, ``y`` and ``more`` (one per further column)
    (count * GATHER_FRACTION,) of the screen's ``pattern`` dtype (uint32, or uint64 for
    binary64): the gathered first argument, result and further columns (the later
    arguments, then a second output).  The answer's
    ``agg_c0``, ``agg_c1`` are stale where the screen does not aggregate (the device does
    not write them; work.session.DeviceSession.land sends them empty)."""

    def __init__(self, screen: DeviceScreen, columns: int = 1):
        self.screen = screen
        self.columns = int(columns)
        self.answer_bytes = -(-ScreenChunk.nbytes(screen.chunk) // 8) * 8
        self.pattern = screen.pattern
        gcap = max(1, int(screen.chunk * GATHER_FRACTION))
        self._buf, self._mem = screen.runner.host_array(
            self.answer_bytes + 8 + (1 + self.columns) * self.pattern.itemsize * gcap)

    def use(self, count: int) -> None:
        """Lay the memory out for a unit of ``count`` inputs."""
        a, g = self.answer_bytes, max(1, int(count * GATHER_FRACTION))
        size = self.pattern.itemsize
        self.count = int(count)
        self.answer = ScreenChunk.views(self._buf, 0, count)
        self.hdr = np.frombuffer(self._buf, np.uint32, 2, a)
        self.x, self.y, *self.more = (
            np.frombuffer(self._buf, self.pattern, g, a + 8 + size * g * k)
            for k in range(1 + self.columns))

    def marked(self) -> tuple[int, int, tuple | None, np.ndarray | None]:
        """(marked inputs, top position or -1, their columns (a tuple: x, then the further
        ones), their y) once the copies are done; the arrays are None where the marked
        inputs did not fit (then read every row).  The arrays are views of this landing:
        copy them before ``release``."""
        total, top = int(self.hdr[0]), int(self.hdr[1])
        top = -1 if top == 0xFFFFFFFF else top
        if total > self.x.size:
            return total, top, None, None
        return total, top, tuple(a[:total] for a in (self.x, *self.more)), self.y[:total]

    def release(self) -> None:
        """Give the memory back for the next unit of any screen of the runner and chunk (at
        most 2 are kept: a device actor has at most 2 units on the device; a landing per
        screen had cost 12 ms each of some 150 targets' first units on NVIDIA's H100)."""
        if self.screen is None:     # released already
            return
        idle = _idle_landings(self.screen, self.columns)
        self.screen = None          # (set again at reuse) not keeping its runner alive
        if len(idle) < 2:
            idle.append(self)


#: Idle Landings by runner and chunk (``DeviceScreen.landing``, ``Landing.release``).
_LANDINGS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _idle_landings(screen: DeviceScreen, columns: int) -> list:
    """The idle Landings that fit ``screen`` (its runner's, for its chunk and patterns)
    and ``columns`` gathered columns besides y."""
    return _LANDINGS.setdefault(screen.runner, {}).setdefault(
        (screen.chunk, screen.pattern.itemsize, columns), [])
