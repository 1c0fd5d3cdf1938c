"""Grading VLM replies in three stages: deterministic extractor, LLM judge, human audit.

The extractor itself (:func:`amvicc.extract.extract_choice`) sits below the stages, since the
image judge's question-back method reads answers with it too. From Python::

    from amvicc import Store
    from amvicc.grade import GradeOptions, run_grade

    summary = run_grade(GradeOptions(), store=Store("runs"))  # every answer run, no judge
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.grade.grading import RunGrades, grade_run
    from amvicc.grade.options import GradeOptions, GradeSummary, JudgeSettings, LLMJudgeOptions
    from amvicc.grade.runner import run_grade

_EXPORTS = {
    "RunGrades": "amvicc.grade.grading",
    "grade_run": "amvicc.grade.grading",
    "GradeOptions": "amvicc.grade.options",
    "GradeSummary": "amvicc.grade.options",
    "JudgeSettings": "amvicc.grade.options",
    "LLMJudgeOptions": "amvicc.grade.options",
    "run_grade": "amvicc.grade.runner",
}
__all__ = [
    "GradeOptions",
    "GradeSummary",
    "JudgeSettings",
    "LLMJudgeOptions",
    "RunGrades",
    "grade_run",
    "run_grade",
]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
