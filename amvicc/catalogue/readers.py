"""The CSV dialects a catalogue can come in, read into rows before any validation.

Readers accept the files users have: MMVP's own ``Questions.csv``, AMVICC's 5-column copy with
unescaped quotes, and a bring-your-own catalogue in the shipped CSV's columns. They never raise
on a bad row: each problem is collected with its file and line.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from amvicc.catalogue.csvtext import csv_records
from amvicc.catalogue.types import CATEGORY_BY_CODE, Category, Problem
from amvicc.errors import UserError
from amvicc.resources import default_catalogue_path

CATALOGUE_COLUMNS = (
    "index",
    "pair",
    "category_code",
    "category",
    "question",
    "options",
    "answer",
    "implicit_prompt",
    "explicit_prompt",
)
MMVP_HEADER = ("Index", "Question", "Options", "Correct Answer")
AMVICC_QUESTIONS_HEADER = ("Index", "Category", "Question", "Options", "Correct Answer")

OPTIONS_PATTERN = re.compile(
    r"^\s*\(a\)\s*(?P<a>.+?)\s*\(b\)\s*(?P<b>.+?)\s*$", re.IGNORECASE | re.DOTALL
)
ANSWER_PATTERN = re.compile(r"^\s*\(?\s*(?P<label>[ab])\s*\)?\s*$", re.IGNORECASE)
# AMVICC's copy quotes the question but does not double embedded quotes (see SOURCE.md).
AMVICC_LINE_PATTERN = re.compile(r"^(\d+),([a-z]+),\"(.*)\",(\(a\).*?),(\([ab]\))$")


@dataclass(frozen=True)
class Row:
    """One source row, before validation, with the line it started on."""

    line: int
    index: str
    pair: str | None
    category_code: str | None
    category_name: str | None
    question: str
    options: str
    answer: str
    implicit_prompt: str | None = None
    explicit_prompt: str | None = None
    explicit_answer: str | None = None


def read_text(path: Path) -> str:
    """The file as text (UTF-8, a BOM allowed); a missing or binary file is a UserError."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"catalogue {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"catalogue {path} is a folder; give the CSV file inside it") from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"catalogue {path} is not UTF-8 text (byte {err.start}); save it as UTF-8 CSV"
        ) from None


def csv_rows(text: str, file: str = "catalogue") -> Iterator[tuple[int, list[str]]]:
    """CSV records with the line each starts on.

    Raises:
        UserError: a cell is longer than amvicc's limit (named by file, line and column).
    """
    yield from csv_records(text, file)


def rows_from_catalogue(text: str, file: str) -> tuple[list[Row], list[Problem]]:
    """Rows of a catalogue in the shipped CSV's columns."""
    records = csv_rows(text, file)
    _, header = next(records)
    header = [h.strip() for h in header]
    missing = [c for c in CATALOGUE_COLUMNS if c not in header]
    if missing:
        return [], [Problem(file, 1, f"missing column(s) {', '.join(missing)}")]
    col = {name: header.index(name) for name in header}
    rows: list[Row] = []
    problems: list[Problem] = []
    for line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(header):
            problems.append(
                Problem(file, line, f"has {len(record)} fields, the header has {len(header)}")
            )
            continue

        def get(name: str, record: list[str] = record) -> str | None:
            return record[col[name]].strip() if name in col else None

        rows.append(
            Row(
                line=line,
                index=get("index") or "",
                pair=get("pair"),
                category_code=get("category_code"),
                category_name=get("category"),
                question=get("question") or "",
                options=get("options") or "",
                answer=get("answer") or "",
                implicit_prompt=get("implicit_prompt"),
                explicit_prompt=get("explicit_prompt"),
                explicit_answer=get("explicit_answer") or None,
            )
        )
    return rows, problems


def rows_from_mmvp(text: str, file: str) -> tuple[list[Row], list[Problem]]:
    """Rows of MMVP's own ``Questions.csv`` (no categories, no prompts)."""
    records = csv_rows(text, file)
    next(records)
    rows: list[Row] = []
    problems: list[Problem] = []
    for line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(MMVP_HEADER):
            problems.append(Problem(file, line, f"has {len(record)} fields, expected 4"))
            continue
        index, question, options, answer = (cell.strip() for cell in record)
        rows.append(Row(line, index, None, None, None, question, options, answer))
    return rows, problems


def rows_from_amvicc_questions(text: str, file: str) -> tuple[list[Row], list[Problem]]:
    """Rows of AMVICC's 5-column copy, whose quoted questions do not escape quotes."""
    rows: list[Row] = []
    problems: list[Problem] = []
    for line, raw in enumerate(text.splitlines()[1:], start=2):
        if not raw.strip():
            continue
        match = AMVICC_LINE_PATTERN.match(raw.strip())
        if match is None:
            problems.append(
                Problem(file, line, 'does not read as Index,Category,"Question",Options,Answer')
            )
            continue
        index, code, question, options, answer = match.groups()
        rows.append(Row(line, index, None, code, None, question, options, answer))
    return rows, problems


RowReader = Callable[[str, str], tuple[list[Row], list[Problem]]]


@dataclass(frozen=True)
class Dialect:
    """A catalogue format: the header that announces it and how its rows are read.

    Attributes:
        name: what runs record as the catalogue's format.
        header: the first row's cells, exactly.
        read: text and file name -> rows and problems (never raises on a bad row).
        needs_prompts: its rows must carry implicit and explicit prompts.
    """

    name: str
    header: tuple[str, ...] | None
    read: RowReader
    needs_prompts: bool = False


#: Every catalogue format, recognised by its header; a new format is a reader and a line here.
DIALECTS: tuple[Dialect, ...] = (
    Dialect("mmvp", MMVP_HEADER, rows_from_mmvp),
    Dialect("amvicc-questions", AMVICC_QUESTIONS_HEADER, rows_from_amvicc_questions),
)
#: Any other header: the project's own columns (``CATALOGUE_COLUMNS``), prompts included.
DEFAULT_DIALECT = Dialect("catalogue", None, rows_from_catalogue, needs_prompts=True)


def dialect_of(header: tuple[str, ...]) -> Dialect:
    """The format a file's header announces (the project's own when none matches)."""
    return next((d for d in DIALECTS if d.header == header), DEFAULT_DIALECT)


def amvicc_categories() -> dict[int, Category]:
    """AMVICC's category of each MMVP index, for files that do not carry one."""
    text = default_catalogue_path().read_text(encoding="utf-8")
    rows, _ = rows_from_catalogue(text, "amvicc.csv")
    return {int(r.index): CATEGORY_BY_CODE[r.category_code or ""] for r in rows}
