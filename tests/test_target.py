"""Target: what is under test, parsed and validated once (issue 16), and the per-kind
behaviour of work units (fuzzfarm.work.kinds)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from edgecases import catalogue, conversions
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64
from fuzzfarm.target import KINDS, Target, TargetError
from fuzzfarm.work import kinds, make, rows as unit_rows, session


def test_a_target_is_a_plain_tuple_and_a_stored_triple_is_opencl_c():
    t = Target.parse("sinpi", "binary32", 4)
    plain = ("sinpi", "binary32", 4, "opencl-c")
    assert t == plain and hash(t) == hash(plain)
    assert json.loads(json.dumps(t)) == list(plain)
    assert Target.of(["sinpi", "binary32", 4]) == t and Target.of(t) is t   # older journals
    assert t.id == "sinpi.binary32.w4" and str(t) == t.id
    s = Target.parse("sinpi", "binary32", 4, "spirv")
    assert s != t and Target.of(json.loads(json.dumps(s))) == s
    assert s.id == "sinpi.binary32.w4.spirv" and s.requirements == {"binary32", "spirv"}
    assert t.requirements == {"binary32"}
    with pytest.raises(TargetError, match="front_end='glsl'"):
        Target.parse("sinpi", "binary32", 1, "glsl")


@pytest.mark.parametrize("name, kind", [
    ("sinpi", "elementwise"), ("ldexp", "elementwise"), ("clamp", "elementwise"),
    ("divide", "elementwise"), ("dot", "geometric"), ("normalize", "geometric"),
    ("convert_int_sat_rte(float)", "conversion"), ("convert_half(double)", "conversion"),
])
def test_kind(name, kind):
    precision = "binary64" if "double" in name else "binary32"
    t = Target.parse(name, precision)
    assert t.kind == kind and t.kind in KINDS
    assert kinds.kind_of(t).name == kind


@pytest.mark.parametrize("args, words", [
    (("no_such_fn",), "no_such_fn"),
    (("convert_int_sat(float",), "source type"),
    (("convert_float_sat(int)",), "_sat"),
    (("convert_int(short)", "binary32"), "integer types only"),
    (("convert_int(double)", "binary32"), "binary64 conversion"),
    (("sinpi", "binary80"), "binary80"),
    (("sinpi", "binary32", 5), "widths"),
    (("sinpi", "binary32", "four"), "width"),
    (("cross", "binary32", 2), "widths"),
])
def test_parse_rejects_with_one_line_naming_the_problem(args, words):
    with pytest.raises(TargetError) as e:
        Target.parse(*args)
    msg = str(e.value)
    assert words in msg and "\n" not in msg
    assert isinstance(e.value, BadInput)      # exit status 2 at the CLI


def test_parse_normalises_a_conversion_id():
    t = Target.parse(" convert_int_sat_rte( float ) ", "binary32")
    assert t.name == "convert_int_sat_rte(float)"
    assert t.conversion == conversions.parse("convert_int_sat_rte(float)")
    with pytest.raises(TargetError):
        t.fn
    with pytest.raises(TargetError):
        Target.parse("sin").conversion


def test_formats_and_arguments_of_a_conversion():
    t = Target.parse("convert_half_rtz(ulong)", "binary16")
    assert t.input_format == BINARY16 and t.output_format == BINARY16
    assert [a.kind for a in t.inputs] == ["uint64"] and [a.kind for a in t.outputs] == ["float"]
    assert t.required_precisions == {"binary16"}
    d = Target.parse("convert_half(double)", "binary64")
    assert d.input_format == BINARY64 and d.output_format == BINARY16
    assert d.required_precisions == {"binary16", "binary64"}     # half needs cl_khr_fp16


def test_formats_and_arguments_of_a_builtin():
    t = Target.parse("frexp", "binary64", 2)
    fn = catalogue.function("frexp")
    assert t.inputs == fn.inputs and t.outputs == fn.outputs
    assert t.input_format == t.output_format == t.fmt == BINARY64
    assert t.required_precisions == {"binary64"}


def test_rules_and_bound_that_apply():
    sinpi = Target.parse("sinpi")
    assert "CL.sinpi.positive_integer" in {r.id for r in sinpi.rules()}
    assert sinpi.bound("full").describe(1) == "<= 4 ulp"
    exp = Target.parse("exp")       # OpenCL C 3.0 §7.4 tables: full, embedded, relaxed
    assert exp.bound("full").describe(1) == "<= 3 ulp"
    assert exp.bound("embedded").describe(1) == "<= 4 ulp"
    assert exp.bound("full", relaxed=True).describe(1) == "<= 3 + floor(fabs(2 * x)) ulp"
    conv = Target.parse("convert_int_sat_rte(float)")
    assert "CL.convert.saturate" in {r.id for r in conv.rules()}
    assert conv.bound() is None


def test_every_catalogue_form_parses():
    n = 0
    for fn in catalogue.functions().values():
        for p in fn.precisions:
            for w in fn.widths:
                assert Target.parse(fn.name, p, w).fn is fn
                n += 1
    for c in conversions.conversions():
        if c.precision:
            assert Target.parse(c.id, c.precision).conversion == c
            n += 1
    assert n > 2000


# --------------------------------------------------------------------------- kinds
class _Runner:
    """A stand-in device: records which call the kind made."""

    def __init__(self):
        self.calls = []

    def run(self, fn, inputs, fmt, width, front_end="opencl-c"):
        self.calls.append(("run", fn.name, fmt.name, width))
        return {"ret": np.zeros(len(next(iter(inputs.values()))), fmt.uint)}

    def run_source(self, src, kname, arrays, dtypes, width):
        self.calls.append(("run_source", kname, width))
        assert "convert_int_sat_rte" in src
        return [np.zeros(len(arrays[0]), dtypes[0])]


@pytest.mark.parametrize("target", [("sinpi", "binary32", 1),
                                    ("convert_int_sat_rte(float)", "binary32", 1)])
def test_each_kind_runs_its_own_kernel(target):
    u = make.make_unit("dev", target, 1, 3, 512, 1)
    ins = make.make_inputs(u)
    r = _Runner()
    out = session.run_unit(r, u, ins)
    assert list(out) == ["ret"]
    assert r.calls[0][0] == ("run_source" if u.target.kind == "conversion" else "run")
    src = unit_rows.unit_kernel_source(u)
    assert ("convert_int_sat_rte" if u.target.kind == "conversion" else "sinpi") in src


def test_kinds_count_classes_only_where_they_apply():
    s = make.make_unit("dev", ("sinpi", "binary32", 1), 1, 3, 512, 1)
    c = make.make_unit("dev", ("convert_int(float)", "binary32", 1), 1, 3, 512, 1)
    assert sum(kinds.kind_of(s.target).tally(s.target, make.make_inputs(s))[0].values()) == 512
    assert kinds.kind_of(c.target).tally(c.target, make.make_inputs(c))[:2] == ({}, {})


def test_geometric_inputs_are_whole_vectors():
    u = make.make_unit("dev", ("dot", "binary32", 4), 1, 3, 100, 1)
    ins = make.make_inputs(u)
    assert all(len(v) == 400 for v in ins.values())
    s = make.make_unit("dev", ("dot", "binary32", 4), 0, 3, 100, 1)
    assert all(len(v) % 4 == 0 for v in make.make_inputs(s).values())


def test_replayed_inputs_come_first_in_unit_zero():
    u = make.make_unit("dev", ("pown", "binary32", 1), 0, 3, 100, 1,
                        replay=[(BINARY32.bits_of(2.5), (1 << 32) - 3)])
    ins = make.make_inputs(u)
    assert int(ins["x"][0]) == BINARY32.bits_of(2.5) and int(ins["y"][0]) == -3
