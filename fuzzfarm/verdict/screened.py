"""The verdict on a batch the device screen has judged (fuzzfarm.oracle.device_screen): a
sweep's chunk (inputs numbered) or a ``run`` unit (inputs drawn), one function for both.

The host's checker judges the *candidates* (every input the device did not decide, and the
passed input of the largest error, whose error is then measured exactly); the rest count
as screened, with the device's ULP-error histogram.  Failures the device counted (a wrong
zero or infinity where a rule prescribes one) are sampled: the first FINDINGS_PER_RULE are
judged and recorded, and only if each of them is exactly one failure of the rule the device
counted it under are the others added to the counts (``CheckResult.unrecorded``); if not,
every one of them is judged.  The device never decides a failure on its own.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Callable

import numpy as np

from fuzzfarm.formats import INPUT_CLASSES
from fuzzfarm.oracle.screen_answer import WORD
from fuzzfarm.verdict.findings import CheckResult

__all__ = ["judge_screened", "judge_unit", "SparseOutputs", "outputs_reader", "top_position",
           "MarkedPositions"]

#: Set bits of each byte value.
_POP8 = np.array([bin(v).count("1") for v in range(256)], np.int64)


try:                                    # numpy 2
    from numpy import bitwise_count as _bitwise_count
except ImportError:                     # numpy 1.26: a table of bytes
    _bitwise_count = None


def _popcount(words: np.ndarray) -> np.ndarray:
    """Set bits of each uint32 word (int64)."""
    if _bitwise_count is not None:
        return _bitwise_count(words).astype(np.int64)
    return _POP8[words.view(np.uint8)].reshape(-1, 4).sum(axis=1)


class MarkedPositions:
    """The sorted positions (int64) of the set bits of ``words`` (uint32: bit j of word w
    is position 32 w + j) below ``count``, with ``top`` added where it is not among them,
    without listing them: ``size``; ``positions[ranks]`` (an int or an int array) by
    rank-select; ``rank(positions)`` the inverse, KeyError for a position not held;
    ``np.asarray`` lists every one.  What a unit's verdict reads of the rows the device
    gathered in input order costs a few milliseconds this way instead of a pass over every
    input (a 2**23-input unit's candidates listed took ~50 ms of its check)."""

    def __init__(self, words: np.ndarray, count: int, top: int | None = None):
        n = -(-int(count) // WORD)
        w = np.array(words[:n], dtype=np.uint32)
        if count % WORD and n:
            w[-1] &= np.uint32((1 << (count % WORD)) - 1)
        self.words = w
        self.cum = np.concatenate([[0], np.cumsum(_popcount(w))]).astype(np.int64)
        self.top = None
        if top is not None and top >= 0 and not self._held(np.array([top]))[0]:
            self.top = int(top)
        self.marked = int(self.cum[-1])
        self.size = self.marked + (self.top is not None)
        self._top_rank = None if self.top is None else int(self._below(np.array([self.top]))[0])

    def __len__(self) -> int:
        return self.size

    def _held(self, pos: np.ndarray) -> np.ndarray:
        w, b = pos // WORD, (pos % WORD).astype(np.uint32)
        ok = (pos >= 0) & (w < self.words.size)
        bits = np.zeros(pos.shape, bool)
        bits[ok] = ((self.words[w[ok]] >> b[ok]) & np.uint32(1)).astype(bool)
        return bits

    def _below(self, pos: np.ndarray) -> np.ndarray:
        """Marked positions below each of ``pos`` (which are within the words)."""
        w, b = pos // WORD, (pos % WORD).astype(np.uint32)
        mask = (np.uint64(1) << b.astype(np.uint64)) - np.uint64(1)
        low = (self.words[w].astype(np.uint64) & mask).astype(np.uint32)
        return self.cum[w] + _popcount(low)

    def __getitem__(self, ranks):
        one = np.ndim(ranks) == 0
        r = np.atleast_1d(np.asarray(ranks, np.int64))
        if r.size and (r.min() < -self.size or r.max() >= self.size):
            raise IndexError(f"rank out of {self.size} marked positions")
        r = np.where(r < 0, r + self.size, r)
        out = np.empty(r.shape, np.int64)
        m = np.ones(r.shape, bool)
        if self.top is not None:
            at = r == self._top_rank
            out[at] = self.top
            m = ~at
            r = np.where(r > self._top_rank, r - 1, r)
        rm = r[m]
        w = np.searchsorted(self.cum, rm, side="right") - 1
        bits = np.unpackbits(self.words[w].view(np.uint8).reshape(-1, 4), axis=1,
                             bitorder="little")
        within = np.argmax(np.cumsum(bits, axis=1) > (rm - self.cum[w])[:, None], axis=1)
        out[m] = w * WORD + within
        return int(out[0]) if one else out

    def rank(self, pos) -> np.ndarray:
        """The ranks (int64) of positions ``pos``; raises KeyError for one not held."""
        pos = np.atleast_1d(np.asarray(pos, np.int64))
        top = np.zeros(pos.shape, bool) if self.top is None else pos == self.top
        if not (self._held(pos) | top).all():
            raise KeyError("a result the device screen's answer did not mark was read")
        r = np.empty(pos.shape, np.int64)
        r[~top] = self._below(pos[~top])
        if self.top is not None:
            r[top] = self._top_rank
            r[~top & (pos > self.top)] += 1
        return r

    def __array__(self, dtype=None, copy=None):
        bits = np.unpackbits(self.words.view(np.uint8), bitorder="little")
        out = np.flatnonzero(bits).astype(np.int64, copy=False)
        if self.top is not None:
            out = np.insert(out, self._top_rank, self.top)
        return out if dtype is None else out.astype(dtype)

    @staticmethod
    def of(answer, count: int) -> "MarkedPositions":
        """The positions ``judge_screened`` may read under ``answer`` (as
        ``SparseOutputs.positions`` lists them): the candidates, the counted failures and
        the passed input of the largest error."""
        n = -(-count // WORD)
        return MarkedPositions(~answer.passed[:n] | answer.agg[:n], count,
                               top_position(answer))


class SparseOutputs:
    """A screened batch's outputs at only the positions its verdict may read: the device
    screen's candidates and the failures it counted (``SparseOutputs.of``).  A device
    actor hands these to its check task instead of every result (a tenth of them for a
    drawn unit).  ``at(pos)`` gives {name: values} and raises KeyError for a position it
    does not hold: a verdict can never read a result that was not sent."""

    def __init__(self, count: int, pos: np.ndarray, values: dict):
        self.count, self.pos, self.values = int(count), pos, values

    @staticmethod
    def positions(answer, count: int) -> np.ndarray:
        """The positions (int64, sorted) ``judge_screened`` may read under ``answer``: the
        candidates, the counted failures and the passed input of the largest error."""
        n = -(-count // WORD)
        # candidates | counted = ~(passed | agg) | agg = ~passed | agg: one pass of bits
        words = ~answer.passed[:n] | answer.agg[:n]
        pos = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little")[:count])
        top = _top(answer)
        if top is not None:
            k = int(np.searchsorted(pos, top[0]))
            if k == pos.size or pos[k] != top[0]:
                pos = np.insert(pos, k, top[0])
        return pos.astype(np.int64, copy=False)

    @staticmethod
    def of(outputs: dict, answer, count: int, pos: np.ndarray | None = None):
        """``outputs`` ({name: array (count,)}, e.g. views of staging buffers) cut to the
        positions ``judge_screened`` may read under ``answer`` (``positions``, or ``pos``
        where the caller has them), copied; or ``outputs`` itself where that is most of
        them."""
        pos = SparseOutputs.positions(answer, count) if pos is None else pos
        if pos.size * 4 > count:
            return outputs
        return SparseOutputs(count, pos, {k: np.ascontiguousarray(v[pos])
                                          for k, v in outputs.items()})

    def at(self, pos: np.ndarray) -> dict:
        if pos is self.pos:
            return dict(self.values)        # every position it holds (the common case)
        if isinstance(self.pos, MarkedPositions):
            k = self.pos.rank(pos)
            return {name: v[k] for name, v in self.values.items()}
        pos = np.asarray(pos, np.int64)
        if pos.size == self.pos.size and np.array_equal(pos, self.pos):
            return dict(self.values)
        k = np.searchsorted(self.pos, pos)
        if pos.size and (k.max() >= self.pos.size or (self.pos[k] != pos).any()):
            raise KeyError("a result the device screen's answer did not mark was read")
        return {name: v[k] for name, v in self.values.items()}


def union(count: int, *parts) -> np.ndarray:
    """The sorted union (int64) of position arrays below ``count``: one pass over a mask
    of ``count`` (np.union1d hashes: 0.1 s for a unit's 2**21 positions under numpy 2.5)."""
    mask = np.zeros(count, dtype=bool)
    for p in parts:
        mask[np.asarray(p, dtype=np.int64)] = True
    return np.flatnonzero(mask).astype(np.int64, copy=False)


def outputs_reader(outputs):
    """``at(pos)`` -> {name: values at pos} over ``outputs`` ({name: array} or a
    SparseOutputs)."""
    if isinstance(outputs, SparseOutputs):
        return outputs.at
    return lambda pos: {k: v[pos] for k, v in outputs.items()}


def judge_unit(fn, inputs_at: Callable[[np.ndarray], dict], count: int, outputs, answer,
               claims, cands=None) -> CheckResult:
    """``judge_screened`` for a drawn unit: its CheckResult, ``max_ulp_element`` a position
    in the unit (-1: none)."""
    res, _, pos = judge_screened(fn, inputs_at, count, outputs, answer, claims, cands)
    if res.max_ulp_element >= 0:
        res.max_ulp_element = int(pos[res.max_ulp_element])
    return res


def judge_screened(fn, inputs_at: Callable[[np.ndarray], dict], count: int, outputs: dict,
                   answer, claims, cands: np.ndarray | None = None
                   ) -> tuple[CheckResult, dict, np.ndarray]:
    """The verdict on ``count`` inputs of built-in ``fn`` (a catalogue Function) whose
    ``outputs`` ({name: array (count,)}, or a ``SparseOutputs``) the device screened into
    ``answer`` (an
    oracle.screen_answer.ScreenChunk).  ``inputs_at(pos)``: the inputs ({name: array})
    at positions ``pos`` (int64, sorted).  Returns (CheckResult over all ``count`` inputs,
    its findings indexed by position, the device's histogram added; the candidates'
    inputs, which its ``max_ulp_element`` indexes; the candidates' positions (int64)).
    ``cands``: the candidates' positions (``screen_answer.candidates``, or a
    MarkedPositions of them) where the caller has them."""
    from fuzzfarm.oracle.device_references import EXACT_RULES
    from fuzzfarm.oracle.screen_answer import (aggregated_sample, candidates,
                                               counted as counted_positions)
    from fuzzfarm.verdict.checker import FINDINGS_PER_RULE, check_batch

    outputs_at = outputs_reader(outputs)

    def judge(pos):
        inputs = inputs_at(pos)
        res = check_batch(fn, inputs, outputs_at(pos), claims)
        at = np.asarray(pos[np.array([f.index for f in res.findings], np.int64)]) \
            if res.findings else ()
        res.findings = [replace(f, index=int(i)) for f, i in zip(res.findings, at)]
        return res, inputs

    pos = candidates(answer, count) if cands is None else cands
    counted = int(answer.agg_count.sum())
    sample = CheckResult(fn.name, 0)
    if counted:
        # the first FINDINGS_PER_RULE, and an example of every (rule, sign of x) counted:
        # a counted input's x is normal, so the sign is its input class
        by = answer.agg_count.reshape(-1, 2).astype(np.int64)
        spos = aggregated_sample(answer, count, FINDINGS_PER_RULE)
        missing = set(zip(*np.nonzero(by))) - set(_rule_sign(fn, answer, inputs_at, spos))
        if missing:                 # rare: look through every counted input for them
            every = counted_positions(answer, count)
            keys = _rule_sign(fn, answer, inputs_at, every)
            spos = union(count, spos, [every[keys.index(k)] for k in missing])
        sample, _ = judge(spos)
        if not _sample_confirms(sample, spos, answer, EXACT_RULES[fn.name]):
            # not what the device counted: judge every one of them
            pos = union(count, np.asarray(pos), counted_positions(answer, count))
            counted, sample = 0, CheckResult(fn.name, 0)
    total, inputs = judge(pos)
    if fn.is_native:
        _measure_top(total, judge, pos, answer)
    total.n = count
    total.screened += count - int(pos.size) - counted
    if counted:
        rules = EXACT_RULES[fn.name]
        total.findings.extend(sample.findings)
        total.findings.sort(key=lambda f: (f.index, f.rule_id))
        sampled = Counter(_rule_sign(fn, answer, inputs_at, spos))
        for (c, sign), k in np.ndenumerate(by):
            if c < len(rules) and k - sampled[(c, sign)] > 0:
                total.add_unrecorded(rules[c], "fail", _NORMAL_CODE[sign],
                                     int(k) - sampled[(c, sign)])
    total.add_histogram(_device_histogram(fn, answer, inputs_at, claims.fmt))
    return total, inputs, pos


def _measure_top(total: CheckResult, judge, pos, answer) -> None:
    """A native_* built-in's candidates are measured by a sample (the checker's
    NATIVE_SAMPLE, nothing judged: OpenCL C 3.0 §6.15.2): the passed input of the largest
    error -- the unit's maximum -- is measured whether or not the sample holds it, its
    error folded into ``total`` at its rank among the candidates ``pos``."""
    top = _top(answer)
    if top is None:
        return
    one, _ = judge(top)
    rank = pos.rank(top) if isinstance(pos, MarkedPositions) else \
        np.searchsorted(np.asarray(pos), top)
    total.note_error(one.max_ulp_error, rank)


def _device_histogram(fn, answer, inputs_at, fmt) -> np.ndarray:
    """The device's histogram of its passed inputs' errors without the one the host
    judged again (the passed input of the largest error, a candidate: the host's check
    bins it), so that every input is binned once."""
    from fuzzfarm.oracle.histogram import histogram
    hist = answer.hist.astype(np.int64)
    top = _top(answer)
    if top is not None:
        first = fn.inputs[0].name       # binned by the first argument, as on the device
        w = int(top[0]) // WORD
        hist -= histogram(answer.wmax[w:w + 1], inputs_at(top)[first], fmt, name=fn.name)
    return hist


def top_position(answer) -> int:
    """The position of the passed input of the largest error under ``answer`` (the first
    such word's, as the device's fuzzfarm_top finds it), -1 where none passed."""
    top = _top(answer)
    return -1 if top is None else int(top[0])


def _top(answer) -> np.ndarray | None:
    """The position (int64 array of one) of the passed input of the largest error, or
    None where no word has one."""
    if answer.wmax.size and answer.wmax.max() >= 0:
        w = int(np.argmax(answer.wmax))
        return np.array([w * WORD + int(answer.wpos[w])], np.int64)
    return None


#: The input class code (verdict.findings.class_codes) of a normal x, by its sign.
_NORMAL_CODE = tuple(INPUT_CLASSES.index(c) for c in ("pos_normal", "neg_normal"))


def _rule_sign(fn, answer, inputs_at, pos) -> list:
    """(rule class, sign of x) of the counted inputs at ``pos``."""
    (arg,) = fn.inputs                  # the device screen's built-ins have one argument
    sign = (np.asarray(inputs_at(pos)[arg.name]).astype(np.uint32) >> np.uint32(31))
    return list(zip(answer.counted_rule(pos).tolist(), sign.tolist()))


def _sample_confirms(sample, spos, answer, rules) -> bool:
    """Each sampled input has exactly one finding: a failure of the rule the device
    counted it under."""
    fs = sample.findings
    if sample.unrecorded or len(fs) != spos.size or {f.index for f in fs} != set(spos.tolist()):
        return False
    cls = dict(zip(spos.tolist(), answer.counted_rule(spos).tolist()))
    return all(f.severity == "fail" and cls[f.index] < len(rules) and
               f.rule_id == rules[cls[f.index]] for f in fs)
