"""Load the compliance catalogue: functions, rules and ULP bounds, kept as data.

The data live in ``edgecases/data/``:

* ``functions.toml``  built-in name -> OpenCL C signature
* ``rules_*.toml``    the prescribed results, one ``[[rule]]`` table each, with its id,
                      spec section and sentence (see ``Rule``)
* ``ulp_bounds.toml`` the ULP tables per precision and profile: edgecases.bounds, which
                      depends on this module (never the other way)

Everything is validated on load; an error names the file, the rule id and the problem.
No pyopencl or Ray here: the catalogue loads and tests on any machine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from edgecases.predicates import InvalidCondition, parse_word
from edgecases.results import InvalidResult, parse_result
from fuzzfarm.errors import SpecDataError

__all__ = [
    "Arg", "Function", "Rule", "CatalogueError",
    "functions", "function", "rules", "rules_for", "SEVERITIES",
    "GeneralRule", "general_rules", "general_rule",
]

SEVERITIES = ("fail", "note")


class CatalogueError(SpecDataError):
    """The catalogue's data are malformed (a bug in edgecases/data, not in a device)."""


#: The families of built-ins (functions.toml ``family``).
FAMILIES = ("math", "half", "native", "common", "geometric", "operator")
#: Every format a built-in may exist in.
PRECISIONS = ("binary16", "binary32", "binary64")
#: The OpenCL C vector widths.
WIDTHS = (1, 2, 3, 4, 8, 16)

# Signature type -> (Arg.kind, Arg.scalar)
_TYPES = {"gentype": ("float", False), "sgentype": ("float", True), "intn": ("int", False),
          "ugentype": ("uint", False)}


@dataclass(frozen=True)
class Arg:
    """One parameter: ``kind`` is 'float' (gentype), 'int' (intn, int32 values) or 'uint'
    (ugentype: the unsigned integer of the float format's size, e.g. nan's payload);
    ``scalar`` marks an sgentype (one value even in a vector call, e.g. dot's result);
    ``out`` marks a pointer parameter, i.e. a second result."""

    name: str
    kind: str
    out: bool = False
    scalar: bool = False


@dataclass(frozen=True)
class Function:
    """A built-in with its signature.  ``inputs`` are the value parameters; ``outputs``
    start with ``ret`` (the return value) and go on with the pointer parameters."""

    name: str
    signature: str
    inputs: tuple[Arg, ...]
    outputs: tuple[Arg, ...]
    family: str = "math"
    precisions: tuple[str, ...] = PRECISIONS
    widths: tuple[int, ...] = WIDTHS
    edge_cases_of: str = ""
    expression: str = ""
    undefined: tuple = ()
    reading: str = ""
    #: An IEEE 754-2008 quiet-computational operation (§5.5.1: copy, negate, abs,
    #: copySign): it only moves or sets the sign bit, so a signaling NaN comes back
    #: signaling (§6.2) and "should be converted to a non-signaling NaN" does not apply.
    quiet_computational: bool = False
    #: half_* and native_*: the built-in whose value it approximates (its reference).
    approximates: str = ""
    #: mad: the intermediate product may be rounded, and flushed on a flushing device.
    unfused: bool = False
    #: A built-in of several float outputs: per output, the built-in whose value it is
    #: (sincos: sin, cos).
    outputs_as: tuple = ()

    @property
    def reference_name(self) -> str:
        """The built-in whose reference this one is measured against: ``approximates``,
        or itself."""
        return self.approximates or self.name

    @property
    def is_native(self) -> bool:
        """native_*: accuracy and edge cases implementation-defined (measured, never failed)."""
        return self.family == "native"

    @property
    def is_elementwise(self) -> bool:
        """True unless the built-in works on whole vectors (geometric functions)."""
        return self.family != "geometric"

    @property
    def arg_names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.inputs)

    @property
    def arity(self) -> int:
        return len(self.inputs)


