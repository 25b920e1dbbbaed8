"""SPIR-V modules of the built-ins and conversions (fuzzfarm.device.spirv): every module
assembles and ``spirv-val --target-env opencl2.1`` accepts it; each kernel is the
instruction, decorations and parameters its OpenCL C counterpart stands for; and on a
device that consumes SPIR-V the kernels run, where their results are prescribed, as the
rules say."""
from __future__ import annotations

import re

import numpy as np
import pytest

from devices import spirv_device
from edgecases import catalogue
from edgecases.conversions import conversions, parse
from fuzzfarm.device import spirv
from fuzzfarm.device.kernels import WIDTHS
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64

try:
    spirv.tool("spirv-as"), spirv.tool("spirv-val")
    HAVE_TOOLS = True
except spirv.SpirvToolMissing:
    HAVE_TOOLS = False
tools = pytest.mark.skipif(not HAVE_TOOLS, reason="SPIRV-Tools not installed (the spirv extra)")

FUNCTIONS = [catalogue.function(n) for n in catalogue.functions()]
FORMATS = (BINARY16, BINARY32, BINARY64)


def _fns(fmt, width):
    return [f for f in FUNCTIONS if width in f.widths and fmt.name in f.precisions]


def _kernel(text: str, name: str) -> str:
    """The lines of kernel ``name``'s function in module ``text``."""
    start = text.index(f"%{name} = OpFunction")
    return text[start:text.index("OpFunctionEnd", start)]


@tools
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
@pytest.mark.parametrize("width", WIDTHS)
def test_every_builtin_module_assembles_and_validates(fmt, width):
    fns = _fns(fmt, width)
    text = spirv.program_module(fns, fmt, width)
    assert len(re.findall(r"OpEntryPoint Kernel", text)) == len(fns)
    spirv.validate(spirv.assemble(text))


@tools
@pytest.mark.parametrize("width", WIDTHS)
def test_every_conversion_module_assembles_and_validates(width):
    convs = conversions()
    assert len(convs) == 1045
    text = spirv.conversion_module(convs, width)
    assert len(re.findall(r"OpEntryPoint Kernel", text)) == len(convs)
    spirv.validate(spirv.assemble(text))


@tools
def test_the_validator_refuses_what_is_not_valid():
    """Known-bad modules: a binary64 module without its Float64 capability, and text with
    an id never defined, are refused with the tool's message."""
    text = spirv.program_module([catalogue.function("sin")], BINARY64, 1)
    with pytest.raises(spirv.SpirvError, match="spirv-val"):
        spirv.validate(spirv.assemble(text.replace("OpCapability Float64\n", "")))
    with pytest.raises(spirv.SpirvError, match="spirv-as") as exc:
        spirv.assemble(text.replace("%std sin", "%std sin %undefined_id"))
    assert exc.value.log


def test_a_builtin_is_its_opencl_std_instruction_with_the_opencl_c_kernel_s_parameters():
    text = spirv.program_module([catalogue.function(n) for n in
                                 ("sin", "frexp", "clamp", "max", "min", "recip", "dot",
                                  "add", "ldexp")], BINARY32, 4)
    sin = _kernel(text, "k_sin")
    assert "OpExtInst %v4f32 %std sin" in sin and "vloadn" in sin and "vstoren" in sin
    assert sin.count("OpFunctionParameter %pcw_u32") == 2          # in_x, out_ret
    frexp = _kernel(text, "k_frexp")
    assert re.search(r"OpVariable %pfn_v4u32 Function", frexp)     # the int4 *exp output
    assert re.search(r"OpExtInst %v4f32 %std frexp %t\d+ %t\d+", frexp)
    assert "%std fclamp" in _kernel(text, "k_clamp")
    assert "%std fmax_common" in _kernel(text, "k_max")
    assert "%std fmin_common" in _kernel(text, "k_min")
    assert re.search(r"OpFDiv %v4f32 %cv4_c_f32_1p0 ", _kernel(text, "k_recip"))
    assert "OpDot %f32" in _kernel(text, "k_dot")                   # a scalar result
    assert "OpFAdd %v4f32" in _kernel(text, "k_add")
    assert "%std ldexp" in _kernel(text, "k_ldexp")
    scalar = spirv.program_module([catalogue.function("dot")], BINARY32, 1)
    assert "OpFMul %f32" in scalar and "OpDot" not in scalar         # OpenCL C's dot(x, y)


