"""Running built-in kernels on an OpenCL device (``discovery`` finds the devices).

The device layer (this module, ``discovery``, ``commands``, ``generate``,
``sweep_kernel``) is the only one that imports pyopencl (docs/design.md, decision 9), so the
catalogue, formats and verdict logic load without an OpenCL installation.

``DeviceRunner(info)`` (``info`` a ``discovery.DeviceInfo``) owns one context, one
in-order queue and the compiled programs for one device (docs/design.md, decision 7) and
runs a built-in over arrays of bit patterns: ``run`` waits for the result; ``submit`` only
enqueues (host-to-device copy, kernel, device-to-host copy, none blocking) and returns a
``PendingRun`` to ``wait()`` on, so a caller can prepare the next batch, or hand the
previous one on, while the device works.  Buffers are reused between launches (two or
more staging slots per buffer layout: double buffering), and the host side of every copy
is pinned memory (``CL_MEM_ALLOC_HOST_PTR`` buffers mapped once), which a GPU driver can
DMA directly.

A runner is not thread-safe (kernel arguments are set on shared kernel objects); use one
per thread or actor.
"""
from __future__ import annotations

import hashlib
import os
import re
import threading
import time
import warnings
from collections import OrderedDict
from typing import Iterable

import numpy as np

from fuzzfarm.device.discovery import DeviceInfo, open_device  # registers the ICDs first
from fuzzfarm.errors import DeviceFault

import pyopencl as cl  # noqa: E402  (after discovery: the ICDs are registered)

from edgecases.catalogue import Function  # noqa: E402
from edgecases.modality import check_front_end  # noqa: E402
from fuzzfarm.device import spirv  # noqa: E402
from fuzzfarm.device.staging import MIN_SLOT_ELEMENTS, PendingRun, Slot  # noqa: E402
from fuzzfarm.formats import BINARY32, BINARY64, FloatFormat  # noqa: E402
from fuzzfarm.device.kernels import (  # noqa: E402
    CONSTANTS_KERNEL, buffer_dtype, constants_source, kernel_name, kernel_source,
    literal_kernel_name, literal_source, program_source,
)

__all__ = ["KernelBuildError", "DeviceRunner", "PendingRun", "LiteralRun", "planted_faults",
           "enqueue_error_detail", "cl_error_code", "LITERALS_PER_PROGRAM"]

#: The work-group size the runner launches with (or the largest power of two the kernel
#: allows, if smaller).  The runner pads the element count to a multiple of it (times the
#: vector width) with all-zero bits: a fixed local size means PoCL, which generates code
#: per kernel *and local size* at the first launch, compiles each kernel once, and a prime
#: element count never forces a local size of 1.
LOCAL_SIZE = 64

#: Lines of a build log quoted in a KernelBuildError message.
BUILD_LOG_LINES = 20

#: Built programs a runner keeps for the same text and options (``DeviceRunner.build``):
#: a resident process's sweeps of one function after another find theirs again.
PROGRAMS_KEPT = 512

#: Idle staging slots kept for reuse (per runner), at most this many and
#: ``idle_bytes_limit`` bytes of device and host memory in all; the least recently used
#: beyond are released.  A whole catalogue's targets stage in some fifty buffer layouts:
#: six slots made a new one (its pinned host memory mapped, 3 ms) for one launch in two
#: on NVIDIA's H100 (2026-11-27); with 3 GiB, a whole-catalogue run on an H200 still
#: released 1,609 slots and mapped 1,049 pinned arrays (6 ms each) in 120 s (2026-11-28).
MAX_IDLE_SLOTS = 256
#: ... at least MAX_IDLE_BYTES, an eighth of the device's global memory up to
#: IDLE_BYTES_CAP where it has more.
MAX_IDLE_BYTES = 3 << 30
IDLE_BYTES_CAP = 16 << 30


