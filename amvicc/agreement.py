"""Agreement between raters and the rule that turns several verdicts into one.

Shared by the scoring UI (statistics tab, adjudication queue), the report and the judge
validation, so "agreement" and "the item's verdict" mean the same thing everywhere.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

Resolution = Literal["adjudicated", "unanimous", "majority", "tie", "none"]


@dataclass(frozen=True)
class Resolved:
    """One item's verdict, decided from the verdicts people gave it.

    Attributes:
        value: the verdict, or None when it is a tie or nobody gave one.
        how: ``adjudicated`` (an adjudicator decided), ``unanimous``, ``majority``, ``tie``
            (reported as unresolved) or ``none``.
        raters: how many rater verdicts were counted (adjudication aside).
    """

    value: str | None
    how: Resolution
    raters: int

    @property
    def disagreement(self) -> bool:
        """Whether raters disagreed (the item belongs in, or went through, adjudication)."""
        return self.how in ("majority", "tie") or (self.how == "adjudicated" and self.raters > 1)


def resolve(rater_values: Sequence[str], adjudicated: str | None = None) -> Resolved:
    """The verdict of one item: adjudicated, else the raters' majority, else unresolved.

    Args:
        rater_values: each rater's latest verdict on the item (``cant_tell`` counts as a vote).
        adjudicated: the latest adjudication verdict, if any.
    """
    if adjudicated is not None:
        return Resolved(adjudicated, "adjudicated", len(rater_values))
    if not rater_values:
        return Resolved(None, "none", 0)
    ranked = Counter(rater_values).most_common()
    if len(ranked) == 1:
        return Resolved(ranked[0][0], "unanimous", len(rater_values))
    if ranked[0][1] == ranked[1][1]:
        return Resolved(None, "tie", len(rater_values))
    return Resolved(ranked[0][0], "majority", len(rater_values))


def percent_agreement(first: Sequence[str], second: Sequence[str]) -> float:
    """The share of items on which two raters gave the same verdict (NaN when none)."""
    if len(first) != len(second):
        raise ValueError("both raters must rate the same items")
    if not first:
        return math.nan
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first)


def cohen_kappa(first: Sequence[str], second: Sequence[str]) -> float:
    """Cohen's κ of two raters over the same items (scikit-learn's definition).

    Returns NaN when it is undefined: no items, or both raters used one and the same label.
    """
    if len(first) != len(second):
        raise ValueError("both raters must rate the same items")
    if not first or len(set(first) | set(second)) < 2:
        return math.nan
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(list(first), list(second)))


def fleiss_kappa(ratings: Sequence[Sequence[str]]) -> float:
    """Fleiss' κ for items each rated by the same number of raters (3 or more).

    Args:
        ratings: one sequence of verdicts per item.

    Returns NaN when undefined (no items, or a single label used throughout).
    """
    if not ratings:
        return math.nan
    if len({len(r) for r in ratings}) != 1:
        raise ValueError("Fleiss' kappa needs the same number of ratings for every item")
    labels = sorted({value for item in ratings for value in item})
    if len(labels) < 2:
        return math.nan
    import numpy as np
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss

    table = np.array([[Counter(item)[label] for label in labels] for item in ratings])
    return float(statsmodels_fleiss(table, method="fleiss"))


def cohen_kappa_from_table(table: ArrayLike) -> float:
    """Cohen's κ from a square contingency table.

    Rows are the first rater's labels, columns the second's, in the same order. The same value
    as :func:`cohen_kappa` on the items the table counts, without scikit-learn: cheap for many
    small groups (per model, per category). NaN when undefined.
    """
    import numpy as np

    counts = np.asarray(table, dtype="float64")
    total = counts.sum()
    if total == 0:
        return math.nan
    observed = np.trace(counts) / total
    expected = float(counts.sum(axis=1) @ counts.sum(axis=0)) / total**2
    if expected == 1.0:
        return math.nan
    return float((observed - expected) / (1.0 - expected))


def fleiss_kappa_from_counts(counts: ArrayLike) -> float:
    """Fleiss' κ from an items × labels table of how many raters gave each label.

    Every item needs the same number of raters. The same value as :func:`fleiss_kappa`, without
    statsmodels or a Python loop over items. NaN when undefined.
    """
    import numpy as np

    table = np.asarray(counts, dtype="float64")
    if table.size == 0:
        return math.nan
    raters = table.sum(axis=1)
    if raters.min() != raters.max() or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (2 or more) of ratings per item")
    n = raters[0]
    shares = table.sum(axis=0) / table.sum()
    expected = float(np.sum(shares**2))
    if expected == 1.0:
        return math.nan
    observed = float(np.mean((np.sum(table**2, axis=1) - n) / (n * (n - 1))))
    return (observed - expected) / (1.0 - expected)
