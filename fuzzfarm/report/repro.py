"""``fuzzfarm repro``: a minimized, self-contained reproducer of one finding.

In three modules: fuzzfarm.report.repro_case (what a candidate is run as and how it is
judged), fuzzfarm.report.repro_shrink (hypothesis: strategies, the example database, the
minimization) and this one (finding the finding, reproducing, exporting), which
re-exports the first two's public names.

Given a signature id (``s`` + 12 hex, see ``fuzzfarm.store.signatures``) or a finding reference
``[<run_id>/]<unit_id>#<element>``, ``reproduce``:

1. **finds the finding** in the results directory and **its device** (by fingerprint among
   the local OpenCL devices, or any device a ``--device`` selector names);
2. **reduces it to one input element**: an element-wise built-in (or a conversion) found at
   vector width W > 1 is tried at width 1 first; where the rule class does not fail there,
   the W-lane vector is kept with every other lane zero, and failing that with the other
   lanes of the original work-item (regenerated from the unit's seed and recipe);
3. **minimizes that input with hypothesis** against the live device (``shrink``): the
   predicate runs the built-in on the device for the candidate and judges it with the
   project's checker under the device's ``Claims`` (fp config, profile, FP_ILOGB0 /
   FP_ILOGBNAN, build options) and holds when a finding of the same rule class
   (``signatures.rule_class``) and severity results *and* the acceptance test the exported
   reproducers embed (``acceptable``) rejects the device's result;
4. **re-verifies** the minimized input: three more runs on the device must all fail
   (else ``NotReproducible``);
5. **exports** ``kernel.cl`` (a SPIR-V finding: ``kernel.spvasm`` and ``kernel.spv``,
   built with ``clCreateProgramWithIL``), ``repro.py`` (pyopencl + numpy only), ``repro.c`` (C99 +
   libOpenCL), ``README.md``, ``repro.json`` and, for PyPI's PoCL, ``pocl.icd`` (an ICD
   file naming pyopencl's bundled libpocl, for the system ICD loader of ``repro.c``); and
6. **saves the minimized example** in a hypothesis ``DirectoryBasedExampleDatabase`` at
   ``RESULTS/_hypothesis`` (``save_example``; ``replay_examples`` reads it back).

What "simplest" means (``candidate_strategy``): each float argument is drawn by a
hypothesis strategy that picks a branch -- 0: a finite value (``st.floats(width=...)``,
so hypothesis's float shrinker orders it: small non-negative integers first (0, 1, 2, ...),
then simple fractions and short significands, positive before negative), 1: an infinity
(+ before -), 2: a NaN (+ before -, quiet before signaling, then the smallest payload:
0x7fc00000 is the simplest NaN) -- so finite beats infinite beats NaN; an int argument
is ``st.integers`` over its type (toward 0, then small magnitudes, positive first).
Shrinking minimizes the choice sequence (fewer and smaller choices), so sinpi's
CL.sinpi.positive_integer shrinks 8388607.0f to 1.0f.  The search is seeded with the
original input (and with the failing candidates of one batched launch over the special
values of each argument, and with the examples saved for this rule class before):
they are stored as hypothesis choice sequences in the secondary corpus of an in-memory
example database under the search's key, which hypothesis replays first and shrinks from.

The device is injectable: a ``Reproducer`` takes any callable mapping input arrays (by
argument name, buffer dtypes) to output arrays (by output name), so the shrinker is
tested against a planted fault without a device (tests/test_repro.py).
"""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

from fuzzfarm import errors
from fuzzfarm.device.discovery import bundled_pocl_library
from fuzzfarm.errors import BadInput
from fuzzfarm.formats import format_named
from fuzzfarm.report.render import render

__all__ = ["ReproError", "NotReproducible", "Buffer", "Case", "Outcome", "Reproducer",
           "parse_ref", "lookup", "target_for", "candidate_strategy", "encode", "shipped_icds",
           "shrink", "acceptable", "acceptance", "reproduce", "export", "save_example",
           "replay_examples", "db_dir", "class_key", "REPEATS", "DEFAULT_MAX_EXAMPLES",
           "DB_DIRNAME", "BUILD_LINE", "ReproReport", "ShrinkInfo", "summary",
           "claims_for", "device_call"]

#: The device-fault rule ids that have a reproducer (fuzzfarm.report.fault_repro): a kernel that
#: does not build has no input to minimize, but its source and log reproduce it.
FAULT_REPRODUCIBLE = frozenset({"device.build_failure"})