@pytest.mark.parametrize("text, op, decorations", [
    ("convert_int_sat_rte(float)", "OpConvertFToS", ["FPRoundingMode RTE",
                                                     "SaturatedConversion"]),
    ("convert_uint(float)", "OpConvertFToU", []),                   # the default: RTZ
    ("convert_uint_rtp(double)", "OpConvertFToU", ["FPRoundingMode RTP"]),
    ("convert_float_rtn(int)", "OpConvertSToF", ["FPRoundingMode RTN"]),
    ("convert_float(ulong)", "OpConvertUToF", []),                  # the default: RTE
    ("convert_half_rtz(double)", "OpFConvert", ["FPRoundingMode RTZ"]),
    ("convert_uint_sat(int)", "OpSatConvertSToU", []),
    ("convert_char_sat(uint)", "OpSatConvertUToS", []),
    ("convert_short_sat(long)", "OpSConvert", ["SaturatedConversion"]),
    ("convert_ulong(uchar)", "OpUConvert", []),
    ("convert_long(char)", "OpSConvert", []),
    ("convert_uint(int)", "OpCopyObject", []),                      # the same bits
    ("convert_float_rtz(float)", "OpCopyObject", []),
])
def test_a_conversion_is_its_instruction_and_decorations(text, op, decorations):
    conv = parse(text)
    module = spirv.conversion_module([conv])
    body = _kernel(module, f"k_{conv.name}_from_{conv.src}")
    (result,) = re.findall(rf"(%t\d+) = {op} ", body)
    found = re.findall(rf"OpDecorate {result} (.+)", module)
    assert sorted(found) == sorted(decorations)


def test_bad_arguments_are_refused_naming_the_problem():
    sin = catalogue.function("sin")
    with pytest.raises(ValueError, match="width=5"):
        spirv.program_module([sin], BINARY32, 5)
    with pytest.raises(ValueError, match="names a function twice"):
        spirv.program_module([sin, sin])
    with pytest.raises(ValueError, match="empty"):
        spirv.program_module([])
    with pytest.raises(ValueError, match="more than once"):
        spirv.conversion_module([parse("convert_int(float)")] * 2)


def test_a_missing_tool_is_one_line_naming_the_package(monkeypatch):
    monkeypatch.setattr(spirv.sysconfig, "get_paths", lambda: {"purelib": "/nonexistent"})
    monkeypatch.setattr(spirv.shutil, "which", lambda name: None)
    with pytest.raises(spirv.SpirvToolMissing, match=r"fuzzfarm\[spirv\]") as exc:
        spirv.tool("spirv-as")
    assert "\n" not in str(exc.value)


# ------------------------------------------------------------------ the SPIR-V front end


def test_a_saturated_nan_is_judged_by_the_text_of_the_unit_s_front_end():
    """Planted results (no device): convert_uint_sat(float) returning 7 for a NaN is a
    failure of SPIRV.convert.sat_nan_zero for a SPIR-V unit ("NaN is converted to 0"), a
    note of CL.convert.sat_nan_zero for an OpenCL C one ("should"); a wrong rounding of
    convert_int_rtp(float) fails CL.convert.rounding through either front end."""
    from fuzzfarm.target import Target
    from fuzzfarm.verdict.claims import Claims
    from fuzzfarm.work.kinds import kind_of
    x = np.array([0x7FC00000, 0x3FC00000], np.uint32)             # NaN, 1.5
    by_precision = {p: Claims(p) for p in ("binary16", "binary32", "binary64")}
    verdicts = {}
    for fe in ("opencl-c", "spirv"):
        t = Target.parse("convert_uint_sat(float)", "binary32", 1, fe)
        res = kind_of(t).check(t, {"x": x}, {"ret": np.array([7, 1], np.uint32)},
                               by_precision)
        verdicts[fe] = sorted((f.rule_id, f.severity) for f in res.findings)
        r = Target.parse("convert_int_rtp(float)", "binary32", 1, fe)
        wrong = kind_of(r).check(r, {"x": x[1:]}, {"ret": np.array([1], np.int32)},
                                 by_precision)
        assert [(f.rule_id, f.severity) for f in wrong.findings] == [
            ("CL.convert.rounding", "fail")]
    assert verdicts["spirv"] == [("SPIRV.convert.sat_nan_zero", "fail")]
    assert verdicts["opencl-c"] == [("CL.convert.sat_nan_zero", "note")]