def idle_bytes_limit(global_mem_bytes: int) -> int:
    """The idle staging memory a runner keeps (bytes) on a device of ``global_mem_bytes``
    of global memory: an eighth of it, within [MAX_IDLE_BYTES, IDLE_BYTES_CAP]."""
    return int(min(IDLE_BYTES_CAP, max(MAX_IDLE_BYTES, int(global_mem_bytes) // 8)))

#: Test hook: JSON {"crash": [unit id substrings], "hang": [...], "enqueue": [...],
#: "build": [built-in names]}: a unit whose id contains one of them kills its actor
#: (SIGKILL, as a crashing driver would), never returns from the device, or gets an
#: OpenCL error from the driver (fuzzfarm.orchestrate.pipeline); a program calling a named built-in gets an
#: ``#error`` line, so the driver's compiler rejects it (``DeviceRunner.planted_build``).
#: Planted faults for the fault tests; never set in a real campaign.
FAULTS_ENV = "FUZZFARM_PLANT_FAULTS"


def planted_faults() -> dict:
    """The planted faults of ``FAULTS_ENV`` ({} when unset).  Raises ValueError when it is
    not a JSON object of lists."""
    import json
    text = os.environ.get(FAULTS_ENV, "").strip()
    if not text:
        return {}
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise ValueError(f"{FAULTS_ENV} must be a JSON object of lists")
    return data


class KernelBuildError(DeviceFault):
    """An OpenCL program failed to build.  The message names the device, the kernels and
    the build options and quotes the first lines of the build log; ``source``, ``log`` and
    ``options`` keep the whole of each (docs/design.md, decision 12), ``code`` the OpenCL error code
    (e.g. -11, CL_BUILD_PROGRAM_FAILURE; None when unknown) and ``code_name`` its name.
    ``kernels``: the kernel names the program defines.  ``failed``: where a program of
    several kernels failed, {function name: the KernelBuildError of building it alone}
    for each one that fails alone."""

    def __init__(self, message: str, source: str = "", log: str = "", options: str = "",
                 code: int | None = None, code_name: str = "", kernels=(),
                 failed: dict | None = None):
        super().__init__(message)
        self.source, self.log, self.options = source, log, options
        self.code, self.code_name = code, code_name
        self.kernels, self.failed = tuple(kernels), dict(failed or {})

    def detail(self) -> dict:
        """What a device-fault finding records of it (units.fault_rows ``detail``)."""
        return {"kernel_source": self.source, "build_log": self.log,
                "build_options": self.options, "error_code": self.code,
                "error_name": self.code_name,
                "kernel_name": ", ".join(self.kernels) if self.kernels else "",
                "error": str(self).splitlines()[0]}


def enqueue_error_detail(exc, kernel_source: str, build_options: str) -> dict:
    """What a device-fault finding records of an OpenCL error raised running a kernel
    (units.fault_rows ``detail``): the source and options, the error code and name, the
    call that failed and the error's first line."""
    code, name = cl_error_code(exc)
    return {"kernel_source": kernel_source, "build_options": build_options,
            "error_code": code, "error_name": name,
            "routine": str(getattr(exc, "routine", "") or ""),
            "error": f"{type(exc).__name__}: {exc}".splitlines()[0]}


def _drop_saved_source(exc) -> None:
    """pyopencl saves the source of a program that fails to build to a temporary file
    ("(source saved as /tmp/tmpXXXX.cl)") and never deletes it: on a driver that rejects
    kernels, a days-long run would fill /tmp.  The fault finding keeps the source; the
    file is deleted."""
    m = re.search(r"\(source saved as (\S+?\.cl)\)", str(exc))
    if m:
        try:
            os.unlink(m.group(1))
        except OSError:
            pass


def cl_error_code(exc) -> tuple[int | None, str]:
    """(OpenCL error code, its name) of a pyopencl error; (None, '') for anything else."""
    code = getattr(exc, "code", None)
    try:
        code = int(code) if code is not None else None
    except (TypeError, ValueError):
        code = None
    name = ""
    if code is not None:
        for attr in dir(cl.status_code):
            if not attr.startswith("_") and getattr(cl.status_code, attr) == code:
                name = "CL_" + attr
                break
    return code, name


def _check_available(fn: Function, fmt: FloatFormat, width: int) -> None:
    """Raise ValueError when built-in ``fn`` does not exist in ``fmt`` or at ``width``
    (functions.toml ``precisions`` / ``widths``: half_* and native_* are float only,
    geometric functions take vectors of 1 to 4 lanes, cross 3 or 4)."""
    if fmt.name not in fn.precisions:
        raise ValueError(f"{fn.name} does not exist in {fmt.name}; it exists in "
                         f"{', '.join(fn.precisions)}")
    if width not in fn.widths:
        raise ValueError(f"{fn.name} does not exist at vector width {width}; its widths are "
                         f"{', '.join(map(str, fn.widths))}")


#: Rows of literal inputs in one program (``DeviceRunner.run_literals``): each row is a
#: call the compiler inlines and folds, so a program's build time grows with its rows.
LITERALS_PER_PROGRAM = 64


class LiteralRun:
    """The finished ``DeviceRunner.run_literals``: ``wait()`` gives its outputs ({name:
    array}, as ``PendingRun.wait`` does), ``device_seconds`` its wall time, builds
    included."""

    def __init__(self, outputs: dict, seconds: float):
        self._outputs, self.device_seconds = outputs, seconds

    def wait(self, copy: bool = True) -> dict:
        return self._outputs


class DeviceRunner:
    """Runs built-ins on one device: one context, one in-order queue, compiled kernels
    cached per (function, format, width, build options).

    ``build_options`` go to every program build (e.g. '-cl-denorms-are-zero'; the relaxed
    table applies to '-cl-fast-relaxed-math').  ``pinned`` (default on) stages the copies
    in pinned host memory where the driver allows it (see ``submit``).  Raises
    DeviceSelectionError when the device of ``info`` is gone (or its driver changed: the
    fingerprint is checked).
    """

    def __init__(self, info: DeviceInfo, build_options: str = "", pinned: bool | None = None):
        self.info = info
        self.build_options = build_options
        self.device = open_device(info)
        self.context = cl.Context([self.device])
        try:    # profiling events give each launch's device time, overlap or not
            self.queue = cl.CommandQueue(
                self.context, self.device,
                properties=cl.command_queue_properties.PROFILING_ENABLE)
            self._profiling = True
        except cl.Error:
            self.queue = cl.CommandQueue(self.context, self.device)
            self._profiling = False
        #: Host side of the copies in pinned (mapped CL_MEM_ALLOC_HOST_PTR) memory, where
        #: the driver allows it: a GPU can DMA it directly; PoCL's copies from its
        #: page-aligned buffers measured twice as fast as from numpy arrays.
        self.pinned = True if pinned is None else bool(pinned)
        self._kernels: dict[tuple, object] = {}
        self._programs: OrderedDict = OrderedDict()     # (text hash, options, plants) -> Program
        self._programs_lock = threading.Lock()
        self._constants: dict[str, int] | None = None
        #: Built-in names whose programs get an ``#error`` line (tests plant build
        #: failures with it, FAULTS_ENV "build"); empty in normal use.
        self.planted_build: tuple = tuple(planted_faults().get("build", ()))
        self._idle: list[Slot] = []      # staging slots free for reuse, oldest first
        self._idle_bytes = 0              # their memory (``Slot.nbytes``)
        try:
            mem = int(self.device.global_mem_size)
        except (cl.Error, AttributeError, TypeError, ValueError):
            mem = 0
        self.max_idle_bytes = idle_bytes_limit(mem)     # of idle slots (``_release``)
        self.launches = 0                 # launches submitted: PendingRun.read_made checks
                                          # its slot was not handed to a later one

    # -- building ---------------------------------------------------------------------

    def _key(self, fn: Function, fmt: FloatFormat, width: int,
             front_end: str = "opencl-c") -> tuple:
        return (fn.name, fmt.name, width, self.build_options, front_end)

    def _check_format(self, fmt: FloatFormat) -> None:
        if not self.info.supports(fmt):
            ext = "cl_khr_fp64" if fmt.name == BINARY64.name else "cl_khr_fp16"
            raise ValueError(f"fmt={fmt.name} needs {ext}, which {self.info.label} lacks; "
                             f"use a device whose extensions include it")

    def build(self, source: str, what: str, options: str | None = None):
        """Compile ``source`` with this runner's build options (or ``options``): OpenCL C
        source, or a SPIR-V module's assembly text (``spirv.is_module``), which is
        assembled and given to the driver as IL (clCreateProgramWithIL).  Returns the
        pyopencl Program; ``what`` names it in errors.  Raises KernelBuildError with the
        build log on failure (``source`` the text given: a SPIR-V finding carries its
        module), SpirvToolMissing when a module cannot be assembled here.  The last
        PROGRAMS_KEPT programs built are kept and given again for the same text and
        options (a failure is never kept: it is built, and raised, again)."""
        build_options = self.build_options if options is None else options
        key = (hashlib.sha256(source.encode()).digest(), build_options, self.planted_build)
        with self._programs_lock:           # screens are built by several threads at once
            if key in self._programs:
                self._programs.move_to_end(key)
                return self._programs[key]
        program = self._build(source, what, build_options)
        with self._programs_lock:
            self._programs[key] = program
            if len(self._programs) > PROGRAMS_KEPT:
                self._programs.popitem(last=False)
        return program

    def _build(self, source: str, what: str, build_options: str):
        il = spirv.is_module(source)
        if il:
            kernels = re.findall(r'OpEntryPoint Kernel %\S+ "(\w+)"', source)
            binary = spirv.assemble(source)
            if any(f"k_{name}" in kernels for name in self.planted_build):
                binary = binary[:len(binary) // 2]    # a module the driver must refuse
            program = cl.Program(self.context, binary)
        else:
            if any(re.search(rf"\b{re.escape(name)}\s*\(", source)
                   for name in self.planted_build):
                source += '\n#error "fuzzfarm: planted build failure (tests)"\n'
            kernels = re.findall(r"__kernel\s+void\s+(\w+)", source)
            program = cl.Program(self.context, source)
        try:
            with warnings.catch_warnings():
                # pyopencl warns with the log of a successful build; it is noise here.
                warnings.simplefilter("ignore", cl.CompilerWarning)
                return program.build(options=build_options, devices=[self.device])
        except cl.Error as exc:
            _drop_saved_source(exc)
            try:
                with warnings.catch_warnings():   # "pre-build attribute access": harmless
                    warnings.simplefilter("ignore", UserWarning)
                    log = program.get_build_info(self.device, cl.program_build_info.LOG) or ""
            except cl.Error:
                log = ""
            log = log.strip() or str(exc)
            head = "\n".join(log.splitlines()[:BUILD_LOG_LINES])
            code, code_name = cl_error_code(exc)
            raise KernelBuildError(
                f"building {what} for {self.info.label} [{self.info.fingerprint}] with "
                f"build options {build_options!r} failed; build log (first "
                f"{BUILD_LOG_LINES} lines):\n{head}",
                source=source, log=log, options=build_options, code=code,
                code_name=code_name, kernels=kernels) from None

    def prepare(self, fns: Iterable[Function], fmt: FloatFormat = BINARY32,
                width: int = 1, front_end: str = "opencl-c") -> None:
        """Compile the kernels of ``fns`` not yet cached, all in one program: on PoCL
        3.0-rc2 a cold build of the whole catalogue (51 kernels) takes about 0.25 s, one
        program per kernel about 10 s.  (PoCL still generates each kernel's machine code
        at its first launch, about 50 ms a kernel when its cache is cold.)

        If the program fails to build, each function is built alone so that the good ones
        are still cached; then KernelBuildError names the failing ones.  Raises
        ValueError when the device lacks ``fmt`` or ``width`` is not a vector width.

        Vector widths: PoCL 3.0-rc2's compiler crashes the whole process (SIGSEGV or
        SIGABRT, uncatchable) on most built-ins at width 16; run wide kernels in a process
        you can lose.

        ``front_end`` 'spirv' builds the kernels from a SPIR-V module of the same kernels
        (fuzzfarm.device.spirv.program_module) instead of OpenCL C source.
        """
        self._check_format(fmt)
        check_front_end(front_end)
        fns = list(dict.fromkeys(fns))
        for f in fns:
            _check_available(f, fmt, width)
        todo = [f for f in fns if self._key(f, fmt, width, front_end) not in self._kernels]
        if not todo:
            return
        src = spirv.program_module(todo, fmt, width) if front_end == "spirv" else \
            program_source(todo, fmt, width)
        try:
            what = kernel_name(todo[0]) if len(todo) == 1 else f"{len(todo)} kernels"
            program = self.build(src, f"{what} ({fmt.name}, width {width})")
        except KernelBuildError as whole:
            if len(todo) == 1:
                raise
            failures = {}
            for f in todo:
                try:
                    self.prepare([f], fmt, width, front_end)
                except KernelBuildError as exc:
                    failures[f.name] = exc
            if failures:
                raise KernelBuildError(
                    f"{len(failures)} of {len(todo)} kernels failed to build:\n"
                    + "\n".join(str(e) for e in failures.values()),
                    source=src, log="\n".join(e.log for e in failures.values()),
                    options=self.build_options, code=whole.code, code_name=whole.code_name,
                    kernels=[k for e in failures.values() for k in e.kernels],
                    failed=failures) from None
            return
        for f in todo:
            try:
                kernel = cl.Kernel(program, kernel_name(f))
            except cl.Error as exc:
                # Seen on PoCL 3.0-rc2 after its compiler crashed the process mid-build: the
                # half-written cache entry then yields INVALID_KERNEL_NAME ever after.
                raise KernelBuildError(
                    f"the program built, but creating kernel {kernel_name(f)} on "
                    f"{self.info.label} [{self.info.fingerprint}] with build options "
                    f"{self.build_options!r} failed ({exc}); if this is PoCL, a cache entry "
                    f"left by a crashed compile can cause it: remove POCL_CACHE_DIR "
                    f"(default ~/.cache/pocl/kcache) and retry",
                    source=src, options=self.build_options) from None
            self._kernels[self._key(f, fmt, width, front_end)] = (kernel,
                                                                  self._local_size(kernel))

    def _local_size(self, kernel) -> int:
        """LOCAL_SIZE, or the largest power of two the kernel's work-group limit allows."""
        try:
            limit = int(kernel.get_work_group_info(
                cl.kernel_work_group_info.WORK_GROUP_SIZE, self.device))
        except cl.Error:
            limit = 1
        size = 1
        while size * 2 <= min(limit, LOCAL_SIZE):
            size *= 2
        return size

    def source(self, fn: Function, fmt: FloatFormat = BINARY32, width: int = 1) -> str:
        """The OpenCL C source of ``fn``'s kernel as this runner builds it: the
        self-contained ``kernel_source`` text (``prepare`` concatenates exactly these
        kernel bodies under one preamble).  Quote it, with ``build_options``, in a
        reproducer (a unit's program text in either front end: ``Kind.kernel_source``)."""
        return kernel_source(fn, fmt, width)

    def _kernel(self, fn: Function, fmt: FloatFormat, width: int,
                front_end: str = "opencl-c"):
        key = self._key(fn, fmt, width, front_end)
        if key not in self._kernels:
            self.prepare([fn], fmt, width, front_end)
        return self._kernels[key]

    # -- running ----------------------------------------------------------------------

    @staticmethod
    def _check_inputs(fn: Function, inputs: dict, fmt: FloatFormat, width: int) -> int:
        names = set(inputs)
        want = set(fn.arg_names)
        if names != want:
            raise ValueError(f"inputs for {fn.signature} have keys {sorted(names)}; "
                             f"give exactly {list(fn.arg_names)}")
        n = None
        for a in fn.inputs:
            arr = inputs[a.name]
            dtype = buffer_dtype(a, fmt)
            if not isinstance(arr, np.ndarray) or arr.ndim != 1:
                raise ValueError(f"inputs[{a.name!r}] must be a 1-D numpy array, "
                                 f"not {type(arr).__name__} of shape {np.shape(arr)}")
            if arr.dtype != dtype:
                hint = (f"pass {fmt.name} bit patterns, e.g. a.view(np.{dtype.name})"
                        if a.kind != "int" else "pass int32 values")
                raise ValueError(f"inputs[{a.name!r}].dtype={arr.dtype}; {a.name} is a "
                                 f"{ {'float': 'gentype', 'int': 'intn', 'uint': 'ugentype'}[a.kind]} "
                                 f"argument: {hint}")
            if n is None:
                n = len(arr)
            elif len(arr) != n:
                raise ValueError(f"inputs have different lengths "
                                 f"({ {k: len(v) for k, v in inputs.items()} }); "
                                 f"give arrays of one length")
        if not n:
            raise ValueError(f"inputs for {fn.name} are empty; give at least one element")
        if not fn.is_elementwise and n % width:
            raise ValueError(f"{fn.name} works on whole vectors: give a multiple of "
                             f"width={width} lanes, not {n}")
        return n

    def run(self, fn: Function, inputs: dict[str, np.ndarray], fmt: FloatFormat = BINARY32,
            width: int = 1, front_end: str = "opencl-c") -> dict[str, np.ndarray]:
        """Call built-in ``fn`` on the device, element by element (or vector by vector).

        ``inputs`` maps each name of ``fn.arg_names`` to a 1-D array, all of one length
        n >= 1 (lanes): ``fmt.uint`` bit patterns (uint32 for binary32) for a gentype or
        ugentype argument, int32 for an intn argument; for a geometric built-in n is a
        multiple of ``width`` and lanes [i*width, (i+1)*width) form vector i.  Returns a dict
        with one array per name of ``fn.outputs`` ('ret' first): ``fmt.uint`` bits for a
        float output, int32 for an int output; of length n, or n / width for an sgentype
        (scalar) result such as dot's.  The arrays are copied to and from the device as raw
        bits.

        Compiles the kernel on first use (see ``prepare``; ``front_end`` 'spirv': from
        its SPIR-V module).  Raises ValueError for missing/extra keys, wrong dtypes or
        shapes, empty or unequal lengths, or a format the device lacks; KernelBuildError
        when the kernel does not build.
        """
        return self.submit(fn, inputs, fmt, width, front_end=front_end).wait()

    def submit(self, fn: Function, inputs: dict[str, np.ndarray], fmt: FloatFormat = BINARY32,
               width: int = 1, after=None, front_end: str = "opencl-c") -> "PendingRun":
        """``run`` without waiting: the inputs are copied into a staging slot now (so the
        caller may reuse or drop its arrays at once), the copies and the kernel are
        enqueued, and a PendingRun is returned whose ``wait()`` gives what ``run`` returns.
        Launches complete in submission order (one in-order queue); the same errors as
        ``run`` are raised here.  ``after(queue, input buffers, output buffers, n)``, if
        given, enqueues more work on the launch's device buffers (the device screen) and
        returns its last event, which ``wait()`` also waits for."""
        n = self._check_inputs(fn, inputs, fmt, width)
        self._check_format(fmt)
        kernel, local = self._kernel(fn, fmt, width, front_end)
        ins = [np.asarray(inputs[a.name]) for a in fn.inputs]
        outs = [(o.name, buffer_dtype(o, fmt), o.scalar) for o in fn.outputs]
        return self._launch(kernel, local, ins, outs, n, width, after=after)

    def submit_made(self, fn: Function, n: int, fill, fmt: FloatFormat = BINARY32,
                    width: int = 1, after=None, copy_back: bool = True,
                    front_end: str = "opencl-c") -> "PendingRun":
        """``submit`` for ``n`` >= 1 inputs made on the device rather than copied from the
        host: ``fill(queue, input buffers, n)`` enqueues their making into the launch's
        device buffers (rows 0 .. n of each; fuzzfarm.device.generate) and returns its last
        event; rows past n up to the work-group padding are zeroed.  The inputs come back
        with the outputs (the run's ``made_inputs``), or with ``copy_back=False`` neither
        does: ``wait()`` returns {} and ``read_made()`` reads both when the caller's
        ``after`` did not bring back what it needs.  Otherwise as ``submit``; raises
        ValueError for n < 1."""
        if int(n) < 1:
            raise ValueError(f"n={n!r}: a launch needs at least one input")
        self._check_format(fmt)
        kernel, local = self._kernel(fn, fmt, width, front_end)
        ins = [np.empty(0, buffer_dtype(a, fmt)) for a in fn.inputs]
        outs = [(o.name, buffer_dtype(o, fmt), o.scalar) for o in fn.outputs]
        return self._launch(kernel, local, ins, outs, int(n), width, after=after, fill=fill,
                            copy_back=copy_back)

    def run_literals(self, fn: Function, inputs: dict[str, np.ndarray],
                     fmt: FloatFormat = BINARY32, front_end: str = "opencl-c") -> "LiteralRun":
        """Scalar built-in ``fn`` on ``inputs`` (as ``run`` takes them, width 1) given to
        the compiler as constants: programs of at most LITERALS_PER_PROGRAM rows each
        (kernels.literal_source, or with ``front_end`` 'spirv' spirv.literal_module's
        OpConstants), each built with this runner's build options and run by
        one work-item, then dropped (a literal program is never run again, so nothing of
        it is kept).  Blocking; returns a LiteralRun whose ``wait()`` gives what ``run``
        returns.  Raises as ``run``, KernelBuildError with the program's source where one
        does not build."""
        n = self._check_inputs(fn, inputs, fmt, 1)
        self._check_format(fmt)
        check_front_end(front_end)
        write = spirv.literal_module if front_end == "spirv" else literal_source
        cols = [np.asarray(inputs[a.name]) for a in fn.inputs]
        outs = {o.name: np.empty(n, buffer_dtype(o, fmt)) for o in fn.outputs}
        t0 = time.perf_counter()
        for start in range(0, n, LITERALS_PER_PROGRAM):
            stop = min(n, start + LITERALS_PER_PROGRAM)
            rows = [tuple(int(c[i]) for c in cols) for i in range(start, stop)]
            program = self._build(write(fn, fmt, rows),        # built anew, never kept
                                  f"{fn.name} on {stop - start} literal inputs",
                                  self.build_options)
            kernel = getattr(program, literal_kernel_name(fn))
            bufs = [cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY,
                              (stop - start) * outs[o.name].itemsize) for o in fn.outputs]
            kernel.set_args(*bufs)
            ev = cl.enqueue_nd_range_kernel(self.queue, kernel, (1,), (1,))
            for o, b in zip(fn.outputs, bufs):
                cl.enqueue_copy(self.queue, outs[o.name][start:stop], b, wait_for=[ev],
                                is_blocking=True)
        return LiteralRun(outs, time.perf_counter() - t0)

    def run_source(self, source: str, name: str, inputs: list[np.ndarray],
                   out_dtypes: list, width: int = 1, what: str = "") -> list[np.ndarray]:
        """Run kernel ``name`` of program ``source`` (built once and cached, with this
        runner's build options) on 1-D input arrays of one length n (lanes), with one output
        array of length n per dtype of ``out_dtypes``; ``width`` lanes per work-item
        (vloadn/vstoren).  The buffers hold raw bits, copied as they are.  Used for kernels
        that are not a catalogue built-in (conversions).  Raises ValueError for empty or
        unequal inputs, KernelBuildError when the program does not build."""
        return self.submit_source(source, name, inputs, out_dtypes, width, what).wait()

    def submit_source(self, source: str, name: str, inputs: list[np.ndarray],
                      out_dtypes: list, width: int = 1, what: str = "",
                      after=None) -> "PendingRun":
        """``run_source`` without waiting (see ``submit``, ``after`` included); ``wait()``
        returns the list of outputs."""
        n = len(inputs[0]) if inputs else 0
        if not n or any(len(a) != n for a in inputs):
            raise ValueError(f"inputs of {name} must be non-empty and of one length")
        kernel, local = self._source_kernel(source, name, what)
        outs = [(k, np.dtype(dt), False) for k, dt in enumerate(out_dtypes)]
        return self._launch(kernel, local, [np.asarray(a) for a in inputs], outs, n, width,
                            as_list=True, after=after)

    def submit_source_made(self, source: str, name: str, n: int, in_dtypes: list,
                           out_dtypes: list, fill, width: int = 1, after=None,
                           what: str = "") -> "PendingRun":
        """``submit_source`` for ``n`` >= 1 inputs (of ``in_dtypes``) made on the device by
        ``fill`` as in ``submit_made``, nothing copied back: ``wait()`` returns [] and
        ``read_made()`` reads the inputs and outputs where ``after`` did not bring back
        what the caller needs.  Raises ValueError for n < 1, KernelBuildError when the
        program does not build."""
        if int(n) < 1:
            raise ValueError(f"n={n!r}: a launch needs at least one input")
        kernel, local = self._source_kernel(source, name, what)
        ins = [np.empty(0, np.dtype(dt)) for dt in in_dtypes]
        outs = [(k, np.dtype(dt), False) for k, dt in enumerate(out_dtypes)]
        return self._launch(kernel, local, ins, outs, int(n), width, as_list=True,
                            after=after, fill=fill, copy_back=False)

    def prepare_sources(self, program: str, kernels: dict, what: str) -> int:
        """Build ``program``, which holds the kernels named in ``kernels`` ({kernel name:
        the source holding it alone, as ``submit_source`` is given it}), once, and cache
        each kernel as its own source's (one build instead of one per kernel: 0.09 s a
        conversion on NVIDIA's H100).  Where the program does not build, or a kernel of it
        cannot be made, nothing of it is cached: each is built alone at its first use, and
        a failure of its own is raised then.  Returns how many kernels were cached."""
        try:
            built = self.build(program, what)
        except KernelBuildError:
            return 0
        made = 0
        for name, alone in kernels.items():
            try:
                kernel = cl.Kernel(built, name)
            except cl.Error:
                continue
            self._kernels[("source", alone)] = (kernel, self._local_size(kernel))
            made += 1
        return made

    def _source_kernel(self, source: str, name: str, what: str = "") -> tuple:
        """(kernel, local size) of kernel ``name`` of ``source``, built once."""
        key = ("source", source)
        if key not in self._kernels:
            program = self.build(source, what or name)
            kernel = getattr(program, name)
            self._kernels[key] = (kernel, self._local_size(kernel))
        return self._kernels[key]

    # -- staging and launching ------------------------------------------------------------

    def _slot(self, in_dtypes: tuple, out_dtypes: tuple, elements: int) -> Slot:
        """An idle staging slot for this buffer layout holding at least ``elements``, or a
        new one (a power of two of elements, at least MIN_SLOT_ELEMENTS)."""
        for k, slot in enumerate(self._idle):
            if slot.fits(in_dtypes, out_dtypes, elements):
                self._idle_bytes -= slot.nbytes
                return self._idle.pop(k)
        cap = max(MIN_SLOT_ELEMENTS, 1 << (int(elements) - 1).bit_length())
        return Slot(self, in_dtypes, out_dtypes, cap)

    def _release(self, slot: Slot) -> None:
        self._idle.append(slot)
        self._idle_bytes += slot.nbytes
        while len(self._idle) > MAX_IDLE_SLOTS or (
                len(self._idle) > 1 and self._idle_bytes > self.max_idle_bytes):
            old = self._idle.pop(0)
            self._idle_bytes -= old.nbytes
            old.release()

    def release_idle(self) -> None:
        """Release every idle staging slot's device and host memory now (a runner about
        to be dropped: its context's memory is freed once nothing holds it)."""
        while self._idle:
            self._idle.pop().release()
        self._idle_bytes = 0

    def _launch(self, kernel, local: int, ins: list, outs: list, n: int, width: int,
                as_list: bool = False, after=None, fill=None,
                copy_back: bool = True) -> "PendingRun":
        self.launches += 1
        chunk = width * local
        padded = -(-n // chunk) * chunk
        items = padded // width
        slot = self._slot(tuple(a.dtype for a in ins), tuple(dt for _, dt, _ in outs), padded)
        try:
            t0 = time.perf_counter()
            events = []
            if fill is not None:            # made on the device
                events.append(fill(self.queue, slot.dev_in, n))
                for a, dev in zip(ins, slot.dev_in):
                    if padded > n:          # padding: all-zero bits
                        size = a.dtype.itemsize
                        events.append(cl.enqueue_fill_buffer(
                            self.queue, dev, np.zeros(1, a.dtype), n * size,
                            (padded - n) * size))
            for a, host, dev in zip(ins, slot.host_in, slot.dev_in) if fill is None else ():
                host[:n] = a
                host[n:padded] = 0          # padding: all-zero bits
                events.append(cl.enqueue_copy(self.queue, dev, host[:padded],
                                              is_blocking=False))
            kernel(self.queue, (items,), (local,), *slot.dev_in, *slot.dev_out)
            lengths = []
            # inputs made on the device come back with the outputs, into plain memory (the
            # check reads them at scattered positions; mapped staging memory was once
            # blamed for a slow scattered read, which was np.union1d: RESULTS.md)
            host_out = slot.host_out if fill is None else slot.plain(slot.out_dtypes, "out")
            if fill is not None and copy_back:
                made = slot.plain(slot.in_dtypes, "in")
                for host, dev in zip(made, slot.dev_in):
                    events.append(cl.enqueue_copy(self.queue, host[:padded], dev,
                                                  is_blocking=False))
            for (_, _, scalar), host, dev in zip(outs, host_out, slot.dev_out):
                m = items if scalar else padded
                lengths.append(n // width if scalar else n)
                if copy_back:
                    events.append(cl.enqueue_copy(self.queue, host[:m], dev,
                                                  is_blocking=False))
            if after is not None:
                events.append(after(self.queue, slot.dev_in, slot.dev_out, n))
            self.queue.flush()
        except BaseException:
            slot.release()
            raise
        names = [name for name, _, _ in outs]
        run = PendingRun(self, slot, events, names if copy_back else [],
                         lengths if copy_back else [], t0, as_list, host_out)
        if fill is not None:
            run.made_inputs = [h[:n] for h in made] if copy_back else None
            if not copy_back:
                run._unread = (slot, n, padded, items, names, lengths, outs, host_out)
        return run

    def host_array(self, nbytes: int) -> tuple[np.ndarray, object]:
        """``nbytes`` of host memory for copies: (uint8 array, the mapped cl.Buffer behind
        it, to be kept as long as the array) in pinned memory where this runner's
        ``pinned`` is set and the driver allows it, else (a plain numpy array, None)."""
        if self.pinned:
            mf = cl.mem_flags
            try:
                buf = cl.Buffer(self.context, mf.READ_WRITE | mf.ALLOC_HOST_PTR,
                                size=max(1, int(nbytes)))
                arr, _ = cl.enqueue_map_buffer(
                    self.queue, buf, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                    (max(1, int(nbytes)),), np.uint8, is_blocking=True)
                return arr, buf
            except cl.Error:
                pass                      # the driver refuses: plain host memory
        return np.empty(max(1, int(nbytes)), np.uint8), None

    def device_constants(self) -> dict[str, int]:
        """The device's ``{"FP_ILOGB0": int, "FP_ILOGBNAN": int}``, read by running
        ``k_fp_ilogb_constants`` once (cached).  Raises KernelBuildError if it does not
        build."""
        if self._constants is None:
            program = self.build(constants_source(), CONSTANTS_KERNEL)
            out = np.zeros(2, dtype=np.int32)
            buf = cl.Buffer(self.context, cl.mem_flags.WRITE_ONLY, size=out.nbytes)
            try:
                cl.Kernel(program, CONSTANTS_KERNEL)(self.queue, (1,), None, buf)
                cl.enqueue_copy(self.queue, out, buf)
                self.queue.finish()
            finally:
                buf.release()
            self._constants = {"FP_ILOGB0": int(out[0]), "FP_ILOGBNAN": int(out[1])}
        return dict(self._constants)

    def __repr__(self) -> str:
        opts = f", build_options={self.build_options!r}" if self.build_options else ""
        return f"DeviceRunner({self.info.label} [{self.info.fingerprint}]{opts})"
