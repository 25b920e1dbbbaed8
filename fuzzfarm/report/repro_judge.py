"""The acceptance test of fuzzfarm's reproducers: whether a device's result is allowed.

Standard library only, so that ``fuzzfarm repro`` copies this file's functions verbatim
into every exported repro.py and the exported script judges exactly as fuzzfarm does
(repro.c implements the same in C).  ``acceptable`` is the entry point.
"""


def _fmt_consts(bits):
    frac = {16: 10, 32: 23, 64: 52}[bits]
    sign = 1 << (bits - 1)
    return sign, sign - 1, ((sign - 1) >> frac) << frac, 1 << (frac - 1)


def _is_nan(v, bits):
    sign, absm, inf, quiet = _fmt_consts(bits)
    return (v & absm) > inf


def _ordinal(v, bits):
    sign, absm, inf, quiet = _fmt_consts(bits)
    return -(v & absm) if v & sign else (v & absm)


def _value(v, bits):
    import struct
    code = {16: ("<H", "<e"), 32: ("<I", "<f"), 64: ("<Q", "<d")}[bits]
    return struct.unpack(code[1], struct.pack(code[0], v))[0]


def _accepts_one(v, alt, bits):
    kind = alt["kind"]
    if kind in ("bits", "int"):
        return v == alt["value"]
    if kind == "nan":
        return _is_nan(v, bits)
    if kind == "qnan":
        return _is_nan(v, bits) and bool(v & _fmt_consts(bits)[3])
    if kind == "zero":
        return (v & _fmt_consts(bits)[1]) == 0
    if kind == "payload":
        return _is_nan(v, bits) and (v & (_fmt_consts(bits)[3] - 1)) == alt["value"]
    if kind == "ulp":
        # ULP distance as the count of representable values between got and the
        # correctly rounded reference (ordinal distance of the bit patterns); the
        # spec's ULP error is measured against the real value and differs from it by
        # at most 0.5.  Or within the absolute bound, where the bound has one.
        ref = alt["value"]
        if _is_nan(v, bits) or _is_nan(ref, bits):
            return False
        if abs(_ordinal(v, bits) - _ordinal(ref, bits)) <= alt["ulps"]:
            return True
        if alt.get("abs"):
            d = abs(_value(v, bits) - _value(ref, bits))
            return d == d and d <= alt["abs"]
        return False
    raise ValueError("unknown acceptance kind " + repr(kind))


def acceptable(values, accept, bits):
    """Whether the judged output ``values`` (ints: float bit patterns, or int values)
    are allowed: any alternative of ``accept`` holds for every value.  ``bits`` is the
    float format's width (16, 32, 64), 0 for an int output.  An alternative of kind
    "differs" (no expected result could be stated) holds when the values differ from
    the ones the device returned when the finding was made."""
    values = [int(v) for v in values]
    for alt in accept:
        if alt["kind"] == "differs":
            if values != [int(v) for v in alt["values"]]:
                return True
            continue
        if all(_accepts_one(v, alt, bits) for v in values):
            return True
    return False
