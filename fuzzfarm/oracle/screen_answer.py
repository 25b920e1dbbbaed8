"""The device screen's answer for one chunk of inputs, as the host receives it: its
layout (``ScreenChunk``: one bit per input passed or counted, the largest error per word,
the histogram, the counts of failures the device counted) and the positions the host
reads from it (``candidates``, ``counted``, ``aggregated_sample``, ``clean_candidates``).
Pure data and numpy: the screen kernel that writes it and its soundness are
fuzzfarm.oracle.device_screen's (docs/device_screen.md)."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from fuzzfarm.oracle.histogram import NBINS, NROWS

__all__ = ["ScreenChunk", "candidates", "counted", "aggregated_sample", "clean_candidates",
           "bit_positions", "words_for", "WORD", "LOCAL", "NCLASSES"]

#: Counters of aggregated failures per chunk (the most rules of device_references.EXACT_RULES).
NCLASSES = 4

#: Inputs per work item (one word of ``passed``) and work items per work group.
WORD = 32
LOCAL = 64


def words_for(count: int) -> int:
    """Words of ``passed`` (work items) for a chunk of ``count`` inputs, a multiple of the
    work-group size."""
    items = -(-count // WORD)
    return -(-items // LOCAL) * LOCAL


class ScreenChunk(NamedTuple):
    """The device screen's answer for one chunk (module docstring): ``passed`` uint32
    (words,), ``wmax`` float32 (words,), ``wpos`` uint8 (words,), ``hist`` uint32
    (NROWS, NBINS); ``agg`` uint32 (words,): the inputs whose failure the device counted
    (bit j of word w = input 32 w + j), ``agg_count`` uint32 (2 NCLASSES,): how many per
    rule c of EXACT_RULES and sign s of x (index 2 c + s: the input class of a counted
    input, whose x is always normal), ``agg_c0``, ``agg_c1`` uint32 (words,): the two bits of the rule
    each counted input was counted under (or empty, (0,), where the screen does not
    aggregate: work.session.DeviceSession.land)."""

    passed: np.ndarray
    wmax: np.ndarray
    wpos: np.ndarray
    hist: np.ndarray
    agg: np.ndarray
    agg_count: np.ndarray
    agg_c0: np.ndarray
    agg_c1: np.ndarray

    @staticmethod
    def _layout(count: int) -> list[tuple[str, type, int]]:
        """(field, dtype, elements) in buffer order: the 4-byte fields first, so that
        every one stays aligned."""
        w = words_for(count)
        return [("passed", np.uint32, w), ("wmax", np.float32, w), ("agg", np.uint32, w),
                ("agg_c0", np.uint32, w), ("agg_c1", np.uint32, w),
                ("hist", np.uint32, NROWS * NBINS), ("agg_count", np.uint32, 2 * NCLASSES),
                ("wpos", np.uint8, w)]

    @staticmethod
    def _placed(count: int) -> list[tuple[str, type, int, int, int]]:
        """(field, dtype, elements, byte offset, bytes) in buffer order, for ``count``
        inputs."""
        out, offset = [], 0
        for name, t, n in ScreenChunk._layout(count):
            size = np.dtype(t).itemsize * n
            out.append((name, t, n, offset, size))
            offset += size
        return out

    @staticmethod
    def nbytes(count: int) -> int:
        """Bytes of host memory the answer for ``count`` inputs takes."""
        _, _, _, offset, size = ScreenChunk._placed(count)[-1]
        return offset + size

    @staticmethod
    def views(buf, offset: int, count: int) -> "ScreenChunk":
        """Arrays over ``buf`` (a writable buffer) from byte ``offset``."""
        arrays = {name: np.frombuffer(buf, t, n, offset + at)
                  for name, t, n, at, _ in ScreenChunk._placed(count)}
        arrays["hist"] = arrays["hist"].reshape(NROWS, NBINS)
        return ScreenChunk(**arrays)

    def counted_rule(self, pos: np.ndarray) -> np.ndarray:
        """The class (int64, index into EXACT_RULES[name]) each counted input at ``pos``
        was counted under."""
        if self.agg_c0.size == 0:       # a screen that counts no failures
            return np.zeros(len(pos), np.int64)
        w, b = pos // WORD, (pos % WORD).astype(np.uint32)
        one = np.uint32(1)
        return (((self.agg_c0[w] >> b) & one) | (((self.agg_c1[w] >> b) & one) << one)
                ).astype(np.int64)

    @staticmethod
    def empty(count: int) -> "ScreenChunk":
        """A zeroed answer for ``count`` inputs in fresh memory."""
        return ScreenChunk.views(bytearray(ScreenChunk.nbytes(count)), 0, count)


def bit_positions(words: np.ndarray, count: int, which: np.ndarray | None = None) -> np.ndarray:
    """Positions (int64, sorted, < count) of the set bits of ``words`` (uint32), or of
    the words ``which`` (sorted word indices) only."""
    if which is None:
        if np.count_nonzero(words) * 8 > words.size:    # dense (a chunk of subnormals,
            pos = np.flatnonzero(np.unpackbits(words.view(np.uint8), bitorder="little"))
            return pos[pos < count]                       # of NaNs): 6x faster this way
        which = np.flatnonzero(words)
    bits = np.unpackbits(words[which].view(np.uint8), bitorder="little").reshape(-1, WORD)
    r, c = np.nonzero(bits)
    pos = which[r].astype(np.int64) * WORD + c
    return pos[pos < count]


def candidates(answer: ScreenChunk, count: int) -> np.ndarray:
    """The positions (int64, sorted) of a chunk of ``count`` inputs the host must judge:
    every input the device neither passed nor counted as a failure, and the passed input
    with the largest error (its error is then measured exactly on the host, so the
    chunk's maximum is exact)."""
    n = -(-count // WORD)
    return _with_top(bit_positions(~(answer.passed[:n] | answer.agg[:n]), count), answer)


def _with_top(pos: np.ndarray, answer: ScreenChunk) -> np.ndarray:
    """``pos`` (int64, sorted) with the position of the passed input of the largest error
    under ``answer`` added, where any input passed."""
    if answer.wmax.size and answer.wmax.max() >= 0:
        w = int(np.argmax(answer.wmax))
        top = w * WORD + int(answer.wpos[w])
        k = np.searchsorted(pos, top)
        if k == pos.size or pos[k] != top:
            pos = np.insert(pos, k, top)
    return pos


def counted(answer: ScreenChunk, count: int) -> np.ndarray:
    """The positions (int64, sorted) whose failures the device counted."""
    return bit_positions(answer.agg[:-(-count // WORD)], count)


def aggregated_sample(answer: ScreenChunk, count: int, k: int) -> np.ndarray:
    """The first ``k`` positions (int64, in input order) whose failures the device counted."""
    words = answer.agg[:-(-count // WORD)]
    some = np.flatnonzero(words)[:k]        # k words hold at least k set bits
    return bit_positions(words, count, some)[:k]


def clean_candidates(answer: ScreenChunk, count: int) -> np.ndarray | None:
    """Where the device passed every input of a chunk, its candidates (the passed input
    of the largest error: all the host reads of the chunk's results), else None."""
    if answer.agg_count.any():
        return None
    words = answer.passed[:-(-count // WORD)]
    full = words[:-1] if count % WORD else words
    if full.size and full.min() != np.uint32(0xFFFFFFFF):    # one pass, no temporary
        return None
    if count % WORD and words[-1] != np.uint32((1 << (count % WORD)) - 1):
        return None
    return _with_top(np.empty(0, np.int64), answer)   # every input passed: the top only
