"""The modal verb of every rule: how strongly its governing text binds.

The table is edgecases/data/modality.toml.

A rule is a failure only where the text that governs the kernel under test *requires* the
result: "shall", "must" or a plain indicative statement of a normative text ("acos(1)
returns +0", "asinpi(±0) = ±0").  A recommendation ("should"), a permission ("may"), an
undefined or implementation-defined result can never make a failure: the farm reports a
departure from it as a note, or leaves the element unjudged.  This module holds the words
that carry each force and the table that names, for each rule id, the governing text, the
clause of the rule's sentence that carries the verb, and the verb.  tests/test_modality.py
proves that every rule of edgecases/data has a row, that the verb is the one written in the
clause, and that the rule's severity is the one the verb implies unless the row carries a
``departure`` saying why.

Pure data and stdlib (docs/design.md, decision 9): no numpy, pyopencl or Ray.
"""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from fuzzfarm.errors import SpecDataError

__all__ = ["VERBS", "BINDING", "TEXTS", "Modality", "ModalityError", "table", "modality",
           "implied_severity", "verbs_in", "front_end_of_text", "audit", "governing",
           "FRONT_ENDS", "check_front_end"]


class ModalityError(SpecDataError):
    """edgecases/data/modality.toml is malformed (unknown verb or text, duplicate id)."""


#: Each verb the table may name, with the words of a clause that carry it (whole words,
#: case-insensitive).  "is" is the indicative of a normative text (ISO/IEC Directives Part 2
#: §7: a statement of fact in a normative clause is a requirement; C99 Annex F states its
#: prescribed results that way).
VERBS: dict[str, tuple[str, ...]] = {
    "shall": ("shall",),
    "must": ("must",),
    "is": ("is", "are", "returns", "return", "gives", "give", "stores", "treat", "treats",
           "=", "compute", "computes", "computed", "calculates", "calculated", "produce",
           "produces", "support", "describes", "proceed", "reduce", "has", "have", "converts",
           "rounds", "will"),
    "should": ("should",),
    "may": ("may",),
    "recommended": ("recommended",),
    "undefined": ("undefined",),
    "implementation-defined": ("implementation-defined",),
}

#: The verbs that bind: a departure is a failure.  Every other verb's departure is at most
#: a note.
BINDING = frozenset({"shall", "must", "is"})

#: Verbs of another force than the indicative: a clause holding one of these words cannot
#: be read as a plain statement of fact.
_MODAL = ("shall", "must", "should", "may", "recommended", "undefined",
          "implementation-defined", "unspecified")

#: The front ends a kernel enters a driver by: OpenCL C source or a SPIR-V module.
FRONT_ENDS = ("opencl-c", "spirv")


def check_front_end(front_end: str) -> None:
    """Raise ValueError naming ``front_end`` when it is not one of FRONT_ENDS."""
    if front_end not in FRONT_ENDS:
        raise ValueError(f"front_end={front_end!r} is unknown; choose one of "
                         f"{', '.join(FRONT_ENDS)}")

#: The texts a rule can be governed by, and the front end each governs (None: every
#: kernel).  A rule governed by a front end's text binds only kernels built through that
#: front end (OpenCL C 3.0 §6.4.3.3 versus the SPIR-V SaturatedConversion decoration).
TEXTS: dict[str, str | None] = {
    "C99 Annex F": None,
    "C99": None,
    "OpenCL SPIR-V Env": None,
    "OpenCL C 3.0": "opencl-c",
    "SPIR-V": "spirv",
    "IEEE 754-2008": None,
    "OpenCL 3.0 API": None,
    "fuzzfarm": None,
}


@dataclass(frozen=True)
class Modality:
    """One row of the table.  ``id`` a rule id, or a prefix ending in ``.*`` for rules
    made at run time (``ulp.*``); ``text`` the governing text (a key of TEXTS); ``clause``
    the words of the rule's sentence that carry the verb ('' means the whole sentence);
    ``verb`` a key of VERBS; ``departure`` why the rule's severity is not the one the verb
    implies ('' where it is); ``sentence`` the governing sentence of a pattern row (the
    rules it matches are made at run time and have none in the data)."""

    id: str
    text: str
    verb: str
    clause: str = ""
    departure: str = ""
    sentence: str = ""

    @property
    def binding(self) -> bool:
        """True for shall, must and the indicative: a departure is a failure."""
        return self.verb in BINDING

    @property
    def severity(self) -> str:
        """The severity the verb implies ('fail' or 'note'), before any departure."""
        return implied_severity(self.verb)


def implied_severity(verb: str) -> str:
    """'fail' for a binding verb (shall, must, is), 'note' for the others.  Raises
    KeyError for a verb that is not in VERBS."""
    if verb not in VERBS:
        raise KeyError(f"verb={verb!r}; use one of {sorted(VERBS)}")
    return "fail" if verb in BINDING else "note"


_WORD = re.compile(r"[A-Za-z][A-Za-z-]*|=")


