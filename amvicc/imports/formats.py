"""AMVICC's own answer files and the generic CSV/JSONL: one reader per format, and detection.

A reader turns one record into the replies it holds (usually one; an lmms-eval record with
repeats holds several samples), filed under the question the record names and carrying what
the record says that disagrees with that question (:mod:`amvicc.imports.checks`). A record
that cannot be read at all adds a *problem* instead, and the file imports nothing.

- ``amvicc-jsonl``: AMVICC's answers file, one object per line with ``question_id``,
  ``category``, ``prompt``, ``answer``, ``response``, ``answer_id``, ``model_id``. Their script
  leaves a line out when a request fails (and writes ``Error: ...`` as the reply when it
  catches one): a question without a line is *missing*, an ``Error: ...`` reply a failed
  request, never an answer.
- ``amvicc-graded``: AMVICC's graded results JSON (``question_id``, ``model_response``,
  ``gpt_grade``): the replies, plus each ``gpt_grade`` as a verdict of AMVICC's own grading.
- ``generic``: CSV or JSONL with ``index`` (or ``question_id``, MMVP's 1-based index) and
  ``response``; optional ``prompt``, ``question``, ``options`` and ``answer`` are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from amvicc.catalogue import Catalogue, Question
from amvicc.errors import UserError
from amvicc.imports.checks import (
    amvicc_prompt,
    answer_note,
    category_note,
    integer,
    label,
    normal,
    prompt_notes,
    question_note,
)
from amvicc.imports.notes import Note
from amvicc.imports.options import AnswerFormat
from amvicc.imports.records import ImportedReply, SourceRecord

# AMVICC's answering scripts write these as the reply when a request failed.
AMVICC_FAILURE_PREFIXES = ("Error: ",)
AMVICC_FAILURE_REPLIES = ("No response generated",)
GRADE_FIELD = "gpt_grade"


@dataclass
class Problems:
    """What makes records unreadable: any of them, and the file imports nothing.

    Attributes:
        errors: malformed records (no index, a reply that is not text, ...).
        outside: records naming a question the catalogue does not have (counted apart: a
            file where most records name no question of the catalogue is of another task).
    """

    errors: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)

    def add(self, problem: str) -> None:
        """A malformed record."""
        self.errors.append(problem)

    def __bool__(self) -> bool:
        return bool(self.errors or self.outside)

    def all(self) -> list[str]:
        """Every problem, malformed records first."""
        return self.errors + self.outside


Reader = Callable[[SourceRecord, Catalogue, Problems], list[ImportedReply]]


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
        "VLMEvalKit prediction file (index, prediction), an Inspect log (.eval) or "
        "index/question_id with response (or give --format)"
    )


# --- shared by the readers -------------------------------------------------------------------


def record_question(
    record: SourceRecord, key: str, catalogue: Catalogue, problems: Problems
) -> Question | None:
    """The question a record names by its ``key`` field (a problem when it names none)."""
    value = record.data.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        problems.add(f"{record.where}: no {key} field")
        return None
    index = integer(value)
    if index is None:
        problems.add(f"{record.where}: {key} {value!r} is not a question number")
        return None
    return catalogue_question(record, index, catalogue, problems)


def catalogue_question(
    record: SourceRecord, index: int, catalogue: Catalogue, problems: Problems
) -> Question | None:
    """The catalogue's question ``index`` (a problem when the catalogue has none)."""
    try:
        return catalogue.question(index)
    except KeyError:
        problems.outside.append(
            f"{record.where}: question {index} is not in the catalogue {catalogue.source} "
            f"(it has {min(q.index for q in catalogue)}-{max(q.index for q in catalogue)})"
        )
        return None


def reply_field(record: SourceRecord, key: str, problems: Problems) -> str | None:
    """The reply text in ``key``.

    It must be a string: an object, list, number or boolean is a problem, never stored as
    Python's repr of it.
    """
    if key not in record.data:
        problems.add(f"{record.where}: no {key} field")
        return None
    value = record.data[key]
    if value is None:
        problems.add(f"{record.where}: {key} is null")
        return None
    if not isinstance(value, str):
        problems.add(f"{record.where}: {key} is {_kind(value)}, not a reply's text")
        return None
    return value


