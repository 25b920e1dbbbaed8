"""Staging for DeviceRunner's launches: a slot of device buffers and host staging arrays
for one buffer layout (``Slot``), reused from launch to launch, and a launch in flight
(``PendingRun``), whose ``wait()`` brings its outputs to the host and hands the slot
back to its runner (``DeviceRunner._release``)."""
from __future__ import annotations

import time

import numpy as np

from fuzzfarm.device import discovery  # noqa: F401  (registers the ICDs before pyopencl)

import pyopencl as cl  # noqa: E402

__all__ = ["Slot", "PendingRun", "MIN_SLOT_ELEMENTS"]

#: Staging slots are allocated for a power-of-two number of elements, at least this many,
#: so batches of similar sizes share them.
MIN_SLOT_ELEMENTS = 1 << 12


class Slot:
    """Device buffers and host staging arrays for one buffer layout (input and output
    dtypes) and capacity; the host arrays are pinned (mapped CL_MEM_ALLOC_HOST_PTR
    buffers) when the runner's ``pinned`` is set and the driver allows it, else plain
    numpy arrays."""

    def __init__(self, runner, in_dtypes: tuple, out_dtypes: tuple, cap: int):
        self.in_dtypes, self.out_dtypes, self.cap = in_dtypes, out_dtypes, cap
        self._mem = []                    # every cl.Buffer, released together
        ctx, mf = runner.context, cl.mem_flags
        try:
            self.dev_in = [self._buffer(ctx, mf.READ_ONLY, cap * np.dtype(d).itemsize)
                           for d in in_dtypes]
            self.dev_out = [self._buffer(ctx, mf.WRITE_ONLY, cap * np.dtype(d).itemsize)
                            for d in out_dtypes]
            self.pinned = runner.pinned
        except BaseException:
            self.release()
            raise
        self._runner = runner
        self._host_in = self._host_out = None

    # the staging memory is made at first use: a launch of inputs made on the device
    # stages nothing (its rows come back gathered, or into plain memory)
    @property
    def host_in(self) -> list:
        if self._host_in is None:
            self._host_in = [self._host(self._runner, d) for d in self.in_dtypes]
        return self._host_in

    @property
    def host_out(self) -> list:
        if self._host_out is None:
            self._host_out = [self._host(self._runner, d) for d in self.out_dtypes]
        return self._host_out

    def _buffer(self, ctx, flags, nbytes):
        buf = cl.Buffer(ctx, flags, size=max(1, nbytes))
        self._mem.append(buf)
        return buf

    def _host(self, runner, dtype) -> np.ndarray:
        if self.pinned:
            arr, buf = runner.host_array(self.cap * np.dtype(dtype).itemsize)
            if buf is not None:
                self._mem.append(buf)
                return arr.view(dtype)
            self.pinned = False           # the driver refuses: plain host memory
        return np.empty(self.cap, dtype=dtype)

    def plain(self, dtypes: tuple, side: str) -> list:
        """Plain (unmapped) host arrays of the slot's capacity, one per dtype, made at first
        use and kept with the slot."""
        key = "_plain_" + side
        if getattr(self, key, None) is None:
            setattr(self, key, [np.empty(self.cap, dtype=d) for d in dtypes])
        return getattr(self, key)

    @property
    def nbytes(self) -> int:
        """Device and host memory the slot holds (bytes; host staging counted once made)."""
        per = sum(np.dtype(d).itemsize for d in self.in_dtypes + self.out_dtypes)
        return self.cap * per * (1 + (self._host_in is not None or self._host_out is not None))

    def fits(self, in_dtypes: tuple, out_dtypes: tuple, elements: int) -> bool:
        return (in_dtypes == self.in_dtypes and out_dtypes == self.out_dtypes
                and elements <= self.cap and (elements * 4 > self.cap
                                              or self.cap == MIN_SLOT_ELEMENTS))

    def release(self) -> None:
        self._host_in = self._host_out = []     # drop the mappings first
        for b in getattr(self, "_mem", []):
            try:
                b.release()
            except cl.Error:
                pass
        self._mem = []


