"""Importing VLM replies made elsewhere (``amvicc import-answers``): one answer run per file format.

Researchers often have replies from other harnesses already. An import brings them in
**verbatim** as an ``answer`` run of the named model (its configuration says ``imported`` and
the format, so it never mixes with replies amvicc asked for), about MMVP's own images
(``image_key`` ``mmvp``), after which they go through the same three-stage grading and into the
same reports as any answer run. Formats, detected from the file name and its first record
(``--format`` forces one):

- ``amvicc-jsonl``: AMVICC's answers file, one object per line with ``question_id``,
  ``category``, ``prompt``, ``answer``, ``response``, ``answer_id``, ``model_id``. Their script
  leaves a line out when a request fails (and writes ``Error: ...`` as the reply when it
  catches one); their grader then pairs lines by position, shifting every later pair. Here
  lines pair by ``question_id``: a question without a line is *missing* (listed by index,
  counted by the report's ``--missing`` policy), and an ``Error: ...`` reply is stored as a
  failed request, never as an answer.
- ``amvicc-graded``: AMVICC's graded results JSON (a list, or ``detailed_results`` of their
  grader's output) with ``question_id``, ``model_response`` and ``gpt_grade``: the replies, plus
  each ``gpt_grade`` yes/no as a verdict of AMVICC's grading procedure, a source of its own
  (``procedure:amvicc:gpt_grade@<file>``): ``yes`` is the option AMVICC graded against
  (``correct_answer``, else MMVP's label), ``no`` is ``not_<that option>``, anything else
  ``undecided``.
  Grading still runs the extractor first, so AMVICC's published grading can be compared with
  the extractor's.
- ``lmms-eval``: the ``--log_samples`` JSONL of lmms-eval's ``mmvp`` task (``doc_id``,
  ``doc``, ``target``, ``resps``, ``filtered_resps``). ``doc_id`` counts from 0; the MMVP index
  is the doc's ``Index`` when it has one, else ``doc_id + 1``; the reply is the raw
  generation (``resps``), the filtered one is kept in the raw record.
- ``vlmevalkit``: VLMEvalKit's MMVP prediction file (``.xlsx`` or ``.tsv``) with ``index``,
  ``question`` and ``prediction``. Whether its ``index`` counts from 0 or 1 is read off the
  rows: every row's question (and ``answer``, when there is one) must match the catalogue's
  under one of the two, or nothing is imported.
- ``generic``: CSV or JSONL with ``index`` (or ``question_id``, MMVP's 1-based index) and
  ``response`` (optional ``prompt``).

Every record is checked before anything is written, and the whole import is one transaction:
a file with a malformed record, a question index outside the catalogue, or two different
replies to one question imports nothing and names its first bad line. Importing the same file
again adds nothing (a reply is added only where the run's current reply to that question
differs). Each added reply's source record is kept verbatim in the workspace
(``responses/<run>/<id>.json``) with the file, format and line in its request parameters.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amvicc.catalogue import Catalogue, OptionLabel, Question, catalogue_file
from amvicc.errors import UserError
from amvicc.imports.options import (
    ANSWER_FORMATS,
    AnswerFormat,
    ImportAnswersOptions,
    ImportAnswersSummary,
)
from amvicc.provenance import canonical_json
from amvicc.store import (
    DATABASE_NAME,
    EXTRACTOR_SOURCE,
    ResponseRecord,
    ResponseStatus,
    RunSpec,
    Store,
    VerdictRecord,
    new_id,
    procedure_source,
)
from amvicc.vlm.engine import response_file
from amvicc.vlm.images import MMVP_IMAGE_KEY

log = logging.getLogger(__name__)

# AMVICC's answering scripts write these as the reply when a request failed.
AMVICC_FAILURE_PREFIXES = ("Error: ",)
AMVICC_FAILURE_REPLIES = ("No response generated",)
GRADE_FIELD = "gpt_grade"
_LABEL = re.compile(r"^\W*\(?\s*([ab])\s*\)?\W*$", re.IGNORECASE)


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
    """One reply of the file, mapped to its MMVP question.

    Attributes:
        index: the MMVP index.
        text: the reply, verbatim; None when the other harness recorded a failed request.
        error: why the request failed (when ``text`` is None).
        prompt: the prompt the file says was sent ("" when it does not say).
        record: the source record.
        grade: the file's own yes/no grade of the reply, if it has one.
        graded_against: the option that grade judged the reply against.
    """

    index: int
    text: str | None
    error: str | None
    prompt: str
    record: SourceRecord
    grade: str | None = None
    graded_against: OptionLabel | None = None


@dataclass(frozen=True)
class AnswerFile:
    """An answer file read and checked against the catalogue.

    Attributes:
        name: the file's name.
        format: the format it was read as.
        sha256: the file's SHA-256.
        rows: records read.
        replies: one per question, in file order.
        duplicates: records repeating an earlier one word for word.
        warnings: records that disagree with the catalogue (they still import).
    """

    name: str
    format: AnswerFormat
    sha256: str
    rows: int
    replies: tuple[ImportedReply, ...]
    duplicates: int
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class AnswerImport:
    """What an import added (or would add) to the workspace."""

    run_id: str
    responses_added: int
    verdicts_added: int
    missing: tuple[int, ...]
    judge_source: str | None


# --- reading ---------------------------------------------------------------------------------


def read_answer_file(
    path: Path, catalogue: Catalogue, *, fmt: AnswerFormat | None = None
) -> AnswerFile:
    """Read an answer file, detect its format and check every record against the catalogue.

    Raises:
        UserError: the file cannot be read, its format cannot be told, or a record is
            malformed, names a question outside the catalogue or contradicts another; the
            message names the first such record and counts the others.
    """
    data = _read_bytes(path)
    records = _records(path, data)
    if not records:
        raise UserError(f"answer file {path} has no records")
    chosen = fmt or detect_format(path, records)
    if chosen not in ANSWER_FORMATS:
        raise UserError(f"--format {chosen!r} is not one of {', '.join(ANSWER_FORMATS)}")
    problems: list[str] = []
    warnings: list[str] = []
    mapped: list[ImportedReply | None]
    if chosen == "vlmevalkit":
        mapped = list(_vlmevalkit(records, catalogue, problems))
    else:
        reader = _READERS[chosen]
        mapped = [reader(record, catalogue, problems, warnings) for record in records]
    replies, duplicates = _one_per_question(
        [reply for reply in mapped if reply is not None], problems
    )
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise UserError(f"answer file {path} ({chosen}): {problems[0]}{more}; nothing was imported")
    return AnswerFile(
        name=path.name,
        format=chosen,
        sha256=hashlib.sha256(data).hexdigest(),
        rows=len(records),
        replies=tuple(replies),
        duplicates=duplicates,
        warnings=tuple(warnings),
    )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"answer file {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"answer file {path} is a folder; give the file") from None


def _records(path: Path, data: bytes) -> list[SourceRecord]:
    """The file's records, by its extension (JSONL unless it says otherwise)."""
    suffix = path.suffix.lower()
    if suffix in (".xlsx", ".xls"):
        return _excel_records(path, data)
    text = _text(path, data)
    if suffix in (".csv", ".tsv"):
        return _table_records(path, text, "\t" if suffix == ".tsv" else ",")
    if suffix == ".json":
        return _json_records(path, text)
    return _jsonl_records(path, text)


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
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise UserError(
                f"answer file {path}, {where}: not JSON ({err.msg}); nothing was imported"
            ) from None
        if not isinstance(value, dict):
            raise UserError(f"answer file {path}, {where}: not a JSON object; nothing was imported")
        records.append(SourceRecord(where, value, line.encode()))
    return records


