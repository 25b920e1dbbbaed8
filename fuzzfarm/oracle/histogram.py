"""The ULP-error histogram (issue 17): how far results are from f, by input class.

One layout for every producer -- the device screen (device_screen.cl counts the inputs it
passes), the host screen (verdict.checker counts the inputs it passes) -- and every
reader (the stats rows' ``ulp_histogram``, the sweep's summary, the triage report):

* rows: exponent bands of the first float argument x, ``NBANDS`` of them, each an equal
  share of the format's biased exponents (binary32: 16 exponents per band; band 0 holds
  the zeros and subnormals and the smallest normals, the last the largest normals,
  infinities and NaNs);
* columns: ``NBINS`` error bins, log-spaced by octave: bin 0 for errors below
  ``2**HIST_LOG2_LO`` ULP (exact results included), then ``HIST_BINS_PER_OCTAVE`` equal
  parts of each octave (``bin_edges``), the last open above ``2**(HIST_LOG2_LO + 16)``.

Errors are the screens' estimates in ULPs (``screen`` module docstring: exact within
the margin, at a power of two the smaller ULP's, at most twice the error).
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import FloatFormat

__all__ = ["NBANDS", "NBINS", "HIST_LOG2_LO", "HIST_BINS_PER_OCTAVE", "HIST_FRAC_BITS",
           "bin_edges", "error_bins", "exponent_bands", "histogram", "distribution",
           "percentile_bounds", "to_cells", "from_cells"]

NBANDS = 16
HIST_LOG2_LO = -12
HIST_BINS_PER_OCTAVE = 4
HIST_FRAC_BITS = 2                      # log2(HIST_BINS_PER_OCTAVE)
_OCTAVES = 16                           # 2**-12 .. 2**4 ULP
NBINS = _OCTAVES * HIST_BINS_PER_OCTAVE + 2


def bin_edges() -> np.ndarray:
    """The lower edges in ULPs of bins 1 .. NBINS-1 (float64, shape (NBINS-1,)): each
    octave 2**k .. 2**(k+1) split in HIST_BINS_PER_OCTAVE equal parts (the float's top
    fraction bits); bin 0 holds the errors below the first edge (exact results
    included)."""
    b = np.arange(NBINS - 1)
    k, j = HIST_LOG2_LO + b // HIST_BINS_PER_OCTAVE, b % HIST_BINS_PER_OCTAVE
    return np.ldexp(1.0 + j / HIST_BINS_PER_OCTAVE, k)


def error_bins(err: np.ndarray) -> np.ndarray:
    """The bin (int32, same shape) of each error ``err`` (ULPs, >= 0; float): the device
    kernel's computation on the float32 bits of the error (for a positive float32,
    ``bits >> (23 - HIST_FRAC_BITS)`` is ``HIST_BINS_PER_OCTAVE`` times its exponent plus
    the top fraction bits), so both sides bin alike."""
    with np.errstate(over="ignore"):            # beyond float32: inf, the top bin
        e = np.asarray(err, np.float32).view(np.int32) >> (23 - HIST_FRAC_BITS)
    e -= (127 + HIST_LOG2_LO) * HIST_BINS_PER_OCTAVE - 1
    return np.clip(e, 0, NBINS - 1, out=e)


def exponent_bands(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """The band (int32, same shape) of each pattern ``bits`` of ``fmt``: the top
    log2(NBANDS) bits of its biased exponent."""
    shift = fmt.bits - 1 - (NBANDS.bit_length() - 1)
    b = np.asarray(bits).astype(fmt.uint) >> fmt.uint(shift)
    return (b & fmt.uint(NBANDS - 1)).astype(np.int32)


def histogram(err: np.ndarray, bits: np.ndarray, fmt: FloatFormat,
              where: np.ndarray | None = None) -> np.ndarray:
    """The histogram (int64, (NBANDS, NBINS)) of errors ``err`` (ULPs) of inputs whose
    first float argument has patterns ``bits`` (same shape), of the elements ``where``
    (bool, same shape) only if given."""
    cell = exponent_bands(bits, fmt)
    cell *= NBINS
    cell += error_bins(err)
    if where is not None:
        cell[~where] = NBANDS * NBINS                      # a cell past the end: dropped
    h = np.bincount(np.ravel(cell), minlength=NBANDS * NBINS + 1)[:NBANDS * NBINS]
    return h.reshape(NBANDS, NBINS)


def to_cells(hist: np.ndarray) -> list[dict]:
    """The nonzero cells of ``hist`` as stored in a stats row's ``ulp_histogram``:
    [{"band", "bin", "count"}, ...] (store.STATS_SCHEMA)."""
    band, b = np.nonzero(hist)
    return [{"band": int(i), "bin": int(j), "count": int(hist[i, j])} for i, j in zip(band, b)]


def from_cells(cells) -> np.ndarray:
    """The histogram (int64, (NBANDS, NBINS)) of stored cells (``to_cells``; None or
    empty: all zero)."""
    h = np.zeros((NBANDS, NBINS), np.int64)
    for cell in cells or ():
        h[cell["band"], cell["bin"]] += cell["count"]
    return h


def distribution(hist: np.ndarray) -> dict:
    """The summary of a histogram (int array (NBANDS, NBINS)): ``ulp_histogram`` {bin's
    lower edge in ULPs (str; '0' for bin 0): count} over all bands,
    ``ulp_histogram_by_band`` {band index (str): {edge: count}}, and ``ulp_p50`` /
    ``ulp_p99``: the upper edges (ULPs) of the bins holding the median and the 99th
    percentile (upper bounds on them; None in the open top bin; absent for an empty
    histogram)."""
    edges = np.concatenate([[0.0], bin_edges()])
    names = ["0"] + [f"{e:.6g}" for e in edges[1:]]

    def cells(row):
        return {names[b]: int(row[b]) for b in np.flatnonzero(row)}
    total = hist.sum(axis=0)
    out = {"ulp_histogram": cells(total),
           "ulp_histogram_by_band": {str(band): cells(hist[band])
                                      for band in np.flatnonzero(hist.sum(axis=1))}}
    if total.sum():          # None where it falls in the open top bin
        for key, v in zip(("ulp_p50", "ulp_p99"), percentile_bounds(total)):
            out[key] = None if np.isinf(v) else v
    return out


def percentile_bounds(counts: np.ndarray, qs=(0.5, 0.99)) -> tuple:
    """Upper bounds (ULPs, floats) on the quantiles ``qs`` of the errors counted in
    ``counts`` (int, (NBINS,), not all zero): the upper edge of the bin each falls in
    (inf for the open top bin)."""
    upper = np.concatenate([bin_edges(), [np.inf]])
    cum = np.cumsum(counts)
    return tuple(float(upper[int(np.searchsorted(cum, q * cum[-1]))]) for q in qs)