#: Runs of the minimized input that must all fail before it is exported.
REPEATS = 3
#: How repro.c is built (quoted in repro.c and README.md).
BUILD_LINE = "gcc -std=c99 -O2 -o repro repro.c -lOpenCL"
#: The work-group size the reproducers launch with (as fuzzfarm.device.runner.LOCAL_SIZE), or
#: the largest power of two the kernel allows; the one element sits in work-item 0 and
#: the other work-items get all-zero bits, as in a fuzzfarm run.
LOCAL_SIZE = 64

_FINDING_REF = re.compile(r"^(?:(?P<run>[^/#\s]+)/)?(?P<unit>[^/#\s]+)#(?P<element>\d+)$")


class ReproError(BadInput):
    """Bad input: an unknown, malformed or ambiguous reference, a missing results
    directory, a device that is not here (``fuzzfarm repro`` exits 2)."""


class NotReproducible(errors.NotReproducible):
    """The finding does not fail again on the device (``fuzzfarm repro`` exits 1)."""


# --------------------------------------------------------------------------- acceptance
# The acceptance test of the reproducers is fuzzfarm/report/repro_judge.py (standard library
# only): imported here, and its source copied into every repro.py, so fuzzfarm and the
# exported script judge alike (repro.c implements the same in C).
from fuzzfarm.report.repro_judge import acceptable  # noqa: E402


def _judge_source() -> str:
    """The functions of fuzzfarm/report/repro_judge.py, as a repro.py embeds them."""
    text = resources.files("fuzzfarm.report").joinpath("repro_judge.py").read_text()
    return text[text.index('"""', 3) + 3:].strip("\n") + "\n"


# --------------------------------------------------------------------------- references
_SIGNATURE_PREFIX = re.compile(r"^s[0-9a-f]{6,11}$")


def parse_ref(text: str) -> dict:
    """``{"signature": id}`` for ``s`` + 12 hex digits or a prefix of one (``s`` + at least
    6: `fuzzfarm findings` prints the shortest unique one), or ``{"run_id": str | None,
    "unit_id": str, "element": int}`` for ``[<run_id>/]<unit_id>#<element>``.  Raises
    ReproError with one line otherwise (an issue id ``i...`` included)."""
    from fuzzfarm.store.signatures import SIGNATURE_RE
    t = (text or "").strip()
    if _SIGNATURE_PREFIX.match(t):          # 's' and 6 to 11 hex digits: a unique prefix
        return {"signature": t}
    if SIGNATURE_RE.match(t):
        if t.startswith("i"):
            raise ReproError(f"{t!r} is an issue id; give a signature id (s + 12 hex digits, "
                             f"`fuzzfarm findings RESULTS`) or a finding <run_id>/<unit_id>"
                             f"#<element>")
        return {"signature": t}
    m = _FINDING_REF.match(t)
    if m:
        return {"run_id": m.group("run"), "unit_id": m.group("unit"),
                "element": int(m.group("element"))}
    raise ReproError(f"{text!r} is neither a signature id (s + 12 hex digits) nor a finding "
                     f"reference <run_id>/<unit_id>#<element> (or <unit_id>#<element>)")


