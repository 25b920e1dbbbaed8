"""OpenCL C source for the kernels that call one built-in on buffers of bit patterns.

Pure text generation: no pyopencl here (docs/design.md, decision 9), so the sources can be built,
inspected and tested on any machine; ``fuzzfarm.device.runner`` compiles and runs them.

Every kernel follows docs/design.md, decision 1 (bits, not floats):

* each input is a ``__global const`` buffer of raw bits (``uint`` for a binary32 argument,
  ``ulong`` for binary64, ``ushort`` for binary16; ``int`` for an ``intn`` argument),
  reinterpreted with ``as_float``/``as_double``/``as_half``, never converted by value, so
  NaN payloads and signaling NaNs reach the built-in unchanged;
* the inputs are loads from those buffers, never literals, so the compiler cannot fold the
  call into a constant and the device's runtime library is what gets tested;
* every output is written back as raw bits (``as_uint`` ...) to a ``__global`` buffer of
  the same unsigned type, or of ``int`` for an ``intn`` output; a pointer output goes through
  a private variable (``int exp_v; float ret_v = frexp(x_v, &exp_v);``).

The kernel of ``fn`` is named ``kernel_name(fn)`` (``k_<name>``); its parameters are the
input buffers in ``fn.inputs`` order, then the output buffers in ``fn.outputs`` order
(``ret`` first).  Buffer names carry a prefix (``in_x``, ``out_exp``) so that an argument
called ``exp`` can never shadow the built-in of that name.

With ``width`` n > 1 each work-item handles n consecutive elements through
``vloadn``/``vstoren`` and calls the ``floatn`` overload; buffers then hold a multiple of n
elements and the global size is (elements / n).  For ``width == 1`` the global size is the
element count.  (PoCL 3.0-rc2's compiler crashes the process on most built-ins at width 16,
and its vector sin/cos/tan differ from the scalar ones: widths are for later work.)
"""
from __future__ import annotations

import re
from typing import Iterable

import numpy as np

from edgecases.catalogue import Function
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, FloatFormat

__all__ = [
    "WIDTHS", "CONSTANTS_KERNEL", "FP_CONFIG_FLAGS", "FP_CONFIG_SHORT",
    "buffer_dtype", "kernel_name", "kernel_source", "program_source", "program_functions",
    "constants_source", "literal_source", "literal_kernel_name",
    "sweep_kernel_name", "sweep_source",
    "fp_config_names",
]

#: The vector widths OpenCL C has (``floatn``).
WIDTHS = (1, 2, 3, 4, 8, 16)

#: Name of the kernel that writes ``FP_ILOGB0`` and ``FP_ILOGBNAN`` (see ``constants_source``).
CONSTANTS_KERNEL = "k_fp_ilogb_constants"

#: cl_device_fp_config bits (OpenCL 3.0 API spec, table "CL_DEVICE_SINGLE_FP_CONFIG"),
#: in bit order.
FP_CONFIG_FLAGS = (
    ("DENORM", 1 << 0),
    ("INF_NAN", 1 << 1),
    ("ROUND_TO_NEAREST", 1 << 2),
    ("ROUND_TO_ZERO", 1 << 3),
    ("ROUND_TO_INF", 1 << 4),
    ("FMA", 1 << 5),
    ("SOFT_FLOAT", 1 << 6),
    ("CORRECTLY_ROUNDED_DIVIDE_SQRT", 1 << 7),
)

#: Short names for tables (``fuzzfarm devices``).
FP_CONFIG_SHORT = {
    "DENORM": "denorm", "INF_NAN": "inf_nan", "ROUND_TO_NEAREST": "rte",
    "ROUND_TO_ZERO": "rtz", "ROUND_TO_INF": "rtp", "FMA": "fma", "SOFT_FLOAT": "soft",
    "CORRECTLY_ROUNDED_DIVIDE_SQRT": "cr_div_sqrt",
}

# Per format: the OpenCL C extension pragma it needs, and the reinterpreting casts.
_PRAGMA = {
    BINARY16.name: "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n",
    BINARY32.name: "",
    BINARY64.name: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n",
}


