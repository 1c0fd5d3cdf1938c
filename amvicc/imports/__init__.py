"""Results made elsewhere, brought into the workspace: grade sheets and VLM replies.

``run_import_grades`` brings human grade sheets in AMVICC's format (verdicts on an image model);
``run_import_answers`` brings VLM replies made by other harnesses (AMVICC's scripts, lmms-eval,
VLMEvalKit, any CSV/JSONL) as an answer run, graded like any other.

From Python::

    from pathlib import Path

    from amvicc import load_catalogue
    from amvicc.imports import ImportGradesOptions, run_import_grades

    summary = run_import_grades(
        ImportGradesOptions(sheet=Path("dalle3_grades.csv"), model="dalle3"),
        store_root=Path("runs"),
        catalogue=load_catalogue(),
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.imports.answers import run_import_answers
    from amvicc.imports.grades import run_import_grades
    from amvicc.imports.options import (
        ImportAnswersOptions,
        ImportAnswersSummary,
        ImportGradesOptions,
        ImportGradesSummary,
    )

_EXPORTS = {
    "ImportAnswersOptions": "amvicc.imports.options",
    "ImportAnswersSummary": "amvicc.imports.options",
    "ImportGradesOptions": "amvicc.imports.options",
    "ImportGradesSummary": "amvicc.imports.options",
    "run_import_answers": "amvicc.imports.answers",
    "run_import_grades": "amvicc.imports.grades",
}
__all__ = [
    "ImportAnswersOptions",
    "ImportAnswersSummary",
    "ImportGradesOptions",
    "ImportGradesSummary",
    "run_import_answers",
    "run_import_grades",
]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