def _kind(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", dict: "an object"}
    return names.get(type(value), "a list" if isinstance(value, list) else type(value).__name__)


def optional_text(value: object) -> str:
    """A text field that may be missing: "" unless it is a string."""
    return value if isinstance(value, str) else ""


def _amvicc_reply(reply: str) -> tuple[str | None, str | None]:
    """AMVICC's reply text, or (None, why) when their script wrote a failed request."""
    if reply.startswith(AMVICC_FAILURE_PREFIXES) or reply.strip() in AMVICC_FAILURE_REPLIES:
        return None, f"the other harness recorded a failed request: {reply[:200]}"
    return reply, None


def _amvicc_prompt_notes(where: str, prompt: str, question: Question) -> list[Note]:
    """AMVICC's prompt is fixed: another question is a mismatch, another wording a warning."""
    notes = prompt_notes(where, prompt, question)
    if not notes and prompt.strip() and normal(prompt) != normal(amvicc_prompt(question)):
        notes = [Note("prompt", where, prompt, amvicc_prompt(question), question.index)]
    return notes


# --- the readers -----------------------------------------------------------------------------


def read_amvicc_jsonl(
    record: SourceRecord, catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """A line of AMVICC's answers file."""
    question = record_question(record, "question_id", catalogue, problems)
    reply = reply_field(record, "response", problems)
    if question is None or reply is None:
        return []
    data, where = record.data, record.where
    prompt = optional_text(data.get("prompt"))
    notes = (
        category_note(where, data.get("category"), question)
        + answer_note(where, data.get("answer"), question)
        + _amvicc_prompt_notes(where, prompt, question)
    )
    text, error = _amvicc_reply(reply)
    return [ImportedReply(question.index, text, error, prompt, record, notes=tuple(notes))]


def read_amvicc_graded(
    record: SourceRecord, catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """A result of AMVICC's grader: the reply, and its ``gpt_grade``."""
    question = record_question(record, "question_id", catalogue, problems)
    reply = reply_field(record, "model_response", problems)
    if question is None or reply is None:
        return []
    data, where = record.data, record.where
    stated = data.get("question")
    notes = (
        category_note(where, data.get("category"), question)
        + question_note(where, stated, question)
        + answer_note(where, data.get("correct_answer"), question)
    )
    grade = data.get(GRADE_FIELD)
    text, error = _amvicc_reply(reply)
    return [
        ImportedReply(
            question.index,
            text,
            error,
            optional_text(stated),
            record,
            notes=tuple(notes),
            grade=None if grade is None else str(grade),
            graded_against=label(data.get("correct_answer")) or question.mmvp_answer,
        )
    ]


def read_generic(
    record: SourceRecord, catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """A row of any CSV/JSONL with an index and a response (a null response: a failed one)."""
    lowered = {key.lower(): key for key in record.data}
    key = lowered.get("index") or lowered.get("question_id")
    if key is None:
        problems.add(f"{record.where}: no index (or question_id) field")
        return []
    question = record_question(record, key, catalogue, problems)
    if "response" not in lowered:
        problems.add(f"{record.where}: no response field")
        return []
    if question is None:
        return []

    def field(name: str) -> object:
        return record.data.get(lowered.get(name, ""))

    where = record.where
    prompt = optional_text(field("prompt"))
    notes = (
        question_note(where, field("question"), question)
        + answer_note(where, field("answer"), question)
        + prompt_notes(where, prompt, question)
    )
    if field("response") is None:
        return [ImportedReply(question.index, None, "no reply in the file", prompt, record)]
    reply = reply_field(record, lowered["response"], problems)
    if reply is None:
        return []
    return [ImportedReply(question.index, reply, None, prompt, record, notes=tuple(notes))]
