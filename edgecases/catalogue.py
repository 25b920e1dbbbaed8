"""Load the compliance catalogue: functions, rules and ULP bounds, kept as data.

The data live in ``edgecases/data/``:

* ``functions.toml``  built-in name -> OpenCL C signature
* ``rules_*.toml``    the prescribed results, one ``[[rule]]`` table each, with its id,
                      spec section and sentence (see ``Rule``)
* ``ulp_bounds.toml`` the ULP tables per precision and profile

Everything is validated on load; an error names the file, the rule id and the problem.
No pyopencl or Ray here: the catalogue loads and tests on any machine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases.predicates import InvalidCondition, parse_word
from edgecases.results import InvalidResult, parse_result

__all__ = [
    "Arg", "Function", "Rule", "Bound", "CatalogueError",
    "functions", "function", "rules", "rules_for", "bound", "SEVERITIES",
    "GeneralRule", "general_rules", "general_rule",
]

SEVERITIES = ("fail", "note")


class CatalogueError(ValueError):
    """The catalogue's data are malformed (a bug in edgecases/data, not in a device)."""


@dataclass(frozen=True)
class Arg:
    """One parameter: ``kind`` is 'float' (gentype) or 'int' (intn); ``out`` marks a
    pointer parameter, i.e. a second result."""

    name: str
    kind: str
    out: bool = False


@dataclass(frozen=True)
class Function:
    """A built-in with its signature.  ``inputs`` are the value parameters; ``outputs``
    start with ``ret`` (the return value) and go on with the pointer parameters."""

    name: str
    signature: str
    inputs: tuple[Arg, ...]
    outputs: tuple[Arg, ...]

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.inputs)

    @property
    def arity(self) -> int:
        return len(self.inputs)


@dataclass(frozen=True)
class Rule:
    """A prescribed result (DESIGN.md decision 3).

    ``when`` is a tuple of ``(argument, condition word)`` pairs, all of which must hold;
    ``results`` maps output names (``ret``, ``exp``, ``iptr``) to the prescribed result.
    ``severity`` is 'fail', or 'note' where the spec texts are ambiguous, with ``reading``
    saying which reading was chosen and why.  ``ftz_results`` (TOML ``ftz_result``) is the
    alternative a device without CL_FP_DENORM may return instead (OpenCL SPIR-V Env 3.8.3,
    e.g. nextafter(-0, y > 0) = +min_normal).
    """

    id: str
    function: str
    kind: str
    section: str
    sentence: str
    when: tuple[tuple[str, str], ...]
    results: dict = field(hash=False, compare=False)
    severity: str = "fail"
    reading: str = ""
    source_file: str = ""
    ftz_results: dict = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True)
class Bound:
    """The accuracy a function must meet: ``ulps`` (max error in ULPs) or
    ``correctly_rounded``, or ``implementation_defined``; ``source`` cites the table."""

    function: str
    precision: str
    profile: str
    ulps: float | None
    correctly_rounded: bool
    source: str
    implementation_defined: bool = False

    def describe(self) -> str:
        if self.implementation_defined:
            return "implementation-defined"
        if self.correctly_rounded:
            return "correctly rounded"
        return f"<= {self.ulps:g} ulp"


_SIG = re.compile(r"^\s*(gentype|intn)\s+(\w+)\s*\((.*)\)\s*$")
_PARAM = re.compile(r"^\s*(gentype|intn)\s*(\*?)\s*(\w+)\s*$")


def _parse_signature(name: str, sig: str) -> Function:
    m = _SIG.match(sig)
    if not m or m.group(2) != name:
        raise CatalogueError(f"functions.toml: {name} = {sig!r} is not 'type {name}(params)'")
    ret_kind = "float" if m.group(1) == "gentype" else "int"
    inputs, outputs = [], [Arg("ret", ret_kind, True)]
    for p in m.group(3).split(","):
        pm = _PARAM.match(p)
        if not pm:
            raise CatalogueError(f"functions.toml: {name}: parameter {p!r} is malformed")
        arg = Arg(pm.group(3), "float" if pm.group(1) == "gentype" else "int", bool(pm.group(2)))
        (outputs if arg.out else inputs).append(arg)
    return Function(name, sig, tuple(inputs), tuple(outputs))


def _load_toml(name: str) -> dict:
    text = resources.files("edgecases").joinpath("data", name).read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"edgecases/data/{name}: {exc}") from exc


@lru_cache(maxsize=None)
def functions() -> dict[str, Function]:
    """All built-ins of the catalogue, by name, in the table's order."""
    return {n: _parse_signature(n, s) for n, s in _load_toml("functions.toml").items()}


def function(name: str) -> Function:
    """The built-in called ``name``.  Raises KeyError naming the problem."""
    try:
        return functions()[name]
    except KeyError:
        raise KeyError(f"function={name!r} is not in the catalogue") from None


_RULE_KEYS = {"id", "function", "kind", "section", "sentence", "when", "result", "results",
              "severity", "reading", "ftz_result"}