def lookup(results: str | os.PathLike, ref: str) -> dict:
    """The finding row ``ref`` names in ``results`` (a dict of store.FINDINGS_SCHEMA plus
    ``rule_class``, ``signature`` and ``issue``).  A signature gives its earliest finding
    (its example in ``signatures.summarize``), a failure before a note.  Raises
    ReproError for a missing directory, an unknown or ambiguous reference, or a device
    fault (which has no single input)."""
    import pyarrow.compute as pc

    from fuzzfarm.store import dataset as store
    from fuzzfarm.store.signatures import with_signatures
    parsed = parse_ref(ref)
    base = Path(results)
    if not base.is_dir():
        raise ReproError(f"RESULTS {str(results)!r} is not a results directory")
    try:
        table = store.read_findings(base)
    except store.StoreError as exc:
        raise ReproError(str(exc)) from None
    if "signature" in parsed:
        if table.num_rows == 0:
            raise ReproError(f"unknown signature {ref!r}: {str(results)!r} holds no findings")
        table = with_signatures(table)
        want = parsed["signature"]
        matches = sorted({x for x in table["signature"].to_pylist() if x.startswith(want)})
        if len(matches) > 1:
            raise ReproError(f"signature prefix {ref!r} is ambiguous in {str(results)!r}: "
                             f"{', '.join(matches[:5])}{' ...' if len(matches) > 5 else ''}")
        rows = table.filter(pc.equal(table["signature"], matches[0])).to_pylist() \
            if matches else []
        if not rows:
            raise ReproError(f"unknown signature {ref!r} in {str(results)!r} (see "
                             f"`fuzzfarm findings {results}`)")
        order = {"fail": 0, "note": 1, "fault": 2}
        rows.sort(key=lambda r: (order.get(r["severity"], 3), r["time"], r["run_id"],
                                 r["unit_id"], r["element"]))
        row = rows[0]
    else:
        mask = pc.and_(pc.equal(table["unit_id"], parsed["unit_id"]),
                       pc.equal(table["element"], parsed["element"]))
        if parsed["run_id"]:
            mask = pc.and_(mask, pc.equal(table["run_id"], parsed["run_id"]))
        sub = table.filter(mask)
        if sub.num_rows == 0:
            raise ReproError(f"no finding {ref!r} in {str(results)!r}")
        rows = with_signatures(sub).to_pylist()
        runs = sorted({r["run_id"] for r in rows})
        if len(runs) > 1:
            raise ReproError(f"finding {ref!r} is ambiguous: unit {parsed['unit_id']} is in "
                             f"runs {', '.join(runs)}; write <run_id>/{ref}")
        sigs = sorted({(r["signature"], r["rule_class"], r["severity"]) for r in rows})
        if len({(s[1], s[2]) for s in sigs}) > 1:
            raise ReproError(f"finding {ref!r} is ambiguous: element {parsed['element']} "
                             f"breaks {len(sigs)} rules ("
                             + ", ".join(f"{s[1]} {s[0]}" for s in sigs)
                             + "); give one of these signatures")
        rows.sort(key=lambda r: r["output"] != "ret")
        row = rows[0]
    if (row["severity"] == "fault" or int(row["element"]) < 0) \
            and row["rule_id"] not in FAULT_REPRODUCIBLE:
        raise ReproError(f"{ref!r} is a device fault ({row['rule_id']}) of a whole unit; it "
                         f"has no single input to reproduce (its inputs are in "
                         f"{results}/_faults/{row['run_id']}/)")
    return row


from fuzzfarm.report.repro_shrink import (  # noqa: E402,F401 (part of repro's API)
    DB_DIRNAME, DEFAULT_MAX_EXAMPLES, ShrinkInfo, _saved, candidate_strategy, class_key,
    db_dir, encode, replay_examples, save_example, shrink,
)
from fuzzfarm.report.repro_case import (  # noqa: E402,F401 (part of repro's API)
    _U64, Outcome, Reproducer, Buffer, Case, acceptance, claims_for, device_call,
    target_for,
)

# --------------------------------------------------------------------------- reproduce
@dataclass
class ReproReport:
    """What ``reproduce`` did: the finding row, the device (DeviceInfo), the Case, the
    original and minimized candidates, the last Outcome of the minimized one, how the
    shrink went, and the files written."""

    row: dict
    info: object
    target: Case
    original: tuple
    minimized: tuple
    outcome: Outcome
    shrink: ShrinkInfo | None
    files: list
    out: Path
    runs: int = REPEATS
    notes: list = field(default_factory=list)


def _original_context(row: dict, results, width: int) -> tuple | None:
    """Per argument, the ``width`` lanes of the finding's work-item, regenerated from its
    unit (seed and recipe); None when they cannot be."""
    from fuzzfarm.report.verify import run_per_recipe
    from fuzzfarm.work.make import make_inputs
    from fuzzfarm.work.unit import unit_from_row
    try:
        full = make_inputs(unit_from_row(row, width, run_per_recipe(results)))
    except Exception:           # noqa: BLE001 - a row it cannot remake: no context
        return None
    e = int(row["element"])
    lo = e - e % width
    ctx = []
    for name, arr in full.items():
        lanes = arr[lo:lo + width]
        if len(lanes) < width:
            return None
        ctx.append(tuple(int(v) for v in lanes))
    return tuple(ctx)


