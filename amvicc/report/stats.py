"""The statistics of the item-level sections: one resampling matrix, exact tests, Holm.

- :class:`Resampler`: the percentile bootstrap over *pairs*. A group of n pairs is resampled
  with one matrix of multinomial weights drawn from a generator seeded by ``(seed, n)`` — the
  matrix :func:`amvicc.report.metrics.bootstrap_intervals` uses — and every statistic of that
  group (concordance, differences, gains) is computed from the same matrix: one matrix
  product per statistic instead of a loop over resamples.
- :func:`mcnemar_p`: McNemar's exact test (statsmodels' rule), for every comparison at
  once.
- :func:`fisher_exact_many`: Fisher's exact test of many 2×2 tables at once, from scipy's
  hypergeometric distribution, with scipy's rule for the two-sided p-value.
- :func:`holm`: Holm's step-down adjustment of many families at once.

The tests check each against ``scipy.stats.fisher_exact``,
``statsmodels.stats.contingency_tables.mcnemar(exact=True)`` and
``statsmodels.stats.multitest.multipletests(method="holm")`` on many inputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

FloatArray = np.ndarray[Any, np.dtype[np.float64]]


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the enclosed code with one BLAS thread.

    A report's matrix products are small (a thousand resamples by a few hundred pairs): BLAS
    worker threads gain little on them and spin while they wait, taking the second core from
    pandas and the renderer — on two cores the report is a second or more faster without them.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


class Resampler:
    """Bootstrap weights over pairs, shared by every statistic of a group of n pairs.

    Args:
        resamples: how many resamples (0: no intervals).
        seed: the report's seed; with n it seeds the group's generator, so the same data
            give the same interval whatever else the report holds.
        confidence: the interval's level (0.95: the 2.5th and 97.5th percentiles).
    """

    def __init__(self, resamples: int, seed: int, confidence: float) -> None:
        self.resamples = resamples
        self.seed = seed
        self.confidence = confidence
        self._weights: dict[int, FloatArray] = {}
        self._compact: dict[int, np.ndarray[Any, np.dtype[np.float32]]] = {}

    def weights(self, n: int) -> FloatArray | None:
        """The resamples × n weight matrix of a group of n pairs (None: no bootstrap)."""
        if self.resamples <= 0 or n <= 0:
            return None
        if n not in self._weights:
            rng = np.random.default_rng([self.seed, n])
            drawn = rng.multinomial(n, np.full(n, 1.0 / n), size=self.resamples)
            self._weights[n] = drawn.astype("float64")
        return self._weights[n]

    def counts_interval(
        self, counts: np.ndarray[Any, Any], scale: float
    ) -> tuple[FloatArray, FloatArray] | None:
        """Interval of ``(weights @ counts.T) / scale`` for integer ``counts`` (rows × n).

        The fast path of statistics whose resampled denominator is the same for every
        resample (a fixed count per pair times n, since each resample draws n pairs): the
        numerators are then integers below 2**24, exact in float32, so the products run in
        float32 and the ranks are found on them before the one division. Returns None
        without bootstrap.
        """
        resampled = self._resampled(counts)
        if resampled is None:
            return None
        return self._integer_interval(resampled, scale)

    def difference_interval(
        self,
        counts: np.ndarray[Any, Any],
        first: np.ndarray[Any, Any],
        second: np.ndarray[Any, Any],
        scale: float,
    ) -> tuple[FloatArray, FloatArray] | None:
        """:meth:`counts_interval` of ``counts[first] - counts[second]``, row by row.

        A resample's sum is linear in the counts, so each row of ``counts`` (a model's
        correct units per pair) is resampled once and the comparisons subtract the sums:
        fifty models make a thousand comparisons, a product twenty-five times smaller. The
        sums are the same integers either way, so are the bounds.
        """
        resampled = self._resampled(counts)
        if resampled is None:
            return None
        if resampled.size and np.abs(resampled).max() < 2**14:  # differences fit in int16
            small = resampled.astype(np.int16)
            return self._integer_interval(small[first] - small[second], scale)
        return self._integer_interval(resampled[first] - resampled[second], scale)

    def _resampled(self, counts: np.ndarray[Any, Any]) -> np.ndarray[Any, Any] | None:
        """``counts @ weights.T`` (rows × resamples): exact integers in float32 (None: no bootstrap)."""
        weights = self.weights(counts.shape[1])
        if weights is None:
            return None
        n = counts.shape[1]
        if n not in self._compact:
            self._compact[n] = weights.astype(np.float32)
        product: np.ndarray[Any, Any] = counts.astype(np.float32) @ self._compact[n].T
        return product

    def sums(self, counts: np.ndarray[Any, Any]) -> FloatArray | None:
        """Each row of non-negative integer ``counts`` (rows × n) summed in every resample.

        ``counts @ weights.T`` (rows × resamples), in float64. Every sum is a whole number;
        below 2**24 float32 holds it exactly, so the product runs in float32 (twice as fast)
        and gives the same numbers. None without bootstrap.
        """
        weights = self.weights(counts.shape[1])
        if weights is None:
            return None
        if counts.size and int(counts.max()) * counts.shape[1] >= 2**24:
            exact: FloatArray = counts.astype("float64") @ weights.T
            return exact
        resampled = self._resampled(counts)
        assert resampled is not None
        return resampled.astype("float64")

    def _integer_interval(
        self, resampled: np.ndarray[Any, Any], scale: float
    ) -> tuple[FloatArray, FloatArray]:
        """The percentile bounds of rows of integers (rows × resamples), over ``scale``."""
        if resampled.dtype == np.int16 or (resampled.size and np.abs(resampled).max() < 2**15):
            # Small integers: numpy sorts int16 by radix sort, faster than a partial sort.
            ordered = np.sort(resampled.astype(np.int16, copy=False), axis=1)
            tail = (1.0 - self.confidence) / 2
            bounds = []
            for q in (tail, 1 - tail):
                lo, hi, frac = _ranks(ordered.shape[1], q)
                bounds.append(
                    _lerp(ordered[:, lo].astype("float64"), ordered[:, hi].astype("float64"), frac)
                )
            return bounds[0] / scale, bounds[1] / scale
        low, high = self.interval_rows(resampled)
        return low / scale, high / scale

    def interval(self, values: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Percentile interval over the first axis (resamples); NaN resamples are ignored."""
        return self.interval_rows(np.ascontiguousarray(np.asarray(values).T))

    def interval_rows(self, rows: np.ndarray[Any, Any]) -> tuple[FloatArray, FloatArray]:
        """Percentile interval over the first axis (resamples); NaN resamples are ignored.

        ``np.percentile``'s linear interpolation, computed for thousands of columns at once:
        each row sorted (numpy's vectorised sort of a row of a thousand floats is three
        times faster than a partial sort at the four ranks the bounds need), the columns
        that hold NaN with NaN last (all-NaN columns stay NaN). ``np.nanpercentile`` would
        loop over those columns in Python.
        """
        tail = (1.0 - self.confidence) / 2
        columns = rows
        shape = columns.shape[:-1]
        columns = columns.reshape(-1, columns.shape[-1])
        low = np.full(len(columns), np.nan)
        high = np.full(len(columns), np.nan)
        holes = np.isnan(columns).any(axis=1)
        whole = columns[~holes]
        if len(whole):
            size = whole.shape[1]
            ranks = [_ranks(size, q) for q in (tail, 1 - tail)]
            ordered = np.sort(whole, axis=1)
            low[~holes], high[~holes] = (
                _lerp(ordered[:, lo].astype("float64"), ordered[:, hi].astype("float64"), frac)
                for lo, hi, frac in ranks
            )
        if holes.any():
            ordered = np.sort(columns[holes].astype("float64"), axis=1)  # NaN last
            counts = (~np.isnan(ordered)).sum(axis=1)
            rows = np.arange(len(ordered))
            for out, q in ((low, tail), (high, 1 - tail)):
                position = q * np.maximum(counts - 1, 0)
                lo = np.floor(position).astype("int64")
                hi = np.minimum(lo + 1, np.maximum(counts - 1, 0))
                values_at = _lerp(ordered[rows, lo], ordered[rows, hi], position - lo)
                out[holes] = np.where(counts > 0, values_at, np.nan)
        return low.reshape(shape), high.reshape(shape)


