"""The ULP-error histogram (issue 17): how far results are from f, by input class.

One layout for every producer -- the device screen (device_screen.cl counts the inputs it
passes), the host screen (verdict.checker counts the inputs it passes) -- and every
reader (the stats rows' ``ulp_histogram``, the sweep's summary, the triage report):

* rows (``NROWS``): input classes of the first float argument x, each input in exactly
  one -- ``ROW_SUBNORMAL`` (x subnormal), ``ROW_NEAR_ZERO`` (x within ``NEAR`` of a
  point other than 0 where f is zero, and not on it: the integers for sinpi and tanpi,
  the half-integers for cospi, 1 for log, log2 and log10), ``ROW_NEAR_POLE`` (x within
  ``NEAR`` of a pole: the half-integers for tanpi, the negative integers for tgamma and
  lgamma), ``NEAR_POINTS`` says which; every other input by exponent band, ``NBANDS``
  of them, each an equal share of the format's biased exponents (binary32: 16 exponents
  per band; band 0 holds the zeros and the smallest normals, the last the largest
  normals, infinities and NaNs).  Near points are looked for only where
  |x| < 2**(p - 2), below which a float is not itself an integer or half-integer;
  sin, cos and tan have their zeros and poles at multiples of pi/2, which no float is
  near enough for this test to be cheap: they have no near rows;
* columns: ``NBINS`` error bins, log-spaced by octave: bin 0 for errors below
  ``2**HIST_LOG2_LO`` ULP (exact results included), then ``HIST_BINS_PER_OCTAVE`` equal
  parts of each octave (``bin_edges``), the last open above ``2**(HIST_LOG2_LO + 16)``.

Errors are the screens' estimates in ULPs (``screen`` module docstring: exact within
the margin, at a power of two the smaller ULP's, at most twice the error).
"""
from __future__ import annotations

import numpy as np

from fuzzfarm.formats import FloatFormat

__all__ = ["NBANDS", "NROWS", "ROW_SUBNORMAL", "ROW_NEAR_ZERO", "ROW_NEAR_POLE",
           "NEAR", "NEAR_KINDS", "NEAR_POINTS", "ROW_NAMES", "NBINS", "HIST_LOG2_LO",
           "HIST_BINS_PER_OCTAVE", "HIST_FRAC_BITS", "bin_edges", "error_bins",
           "exponent_bands", "input_rows", "histogram", "distribution",
           "percentile_bounds", "to_cells", "from_cells"]

NBANDS = 16
ROW_SUBNORMAL, ROW_NEAR_ZERO, ROW_NEAR_POLE = NBANDS, NBANDS + 1, NBANDS + 2
NROWS = NBANDS + 3
#: The rows' names in summaries (``distribution``): the bands by number.
ROW_NAMES = tuple(str(b) for b in range(NBANDS)) + ("subnormal", "near_zero", "near_pole")
#: How near a zero or pole x must be for its row: |x - point| <= NEAR, x != point.
NEAR = 2.0 ** -10
#: built-in -> (where f is zero, where it has poles): 'integer' (nonzero integers),
#: 'half_integer', 'one', 'negative_integer' or None (device_screen.cl's NEAR_*_KIND
#: numbers them 1, 2, 3, 4 in the order of ``NEAR_KINDS``).
NEAR_KINDS = ("integer", "half_integer", "one", "negative_integer")
NEAR_POINTS = {
    "sinpi": ("integer", None), "cospi": ("half_integer", None),
    "tanpi": ("integer", "half_integer"),
    "log": ("one", None), "log2": ("one", None), "log10": ("one", None),
    "tgamma": (None, "negative_integer"), "lgamma": (None, "negative_integer"),
    "lgamma_r": (None, "negative_integer"),
}
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


def _near(x: np.ndarray, kind: str | None) -> np.ndarray:
    """Whether each x (float64, exact) is within NEAR of a point of ``kind`` and not on
    it (``NEAR_POINTS``); the arithmetic is exact for |x| < 2**51."""
    if kind is None:
        return np.zeros(x.shape, bool)
    if kind == "one":
        d = x - 1.0
    else:           # the nearest integer to y (ties to even), as device_screen.cl's
        y = x - 0.5 if kind == "half_integer" else x
        n = np.rint(y)
        point = (n != 0) if kind == "integer" else (n < 0) if kind == "negative_integer" \
            else np.ones(n.shape, bool)
        d = np.where(point, y - n, 1.0)
    return (d != 0) & (np.abs(d) <= NEAR)