def _json_records(path: Path, text: str) -> list[SourceRecord]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise UserError(
            f"answer file {path}: not JSON (line {err.lineno}: {err.msg}); nothing was imported"
        ) from None
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
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter))
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
    """A spreadsheet cell as a plain Python value (numpy scalars have ``item``)."""
    item = getattr(value, "item", None)
    return item() if callable(item) else value


def detect_format(path: Path, records: Sequence[SourceRecord]) -> AnswerFormat:
    """The format of a file, from its first record's fields.

    Raises:
        UserError: the fields fit no known format (the message lists what each needs).
    """
    keys = {key.lower() for key in records[0].data}
    if "doc_id" in keys and keys & {"resps", "filtered_resps"}:
        return "lmms-eval"
    if "question_id" in keys and keys & {"model_response", GRADE_FIELD}:
        return "amvicc-graded"
    if {"question_id", "response"} <= keys and keys & {"answer_id", "model_id", "prompt"}:
        return "amvicc-jsonl"
    if {"index", "prediction"} <= keys:
        return "vlmevalkit"
    if keys & {"index", "question_id"} and "response" in keys:
        return "generic"
    shown = ", ".join(sorted(records[0].data)) or "none"
    raise UserError(
        f"cannot tell the format of {path}: its first record has the fields {shown}; "
        "expected AMVICC's answers (question_id, response, ...), AMVICC's graded results "
        "(question_id, model_response, gpt_grade), lmms-eval samples (doc_id, resps), a "
        "VLMEvalKit prediction file (index, prediction) or index/question_id with response "
        "(or give --format)"
    )