@dataclass(frozen=True)
class Rule:
    """A prescribed result (docs/design.md, decision 3).

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


_SIG = re.compile(r"^\s*(\w+)\s+(\w+)\s*\((.*)\)\s*$")
_PARAM = re.compile(r"^\s*(\w+)\s*(\*?)\s*(\w+)\s*$")
_FUNCTION_KEYS = {"signature", "family", "precisions", "widths", "edge_cases_of", "expression",
                  "undefined", "reading", "quiet_computational", "approximates", "unfused",
                  "outputs_as"}


def _type(name: str, text: str, where: str) -> tuple[str, bool]:
    if text not in _TYPES:
        raise CatalogueError(f"functions.toml: {name}: type {text!r} in {where}; "
                             f"use one of {', '.join(_TYPES)}")
    return _TYPES[text]


def _parse_undefined(name: str, raw, arg_kinds: dict) -> tuple:
    if not isinstance(raw, list):
        raise CatalogueError(f"functions.toml: {name}: 'undefined' must be a list of tables")
    out = []
    for table in raw:
        if not isinstance(table, dict) or not table:
            raise CatalogueError(f"functions.toml: {name}: 'undefined' entry {table!r} is not "
                                 f"a table of argument = condition")
        conj = []
        for arg, words in table.items():
            if arg not in arg_kinds:
                raise CatalogueError(f"functions.toml: {name}: 'undefined' names {arg!r}, "
                                     f"not an argument")
            for w in ([words] if isinstance(words, str) else words):
                try:
                    parse_word(w, tuple(arg_kinds))
                except InvalidCondition as exc:
                    raise CatalogueError(f"functions.toml: {name}: {exc}") from None
                conj.append((arg, w))
        out.append(tuple(conj))
    return tuple(out)


def _parse_function(name: str, value) -> Function:
    if isinstance(value, str):
        value = {"signature": value}
    if not isinstance(value, dict) or "signature" not in value:
        raise CatalogueError(f"functions.toml: {name} needs a signature string or a table "
                             f"with 'signature'")
    extra = set(value) - _FUNCTION_KEYS
    if extra:
        raise CatalogueError(f"functions.toml: {name}: unknown key(s) {sorted(extra)}")
    sig = value["signature"]
    m = _SIG.match(sig)
    if not m or m.group(2) != name:
        raise CatalogueError(f"functions.toml: {name} = {sig!r} is not 'type {name}(params)'")
    kind, scalar = _type(name, m.group(1), "the return type")
    inputs, outputs = [], [Arg("ret", kind, True, scalar)]
    for p in m.group(3).split(","):
        pm = _PARAM.match(p)
        if not pm:
            raise CatalogueError(f"functions.toml: {name}: parameter {p!r} is malformed")
        kind, scalar = _type(name, pm.group(1), f"parameter {pm.group(3)}")
        arg = Arg(pm.group(3), kind, bool(pm.group(2)), scalar)
        (outputs if arg.out else inputs).append(arg)
    family = value.get("family", "math")
    if family not in FAMILIES:
        raise CatalogueError(f"functions.toml: {name}: family={family!r}; use one of {FAMILIES}")
    precisions = tuple(value.get("precisions", PRECISIONS))
    if not precisions or set(precisions) - set(PRECISIONS):
        raise CatalogueError(f"functions.toml: {name}: precisions={list(precisions)}; "
                             f"use some of {PRECISIONS}")
    widths = tuple(value.get("widths", WIDTHS))
    if not widths or set(widths) - set(WIDTHS):
        raise CatalogueError(f"functions.toml: {name}: widths={list(widths)}; use some of {WIDTHS}")
    if family == "operator" and not value.get("expression"):
        raise CatalogueError(f"functions.toml: {name}: an operator needs an 'expression'")
    undefined = _parse_undefined(name, value.get("undefined", []),
                                 {a.name: a.kind for a in inputs})
    if undefined and not value.get("reading"):
        raise CatalogueError(f"functions.toml: {name}: 'undefined' needs a 'reading' quoting "
                             f"the spec")
    for flag in ("quiet_computational", "unfused"):
        if not isinstance(value.get(flag, False), bool):
            raise CatalogueError(f"functions.toml: {name}: {flag}={value[flag]!r}; use true "
                                 f"or false")
    outputs_as = tuple(value.get("outputs_as", ()))
    if outputs_as and len(outputs_as) != len(outputs):
        raise CatalogueError(f"functions.toml: {name}: outputs_as={list(outputs_as)} needs one "
                             f"built-in per output ({len(outputs)})")
    return Function(name, sig, tuple(inputs), tuple(outputs), family, precisions, widths,
                    value.get("edge_cases_of", ""), value.get("expression", ""), undefined,
                    value.get("reading", ""), value.get("quiet_computational", False),
                    value.get("approximates", ""), value.get("unfused", False), outputs_as)


def _load_toml(name: str) -> dict:
    text = resources.files("edgecases").joinpath("data", name).read_text(encoding="utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"edgecases/data/{name}: {exc}") from exc


@lru_cache(maxsize=None)
def functions() -> dict[str, Function]:
    """All built-ins of the catalogue, by name, in the table's order."""
    table = {n: _parse_function(n, v) for n, v in _load_toml("functions.toml").items()}
    for f in table.values():
        if f.edge_cases_of and f.edge_cases_of not in table:
            raise CatalogueError(f"functions.toml: {f.name}: edge_cases_of={f.edge_cases_of!r} "
                                 f"is not a built-in of the catalogue")
    return table


def function(name: str) -> Function:
    """The built-in called ``name``.  Raises KeyError naming the problem."""
    try:
        return functions()[name]
    except KeyError:
        raise KeyError(f"unknown function {name!r}: it is not in the catalogue") from None


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


@lru_cache(maxsize=None)
def rules_for(name: str) -> tuple[Rule, ...]:
    """The rules of one built-in, in catalogue order.  A built-in with ``edge_cases_of``
    (half_sin -> sin) has the rules of that function ("half_<funcname> functions ... must
    conform to the same edge case requirements", OpenCL 2.1 environment §8.5.1); native_*
    have none (implementation-defined)."""
    fn = function(name)
    if fn.is_native:
        return ()
    source = fn.edge_cases_of or name
    own = tuple(r for r in rules() if r.function == source)
    if source == name:
        return own
    # The same rule, bound to this built-in's argument names (the signatures agree).
    return tuple(replace(r, function=name) for r in own)


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
