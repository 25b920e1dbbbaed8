"""Kernel source generation (fuzzfarm.device.kernels): pure, no device needed."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from edgecases.catalogue import functions
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.device.kernels import (
    CONSTANTS_KERNEL, FP_CONFIG_FLAGS, FP_CONFIG_SHORT, WIDTHS, constants_source,
    fp_config_names, kernel_name, kernel_source, program_source,
)

FUNCTIONS = list(functions().values())
BY_NAME = {f.name: f for f in FUNCTIONS}


def _params(src: str, fn) -> list[str]:
    """The parameter declarations of ``fn``'s kernel, in order."""
    m = re.search(rf"__kernel void {kernel_name(fn)}\((.*?)\)\s*\{{", src, re.S)
    assert m, src
    return [p.strip() for p in m.group(1).split(",")]


def test_the_catalogue_has_functions():
    assert len(FUNCTIONS) >= 50


@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.name for f in FUNCTIONS])
def test_binary32_scalar_source(fn):
    src = kernel_source(fn)
    assert kernel_name(fn) == f"k_{fn.name}"
    assert f"__kernel void k_{fn.name}(" in src
    # Parameters: the inputs in order, then the outputs in order, ret first.
    params = _params(src, fn)
    want = [f"__global const {'int' if a.kind == 'int' else 'uint'} *restrict in_{a.name}"
            for a in fn.inputs]
    want += [f"__global {'int' if o.kind == 'int' else 'uint'} *restrict out_{o.name}"
             for o in fn.outputs]
    assert params == want
    # Inputs are reinterpreted buffer loads (never value conversions, never literals).
    for a in fn.inputs:
        load = f"in_{a.name}[i]"
        assert (f"as_float({load})" if a.kind == "float" else f"= {load};") in src
    assert "convert_" not in src and "(float)" not in src
    # The call passes the loaded values and the addresses of the pointer outputs.
    args = [f"{a.name}_v" for a in fn.inputs] + [f"&{o.name}_v" for o in fn.outputs[1:]]
    if fn.expression:    # an operator: its expression on the loaded values
        assert re.sub(r"\b(\w+)\b", lambda m: m.group(1) + "_v" if m.group(1) in fn.arg_names
                      else m.group(1), fn.expression) in src
    else:
        assert f" = {fn.name}({', '.join(args)});" in src
    # Every output is stored as raw bits.
    for o in fn.outputs:
        value = f"as_uint({o.name}_v)" if o.kind == "float" else f"{o.name}_v"
        assert f"out_{o.name}[i] = {value};" in src
    assert src.count("{") == src.count("}")
    assert "#pragma" not in src


def test_pointer_outputs_go_through_private_variables():
    src = kernel_source(BY_NAME["frexp"])
    assert "int exp_v;" in src
    assert "const float ret_v = frexp(x_v, &exp_v);" in src
    assert "out_exp[i] = exp_v;" in src
    src = kernel_source(BY_NAME["modf"])
    assert "float iptr_v;" in src and "out_iptr[i] = as_uint(iptr_v);" in src


def test_int_result():
    src = kernel_source(BY_NAME["ilogb"])
    assert "const int ret_v = ilogb(x_v);" in src
    assert "__global int *restrict out_ret" in src


@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.name for f in FUNCTIONS])
def test_binary64_source(fn):
    src = kernel_source(fn, BINARY64)
    assert src.count("#pragma OPENCL EXTENSION cl_khr_fp64 : enable") == 1
    for a in fn.inputs:
        if a.kind == "float":
            assert f"__global const ulong *restrict in_{a.name}" in src
            assert f"as_double(in_{a.name}[i])" in src
        elif a.kind == "uint":       # nan's payload: the unsigned type of double's size
            assert f"__global const ulong *restrict in_{a.name}" in src
            assert f"= in_{a.name}[i];" in src
        else:
            assert f"__global const int *restrict in_{a.name}" in src
    assert "float" not in src and "uint " not in src and "uint2" not in src


def test_binary16_source():
    src = kernel_source(BY_NAME["pown"], BINARY16)
    assert "#pragma OPENCL EXTENSION cl_khr_fp16 : enable" in src
    assert "as_half(in_x[i])" in src and "__global const int *restrict in_y" in src
    assert "out_ret[i] = as_ushort(ret_v);" in src


@pytest.mark.parametrize("width", [w for w in WIDTHS if w > 1])
def test_vector_source(width):
    src = kernel_source(BY_NAME["frexp"], BINARY32, width)
    assert f"const float{width} x_v = as_float{width}(vload{width}(i, in_x));" in src
    assert f"int{width} exp_v;" in src
    assert f"vstore{width}(as_uint{width}(ret_v), i, out_ret);" in src
    assert f"vstore{width}(exp_v, i, out_exp);" in src
    src = kernel_source(BY_NAME["ldexp"], BINARY64, width)
    assert f"const int{width} k_v = vload{width}(i, in_k);" in src
    assert f"as_double{width}(vload{width}(i, in_x))" in src


@pytest.mark.parametrize("width", [0, 5, 32, -1])
def test_bad_width_is_refused(width):
    with pytest.raises(ValueError, match=f"width={width}"):
        kernel_source(BY_NAME["sin"], BINARY32, width)


def test_program_source_holds_every_kernel_once():
    src = program_source(FUNCTIONS, BINARY64)
    assert src.count("#pragma OPENCL EXTENSION cl_khr_fp64") == 1
    for fn in FUNCTIONS:
        assert src.count(f"__kernel void {kernel_name(fn)}(") == 1
        # the program's kernel text is the single-kernel source's body
        pragma = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
        body = kernel_source(fn, BINARY64).split(pragma)[1]
        assert body in src


def test_program_source_refuses_empty_and_duplicates():
    with pytest.raises(ValueError, match="empty"):
        program_source([])
    with pytest.raises(ValueError, match="twice"):
        program_source([BY_NAME["sin"], BY_NAME["sin"]])


def test_constants_source():
    src = constants_source()
    assert f"__kernel void {CONSTANTS_KERNEL}(__global int *out)" in src
    assert "out[0] = FP_ILOGB0;" in src and "out[1] = FP_ILOGBNAN;" in src


def test_fp_config_names():
    assert fp_config_names(None) == () and fp_config_names(0) == ()
    assert fp_config_names(191) == ("DENORM", "INF_NAN", "ROUND_TO_NEAREST", "ROUND_TO_ZERO",
                                    "ROUND_TO_INF", "FMA", "CORRECTLY_ROUNDED_DIVIDE_SQRT")
    assert fp_config_names(0b1000_0110) == ("INF_NAN", "ROUND_TO_NEAREST",
                                            "CORRECTLY_ROUNDED_DIVIDE_SQRT")
    assert fp_config_names(1 << 6 | 1 << 20) == ("SOFT_FLOAT",)   # unknown bits ignored
    assert set(FP_CONFIG_SHORT) == {name for name, _ in FP_CONFIG_FLAGS}


@pytest.mark.parametrize("module", ["fuzzfarm.device.kernels", "fuzzfarm.cli", "fuzzfarm"])
def test_pure_modules_do_not_import_pyopencl(module):
    code = f"import sys, {module}; assert 'pyopencl' not in sys.modules, 'pyopencl imported'"
    subprocess.run([sys.executable, "-c", code], check=True)