# --- one reader per format -------------------------------------------------------------------

Problems = list[str]
Reader = Callable[[SourceRecord, Catalogue, Problems, list[str]], ImportedReply | None]


def _amvicc_jsonl(
    record: SourceRecord, catalogue: Catalogue, problems: Problems, warnings: list[str]
) -> ImportedReply | None:
    question = _question(record, "question_id", catalogue, problems)
    reply = _field(record, "response", problems)
    if question is None or reply is None:
        return None
    data = record.data
    warnings.extend(_mismatches(record, question, category=data.get("category")))
    warnings.extend(_answer_mismatch(record, question, data.get("answer"), "answer"))
    prompt = _optional_text(data.get("prompt"))
    if prompt and _normal(prompt) != _normal(amvicc_prompt(question)):
        warnings.append(
            f"{record.where}: prompt {prompt[:60]!r} is not question {question.index}'s "
            f"{amvicc_prompt(question)[:60]!r}"
        )
    text, error = _amvicc_reply(reply)
    return ImportedReply(question.index, text, error, prompt, record)


def _amvicc_graded(
    record: SourceRecord, catalogue: Catalogue, problems: Problems, warnings: list[str]
) -> ImportedReply | None:
    question = _question(record, "question_id", catalogue, problems)
    reply = _field(record, "model_response", problems)
    if question is None or reply is None:
        return None
    data = record.data
    warnings.extend(_mismatches(record, question, category=data.get("category")))
    stated = data.get("question")
    if isinstance(stated, str) and stated.strip() and not _same_question(stated, question):
        warnings.append(
            f"{record.where}: question {stated[:60]!r} is not question {question.index}'s "
            f"{question.text[:60]!r}"
        )
    against = _label(data.get("correct_answer"))
    warnings.extend(
        _answer_mismatch(record, question, data.get("correct_answer"), "correct_answer")
    )
    grade = data.get(GRADE_FIELD)
    text, error = _amvicc_reply(reply)
    return ImportedReply(
        question.index,
        text,
        error,
        _optional_text(stated),
        record,
        grade=None if grade is None else str(grade),
        graded_against=against or question.mmvp_answer,
    )


def _lmms_eval(
    record: SourceRecord, catalogue: Catalogue, problems: Problems, warnings: list[str]
) -> ImportedReply | None:
    data = record.data
    doc: dict[str, Any] = data["doc"] if isinstance(data.get("doc"), dict) else {}
    stated_index = doc.get("Index", doc.get("index"))
    if stated_index is not None:
        index = _integer(stated_index)
        label = f"doc Index {stated_index!r}"
    else:
        doc_id = _integer(data.get("doc_id"))
        index = None if doc_id is None else doc_id + 1
        label = f"doc_id {data.get('doc_id')!r}"
    if index is None:
        problems.append(f"{record.where}: {label} is not a whole number")
        return None
    question = _catalogue_question(record, index, catalogue, problems)
    if question is None:
        return None
    stated = doc.get("Question", doc.get("question"))
    if isinstance(stated, str) and stated.strip() and not _same_question(stated, question):
        problems.append(
            f"{record.where}: {label}'s question {stated[:60]!r} is not MMVP question "
            f"{index}'s {question.text[:60]!r} (is this a log of lmms-eval's mmvp task?)"
        )
        return None
    reply = _first_text(data.get("resps"))
    if reply is None:
        reply = _first_text(data.get("filtered_resps"))
    if reply is None:
        problems.append(f"{record.where}: no reply text in resps or filtered_resps")
        return None
    return ImportedReply(index, reply, None, _lmms_prompt(data.get("arguments")), record)