def verbs_in(clause: str) -> set[str]:
    """The verbs (keys of VERBS, plus 'unspecified') whose words occur in ``clause`` as
    whole words.  "is" is reported only where no modal word occurs: "shall be converted"
    holds "be", not an indicative."""
    words = {w.lower() for w in _WORD.findall(clause)}
    found = {v for v, forms in VERBS.items() if v != "is" and words & set(forms)}
    if "unspecified" in words:
        found.add("unspecified")
    if not found & set(_MODAL) and words & set(VERBS["is"]):
        found.add("is")
    return found


def front_end_of_text(text: str) -> str | None:
    """The front end a governing text binds ('opencl-c', 'spirv': FRONT_ENDS), or None
    for a text that binds every kernel.  Raises KeyError for an unknown text."""
    return TEXTS[text]


def _parse(data: dict, src: str) -> dict[str, Modality]:
    out: dict[str, Modality] = {}
    keys = {"text", "verb", "clause", "departure", "sentence"}
    for rid, row in data.get("rule", {}).items():
        where = f"edgecases/data/{src}: {rid}"
        if not isinstance(row, dict):
            raise ModalityError(f"{where}: give an inline table, "
                                f"e.g. {{ text = ..., verb = ... }}")
        extra = set(row) - keys
        if extra:
            raise ModalityError(f"{where}: unknown key(s) {sorted(extra)}; use {sorted(keys)}")
        if row.get("verb") not in VERBS:
            raise ModalityError(f"{where}: verb={row.get('verb')!r}; use one of {sorted(VERBS)}")
        if row.get("text") not in TEXTS:
            raise ModalityError(f"{where}: text={row.get('text')!r}; use one of {sorted(TEXTS)}")
        if rid.endswith(".*") and not row.get("sentence"):
            raise ModalityError(f"{where}: a pattern row needs the governing 'sentence'")
        out[rid] = Modality(rid, row["text"], row["verb"],
                            " ".join(row.get("clause", "").split()),
                            " ".join(row.get("departure", "").split()),
                            " ".join(row.get("sentence", "").split()))
    return out


@lru_cache(maxsize=None)
def table() -> dict[str, Modality]:
    """Every row of edgecases/data/modality.toml by rule id (patterns end in ``.*``).
    Raises ModalityError for a malformed row."""
    text = resources.files("edgecases").joinpath("data", "modality.toml").read_text("utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModalityError(f"edgecases/data/modality.toml: {exc}") from None
    return _parse(data, "modality.toml")


def modality(rule_id: str) -> Modality | None:
    """The row of ``rule_id``: its own, else the longest pattern ``prefix.*`` that matches
    it; None for an id the table does not know (a device fault is no rule of a text)."""
    t = table()
    if rule_id in t:
        return t[rule_id]
    best = None
    for key, row in t.items():
        if key.endswith(".*") and rule_id.startswith(key[:-1]):
            if best is None or len(key) > len(best.id):
                best = row
    return best


@lru_cache(maxsize=None)
def governing(rule_id: str) -> tuple[str | None, str | None]:
    """(governing text, modal verb) of ``rule_id``, e.g. ('C99 Annex F', 'is') or
    ('OpenCL C 3.0', 'should'): what a finding records of the text that judged it.
    (None, None) for an id the table does not know (a device fault)."""
    row = modality(rule_id)
    return (row.text, row.verb) if row is not None else (None, None)


def _norm(text: str) -> str:
    return " ".join(text.split())


def audit(sentence: str, severity: str, row: Modality | None) -> list[str]:
    """The contradictions between a rule and its row of the table, as one-line messages
    (empty: none).  ``sentence`` the rule's sentence (a pattern row's own sentence when
    the rule has none), ``severity`` the rule's severity as its loader gives it ('fail',
    or 'note'; an exclusion or allowance that never reports counts as 'note').

    Checked: the row exists; its clause is words of the sentence; the verbs written in the
    clause are exactly the row's verb (a clause holding two forces must be narrowed); the
    severity is the one the verb implies, or the row carries a ``departure`` saying why,
    and a row whose severity agrees carries none."""
    if row is None:
        return ["no row in edgecases/data/modality.toml"]
    problems = []
    clause = row.clause or _norm(sentence)
    if row.clause and row.clause not in _norm(sentence):
        problems.append(f"clause={row.clause!r} is not in the sentence {_norm(sentence)!r}")
    found = verbs_in(clause)
    if found != {row.verb}:
        problems.append(f"verb={row.verb!r} but the clause {clause!r} says "
                        f"{sorted(found) or 'no verb of VERBS'}; name the verb written there, "
                        f"or narrow the clause to the words that govern")
    if severity not in ("fail", "note"):
        problems.append(f"severity={severity!r}; expected 'fail' or 'note'")
    elif row.verb in VERBS:
        implied = implied_severity(row.verb)
        if implied != severity and not row.departure:
            problems.append(f"severity={severity!r} contradicts verb={row.verb!r} (which "
                            f"implies {implied!r}); give a 'departure' saying why, or fix "
                            f"the severity")
        if implied == severity and row.departure:
            problems.append(f"a 'departure' is given but severity={severity!r} is what "
                            f"verb={row.verb!r} implies; remove it")
    return problems
