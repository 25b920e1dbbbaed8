"""What is printed is what the device returned (issue 14, item 5).

Every value fuzzfarm prints (findings' ``inputs``/``outputs``, reproducers) goes through
formats.describe_value; formats.parse_value reads it back to the stored bits.  These tests
cover every result type a built-in or a conversion can have.
"""
from __future__ import annotations

import numpy as np
import pytest

from edgecases import catalogue
from fuzzfarm import formats
from edgecases import conversions
from fuzzfarm.work import make, rows as unit_rows
from fuzzfarm.verdict.checker import CheckResult, Finding
from fuzzfarm.formats import BINARY16, BINARY32, BINARY64, describe_value, parse_value

_U64 = (1 << 64) - 1


def float_patterns(fmt, n_random=4000, seed=1):
    """Zeros, infinities, quiet and signaling NaNs with payloads and both signs, the
    subnormal and normal boundaries, and random patterns."""
    f = fmt
    top = f.quiet_bit - 1
    base = [0, f.sign_mask, f.exp_mask, f.exp_mask | f.sign_mask, f.default_qnan,
            f.default_qnan | f.sign_mask, f.exp_mask | 1, f.exp_mask | top,
            f.exp_mask | f.quiet_bit | top, f.sign_mask | f.exp_mask | 1, 1, top | f.quiet_bit,
            f.sign_mask | 1, f.exp_mask - 1, f.sign_mask | (f.exp_mask - 1),
            f.quiet_bit << 1, f.bits_of(1.0), f.bits_of(-1.0)]
    rng = np.random.default_rng(seed)
    rand = rng.integers(0, 1 << f.bits, n_random, dtype=np.uint64, endpoint=False) \
        if f.bits < 64 else rng.integers(0, _U64, n_random, dtype=np.uint64, endpoint=True)
    return base + [int(v) for v in rand]


def int_values(name, n_random=4000, seed=2):
    """The type's boundaries and random values, as a numpy array of that type."""
    dt = np.dtype(name)
    info = np.iinfo(dt)
    base = [info.min, info.max, 0, 1, info.max - 1, info.min + 1]
    if info.min < 0:
        base += [-1]
    rng = np.random.default_rng(seed)
    rand = rng.integers(info.min, info.max, n_random, dtype=dt, endpoint=True)
    return np.concatenate([np.array(base, dtype=dt), rand])


@pytest.mark.parametrize("fmt", [BINARY16, BINARY32, BINARY64], ids=lambda f: f.name)
def test_every_float_pattern_round_trips(fmt):
    for b in float_patterns(fmt):
        text = describe_value("float", b, fmt)
        assert parse_value("float", text, fmt) == b, text


@pytest.mark.parametrize("name", sorted(k for k in formats.INT_KINDS if k not in
                                        ("int", "uint")))
def test_every_integer_type_prints_as_its_type_and_round_trips(name):
    vals = int_values(name)
    for v in vals:
        stored = int(v) & _U64              # as findings store it
        text = describe_value(name, stored)
        assert text == str(int(v))          # decimal, as the type: unsigned never negative
        assert parse_value(name, text) == stored
        assert describe_value(name, int(v)) == text   # a signed Python int prints the same


def test_catalogue_int_and_payload_kinds_round_trip():
    for v in int_values("int32"):
        stored = int(v) & _U64
        assert parse_value("int", describe_value("int", stored)) == stored
    for v in int_values("uint64"):
        assert parse_value("uint", describe_value("uint", int(v))) == int(v)
    assert describe_value("uint", 0x7FC01) == "0x7fc01"


def test_a_ulong_result_with_the_top_bit_set_prints_unsigned():
    assert describe_value("uint64", 0x8000000000000000) == "9223372036854775808"
    assert describe_value("int64", 0x8000000000000000) == "-9223372036854775808"
    assert describe_value("uint32", 0xFFFFFFFF) == "4294967295"
    assert describe_value("int8", 0xFF) == "-1"


@pytest.mark.parametrize("text,kind,fmt", [
    ("0x3f800000 (2.0)", "float", BINARY32),      # the value does not match the bits
    ("0x7fc00000 (sNaN)", "float", BINARY32),     # a quiet NaN called signaling
    ("3f800000", "float", BINARY32),
    ("-1", "uint32", None),                       # an unsigned type never prints negative
    ("256", "uint8", None),                       # out of the type's range
    ("0x10", "int32", None),
    ("1", "int128", None),
    ("0x3f800000 (1.0)", "float", None),
])
def test_a_text_that_is_not_a_printed_value_is_refused(text, kind, fmt):
    with pytest.raises(ValueError):
        parse_value(kind, text, fmt)