def _choose_target(row: dict, results, make_rep: Callable[[Case], Reproducer],
                   notes: list) -> tuple[Reproducer, tuple]:
    """The Reproducer of the fewest-lanes variant in which the original input fails:
    width 1, else width W with zero lanes beside it, else with the original work-item's
    other lanes.  Raises NotReproducible when none fails."""
    base = target_for(row)
    original = base.from_u64(row["input_bits"])
    variants: list = []
    if base.width > 1 and not base.geometric:
        def with_original_lanes():
            ctx = _original_context(row, results, base.width)
            return None if ctx is None else target_for(row, context=ctx)

        variants.append(("width 1", lambda: target_for(row, width=1, lane=0)))
        variants.append((f"width {base.width}, other lanes zero", lambda: base))
        variants.append((f"width {base.width}, the other lanes of the original work-item",
                         with_original_lanes))
    else:
        variants.append((f"width {base.width}", lambda: base))
    tried = []
    for label, make in variants:
        t = make()
        if t is None:
            continue
        tried.append(label)
        rep = make_rep(t)
        if rep.evaluate([original])[0].holds:
            if len(variants) > 1:
                notes.append(f"found at width {base.width}, lane {base.lane}; reproduced at "
                             f"{label}" + (f" (not at: {', '.join(tried[:-1])})"
                                           if len(tried) > 1 else ""))
            return rep, original
    raise NotReproducible(
        f"the original input {base.describe(original)} does not fail {row['rule_class']} "
        f"on this device now (tried {'; '.join(tried)})")


def repro_device(row: dict, device: str | None = None):
    """The DeviceInfo a reproducer of ``row`` runs on: the one ``device`` (a --device
    selector) selects, else the finding's own device, found by fingerprint; None when
    that is not attached.  Raises ReproError for a selector that matches no device or
    several."""
    from fuzzfarm.device import discovery as dev
    infos = dev.list_devices()
    if device:
        try:
            chosen = dev.select_devices(device, infos)
        except dev.DeviceSelectionError as exc:
            raise ReproError(str(exc)) from None
        if len(chosen) != 1:
            raise ReproError(f"--device {device!r} selects {len(chosen)} devices; a "
                             f"reproducer runs on one (see `fuzzfarm devices`)")
        return chosen[0]
    return next((d for d in infos if d.fingerprint == row["device_fingerprint"]), None)


def _attached() -> str:
    """The attached devices, for messages: 'index label [fingerprint]; ...' or 'none'."""
    from fuzzfarm.device import discovery
    return "; ".join(f"{d.index} {d.label} [{d.fingerprint}]"
                     for d in discovery.list_devices()) or "none"


def reproduce(results: str | os.PathLike, ref: str, out: str | os.PathLike,
              device: str | None = None, do_shrink: bool = True,
              max_examples: int = DEFAULT_MAX_EXAMPLES, log: Callable[[str], None] = None,
              row: dict | None = None) -> ReproReport:
    """``fuzzfarm repro``: look the finding up, run it on its device (or the one ``device``
    selects), reduce it to one element, minimize it (unless ``do_shrink`` is False),
    re-verify it REPEATS times, export the reproducers to ``out`` and save the example
    in ``RESULTS/_hypothesis``.  ``row``: the finding ``lookup`` gave for ``ref``, when
    the caller has it already.  (Where the finding's device is not attached,
    ``repro_recorded.export_recorded`` exports the recorded finding, unverified.)  Raises
    ReproError (bad input) or NotReproducible."""
    from fuzzfarm.device.runner import DeviceRunner
    from fuzzfarm.store import dataset as store
    from fuzzfarm.report.verify import run_constants

    log = log or (lambda msg: None)
    row = row if row is not None else lookup(results, ref)
    info = repro_device(row, device)
    if info is None:
        raise ReproError(
            f"the finding's device {row['device']} ({row['platform']}, driver "
            f"{row['driver_version']}) [{row['device_fingerprint']}] is not attached "
            f"here; choose another with --device (available: " + _attached() + ")")
    base = target_for(row)
    for p in sorted(base.target.required_precisions):
        if not info.supports(format_named(p)):
            raise ReproError(f"{info.label} lacks {p}, which {row['function']} needs")
    try:
        store.check_writable(out)
    except store.StoreError as exc:
        raise ReproError(str(exc)) from None
    bo = row.get("build_options") or ""
    runner = DeviceRunner(info, bo)
    consts = runner.device_constants()
    if row["device_fingerprint"] == info.fingerprint:
        consts = run_constants(results).get(info.fingerprint) or consts
    claims = claims_for(info, base.target, bo, consts)

    def make_rep(t: Case) -> Reproducer:
        return Reproducer(t, device_call(runner, t), claims)

    notes: list = []
    log(f"running {row['function']} {row['rule_class']} on {info.label} [{info.fingerprint}]")
    rep, original = _choose_target(row, results, make_rep, notes)
    target = rep.target
    info_shrink = None
    minimized = original
    if do_shrink:
        saved = [target.from_u64(bits) for _, bits in
                 _saved(db_dir(results), target.function, target.precision,
                        target.rule_class)
                 if len(bits) == target.arity]
        log(f"minimizing {target.describe(original)} with hypothesis "
            f"(max_examples={max_examples})")
        minimized, info_shrink = shrink(rep, original, max_examples, seeds=saved)
    outcomes: list = []
    for _ in range(REPEATS):                # separate launches, none from the cache
        outcomes += rep.evaluate([minimized], fresh=True)
    bad = [o for o in outcomes if not o.holds]
    if bad:
        raise NotReproducible(
            f"{target.describe(minimized)} failed {row['rule_class']} in "
            f"{len(outcomes) - len(bad)} of {len(outcomes)} runs on {info.label}; "
            f"not reproducible")
    outcome = outcomes[-1]
    report = ReproReport(row, info, target, original, minimized, outcome, info_shrink, [],
                         Path(out), len(outcomes), notes)
    report.files = export(report)
    try:
        save_example(db_dir(results), target, minimized)
    except OSError as exc:          # a read-only results directory: the export stands
        notes.append(f"example not saved in {db_dir(results)}: {exc}")
    return report


