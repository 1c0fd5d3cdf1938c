"""The vectorised statistics against scipy, statsmodels and numpy, and against hand values."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import fisher_exact
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from amvicc.agreement import cohen_kappa_from_table
from amvicc.report.options import ReportOptions
from amvicc.report.stats import Resampler, fisher_exact_many, holm, kappa_phi, mcnemar_p
from amvicc.report.units import resampled_intervals


def test_fisher_by_hand() -> None:
    odds, p = fisher_exact_many(np.array([[[3, 1], [1, 3]]]))
    # Margins 4/4 of 8: P(a = 0..4) = (1, 16, 36, 16, 1) / 70; a = 3 and as extreme: 34 / 70.
    assert odds[0] == pytest.approx(9.0) and p[0] == pytest.approx(34 / 70)


def test_fisher_matches_scipy_on_many_tables() -> None:
    rng = np.random.default_rng(0)
    tables = rng.integers(0, 30, size=(400, 2, 2))
    tables[:4] = [[[0, 0], [0, 0]], [[0, 3], [0, 4]], [[5, 5], [5, 5]], [[7, 0], [0, 7]]]
    odds, p = fisher_exact_many(tables)
    for table, o, value in zip(tables, odds, p, strict=True):
        expected = fisher_exact(table)
        assert value == pytest.approx(expected.pvalue, rel=1e-12, abs=1e-15), table
        if np.isnan(expected.statistic):
            assert np.isnan(o)
        else:
            assert o == expected.statistic, table


def test_mcnemar_by_hand_and_against_statsmodels() -> None:
    assert mcnemar_p(np.array([5]), np.array([0]))[0] == pytest.approx(2 * 0.5**5)
    assert mcnemar_p(np.array([0]), np.array([0]))[0] == 1.0
    rng = np.random.default_rng(1)
    b, c = rng.integers(0, 60, 300), rng.integers(0, 60, 300)
    p = mcnemar_p(b, c)
    for first, second, value in zip(b, c, p, strict=True):
        assert value == mcnemar([[0, first], [second, 0]], exact=True).pvalue


def test_holm_by_hand_and_against_statsmodels() -> None:
    assert holm(np.array([0.01, 0.04, 0.03])) == pytest.approx([0.03, 0.06, 0.06])
    rng = np.random.default_rng(2)
    families = rng.random((60, 9)) ** 3
    families[5, [1, 4]] = np.nan  # a category without a test
    families[6] = np.nan
    adjusted = holm(families)
    for family, got in zip(families, adjusted, strict=True):
        present = ~np.isnan(family)
        assert np.isnan(got[~present]).all()
        if present.any():
            expected = multipletests(family[present], method="holm")[1]
            assert got[present] == pytest.approx(expected, abs=1e-15)


def test_kappa_and_phi_by_hand_and_against_agreement() -> None:
    agreement, kappa, phi = kappa_phi(3, 1, 1, 3)
    assert (agreement, kappa, phi) == pytest.approx((0.75, 0.5, 0.5))
    assert np.isnan(kappa_phi(4, 0, 0, 0)[1])  # one cell: κ undefined
    rng = np.random.default_rng(3)
    for a, b, c, d in rng.integers(0, 20, size=(100, 4)):
        assert kappa_phi(a, b, c, d)[1] == pytest.approx(
            cohen_kappa_from_table([[a, b], [c, d]]), nan_ok=True
        )


def test_intervals_match_numpy_percentiles() -> None:
    resampler = Resampler(1000, 0, 0.95)
    rng = np.random.default_rng(4)
    values = rng.random((1000, 40))
    values[3:, 1] = np.nan
    values[:, 2] = np.nan
    values[::9, 5] = np.nan
    low, high = resampler.interval(values)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np.nanpercentile(values, [2.5, 97.5], axis=0)
    np.testing.assert_allclose(low, expected[0], rtol=0, atol=1e-14)
    np.testing.assert_allclose(high, expected[1], rtol=0, atol=1e-14)


def test_counts_interval_is_the_percentile_of_the_resampled_ratio() -> None:
    resampler = Resampler(500, 7, 0.9)
    counts = np.random.default_rng(5).integers(-2, 3, size=(30, 12))
    weights = resampler.weights(12)
    assert weights is not None
    bounds = resampler.counts_interval(counts, 24.0)
    assert bounds is not None
    expected = np.percentile((weights @ counts.T) / 24.0, [5, 95], axis=0)
    np.testing.assert_allclose(bounds[0], expected[0], atol=1e-12)
    np.testing.assert_allclose(bounds[1], expected[1], atol=1e-12)


def test_the_resampling_matrix_is_the_main_tables() -> None:
    """The same seed and group size give the weights the accuracies' intervals use."""
    weights = Resampler(200, 3, 0.95).weights(7)
    rng = np.random.default_rng([3, 7])
    assert weights is not None
    assert (weights == rng.multinomial(7, np.full(7, 1 / 7), size=200)).all()
    assert Resampler(0, 3, 0.95).weights(7) is None


