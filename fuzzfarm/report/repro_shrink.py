"""The hypothesis side of fuzzfarm repro (part 2 of 3): strategies over a target's
candidate inputs, the example database (``RESULTS/_hypothesis``) whose saved inputs later
runs replay first, and ``shrink``, the minimization toward the simplest input of the same
rule class.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from fuzzfarm.formats import FloatFormat
from fuzzfarm.report.repro_case import Reproducer, Buffer, Case

__all__ = ["candidate_strategy", "encode", "class_key", "db_dir", "save_example", "save_inputs",
           "replay_examples", "ShrinkInfo", "shrink", "DB_DIRNAME", "DEFAULT_MAX_EXAMPLES",
           "MAX_LANDMARKS"]

#: Hypothesis examples (generation phase) of one minimization.
DEFAULT_MAX_EXAMPLES = 300
#: The example database's directory inside a results directory.
DB_DIRNAME = "_hypothesis"
#: Candidates of the batched special-value launch that seeds the search (at most).
MAX_LANDMARKS = 4096

# --------------------------------------------------------------------------- hypothesis
def _float_value(b: int, fmt: FloatFormat) -> float:
    return fmt.value(b)


def _float_strategy(fmt: FloatFormat):
    from hypothesis import strategies as st
    fdt, udt = np.dtype(fmt.float), np.dtype(fmt.uint)

    def finite_bits(x: float) -> int:
        return int(np.array(x, dtype=fdt).view(udt))

    def inf_bits(negative: bool) -> int:
        return fmt.pos_inf | (fmt.sign_mask if negative else 0)

    qmax = fmt.quiet_bit - 1

    def nan(flags):
        negative, signaling = flags
        lo = 1 if signaling else 0
        return st.integers(lo, qmax).map(
            lambda p: (fmt.sign_mask if negative else 0) | fmt.pos_inf
            | (0 if signaling else fmt.quiet_bit) | p)

    branches = (
        st.floats(width=fmt.bits, allow_nan=False, allow_infinity=False).map(finite_bits),
        st.booleans().map(inf_bits),
        st.tuples(st.booleans(), st.booleans()).flatmap(nan),
    )
    return st.integers(0, len(branches) - 1).flatmap(lambda k: branches[k])


def _int_range(slot: Buffer) -> tuple[int, int]:
    info = np.iinfo(slot.dtype)
    return int(info.min), int(info.max)


def _slot_strategy(slot: Buffer):
    from hypothesis import strategies as st
    if slot.kind == "float":
        return _float_strategy(slot.fmt)
    lo, hi = _int_range(slot)
    return st.integers(lo, hi)


def candidate_strategy(target: Case):
    """The hypothesis strategy of the target's candidates (tuples of buffer values); see
    the module docstring for the order it shrinks in."""
    from hypothesis import strategies as st
    per = target.width if target.geometric else 1
    return st.tuples(*(_slot_strategy(s) for s in target.inputs() for _ in range(per)))


def encode(target: Case, cand: tuple) -> list:
    """The hypothesis choice sequence that ``candidate_strategy(target)`` turns into
    ``cand`` (to seed the search and to save it in an example database)."""
    per = target.width if target.geometric else 1
    slots = [s for s in target.inputs() for _ in range(per)]
    choices: list = []
    for s, v in zip(slots, cand):
        v = int(v)
        if s.kind != "float":
            choices.append(v)
            continue
        fmt = s.fmt
        mag = v & fmt.abs_mask
        negative = bool(v & fmt.sign_mask)
        if mag < fmt.pos_inf:
            choices += [0, _float_value(v, fmt)]
        elif mag == fmt.pos_inf:
            choices += [1, negative]
        else:
            signaling = not (v & fmt.quiet_bit)
            choices += [2, negative, signaling, v & (fmt.quiet_bit - 1)]
    return choices


def class_key(function: str, precision: str, rule_class: str) -> bytes:
    """The example-database key of one rule class of a built-in in one precision."""
    return f"fuzzfarm.repro:{function}:{precision}:{rule_class}".encode()


def _index_key(function: str, precision: str) -> bytes:
    return f"fuzzfarm.repro:{function}:{precision}".encode()


def db_dir(results: str | os.PathLike) -> Path:
    """Where ``fuzzfarm repro`` keeps its example database: ``RESULTS/_hypothesis`` (a
    hypothesis DirectoryBasedExampleDatabase; pyarrow skips ``_`` names)."""
    return Path(results) / DB_DIRNAME


def save_example(db_path: str | os.PathLike, target: Case, cand: tuple) -> None:
    """Save a minimized candidate in the example database at ``db_path``: under
    ``class_key`` as a hypothesis choice sequence (what ``shrink``, and any
    ``find``/``@given`` over ``candidate_strategy(target)`` with that key, replays first)
    and as JSON (``<key>.inputs``: the raw input bits, read by ``replay_examples``), and
    the rule class under the (function, precision) index."""
    from hypothesis.database import DirectoryBasedExampleDatabase
    db = DirectoryBasedExampleDatabase(str(db_path))
    key = class_key(target.function, target.precision, target.rule_class)
    try:
        from hypothesis.database import choices_to_bytes
        db.save(key, choices_to_bytes(encode(target, cand)))
    except ImportError:         # a hypothesis before choice sequences: JSON only
        pass
    save_inputs(db_path, target.function, target.precision, target.rule_class, target.width,
                target.u64(cand))


def save_inputs(db_path: str | os.PathLike, function: str, precision: str, rule_class: str, width: int,
                input_bits) -> None:
    """Save one input (``input_bits``: raw bits, unsigned 64-bit, one per argument) of
    ``function`` in ``precision`` under ``rule_class`` in the example database at
    ``db_path``, where ``replay_examples`` finds it: a later campaign into the same results
    puts it first in the target's special-value unit."""
    from hypothesis.database import DirectoryBasedExampleDatabase
    db = DirectoryBasedExampleDatabase(str(db_path))
    entry = {"function": function, "precision": precision, "rule_class": rule_class,
             "vector_width": int(width), "input_bits": [int(b) for b in input_bits]}
    db.save(class_key(function, precision, rule_class) + b".inputs",
            json.dumps(entry, sort_keys=True).encode())
    db.save(_index_key(function, precision),
            json.dumps({"rule_class": rule_class}, sort_keys=True).encode())