# --------------------------------------------------------------------------- export
def _spec(report: ReproReport) -> dict:
    """Everything a reproducer embeds (also written as repro.json)."""
    t, o, row, info = report.target, report.outcome, report.row, report.info
    name, source = t.kernel(report.minimized)
    f = o.finding
    out_slot = t.output_slot(f.output)
    ins = t.arrays([report.minimized])
    outputs = t.outputs()
    judge_index = 0 if t.geometric else t.lane
    return {
        "fuzzfarm_repro": 1,
        "function": t.function, "precision": t.precision, "vector_width": t.width,
        "finding_vector_width": int(row["vector_width"]),
        "build_options": t.build_options, "kernel_name": name, "kernel_source": source,
        "front_end": t.front_end,
        # the input compiled as constants (a constants door's finding): no input buffers
        "literal": t.literal,
        # a SPIR-V module's binary, as the driver takes it (clCreateProgramWithIL)
        "kernel_il": _il_hex(source) if t.front_end == "spirv" else None,
        "rule_id": f.rule_id, "rule_class": t.rule_class, "severity": f.severity,
        "section": f.section, "sentence": f.sentence, "reading": f.reading or "",
        "signature": row.get("signature"), "finding": f"{row['run_id']}/{row['unit_id']}"
                                                      f"#{row['element']}",
        "device": {"name": info.name, "platform": info.platform_name,
                   "platform_version": info.platform_version, "vendor": info.vendor,
                   "driver_version": info.driver_version, "version": info.version,
                   "fingerprint": info.fingerprint, "label": info.label,
                   "profile": info.profile,
                   "fp_config": " ".join(info.fp_flags(t.precision))},
        "recorded_device": {"name": row["device"], "platform": row["platform"],
                            "driver_version": row["driver_version"],
                            "fingerprint": row["device_fingerprint"]},
        "lanes": t.width, "local_size": 1 if t.literal else LOCAL_SIZE,
        "inputs": [] if t.literal else [{"name": s.name, "dtype": s.dtype.name,
                                         "values": [int(v) for v in ins[s.name]]}
                                        for s in t.inputs()],
        "outputs": [{"name": s.name, "dtype": s.dtype.name, "scalar": s.scalar,
                     "bits": s.bits} for s in outputs],
        "judge": {"output": f.output, "index": judge_index, "count": len(o.values),
                  "bits": out_slot.bits, "accept": o.accept},
        "input": t.describe(report.minimized), "input_bits": t.u64(report.minimized),
        "input_text": _input_text(t, report.minimized),
        "original_input": t.describe(report.original),
        "original_input_bits": t.u64(report.original),
        "original_outputs": row["outputs"], "original_expected": row["expected"],
        "got": ", ".join(f"{k}=" + _describe_values(t.output_slot(k), v)
                         for k, v in o.outputs.items()),
        "got_bits": {k: [int(x) & _U64 for x in v] for k, v in o.outputs.items()},
        "judged_values": [int(v) for v in o.values],
        "expected": o.expected, "ulp_error": f.ulp_error,
        "runs": report.runs,
    }


