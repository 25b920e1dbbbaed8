"""The accuracy bounds of the built-ins (ULP tables), kept as data, with a small evaluator.

The data are ``edgecases/data/ulp_bounds.toml``: every cell of the OpenCL SPIR-V
Environment's "Relative Error as ULPs" Tables 1 (full profile), 2 (embedded profile) and
3 (binary32 with -cl-unsafe-math-optimizations, full and embedded), keyed by the
catalogue's function names, each with the seed's cell text verbatim and checked against
OpenCL C 3.0 §7.4 and the OpenCL 2.1 Environment §8.4.  Where the texts disagree the
stricter value is the bound and the looser is recorded: an error between the two is a
note, never a failure (the reading names both sources).

A bound is one or more *pieces*, taken in order; the first whose ``when`` holds for an
element decides it (the last has no ``when``).  A piece's value is one of

* a number of ULPs, or an expression of the vector width ``n`` (geometric built-ins) or of
  the argument ``x`` (relaxed exp: ``3 + floor(fabs(2 * x))``);
* ``correctly rounded`` (0.5 ULP in the rounding mode);
* ``fma or mul+add`` (mad: a correctly rounded fma, or a correctly rounded multiply
  followed by a correctly rounded add);
* an absolute error, a number or an expression of ``max`` (the largest input magnitude of
  the element), ``n`` and ``EPS`` (the format's machine epsilon 2**(1-p));
* ``implementation-defined``, ``unbounded`` (the text gives no bound there: measured,
  never judged) or ``undefined`` (the result is undefined: not judged).

A piece may be a ``note`` (exceeding it is never a failure, e.g. the relaxed table's
"For non-derived implementations, the error is <= 8192 ulp") or carry a ``looser``
reading (from another seed): beyond the strict value a note, beyond the looser a failure.

Expressions are parsed once, at load time, by a small evaluator (numbers, ``+ - * /``,
parentheses, ``floor``, ``fabs`` and the names above); anything else is a CatalogueError
naming the file, table and function.  No pyopencl or Ray here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources

import numpy as np

from edgecases.catalogue import CatalogueError
from edgecases.expressions import ABSOLUTE_NAMES, Expr
from edgecases.catalogue import functions as catalogue_functions

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

__all__ = ["Limits", "Piece", "Bound", "Expr", "bound", "bounds", "load_bounds",
           "KINDS", "TABLES", "PROFILES"]

#: The kinds of a piece's value.
KINDS = ("ulps", "absolute", "correctly rounded", "fma or mul+add", "implementation-defined",
         "unbounded", "undefined")
#: Kinds that judge nothing (measured only, or not at all).
UNJUDGED = ("implementation-defined", "unbounded", "undefined")
#: The value words a TOML ``value = "..."`` may hold (the numeric kinds use ``ulps``/``absolute``).
VALUE_WORDS = ("correctly rounded", "fma or mul+add", "implementation-defined", "unbounded",
               "undefined")
PROFILES = ("full", "embedded")
#: Table ids of ulp_bounds.toml -> (profile, relaxed).
TABLES = {"full": ("full", False), "embedded": ("embedded", False),
          "relaxed_full": ("full", True), "relaxed_embedded": ("embedded", True)}
SEVERITIES = ("fail", "note")
_PRECISION_P = {"binary16": 11, "binary32": 24, "binary64": 53}
_COLUMNS = {"binary64": "Float64", "binary32": "Float32", "binary16": "Float16"}

_TABLE_META = {"profile", "relaxed", "source"}
_ENTRY_KEYS = {"row", "cell", "ulps", "absolute", "value", "pieces", "like", "from", "severity",
               "reading", "looser", "source", "source_cell", "quotient_bits"}
_PIECE_KEYS = {"when", "ulps", "absolute", "value", "severity", "reading", "looser", "source",
               "source_cell"}
_LOOSER_KEYS = {"ulps", "absolute", "value", "source", "cell"}
_VALUE_KEYS = ("ulps", "absolute", "value")


def _error(msg: str):
    return CatalogueError(msg)


# --------------------------------------------------------------------------- limits
@dataclass(frozen=True)
class Limits:
    """Per-element limits for a batch of n elements (``Bound.limits``).

    An element conforms if ``ulp_error <= ulps`` or ``abs_error <= absolute``.  Exceeding
    the limits is a failure unless ``note``; where ``note`` is set it is a note, and a
    failure only beyond the looser limits ``fail_ulps`` / ``fail_absolute`` (+inf where
    the looser reading bounds nothing).  ``judged`` False: unbounded, undefined or
    implementation-defined there (measure only).  ``correctly_rounded`` True: a result
    equal to the reference correctly rounded in one of the device's rounding modes always
    conforms (``ulps`` is then 0.5, the bound for round to nearest; also set for absolute
    tolerances, which no rule can make stricter than correct rounding, and for mad's
    two candidate computations).  ``reading`` (object array of str) is the reading of the
    piece that decided each element ('' where none).

    Shapes: every array is (n,); ``ulps``, ``absolute``, ``fail_ulps``, ``fail_absolute``
    float64 (ULPs; absolute error in the value's units); the others bool, ``reading``
    object.
    """

    ulps: np.ndarray
    absolute: np.ndarray
    judged: np.ndarray
    note: np.ndarray
    fail_ulps: np.ndarray | None = None
    fail_absolute: np.ndarray | None = None
    correctly_rounded: np.ndarray | None = None
    reading: np.ndarray | None = None

    def verdicts(self, ulp_error, abs_error=None, rounded=None) -> np.ndarray:
        """'ok', 'note', 'fail' or 'skip' (not judged) per element.

        ``ulp_error`` float64 (n,) in ULPs (NaN: a NaN result, which conforms to nothing);
        ``abs_error`` float64 (n,) absolute error, or None (only ULPs are compared);
        ``rounded`` bool (n,) or None: where True the result equals the correctly rounded
        reference in a claimed rounding mode (then it conforms where ``correctly_rounded``).
        """
        e = np.asarray(ulp_error, np.float64)
        a = np.full(e.shape, np.inf) if abs_error is None else np.asarray(abs_error, np.float64)
        fail_u = self.ulps if self.fail_ulps is None else self.fail_ulps
        fail_a = self.absolute if self.fail_absolute is None else self.fail_absolute
        with np.errstate(invalid="ignore"):
            ok = (e <= self.ulps) | (a <= self.absolute)
            # +inf: the looser reading bounds nothing (a NaN result is then a note too)
            within_loose = (e <= fail_u) | (a <= fail_a) | (fail_u == np.inf)
        if rounded is not None and self.correctly_rounded is not None:
            ok |= np.asarray(rounded, bool) & self.correctly_rounded
        out = np.where(ok, "ok", np.where(self.note & within_loose, "note", "fail"))
        return np.where(self.judged, out, "skip").astype("<U4")


# --------------------------------------------------------------------------- pieces
@dataclass(frozen=True)
class Value:
    """One value of a bound: ``kind`` (KINDS) with ``amount`` (a float or an Expr) for
    'ulps' and 'absolute', None otherwise."""

    kind: str
    amount: float | Expr | None = None

    @property
    def judged(self) -> bool:
        return self.kind not in UNJUDGED

    @property
    def names(self) -> frozenset:
        return self.amount.names if isinstance(self.amount, Expr) else frozenset()

    def arrays(self, env: dict, n: int):
        """(ulps, absolute, judged, correctly_rounded) float64/bool arrays of shape (n,)."""
        inf = np.full(n, np.inf)
        zero = np.zeros(n)
        if self.kind in UNJUDGED:
            return inf, zero, np.zeros(n, bool), np.zeros(n, bool)
        if self.kind in ("correctly rounded", "fma or mul+add"):
            return np.full(n, 0.5), zero, np.ones(n, bool), np.ones(n, bool)
        v = self.amount(env) if isinstance(self.amount, Expr) else self.amount
        v = np.broadcast_to(np.asarray(v, np.float64), (n,)).copy()
        judged = ~np.isnan(v)
        if self.kind == "ulps":
            return np.where(judged, v, np.inf), zero, judged, np.zeros(n, bool)
        # absolute: a correctly rounded result always conforms (0.5 ulp floor)
        return np.full(n, 0.5), np.where(judged, v, 0.0), judged, np.ones(n, bool)

    def describe(self, width: int = 1, precision: str = "binary32") -> str:
        k = self.kind
        if k == "correctly rounded":
            return "correctly rounded"
        if k == "fma or mul+add":
            return "a correctly rounded fma, or a correctly rounded multiply then add"
        if k == "implementation-defined":
            return "implementation-defined"
        if k == "unbounded":
            return "no bound given (measured only)"
        if k == "undefined":
            return "undefined (not judged)"
        a = self.amount
        if k == "ulps":
            if not isinstance(a, Expr):
                return f"<= {a:g} ulp"
            if a.names == {"n"}:
                return f"<= {float(a({'n': np.float64(width)})):g} ulp ({a.text} at n = {width})"
            return f"<= {a.text} ulp"
        if not isinstance(a, Expr):
            return f"absolute error <= {a:g}"
        parts = []
        if "n" in a.names:
            parts.append(f"n = {width}")
        if "EPS" in a.names:
            parts.append(f"EPS = 2^{1 - _PRECISION_P[precision]}")
        if "max" in a.names:
            parts.append("max = the largest input magnitude")
        return f"absolute error <= {a.text}" + (f" ({', '.join(parts)})" if parts else "")


@dataclass(frozen=True)
class Piece:
    """One piece of a bound: where ``when`` holds (a conjunction of ``(argument, condition
    word)`` pairs of edgecases.predicates; () = everywhere), the ``value``.
    ``severity`` 'note': exceeding it is never a failure.  ``looser``: another seed's looser
    value (from ``looser_source``): between the two a note, beyond the looser a failure.
    ``source`` cites the strict value."""

    when: tuple[tuple[str, str], ...]
    value: Value
    severity: str = "fail"
    looser: Value | None = None
    reading: str = ""
    source: str = ""
    looser_source: str = ""

    @property
    def note(self) -> bool:
        return self.severity == "note" or self.looser is not None

    def describe(self, width: int = 1, precision: str = "binary32") -> str:
        text = self.value.describe(width, precision)
        if self.looser is not None and not self.looser.judged:
            text += " (exceeding it is a note: a looser reading bounds nothing)"
        elif self.looser is not None:
            text += f" (beyond it a note up to {self.looser.describe(width, precision)})"
        elif self.severity == "note" and self.value.judged:
            text += " (exceeding it is a note)"
        return text


def _condition_text(when) -> str:
    by_arg: dict = {}
    for arg, word in when:
        by_arg.setdefault(arg, []).append(word)
    return " and ".join(f"{arg} {' '.join(words)}" for arg, words in by_arg.items())


# --------------------------------------------------------------------------- bound
@dataclass(frozen=True)
class Bound:
    """The accuracy a built-in must meet in one precision, profile and (relaxed) table.

    ``text`` is the seed's cell verbatim (OpenCL SPIR-V Env Tables 1-3; '' where the table
    has no row and the entry is derived, see ``reading``); ``row`` the table's row;
    ``source`` cites the table and column; ``pieces`` the value(s); ``reading`` explains
    any choice made; ``applies_to`` the float outputs the bound applies to (sincos: ret and
    cosval); ``quotient_bits`` remquo's "at least the lower 7 bits of the integral
    quotient"; ``fallback`` a relaxed bound taken from Table 1 or 2 (no Table 3 row).
    """

    function: str
    precision: str
    profile: str
    relaxed: bool
    source: str
    text: str
    pieces: tuple[Piece, ...] = ()
    reading: str = ""
    row: str = ""
    table: str = ""
    applies_to: tuple[str, ...] = ("ret",)
    quotient_bits: int | None = None
    fallback: bool = False

    # -- the single-value views the checker uses for plain bounds ----------------------
    @property
    def _single(self) -> Piece | None:
        if len(self.pieces) == 1 and not self.pieces[0].when:
            return self.pieces[0]
        return None

    @property
    def correctly_rounded(self) -> bool:
        """True for a plain correctly-rounded bound (0.5 ulp in the rounding mode), failing
        beyond it; False where another seed is looser (then ``limits()`` carries the note
        band) or the bound has pieces."""
        p = self._single
        return (p is not None and p.value.kind == "correctly rounded" and not p.note)

    @property
    def implementation_defined(self) -> bool:
        p = self._single
        return p is not None and p.value.kind == "implementation-defined"

    @property
    def fma_or_mul_add(self) -> bool:
        """mad: either a correctly rounded fma or a correctly rounded multiply followed by
        a correctly rounded add (``limits().note`` says whether exceeding it is a note)."""
        p = self._single
        return p is not None and p.value.kind == "fma or mul+add"

    @property
    def plain_ulps(self) -> float | None:
        """The ULP bound where it is one number everywhere, failing beyond it (no pieces,
        no note band, no absolute error): 0.5 for correctly rounded, else the constant.
        None otherwise.  The checker's fast path screens such bounds without building
        per-element limits."""
        p = self._single
        if p is None or p.note:
            return None
        return self.ulps

    @property
    def ulps(self) -> float | None:
        """The constant ULP bound where the bound is one number (0.5 for correctly
        rounded), else None (pieces, expressions, absolute errors, no bound)."""
        p = self._single
        if p is None:
            return None
        if p.value.kind == "correctly rounded":
            return 0.5
        if p.value.kind == "ulps" and not isinstance(p.value.amount, Expr):
            return float(p.value.amount)
        return None

    @property
    def absolute(self) -> float | None:
        """The constant absolute-error bound where the bound is one number, else None."""
        p = self._single
        if p is not None and p.value.kind == "absolute" and not isinstance(p.value.amount, Expr):
            return float(p.value.amount)
        return None

    @property
    def judged(self) -> bool:
        """False where no element is ever judged (implementation-defined, unbounded)."""
        return any(p.value.judged for p in self.pieces)

    @property
    def note_only(self) -> bool:
        """True where exceeding the bound is never a failure."""
        return all((not p.value.judged) or (p.severity == "note" and p.looser is None)
                   for p in self.pieces)

    @property
    def severity(self) -> str:
        return "note" if self.note_only else "fail"

    @property
    def piecewise(self) -> bool:
        return self._single is None

    @property
    def names(self) -> frozenset:
        """The expression names the bound uses (``n``, ``x``, ``max``, ``EPS``)."""
        out: set = set()
        for p in self.pieces:
            out |= p.value.names
            if p.looser is not None:
                out |= p.looser.names
        return frozenset(out)

    def describe(self, width: int = 1) -> str:
        """The bound in words: "<= 4 ulp", "correctly rounded", "implementation-defined",
        "<= 4.25 ulp (3 + 0.5 * (0.5 * n + 0.5 * (n - 1)) at n = 3)", or the pieces
        ("x ge:0.5 le:2: absolute error <= 4.76837e-07; otherwise: <= 3 ulp")."""
        p = self._single
        if p is not None:
            return p.describe(width, self.precision)
        parts = []
        for q in self.pieces:
            cond = _condition_text(q.when) if q.when else "otherwise"
            parts.append(f"{cond}: {q.describe(width, self.precision)}")
        return "; ".join(parts)

    def limits(self, args: dict, kinds: dict, fmt, width: int = 1,
               max_abs: np.ndarray | None = None) -> Limits:
        """The per-element limits of a batch.

        ``args``: input name -> array of shape (n,): ``fmt.uint`` patterns for 'float'
        arguments, int32 values for 'int' (``kinds`` gives each name's kind); only the
        arguments a piece's condition or expression names are read.  ``fmt`` the
        fuzzfarm.formats.FloatFormat (EPS = 2**(1 - fmt.precision)); ``width`` the vector
        width n; ``max_abs`` float64 (n,) the largest input magnitude of each element
        (needed by cross and dot).  Returns Limits of shape (n,).  Raises ValueError when
        ``max_abs`` or an argument the bound needs is missing.
        """
        from edgecases.predicates import evaluate
        from fuzzfarm.formats import to_float

        n = _batch_length(args, max_abs)
        env: dict = {"n": np.float64(width), "EPS": np.float64(2.0 ** (1 - fmt.precision))}
        names = self.names
        if "max" in names:
            if max_abs is None:
                raise ValueError(f"{self.function}: the bound {self.describe(width)!r} needs "
                                 f"max_abs, the largest input magnitude of each element")
            env["max"] = np.asarray(max_abs, np.float64)
        if "x" in names:
            if "x" not in args:
                raise ValueError(f"{self.function}: the bound needs argument 'x'; "
                                 f"got {sorted(args)}")
            with np.errstate(invalid="ignore"):
                env["x"] = to_float(np.asarray(args["x"]), fmt).astype(np.float64)
        ulps, absolute = np.full(n, np.inf), np.zeros(n)
        judged, note = np.zeros(n, bool), np.zeros(n, bool)
        fail_u, fail_a = np.full(n, np.inf), np.zeros(n)
        cr = np.zeros(n, bool)
        reading = np.full(n, "", dtype=object)
        left = np.ones(n, bool)
        for piece in self.pieces:
            m = left.copy()
            for arg, word in piece.when:
                if arg not in args:
                    raise ValueError(f"{self.function}: a piece's condition needs argument "
                                     f"{arg!r}; got {sorted(args)}")
                m &= evaluate(word, np.asarray(args[arg]), kinds[arg], fmt)
            left &= ~m
            if not m.any():
                continue
            u, a, j, c = piece.value.arrays(env, n)
            ulps[m], absolute[m], judged[m], cr[m] = u[m], a[m], j[m], c[m]
            if piece.looser is not None:
                lu, la, lj, _ = piece.looser.arrays(env, n)
                fail_u[m] = np.where(lj, lu, np.inf)[m]
                fail_a[m] = np.where(lj, la, np.inf)[m]
                note[m] = True
            elif piece.severity == "note":
                fail_u[m], fail_a[m], note[m] = np.inf, np.inf, True
            else:
                fail_u[m], fail_a[m] = u[m], a[m]
            reading[m] = piece.reading or self.reading
        # An element no piece covers is not judged (the data end with an unconditional
        # piece, so this happens only for NaN-valued expressions).
        return Limits(ulps, absolute, judged, note & judged, fail_u, fail_a, cr, reading)


def _batch_length(args: dict, max_abs) -> int:
    if max_abs is not None:
        return int(np.asarray(max_abs).shape[0])
    for v in args.values():
        return int(np.asarray(v).shape[0])
    raise ValueError("limits() needs at least one argument array or max_abs")


# --------------------------------------------------------------------------- loading
def _parse_value(raw: dict, where: str, allowed_ulp: tuple, what: str = "") -> Value:
    given = [k for k in _VALUE_KEYS if k in raw]
    if len(given) != 1:
        raise _error(f"{where}: {what}give exactly one of ulps, absolute or value "
                     f"(got {given or 'none'})")
    key = given[0]
    v = raw[key]
    if key == "value":
        if v not in VALUE_WORDS:
            raise _error(f"{where}: {what}value={v!r}; use a number in 'ulps' or 'absolute', "
                         f"or one of {', '.join(repr(w) for w in VALUE_WORDS)}")
        return Value(v)
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise _error(f"{where}: {what}{key}={v!r} is not a number or an expression")
    if isinstance(v, str):
        try:
            expr = Expr(v, allowed_ulp if key == "ulps" else ABSOLUTE_NAMES)
        except ValueError as exc:
            raise _error(f"{where}: {what}{key}: {exc}") from None
        return Value(key, expr)
    if not (v >= 0 and math.isfinite(v)):
        raise _error(f"{where}: {what}{key}={v!r}; a bound is a finite number >= 0")
    return Value(key, float(v))


def _parse_when(raw, where: str, kinds: dict) -> tuple:
    from edgecases.predicates import InvalidCondition, parse_word
    if not isinstance(raw, dict) or not raw:
        raise _error(f"{where}: 'when' must be a table of argument = [condition words]")
    out = []
    for arg, words in raw.items():
        if arg not in kinds:
            raise _error(f"{where}: 'when' names {arg!r}, not an argument "
                         f"({', '.join(kinds) or 'none'})")
        for w in ([words] if isinstance(words, str) else words):
            try:
                parse_word(w)
            except InvalidCondition as exc:
                raise _error(f"{where}: {exc}") from None
            out.append((arg, w))
    return tuple(out)


def _check_severity(raw: dict, where: str) -> str:
    sev = raw.get("severity", "fail")
    if sev not in SEVERITIES:
        raise _error(f"{where}: severity={sev!r}; choose one of {SEVERITIES}")
    return sev


def _parse_piece(raw, where: str, kinds: dict, allowed_ulp: tuple, sources: dict,
                 entry_reading: str) -> Piece:
    if not isinstance(raw, dict):
        raise _error(f"{where}: a piece must be a table, got {raw!r}")
    extra = set(raw) - _PIECE_KEYS
    if extra:
        raise _error(f"{where}: unknown key(s) {sorted(extra)} in a piece")
    when = _parse_when(raw["when"], where, kinds) if "when" in raw else ()
    value = _parse_value(raw, where, allowed_ulp)
    sev = _check_severity(raw, where)
    reading = raw.get("reading", "").strip()
    looser, looser_source = None, ""
    if "looser" in raw:
        lraw = raw["looser"]
        if not isinstance(lraw, dict) or set(lraw) - _LOOSER_KEYS:
            raise _error(f"{where}: 'looser' must be a table of ulps/absolute/value, source "
                         f"and cell")
        looser = _parse_value(lraw, where, allowed_ulp, "looser: ")
        looser_source = _source(lraw.get("source", ""), sources, where)
        if not value.judged:
            raise _error(f"{where}: a looser reading needs a judged strict value, not "
                         f"{value.kind!r}")
        if sev == "note":
            raise _error(f"{where}: give severity='note' or a looser reading, not both "
                         f"(the looser reading makes the band between them a note)")
    if (sev == "note" or looser is not None) and not (reading or entry_reading):
        raise _error(f"{where}: a note or a looser reading needs a 'reading' saying why")
    if sev == "note" and not value.judged:
        raise _error(f"{where}: severity='note' on {value.kind!r}, which judges nothing")
    source = _source(raw["source"], sources, where) if "source" in raw else ""
    if "source" in raw and "source_cell" not in raw:
        raise _error(f"{where}: a strict value from another seed needs its 'source_cell'")
    return Piece(when, value, sev, looser, reading, source, looser_source)


def _source(sid: str, sources: dict, where: str) -> str:
    if sid not in sources:
        raise _error(f"{where}: source={sid!r} is not in [sources] "
                     f"({', '.join(sorted(sources))})")
    return sid


def load_bounds(text: str, name: str = "ulp_bounds.toml", functions: dict | None = None) -> dict:
    """Parse and validate a ULP-bounds TOML text; returns {(table, precision, function):
    Bound} in file order.  ``functions`` is the catalogue (default
    edgecases.catalogue.functions()).  Raises CatalogueError naming the file, table and
    function for any malformed entry: an unknown table, precision or function, a function
    not defined in that precision, a bad value, an expression with anything but numbers,
    + - * /, parentheses, floor, fabs and the allowed names, a piece list without a final
    unconditional piece, a note without a reading, an unresolved 'like' or 'from'."""
    if functions is None:
        functions = catalogue_functions()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise _error(f"{name}: {exc}") from None
    sources = data.pop("sources", None)
    if not isinstance(sources, dict) or not all(isinstance(v, str) for v in sources.values()):
        raise _error(f"{name}: needs a [sources] table of id = \"citation\"")
    data.pop("unmapped", None)  # seed rows that are no built-in (read by the tests)
    raw_entries = []
    for tid, body in data.items():
        if tid not in TABLES:
            raise _error(f"{name}: table [{tid}] is unknown; use {', '.join(TABLES)}")
        profile, relaxed = TABLES[tid]
        if body.get("profile") != profile or bool(body.get("relaxed")) != relaxed:
            raise _error(f"{name}: [{tid}] must say profile = {profile!r} and relaxed = "
                         f"{str(relaxed).lower()}")
        tsource = _source(body.get("source", ""), sources, f"{name}: [{tid}]")
        for prec, entries in body.items():
            if prec in _TABLE_META:
                continue
            if prec not in _PRECISION_P or not isinstance(entries, dict):
                raise _error(f"{name}: [{tid}.{prec}] is not a precision "
                             f"({', '.join(_PRECISION_P)})")
            if relaxed and prec != "binary32":
                raise _error(f"{name}: [{tid}.{prec}]: the relaxed table is binary32 only")
            for fname, raw in entries.items():
                raw_entries.append((tid, prec, fname, raw, tsource))
    parsed: dict = {}
    pending = []
    for tid, prec, fname, raw, tsource in raw_entries:
        where = f"{name}: [{tid}.{prec}] {fname}"
        if fname not in functions:
            raise _error(f"{where}: function={fname!r} is not in the catalogue (functions.toml)")
        fn = functions[fname]
        if prec not in fn.precisions:
            raise _error(f"{where}: {fname} does not exist in {prec} (functions.toml "
                         f"precisions: {', '.join(fn.precisions)})")
        if isinstance(raw, (int, float)) and not isinstance(raw, bool):
            raw = {"ulps": raw}
        if not isinstance(raw, dict):
            raise _error(f"{where}: an entry is a table with the cell and the value")
        extra = set(raw) - _ENTRY_KEYS
        if extra:
            raise _error(f"{where}: unknown key(s) {sorted(extra)}")
        if "like" in raw or "from" in raw:
            pending.append((tid, prec, fname, raw, tsource, where))
            continue
        parsed[(tid, prec, fname)] = _parse_entry(tid, prec, fn, raw, tsource, sources, where)
    for tid, prec, fname, raw, tsource, where in pending:
        parsed[(tid, prec, fname)] = _resolve(tid, prec, functions[fname], raw, tsource,
                                              sources, parsed, where)
    order = {k: i for i, k in enumerate((t, p, f) for t, p, f, *_ in raw_entries)}
    return dict(sorted(parsed.items(), key=lambda kv: order[kv[0]]))


def _cite(sources: dict, sid: str, precision: str) -> str:
    text = sources[sid]
    if "{column}" in text:
        text = text.replace("{column}", _COLUMNS[precision])
    return text


def _entry_common(fn, raw: dict, where: str):
    kinds = {a.name: a.kind for a in fn.inputs}
    allowed = ("n",) + (("x",) if "x" in kinds else ())
    qb = raw.get("quotient_bits")
    if qb is not None and (isinstance(qb, bool) or not isinstance(qb, int) or qb < 1):
        raise _error(f"{where}: quotient_bits={qb!r}; a positive number of bits")
    applies = tuple(o.name for o in fn.outputs if o.kind == "float")
    return kinds, allowed, qb, applies


def _parse_entry(tid, prec, fn, raw, tsource, sources, where) -> Bound:
    profile, relaxed = TABLES[tid]
    kinds, allowed, qb, applies = _entry_common(fn, raw, where)
    cell = raw.get("cell")
    if not isinstance(cell, str) or not cell.strip():
        raise _error(f"{where}: 'cell' (the seed's cell text, verbatim) is missing")
    reading = raw.get("reading", "").strip()
    if "pieces" in raw:
        if any(k in raw for k in _VALUE_KEYS + ("looser", "severity", "source")):
            raise _error(f"{where}: give 'pieces' or a value (ulps/absolute/value), not both")
        plist = raw["pieces"]
        if not isinstance(plist, list) or not plist:
            raise _error(f"{where}: 'pieces' must be a non-empty list of tables")
        pieces = tuple(_parse_piece(p, f"{where} piece {i + 1}", kinds, allowed, sources,
                                    reading) for i, p in enumerate(plist))
        if pieces[-1].when:
            raise _error(f"{where}: the last piece must have no 'when' (it covers the rest; "
                         f"use value = 'unbounded' where the text gives no bound)")
        if any(not p.when for p in pieces[:-1]):
            raise _error(f"{where}: only the last piece may lack a 'when'")
    else:
        pieces = (_parse_piece({k: raw[k] for k in raw if k in _PIECE_KEYS}, where, kinds,
                               allowed, sources, reading),)
    sid = raw.get("source", tsource)
    if sid != tsource:
        source = (f"{_cite(sources, sid, prec)} (stricter than "
                  f"{_cite(sources, tsource, prec)})")
    else:
        source = _cite(sources, tsource, prec)
    row = raw.get("row", f"OpExtInst {fn.name}")
    return Bound(fn.name, prec, profile, relaxed, source, cell.strip(), pieces, reading, row,
                 tid, applies, qb)


def _resolve(tid, prec, fn, raw, tsource, sources, parsed, where) -> Bound:
    """``like = "sin"``: the value of another function of the same table (sincos);
    ``from = "full"``: the same function's value from another table, as a note only (the
    embedded table has no row for it)."""
    profile, relaxed = TABLES[tid]
    kinds, allowed, qb, applies = _entry_common(fn, raw, where)
    reading = raw.get("reading", "").strip()
    if "like" in raw and "from" in raw:
        raise _error(f"{where}: give 'like' or 'from', not both")
    if any(k in raw for k in _VALUE_KEYS + ("pieces", "looser", "severity")):
        raise _error(f"{where}: 'like'/'from' take their value elsewhere; give no value here")
    if "like" in raw:
        other = parsed.get((tid, prec, raw["like"]))
        if other is None:
            raise _error(f"{where}: like={raw['like']!r} is not an entry of [{tid}.{prec}]")
        cell = raw.get("cell")
        if not isinstance(cell, str) or not cell.strip():
            raise _error(f"{where}: 'cell' (the seed's cell text, verbatim) is missing")
        return Bound(fn.name, prec, profile, relaxed, other.source, cell.strip(), other.pieces,
                     reading or other.reading, raw.get("row", f"OpExtInst {fn.name}"), tid,
                     applies, qb)
    other = parsed.get((raw["from"], prec, fn.name))
    if other is None:
        raise _error(f"{where}: from={raw['from']!r}: [{raw['from']}.{prec}] has no "
                     f"{fn.name}")
    if not reading:
        raise _error(f"{where}: 'from' needs a 'reading' saying why the value is borrowed")
    if "cell" in raw:
        raise _error(f"{where}: 'from' is for a function the table has no row for: no 'cell'")
    pieces = tuple(replace(p, severity="note" if p.value.judged else p.severity, looser=None,
                           looser_source="", reading=reading) for p in other.pieces)
    source = (f"{_cite(sources, tsource, prec)} has no row; the bound of "
              f"{other.source} as a note")
    return Bound(fn.name, prec, profile, relaxed, source, "", pieces, reading, "", tid, applies,
                 qb)


# --------------------------------------------------------------------------- access
@lru_cache(maxsize=None)
def _table() -> dict:
    text = resources.files("edgecases").joinpath("data", "ulp_bounds.toml").read_text(
        encoding="utf-8")
    return load_bounds(text, "edgecases/data/ulp_bounds.toml")


def bounds() -> tuple[Bound, ...]:
    """Every entry of ulp_bounds.toml (Tables 1, 2 and 3 as transcribed), in file order;
    relaxed fallbacks to Tables 1/2 are not listed (``bound(..., relaxed=True)`` makes
    them)."""
    return tuple(_table().values())


def bound(name: str, precision: str = "binary32", profile: str = "full",
          relaxed: bool = False) -> Bound:
    """The accuracy bound of built-in ``name`` in ``precision`` ('binary16', 'binary32',
    'binary64') and ``profile`` ('full', 'embedded'); ``relaxed`` for a
    -cl-unsafe-math-optimizations build: the Table 3 row where there is one, else the
    profile's table (SPIR-V Env: "The minimum accuracy of math functions not defined in
    [Table 3] ... is as defined in [Table 1] when operating in the full profile, and as
    defined in [Table 2] when operating in the embedded profile").  Raises KeyError
    naming what is missing."""
    if profile not in PROFILES:
        raise KeyError(f"profile={profile!r}; choose one of {PROFILES}")
    table = _table()
    base = "full" if profile == "full" else "embedded"
    if relaxed:
        b = table.get((f"relaxed_{base}", precision, name))
        if b is not None:
            return b
    b = table.get((base, precision, name))
    if b is None:
        fn = catalogue_functions().get(name)
        if fn is None:
            raise KeyError(f"no ULP bound for {name}: function={name!r} is not in the catalogue")
        if precision not in fn.precisions:
            raise KeyError(f"no ULP bound for {name} in {precision}: {name} exists in "
                           f"{', '.join(fn.precisions)} only")
        raise KeyError(f"no ULP bound for {name} in {precision} {profile} profile")
    if relaxed:
        return replace(b, relaxed=True, fallback=True,
                       source=f"{b.source} (no row in the relaxed table: SPIR-V Env Table 3 "
                              f"falls back to the {profile} profile's table)")
    return b
