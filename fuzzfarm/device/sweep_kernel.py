"""A range unit's device side: the sweep kernel (inputs made from the global id, no input
buffer) and, where the range is screened on the device, the screen of its results (an
oracle.device_screen.DeviceScreen, passed in: its ``enqueue``, ``twin`` and
``clean_candidates``).

Two *lanes* of device buffers let one chunk run on the device while the host reads the
answer of the one before (``launch`` then ``land``).  Alone they bought nothing measurable
on the GPU machine (a 2^24-input chunk's ~4.8 ms were mostly copies into pageable memory,
not the host's enqueues); what cut the per-chunk time was copying into pinned memory
(``HostSlot``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from fuzzfarm.device.kernels import buffer_dtype

__all__ = ["SweepKernel", "Launch", "HostSlot", "run_chunk_on"]

#: Chunks a SweepKernel can have on the device at once (its sets of device buffers).
LANES = 2

#: A slot's outputs' region is pinned (HostSlot.outputs_region) for a copy of every
#: result of at least this many inputs; smaller ones (the 2^20-input units of rare
#: classes) are copied into pageable memory, cheaper than pinning 64 MiB (~20 ms).
PIN_MIN = 1 << 22


@dataclass
class Launch:
    """One chunk enqueued by ``SweepKernel.launch``: inputs ``start .. start+count-1`` on
    ``lane``, its results due in ``views`` and the screen's answer in ``answer`` (through
    ``host``, a HostSlot, where given); ``event`` the last enqueued command; ``seconds``
    the host time spent on it so far."""

    start: int
    count: int
    lane: int
    views: dict
    screen: object
    answer: object
    event: object
    seconds: float
    host: object = None


class _HostRegion:
    """``nbytes`` of host memory ``mem`` (a writable buffer) from byte ``offset``, seen by
    the device as one OpenCL buffer over it (CL_MEM_USE_HOST_PTR).  The device writes it
    unmapped (``for_device``); the host reads it mapped (``for_host``), as OpenCL has it."""

    def __init__(self, runner, mem, offset: int, nbytes: int):
        import pyopencl as cl
        self.queue = runner.queue
        self.array = np.frombuffer(mem, np.uint8, nbytes, offset)
        self.buffer = cl.Buffer(runner.context,
                                cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR,
                                hostbuf=self.array)
        self._mapped = None

    def for_device(self) -> None:
        if self._mapped is not None:
            self._mapped.base.release(queue=self.queue)
            self._mapped = None

    def for_host(self) -> None:
        import pyopencl as cl
        if self._mapped is None:
            self._mapped, ev = cl.enqueue_map_buffer(self.queue, self.buffer,
                                                     cl.map_flags.READ, 0,
                                                     self.array.shape, np.uint8)
            ev.wait()


class HostSlot:
    """A sweep slot (``mem``: the shared memory its checking process reads, outputs from
    byte 0, the screen's answer from byte ``out_bytes``) as OpenCL buffers over that
    memory: the device copies into it at pinned-memory speed where the driver pins it
    (NVIDIA: a chunk's 64 MiB of results in 1.4 ms, against 7-8 ms into pageable memory;
    the 11 MB answer in 0.5 ms against 1.5-2.1 ms; H200, 2026-11-26).  Pinning costs too
    (~20 ms for a 64 MiB region), so with a screen the outputs' region is made at the
    first chunk of at least PIN_MIN inputs the screen did not pass whole
    (``outputs_region``): a clean chunk's few results, or a small unit's, are copied
    into pageable memory.  Raises pyopencl.Error where the driver
    refuses the first region (the sweep then copies as before)."""

    def __init__(self, runner, mem, out_bytes: int, answer_bytes: int):
        self._make = lambda: _HostRegion(runner, mem, 0, out_bytes)
        self.answer = _HostRegion(runner, mem, out_bytes, answer_bytes) \
            if answer_bytes else None
        self.outputs = None if answer_bytes else self._make()

    def outputs_region(self) -> "_HostRegion | None":
        """The outputs' region, made now where it was not; None where the driver refused
        it (then copied into pageable memory)."""
        import pyopencl as cl
        if self.outputs is None and self._make is not None:
            try:
                self.outputs = self._make()
            except cl.Error:
                self._make = None
        return self.outputs

    def regions(self) -> list:
        return [r for r in (self.outputs, self.answer) if r is not None]


class SweepKernel:
    """The sweep kernel of ``space`` (strategies.Space) built on ``runner`` (a
    device.DeviceRunner) from OpenCL C source or, with ``front_end`` 'spirv', from a SPIR-V
    module (device.spirv.sweep_module), with ``LANES`` sets of device output buffers for
    ``chunk`` inputs each.  Raises device.KernelBuildError."""

    def __init__(self, runner, space, chunk: int, front_end: str = "opencl-c"):
        import pyopencl as cl

        from fuzzfarm.device import spirv
        from fuzzfarm.device.kernels import sweep_kernel_name, sweep_source
        self.runner, self.space = runner, space
        self.capacity, self.lanes_count = int(chunk), LANES
        name = sweep_kernel_name(space.fn)
        text = spirv.sweep_module(space.fn, space.fmt) if front_end == "spirv" else \
            sweep_source(space.fn, space.fmt)
        program = runner.build(text, f"{name} ({space.fmt.name}, {front_end})")
        self.kernel = cl.Kernel(program, name)
        self.lanes = [[cl.Buffer(runner.context, cl.mem_flags.READ_WRITE,
                                 chunk * buffer_dtype(o, space.fmt).itemsize)
                       for o in space.fn.outputs] for _ in range(LANES)]
        self.planted = _planted_results(space)
        self._screens: dict = {}        # id(screen) -> its twins, one per lane

    @property
    def buffers(self) -> list:
        """The first lane's device output buffers (one per output)."""
        return self.lanes[0]

    @property
    def buffers_dtype(self) -> np.dtype:
        return buffer_dtype(self.space.fn.outputs[0], self.space.fmt)

    def _screen_on(self, screen, lane: int):
        """``screen`` (an oracle.device_screen.DeviceScreen) for ``lane``: itself on lane 0,
        a twin of it (its own device buffers) on the others."""
        if lane == 0:
            return screen
        twins = self._screens.setdefault(id(screen), (screen, {}))[1]
        if lane not in twins:
            twins[lane] = screen.twin()
        return twins[lane]

    def launch(self, start: int, count: int, views: dict, screen=None, answer=None,
               lane: int = 0, host: HostSlot | None = None) -> Launch:
        """Enqueue inputs ``start .. start+count-1`` on ``lane`` (0 .. LANES-1, a lane
        whose earlier launch has landed) and, with ``screen``, their screen into
        ``answer`` (a ScreenChunk); returns at once.  ``land`` it before ``views`` are
        read.  ``host``: the HostSlot over the memory of ``views`` and ``answer``, to copy
        through.  Raises pyopencl.Error where the driver refuses."""
        import pyopencl as cl
        t0 = time.perf_counter()
        q, bufs = self.runner.queue, self.lanes[lane]
        for region in host.regions() if host else ():
            region.for_device()
        self.kernel.set_args(*bufs, np.uint64(start))
        ev = cl.enqueue_nd_range_kernel(q, self.kernel, (count,), None)
        for g, y in self.planted:           # tests: wrong results planted after the kernel
            if start <= g < start + count:
                ev = cl.enqueue_copy(q, bufs[0], np.asarray([y], self.buffers_dtype),
                                     dst_offset=(g - start) * self.buffers_dtype.itemsize,
                                     wait_for=[ev])
        if screen is not None:
            ev = self._screen_on(screen, lane).enqueue(
                bufs[0], start, count, answer, wait_for=[ev], blocking=False,
                into=None if host is None else (host.answer.buffer, 0))
        else:
            ev = self._copy_all(bufs, count, views, host and host.outputs, ev)
        return Launch(start, count, lane, views, screen, answer, ev,
                      time.perf_counter() - t0, host)

    def _copy_all(self, bufs, count: int, views: dict, region, ev):
        """Enqueue copies of every result (``count`` of each output) into ``views`` (or
        ``region``, a _HostRegion over them) after event ``ev`` (or None); returns the
        last one's event."""
        import pyopencl as cl
        q, offset = self.runner.queue, 0
        for o, buf in zip(self.space.fn.outputs, bufs):
            after = None if ev is None else [ev]
            if region is None:
                ev = cl.enqueue_copy(q, views[o.name], buf, wait_for=after, is_blocking=False)
            else:
                n = count * buffer_dtype(o, self.space.fmt).itemsize
                ev = cl.enqueue_copy(q, region.buffer, buf, byte_count=n,
                                     dst_offset=offset, wait_for=after)
                offset += n
        return ev

    def land(self, run: Launch) -> float:
        """Wait for ``run`` (a ``launch``'s) and copy what the host reads of its results
        into its views: with a screen whose answer passed the whole chunk, only the
        candidates (``clean_candidates``), else every result.  Returns the seconds spent
        on the chunk (enqueues, waits and copies).  Raises pyopencl.Error."""
        import pyopencl as cl
        t0 = time.perf_counter()
        q, bufs, host = self.runner.queue, self.lanes[run.lane], run.host
        run.event.wait()
        if run.screen is not None:
            if host is not None:
                host.answer.for_host()
            pos = run.screen.clean_candidates(run.answer, run.count)
            if host is None:
                into = None
            elif pos is None and run.count >= PIN_MIN:      # every result, many: pinned
                into = host.outputs_region()
            else:                   # through the region only where the slot has one
                into = host.outputs
            if pos is not None:         # the host reads only these results: copy them
                (o,) = self.space.fn.outputs
                isz = self.buffers_dtype.itemsize
                for p in pos:
                    if into is None:
                        cl.enqueue_copy(q, run.views[o.name][p:p + 1], bufs[0],
                                        src_offset=int(p) * isz, is_blocking=False)
                    else:
                        cl.enqueue_copy(q, into.buffer, bufs[0], byte_count=isz,
                                        src_offset=int(p) * isz, dst_offset=int(p) * isz)
            else:
                self._copy_all(bufs, run.count, run.views, into, None)
            q.finish()
        else:
            into = None if host is None else host.outputs
        if into is not None:
            into.for_host()
        return run.seconds + time.perf_counter() - t0

    def run_into(self, start: int, count: int, views: dict, screen=None,
                 answer=None) -> float:
        """Compute inputs ``start .. start+count-1`` into ``views`` ({output name: host
        array (count,)}) and, with ``screen`` (an oracle.device_screen.DeviceScreen),
        screen them on the device into ``answer`` (a ScreenChunk); returns the seconds
        spent (kernels and copies).  One chunk at a time: ``launch`` and ``land``."""
        return self.land(self.launch(start, count, views, screen, answer))


def _planted_results(space) -> list:
    """Tests: the wrong results planted for ``space`` by runner.FAULTS_ENV's "results"
    entry ([[built-in, input pattern, result pattern], ...], patterns as integers or hex
    strings): [(input number, result pattern)] for a single-argument space."""
    from fuzzfarm.device.runner import planted_faults
    out = []
    if len(space.fn.inputs) != 1:
        return out
    for name, x, y in planted_faults().get("results", ()):
        if name != space.fn.name:
            continue
        x, y = (int(v, 16) if isinstance(v, str) else int(v) for v in (x, y))
        sign = x >> (space.fmt.bits - 1)
        out.append((2 * (x & space.fmt.abs_mask) + sign, y))
    return out


def run_chunk_on(runner, space, start: int, count: int,
                 front_end: str = "opencl-c") -> dict[str, np.ndarray]:
    """Inputs ``start .. start+count-1`` of ``space`` through the sweep kernel (of
    ``front_end``) on ``runner``: {output name: array (count,)} (for tests and `repro`)."""
    k = SweepKernel(runner, space, count, front_end)
    views = {o.name: np.empty(count, buffer_dtype(o, space.fmt)) for o in space.fn.outputs}
    k.run_into(start, count, views)
    return views