def _input_text(t: Case, cand: tuple) -> str:
    """The input as the reproducers print it: for a vector call, which lane holds it."""
    text = t.describe(cand)
    if t.width > 1 and not t.geometric:
        others = "zero" if t.context is None else "as in the original work-item: " + \
            "; ".join(f"{s.name}=({', '.join(s.describe(v) for v in lanes)})"
                      for s, lanes in zip(t.inputs(), t.context))
        text += f" in lane {t.lane} of a {t.width}-lane vector (the other lanes {others})"
    return text


def _describe_values(slot: Buffer, values) -> str:
    if len(values) == 1:
        return slot.describe(values[0])
    return "(" + ", ".join(slot.describe(v) for v in values) + ")"


def _il_hex(module_text: str) -> str:
    """The SPIR-V binary of assembly ``module_text``, as hex digits."""
    from fuzzfarm.device import spirv
    return spirv.assemble(module_text).hex()


def _c_bytes(hex_digits: str) -> str:
    """Hex digits as the lines of a C array initializer of bytes."""
    data = bytes.fromhex(hex_digits)
    return "\n".join("    " + ", ".join(f"0x{b:02x}" for b in data[k:k + 16]) + ","
                     for k in range(0, len(data), 16))


def _py_str(text: str) -> str:
    """A Python literal of ``text``: triple-quoted where it reads well."""
    if "\\" not in text and '"""' not in text and not text.endswith('"'):
        return '"""' + text + '"""'
    return repr(text)


# The text of repro.py: fuzzfarm/report/templates/repro.py.j2 (jinja2, package data).


def _python_script(spec: dict) -> str:
    def rows(items):
        return "[\n" + "".join(f"    {it!r},\n" for it in items) + "]"

    inputs = rows([(i["name"], i["dtype"], [_HexInt(v) for v in i["values"]])
                   for i in spec["inputs"]])
    outputs = rows([(o["name"], o["dtype"], o["scalar"]) for o in spec["outputs"]])
    accept = rows([{k: (_HexInt(v) if k == "value" and spec["judge"]["bits"] else v)
                    for k, v in a.items()} for a in spec["judge"]["accept"]])
    d = spec["device"]
    return render("repro.py.j2",
        title=f"{spec['function']}({spec['input']}) on {d['label']}",
        rule_id=spec["rule_id"], section=spec["section"], sentence=spec["sentence"],
        device=d["name"], platform=d["platform"], driver_version=d["driver_version"],
        icd_files=spec["icd_files"], build_options=spec["build_options"],
        kernel_name=spec["kernel_name"], kernel_source=_py_str(spec["kernel_source"]),
        kernel_il=spec.get("kernel_il"), lanes=spec["lanes"], local_size=spec["local_size"],
        inputs=inputs,
        outputs=outputs, judge_output=spec["judge"]["output"],
        judge_index=spec["judge"]["index"], judge_count=spec["judge"]["count"],
        judge_bits=spec["judge"]["bits"], accept=accept, expected=spec["expected"],
        input_text=spec["input_text"], judge_src=_judge_source())


class _HexInt(int):
    """An int that writes itself in hex (for bit patterns in generated sources)."""

    def __repr__(self) -> str:
        return hex(self)