def fp_config_names(config: int | None) -> tuple[str, ...]:
    """Names of the flags set in a cl_device_fp_config value, in bit order
    (``191 -> ('DENORM', 'INF_NAN', 'ROUND_TO_NEAREST', 'ROUND_TO_ZERO', 'ROUND_TO_INF',
    'FMA', 'CORRECTLY_ROUNDED_DIVIDE_SQRT')``).  ``None`` or 0 gives ``()``; unknown bits
    are ignored."""
    if not config:
        return ()
    return tuple(name for name, bit in FP_CONFIG_FLAGS if int(config) & bit)


def buffer_dtype(arg, fmt: FloatFormat) -> np.dtype:
    """The host dtype of ``arg``'s buffer: ``fmt.uint`` bit patterns for a float (gentype)
    or ugentype argument, int32 for an intn one (docs/design.md, decision 1)."""
    return np.dtype(np.int32) if arg.kind == "int" else np.dtype(fmt.uint)


def kernel_name(fn: Function) -> str:
    """The kernel's name for built-in ``fn``: ``k_<name>`` (``k_sin``)."""
    return f"k_{fn.name}"


def _check(fmt: FloatFormat, width: int) -> None:
    if fmt.name not in _PRAGMA:
        raise ValueError(f"fmt={fmt.name!r} has no OpenCL C type; use BINARY16, BINARY32 "
                         f"or BINARY64 from fuzzfarm.formats")
    if width not in WIDTHS:
        raise ValueError(f"width={width!r} is not an OpenCL C vector width; choose one of {WIDTHS}")


def _preamble(fmt: FloatFormat) -> str:
    return (f"/* fuzzfarm: bit-exact calls of OpenCL C built-ins in {fmt.name}, "
            f"type {fmt.c_type} */\n"
            + _PRAGMA[fmt.name])


def _vec(scalar: str, width: int) -> str:
    return scalar if width == 1 else f"{scalar}{width}"


