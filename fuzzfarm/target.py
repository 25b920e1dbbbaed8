"""What is under test: one built-in (or explicit conversion) in one precision at one vector
width, parsed and validated once where a name enters (the CLI, a campaign file, a stored
row) and passed down as a value.

``Target`` is a named tuple ``(name, precision, width, front_end)``, so it is hashable,
orders, and stores as a plain list in checkpoints and scheduler state; everything else
about it is derived from the specification data (``edgecases``):

* ``kind``: how the pipeline treats it, one of ``KINDS``: ``"elementwise"`` (a built-in
  applied lane by lane: math, half_, native_, common and the operators, integer arguments
  included),
  ``"geometric"`` (a built-in on whole vectors: dot, cross, length, normalize, ...) and
  ``"conversion"`` (``convert_<dst>[_sat][_<mode>](<src>)``).  The kind-specific behaviour
  of a work unit lives in ``fuzzfarm.work.kinds``, one class per kind;
* ``spec``: the catalogue's ``Function`` or the ``Conversion``;
* ``inputs``/``outputs`` (``catalogue.Arg``) and ``input_format``/``output_format``: how its
  buffers are read and its values printed;
* ``required_precisions``: what a device must support to run it;
* ``rules()`` and ``bound(profile, relaxed)``: the prescribed-result rules and the ULP bound
  that apply (OpenCL C 3.0 §7.4, §7.5, SPIR-V Env §3.8).

The device's side of a verdict (profile, denormal support, rounding modes, build options)
is not part of the target: it is what the device claims (``fuzzfarm.verdict.claims.Claims``),
read from the device when it is opened.
"""
from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from edgecases import catalogue
from edgecases import conversions as conversion_table
from edgecases import modality
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import FloatFormat, format_named

__all__ = ["Target", "TargetError", "KINDS", "PRECISIONS", "FRONT_ENDS", "CONSTANTS_DOORS",
           "constants_door", "door_front_end", "is_conversion_name", "canonical_name"]

#: The kinds of target, each with its own inputs, kernel and verdict.
KINDS = ("elementwise", "geometric", "conversion")
#: The precisions a target may name (IEEE 754-2008 interchange formats).
PRECISIONS = ("binary16", "binary32", "binary64")
#: The driver front ends a kernel can enter by (edgecases.modality.FRONT_ENDS): OpenCL C
#: source (clCreateProgramWithSource) or a SPIR-V module (clCreateProgramWithIL).
FRONT_ENDS = modality.FRONT_ENDS


def constants_door(front_end: str) -> str:
    """The third door of ``front_end`` ('opencl-c' or 'spirv', FRONT_ENDS): its source or
    module with every input a compile-time constant (literals, OpConstants), so that the
    compiler's constant folder computes what it folds (a ``compare = "constants"`` job's
    other results, docs/constants.md); rows of those results carry it as their front end:
    'opencl-c-constants' or 'spirv-constants'.  Pure."""
    return f"{front_end}-constants"


#: The constants doors, one per front end (``constants_door``).
CONSTANTS_DOORS = tuple(map(constants_door, FRONT_ENDS))


def door_front_end(door: str) -> str:
    """The front end whose constants door ``door`` is ('opencl-c-constants' ->
    'opencl-c'; ``constants_door``'s inverse).  Raises TargetError for any other name."""
    for fe in FRONT_ENDS:
        if constants_door(fe) == door:
            return fe
    raise TargetError(f"{door!r} is not a constants door; one of {', '.join(CONSTANTS_DOORS)}")


class TargetError(BadInput):
    """A name, precision or width that does not make a target (one line, naming it)."""


def is_conversion_name(name: str) -> bool:
    """True for a conversion id such as ``convert_int_sat_rte(float)`` (by its form only;
    ``Target.parse`` validates it)."""
    return str(name).startswith("convert_")


@lru_cache(maxsize=None)
def _spec(name: str):
    if is_conversion_name(name):
        return conversion_table.parse(name)
    return catalogue.function(name)