def _generic(
    record: SourceRecord, catalogue: Catalogue, problems: Problems, warnings: list[str]
) -> ImportedReply | None:
    lowered = {key.lower(): key for key in record.data}
    key = lowered.get("index") or lowered.get("question_id")
    if key is None:
        problems.append(f"{record.where}: no index (or question_id) field")
        return None
    question = _question(record, key, catalogue, problems)
    response_key = lowered.get("response")
    if response_key is None:
        problems.append(f"{record.where}: no response field")
        return None
    if question is None:
        return None
    value = record.data[response_key]
    stated = record.data.get(lowered.get("question", ""), None)
    if isinstance(stated, str) and stated.strip() and not _same_question(stated, question):
        warnings.append(
            f"{record.where}: question {stated[:60]!r} is not question {question.index}'s "
            f"{question.text[:60]!r}"
        )
    prompt = _optional_text(record.data.get(lowered.get("prompt", ""), None))
    if value is None:
        return ImportedReply(question.index, None, "no reply in the file", prompt, record)
    return ImportedReply(question.index, str(value), None, prompt, record)


_READERS: dict[str, Reader] = {
    "amvicc-jsonl": _amvicc_jsonl,
    "amvicc-graded": _amvicc_graded,
    "lmms-eval": _lmms_eval,
    "generic": _generic,
}


