"""Reading a file of results made elsewhere into records, and what a record stands for.

Every file an import reads is untrusted: it may come from another tool, another person, or be
written to break the reader. JSON is parsed only after its nesting is checked against
:data:`MAX_DEPTH` (a line nested 100,000 deep is one error line, never a ``RecursionError``),
and every error names where it is: a JSON error its line and column, a table error its row.
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amvicc.catalogue import OptionLabel
from amvicc.errors import UserError
from amvicc.imports.notes import Note
from amvicc.provenance import canonical_json

#: The deepest nesting of arrays and objects a record may have. Harness records nest three or
#: four levels; a limit far above that refuses hostile input before Python's parser recurses.
MAX_DEPTH = 64
# A JSON string (skipped whole: its brackets are text) or one bracket.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


@dataclass(frozen=True)
class SourceRecord:
    """One record of the file, as read.

    Attributes:
        where: where it is, for messages: ``line 7``, ``record 3`` or ``row 4`` (a header is
            row 1).
        data: its fields.
        raw: the record verbatim (a JSONL line), or its fields as canonical JSON.
    """

    where: str
    data: dict[str, Any]
    raw: bytes


@dataclass(frozen=True)
class ImportedReply:
    """One reply of the file, filed under the MMVP question its record names.

    Attributes:
        index: the MMVP index.
        text: the reply, verbatim; None when the other harness recorded a failed request.
        error: why the request failed (when ``text`` is None).
        prompt: the prompt the file says was sent ("" when it does not say).
        record: the source record.
        sample: which sample of the question this is (0-based): an Inspect epoch, an
            lmms-eval repeat.
        notes: what the record says that disagrees with the question (mismatches hold it
            back unless accepted; other notes are warnings).
        grade: the file's own yes/no grade of the reply, if it has one.
        graded_against: the option that grade judged the reply against.
        prompt_tokens: the prompt's tokens, when the file counts them.
        completion_tokens: the reply's tokens, when the file counts them.
    """

    index: int
    text: str | None
    error: str | None
    prompt: str
    record: SourceRecord
    sample: int = 0
    notes: tuple[Note, ...] = ()
    grade: str | None = None
    graded_against: OptionLabel | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def mismatched(self) -> bool:
        """Whether the record disagrees with the question it names."""
        return any(note.mismatch for note in self.notes)


def read_bytes(path: Path, what: str = "answer file") -> bytes:
    """The file's bytes.

    Raises:
        UserError: it does not exist or is a folder.
    """
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{what} {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"{what} {path} is a folder; give the file") from None
    except OSError as err:
        raise UserError(f"cannot read {what} {path}: {err.strerror or err}") from None


def file_records(path: Path, data: bytes) -> list[SourceRecord]:
    """The file's records, by its extension (JSONL unless it says otherwise).

    Raises:
        UserError: the file is not what its extension says, or a record is malformed; the
            message names the first bad line (and column) or row.
    """
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xls"):
        return _excel_records(path, data)
    text = _text(path, data)
    if suffix in (".csv", ".tsv"):
        return _table_records(path, text, "\t" if suffix == ".tsv" else ",")
    if suffix == ".json":
        return _json_records(path, text)
    return _jsonl_records(path, text)


def parse_json(text: str, what: str, *, line: int | None = None) -> Any:
    """Parse untrusted JSON with a depth limit.

    Args:
        text: the JSON text.
        what: what it is, for messages (``answer file x.jsonl``).
        line: the line of the file ``text`` is (a JSONL record); None: ``text`` is the whole
            file, and an error's line is counted in it.

    Raises:
        UserError: the text is not JSON or nests deeper than :data:`MAX_DEPTH`; the message
            names the line and column.
    """
    deep = _too_deep(text)
    if deep is not None:
        raise UserError(
            f"{what}, {_position(text, deep, line)}: nested deeper than {MAX_DEPTH} levels; "
            "not a record any harness writes; nothing was imported"
        )
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise UserError(
            f"{what}, {_position(text, err.pos, line)}: not JSON ({err.msg}); nothing was imported"
        ) from None
    except RecursionError:  # below MAX_DEPTH this cannot happen; a backstop, not a path
        raise UserError(f"{what}: nested too deeply to read; nothing was imported") from None


def _too_deep(text: str) -> int | None:
    """The offset of the first bracket nested deeper than :data:`MAX_DEPTH`, or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return None
    depth = 0
    for token in _JSON_TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return token.start()
        elif mark in "]}":
            depth -= 1
    return None