def _saved(db_path, function: str, precision: str, rule_class: str | None = None) -> list:
    from hypothesis.database import DirectoryBasedExampleDatabase
    if not Path(db_path).is_dir():
        return []
    db = DirectoryBasedExampleDatabase(str(db_path))
    classes = set()
    for raw in db.fetch(_index_key(function, precision)):
        try:
            classes.add(json.loads(raw)["rule_class"])
        except (ValueError, KeyError, TypeError):
            continue
    if rule_class is not None:
        classes &= {rule_class}
    entries = []
    for rc in sorted(classes):
        for raw in db.fetch(class_key(function, precision, rc) + b".inputs"):
            try:
                e = json.loads(raw)
                entries.append((rc, tuple(int(v) for v in e["input_bits"])))
            except (ValueError, KeyError, TypeError):
                continue
    return sorted(set(entries))


def replay_examples(db_path: str | os.PathLike, function: str,
                    precision: str) -> list[tuple[int, ...]]:
    """The inputs saved for ``function`` in ``precision`` (every rule class) in the example
    database at ``db_path`` (``RESULTS/_hypothesis``): tuples of raw input bits (unsigned
    64-bit, two's complement for ints; one per argument, every lane of each argument for a
    geometric built-in), sorted, for a later run to put first.  [] when there are none."""
    return sorted({bits for _, bits in _saved(db_path, function, precision)})


