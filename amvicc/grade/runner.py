"""The grading stage: grade the chosen answer runs offline, one after the other."""

from __future__ import annotations

from amvicc.errors import UserError
from amvicc.grade.grading import grade_run, run_catalogue
from amvicc.grade.ladder import grade_ladder_run
from amvicc.grade.llm_judge import LLMJudge, open_llm_judge
from amvicc.grade.options import GradeOptions, GradeSummary
from amvicc.store import Store

#: The runs whose replies are graded: first turns (``answer``), second turns (``challenge``)
#: and the question ladder's rungs (``ladder``).
GRADED_STAGES = ("answer", "challenge", "ladder")


def run_grade(
    options: GradeOptions, *, store: Store, judge: LLMJudge | None = None
) -> GradeSummary:
    """Grade stored replies in three stages: extractor, LLM judge, human audit queue.

    No request goes to the answering model: grading reads the stored replies only.

    Args:
        options: which runs, which catalogue, which judge.
        store: the workspace.
        judge: an already opened judge (default: opened from ``options.judge``), so a caller
            can check the judge before other work.

    Raises:
        UserError: no answer run, an unknown run, a catalogue other than the run's, or a judge
            that cannot be opened.
    """
    run_ids = options.run_ids or tuple(r.run_id for r in store.runs() if r.stage in GRADED_STAGES)
    if not run_ids:
        raise UserError(f"no answer run in {store.root}; run `amvicc answer` first")
    runs = [store.run(run_id) for run_id in run_ids]  # unknown names fail before any work
    if judge is None and options.judge is not None:
        judge = open_llm_judge(options.judge)
    graded = []
    for record in runs:
        if record.stage == "ladder":
            # Each reply carries its rung and answer: the catalogue is not needed.
            graded.append(
                grade_ladder_run(
                    store,
                    record.run_id,
                    judge=judge,
                    progress=options.progress,
                    audit_sample=options.audit,
                )
            )
            continue
        catalogue = run_catalogue(record, options.catalogue)
        graded.append(
            grade_run(
                store,
                record.run_id,
                judge=judge,
                catalogue=catalogue,
                progress=options.progress,
                audit_sample=options.audit,
            )
        )
    return GradeSummary(tuple(graded))
