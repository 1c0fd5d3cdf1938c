"""CSV records from text, with a stated limit on one cell and mistakes named by line and column.

Python's :mod:`csv` refuses a cell longer than its field limit (128 KiB by default) with a bare
``_csv.Error``. amvicc reads catalogues and grade sheets with a larger, documented limit
(:data:`CSV_FIELD_LIMIT`, 1 MiB: far beyond any question, prompt or comment, small enough that a
wrong file is caught) and, when a cell exceeds it, says which file, line and column.
"""

from __future__ import annotations

import csv
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from amvicc.errors import UserError

CSV_FIELD_LIMIT = 1 << 20
"""The longest cell amvicc reads from a CSV file, in characters (1 MiB)."""

# csv.field_size_limit is global to the process: changes are made and undone under a lock.
_LIMIT_LOCK = threading.RLock()


@contextmanager
def _field_limit(limit: int) -> Iterator[None]:
    with _LIMIT_LOCK:
        previous = csv.field_size_limit(limit)
        try:
            yield
        finally:
            csv.field_size_limit(previous)


def csv_records(text: str, file: str) -> list[tuple[int, list[str]]]:
    """Every CSV record of ``text`` with the line it starts on (1-based).

    Args:
        text: the file's text.
        file: the file's name, for messages.

    Raises:
        UserError: a cell is longer than :data:`CSV_FIELD_LIMIT` (the message names the file,
            line and column), or the text is not CSV.
    """
    lines = text.splitlines(keepends=True)
    records: list[tuple[int, list[str]]] = []
    with _field_limit(CSV_FIELD_LIMIT):
        reader = csv.reader(lines)
        start = 1
        try:
            for record in reader:
                records.append((start, record))
                start = reader.line_num + 1
        except csv.Error as err:
            if "field larger than field limit" not in str(err):
                raise UserError(f"{file}: line {reader.line_num}: not valid CSV ({err})") from None
            line, column, size = _oversized_cell(lines, start)
            raise UserError(
                f"{file}: line {line}, column {column}: a cell of {size:,} characters is longer "
                f"than amvicc reads ({CSV_FIELD_LIMIT:,}, 1 MiB per cell); is this the right "
                "file, or a cell missing its closing quote?"
            ) from None
    return records


def _oversized_cell(lines: list[str], start: int) -> tuple[int, int, int]:
    """Where the first cell over the limit is, reading from line ``start`` with no limit.

    Returns:
        The line the cell starts on, its column (1-based) and its length.
    """
    with _field_limit(max(CSV_FIELD_LIMIT, sum(map(len, lines)) + 1)):
        reader = csv.reader(lines[start - 1 :])
        first = start
        for record in reader:
            line = first
            for column, cell in enumerate(record, start=1):
                if len(cell) > CSV_FIELD_LIMIT:
                    return line, column, len(cell)
                line += cell.count("\n")
            first = start + reader.line_num
    return start, 1, CSV_FIELD_LIMIT + 1


# --- writing CSV that spreadsheets open safely ------------------------------------------------

# A cell starting with one of these is a formula to Excel, LibreOffice and Google Sheets.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def excel_safe(value: object) -> object:
    """A cell a spreadsheet will not run: text starting like a formula gets a leading ``'``.

    Numbers (``-0.25``) are left alone; other values pass unchanged. Exports keep data exact by
    default (a leading ``'`` would change what pandas reads back), so this is applied only when
    asked for (``--excel-safe``).
    """
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value