def canonical_name(name: str) -> str:
    """``name`` as targets spell it: a built-in's name, or a conversion's normalised id
    (``convert_int( float )`` -> ``convert_int(float)``).  Raises TargetError (one line)
    for a name that is neither, or a conversion between integer types only."""
    name = str(name).strip()
    try:
        spec = _spec(name)
    except (KeyError, ValueError) as exc:
        raise TargetError(str(exc.args[0] if exc.args else exc)) from None
    if is_conversion_name(name):
        if spec.precision is None:
            raise TargetError(f"{spec.id} converts between integer types only; fuzzfarm "
                              f"checks conversions that touch a floating type")
        return spec.id
    return name


class Target(NamedTuple):
    """One built-in or conversion x precision x vector width x front end.

    ``name``: a built-in's name (``"sinpi"``) or a conversion's id
    (``"convert_int_sat_rte(float)"``); ``precision``: ``"binary16"``, ``"binary32"`` or
    ``"binary64"`` (for a conversion, the widest floating format it touches); ``width``:
    the OpenCL vector width, 1, 2, 3, 4, 8 or 16; ``front_end``: how its kernel enters the
    driver, ``"opencl-c"`` (source) or ``"spirv"`` (a SPIR-V module; FRONT_ENDS).  Build
    one with ``Target.parse`` where a name comes from outside; the constructor does not
    validate."""

    name: str
    precision: str = "binary32"
    width: int = 1
    front_end: str = "opencl-c"

    # ------------------------------------------------------------------ parsing
    @classmethod
    def parse(cls, name: str, precision: str = "binary32", width: int = 1,
              front_end: str = "opencl-c") -> "Target":
        """The target ``name`` x ``precision`` x ``width`` x ``front_end``, validated
        against the catalogue.  A conversion id is normalised (``convert_int( float )`` ->
        ``convert_int(float)``).  Raises TargetError (a BadInput: one line, exit status 2
        at the CLI) for an unknown built-in, a malformed conversion, a precision the
        built-in does not exist in, a width it does not take, or an unknown front end."""
        if front_end not in FRONT_ENDS:
            raise TargetError(f"front_end={front_end!r} is unknown; choose one of "
                              f"{', '.join(FRONT_ENDS)}")
        return cls._parse(name, precision, width)._replace(front_end=front_end)

    @classmethod
    def _parse(cls, name: str, precision: str, width: int) -> "Target":
        name = str(name).strip()
        try:
            spec = _spec(name)
        except (KeyError, ValueError) as exc:
            msg = exc.args[0] if exc.args else str(exc)
            raise TargetError(str(msg)) from None
        if precision not in PRECISIONS:
            raise TargetError(f"precision={precision!r} is unknown; choose one of "
                              f"{', '.join(PRECISIONS)}")
        try:
            width = int(width)
        except (TypeError, ValueError):
            raise TargetError(f"width={width!r} is not an OpenCL vector width") from None
        if is_conversion_name(name):
            if spec.precision is None:
                raise TargetError(f"{spec.id} converts between integer types only; "
                                  f"fuzzfarm checks conversions that touch a floating type")
            if precision != spec.precision:
                raise TargetError(f"{spec.id} is a {spec.precision} conversion, not "
                                  f"{precision}")
            if width not in catalogue.WIDTHS:
                raise TargetError(f"width={width} is not an OpenCL vector width; choose one "
                                  f"of {catalogue.WIDTHS}")
            return cls(spec.id, precision, width)
        if precision not in spec.precisions:
            raise TargetError(f"{name} has no {precision} form; it exists in "
                              f"{', '.join(spec.precisions)}")
        if width not in spec.widths:
            raise TargetError(f"{name} takes widths {spec.widths}, not {width}")
        return cls(name, precision, width)

    @classmethod
    def of(cls, target) -> "Target":
        """``target`` as a Target: a Target, or a (name, precision, width[, front end])
        sequence (a stored checkpoint, a JSON list; without a front end, OpenCL C).  Does
        not validate (see ``parse``)."""
        if isinstance(target, Target):
            return target
        name, precision, width, *rest = target
        return cls(str(name), str(precision), int(width), str(rest[0]) if rest else "opencl-c")

    # ------------------------------------------------------------------ what it is
    @property
    def id(self) -> str:
        """``sinpi.binary32.w1``: the target in unit ids and file names (a SPIR-V target's
        ends in ``.spirv``: ``sinpi.binary32.w1.spirv``)."""
        base = f"{self.name}.{self.precision}.w{self.width}"
        return base if self.front_end == "opencl-c" else f"{base}.{self.front_end}"

    @property
    def is_conversion(self) -> bool:
        return is_conversion_name(self.name)

    @property
    def spec(self):
        """The catalogue's ``Function`` or the ``edgecases.conversions.Conversion``.
        Raises TargetError for a name that is neither."""
        try:
            return _spec(self.name)
        except (KeyError, ValueError) as exc:
            raise TargetError(str(exc.args[0] if exc.args else exc)) from None

    @property
    def fn(self) -> catalogue.Function:
        """The built-in; raises TargetError for a conversion."""
        if self.is_conversion:
            raise TargetError(f"{self.name} is a conversion, not a built-in")
        return self.spec

    @property
    def conversion(self) -> conversion_table.Conversion:
        """The conversion; raises TargetError for a built-in."""
        if not self.is_conversion:
            raise TargetError(f"{self.name} is a built-in, not a conversion")
        return self.spec

    @property
    def kind(self) -> str:
        """One of ``KINDS``: 'conversion', 'geometric' or 'elementwise'."""
        if self.is_conversion:
            return "conversion"
        return "elementwise" if self.spec.is_elementwise else "geometric"

    @property
    def fmt(self) -> FloatFormat:
        """The target's precision as a FloatFormat."""
        return format_named(self.precision)

    @property
    def inputs(self) -> tuple:
        """The value arguments as ``catalogue.Arg``s (a conversion's source is ``x``, of
        kind 'float' or its integer type's name, e.g. 'uint64', so values print in it)."""
        if self.is_conversion:
            c = self.spec
            return (catalogue.Arg("x", "float" if c.src_format else c.src_dtype.name, False),)
        return self.spec.inputs

    @property
    def outputs(self) -> tuple:
        """The outputs as ``catalogue.Arg``s, ``ret`` first (a conversion: ``ret`` only)."""
        if self.is_conversion:
            c = self.spec
            return (catalogue.Arg("ret", "float" if c.dst_format else c.dst_dtype.name, True),)
        return self.spec.outputs

    @property
    def input_format(self) -> FloatFormat:
        """The format of the float inputs (a conversion's source format, or the
        precision's for an integer source)."""
        if self.is_conversion:
            return self.spec.src_format or self.fmt
        return self.fmt

    @property
    def output_format(self) -> FloatFormat:
        """The format of the float outputs (a conversion's destination format, or the
        precision's for an integer destination)."""
        if self.is_conversion:
            return self.spec.dst_format or self.fmt
        return self.fmt

    @property
    def required_precisions(self) -> frozenset:
        """The formats a device must support to run the target: its precision, and for a
        conversion every floating type it touches (half needs cl_khr_fp16 even in
        convert_half(float))."""
        if self.is_conversion:
            c = self.spec
            return frozenset({f.name for f in (c.src_format, c.dst_format) if f is not None}
                             | {self.precision})
        return frozenset({self.precision})

    @property
    def requirements(self) -> frozenset:
        """What a device must have to run the target: its ``required_precisions``, and
        'spirv' for a SPIR-V target (a device whose CL_DEVICE_IL_VERSION names SPIR-V;
        ``work.session.capabilities_of``)."""
        if self.front_end == "spirv":
            return self.required_precisions | {"spirv"}
        return self.required_precisions

    # ------------------------------------------------------------------ what applies
    def rules(self) -> tuple:
        """The rules that apply: the catalogue's prescribed-result rules of the built-in
        (F.9 and OpenCL's additional requirements, ``catalogue.rules_for``), or every
        conversion rule (``edgecases.conversions.rules``) for a conversion."""
        if self.is_conversion:
            return tuple(conversion_table.rules().values())
        return catalogue.rules_for(self.name)

    def bound(self, profile: str = "full", relaxed: bool = False):
        """The ULP bound of the built-in in this precision under ``profile`` ('full' or
        'embedded') and ``relaxed`` math (-cl-fast-relaxed-math): an
        ``edgecases.bounds.Bound`` (OpenCL C 3.0 §7.4, §7.5).  A conversion is correctly
        rounded (SPIR-V Env §3.8.2: ``None`` here; its verdict is exact).  Raises
        KeyError where the tables lack an entry."""
        if self.is_conversion:
            return None
        from edgecases import bounds
        return bounds.bound(self.name, self.precision, profile, relaxed)

    def __str__(self) -> str:
        return self.id