def _landmarks(target: Case, original: tuple) -> list[tuple]:
    """Candidates that change one argument (one lane of a geometric one) of ``original``
    to a special value: one batched launch finds the simple ones that fail too."""
    from strategies import special_float_bits, special_int_values
    per = target.width if target.geometric else 1
    slots = [s for s in target.inputs() for _ in range(per)]
    out: list = []
    for i, s in enumerate(slots):
        if s.kind == "float":
            pool = special_float_bits(s.fmt)
        else:
            lo, hi = _int_range(s)
            pool = [v for v in set(special_int_values()) | {lo, hi, lo + 1, hi - 1}
                    if lo <= v <= hi]
        for v in sorted(pool, key=lambda v: (abs(int(v)), int(v) < 0)):
            c = list(original)
            c[i] = int(v)
            out.append(tuple(c))
    return list(dict.fromkeys(out))[:MAX_LANDMARKS]


@dataclass
class ShrinkInfo:
    """How a minimization went: ``seeded`` (hypothesis replayed a seed first),
    ``seeds`` offered, ``candidates`` hypothesis tried, ``evaluations`` of them that
    ran on the device (the rest were cached), ``launches`` (including the batched
    special-value one), ``seconds``."""

    seeded: bool = False
    seeds: int = 0
    candidates: int = 0
    evaluations: int = 0
    launches: int = 0
    seconds: float = 0.0


def shrink(rep: Reproducer, original: tuple, max_examples: int = DEFAULT_MAX_EXAMPLES,
           seeds: Sequence[tuple] = (), landmarks: bool = True
           ) -> tuple[tuple, ShrinkInfo]:
    """The simplest candidate hypothesis finds that fails the target's rule class,
    starting from ``original`` (which must hold).  ``seeds``: more candidates to start
    from (saved examples); ``landmarks``: also seed with the failing candidates of one
    batched launch over special values (``_landmarks``).  Returns (candidate, info)."""
    from hypothesis import HealthCheck, Phase, Verbosity, find, settings
    from hypothesis.database import InMemoryExampleDatabase
    from hypothesis.errors import NoSuchExample

    t0 = time.perf_counter()
    launches0 = rep.launches
    original = tuple(int(v) for v in original)
    if not rep.holds(original):
        raise ValueError(f"the original input {rep.target.describe(original)} does not fail "
                         f"{rep.target.rule_class}; there is nothing to minimize")
    info = ShrinkInfo()
    pool = [tuple(int(v) for v in s) for s in seeds]
    if landmarks:
        pool += _landmarks(rep.target, original)
    failing = [original]
    pool = [c for c in dict.fromkeys(pool) if c != original]
    if pool:
        failing += [o.candidate for o in rep.evaluate(pool) if o.holds]
    db = InMemoryExampleDatabase()
    key = b"fuzzfarm.repro.search"
    try:
        from hypothesis.database import choices_to_bytes
    except ImportError:
        choices_to_bytes = None
    if choices_to_bytes is not None:
        blobs = sorted({choices_to_bytes(encode(rep.target, c)) for c in failing},
                       key=lambda b: (len(b), b))
        # hypothesis replays at most max(2, max_examples / 10) entries: keep the simplest
        # few and the original
        room = max(2, -(-max_examples // 10)) - 1
        keep = blobs[:room]
        orig_blob = choices_to_bytes(encode(rep.target, original))
        if orig_blob not in keep:
            keep.append(orig_blob)
        for b in keep:
            # the secondary corpus: replayed and then shrunk (an entry of the primary
            # corpus counts as shrunk already)
            db.save(key + b".secondary", b)
        info.seeds = len(keep)
    seen: list = []

    def predicate(cand) -> bool:
        seen.append(cand)
        return rep.holds(cand)

    s = settings(database=db, max_examples=max(1, int(max_examples)), deadline=None,
                 phases=(Phase.reuse, Phase.generate, Phase.shrink),
                 suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet)
    ev0 = rep.evaluations
    try:
        # no ``random=``: a seeded search would not read the database
        best = tuple(find(candidate_strategy(rep.target), predicate, settings=s,
                          database_key=key))
    except NoSuchExample:
        best = original
    info.seeded = bool(seen) and tuple(int(v) for v in seen[0]) in set(failing)
    info.candidates = len(seen)
    info.evaluations = rep.evaluations - ev0
    info.launches = rep.launches - launches0
    info.seconds = time.perf_counter() - t0
    if not rep.holds(best):         # never: find returns a candidate that held
        best = original
    return best, info
