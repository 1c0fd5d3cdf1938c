"""``amvicc score export``: every verdict of the workspace as one table, history included.

One row per verdict row (a changed verdict appears once per version; ``current`` marks each
source's latest on its subject), with what it judged: the image's or response's run, model,
question, prompt kind and category. The export is for analysis, so unlike the scoring page it
names the models.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from amvicc.catalogue import Catalogue
from amvicc.catalogue.csvtext import excel_safe as excel_safe_cell
from amvicc.files import write_output
from amvicc.ladder import RUNG_PREFIX
from amvicc.score.options import ExportFormat
from amvicc.store import HUMAN_SOURCE_PREFIXES, Store, source_rater

if TYPE_CHECKING:
    import pandas as pd

EXPORT_FORMATS: tuple[ExportFormat, ...] = get_args(ExportFormat)


def verdicts_export(
    store: Store, catalogue: Catalogue | None = None, *, people_only: bool = False
) -> pd.DataFrame:
    """Every verdict row with its subject's run, model, question and category.

    Args:
        store: the workspace.
        catalogue: maps question indices to category codes (None leaves ``category`` empty;
            so does a ladder reply, whose index is a scene's).
        people_only: keep raters, grade sheets and adjudicators; drop programs' verdicts.
    """
    frame = store.verdict_history_frame()
    if people_only:
        frame = frame[frame["source"].str.startswith(HUMAN_SOURCE_PREFIXES)].reset_index(drop=True)
    kinds = [_kind_and_rater(source) for source in frame["source"]]
    frame.insert(3, "source_kind", [kind for kind, _ in kinds])
    frame.insert(4, "rater", [rater for _, rater in kinds])
    codes = {q.index: q.category.code for q in catalogue} if catalogue is not None else {}
    categories = frame["question_index"].map(codes)
    # A ladder reply's index numbers a scene of its own set, not a question of the catalogue.
    rungs = frame["image_key"].fillna("").astype(str).str.startswith(RUNG_PREFIX)
    categories = categories.where(~rungs, None)
    frame.insert(list(frame.columns).index("question_index") + 1, "category", categories)
    return frame


def _kind_and_rater(source: str) -> tuple[str, str]:
    """A source's kind and rater: ``human:alice`` -> (human, alice); programs have no rater."""
    return source.partition(":")[0], source_rater(source) or ""


def write_export(
    frame: pd.DataFrame, output: Path | None, fmt: ExportFormat, *, excel_safe: bool = False
) -> None:
    """Write the table to ``output`` (atomically, never over a workspace's own files) or stdout.

    ``excel_safe`` (CSV only) prefixes text cells a spreadsheet would run as a formula with
    ``'``: comments, prompts and rater names come from people and models, and a cell such as
    ``=HYPERLINK(...)`` must not run when the export is opened in a spreadsheet.
    """
    buffer = io.StringIO()
    if fmt == "csv":
        if excel_safe:
            import pandas as pd

            frame = frame.copy()
            for column in frame.columns:
                if not pd.api.types.is_numeric_dtype(frame[column]):
                    frame[column] = frame[column].map(excel_safe_cell)
        frame.to_csv(buffer, index=False, lineterminator="\n")
    elif len(frame):
        frame.to_json(buffer, orient="records", lines=True, force_ascii=False)
    if output is None:
        sys.stdout.write(buffer.getvalue())
        return
    write_output(output, buffer.getvalue(), what="the export")
