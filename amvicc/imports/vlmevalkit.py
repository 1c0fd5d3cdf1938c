"""VLMEvalKit's MMVP prediction files (``<model>_MMVP.xlsx``, ``.tsv`` or ``.json``).

VLMEvalKit writes its dataset's rows (``MMVP.tsv`` without the image: ``index``, ``question``,
``A``, ``B``, ``answer``, ``category``, ...) with a ``prediction`` column added
(``vlmeval/inference.py``), as ``.xlsx`` by default, ``.tsv`` (every cell quoted) or ``.json``
(a list of rows) under ``PRED_FORMAT``. Its ``index`` counts from 0 in VLMEvalKit's MMVP; which
base a file uses is read off its rows (the one under which more rows' question, options and
answer fit the catalogue). A row that still disagrees with the question it names is a
mismatch.

When a request fails, VLMEvalKit writes a failure message as the prediction: an API model's
``fail_msg`` (``vlmeval/api/base.py`` and each API wrapper), possibly followed by the error, or
``Failed to obtain answer: <error>`` when ``SKIP_ERR`` is set (``vlmeval/inference.py``). All of
them start with ``Failed to obtain answer``, but StepAI's (``Fail to obtain answer via API.``);
VLMEvalKit itself retries predictions containing ``Failed to obtain answer via API.``. Such a
row is a failed request, counted as missing, never a reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from amvicc.catalogue import Catalogue, Question
from amvicc.imports.checks import answer_note, integer, options_note, question_note
from amvicc.imports.formats import Problems, catalogue_question, reply_field
from amvicc.imports.notes import Note
from amvicc.imports.records import ImportedReply, SourceRecord

#: What every VLMEvalKit failure message starts with (StepAI's wrapper says "Fail to").
FAILURE_PREFIXES = ("Failed to obtain answer", "Fail to obtain answer")
#: The failure messages in VLMEvalKit's source, verbatim, from its first releases to today; an
#: API wrapper may append the error to its message (the last three are such compositions).
FAILURE_MESSAGES = (
    "Failed to obtain answer via API.",  # BaseAPI's default fail_msg; inference*.py's FAIL_MSG
    "Failed to obtain answer via API. ",  # the fail_msg of most API wrappers (gpt, gemini, ...)
    "Failed to obtain answer via bailingMM API.",  # api/bailingmm.py
    "Failed to obtain answer BlueLM API. ",  # api/bluelm_api.py
    "Failed to obtain answer BlueLM-V API. ",  # api/bluelm_v_api.py (2024)
    "Fail to obtain answer via API.",  # api/stepai.py
    "Failed to obtain answer.",  # vlmeval/constant.py's FAIL_MSG
    "Failed to obtain answer: ",  # inference.py under SKIP_ERR: f"{FAIL_MSG}: {type} {err}"
    "Failed to obtain answer via API. : Failed with all possible conversation turns.",  # chat
    "Failed to obtain answer via API. Input string longer than context window. ",  # cloudwalk
    "Failed to obtain answer via API.Connection error.",  # inference_api.py: FAIL_MSG + str(e)
)

Row = tuple[SourceRecord, int, dict[str, Any]]


def is_failure(prediction: str) -> bool:
    """Whether a prediction is VLMEvalKit's message for a failed request."""
    return prediction.lstrip().startswith(FAILURE_PREFIXES)


def read_vlmevalkit(
    records: Sequence[SourceRecord], catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """Every row, filed under its question by the index base more rows fit."""
    rows: list[Row] = []
    for record in records:
        lowered = {key.lower(): key for key in record.data}
        index = integer(record.data.get(lowered.get("index", "")))
        if index is None:
            stated = record.data.get(lowered.get("index", ""))
            problems.add(f"{record.where}: index {stated!r} is not a whole number")
            continue
        rows.append((record, index, {name: record.data[key] for name, key in lowered.items()}))
    if problems:
        return []
    # VLMEvalKit's MMVP counts from 0: on a tie, index + 1 is the question.
    shift = max((1, 0), key=lambda s: sum(_fits(row, s, catalogue) for row in rows))
    replies = []
    for record, index, fields in rows:
        question = catalogue_question(record, index + shift, catalogue, problems)
        if question is not None:
            replies.append(_reply(record, fields, question, problems))
    return [reply for reply in replies if reply is not None]


def _fits(row: Row, shift: int, catalogue: Catalogue) -> bool:
    record, index, fields = row
    try:
        question = catalogue.question(index + shift)
    except KeyError:
        return False
    return not _notes(record.where, fields, question)


def _notes(where: str, fields: dict[str, Any], question: Question) -> list[Note]:
    return (
        question_note(where, fields.get("question"), question)
        + options_note(where, (fields.get("a"), fields.get("b")), question)
        + answer_note(where, fields.get("answer"), question)
    )


def _reply(
    record: SourceRecord, fields: dict[str, Any], question: Question, problems: Problems
) -> ImportedReply | None:
    notes = tuple(_notes(record.where, fields, question))
    if fields.get("prediction") is None:
        error = "no prediction in the file"
        return ImportedReply(question.index, None, error, "", record, notes=notes)
    key = next(k for k in record.data if k.lower() == "prediction")
    prediction = reply_field(record, key, problems)
    if prediction is None:
        return None
    if is_failure(prediction):
        error = f"the other harness recorded a failed request: {prediction[:200]}"
        return ImportedReply(question.index, None, error, "", record, notes=notes)
    return ImportedReply(question.index, prediction, None, "", record, notes=notes)


def describe(records: Sequence[SourceRecord]) -> str:
    """What a prediction file that is not MMVP's looks like."""
    columns = ", ".join(sorted(records[0].data)[:8])
    return f"a VLMEvalKit prediction file of another benchmark (columns {columns})"