def _vlmevalkit(
    records: Sequence[SourceRecord], catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """VLMEvalKit's rows, mapped by the index base under which every row's question fits."""
    rows: list[tuple[SourceRecord, int, dict[str, Any]]] = []
    for record in records:
        lowered = {key.lower(): value for key, value in record.data.items()}
        index = _integer(lowered.get("index"))
        if index is None:
            problems.append(f"{record.where}: index {lowered.get('index')!r} is not a whole number")
            continue
        if not isinstance(lowered.get("question"), str) or not lowered["question"].strip():
            problems.append(
                f"{record.where}: no question text to check the index against (VLMEvalKit's "
                "prediction files have a question column; use --format generic if the index "
                "is MMVP's and the column is response)"
            )
            continue
        rows.append((record, index, lowered))
    if problems:
        return []
    mismatches: dict[int, list[str]] = {}
    for shift in (0, 1):  # index counts from 1 (MMVP's) or from 0
        mismatches[shift] = [
            problem
            for record, index, fields in rows
            for problem in [_vlmevalkit_mismatch(record, index + shift, fields, catalogue)]
            if problem is not None
        ]
        if not mismatches[shift]:
            return [
                ImportedReply(
                    index + shift,
                    None if fields.get("prediction") is None else str(fields["prediction"]),
                    "no prediction in the file" if fields.get("prediction") is None else None,
                    "",
                    record,
                )
                for record, index, fields in rows
            ]
    best = min(mismatches.values(), key=len)
    problems.append(
        f"{best[0]}; the rows fit MMVP's questions neither with indices from 1 nor from 0 "
        f"({len(mismatches[0])} and {len(mismatches[1])} rows do not), so it is not a "
        "prediction file of MMVP as this catalogue has it"
    )
    return []


def _vlmevalkit_mismatch(
    record: SourceRecord, index: int, fields: dict[str, Any], catalogue: Catalogue
) -> str | None:
    try:
        question = catalogue.question(index)
    except KeyError:
        return f"{record.where}: no question {index} in the catalogue"
    if not _same_question(str(fields["question"]), question):
        return (
            f"{record.where}: question {str(fields['question'])[:60]!r} is not MMVP question "
            f"{index}'s {question.text[:60]!r}"
        )
    answer = _label(fields.get("answer"))
    if answer is not None and answer not in (question.answer, question.mmvp_answer):
        return f"{record.where}: answer {fields['answer']!r} is not question {index}'s"
    return None


# --- checks ----------------------------------------------------------------------------------


def _one_per_question(
    replies: Iterable[ImportedReply], problems: Problems
) -> tuple[list[ImportedReply], int]:
    """One reply per question: a word-for-word repeat is dropped, a different one is an error."""
    kept: dict[int, ImportedReply] = {}
    duplicates = 0
    for reply in replies:
        earlier = kept.get(reply.index)
        if earlier is None:
            kept[reply.index] = reply
        elif (earlier.text, earlier.error) == (reply.text, reply.error):
            duplicates += 1
        else:
            problems.append(
                f"{reply.record.where}: a second, different reply to question {reply.index} "
                f"(the first is on {earlier.record.where})"
            )
    return list(kept.values()), duplicates


def _question(
    record: SourceRecord, key: str, catalogue: Catalogue, problems: Problems
) -> Question | None:
    value = record.data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        problems.append(f"{record.where}: no {key} field")
        return None
    index = _integer(value)
    if index is None:
        problems.append(f"{record.where}: {key} {value!r} is not a question number")
        return None
    return _catalogue_question(record, index, catalogue, problems)


def _catalogue_question(
    record: SourceRecord, index: int, catalogue: Catalogue, problems: Problems
) -> Question | None:
    try:
        return catalogue.question(index)
    except KeyError:
        problems.append(
            f"{record.where}: question {index} is not in the catalogue {catalogue.source} "
            f"(it has {min(q.index for q in catalogue)}-{max(q.index for q in catalogue)})"
        )
        return None


def _field(record: SourceRecord, key: str, problems: Problems) -> str | None:
    if key not in record.data:
        problems.append(f"{record.where}: no {key} field")
        return None
    value = record.data[key]
    if value is None:
        problems.append(f"{record.where}: {key} is null")
        return None
    if not isinstance(value, str):
        problems.append(f"{record.where}: {key} is not text ({type(value).__name__})")
        return None
    return value


def _mismatches(record: SourceRecord, question: Question, *, category: object) -> list[str]:
    if not isinstance(category, str) or not category.strip():
        return []
    if _normal(category) in (_normal(question.category.code), _normal(question.category.name)):
        return []
    return [
        f"{record.where}: category {category!r} is not question {question.index}'s "
        f"{question.category.code!r}"
    ]


def _answer_mismatch(
    record: SourceRecord, question: Question, value: object, column: str
) -> list[str]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return []
    label = _label(value)
    if label is not None and label in (question.answer, question.mmvp_answer):
        return []
    return [
        f"{record.where}: {column} {value!r} is not question {question.index}'s "
        f"'({question.mmvp_answer})'"
    ]


def _amvicc_reply(reply: str) -> tuple[str | None, str | None]:
    """AMVICC's reply text, or (None, why) when their script wrote a failed request."""
    if reply.startswith(AMVICC_FAILURE_PREFIXES) or reply.strip() in AMVICC_FAILURE_REPLIES:
        return None, f"the other harness recorded a failed request: {reply[:200]}"
    return reply, None


def amvicc_prompt(question: Question) -> str:
    """The prompt AMVICC's scripts sent: the question, a space, the options."""
    return f"{question.text} {question.options_text}"


def _same_question(stated: str, question: Question) -> bool:
    """Whether a file's question text is the catalogue's (alone, or with its options)."""
    given = _normal(stated)
    text = _normal(question.text)
    return given == text or given.startswith(text) or given == _normal(amvicc_prompt(question))


def _normal(text: str) -> str:
    return " ".join(str(text).split()).casefold()


def _label(value: object) -> OptionLabel | None:
    if not isinstance(value, str):
        return None
    match = _LABEL.match(value)
    if match is None:
        return None
    return "a" if match.group(1).lower() == "a" else "b"


def _integer(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


def _optional_text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _first_text(value: object) -> str | None:
    """The first string of a (possibly nested) list: lmms-eval's ``[["reply"]]``."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _lmms_prompt(arguments: object) -> str:
    """The context lmms-eval sent, when its log keeps it (``[[context, ...]]`` or a dict)."""
    if isinstance(arguments, dict):
        arguments = list(arguments.values())
    while isinstance(arguments, list | dict) and arguments:
        arguments = arguments[0] if isinstance(arguments, list) else next(iter(arguments.values()))
    return arguments if isinstance(arguments, str) else ""


# --- writing ---------------------------------------------------------------------------------


def import_answer_file(
    store: Store | None,
    answers: AnswerFile,
    catalogue: Catalogue,
    *,
    model: str,
    command: str | None = None,
    dry_run: bool = False,
) -> AnswerImport:
    """Record a file's replies (and its own grades) as an answer run, in one transaction.

    Nothing is written on a dry run, nor when the file brings nothing new; ``store`` may be
    None on a dry run (a workspace that does not exist yet).
    """
    spec = _spec(answers, catalogue, model=model, command=command)
    key = spec.config_key
    current = (
        {(r.question_index, r.sample): r for r in store.responses(config_key=key)} if store else {}
    )
    added: list[tuple[ResponseRecord, bytes]] = []
    response_ids: dict[int, str] = {}
    for reply in answers.replies:
        status: ResponseStatus = "ok" if reply.text is not None else "error"
        earlier = current.get((reply.index, 0))
        unchanged = earlier is not None and (earlier.status, earlier.text, earlier.error) == (
            status,
            reply.text,
            reply.error,
        )
        # A failed request in a later file never hides a reply the run already has.
        if earlier is not None and (unchanged or (status == "error" and earlier.status == "ok")):
            response_ids[reply.index] = earlier.response_id
            continue
        response_id = new_id()
        response_ids[reply.index] = response_id
        request = {
            "imported_from": answers.name,
            "format": answers.format,
            "source_sha256": answers.sha256,
            "where": reply.record.where,
            "prompt_in_file": bool(reply.prompt),
        }
        record = ResponseRecord(
            response_id=response_id,
            run_id=spec.run_id,
            config_key=key,
            question_index=reply.index,
            image_key=MMVP_IMAGE_KEY,
            prompt=reply.prompt,
            status=status,
            text=reply.text,
            error=reply.error,
            raw_path=response_file(spec.run_id, response_id),
            request_json=canonical_json(request),
        )
        added.append((record, reply.record.raw))
    source = (
        procedure_source("amvicc", f"{GRADE_FIELD}@{answers.name}") if _graded(answers) else None
    )
    verdicts = _grade_verdicts(answers, source, response_ids, spec.run_id) if source else []
    latest = (
        store.latest_response_values(source, [v.response_id or "" for v in verdicts])
        if store is not None and source is not None
        else {}
    )
    new_verdicts = [v for v in verdicts if latest.get(v.response_id or "") != v.value]
    answered = {slot[0] for slot, r in current.items() if r.status == "ok"}
    answered = (answered - {r.question_index for r, _ in added}) | {
        r.question_index for r, _ in added if r.status == "ok"
    }
    missing = tuple(sorted(q.index for q in catalogue if q.index not in answered))
    result = AnswerImport(spec.run_id, len(added), len(new_verdicts), missing, source)
    run_exists = store is not None and store.run_exists(spec.run_id)
    if store is None or dry_run or (run_exists and not added and not new_verdicts):
        return result
    for record, raw in added:
        assert record.raw_path is not None
        store.write_file(record.raw_path, raw)
    summary = {
        "file": answers.name,
        "format": answers.format,
        "source_sha256": answers.sha256,
        "records": answers.rows,
        "replies": len(answers.replies),
        "responses_added": len(added),
        "verdicts_added": len(new_verdicts),
        "missing": len(missing),
    }
    with store.transaction():
        store.start_run(spec)
        store.add_responses([record for record, _ in added])
        store.add_verdicts(new_verdicts, skip_unchanged=True)
        store.finish_run(spec.run_id, "finished", summary)
    return result


def _spec(answers: AnswerFile, catalogue: Catalogue, *, model: str, command: str | None) -> RunSpec:
    """The import run: an answer run whose configuration says where its replies came from."""
    return RunSpec(
        stage="answer",
        model=model,
        outputs={
            "images": MMVP_IMAGE_KEY,
            "imported": answers.format,
            "catalogue_sha256": catalogue.sha256,
            "label_policy": catalogue.label_policy,
        },
        # absolute, so `amvicc grade` finds it from any folder
        settings={
            "source_file": answers.name,
            "source_sha256": answers.sha256,
            "catalogue": catalogue_file(catalogue),
        },
        label_policy=catalogue.label_policy,
        catalogue_sha256=catalogue.sha256,
        command=command,
    )


def _graded(answers: AnswerFile) -> bool:
    return any(reply.grade is not None for reply in answers.replies)


def _grade_verdicts(
    answers: AnswerFile, source: str, response_ids: dict[int, str], run_id: str
) -> list[VerdictRecord]:
    """The file's own yes/no grades as verdicts: yes is the graded-against option, no ``not_`` it."""
    verdicts: list[VerdictRecord] = []
    for reply in answers.replies:
        if reply.grade is None or reply.text is None or reply.graded_against is None:
            continue
        word = reply.grade.strip().lower()
        against = reply.graded_against
        # "no" says only that the reply is not the graded-against option: not_<label>, so that
        # the report decides correctness under its own label policy.
        value = {"yes": against, "no": f"not_{against}"}.get(word, "undecided")
        detail: dict[str, Any] = {
            GRADE_FIELD: reply.grade,
            "graded_against": against,
            "file": answers.name,
            "where": reply.record.where,
        }
        if word in ("yes", "no"):
            detail["judged_correct"] = word == "yes"
        verdicts.append(
            VerdictRecord(
                source=source,
                value=value,
                response_id=response_ids[reply.index],
                run_id=run_id,
                detail_json=canonical_json(detail),
            )
        )
    return verdicts


def run_import_answers(
    options: ImportAnswersOptions, *, store: Store | Path, catalogue: Catalogue
) -> ImportAnswersSummary:
    """Read and check an answer file, then record its replies as an answer run.

    Args:
        options: the file, the model that wrote it, its format.
        store: the workspace, or its folder: opened (and created) only once the file reads
            without errors, and never created by a dry run.
        catalogue: the questions the file's indices refer to.

    Raises:
        UserError: a blank model, or a file with errors (nothing is imported).
    """
    model = options.model.strip()
    if not model:
        raise UserError("--model must not be blank")
    answers = read_answer_file(options.file, catalogue, fmt=options.format)
    workspace: Store | None = store if isinstance(store, Store) else None
    if isinstance(store, Path) and (not options.dry_run or (store / DATABASE_NAME).is_file()):
        workspace = Store(store)
    result = import_answer_file(
        workspace,
        answers,
        catalogue,
        model=model,
        command=options.command,
        dry_run=options.dry_run,
    )
    return ImportAnswersSummary(
        file=answers.name,
        format=answers.format,
        rows=answers.rows,
        replies=len(answers.replies),
        failed=sum(reply.text is None for reply in answers.replies),
        duplicates=answers.duplicates,
        missing=result.missing,
        warnings=tuple(f"{answers.name} {w}; the reply still imports" for w in answers.warnings),
        run_id=result.run_id,
        responses_added=result.responses_added,
        judge_source=result.judge_source,
        verdicts_added=result.verdicts_added,
        dry_run=options.dry_run,
    )


def agreement_with_extractor(store: Store, run_id: str, source: str) -> tuple[int, int]:
    """How often the file's own grades pick the same option as the extractor.

    Read after grading (the extractor's verdicts are the grade stage's): over the replies both
    decided (``a`` or ``b``), how many they agree on, and how many there are. A grade's "no"
    (``not_a``) names the other option here: MMVP's questions have two.
    """
    other = {"not_a": "b", "not_b": "a"}
    agree = both = 0
    for verdicts in store.latest_verdicts_by_response(run_id).values():
        values = {v.source: v.value for v in verdicts}
        ours, extracted = values.get(source), values.get(EXTRACTOR_SOURCE)
        ours = other.get(ours or "", ours)
        if ours in ("a", "b") and extracted in ("a", "b"):
            both += 1
            agree += ours == extracted
    return agree, both
