"""Constant-answer baselines for VLMs: what always answering (a), or always (b), scores.

Chance (0.5 per question, 0.25 per pair) assumes a coin flip; a model that always picks the
same option scores the share of questions whose answer is that option — and, since the two
questions of an MMVP pair almost always have opposite answers, close to nothing on pairs. A
VLM's accuracy means something only above both. Computed from the answer key of the report's
catalogue (its label policy), per category and overall.
"""

from __future__ import annotations

import pandas as pd

from amvicc.catalogue import Catalogue
from amvicc.report.metrics import ALL
from amvicc.report.options import CHANCE_INDIVIDUAL, CHANCE_PAIR

BASELINE_COLUMNS = ["baseline", "category", "metric", "correct", "total", "value"]
ALWAYS = {"a": "always (a)", "b": "always (b)"}


def constant_baselines(catalogue: Catalogue) -> pd.DataFrame:
    """``always (a)``, ``always (b)`` and ``chance`` for ``individual`` and ``pair``.

    Returns:
        :data:`BASELINE_COLUMNS`; chance rows have no counts.
    """
    rows: list[dict[str, object]] = []
    scopes = [(c.code, catalogue.select(categories=[c])) for c in catalogue.categories()]
    for code, part in [*scopes, (ALL, catalogue)]:
        questions = list(part)
        pairs = list(part.pairs().values())
        for option, name in ALWAYS.items():
            right = sum(q.answer == option for q in questions)
            both = sum(all(q.answer == option for q in members) for members in pairs)
            rows.append(_row(name, code, "individual", right, len(questions)))
            rows.append(_row(name, code, "pair", both, len(pairs)))
        rows.append(
            {
                "baseline": "chance",
                "category": code,
                "metric": "individual",
                "correct": None,
                "total": None,
                "value": CHANCE_INDIVIDUAL,
            }
        )
        rows.append(
            {
                "baseline": "chance",
                "category": code,
                "metric": "pair",
                "correct": None,
                "total": None,
                "value": CHANCE_PAIR,
            }
        )
    return pd.DataFrame(rows, columns=BASELINE_COLUMNS)


def _row(name: str, category: str, metric: str, correct: int, total: int) -> dict[str, object]:
    return {
        "baseline": name,
        "category": category,
        "metric": metric,
        "correct": correct,
        "total": total,
        "value": correct / total if total else float("nan"),
    }