def _position(text: str, offset: int, line: int | None) -> str:
    """``line L, column C`` of an offset in ``text`` (itself line ``line`` of its file)."""
    start = text.rfind("\n", 0, offset) + 1
    number = line if line is not None else text.count("\n", 0, offset) + 1
    return f"line {number}, column {offset - start + 1}"


def _text(path: Path, data: bytes) -> str:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UserError(
            f"answer file {path} is not UTF-8 text; export it as UTF-8 (or as .xlsx)"
        ) from None
    if "\x00" in text:
        raise UserError(f"answer file {path} is not a text file; give JSONL, JSON, CSV or TSV")
    return text


def _jsonl_records(path: Path, text: str) -> list[SourceRecord]:
    records: list[SourceRecord] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"line {number}"
        value = parse_json(line, f"answer file {path}", line=number)
        if not isinstance(value, dict):
            raise UserError(f"answer file {path}, {where}: not a JSON object; nothing was imported")
        records.append(SourceRecord(where, value, line.encode()))
    return records


def _json_records(path: Path, text: str) -> list[SourceRecord]:
    value = parse_json(text, f"answer file {path}")
    if isinstance(value, dict):
        # AMVICC's grader writes {"overall_statistics", ..., "detailed_results": [...]};
        # older lmms-eval versions wrote {"logs": [...]}.
        for key in ("detailed_results", "logs", "results"):
            if isinstance(value.get(key), list):
                value = value[key]
                break
    if not isinstance(value, list):
        raise UserError(
            f"answer file {path} is a JSON object without a list of results "
            "(detailed_results); give the graded results file or a list of replies"
        )
    records: list[SourceRecord] = []
    for number, item in enumerate(value, start=1):
        where = f"record {number}"
        if not isinstance(item, dict):
            raise UserError(f"answer file {path}, {where}: not a JSON object; nothing was imported")
        records.append(SourceRecord(where, item, canonical_json(item).encode()))
    return records


def _table_records(path: Path, text: str, delimiter: str) -> list[SourceRecord]:
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        rows = list(reader)
    except csv.Error as err:
        raise UserError(
            f"answer file {path}, row {reader.line_num}: {err}; nothing was imported"
        ) from None
    if not rows:
        return []
    header = [cell.strip() for cell in rows[0]]
    records: list[SourceRecord] = []
    for number, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) > len(header) and any(cell.strip() for cell in row[len(header) :]):
            raise UserError(
                f"answer file {path}, row {number}: {len(row)} cells, the header has "
                f"{len(header)}; quote cells that contain the delimiter; nothing was imported"
            )
        fields = {name: row[i] if i < len(row) else "" for i, name in enumerate(header) if name}
        records.append(SourceRecord(f"row {number}", fields, canonical_json(fields).encode()))
    return records


def _excel_records(path: Path, data: bytes) -> list[SourceRecord]:
    import pandas as pd

    try:
        frame = pd.read_excel(io.BytesIO(data), dtype=object)
    except ImportError:
        raise UserError(
            f"reading {path} needs openpyxl: pip install openpyxl (or export it as .tsv)"
        ) from None
    except (ValueError, OSError, KeyError) as err:
        raise UserError(f"answer file {path} is not a readable spreadsheet ({err})") from None
    records: list[SourceRecord] = []
    for number, row in enumerate(frame.to_dict(orient="records"), start=2):
        fields = {str(k).strip(): (None if pd.isna(v) else v) for k, v in row.items()}
        fields = {k: _plain(v) for k, v in fields.items()}
        if all(v is None or str(v).strip() == "" for v in fields.values()):
            continue
        records.append(SourceRecord(f"row {number}", fields, canonical_json(fields).encode()))
    return records


def _plain(value: object) -> object:
    """A spreadsheet cell as a plain Python value (numpy scalars have ``item``; a date as text)."""
    item = getattr(value, "item", None)
    value = item() if callable(item) else value
    return value if isinstance(value, str | int | float | bool) or value is None else str(value)