class PendingRun:
    """A launch in flight on a DeviceRunner's queue (see ``DeviceRunner.submit``).

    ``wait()`` blocks until its results are on the host and returns them: a dict of
    output arrays by name (``submit``) or a list (``submit_source``), fresh arrays the
    caller owns.  ``device_seconds`` is the device's time for the launch (copies and
    kernel, from OpenCL profiling events; the wall time from submission to completion
    where the queue has no profiling), known after ``wait()``.
    """

    def __init__(self, runner, slot: Slot, events: list, names: list,
                 lengths: list, t0: float, as_list: bool, host_out: list | None = None):
        self._runner, self._slot, self._events = runner, slot, events
        self._host_out = slot.host_out if host_out is None else host_out
        self._names, self._lengths, self._t0, self._as_list = names, lengths, t0, as_list
        self._result = None
        self.device_seconds = float("nan")
        #: inputs made on the device (``submit_made``), as ``wait(copy=False)``'s views
        self.made_inputs = None
        self._unread = None          # what ``read_made`` reads (copy_back=False)
        self._released_at = -1       # the runner's launches when this one was waited for

    @property
    def done(self) -> bool:
        return self._result is not None

    def wait(self, copy: bool = True):
        """The outputs (blocking until they are on the host).  With ``copy=False`` they
        are views of the runner's staging buffers, valid only until the runner's next
        ``submit``: for a caller that copies them on at once (into Ray's object store)."""
        if self._result is not None:
            return self._result
        try:
            cl.wait_for_events(self._events[-1:] or [])
            if self._events and not self._events[-1:]:
                self._runner.queue.finish()
            wall = time.perf_counter() - self._t0
            self.device_seconds = wall
            if self._runner._profiling and self._events:
                try:
                    start = self._events[0].profile.start
                    end = self._events[-1].profile.end
                    if end >= start > 0:
                        self.device_seconds = (end - start) * 1e-9
                except cl.Error:
                    pass
            outs = [self._host_out[k][:m] for k, m in enumerate(self._lengths)]
            if copy:
                outs = [o.copy() for o in outs]
        except BaseException:
            self._slot.release()
            self._slot = None
            raise
        self._runner._release(self._slot)
        self._released_at = self._runner.launches
        self._slot = None
        self._events = []
        self._result = outs if self._as_list else dict(zip(self._names, outs))
        return self._result

    def read_made(self) -> dict:
        """For a finished ``submit_made(..., copy_back=False)``: copy the inputs the device
        made and its outputs into plain host memory (blocking; behind whatever is queued
        after this launch), set ``made_inputs`` and return the outputs by name, views as
        ``wait(copy=False)``'s.  Only after ``wait()`` and before the runner's next
        submit, which may reuse the launch's buffers: RuntimeError otherwise."""
        slot, n, padded, items, names, lengths, outs, host_out = self._unread
        if self._result is None or self._runner.launches != self._released_at:
            raise RuntimeError("read_made: only after wait() and before the next submit")
        q = self._runner.queue
        made = slot.plain(slot.in_dtypes, "in")
        for host, dev in zip(made, slot.dev_in):
            cl.enqueue_copy(q, host[:padded], dev, is_blocking=True)
        for (_, _, scalar), host, dev in zip(outs, host_out, slot.dev_out):
            cl.enqueue_copy(q, host[:items if scalar else padded], dev, is_blocking=True)
        self.made_inputs = [h[:n] for h in made]
        return dict(zip(names, (h[:m] for h, m in zip(host_out, lengths))))

    def __del__(self):
        # an abandoned launch: its slot must not be reused while the device may write it
        slot = getattr(self, "_slot", None)
        if slot is not None:
            try:
                cl.wait_for_events(self._events[-1:])
            except Exception:
                pass
