"""OpenCL commands for the layers above the device: buffers, kernels, launches, copies.

The device layer is the only one that imports pyopencl; code above it that enqueues its own
kernels (the oracle's device screen, ``fuzzfarm.oracle.device_screen``) does it through these
functions, on a ``fuzzfarm.device.runner.DeviceRunner``'s context and in-order queue.  Buffers,
kernels and events are pyopencl's objects, passed back in as they came out (a kernel's
``set_args`` is called on it directly).  Every OpenCL error a driver returns is a
``pyopencl.Error`` (``OpenCLError`` here), which ``fault_reason`` sorts into a device fault.
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.device.runner import KernelBuildError, cl_error_code

import pyopencl as cl  # noqa: E402  (after runner: the ICDs are registered)

__all__ = ["OpenCLError", "buffer", "kernels", "launch", "copy", "fill", "fault_reason",
           "planted_enqueue_error", "work_group_limit"]

#: The error an OpenCL call of a driver raises (CL_* codes: ``cl_error_code``).
OpenCLError = cl.Error


def buffer(runner, nbytes: int = 0, host: np.ndarray | None = None, read_only: bool = False):
    """A device buffer of ``nbytes`` on ``runner``'s context, or one holding a copy of the
    host array ``host`` (read only for kernels with ``read_only``)."""
    mf = cl.mem_flags
    if host is not None:
        flags = (mf.READ_ONLY if read_only else mf.READ_WRITE) | mf.COPY_HOST_PTR
        return cl.Buffer(runner.context, flags, hostbuf=np.ascontiguousarray(host))
    return cl.Buffer(runner.context, mf.READ_ONLY if read_only else mf.READ_WRITE,
                     max(1, int(nbytes)))


def kernels(runner, program, names, what: str, source: str = "") -> dict:
    """{name: kernel} of the built ``program`` (runner.build's).  Raises KernelBuildError
    (a finding about the device) where the driver built the program but cannot make one
    of its kernels (seen on Oclgrind: ``llvm.fshl.i32``)."""
    try:
        return {n: cl.Kernel(program, n) for n in names}
    except cl.Error as exc:
        code, code_name = cl_error_code(exc)
        raise KernelBuildError(
            f"{what} built on {runner.info.label} [{runner.info.fingerprint}], but its "
            f"kernels could not be created: {exc}", source=source, log=str(exc), code=code,
            code_name=code_name, kernels=list(names)) from None


def work_group_limit(runner, kernel) -> int:
    """The most work items ``kernel`` runs in one group on ``runner``'s device (1 where the
    driver does not say)."""
    try:
        return int(kernel.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE,
                                              runner.device))
    except cl.Error:
        return 1


def launch(runner, kernel, global_size: int, local_size: int | None = None, wait_for=None):
    """Enqueue ``kernel`` (its arguments set) over ``global_size`` work items in groups of
    ``local_size`` (None: the driver's choice); returns its event."""
    return cl.enqueue_nd_range_kernel(runner.queue, kernel, (int(global_size),),
                                      None if local_size is None else (int(local_size),),
                                      wait_for=wait_for)


def copy(runner, dst, src, byte_count: int | None = None, src_offset: int = 0,
         dst_offset: int = 0, wait_for=None, blocking: bool = False):
    """Enqueue a copy from ``src`` to ``dst`` (device buffers or host arrays; offsets and
    ``byte_count`` in bytes, for buffer-to-buffer copies); returns its event."""
    kw = {}
    if byte_count is not None:
        kw["byte_count"] = int(byte_count)
    if src_offset:
        kw["src_offset"] = int(src_offset)
    if dst_offset:
        kw["dst_offset"] = int(dst_offset)
    both = not isinstance(dst, np.ndarray) and not isinstance(src, np.ndarray)
    if not both:
        kw["is_blocking"] = blocking
    ev = cl.enqueue_copy(runner.queue, dst, src, wait_for=wait_for, **kw)
    if both and blocking:
        ev.wait()
    return ev


def fill(runner, buf, pattern: np.ndarray, offset: int, size: int, wait_for=None):
    """Enqueue a fill of ``size`` bytes of ``buf`` from byte ``offset`` with ``pattern``;
    returns its event."""
    return cl.enqueue_fill_buffer(runner.queue, buf, pattern, int(offset), int(size),
                                  wait_for=wait_for)


def fault_reason(exc: BaseException) -> str | None:
    """The device-fault kind of an exception raised running a unit: 'build_failure' (a
    KernelBuildError), 'enqueue_error' (an OpenCL error from the driver), or None for
    anything else (a bug of fuzzfarm: not the device's)."""
    if isinstance(exc, KernelBuildError):
        return "build_failure"
    if isinstance(exc, cl.Error):
        return "enqueue_error"
    return None


def planted_enqueue_error(runner) -> None:
    """A real enqueue error from the driver (tests: runner.FAULTS_ENV "enqueue"): a kernel
    launched with its argument unset (CL_INVALID_KERNEL_ARGS).  Raises pyopencl.Error."""
    prg = cl.Program(runner.context, "__kernel void planted(__global int *a) { a[0] = 1; }")
    cl.enqueue_nd_range_kernel(runner.queue, cl.Kernel(prg.build(), "planted"), (1,), None)