def test_the_il_versions_a_device_reports_are_its_spirv_versions():
    from fuzzfarm.device.discovery import DeviceInfo
    from fuzzfarm.work.session import capabilities_of
    base = dict(index=0, platform_index=0, device_index=0, platform_name="p",
                platform_version="OpenCL 3.0", name="d", vendor="v", version="OpenCL 3.0",
                driver_version="1", opencl_c_version="OpenCL C 3.0", profile="FULL_PROFILE",
                extensions=(), half_fp_config=None, single_fp_config=6,
                double_fp_config=None, device_type="CPU")
    intel = DeviceInfo(**base, il_version="SPIR-V_1.0 SPIR-V_1.1 SPIR-V_1.2")
    pocl = DeviceInfo(**base)
    assert intel.spirv_versions == ("1.0", "1.1", "1.2") and pocl.spirv_versions == ()
    assert capabilities_of(intel) == ("binary32", "spirv")
    assert capabilities_of(pocl) == ("binary32",)
    assert intel.fingerprint == pocl.fingerprint      # the IL list is no part of the identity
    assert DeviceInfo.from_dict(intel.to_dict()) == intel


@pytest.mark.device
def test_spirv_units_run_through_the_session_and_agree_with_opencl_c_where_exact():
    """On a device that takes SPIR-V: a drawn unit of a built-in and of a conversion run
    from SPIR-V modules through DeviceSession (device screen included); on inputs whose
    results are exact (a correctly rounded conversion of non-NaN sources) the two front
    ends give the same bits, and the rows say which front end ran."""
    from fuzzfarm.target import Target
    from fuzzfarm.work.make import make_inputs, make_unit
    from fuzzfarm.work.rows import unit_columns
    from fuzzfarm.work.session import DeviceSession
    info = spirv_device()
    session = DeviceSession(info, inputs="host")
    got = {}
    for fe in ("opencl-c", "spirv"):
        for name in ("convert_int_sat_rte(float)", "fabs"):
            unit = make_unit("t", Target.parse(name, "binary32", 4, fe), 1, 9, 0, 1,
                             size=4096)
            launch = session.launch(unit, make_inputs(unit))
            landed = session.land(launch)
            launch.release()
            got[(fe, name)] = (np.asarray(landed.inputs["x"]),
                               np.asarray(landed.outputs["ret"]))
            assert unit_columns(unit, "r", {})["front_end"] == fe
    for name in ("convert_int_sat_rte(float)", "fabs"):
        (x, a), (_, b) = got[("opencl-c", name)], got[("spirv", name)]
        keep = (x & 0x7F800000) != 0x7F800000                        # no NaN, no inf
        assert np.array_equal(a[keep], b[keep]), name


@pytest.mark.device
def test_a_spirv_module_the_driver_refuses_is_a_build_failure_carrying_the_module(
        monkeypatch):
    from fuzzfarm.device.runner import DeviceRunner, KernelBuildError
    info = spirv_device()
    monkeypatch.setenv("FUZZFARM_PLANT_FAULTS", '{"build": ["sinpi"]}')
    runner = DeviceRunner(info)
    with pytest.raises(KernelBuildError) as exc:
        runner.prepare([catalogue.function("sinpi")], BINARY32, 1, front_end="spirv")
    assert spirv.is_module(exc.value.source) and "k_sinpi" in exc.value.source
    runner.prepare([catalogue.function("sin")], BINARY32, 1, front_end="spirv")   # others


