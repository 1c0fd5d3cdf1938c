"""What later stages read back about stored replies: their catalogue and the option they chose.

Grading writes verdicts on replies; the challenge stage must know which option a first reply
chose to assert the other one; both read it by the same rule, so it lives here, below the
stages, instead of in either of them (stages never import each other).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from amvicc.agreement import resolve
from amvicc.catalogue import Catalogue, LabelPolicy, load_catalogue
from amvicc.errors import UserError
from amvicc.store import (
    ADJUDICATION_PREFIX,
    DECIDING_ANSWERS,
    EXTRACTOR_SOURCE,
    LLM_JUDGE_PREFIX,
    RunRecord,
    VerdictRecord,
    is_human_source,
)

#: Verdict values that settle a reply (``no_answer``: it chose neither option; ``not_a``: a
#: yes/no judge's "no" to (a), whose correctness the report decides under its label policy).
DECIDED = DECIDING_ANSWERS


def run_catalogue(run: RunRecord, path: str | Path | None = None) -> Catalogue:
    """The catalogue a run was answered with, under the run's label policy.

    Args:
        run: the run.
        path: a catalogue to use instead of the one recorded (e.g. moved to another folder).

    Raises:
        UserError: the catalogue is not the one the run used (its SHA-256 differs).
    """
    recorded = run.config.get("catalogue")
    chosen = path if path is not None else recorded
    policy: LabelPolicy = "original" if run.label_policy == "original" else "corrected"
    catalogue = load_catalogue(chosen, labels=policy)
    if run.catalogue_sha256 and catalogue.sha256 != run.catalogue_sha256:
        raise UserError(
            f"run {run.run_id} was answered with another catalogue than {catalogue.source} "
            f"(SHA-256 {run.catalogue_sha256[:12]}...); pass that file with --catalogue"
        )
    return catalogue


def final_verdict(verdicts: Sequence[VerdictRecord]) -> tuple[str, str | None]:
    """A response's verdict from every source's latest: people, then extractor, then judge.

    Returns:
        (value, source): value is ``a``, ``b``, ``no_answer`` or ``undecided``; source is
        ``human`` (raters or adjudication), ``extractor``, the judge's source, or None.
    """
    adjudicated = [v for v in verdicts if v.source.startswith(ADJUDICATION_PREFIX)]
    raters = [
        v.value
        for v in verdicts
        if is_human_source(v.source)
        and not v.source.startswith(ADJUDICATION_PREFIX)
        and v.value in DECIDED
    ]
    adjudication = adjudicated[-1].value if adjudicated else None
    people = resolve(raters, adjudication if adjudication in DECIDED else None)
    if people.value is not None:
        return people.value, "human"
    for verdict in verdicts:
        if verdict.source == EXTRACTOR_SOURCE and verdict.value in DECIDED:
            return verdict.value, EXTRACTOR_SOURCE
    # Several LLM judges decide by majority (a tie stays undecided), as in the report.
    judged = [v for v in verdicts if v.source.startswith(LLM_JUDGE_PREFIX) and v.value in DECIDED]
    judges = resolve([v.value for v in judged])
    if judges.value is not None:
        return judges.value, next(v.source for v in reversed(judged) if v.value == judges.value)
    return "undecided", None