def _ranks(size: int, q: float) -> tuple[int, int, float]:
    """The two ranks around quantile q of ``size`` sorted values, and the weight between."""
    position = q * (size - 1)
    lo = int(np.floor(position))
    return lo, min(lo + 1, size - 1), position - lo


def _lerp(a: FloatArray, b: FloatArray, t: Any) -> FloatArray:
    """Linear interpolation between ranks, as ``np.percentile`` computes it."""
    diff = b - a
    out: FloatArray = np.where(np.asarray(t) >= 0.5, b - diff * (1 - np.asarray(t)), a + diff * t)
    return out


def ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """Numerator / denominator, NaN where the denominator is 0."""
    num = np.asarray(numerator, dtype="float64")
    den = np.asarray(denominator, dtype="float64")
    out: FloatArray = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def kappa_phi(
    both: FloatArray, first_only: FloatArray, second_only: FloatArray, neither: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Percent agreement, Cohen's κ and φ of 2×2 tables given by their four cells.

    ``both``: both say pass; ``first_only`` / ``second_only``: one says pass; ``neither``.
    Any shape (the bootstrap passes combinations × resamples). κ is
    :func:`amvicc.agreement.cohen_kappa_from_table`'s formula, written for arrays; NaN where
    undefined (no items, or every item in one cell row or column).

    Large arrays are computed a block of rows at a time: the formula's twenty temporaries
    then stay in the processor's cache (twice as fast on a bootstrap's arrays); each element
    is computed by the same operations either way.
    """
    cells = np.broadcast_arrays(
        *(np.asarray(x, dtype="float64") for x in (both, first_only, second_only, neither))
    )
    shape = cells[0].shape
    if len(shape) < 2 or cells[0].size <= _BLOCK:
        return _kappa_phi(*cells)
    agreement, kappa, phi = (np.empty(shape) for _ in range(3))
    step = max(1, _BLOCK // int(np.prod(shape[1:])))
    for start in range(0, shape[0], step):
        block = slice(start, start + step)
        agreement[block], kappa[block], phi[block] = _kappa_phi(*(x[block] for x in cells))
    return agreement, kappa, phi


# Elements per block of kappa_phi: 64 KiB per temporary.
_BLOCK = 8192


def _kappa_phi(
    a: FloatArray, b: FloatArray, c: FloatArray, d: FloatArray
) -> tuple[FloatArray, FloatArray, FloatArray]:
    n = a + b + c + d
    agreement = ratio(a + d, n)
    expected = ratio((a + b) * (a + c) + (c + d) * (b + d), n * n)
    kappa = np.full(np.shape(n), np.nan)
    usable = (n > 0) & (expected < 1.0)
    np.divide(agreement - expected, 1.0 - expected, out=kappa, where=usable)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    phi = np.full(np.shape(n), np.nan)
    np.divide(
        a * d - b * c,
        np.sqrt(margins, where=margins > 0, out=np.zeros_like(margins)),
        out=phi,
        where=margins > 0,
    )
    return agreement, kappa, phi


def import_distributions() -> None:
    """Import scipy.special, which the p-values need, ahead of them.

    A report does it while its first process waits for the verdicts (idle time): the second
    process, forked later for the sections, then starts with it imported.
    """
    _distributions()


def _distributions() -> tuple[Any, Any]:
    """The binomial CDF and hypergeometric PMF that ``scipy.stats`` evaluates, from scipy.special.

    ``scipy.stats.binom.cdf`` and ``hypergeom.pmf`` compute their values with these ufuncs of
    ``scipy.special`` (Boost's); calling them directly gives the same numbers without
    importing ``scipy.stats`` (and statsmodels), which takes a report a good half second.
    Where a scipy lacks them, ``scipy.stats``' own functions are used.
    """
    try:
        from scipy.special._ufuncs import _binom_cdf, _hypergeom_pmf
    except ImportError:  # pragma: no cover - older scipy
        from scipy.stats import binom, hypergeom

        return (
            lambda k, n, p: binom.cdf(k, n, p),
            lambda k, n, draws, total: hypergeom.pmf(k, total, n, draws),
        )
    return _binom_cdf, _hypergeom_pmf


def mcnemar_p(first_only: np.ndarray[Any, Any], second_only: np.ndarray[Any, Any]) -> FloatArray:
    """McNemar's exact p-value (two-sided) for each pair of discordant counts.

    What ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`` computes —
    twice the binomial CDF at the smaller count, at most 1 — for every comparison at once
    (the tests check it against statsmodels). 1.0 when there is no discordant item.
    """
    b = np.asarray(first_only, dtype="int64")
    c = np.asarray(second_only, dtype="int64")
    low = np.minimum(b, c)
    total = b + c
    binom_cdf, _ = _distributions()
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.minimum(2.0 * binom_cdf(low, np.maximum(total, 1), 0.5), 1.0)
    out: FloatArray = np.where(total == 0, 1.0, p)
    return out


def fisher_exact_many(
    tables: np.ndarray[Any, Any],
) -> tuple[FloatArray, FloatArray]:
    """Odds ratio and two-sided Fisher exact p-value of many 2×2 tables.

    Args:
        tables: ``(..., 2, 2)`` counts ``[[a, b], [c, d]]``.

    Returns:
        The sample odds ratio ``ad / bc`` (inf when ``bc = 0 < ad``, NaN when both are 0) and
        the p-value: the probability, under the hypergeometric distribution of ``a`` given
        the margins, of tables no more likely than the one observed — scipy's rule
        (``scipy.stats.fisher_exact``, relative tolerance 1e-14), for all tables at once
        instead of one call each.
    """
    counts = np.asarray(tables, dtype="int64")
    shape = counts.shape[:-2]
    flat = counts.reshape(-1, 2, 2)
    a, b = flat[:, 0, 0], flat[:, 0, 1]
    c, d = flat[:, 1, 0], flat[:, 1, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = (a * d).astype("float64") / (b * c).astype("float64")
    odds = np.where((a * d == 0) & (b * c == 0), np.nan, odds)
    total = a + b + c + d
    column = a + c  # the first column's total: the draws
    row = a + b  # the first row's total: the successes in the population
    low = np.maximum(0, column + row - total)
    high = np.minimum(row, column)
    width = int((high - low).max(initial=0)) + 1
    support = low[:, None] + np.arange(width)[None, :]
    inside = support <= high[:, None]
    _, hypergeom_pmf = _distributions()

    def pmf(k: np.ndarray[Any, Any], n: Any, draws: Any, population: Any) -> FloatArray:
        # As scipy.stats.hypergeom.pmf: clipped to [0, 1]; an empty table has no pmf.
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.clip(hypergeom_pmf(k, n, draws, np.maximum(population, 1)), 0.0, 1.0)
        return np.asarray(values, dtype="float64")

    full = pmf(support, row[:, None], column[:, None], total[:, None])
    table_pmf = np.where(inside, full, 0.0)
    observed = pmf(a, row, column, total)
    gamma = 1 + 1e-14
    p = np.where(inside & (table_pmf <= observed[:, None] * gamma), table_pmf, 0.0).sum(axis=1)
    p = np.minimum(p, 1.0)
    p = np.where(total == 0, 1.0, p)
    return odds.reshape(shape), p.reshape(shape)


def holm(pvalues: FloatArray) -> FloatArray:
    """Holm-adjusted p-values of each row (one family per row; NaN entries are left out).

    ``multipletests(row, method="holm")[1]`` for every row at once. statsmodels' function
    runs a full garbage collection on every call, which takes a tenth of a second in a
    process holding a report: thousands of families (every pair of fifty models, per metric)
    would take minutes.
    """
    values = np.atleast_2d(np.asarray(pvalues, dtype="float64"))
    present = ~np.isnan(values)
    m = present.sum(axis=1, keepdims=True)
    order = np.argsort(np.where(present, values, np.inf), axis=1, kind="stable")
    ranked = np.take_along_axis(values, order, axis=1)
    steps = np.arange(values.shape[1])[None, :]
    scaled = np.where(steps < m, (m - steps) * ranked, np.nan)
    adjusted_sorted = np.fmin(np.fmax.accumulate(np.nan_to_num(scaled, nan=-np.inf), axis=1), 1.0)
    adjusted_sorted = np.where(steps < m, adjusted_sorted, np.nan)
    adjusted = np.empty_like(values)
    np.put_along_axis(adjusted, order, adjusted_sorted, axis=1)
    return adjusted.reshape(np.shape(pvalues))
