"""OpenCL C kernels that call one explicit conversion on raw bits (``edgecases.conversions``
names them); ``fuzzfarm.device.runner`` builds and runs them."""
from __future__ import annotations

from typing import Iterable

from edgecases.conversions import FLOAT_TYPES, Conversion, c_buffer_type, extensions
from fuzzfarm.device.kernels import WIDTHS

__all__ = ["kernel_name", "kernel_source", "program_source", "program_conversions"]


def kernel_name(conv: Conversion) -> str:
    """The kernel's name: ``k_<name>_from_<src>`` (``k_convert_int_sat_rte_from_float``),
    unique per ``conv.id``."""
    return f"k_{conv.name}_from_{conv.src}"


def _check_width(width: int) -> None:
    if width not in WIDTHS:
        raise ValueError(f"width={width!r} is not an OpenCL C vector width; choose one of {WIDTHS}")


def _vec(t: str, width: int) -> str:
    return t if width == 1 else f"{t}{width}"


def _preamble(exts: Iterable[str]) -> str:
    lines = ["/* fuzzfarm: bit-exact calls of OpenCL C explicit conversions */"]
    lines += [f"#pragma OPENCL EXTENSION {e} : enable" for e in sorted(set(exts))]
    return "\n".join(lines) + "\n"


def _kernel_body(conv: Conversion, width: int) -> str:
    src_buf, dst_buf = c_buffer_type(conv.src), c_buffer_type(conv.dst)
    load = "in_x[i]" if width == 1 else f"vload{width}(i, in_x)"
    if conv.src in FLOAT_TYPES:
        load = f"as_{_vec(conv.src, width)}({load})"
    value = "ret_v"
    if conv.dst in FLOAT_TYPES:
        value = f"as_{_vec(dst_buf, width)}(ret_v)"
    store = (f"out_ret[i] = {value};" if width == 1
             else f"vstore{width}({value}, i, out_ret);")
    call = ("convert_" + _vec(conv.dst, width) + ("_sat" if conv.sat else "")
            + (f"_{conv.rounding}" if conv.rounding else ""))
    return "\n".join([
        f"__kernel void {kernel_name(conv)}(",
        f"    __global const {src_buf} *restrict in_x,",
        f"    __global {dst_buf} *restrict out_ret)",
        "{",
        "    const size_t i = get_global_id(0);",
        f"    const {_vec(conv.src, width)} x_v = {load};",
        f"    const {_vec(conv.dst, width)} ret_v = {call}(x_v);",
        f"    {store}",
        "}",
    ]) + "\n"


def kernel_source(conv: Conversion, width: int = 1) -> str:
    """Complete OpenCL C source of one kernel calling ``conv`` on raw bits.

    The kernel ``kernel_name(conv)`` takes ``__global const SRC *in_x`` (float sources as
    their bits: ushort/uint/ulong; ints as their type) and ``__global DST *out_ret``; it
    reinterprets the loaded bits (``as_float`` ...), calls ``convert_<dst><n>...`` and
    stores the result's bits (``as_uint`` ...).  With ``width`` n > 1 each work-item
    handles n consecutive elements through ``vloadn``/``vstoren`` (global size = elements /
    n), as in fuzzfarm.device.kernels.  The source carries the cl_khr_fp16 / cl_khr_fp64 pragma
    it needs.  Raises ValueError for a width that is not 1, 2, 3, 4, 8 or 16.

    >>> print(kernel_source(parse("convert_int_sat_rte(float)")))  # doctest: +SKIP
    __kernel void k_convert_int_sat_rte_from_float(
        __global const uint *restrict in_x,
        __global int *restrict out_ret)
    {
        const size_t i = get_global_id(0);
        const float x_v = as_float(in_x[i]);
        const int ret_v = convert_int_sat_rte(x_v);
        out_ret[i] = ret_v;
    }
    """
    _check_width(width)
    return _preamble(extensions(conv)) + _kernel_body(conv, width)


def program_source(convs: Iterable[Conversion], width: int = 1) -> str:
    """One program holding the kernels of all ``convs`` (one build instead of many), each
    as in ``kernel_source``, under the union of their pragmas (so give it conversions of
    one ``extensions`` group when the device may lack cl_khr_fp16 or cl_khr_fp64).
    Raises ValueError when ``convs`` is empty or names a conversion twice, or for a bad
    width."""
    convs = program_conversions(convs, width)
    exts = {e for c in convs for e in extensions(c)}
    return _preamble(exts) + "\n".join(_kernel_body(c, width) for c in convs)


def program_conversions(convs: Iterable[Conversion], width: int) -> list:
    """``convs`` as the list one program holds (this module's or a SPIR-V module's,
    fuzzfarm.device.spirv), checked: raises ValueError for a width that is not 1, 2, 3,
    4, 8 or 16, an empty ``convs`` or a conversion named twice."""
    _check_width(width)
    convs = list(convs)
    if not convs:
        raise ValueError("convs is empty; give at least one Conversion")
    ids = [c.id for c in convs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"convs names {dup} more than once")
    return convs
