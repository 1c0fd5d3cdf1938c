"""Bootstrap intervals over MMVP pairs for ratios and for paired differences of ratios.

The challenge rates (capitulation, correction, each adjusted by the control arm) and the
perturbation drops (clean minus perturbed accuracy on the same items) are ratios of counts
summed over items, and the two items of an MMVP pair share a question: so, as for the
accuracies, the unit of resampling is the pair. A difference is resampled *paired*: each
resample draws one set of pairs and computes both terms on it, so what the two conditions
share (the items, their difficulty) cancels instead of widening the interval.

The resampling of a group of n pairs is drawn from a generator seeded by ``(seed, n)``, as in
:func:`amvicc.report.metrics.bootstrap_intervals`: the same data and seed give the same
interval whatever else is in the report.
"""

from __future__ import annotations

import warnings

import numpy as np

from amvicc.report.options import ReportOptions


def _weights(n: int, options: ReportOptions) -> np.ndarray:
    rng = np.random.default_rng([options.seed, n])
    draws = rng.multinomial(n, np.full(n, 1.0 / n), size=options.bootstrap)
    return draws.astype("float64")


def _bounds(values: np.ndarray, options: ReportOptions) -> tuple[float, float]:
    tail = (1.0 - options.confidence) / 2 * 100
    if np.isnan(values).all():
        return np.nan, np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanpercentile(values, [tail, 100 - tail])
    return float(low), float(high)


def ratio_interval(
    numerator: np.ndarray, denominator: np.ndarray, options: ReportOptions
) -> tuple[float, float]:
    """The percentile interval of sum(numerator) / sum(denominator), resampling pairs.

    Args:
        numerator: one count per pair.
        denominator: one count per pair (a resample with nothing counted is left out).
        options: resamples, confidence and seed (no interval when ``bootstrap`` is 0).
    """
    n = len(numerator)
    if options.bootstrap <= 0 or n == 0 or float(np.sum(denominator)) == 0:
        return np.nan, np.nan
    weights = _weights(n, options)
    num = weights @ np.asarray(numerator, dtype="float64")
    den = weights @ np.asarray(denominator, dtype="float64")
    ratio = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
    return _bounds(ratio, options)


def difference_interval(
    first: np.ndarray, second: np.ndarray, denominator: np.ndarray, options: ReportOptions
) -> tuple[float, float]:
    """The interval of (sum(first) - sum(second)) / sum(denominator), paired over pairs.

    Both terms share the denominator (the same items under two conditions), so the
    difference of their rates is the difference of their counts over it.
    """
    return ratio_interval(
        np.asarray(first, dtype="float64") - np.asarray(second, dtype="float64"),
        denominator,
        options,
    )