def _parse_rule(row: dict, src: str) -> Rule:
    rid = row.get("id", "?")
    where = f"edgecases/data/{src}: rule {rid}"
    extra = set(row) - _RULE_KEYS
    if extra:
        raise CatalogueError(f"{where}: unknown key(s) {sorted(extra)}")
    for key in ("id", "function", "kind", "section", "sentence"):
        if not isinstance(row.get(key), str) or not row[key]:
            raise CatalogueError(f"{where}: '{key}' is missing")
    try:
        fn = function(row["function"])
    except KeyError as exc:
        raise CatalogueError(f"{where}: {exc.args[0]}") from None
    when = []
    for arg, words in (row.get("when") or {}).items():
        kinds = {a.name: a.kind for a in fn.inputs}
        if arg not in kinds:
            raise CatalogueError(f"{where}: 'when' names {arg!r}, not an argument of {fn.signature}")
        for w in ([words] if isinstance(words, str) else words):
            try:
                parse_word(w)
            except InvalidCondition as exc:
                raise CatalogueError(f"{where}: {exc}") from None
            when.append((arg, w))
    if ("result" in row) == ("results" in row):
        raise CatalogueError(f"{where}: give exactly one of 'result' or 'results'")
    raw = {"ret": row["result"]} if "result" in row else dict(row["results"])
    outs = {o.name: o.kind for o in fn.outputs}
    results = {}
    for out, text in raw.items():
        if out not in outs:
            raise CatalogueError(f"{where}: result for {out!r}, not an output of {fn.signature}")
        try:
            results[out] = parse_result(text, fn.arg_names, outs[out])
        except InvalidResult as exc:
            raise CatalogueError(f"{where}: {exc}") from None
    severity = row.get("severity", "fail")
    if severity not in SEVERITIES:
        raise CatalogueError(f"{where}: severity={severity!r}; choose one of {SEVERITIES}")
    if severity != "fail" and not row.get("reading"):
        raise CatalogueError(f"{where}: a '{severity}' rule needs a 'reading' saying why")
    ftz = {}
    if "ftz_result" in row:
        try:
            ftz["ret"] = parse_result(row["ftz_result"], fn.arg_names, outs["ret"])
        except InvalidResult as exc:
            raise CatalogueError(f"{where}: ftz_result: {exc}") from None
    return Rule(row["id"], fn.name, row["kind"], row["section"], row["sentence"].strip(),
                tuple(when), results, severity, row.get("reading", "").strip(), src, ftz)


@lru_cache(maxsize=None)
def rules() -> tuple[Rule, ...]:
    """Every rule of every ``rules_*.toml`` file, ids unique."""
    out, seen = [], {}
    for entry in sorted(resources.files("edgecases").joinpath("data").iterdir(), key=lambda p: p.name):
        if not (entry.name.startswith("rules_") and entry.name.endswith(".toml")):
            continue
        for row in _load_toml(entry.name).get("rule", []):
            rule = _parse_rule(row, entry.name)
            if rule.id in seen:
                raise CatalogueError(f"rule id {rule.id} is in {seen[rule.id]} and {entry.name}")
            seen[rule.id] = entry.name
            out.append(rule)
    return tuple(out)


def rules_for(name: str) -> tuple[Rule, ...]:
    """The rules of one built-in, in catalogue order."""
    return tuple(r for r in rules() if r.function == name)


@lru_cache(maxsize=None)
def _bounds() -> dict:
    data = _load_toml("ulp_bounds.toml")
    table = {}
    for precision, profiles in data.items():
        for profile, body in profiles.items():
            source = body.get("source", "")
            for fname, value in body.get("bounds", {}).items():
                if fname not in functions():
                    raise CatalogueError(f"ulp_bounds.toml: [{precision}.{profile}] names "
                                         f"unknown function {fname!r}")
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    b = Bound(fname, precision, profile, float(value), False, source)
                elif value == "correctly rounded":
                    b = Bound(fname, precision, profile, 0.5, True, source)
                elif value == "implementation-defined":
                    b = Bound(fname, precision, profile, None, False, source, True)
                else:
                    raise CatalogueError(f"ulp_bounds.toml: {precision}.{profile}.{fname} = "
                                         f"{value!r}; use a number of ULPs, 'correctly rounded' "
                                         f"or 'implementation-defined'")
                table[(precision, profile, fname)] = b
    return table


def bound(name: str, precision: str = "binary32", profile: str = "full") -> Bound:
    """The accuracy bound of a built-in.  Raises KeyError when the table has none."""
    try:
        return _bounds()[(precision, profile, name)]
    except KeyError:
        raise KeyError(f"no ULP bound for {name} in {precision} {profile} profile") from None


@dataclass(frozen=True)
class GeneralRule:
    """A rule of every built-in (NaN propagation, NaN quietness, domain errors, notes)."""

    id: str
    section: str
    sentence: str
    severity: str = "fail"
    reading: str = ""


@lru_cache(maxsize=None)
def general_rules() -> dict[str, GeneralRule]:
    """The general rules by id (edgecases/data/general.toml)."""
    out = {}
    for row in _load_toml("general.toml").get("general", []):
        sev = row.get("severity", "fail")
        if sev not in SEVERITIES:
            raise CatalogueError(f"general.toml: {row.get('id')}: severity={sev!r}")
        out[row["id"]] = GeneralRule(row["id"], row["section"], row["sentence"].strip(),
                                     sev, row.get("reading", "").strip())
    return out


def general_rule(rule_id: str) -> GeneralRule:
    """One general rule.  Raises KeyError for an unknown id."""
    return general_rules()[rule_id]
