from __future__ import annotations

import math
from typing import Any

from amvicc.agreement import cohen_kappa, percent_agreement
from amvicc.catalogue import Catalogue
from amvicc.score.desk import ScoringDesk
from amvicc.score.views import statistics_html
from amvicc.store import VerdictRecord, human_source


def give(store: Any, rater: str, values: dict[str, str]) -> None:
    store.add_verdicts(
        VerdictRecord(human_source(rater), value, image_id=image_id)
        for image_id, value in values.items()
    )


def test_agreement_and_kappa_per_category_and_overall(workspace: Any, catalogue: Catalogue) -> None:
    store = workspace.store
    ids = workspace.image_ids
    alice = dict(
        zip(
            ids,
            ["correct", "incorrect", "correct", "cant_tell", "correct", "incorrect"],
            strict=True,
        )
    )
    bob = dict(
        zip(
            ids,
            ["correct", "incorrect", "incorrect", "cant_tell", "correct", "correct"],
            strict=True,
        )
    )
    give(store, "alice", alice)
    give(store, "bob", bob)
    give(store, "carol", {ids[0]: "incorrect"})  # a third rating is not part of the pair
    desk = ScoringDesk(store, catalogue)
    stats = desk.statistics()
    overall = stats.overall
    first = [alice[i] for i in ids]
    second = [bob[i] for i in ids]
    assert overall.code == "all"
    assert overall.items == overall.rated == overall.double_rated == 6
    assert overall.agreement == percent_agreement(first, second) == 4 / 6
    assert math.isclose(overall.kappa, cohen_kappa(first, second))
    assert overall.disputed == 3  # ids[0] (3 raters, 2-1) and the two alice/bob differ on
    by_code = {row.code: row for row in stats.categories}
    for code, row in by_code.items():
        if code == "all":
            continue
        members = [i.image_id for i in desk.images if i.category.code == code]
        assert row.items == len(members)
        expected = cohen_kappa([alice[i] for i in members], [bob[i] for i in members])
        assert (math.isnan(row.kappa) and math.isnan(expected)) or math.isclose(row.kappa, expected)
    counts = {r.rater: r for r in stats.raters}
    assert counts["alice"].total == counts["bob"].total == 6
    assert counts["alice"].cant_tell == 1
    assert counts["carol"].total == 1
    assert sum(counts["alice"].by_category.values()) == 6
    html = statistics_html(stats)
    assert f'<td class="amvicc-kappa">{overall.kappa:.2f}</td>' in html
    assert "Cohen's κ" in html


def test_statistics_without_ratings_show_dashes(workspace: Any, catalogue: Catalogue) -> None:
    stats = ScoringDesk(workspace.store, catalogue).statistics()
    assert math.isnan(stats.overall.kappa)
    html = statistics_html(stats)
    assert '<td class="amvicc-kappa">–</td>' in html
    assert "No ratings yet" in html


def test_rater_names_are_escaped_in_the_statistics(workspace: Any, catalogue: Catalogue) -> None:
    give(workspace.store, "<img src=x onerror=alert(1)>", {workspace.image_ids[0]: "correct"})
    html = statistics_html(ScoringDesk(workspace.store, catalogue).statistics())
    assert "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
