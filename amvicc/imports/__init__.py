"""Results made elsewhere, brought into the workspace: human grade sheets in AMVICC's format.

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
    from amvicc.imports.grades import run_import_grades
    from amvicc.imports.options import ImportGradesOptions, ImportGradesSummary

_EXPORTS = {
    "ImportGradesOptions": "amvicc.imports.options",
    "ImportGradesSummary": "amvicc.imports.options",
    "run_import_grades": "amvicc.imports.grades",
}
__all__ = ["ImportGradesOptions", "ImportGradesSummary", "run_import_grades"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
