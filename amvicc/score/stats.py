"""Agreement between raters of generated images: what the statistics tab shows.

Cohen's κ compares two ratings of the same items. With more raters than two, raters differ
from image to image, so each doubly rated image contributes the pair (first rating, second
rating) in the order they were given (κ and percent agreement do not depend on which of the
two is called first). Agreement and κ come from :mod:`amvicc.agreement`, so the report and
the judge validation compute them the same way.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from amvicc.agreement import cohen_kappa, percent_agreement
from amvicc.catalogue import CATEGORIES
from amvicc.score.items import ImageItem
from amvicc.score.queue import ImageLedger
from amvicc.store import HUMAN_PREFIX


@dataclass(frozen=True)
class CategoryAgreement:
    """Agreement on the images of one category (or of all, ``code == "all"``).

    Attributes:
        items: images in the scoring queue.
        rated: images with at least one rating.
        double_rated: images with at least two ratings (the pairs agreement is computed on).
        agreement: share of those pairs with the same verdict (NaN when there are none).
        kappa: Cohen's κ of those pairs (NaN when undefined).
        disputed: fully rated images whose raters disagree.
        adjudicated: disputed images an adjudicator decided.
    """

    code: str
    name: str
    items: int
    rated: int
    double_rated: int
    agreement: float
    kappa: float
    disputed: int
    adjudicated: int


@dataclass(frozen=True)
class RaterCount:
    """How many images one rater rated, in total and per category code."""

    rater: str
    total: int
    cant_tell: int
    by_category: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Statistics:
    """Everything on the statistics tab."""

    categories: tuple[CategoryAgreement, ...]
    raters: tuple[RaterCount, ...]

    @property
    def overall(self) -> CategoryAgreement:
        """The row over all categories."""
        return self.categories[-1]


def rater_name(source: str) -> str:
    """A rater's name as shown: ``human:alice`` -> ``alice``; imported sheets keep their source."""
    return source.removeprefix(HUMAN_PREFIX)


def compute_statistics(items: Sequence[ImageItem], ledger: ImageLedger) -> Statistics:
    """Per-category and overall agreement, and per-rater counts, from the current verdicts."""
    by_code: dict[str, list[ImageItem]] = defaultdict(list)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    cant_tell: Counter[str] = Counter()
    for item in items:
        by_code[item.category.code].append(item)
        for source, mark in ledger.rater_marks(item.image_id).items():
            counts[source][item.category.code] += 1
            cant_tell[source] += mark.value == "cant_tell"
    rows = [
        _agreement(category.code, category.name, by_code[category.code], ledger)
        for category in CATEGORIES
        if by_code[category.code]
    ]
    rows.append(_agreement("all", "All categories", list(items), ledger))
    raters = tuple(
        RaterCount(rater_name(source), sum(c.values()), cant_tell[source], dict(c))
        for source, c in sorted(counts.items(), key=lambda sc: (-sum(sc[1].values()), sc[0]))
    )
    return Statistics(tuple(rows), raters)


def _agreement(
    code: str, name: str, items: Sequence[ImageItem], ledger: ImageLedger
) -> CategoryAgreement:
    first: list[str] = []
    second: list[str] = []
    rated = disputed = adjudicated = 0
    for item in items:
        values = [m.value for m in ledger.rater_marks(item.image_id).values()]
        rated += bool(values)
        if len(values) >= 2:
            first.append(values[0])
            second.append(values[1])
        if ledger.is_disputed(item.image_id):
            disputed += 1
            adjudicated += ledger.is_adjudicated(item.image_id)
    return CategoryAgreement(
        code=code,
        name=name,
        items=len(items),
        rated=rated,
        double_rated=len(first),
        agreement=percent_agreement(first, second),
        kappa=cohen_kappa(first, second),
        disputed=disputed,
        adjudicated=adjudicated,
    )