@pytest.mark.device
@pytest.mark.cluster
def test_a_spirv_finding_reproduces_from_its_module(tmp_path):
    """A SPIR-V unit's failure (a saturated conversion of a NaN) exported by `fuzzfarm
    repro`: the module as kernel.spvasm and kernel.spv, both reproducers building it with
    clCreateProgramWithIL; the Python one exits 1 while the device still fails."""
    import json
    import subprocess
    import sys

    from fuzzfarm.store import dataset as store
    from fuzzfarm.store import signatures
    info = spirv_device()
    out = tmp_path / "res"
    run = subprocess.run([sys.executable, "-m", "fuzzfarm", "run", "-f",
                          "convert_uint_sat(float)", "--front-end", "spirv", "-d",
                          info.fingerprint, "--budget", "20s", "--seed", "2", "-o", str(out),
                          "--log-format", "text"], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    rows = signatures.with_signatures(store.read_findings(out)).to_pylist()
    assert rows and all(r["front_end"] == "spirv" for r in rows)
    fails = [r for r in rows if r["rule_id"] == "SPIRV.convert.sat_nan_zero"]
    if not fails:
        pytest.skip(f"{info.label} converts a NaN to 0 under SaturatedConversion")
    rep = tmp_path / "repro"
    res = subprocess.run([sys.executable, "-m", "fuzzfarm", "repro", fails[0]["signature"],
                          str(out), "-o", str(rep)], capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    names = {p.name for p in rep.iterdir()}
    assert {"kernel.spvasm", "kernel.spv", "repro.py", "repro.c"} <= names
    assert "kernel.cl" not in names
    spv = (rep / "kernel.spv").read_bytes()
    assert spv == spirv.assemble((rep / "kernel.spvasm").read_text())
    spirv.validate(spv)
    assert "clCreateProgramWithIL(ctx, kernel_il" in (rep / "repro.c").read_text()
    assert json.loads((rep / "repro.json").read_text())["front_end"] == "spirv"
    py = subprocess.run([sys.executable, "repro.py", info.platform_name], cwd=rep,
                        capture_output=True, text=True, timeout=120)
    assert py.returncode == 1, py.stdout + py.stderr


# --------------------------------------------------------------------------- sweeps
def _sweepable():
    from fuzzfarm.orchestrate.sweep import SweepError, space_for
    out = []
    for name in catalogue.functions():
        for fmt in FORMATS:
            try:
                out.append(space_for(name, fmt.name))
            except SweepError:
                continue
    return out


@tools
def test_every_sweep_kernel_is_a_valid_module():
    """The sweep kernel of every sweepable built-in and precision as SPIR-V: named as the
    OpenCL C one, the output buffers then a ulong base, accepted by spirv-val."""
    spaces = _sweepable()
    assert len(spaces) > 100
    for space in spaces:
        text = spirv.sweep_module(space.fn, space.fmt)
        assert f'"s_{space.fn.name}"' in text
        spirv.validate(spirv.assemble(text))
    with pytest.raises(ValueError, match="non-float argument"):
        spirv.sweep_module(catalogue.function("ldexp"), BINARY32)


@pytest.mark.device
def test_a_spirv_sweep_chunk_is_the_opencl_c_one_where_results_are_exact():
    """The same chunk of the sweep numbering through both front ends' sweep kernels: the
    same inputs (an exact built-in's results equal bit for bit, the sign-interleaved
    numbering of one argument and the bit fields of two included)."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.device.sweep_kernel import run_chunk_on
    from fuzzfarm.orchestrate.sweep import space_for
    runner = DeviceRunner(spirv_device())
    for name, precision, start in (("fabs", "binary32", 0x7F7F0000 * 2),
                                   ("floor", "binary32", 0x4B000000 * 2 - 5000),
                                   ("fmax", "binary16", 0x7BFF3C00)):
        space = space_for(name, precision)
        if not runner.info.supports(space.fmt):
            continue
        a = run_chunk_on(runner, space, start, 1 << 14)
        b = run_chunk_on(runner, space, start, 1 << 14, front_end="spirv")
        assert np.array_equal(a["ret"], b["ret"]), name


@pytest.mark.device
def test_fuzzfarm_sweep_through_spirv_records_its_front_end(tmp_path):
    from click.testing import CliRunner

    from fuzzfarm.cli import main
    from fuzzfarm.store import dataset as store
    info = spirv_device()
    out = tmp_path / "res"
    res = CliRunner().invoke(main, ["sweep", "fabs", "-d", info.fingerprint, "--front-end",
                                    "spirv", "--chunks", "2", "--chunk-bits", "16", "-o",
                                    str(out), "--log-format", "text"])
    assert res.exit_code == 0, res.output
    stats = store.read_stats(out).to_pylist()
    assert len(stats) == 2 and {r["front_end"] for r in stats} == {"spirv"}
    assert all(r["unit_id"].split("-", 1)[1].startswith("fabs.binary32.w1.spirv")
               for r in stats)
    from devices import pypi_pocl
    pocl = pypi_pocl()
    if pocl is not None:            # a device without SPIR-V: one line, exit 2
        res = CliRunner().invoke(main, ["sweep", "fabs", "-d", pocl.fingerprint,
                                        "--front-end", "spirv", "-o", str(tmp_path / "p")])
        assert res.exit_code == 2 and "lacks SPIR-V" in res.output


def test_a_campaign_sweep_job_may_run_through_spirv():
    from fuzzfarm.orchestrate import campaign
    c = campaign.loads('[[jobs]]\nsource = "sweep"\nfunctions = ["sin"]\n'
                       'front_ends = ["opencl-c", "spirv"]\nunits = 1\n')
    assert sorted(t.front_end for t in c.jobs[0].targets) == ["opencl-c", "spirv"]