def test_difference_interval_is_the_counts_interval_of_the_differences() -> None:
    """Resampling each row once and subtracting gives the bounds of resampling each difference."""
    resampler = Resampler(400, 11, 0.95)
    rng = np.random.default_rng(6)
    counts = rng.integers(0, 3, size=(7, 15))
    first = np.array([0, 0, 1, 2, 5, 6])
    second = np.array([1, 3, 2, 6, 4, 0])
    bounds = resampler.difference_interval(counts, first, second, 30.0)
    expected = resampler.counts_interval(counts[first] - counts[second], 30.0)
    assert bounds is not None and expected is not None
    np.testing.assert_array_equal(bounds[0], expected[0])
    np.testing.assert_array_equal(bounds[1], expected[1])
    weights = resampler.weights(15)
    assert weights is not None
    percentiles = np.percentile(
        (weights @ (counts[first] - counts[second]).T) / 30.0, [2.5, 97.5], axis=0
    )
    np.testing.assert_allclose(bounds[0], percentiles[0], atol=1e-12)
    np.testing.assert_allclose(bounds[1], percentiles[1], atol=1e-12)
    assert Resampler(0, 11, 0.95).difference_interval(counts, first, second, 30.0) is None


@pytest.mark.parametrize("largest", [5, 12])
def test_sample_standard_deviations_are_pandas_own(largest: int) -> None:
    """Per group, bit for bit what ``Series.std`` of the group gives (groups of one: NaN)."""
    import pandas as pd

    from amvicc.report.ablations import _standard_deviations

    rng = np.random.default_rng(largest)
    sizes = rng.integers(1, largest, size=200)
    group = pd.Series(np.repeat(np.arange(len(sizes)), sizes)).sample(frac=1, random_state=1)
    values = rng.random(len(group)) / 7
    codes = group.to_numpy()
    got = _standard_deviations(values, group.reset_index(drop=True))
    expected = [pd.Series(values[codes == g]).std() for g in range(len(sizes))]
    np.testing.assert_array_equal(np.array(got), np.array(expected))


def test_resampled_intervals_are_numpys_percentiles_bit_for_bit() -> None:
    # Groups of several sizes, some with resamples that count nothing (NaN, left out as
    # np.nanpercentile leaves them), against np.percentile itself: the same floats.
    rng = np.random.default_rng(8)
    options = ReportOptions(bootstrap=300, seed=3, confidence=0.9)
    group = np.repeat(np.arange(9), [1, 3, 3, 5, 8, 8, 2, 1, 4])
    pair = np.concatenate([np.arange(n) for n in np.bincount(group)])
    sums = {name: rng.integers(0, 3, len(group)).astype(float) for name in ("ic", "pc")}
    sums["it"] = sums["ic"] + rng.integers(0, 2, len(group))
    sums["pt"] = np.where(group == 6, 0, sums["pc"] + rng.integers(0, 2, len(group)))
    resampler = Resampler(options.bootstrap, options.seed, options.confidence)
    found = resampled_intervals(pair, group, sums, options, resampler)
    tail = (1.0 - options.confidence) / 2 * 100
    for g in range(9):
        rows = np.flatnonzero(group == g)[np.argsort(pair[group == g])]
        for which, (correct, total) in enumerate((("ic", "it"), ("pc", "pt"))):
            num = resampler.sums(sums[correct][rows].reshape(1, -1))
            den = resampler.sums(sums[total][rows].reshape(1, -1))
            assert num is not None and den is not None
            ratio = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                expected = np.nanpercentile(ratio, [tail, 100 - tail], axis=1)[:, 0]
            np.testing.assert_array_equal(found[which][:, g], expected)
    assert np.isnan(found[1][:, 6]).all() and not np.isnan(found[0]).any()