def _c_string(text: str) -> str:
    """``text`` as C string literal lines."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        esc = line.replace("\\", "\\\\").replace('"', '\\"')
        nl = "\\n" if k < len(lines) - 1 else ""
        if esc or nl:
            out.append(f'    "{esc}{nl}"')
    return "\n".join(out) if out else '    ""'


_C_SIZES = {"uint8": (1, 0), "int8": (1, 1), "uint16": (2, 0), "int16": (2, 1),
            "uint32": (4, 0), "int32": (4, 1), "uint64": (8, 0), "int64": (8, 1)}
_C_KINDS = {"bits": "ACC_BITS", "int": "ACC_INT", "nan": "ACC_NAN", "qnan": "ACC_QNAN",
            "zero": "ACC_ZERO", "ulp": "ACC_ULP", "payload": "ACC_PAYLOAD",
            "differs": "ACC_DIFFERS"}

# The text of repro.c: fuzzfarm/report/templates/repro.c.j2 (jinja2, package data).


def _c_escape(text: str) -> str:
    return str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _c_program(spec: dict, icd_dir: str | None) -> str:
    arrays, rows = [], []
    for k, i in enumerate(spec["inputs"]):
        size, signed = _C_SIZES[i["dtype"]]
        vals = ", ".join(f"0x{int(v) & _U64:x}ULL" for v in i["values"])
        arrays.append(f"static const u64 in_{k}[] = {{{vals}}};  /* {i['name']} */")
        rows.append(f'    {{"{i["name"]}", {size}, {signed}, 0, {len(i["values"])}, in_{k}}},\n')
    outs = []
    judge_output = 0
    for k, o in enumerate(spec["outputs"]):
        size, signed = _C_SIZES[o["dtype"]]
        outs.append(f'    {{"{o["name"]}", {size}, {signed}, {int(o["scalar"])}, 0, NULL}},\n')
        if o["name"] == spec["judge"]["output"]:
            judge_output = k
    diffs, acc = [], []
    for k, a in enumerate(spec["judge"]["accept"]):
        kind = _C_KINDS[a["kind"]]
        if a["kind"] == "differs":
            vals = ", ".join(f"0x{int(v) & _U64:x}ULL" for v in a["values"])
            diffs.append(f"static const u64 differs_{k}[] = {{{vals}}};")
            acc.append(f"    {{{kind}, 0, 0, 0, differs_{k}}},\n")
        else:
            value = int(a.get("value", 0)) & _U64
            acc.append(f"    {{{kind}, 0x{value:x}ULL, {float(a.get('ulps', 0))!r}, "
                       f"{float(a.get('abs', 0))!r}, NULL}},\n")
    d = spec["device"]
    pocl = ""
    if icd_dir:
        pocl = ("\n *         The drivers it was found with are shipped beside it as ICD files"
                "\n *         (where OCL_ICD_VENDORS is unset it points the loader at them):"
                f"\n *         OCL_ICD_VENDORS={icd_dir} ./repro")
    return render("repro.c.j2",
        title=_c_escape(f"{spec['function']}({spec['input']}) on {d['label']}").replace("*/", "* /"),
        rule_id=spec["rule_id"], section=_c_escape(spec["section"]).replace("*/", "* /"),
        sentence=_c_escape(spec["sentence"]).replace("*/", "* /"), build_line=BUILD_LINE,
        device_c=_c_escape(d["name"]), platform_c=_c_escape(d["platform"]),
        driver_c=_c_escape(d["driver_version"]), device=d["name"], platform=d["platform"],
        driver_version=d["driver_version"], icd_files=spec["icd_files"], pocl_note=pocl,
        kernel_source=_c_string(spec["kernel_source"]), kernel_name=spec["kernel_name"],
        kernel_il=_c_bytes(spec["kernel_il"]) if spec.get("kernel_il") else None,
        build_options=_c_escape(spec["build_options"]),
        input_text=_c_escape(spec["input_text"]),
        expected_text=_c_escape(spec["expected"]), lanes=spec["lanes"],
        local_size=spec["local_size"], judge_bits=spec["judge"]["bits"],
        judge_output=judge_output, judge_index=spec["judge"]["index"],
        judge_count=spec["judge"]["count"], input_arrays="\n".join(arrays),
        input_rows="".join(rows), output_rows="".join(outs),
        differs_arrays="\n".join(diffs), accept_rows="".join(acc))


def _accept_text(spec: dict) -> str:
    bits = spec["judge"]["bits"]
    parts = []
    for a in spec["judge"]["accept"]:
        k = a["kind"]
        hx = (lambda v: f"0x{int(v):0{bits // 4}x}") if bits else str
        if k == "bits":
            parts.append(f"exactly {hx(a['value'])}")
        elif k == "int":
            parts.append(f"exactly {a['value']}")
        elif k == "nan":
            parts.append("any NaN")
        elif k == "qnan":
            parts.append("a quiet NaN")
        elif k == "zero":
            parts.append("+0 or -0")
        elif k == "payload":
            parts.append(f"a NaN with payload {hex(a['value'])}")
        elif k == "ulp":
            s = (f"within {a['ulps']:g} ULP of the correctly rounded reference "
                 f"{hx(a['value'])}")
            if a.get("abs"):
                s += f" (or within {a['abs']:g} of it)"
            parts.append(s)
        elif k == "differs":
            parts.append("anything but the values returned now ("
                         + ", ".join(hx(v) for v in a["values"])
                         + "; no prescribed result could be stated)")
    return "; or ".join(parts)


def _readme(spec: dict, report: ReproReport, icd_dir: str | None) -> str:
    """The reproducer's README.md (templates/repro.md.j2)."""
    sh = report.shrink
    how = "not minimized (--no-shrink)" if sh is None else (
        f"minimized with hypothesis against the live device ({sh.candidates} candidates "
        f"tried, {sh.launches} kernel launches, {sh.seconds:.1f} s"
        + ("" if sh.seeded else "; the original could not seed the search") + ")")
    return render("repro.md.j2", spec=spec, d=spec["device"], rd=spec["recorded_device"],
                  how=how, accept=_accept_text(spec), build_line=BUILD_LINE, icd_dir=icd_dir)