def input_rows(bits: np.ndarray, fmt: FloatFormat, name: str | None = None) -> np.ndarray:
    """The histogram row (int32, same shape) of each pattern ``bits`` of ``fmt`` as the
    first float argument of built-in ``name`` (module docstring): subnormal, near a zero
    or a pole of ``name`` (``NEAR_POINTS``), else its exponent band."""
    b = np.asarray(bits).astype(fmt.uint)
    rows = exponent_bands(b, fmt)
    rows[((b & fmt.uint(fmt.exp_mask)) == 0)
         & ((b & fmt.uint((1 << fmt.frac_bits) - 1)) != 0)] = ROW_SUBNORMAL
    zeros, poles = NEAR_POINTS.get(name, (None, None))
    if zeros or poles:
        x = b.view(fmt.float).astype(np.float64)
        with np.errstate(invalid="ignore"):
            small = np.abs(x) < 2.0 ** (fmt.precision - 2)
        rows[small & _near(x, zeros)] = ROW_NEAR_ZERO
        rows[small & _near(x, poles)] = ROW_NEAR_POLE
    return rows


def histogram(err: np.ndarray, bits: np.ndarray, fmt: FloatFormat,
              where: np.ndarray | None = None, name: str | None = None) -> np.ndarray:
    """The histogram (int64, (NROWS, NBINS)) of errors ``err`` (ULPs) of inputs whose
    first float argument has patterns ``bits`` (same shape) for built-in ``name`` (its
    near rows: ``input_rows``), of the elements ``where`` (bool, same shape) only if
    given."""
    cell = input_rows(bits, fmt, name)
    cell *= NBINS
    cell += error_bins(err)
    if where is not None:
        cell[~where] = NROWS * NBINS                       # a cell past the end: dropped
    h = np.bincount(np.ravel(cell), minlength=NROWS * NBINS + 1)[:NROWS * NBINS]
    return h.reshape(NROWS, NBINS)


def to_cells(hist: np.ndarray) -> list[dict]:
    """The nonzero cells of ``hist`` as stored in a stats row's ``ulp_histogram``:
    [{"band", "bin", "count"}, ...] (store.STATS_SCHEMA)."""
    band, b = np.nonzero(hist)
    return [{"band": int(i), "bin": int(j), "count": int(hist[i, j])} for i, j in zip(band, b)]


def from_cells(cells) -> np.ndarray:
    """The histogram (int64, (NROWS, NBINS)) of stored cells (``to_cells``; None or
    empty: all zero; rows written before the near rows existed are bands)."""
    h = np.zeros((NROWS, NBINS), np.int64)
    for cell in cells or ():
        h[cell["band"], cell["bin"]] += cell["count"]
    return h


def distribution(hist: np.ndarray) -> dict:
    """The summary of a histogram (int array (NROWS, NBINS)): ``ulp_histogram`` {bin's
    lower edge in ULPs (str; '0' for bin 0): count} over all rows,
    ``ulp_histogram_by_band`` {row name (``ROW_NAMES``: a band's index, 'subnormal',
    'near_zero', 'near_pole'): {edge: count}}, ``ulp_by_class`` {row name: {"max", "p50",
    "p99"}} (upper bounds in ULPs, as below), and ``ulp_p50`` / ``ulp_p99``: the upper
    edges (ULPs) of the bins holding the median and the 99th percentile (upper bounds on
    them; None in the open top bin; absent for an empty histogram)."""
    edges = np.concatenate([[0.0], bin_edges()])
    names = ["0"] + [f"{e:.6g}" for e in edges[1:]]

    def cells(row):
        return {names[b]: int(row[b]) for b in np.flatnonzero(row)}
    total = hist.sum(axis=0)
    rows = np.flatnonzero(hist.sum(axis=1))
    upper = np.concatenate([bin_edges(), [np.inf]])

    def bound(v):
        return None if np.isinf(v) else float(v)
    out = {"ulp_histogram": cells(total),
           "ulp_histogram_by_band": {ROW_NAMES[r]: cells(hist[r]) for r in rows},
           "ulp_by_class": {ROW_NAMES[r]: {
               "max": bound(upper[np.flatnonzero(hist[r])[-1]]),
               **dict(zip(("p50", "p99"), map(bound, percentile_bounds(hist[r]))))}
               for r in rows}}
    if total.sum():          # None where it falls in the open top bin
        for key, v in zip(("ulp_p50", "ulp_p99"), percentile_bounds(total)):
            out[key] = bound(v)
    return out


def percentile_bounds(counts: np.ndarray, qs=(0.5, 0.99)) -> tuple:
    """Upper bounds (ULPs, floats) on the quantiles ``qs`` of the errors counted in
    ``counts`` (int, (NBINS,), not all zero): the upper edge of the bin each falls in
    (inf for the open top bin)."""
    upper = np.concatenate([bin_edges(), [np.inf]])
    cum = np.cumsum(counts)
    return tuple(float(upper[int(np.searchsorted(cum, q * cum[-1]))]) for q in qs)
