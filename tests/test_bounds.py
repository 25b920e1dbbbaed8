"""The ULP bound tables as data: edgecases/data/ulp_bounds.toml through edgecases.bounds.

Fast, no device.  The seeds are re-read independently of the data file:

1. every cell of the OpenCL SPIR-V Env Tables 1 and 2 (three columns) and 3 (full and
   embedded profiles) is an entry with the cell text verbatim and the value the cell says
   (a test per table, function and precision; test ids from the rows, docs/design.md, decision 13);
2. every built-in has full and embedded bounds in every precision it exists in;
3. OpenCL C 3.0 §7.4 and the OpenCL 2.1 Environment §8.4 are compared cell by cell: where
   a seed disagrees the stricter value is the bound and an error up to the looser one is a
   note, never a failure;
4. the evaluator: width expressions at n = 1..4, relaxed exp, the log and sin/cos pieces,
   undefined pow pieces, the note severity of "non-derived" bounds;
5. malformed data raise CatalogueError with a one-line message naming file, table and
   function.
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases import bounds as B
from edgecases import catalogue
from edgecases.bounds import Limits, bound, bounds, load_bounds
from edgecases.catalogue import CatalogueError
from fuzzfarm.formats import BINARY32, format_named

SPIRV = "opencl_spirv_env_numerical_compliance.txt"
OPENCL_C = "opencl_c_relative_error_ulps.adoc"
ENV21 = "opencl_2.1_environment.txt"
FUNCTIONS = catalogue.functions()
PRECISIONS = ("binary64", "binary32", "binary16")
F = BINARY32


def _seed(name: str) -> str:
    from spec_texts import read_text
    return read_text(name)


def _have(*names: str) -> bool:
    """Whether the specification texts ``names`` are at hand (FUZZFARM_SPEC_TEXTS)."""
    from spec_texts import text_path
    return all(text_path(n) is not None and text_path(n).is_file() for n in names)


# -- reading the SPIR-V Env tables ----------------------------------------------------------

_ROW = re.compile(r"^(OpF(Add|Sub|Mul|Div)( for .*)?|OpExtInst \w+|OpFMul and OpFAdd,)$")
_ENDS = {1: "ULP Values for Math Instructions - Embedded Profile",
         2: "ULP Values for Math Instructions - Unsafe Math Optimizations Enabled",
         3: "Edge Case Behavior"}
#: SPIR-V rows -> catalogue names (the rest are "OpExtInst <name>").
_ROW_NAMES = {"OpFAdd": ("add",), "OpFSub": ("sub",), "OpFMul": ("mul",),
              "OpFDiv": ("divide", "recip"), "OpFDiv for 1.0 / x": ("recip",),
              "OpFDiv for x / y": ("divide",), "OpExtInst fmax_common": ("max",),
              "OpExtInst fmin_common": ("min",), "OpExtInst fclamp": ("clamp",)}


@lru_cache(maxsize=None)
def _spirv_rows(table: int) -> tuple:
    """((row, (cell paragraphs...)), ...) of SPIR-V Env Table ``table``."""
    lines = _seed(SPIRV).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"Table {table}. "))
    end = next(i for i in range(start, len(lines)) if lines[i].strip() == _ENDS[table])
    rows: list = []
    for para in (line.strip() for line in lines[start + 2:end] if line.strip()):
        if _ROW.match(para):
            rows.append([para, []])
        elif rows[-1][0] == "OpFMul and OpFAdd," and not rows[-1][1]:
            rows[-1][0] += " " + para          # the row name's second line: "for x * y + z"
        else:
            rows[-1][1].append(para)
    return tuple((r, tuple(c)) for r, c in rows)


def _names(row: str) -> tuple:
    if row in _ROW_NAMES:
        return _ROW_NAMES[row]
    if row.startswith("OpFMul and OpFAdd"):
        return ()
    return (row.split()[1],)


_ABSENT = [pytest.param(*[None] * 5, marks=pytest.mark.skip(reason="specification texts absent (FUZZFARM_SPEC_TEXTS)"))]


def _table12_cases():
    if not _have(SPIRV):
        return _ABSENT
    out = []
    for table, tid in ((1, "full"), (2, "embedded")):
        for row, cells in _spirv_rows(table):
            cols = dict(zip(PRECISIONS, cells)) if len(cells) == 3 else {"binary32": cells[0]}
            for prec, cell in cols.items():
                for fn in _names(row):
                    if prec in FUNCTIONS[fn].precisions:
                        out.append(pytest.param(tid, prec, fn, row, cell,
                                                id=f"{tid}-{prec}-{fn}"))
    return out


def _cell_value(cell: str, precision: str):
    """(kind, amount) a Table 1/2 cell says, read independently of the data file;
    amounts are floats or expression texts (the format's epsilon written EPS)."""
    c = cell.replace("\\<=", "<=").strip()
    if c.lower() == "correctly rounded":
        return ("correctly rounded", None)
    if c.startswith("Implementation-defined"):
        return ("implementation-defined", None)
    if c.startswith("Implemented either as a correctly rounded fma"):
        return ("fma or mul+add", None)
    if c.startswith("Any value allowed"):
        return ("unbounded", None)
    m = re.fullmatch(r"(?:<= ?)?(\d+(?:\.\d+)?) ulp( for sine and cosine values| for the "
                     r"remainder, at least the lower 7 bits of the integral quotient)?", c)
    if m:
        return ("ulps", float(m.group(1)))
    m = re.fullmatch(r"<= (.*) ulp, for gentype with vector width n", c)
    if m:
        return ("ulps", m.group(1))
    m = re.fullmatch(r"absolute error tolerance of '([^']*)'.*", c)
    if m:
        return ("absolute", re.sub(r"(HLF|FLT|DBL)_EPSILON", "EPS", m.group(1)))
    m = re.fullmatch(r"absolute error tolerance of ([\d.e-]+)", c)
    if m:
        return ("absolute", float(m.group(1)))
    raise AssertionError(f"unreadable cell {cell!r}")


def _as_pair(value: B.Value):
    a = value.amount
    return (value.kind, a.text if isinstance(a, B.Expr) else a)


def _data(tid: str, prec: str, fn: str) -> B.Bound:
    return {(b.table, b.precision, b.function): b for b in bounds()}[(tid, prec, fn)]


_RANK_WORDS = {"correctly rounded": 0.5, "fma or mul+add": 0.5, "implementation-defined": math.inf,
               "unbounded": math.inf}


def _rank(kind_amount) -> float:
    kind, amount = kind_amount
    return _RANK_WORDS[kind] if kind in _RANK_WORDS else float(amount)


@pytest.mark.parametrize("tid, prec, fn, row, cell", _table12_cases())
def test_table_1_2_cell_is_transcribed(tid, prec, fn, row, cell):
    """Cell text verbatim; the value is the cell's, or (where another seed is stricter)
    the cell's is the looser value and the stricter one cites its seed."""
    b = _data(tid, prec, fn)
    assert b.text == cell and b.row == row
    assert len(b.pieces) >= 1
    want = _cell_value(cell, prec)
    strict = b.pieces[0]
    if fn in ("mix", "smoothstep") and tid == "full" and prec == "binary32":
        assert {_as_pair(p.value) for p in b.pieces} == {want}
        return
    assert len(b.pieces) == 1 and not strict.when
    if not strict.source:                           # the SPIR-V cell is the bound
        assert _as_pair(strict.value) == want, b.describe()
        if strict.looser is not None:               # a looser seed, or the literal epsilon
            if strict.looser.kind == "absolute":   # the literal epsilon (tested below)
                assert fn in ("cross", "dot") and prec == "binary64"
            elif fn in ("distance", "length", "normalize") and prec == "binary64":
                pass    # the third cell, for the column-order reading (tested below)
            else:
                assert _rank(_as_pair(strict.looser)) > _rank(want)
    else:                                           # another seed is stricter
        assert strict.looser is not None and _as_pair(strict.looser) == want
        assert strict.looser_source == b.table.replace("full", "spirv_t1").replace(
            "embedded", "spirv_t2")
        assert _rank(_as_pair(strict.value)) < _rank(want)
    if fn == "remquo":
        assert b.quotient_bits == 7


def test_every_table_1_2_row_is_read():
    assert len(_spirv_rows(1)) == 116 and len(_spirv_rows(2)) == 108
    for table in (1, 2):
        for row, cells in _spirv_rows(table):
            assert len(cells) in (1, 3), (row, cells)
            for fn in _names(row):
                assert fn in FUNCTIONS, row


def test_geometric_epsilon_columns_are_read_as_the_formats_own():
    """Float64 names HLF_EPSILON and Float16 FLT_EPSILON (swapped): the bound uses each
    format's epsilon; binary64 keeps the literal (looser) tolerance as the note line."""
    for fn in ("cross", "dot"):
        cells = dict(zip(PRECISIONS, dict(_spirv_rows(1))[f"OpExtInst {fn}"]))
        assert "HLF_EPSILON" in cells["binary64"] and "FLT_EPSILON" in cells["binary16"]
        for prec in PRECISIONS:
            fmt = format_named(prec)
            b = bound(fn, prec)
            lim = b.limits({}, {}, fmt, width=3, max_abs=np.asarray([2.0]))
            per_eps = {"cross": 3, "dot": 4}[fn] * 4.0        # max * max * (3 | 2 * (n - 1))
            assert lim.absolute[0] == per_eps * 2.0 ** (1 - fmt.precision)
            if prec == "binary64":
                assert lim.note[0] and lim.fail_absolute[0] == per_eps * 2.0 ** -10
            else:
                assert not lim.note[0]


# -- Table 3 -----------------------------------------------------------------------------

def _relaxed_cases():
    if not _have(SPIRV):
        return [pytest.param(*[None] * 4, marks=pytest.mark.skip(reason="specification texts absent (FUZZFARM_SPEC_TEXTS)"))]
    out = []
    for row, cells in _spirv_rows(3):
        for fn in _names(row):
            for prof in ("full", "embedded"):
                out.append(pytest.param(prof, fn, row, "\n\n".join(cells),
                                        id=f"relaxed_{prof}-{fn}"))
    return out


def _bits(v: float) -> int:
    return int(np.asarray(v, np.float32).view(np.uint32))


def _limits_at(b, **vals) -> Limits:
    fn = FUNCTIONS[b.function]
    args, kinds = {}, {}
    for a in fn.inputs:
        v = vals.get(a.name, 0.75 if a.kind == "float" else 3)
        kinds[a.name] = a.kind
        args[a.name] = (np.asarray([_bits(v)], F.uint) if a.kind == "float"
                        else np.asarray([v], np.int32))
    return b.limits(args, kinds, F)


def _verdict(lim: Limits, ulp=None, absolute=None) -> str:
    e = np.asarray([np.inf if ulp is None else ulp])
    a = None if absolute is None else np.asarray([absolute])
    return str(lim.verdicts(e, a)[0])


def _relaxed_checks(cell: str, prof: str, fn: str):
    """Probes read from a Table 3 cell: (inputs, expectation) where the expectation is
    ('ulps', v) a failure just beyond v ulp, ('note_only', v) judged and never a failure,
    at most v ulp before a note, ('absolute', v) an absolute tolerance failing beyond v, or
    ('skip',) not judged.  Independent of the data file."""
    c = cell
    checks = []
    dom = re.search(r"For x in the domain \[(-?[\w{}.]+), ([\w{}.]+)\], the maximum absolute "
                    r"error is <= 2-(\d+) and larger otherwise", c)
    if dom:
        hi = math.pi if dom.group(2) == "{pi}" else float(dom.group(2))
        tol = 2.0 ** -int(dom.group(3))
        inside = float(np.float32(hi * 0.75))
        checks += [({"x": inside}, ("absolute", tol)), ({"x": -inside}, ("absolute", tol)),
                   ({"x": hi * 2}, ("skip",))]
    m = re.search(r"For x in the domain \[0\.5, 2\] the maximum absolute error is <= 2-(\d+); "
                  r"otherwise the maximum error is <=(\d) ulp for the full profile and <= (\d) "
                  r"ulp for the embedded profile", c)
    if m:
        u = float(m.group(2) if prof == "full" else m.group(3))
        checks += [({"x": 1.5}, ("absolute", 2.0 ** -int(m.group(1)))), ({"x": 3.0}, ("ulps", u))]
    m = re.fullmatch(r"<= (\d+) ulp", c)
    if m:
        checks.append(({}, ("ulps", float(m.group(1)))))
    m = re.search(r"<= 3 \+ floor\( fabs\(2 \* x\) \) ulp for the full profile, and <= (\d) ulp "
                  r"for the embedded profile", c)
    if m:
        for x in (0.75, 3.7, -10.0):
            full = 3 + math.floor(abs(2 * float(np.float32(x))))
            checks.append(({"x": x}, ("ulps", full) if prof == "full"
                           else ("ulps_upto", min(full, float(m.group(1))),
                                 max(full, float(m.group(1))))))
    m = re.search(r"<= 2\.5 ulp for x in the domain of 2-(\d+) to 2(\d+)( and y in the domain of "
                  r"2-\d+ to 2\d+)? for the full profile, and <= 3 ulp for the embedded profile", c)
    if m:
        inside = {"x": 3.0, "y": 1.5} if m.group(3) else {"x": 3.0}
        outside = {"x": 2.0 ** (int(m.group(2)) + 1)}
        if prof == "full":
            checks += [(inside, ("ulps", 2.5)), (outside, ("skip",))]
        else:
            checks += [(inside, ("ulps_upto", 2.5, 3.0)), (outside, ("note_only", 3.0))]
    if "For non-derived implementations, the error is <= 8192" in c:
        probe = {"x": 0.25, "y": 3} if fn in ("pown", "rootn") else {"x": 0.25, "y": 0.5}
        checks.append((probe, ("note_only", 8192.0)))
    if c.startswith("Implemented as") and "<=" not in c:       # a formula, no bound
        checks.append(({"x": 1.5, "y": 0.5}, ("skip",)))
    for clause, probe in (("Undefined for x = 0 and y = 0", {"x": 0.0, "y": 0}),
                          ("Undefined for x < 0 and non-integer y", {"x": -2.0, "y": 0.5}),
                          ("Defined only for x >= 0", {"x": -2.0, "y": 0.5}),
                          ("Defined for x in the domain (-1, 1)", {"x": 1.5})):
        if clause in c:
            if fn != "pow" and "y" in probe and isinstance(probe["y"], float):
                probe = {**probe, "y": 0.5}
            if fn in ("pown", "rootn"):
                probe = {**probe, "y": 0}
            checks.append((probe, ("skip",)))
    return checks


@pytest.mark.parametrize("prof, fn, row, cell", _relaxed_cases())
def test_table_3_cell_is_transcribed(prof, fn, row, cell):
    b = bound(fn, "binary32", prof, relaxed=True)
    assert b.relaxed and not b.fallback and b.table == f"relaxed_{prof}"
    assert b.text == cell and b.row == row
    if fn == "sincos":                      # "ulp values as defined for sin(x) and cos(x)"
        for other in ("sin", "cos"):
            o = bound(other, "binary32", prof, relaxed=True)
            for x in (0.5, -3.0, 3.1415925, 3.1415927, 100.0):
                a, c = _limits_at(b, x=x), _limits_at(o, x=x)
                for field in ("ulps", "absolute", "judged", "note"):
                    assert np.array_equal(getattr(a, field), getattr(c, field)), (other, x)
        return
    checks = _relaxed_checks(cell, prof, fn)
    assert checks, f"no reading of the cell {cell!r}"
    for probe, want in checks:
        lim = _limits_at(b, **probe)
        where = f"{fn} {prof} at {probe}: {b.describe()}"
        if want[0] == "skip":
            assert not lim.judged[0], where
            continue
        assert lim.judged[0], where
        if want[0] == "ulps":
            assert lim.ulps[0] == want[1] and not lim.note[0], where
            assert _verdict(lim, want[1]) == "ok" and _verdict(lim, want[1] + 0.01) == "fail", where
        elif want[0] == "ulps_upto":      # the seeds disagree: strict, note band, failure
            assert lim.ulps[0] == want[1] and _verdict(lim, want[1]) == "ok", where
            assert _verdict(lim, want[2] + 0.01) == "fail", where
            if want[2] > want[1]:
                assert _verdict(lim, want[2]) == "note", where
        elif want[0] == "note_only":
            assert lim.ulps[0] <= want[1] and lim.note[0], where
            assert _verdict(lim, want[1] + 1) == "note" and _verdict(lim, 1e30) == "note", where
        elif want[0] == "absolute":
            assert lim.absolute[0] == want[1] and not lim.note[0], where
            assert _verdict(lim, 2.0, want[1]) == "ok", where
            assert _verdict(lim, 1e6, want[1] * 1.001) == "fail", where


def test_every_table_3_row_is_an_entry_or_unmapped_with_reading():
    from importlib import resources
    data = tomllib.loads(resources.files("edgecases").joinpath("data", "ulp_bounds.toml")
                         .read_text(encoding="utf-8"))
    unmapped = {u["row"]: u for u in data.get("unmapped", [])}
    rows = _spirv_rows(3)
    assert len(rows) == 37
    for row, cells in rows:
        if not _names(row):
            assert row in unmapped and unmapped[row]["reading"], row
            assert unmapped[row]["cell"] == "\n".join(cells)
    # "x * y + z" is not the mad built-in: a relaxed mad keeps its Table 1/2 bound.
    m = bound("mad", relaxed=True)
    assert m.fallback and m.fma_or_mul_add and m.pieces == bound("mad").pieces
    assert bound("mad", profile="embedded", relaxed=True).implementation_defined


def test_relaxed_fallback_is_the_profile_table():
    for prof in ("full", "embedded"):
        for fn in ("ceil", "sqrt", "half_sin", "native_cos", "fma"):
            r, plain = bound(fn, "binary32", prof, relaxed=True), bound(fn, "binary32", prof)
            assert r.fallback and r.relaxed and r.pieces == plain.pieces
            assert "no row in the relaxed table" in r.source
        r = bound("sin", "binary64", prof, relaxed=True)      # Table 3 is binary32 only
        assert r.fallback and r.pieces == bound("sin", "binary64", prof).pieces


# -- coverage ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_every_function_has_a_bound_in_every_precision_and_profile(name):
    fn = FUNCTIONS[name]
    for prec in fn.precisions:
        for prof in ("full", "embedded"):
            for relaxed in (False, True):
                b = bound(name, prec, prof, relaxed)
                assert (b.function, b.precision, b.profile) == (name, prec, prof)
                assert b.pieces and not b.pieces[-1].when
                assert b.describe(), (name, prec, prof)
    for prec in set(PRECISIONS) - set(fn.precisions):
        with pytest.raises(KeyError, match=f"{name} exists in"):
            bound(name, prec)


def test_bound_errors_name_what_is_missing():
    with pytest.raises(KeyError, match="not in the catalogue"):
        bound("nosuch")
    with pytest.raises(KeyError, match="profile='minimal'"):
        bound("sin", profile="minimal")
    with pytest.raises(KeyError, match="half_sin exists in binary32 only"):
        bound("half_sin", "binary64")


def test_the_bounds_are_in_one_place():
    """edgecases.bounds depends on the catalogue, never the other way (no import cycle)."""
    assert not hasattr(catalogue, "bound") and not hasattr(catalogue, "Bound")
    assert {"Bound", "bound"} <= set(B.__all__)


def test_plain_bounds_keep_their_behaviour():
    s = bound("sin")
    assert (s.ulps, s.describe(), s.correctly_rounded) == (4.0, "<= 4 ulp", False)
    assert "Table 1" in s.source and s.profile == "full" and not s.note_only
    c = bound("ceil")
    assert c.correctly_rounded and c.ulps == 0.5 and c.describe() == "correctly rounded"
    n = bound("native_sin")
    assert n.implementation_defined and n.ulps is None and n.describe() == "implementation-defined"
    assert bound("fmod").ulps == 0.0 and bound("fmod").describe() == "<= 0 ulp"
    assert bound("sincos").applies_to == ("ret", "cosval") and bound("sincos").ulps == 4
    assert bound("half_sin").ulps == 8192 and bound("half_sin").severity == "fail"


# -- cross-seed comparison -----------------------------------------------------------------

def _adoc_tables() -> dict:
    lines = _seed(OPENCL_C).splitlines()
    out, i = {}, 0
    while i < len(lines):
        m = re.match(r"^\[\[(ulp_values_for_\w+)\]\]$", lines[i])
        if m:
            j = lines.index("|====", i)
            k = lines.index("|====", j + 1)
            cells: list = []
            for line in lines[j + 1:k]:
                if line.startswith("|"):
                    cells.append(line[1:].strip())
                elif line.strip() and cells:
                    cells[-1] += " " + line.strip()
            out[m.group(1)] = list(zip(cells[2::2], cells[3::2]))
            i = k
        i += 1
    return out


_ENV21_CELL = re.compile(r"(<= ?[\d.]+ ulp(?: for sine and cosine values)?|\b0 ulp|Correctly "
                         r"rounded|Implementation-defined|Built-in not defined|Any value allowed "
                         r"\(infinite ulp\)|Implemented either as a correctly rounded fma)")
_ENV21_NAME = re.compile(r"^(x \+ y|x - y|x \* y|1\.0  / x|x / y|[a-z_0-9]+(?:\([x, y]*\))?)\s")


def _env21_tables() -> dict:
    """Tables 8.1, 8.3 and 8.4 of the 2.1 environment (a PDF's text: cells wrap lines)."""
    lines = [line.replace("\u2013", "-").replace("<=1", "<= 1")
             for line in _seed(ENV21).splitlines()]
    starts = [i for i, line in enumerate(lines) if line.startswith("x + y Correctly rounded")]
    out = {}
    for key in ("8.1", "8.3", "8.4"):
        end = next(i for i, line in enumerate(lines)
                   if re.search(rf"Table {re.escape(key)}\s+ULP values", line))
        rows: list = []
        for line in lines[max(i for i in starts if i < end):end]:
            if not line.strip() or "ftp://" in line or re.match(r"^\d+ ", line):
                continue                                    # footnotes
            m = _ENV21_NAME.match(line + " ")
            if m and not line.startswith(("values", "followed", "rounded", "ulp)", "which")):
                rows.append([m.group(1), line[m.end():]])
            else:
                rows[-1][1] += " " + line
        out[key] = [(n, _ENV21_CELL.findall(re.sub(r"\s+", " ", t))) for n, t in rows]
    return out


def _other_name(n: str) -> str:
    n = n.replace("native_math::", "native_").replace("_x_", "x").replace("_y_", "y")
    return {"x + y": "add", "x - y": "sub", "x * y": "mul", "1.0  / x": "recip",
            "1.0 / x": "recip", "x / y": "divide"}.get(n, re.sub(r"\(.*", "", n))


def _other_seeds() -> dict:
    """(function, precision, profile) -> [(seed, (kind, amount))] from OpenCL C 3.0 §7.4
    (its double and half tables name no profile: both profiles) and the 2.1 Env."""
    out: dict = {}

    def put(fn, prec, prof, seed, cell):
        if "Built-in not defined" in cell or fn not in FUNCTIONS or prec not in FUNCTIONS[fn].precisions:
            return
        if cell.startswith("Implemented either"):
            cell = "Implemented either as a correctly rounded fma"
        out.setdefault((fn, prec, prof), []).append((seed, _cell_value(cell, prec)))

    targets = {"single_precision_builtin_math_functions": [("binary32", "full")],
               "single_precision_builtin_math_functions_for_embedded_profile":
                   [("binary32", "embedded")],
               "double_precision_builtin_math_functions": [("binary64", "full"),
                                                           ("binary64", "embedded")],
               "half_precision_builtin_math_functions": [("binary16", "full"),
                                                         ("binary16", "embedded")]}
    tables = _adoc_tables()
    assert len(tables) == 5, sorted(tables)
    for key, where in targets.items():
        rows = tables[f"ulp_values_for_{key}"]
        assert len(rows) >= 70, key
        for n, cell in rows:
            for prec, prof in where:
                put(_other_name(n), prec, prof, "OpenCL C 3.0 §7.4", cell)
    env = _env21_tables()
    for key, cols in (("8.1", [("binary32", "full"), ("binary16", "full")]),
                      ("8.3", [("binary64", "full")]),
                      ("8.4", [(("binary32", "binary64"), "embedded"), ("binary16", "embedded")])):
        assert len(env[key]) >= 70, key
        for n, cells in env[key]:
            fn = _other_name(n)
            if fn == "mad" and key == "8.1":      # the PDF interleaves the two mad cells
                cells = ["Implemented either as a correctly rounded fma",
                         "Any value allowed (infinite ulp)"]
            assert len(cells) == len(cols), (key, n, cells)
            for cell, (precs, prof) in zip(cells, cols):
                for prec in (precs if isinstance(precs, tuple) else (precs,)):
                    put(fn, prec, prof, f"OpenCL 2.1 Env Table {key}", cell)
    return out


@lru_cache(maxsize=None)
def _other_cached():
    return _other_seeds()


def _seed_cases():
    if not _have(OPENCL_C, ENV21, SPIRV):
        return [pytest.param(None, None, None, marks=pytest.mark.skip(reason="specification texts absent (FUZZFARM_SPEC_TEXTS)"))]
    keys = sorted(_other_cached())
    return [pytest.param(*k, id="-".join(k)) for k in keys]


def _equivalent(a, b) -> bool:
    loose = ("implementation-defined", "unbounded")
    return a == b or (a[0] in loose and b[0] in loose)


@pytest.mark.parametrize("fn, prec, prof", _seed_cases())
def test_other_seeds_agree_or_the_stricter_is_the_bound_and_the_looser_a_note(fn, prec, prof):
    others = _other_cached()[(fn, prec, prof)]
    b = bound(fn, prec, prof)
    spirv = next(_cell_value(c, prec) for r, cells in _spirv_rows(1 if prof == "full" else 2)
                 for c in [dict(zip(PRECISIONS, cells)).get(prec) if len(cells) == 3
                           else (cells[0] if prec == "binary32" else None)]
                 if c is not None and fn in _names(r))
    values = [spirv] + [v for _, v in others]
    p = b.pieces[0]
    assert len(b.pieces) == 1
    if all(_equivalent(v, spirv) for v in values):
        assert p.looser is None or p.value.kind == "absolute", b.describe()
        return
    strict = min(values, key=_rank)
    loose = max(values, key=_rank)
    assert _rank(_as_pair(p.value)) == _rank(strict), (b.describe(), values)
    assert p.looser is not None and _rank(_as_pair(p.looser)) == _rank(loose), b.describe()
    assert p.reading and all(s in p.reading for s in ("SPIR-V Env",)), p.reading
    # the verdicts: within the strict value ok, between the two a note, beyond the looser a failure
    lim = b.limits({a.name: np.zeros(1, format_named(prec).uint if a.kind == "float" else np.int32)
                    for a in FUNCTIONS[fn].inputs},
                   {a.name: a.kind for a in FUNCTIONS[fn].inputs}, format_named(prec))
    s, lo = _rank(strict), _rank(loose)
    assert lim.note[0] and _verdict(lim, s) == "ok"
    assert _verdict(lim, (s + lo) / 2 if math.isfinite(lo) else 1e30) == "note"
    if math.isfinite(lo):
        assert _verdict(lim, lo + 0.5) == "fail"


def test_seed_disagreements_are_found():
    """The comparison above is not vacuous: the known disagreements are there."""
    if not _have(OPENCL_C, ENV21):
        pytest.skip("seeds absent")
    o = _other_cached()
    assert ("OpenCL C 3.0 §7.4", ("correctly rounded", None)) in o[("sqrt", "binary64", "embedded")]
    assert ("OpenCL 2.1 Env Table 8.3", ("unbounded", None)) in o[("mad", "binary64", "full")]
    acos16 = bound("acos", "binary16", "embedded")
    assert acos16.ulps == 2 and acos16.pieces[0].looser.amount == 3
    lim = _limits_at_generic(acos16)
    assert [_verdict(lim, e) for e in (2.0, 2.5, 3.0, 3.01)] == ["ok", "note", "note", "fail"]


def _limits_at_generic(b):
    fmt = format_named(b.precision)
    fn = FUNCTIONS[b.function]
    return b.limits({a.name: np.zeros(1, fmt.uint if a.kind == "float" else np.int32)
                     for a in fn.inputs}, {a.name: a.kind for a in fn.inputs}, fmt)


def test_relaxed_seed_disagreements_give_notes():
    """Relaxed embedded 1/x: OpenCL 2.1 Env says 2.5 ulp (no profile named), SPIR-V Env 3 ulp;
    relaxed tanh: the 2.1 Env falls back to Table 8.1 (5 ulp), SPIR-V allows derived ones."""
    r = bound("recip", "binary32", "embedded", relaxed=True)
    lim = _limits_at(r, x=3.0)
    assert [_verdict(lim, e) for e in (2.5, 2.75, 3.0, 3.25)] == ["ok", "note", "note", "fail"]
    assert "2.1 Env" in lim.reading[0] and "SPIR-V Env" in lim.reading[0]
    t = bound("tanh", relaxed=True)
    lim = _limits_at(t, x=0.5)
    assert t.ulps == 5 and [_verdict(lim, e) for e in (5, 6, 1e9)] == ["ok", "note", "note"]
    e = bound("exp", "binary32", "embedded", relaxed=True)
    assert [_verdict(_limits_at(e, x=0.25), u) for u in (3, 4, 4.5)] == ["ok", "note", "fail"]
    assert [_verdict(_limits_at(e, x=-10.0), u) for u in (4, 20, 23, 24)] == \
        ["ok", "note", "note", "fail"]


# -- the evaluator ---------------------------------------------------------------------------

def _width_cells():
    out = []
    for row, cells in _spirv_rows(1) if _have(SPIRV) else ():
        for prec, cell in (zip(PRECISIONS, cells) if len(cells) == 3 else [("binary32", cells[0])]):
            m = re.fullmatch(r"<= (.*) ulp, for gentype with vector width n", cell)
            if m:
                out.append(pytest.param(_names(row)[0], prec, m.group(1),
                                        id=f"{_names(row)[0]}-{prec}"))
    return out or [pytest.param(None, None, None, marks=pytest.mark.skip(reason="seed absent"))]


@pytest.mark.parametrize("fn, prec, formula", _width_cells())
def test_width_expressions_at_n_1_to_4(fn, prec, formula):
    fmt = format_named(prec)
    b = bound(fn, prec)
    for n in (1, 2, 3, 4):
        want = eval(formula, {"__builtins__": {}}, {"n": n})   # the seed's own formula
        lim = b.limits({"p": np.zeros(5, fmt.uint)}, {"p": "float"}, fmt, width=n)
        banded = prec == "binary64"     # the column-order reading: a note band above
        assert np.all(lim.ulps == want) and np.all(lim.judged) and lim.note.any() == banded
        assert f"<= {want:g} ulp" in b.describe(n)
        assert _verdict(lim, want) == "ok"
        assert _verdict(lim, want + 0.125) == ("note" if banded else "fail")
        e = bound(fn, prec, "embedded")           # Table 2 has no row: the same, as a note
        elim = e.limits({"p": np.zeros(1, fmt.uint)}, {"p": "float"}, fmt, width=n)
        assert elim.ulps[0] == want and _verdict(elim, want + 1) == "note"


def test_length_binary32_at_n_3_is_4_25():
    b = bound("length", "binary32")
    assert b.limits({"p": np.zeros(1, F.uint)}, {"p": "float"}, F, width=3).ulps[0] == 4.25
    assert b.describe(3).startswith("<= 4.25 ulp") and b.ulps is None


def test_absolute_geometric_bounds_need_max_abs():
    b = bound("cross", "binary32")
    with pytest.raises(ValueError, match="max_abs"):
        b.limits({"p0": np.zeros(2, F.uint)}, {"p0": "float"}, F, width=3)
    lim = b.limits({}, {}, F, width=3, max_abs=np.asarray([1.0, 8.0]))
    assert np.array_equal(lim.absolute, [3 * 2.0 ** -23, 64 * 3 * 2.0 ** -23])
    assert lim.correctly_rounded.all() and np.all(lim.ulps == 0.5)
    d = bound("dot", "binary32").limits({}, {}, F, width=1, max_abs=np.asarray([2.0]))
    assert d.absolute[0] == 0.0 and d.correctly_rounded[0]  # n = 1: one correctly rounded product


def test_relaxed_exp_at_0_4_3_7_and_minus_10():
    for fn in ("exp", "exp2"):
        b = bound(fn, relaxed=True)
        for x in (0.4, 3.7, -10.0):
            want = 3 + math.floor(abs(2 * float(np.float32(x))))
            lim = _limits_at(b, x=x)
            assert lim.ulps[0] == want and lim.judged[0] and not lim.note[0], (fn, x)
        assert [_limits_at(b, x=x).ulps[0] for x in (0.4, 3.7, -10.0)] == [3, 10, 23]
        assert not _limits_at(b, x=float("nan")).judged[0]      # NaN: the NaN rules decide


def test_relaxed_log_pieces_at_the_domain_edges():
    below_half = float(np.nextafter(np.float32(0.5), np.float32(0)))   # 0.49999997
    above_two = float(np.nextafter(np.float32(2), np.float32(3)))       # 2.0000002
    for fn in ("log", "log2", "log10"):
        for prof, u in (("full", 3), ("embedded", 4)):
            b = bound(fn, "binary32", prof, relaxed=True)
            for x in (0.5, 2.0, 1.0):
                lim = _limits_at(b, x=x)
                assert lim.absolute[0] == 2.0 ** -21 and lim.correctly_rounded[0], (fn, x)
                assert _verdict(lim, 50, 2.0 ** -21) == "ok"
                assert _verdict(lim, 50, 2.0 ** -20) == "fail"
            for x in (below_half, above_two, 100.0):
                lim = _limits_at(b, x=x)
                assert lim.ulps[0] == u and lim.absolute[0] == 0.0, (fn, x)
                assert _verdict(lim, u) == "ok" and _verdict(lim, u + 0.01) == "fail"


def test_relaxed_sin_cos_absolute_domain_edges():
    largest_below_pi, smallest_above_pi = 0x40490FDA, 0x40490FDB
    assert F.value(largest_below_pi) < math.pi < F.value(smallest_above_pi)
    for fn in ("sin", "cos", "sincos"):
        b = bound(fn, relaxed=True)
        x = np.asarray([largest_below_pi, smallest_above_pi, largest_below_pi | F.sign_mask,
                        smallest_above_pi | F.sign_mask, 0], F.uint)
        lim = b.limits({"x": x}, {"x": "float"}, F)
        assert lim.judged.tolist() == [True, False, True, False, True], fn
        assert np.all(lim.absolute[lim.judged] == 2.0 ** -11)
    for fn in ("sinpi", "cospi"):
        b = bound(fn, relaxed=True)
        one_up = int(np.asarray(np.nextafter(np.float32(1), np.float32(2))).view(np.uint32))
        x = np.asarray([_bits(1.0), one_up, _bits(-1.0), one_up | F.sign_mask], F.uint)
        lim = b.limits({"x": x}, {"x": "float"}, F)
        assert lim.judged.tolist() == [True, False, True, False], fn


def test_relaxed_pow_undefined_pieces():
    b = bound("pow", relaxed=True)
    zero, nzero = 0.0, -0.0
    probes = [((zero, zero), False), ((nzero, zero), False), ((zero, nzero), False),
              ((-2.0, 0.5), False), ((-2.0, -1.5), False),
              ((-2.0, 3.0), True), ((-2.0, 2.0 ** 25), True), ((2.0, 0.5), True),
              ((0.0, 2.0), True)]
    for (x, y), judged in probes:
        lim = _limits_at(b, x=x, y=y)
        assert lim.judged[0] == judged, (x, y)
        if judged:
            assert lim.ulps[0] == 8192 and lim.note[0] and _verdict(lim, 1e9) == "note"
    assert "x lt:0 and y abs_gt:0x1p24" in b.describe()
    powr, pown, rootn = (bound(f, relaxed=True) for f in ("powr", "pown", "rootn"))
    assert not _limits_at(powr, x=-1.0, y=2.0).judged[0]
    assert not _limits_at(powr, x=0.0, y=0.0).judged[0] and _limits_at(powr, x=0.0, y=1.0).judged[0]
    assert not _limits_at(pown, x=0.0, y=0).judged[0] and _limits_at(pown, x=0.0, y=2).judged[0]
    assert [_limits_at(rootn, x=x, y=y).judged[0] for x, y in
            ((2.0, 3), (2.0, 0), (-8.0, 3), (-8.0, 2), (0.0, 2), (0.0, -2))] == \
        [True, False, True, False, True, False]


def test_non_derived_bounds_are_notes():
    """'For non-derived implementations, the error is <= 8192 ulp': never a failure."""
    for row, cells in _spirv_rows(3):
        cell = " ".join(cells)
        if "For non-derived implementations" not in cell:
            continue
        for fn in _names(row):
            for prof in ("full", "embedded"):
                b = bound(fn, "binary32", prof, relaxed=True)
                assert b.note_only and b.severity == "note", (fn, prof)
                assert all(p.reading or b.reading for p in b.pieces if p.value.judged)
    acospi = bound("acospi", relaxed=True)
    assert acospi.ulps == 8192 and "note" in acospi.describe()
    lim = _limits_at(acospi, x=0.5)
    assert [_verdict(lim, e) for e in (8192, 8193, np.nan)] == ["ok", "note", "note"]


def test_smoothstep_tolerance_is_a_note_where_the_defining_formula_overflows():
    b = bound("smoothstep")
    for (e0, e1, x), note in (((-1e38, 1e38, 0.0), False), ((-2e38, 2e38, 0.0), True),
                              ((0.0, 1.0, 3e38), True), ((0.0, 1.0, 0.5), False)):
        lim = _limits_at(b, edge0=e0, edge1=e1, x=x)
        assert lim.absolute[0] == 1e-5 and lim.note[0] == note, (e0, e1, x)
        assert _verdict(lim, 9, 2e-5) == ("note" if note else "fail")


def test_mix_tolerance_is_a_note_beyond_the_defining_formulas_reach():
    b = bound("mix")
    for (x, y), note in (((2048.0, -2048.0), False), ((-2049.0, 1.0), True), ((1.0, 2049.0), True),
                         ((1e30, 2.0), True), ((0.25, 0.5), False)):
        lim = _limits_at(b, x=x, y=y, a=0.5)
        assert lim.absolute[0] == 1e-3 and lim.note[0] == note, (x, y)
        assert _verdict(lim, 9, 2e-3) == ("note" if note else "fail")
        assert _verdict(lim, 9, 1e-3) == "ok"


def test_limits_mark_unjudged_and_notes():
    n = bound("native_sin").limits({"x": np.zeros(3, F.uint)}, {"x": "float"}, F)
    assert not n.judged.any() and (n.verdicts(np.full(3, 1e9)) == "skip").all()
    a = bound("acosh", relaxed=True).limits({"x": np.zeros(2, F.uint)}, {"x": "float"}, F)
    assert not a.judged.any()
    sq = bound("sqrt", "binary64", "embedded")       # CR, but SPIR-V Table 2 allows 4 ulp
    assert not sq.correctly_rounded and sq.ulps == 0.5
    lim = _limits_at_generic(sq)
    assert lim.correctly_rounded[0] and [_verdict(lim, e) for e in (0.5, 3, 4.5)] == \
        ["ok", "note", "fail"]
    assert lim.verdicts(np.asarray([0.9]), rounded=np.asarray([True]))[0] == "ok"


# -- the expression evaluator ---------------------------------------------------------------

def test_expr_accepts_the_small_language():
    e = B.Expr("3 + floor(fabs(2 * x)) - -1 / 2", ("n", "x"))
    assert e.names == {"x"}
    assert np.array_equal(e({"x": np.asarray([0.4, -3.7])}), [3.5, 10.5])


@pytest.mark.parametrize("text", ["2 ** 3", "__import__('os')", "x.real", "n if n else 1",
                                  "floor(x, 2)", "max(1, 2)", "y + 1", "[1]", "True + 1",
                                  "'a'", "round(x)", "lambda: 1", "3 +"])
def test_expr_rejects_anything_else(text):
    with pytest.raises(ValueError, match="expression"):
        B.Expr(text, ("n", "x"))


# -- malformed data ------------------------------------------------------------------------

_GOOD = """
[sources]
s1 = "Table One, column {column}"
[full]
profile = "full"
relaxed = false
source = "s1"
[full.binary32]
"""


def _load(body: str, extra: str = ""):
    return load_bounds(_GOOD + body + extra, "test.toml")


def test_a_minimal_file_loads():
    got = _load('sin = { cell = "<= 4 ulp", ulps = 4 }\n'
                'exp = { cell = "x", pieces = [ { when = { x = ["abs_lt:1"] }, ulps = 3 }, '
                '{ value = "unbounded" } ] }\n')
    assert got[("full", "binary32", "sin")].ulps == 4
    assert got[("full", "binary32", "sin")].source == "Table One, column Float32"
    assert got[("full", "binary32", "exp")].piecewise


@pytest.mark.parametrize("body, words", [
    ('nosuch = { cell = "c", ulps = 1 }', ["nosuch", "not in the catalogue"]),
    ('half_sin = { cell = "c", ulps = 1 }\n[full.binary64]\nhalf_cos = { cell = "c", ulps = 1 }',
     ["[full.binary64] half_cos", "does not exist in binary64"]),
    ('sin = { cell = "c", value = "roughly" }', ["sin", "value='roughly'"]),
    ('sin = { cell = "c", ulps = -1 }', ["sin", "ulps=-1"]),
    ('sin = { cell = "c", ulps = "2 ** n" }', ["sin", "Pow is not allowed"]),
    ('sin = { cell = "c", ulps = "max * 2" }', ["sin", "name 'max' is not allowed"]),
    ('sin = { cell = "c", absolute = "x * EPS" }', ["sin", "name 'x' is not allowed"]),
    ('sin = { cell = "c", ulps = "3 +" }', ["sin", "does not parse"]),
    ('sin = { cell = "c" }', ["sin", "exactly one of ulps, absolute or value"]),
    ('sin = { cell = "c", ulps = 1, value = "correctly rounded" }', ["sin", "exactly one"]),
    ('sin = { ulps = 4 }', ["sin", "'cell'"]),
    ('sin = { cell = "c", ulps = 4, colour = "red" }', ["sin", "colour"]),
    ('sin = { cell = "c", ulps = 4, severity = "note" }', ["sin", "needs a 'reading'"]),
    ('sin = { cell = "c", ulps = 4, severity = "grave", reading = "r" }', ["sin", "severity='grave'"]),
    ('sin = { cell = "c", value = "unbounded", severity = "note", reading = "r" }',
     ["sin", "judges nothing"]),
    ('sin = { cell = "c", ulps = 4, looser = { ulps = 5, source = "s1" }, severity = "note", '
     'reading = "r" }', ["sin", "not both"]),
    ('sin = { cell = "c", ulps = 4, looser = { ulps = 5, source = "nope" }, reading = "r" }',
     ["sin", "source='nope'"]),
    ('sin = { cell = "c", ulps = 4, source = "s1" }', ["sin", "source_cell"]),
    ('sin = { cell = "c", pieces = [ { when = { x = ["abs_lt:1"] }, ulps = 3 } ] }',
     ["sin", "last piece must have no 'when'"]),
    ('sin = { cell = "c", pieces = [ { ulps = 3 }, { ulps = 4 } ] }', ["sin", "only the last"]),
    ('sin = { cell = "c", pieces = [ { when = { y = ["zero"] }, ulps = 3 }, { ulps = 4 } ] }',
     ["sin", "'y', not an argument"]),
    ('sin = { cell = "c", pieces = [ { when = { x = ["smallish"] }, ulps = 3 }, { ulps = 4 } ] }',
     ["sin", "unknown predicate 'smallish'"]),
    ('sin = { cell = "c", pieces = [] }', ["sin", "non-empty list"]),
    ('sin = { cell = "c", ulps = 4, pieces = [ { ulps = 3 } ] }', ["sin", "not both"]),
    ('sincos = { cell = "c", like = "cos" }', ["sincos", "like='cos'"]),
    ('sin = { from = "embedded", reading = "r" }', ["sin", "from='embedded'"]),
    ('remquo = { cell = "c", ulps = 0, quotient_bits = -7 }', ["remquo", "quotient_bits=-7"]),
    ('sin = { cell = "c", ulps = 4 ', ["test.toml"]),
])
def test_malformed_data_raise_catalogue_error_naming_the_place(body, words):
    with pytest.raises(CatalogueError) as info:
        _load(body + "\n")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("test.toml"), msg
    for w in words:
        assert w in msg, (w, msg)
    if "test.toml" not in words and "sin" in words:
        assert "[full.binary32] sin" in msg, msg


@pytest.mark.parametrize("text, words", [
    ("[full]\nprofile = 'full'\nrelaxed = false\nsource = 's'\n", ["[sources]"]),
    ("[sources]\ns = 'x'\n[fill]\nprofile = 'full'\n", ["[fill]", "unknown"]),
    ("[sources]\ns = 'x'\n[full]\nprofile = 'embedded'\nrelaxed = false\nsource = 's'\n",
     ["[full]", "profile = 'full'"]),
    ("[sources]\ns = 'x'\n[full]\nprofile = 'full'\nrelaxed = false\nsource = 's'\n"
     "[full.binary128]\nsin = 4\n", ["[full.binary128]", "not a precision"]),
    ("[sources]\ns = 'x'\n[relaxed_full]\nprofile = 'full'\nrelaxed = true\nsource = 's'\n"
     "[relaxed_full.binary64]\nsin = { cell = 'c', ulps = 4 }\n", ["binary32 only"]),
])
def test_malformed_tables_raise_catalogue_error(text, words):
    with pytest.raises(CatalogueError) as info:
        load_bounds(text, "test.toml")
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith("test.toml")
    for w in words:
        assert w in msg, (w, msg)


def test_every_entry_of_the_shipped_file_describes_itself():
    seen = set()
    for b in bounds():
        assert (b.table, b.precision, b.function) not in seen
        seen.add((b.table, b.precision, b.function))
        assert b.describe(3) and b.source
        assert b.text or b.reading             # no cell only where the table has no row
        for p in b.pieces:
            if p.note:
                assert p.reading or b.reading, (b.table, b.precision, b.function)
    assert len(seen) == len(bounds()) > 600


@pytest.mark.parametrize("fn, strict_cell, loose_cell", [
    ("length", "0.5 + 0.5 * (0.5 * n + 0.5 * (n - 1))", "2 * (3 + 0.5 * (0.5 * n + 0.5 * (n - 1)))"),
    ("distance", "0.5 + (1.5 * n) + (0.5 * (n - 1))", "2 * (3 + 0.5 * (1.5 * n + 0.5 * (n - 1)))"),
    ("normalize", "1.5 + (0.5 * n) + (0.5 * (n - 1))", "2 * (2.5 + 0.5 * (0.5 * n + 0.5 * (n - 1)))")])
def test_binary64_geometric_rows_keep_both_column_readings(fn, strict_cell, loose_cell):
    """The geometric rows' cells may run Float16, Float32, Float64 (cross and dot name
    HLF_EPSILON in the first cell): binary64's header cell is the bound, the third cell's
    looser value bounds the note band."""
    from fuzzfarm.formats import BINARY64
    b = bound(fn, "binary64", "full")
    for n in (1, 2, 3, 4):
        env = {"__builtins__": {}}
        strict, loose = eval(strict_cell, env, {"n": n}), eval(loose_cell, env, {"n": n})
        args = {a: np.zeros(1, np.uint64) for a in (("p",) if fn != "distance" else ("p0", "p1"))}
        lim = b.limits(args, {a: "float" for a in args}, BINARY64, width=n)
        assert lim.ulps[0] == strict and lim.note[0] and lim.fail_ulps[0] == loose
        assert _verdict(lim, loose) == "note" and _verdict(lim, loose + 0.125) == "fail"