def shipped_icds(info) -> list[tuple[str, str]]:
    """(ICD file name, driver library) of the drivers a reproducer ships beside itself, so
    that it finds a driver the system's loader does not (``OCL_ICD_VENDORS`` pointed at
    its folder, which its programs set where the variable is unset): where ``info`` (a
    DeviceInfo, or None) is PyPI's PoCL, or this Python environment installed a driver
    (Intel's intel-opencl-rt: fuzzfarm.device.icd), those with the system's drivers and
    PyPI's PoCL beside them, as pyopencl shows them; [] where the system's loader finds
    every driver as installed."""
    from fuzzfarm.device import icd
    from fuzzfarm.device.discovery import bundled_pocl_libraries
    lib = bundled_pocl_library(info) if info is not None else None
    drivers = icd.registered()              # what fuzzfarm itself points the loader at
    if lib is None and not drivers:
        return []
    found = {i.name: i.library for i in drivers or icd.system_icds()}
    # PyPI's PoCL (what pyopencl shows beside any driver): the finding's own first
    pocl = list(dict.fromkeys(([lib] if lib else []) + bundled_pocl_libraries()))
    found.update({("pocl.icd" if k == 0 else f"pocl-{k}.icd"): p for k, p in enumerate(pocl)})
    return sorted(found.items())


def export(report: ReproReport) -> list[Path]:
    """Write the reproducer files to ``report.out``; returns their paths."""
    out = Path(report.out)
    out.mkdir(parents=True, exist_ok=True)
    icds = shipped_icds(report.info)
    spec = {**_spec(report), "icd_files": [name for name, _ in icds]}
    icd_dir = str(out.resolve()) if icds else None
    files = []

    def write(name: str, text: str, mode: int | None = None) -> None:
        p = out / name
        p.write_text(text)
        if mode is not None:
            p.chmod(mode)
        files.append(p)

    if spec.get("kernel_il"):               # a SPIR-V finding: the module, text and binary
        write("kernel.spvasm", spec["kernel_source"])
        (out / "kernel.spv").write_bytes(bytes.fromhex(spec["kernel_il"]))
        files.append(out / "kernel.spv")
    else:
        write("kernel.cl", spec["kernel_source"])
    write("repro.py", _python_script(spec), 0o755)
    write("repro.c", _c_program(spec, icd_dir))
    for name, lib in icds:
        write(name, lib + "\n")
    write("README.md", _readme(spec, report, icd_dir))
    write("repro.json", json.dumps(spec, indent=2, sort_keys=True, default=str) + "\n")
    return files


def summary(report: ReproReport) -> list[str]:
    """Lines for the terminal."""
    t, o = report.target, report.outcome
    lines = [f"{t.function} {t.precision} width {t.width}"
             + (f" -b '{t.build_options}'" if t.build_options else "")
             + f": {report.row['rule_class']} on {report.info.label} "
             f"[{report.info.fingerprint}]"]
    lines += [f"  note: {n}" for n in report.notes]
    if report.shrink is not None:
        s = report.shrink
        lines.append(f"  original:  {t.describe(report.original)}")
        lines.append(f"  minimized: {t.describe(report.minimized)}  ({s.candidates} "
                     f"candidates tried, {s.launches} launches, {s.seconds:.1f} s)")
    else:
        lines.append(f"  input: {t.describe(report.minimized)} (not minimized)")
    slot = t.output_slot(o.finding.output)
    lines.append(f"  got {o.finding.output}=" + ", ".join(slot.describe(v) for v in o.values)
                 + f"  expected {o.expected}  " + (f"({report.runs} of {report.runs} runs fail)"
                                                   if report.runs else "(recorded; not re-verified)"))
    lines.append(f"  wrote {', '.join(p.name for p in report.files)} to {report.out}/")
    return lines


if __name__ == "__main__":      # pragma: no cover
    sys.exit("use `fuzzfarm repro`")