def _kernel_body(fn: Function, fmt: FloatFormat, width: int, sweep: bool = False) -> str:
    """The kernel function of ``fn`` alone (no preamble); ``sweep``: the inputs come from
    the global id (see ``sweep_source``) instead of input buffers."""
    bits_t = {"float": fmt.c_uint, "int": "int", "uint": fmt.c_uint}   # buffer element types

    def value_t(arg) -> str:
        n = 1 if arg.scalar else width
        return _vec({"float": fmt.c_type, "int": "int", "uint": fmt.c_uint}[arg.kind], n)

    def load(arg) -> str:
        src = f"in_{arg.name}[i]" if width == 1 or arg.scalar else f"vload{width}(i, in_{arg.name})"
        if sweep and len(fn.inputs) == 1:
            # input m = base + i is the pattern m >> 1 with sign bit m & 1: a value and its
            # negation are neighbours (fuzzfarm.orchestrate.sweep.Space)
            t, top = bits_t[arg.kind], fmt.bits - 1
            src = f"({t})(((({t})(base + i)) >> 1) | ((({t})(base + i)) << {top}))"
        elif sweep:   # argument k holds bits [k*fmt.bits, (k+1)*fmt.bits) of base + i
            shift = fn.inputs.index(arg) * fmt.bits
            src = f"({bits_t[arg.kind]})((base + i) >> {shift})" if shift else \
                f"({bits_t[arg.kind]})(base + i)"
        if arg.kind == "float":
            return f"as_{value_t(arg)}({src})"
        return src

    def store(arg) -> str:
        val = f"{arg.name}_v"
        n = 1 if arg.scalar else width
        if arg.kind == "float":
            val = f"as_{_vec(fmt.c_uint, n)}({val})"
        if n == 1:
            return f"out_{arg.name}[i] = {val};"
        return f"vstore{n}({val}, i, out_{arg.name});"

    params = [] if sweep else \
        [f"__global const {bits_t[a.kind]} *restrict in_{a.name}" for a in fn.inputs]
    params += [f"__global {bits_t[o.kind]} *restrict out_{o.name}" for o in fn.outputs]
    if sweep:
        params.append("const ulong base")
    name = sweep_kernel_name(fn) if sweep else kernel_name(fn)
    lines = [f"__kernel void {name}(", "    " + ",\n    ".join(params) + ")", "{",
             "    const size_t i = get_global_id(0);"]
    for a in fn.inputs:
        lines.append(f"    const {value_t(a)} {a.name}_v = {load(a)};")
    ret, pointers = fn.outputs[0], fn.outputs[1:]
    for p in pointers:
        lines.append(f"    {value_t(p)} {p.name}_v;")
    lines.append(f"    const {value_t(ret)} {ret.name}_v = {_call(fn)};")
    for o in fn.outputs:
        lines.append(f"    {store(o)}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _call(fn: Function) -> str:
    """The call of ``fn`` on ``<arg>_v`` (its pointer outputs ``&<out>_v``), or its
    expression for an operator."""
    if fn.expression:   # an operator: the expression with each argument name replaced
        return re.sub(r"\b(" + "|".join(a.name for a in fn.inputs) + r")\b",
                      lambda m: f"{m.group(1)}_v", fn.expression)
    call_args = [f"{a.name}_v" for a in fn.inputs] + [f"&{p.name}_v" for p in fn.outputs[1:]]
    return f"{fn.name}({', '.join(call_args)})"


def literal_kernel_name(fn: Function) -> str:
    """The name of ``fn``'s kernel of literal inputs (``literal_source``): ``c_<name>``."""
    return f"c_{fn.name}"


def _literal(kind: str, fmt: FloatFormat, bits: int) -> str:
    """An argument's raw bits as an OpenCL C constant of its type: a float through
    ``as_<type>`` of its integer pattern (every pattern a constant, NaN payloads and
    signaling NaNs included), an int through ``as_int``."""
    if kind == "float":
        return f"as_{fmt.c_type}(({fmt.c_uint})0x{int(bits) & ((1 << fmt.bits) - 1):x}UL)"
    if kind == "int":
        return f"as_int(0x{int(bits) & 0xFFFFFFFF:x}U)"
    return f"({fmt.c_uint})0x{int(bits) & ((1 << fmt.bits) - 1):x}UL"


def literal_source(fn: Function, fmt: FloatFormat, rows: list) -> str:
    """Source of ``c_<name>(outputs)``: one work-item computes scalar built-in ``fn`` on
    each row of ``rows`` (a tuple of raw bits per argument, in ``fn.inputs`` order) given
    as compile-time constants, and stores row k's outputs at index k -- what the
    compiler's constant folder makes of each call, where it folds it (docs/constants.md).
    Outputs as ``kernel_source`` writes them.  Raises ValueError for an unknown format or
    an empty ``rows``."""
    _check(fmt, 1)
    if not rows:
        raise ValueError("rows is empty; give at least one row of inputs")
    bits_t = {"float": fmt.c_uint, "int": "int", "uint": fmt.c_uint}
    value_t = {"float": fmt.c_type, "int": "int", "uint": fmt.c_uint}
    params = [f"__global {bits_t[o.kind]} *restrict out_{o.name}" for o in fn.outputs]
    lines = [f"__kernel void {literal_kernel_name(fn)}(", "    " + ",\n    ".join(params) + ")",
             "{"]
    for k, row in enumerate(rows):
        lines.append("    {")
        for a, bits in zip(fn.inputs, row):
            lines.append(f"        const {value_t[a.kind]} {a.name}_v = "
                         f"{_literal(a.kind, fmt, bits)};")
        for p in fn.outputs[1:]:
            lines.append(f"        {value_t[p.kind]} {p.name}_v;")
        ret = fn.outputs[0]
        lines.append(f"        const {value_t[ret.kind]} {ret.name}_v = {_call(fn)};")
        for o in fn.outputs:
            val = f"as_{fmt.c_uint}({o.name}_v)" if o.kind == "float" else f"{o.name}_v"
            lines.append(f"        out_{o.name}[{k}] = {val};")
        lines.append("    }")
    lines.append("}")
    return _preamble(fmt) + "\n".join(lines) + "\n"


def kernel_source(fn: Function, fmt: FloatFormat = BINARY32, width: int = 1) -> str:
    """Complete OpenCL C source of one kernel calling built-in ``fn`` in format ``fmt``.

    ``width`` is the vector width (1, 2, 3, 4, 8 or 16).  The source is self-contained
    (it carries the cl_khr_fp64 / cl_khr_fp16 pragma ``fmt`` needs), so it is what a
    reproducer should quote.  Raises ValueError for an unknown format or width.

    >>> print(kernel_source(function("frexp")))  # doctest: +SKIP
    __kernel void k_frexp(
        __global const uint *restrict in_x,
        __global uint *restrict out_ret,
        __global int *restrict out_exp)
    {
        const size_t i = get_global_id(0);
        const float x_v = as_float(in_x[i]);
        int exp_v;
        const float ret_v = frexp(x_v, &exp_v);
        out_ret[i] = as_uint(ret_v);
        out_exp[i] = exp_v;
    }
    """
    _check(fmt, width)
    return _preamble(fmt) + _kernel_body(fn, fmt, width)


def sweep_kernel_name(fn: Function) -> str:
    """The sweep kernel's name for built-in ``fn``: ``s_<name>`` (``s_sin``)."""
    return f"s_{fn.name}"


def sweep_source(fn: Function, fmt: FloatFormat = BINARY32) -> str:
    """Source of ``fn``'s sweep kernel: the inputs are generated from the global id, so no
    input crosses from host to device.  Work-item ``i`` of a launch with argument ``base``
    (ulong) takes input number ``g = base + i`` of the space.  With one argument, ``x``
    is the pattern ``g >> 1`` with sign bit ``g & 1`` (so +v and -v are neighbours, and an
    odd or even function's reference serves both); with two, argument ``k`` is bits
    ``[k*fmt.bits, (k+1)*fmt.bits)`` of ``g`` (binary16: ``x`` the low and ``y`` the high
    16 bits).  Outputs are written as in ``kernel_source``, indexed by ``i``.
    Scalar only.  Raises ValueError for an unknown format or a non-float argument.

    >>> print(sweep_source(function("sin")))  # doctest: +SKIP
    __kernel void s_sin(
        __global uint *restrict out_ret,
        const ulong base)
    {
        const size_t i = get_global_id(0);
        const float x_v = as_float((uint)((((uint)(base + i)) >> 1) | (((uint)(base + i)) << 31)));
        const float ret_v = sin(x_v);
        out_ret[i] = as_uint(ret_v);
    }
    """
    _check(fmt, 1)
    if any(a.kind != "float" for a in fn.inputs):
        raise ValueError(f"{fn.name} has a non-float argument; a sweep enumerates float "
                         f"bit patterns only")
    return _preamble(fmt) + _kernel_body(fn, fmt, 1, sweep=True)


def program_source(fns: Iterable[Function], fmt: FloatFormat = BINARY32, width: int = 1) -> str:
    """One program holding the kernels of all ``fns`` (one build instead of many: a cold
    PoCL build costs about as much for one kernel as for fifty).  Each kernel's text is the
    same as in ``kernel_source``.  Raises ValueError for an unknown format or width, or
    when ``fns`` is empty or names a function twice."""
    fns = program_functions(fns, fmt, width)
    return _preamble(fmt) + "\n".join(_kernel_body(f, fmt, width) for f in fns)


def program_functions(fns: Iterable[Function], fmt: FloatFormat, width: int) -> list:
    """``fns`` as the list one program holds (this module's or a SPIR-V module's,
    fuzzfarm.device.spirv), checked: raises ValueError for a format without an OpenCL
    type, a width that is not an OpenCL vector width, an empty ``fns`` or a function
    named twice."""
    _check(fmt, width)
    fns = list(fns)
    names = [f.name for f in fns]
    if not fns:
        raise ValueError("fns is empty; give at least one Function")
    if len(set(names)) != len(names):
        raise ValueError(f"fns={names} names a function twice")
    return fns


def constants_source() -> str:
    """Source of ``k_fp_ilogb_constants(__global int *out)``: one work-item writes
    ``out[0] = FP_ILOGB0`` and ``out[1] = FP_ILOGBNAN`` (the device's values of the macros
    ilogb's prescribed results refer to)."""
    return (f"__kernel void {CONSTANTS_KERNEL}(__global int *out)\n"
            "{\n"
            "    out[0] = FP_ILOGB0;\n"
            "    out[1] = FP_ILOGBNAN;\n"
            "}\n")