# ---------------------------------------------------------------------- through the findings
def _rows(function, precision, outputs, inputs):
    r = CheckResult(function, len(outputs))
    for i, (x, y) in enumerate(zip(inputs, outputs)):      # a rule each: all stored
        r.findings.append(Finding(i, function, f"rule{i}", "s", "text", "fail", "ret", (x,),
                                  (y,), "?", None, ""))
    u = make.make_unit("dev", (function, precision, 1), 3, 1, 8192, 4, size=2048)
    return unit_rows.finding_rows(r, u, {}, "run")


def _arg_kind(fmt, dtype):
    return "float" if fmt else np.dtype(dtype).name


@pytest.mark.parametrize("conv", conversions.conversions(), ids=lambda c: c.id)
def test_every_conversion_result_prints_what_the_device_returned(conv):
    """Each conversion's findings print its source and result as their own types (float
    patterns, char .. ulong) and read back to the stored bits."""
    dst_kind = _arg_kind(conv.dst_format, conv.dst_dtype)
    src_kind = _arg_kind(conv.src_format, conv.src_dtype)
    if conv.dst_format:
        outs = float_patterns(conv.dst_format, n_random=8)
    else:
        outs = [int(v) for v in int_values(np.dtype(conv.dst_dtype).name, n_random=8)]
    if conv.src_format:
        ins = float_patterns(conv.src_format, n_random=len(outs))[:len(outs)]
    else:
        ins = [int(v) for v in int_values(np.dtype(conv.src_dtype).name, n_random=len(outs))]
    ins = (ins * len(outs))[:len(outs)]
    prec = (conv.src_format or conv.dst_format or BINARY32).name
    for row, x, y in zip(_rows(conv.id, prec, outs, ins), ins, outs):
        got = row["outputs"].removeprefix("ret=")
        assert parse_value(dst_kind, got, conv.dst_format) == int(y) & _U64
        assert row["output_bits"] == [int(y) & _U64]
        assert parse_value(src_kind, row["inputs"].removeprefix("x="), conv.src_format) \
            == int(x) & _U64
    if conv.dst == "ulong":
        row = _rows(conv.id, prec, [0x8000000000000000], [ins[0]])[0]
        assert row["outputs"] == "ret=9223372036854775808"


def test_every_catalogue_result_kind_round_trips_through_the_findings():
    """Built-ins' results: float (gentype), int (ilogb's intn) and the remquo/frexp
    pointer results; each kind printed and read back."""
    kinds = {(o.kind) for fn in catalogue.functions().values() for o in fn.outputs}
    assert kinds <= {"float", "int", "uint"}
    fn = catalogue.function("ilogb")
    assert fn.outputs[0].kind == "int"
    vals = [int(v) for v in int_values("int32", n_random=50)]
    rows = _rows("ilogb", "binary32", vals, [BINARY32.bits_of(1.0)] * len(vals))
    for row, v in zip(rows, vals):
        assert parse_value("int", row["outputs"].removeprefix("ret="), None) == v & _U64
    for fmt in (BINARY32, BINARY64):
        pats = float_patterns(fmt, n_random=50)
        rows = _rows("sin", fmt.name, pats, pats)
        for row, b in zip(rows, pats):
            assert parse_value("float", row["outputs"].removeprefix("ret="), fmt) == b


@pytest.mark.parametrize("fmt, bits, text", [
    (BINARY32, 0x3F800000, "0x1p+0"), (BINARY32, 0x40400000, "0x1.8p+1"),
    (BINARY32, 0x80000000, "-0x0p+0"), (BINARY32, 0x00000001, "0x1p-149"),
    (BINARY32, 0x7F7FFFFF, "0x1.fffffep+127"), (BINARY32, 0xFF800000, "-inf"),
    (BINARY32, 0x7FC00000, "qNaN"), (BINARY32, 0x7F800001, "sNaN"),
    (BINARY64, 0x0000000000000001, "0x0.0000000000001p-1022"),
    (BINARY64, 0x3FB999999999999A, "0x1.999999999999ap-4"),
    (BINARY16, 0x3555, "0x1.554p-2"), (BINARY16, 0x0001, "0x1p-24"),
])
def test_c99_hex_prints_as_glibc_printf_a(fmt, bits, text):
    """Known values of printf("%a", (double)v) (glibc); the text reads back exactly."""
    from fuzzfarm.formats import c99_hex
    assert c99_hex(bits, fmt) == text
    if text not in ("qNaN", "sNaN"):
        assert float.fromhex(text.replace("inf", "infinity")) == fmt.value(bits)


def test_older_float_text_still_parses():
    """Findings stored before the %a form print as '0x3f800000 (1.0)'."""
    assert parse_value("float", "0x3f800000 (1.0)", BINARY32) == 0x3F800000
    assert parse_value("float", "0x7fc00000 (qNaN)", BINARY32) == 0x7FC00000
    with pytest.raises(ValueError):
        parse_value("float", "0x3f800000 (2.0)", BINARY32)
