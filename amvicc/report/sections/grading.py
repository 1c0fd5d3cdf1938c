"""Trust in the VLM grading: procedures, agreement between graders, audited errors, self-preference.

How far the VLM numbers can be trusted (:mod:`amvicc.report.grading`): each VLM under the
three-stage grading and under each grading procedure; every pair of graders on the answers
both decided; each automatic stage's error rate in the human audit sample; and, when LLM judges
of several providers grade models of several providers, each judge's acceptance of its own
provider's answers against the others' (:mod:`amvicc.report.self_preference`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from amvicc.report.grading import (
    HUMAN_AUDIT,
    audit_error_table,
    grader_correctness,
    grading_agreement_table,
    procedure_table,
)
from amvicc.report.section import Page, Part, Section
from amvicc.report.self_preference import OWN, self_preference_table
from amvicc.report.values import records


@dataclass(frozen=True, eq=False)
class Trust:
    """The grading tables of a part's VLMs."""

    procedures: pd.DataFrame
    agreement: pd.DataFrame
    audit_errors: pd.DataFrame
    self_preference: pd.DataFrame


def _compute(part: Part) -> Trust | None:
    items, plain = part.items, part.plain_items
    if items is None or plain is None:
        return None
    graders = grader_correctness(plain)
    return Trust(
        procedures=procedure_table(plain, part.options),
        agreement=grading_agreement_table(plain, graders),
        audit_errors=audit_error_table(
            part.store, items, part.options.confidence, part.options.models, smoke=part.smoke
        ),
        self_preference=self_preference_table(plain, graders, HUMAN_AUDIT, part.options.confidence),
    )


def _view(data: Trust, page: Page) -> dict[str, Any]:
    preference = []
    for row in records(data.self_preference, drop=()):
        row["first"] = row["scope"] == OWN
        row["models"] = ", ".join(row["models"])
        preference.append(row)
    return {
        "procedures": page.labelled(data.procedures, drop=()),
        "agreement": page.labelled(data.agreement, drop=()),
        "audit_errors": page.labelled(data.audit_errors, drop=()),
        "self_preference": preference,
    }


def _empty(data: Trust) -> bool:
    return all(
        t.empty for t in (data.procedures, data.agreement, data.audit_errors, data.self_preference)
    )


def _export(name: str) -> Any:
    return lambda part: None if part["grading"] is None else getattr(part["grading"], name)


SECTION = Section(
    key="grading",
    title="Trust in the VLM grading",
    toc="Trust in VLM grading",
    compute=_compute,
    document=lambda data: {
        "grading_procedures": records(data.procedures, drop=()),
        "grading_agreement": records(data.agreement, drop=()),
        "audit_errors": records(data.audit_errors, drop=()),
        "grader_self_preference": records(data.self_preference, drop=()),
    },
    view=_view,
    empty=_empty,
    hides=True,
    exports={
        "procedures": _export("procedures"),
        "grading_agreement": _export("agreement"),
        "audit_errors": _export("audit_errors"),
        "self_preference": _export("self_preference"),
    },
)
