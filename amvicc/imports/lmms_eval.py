"""lmms-eval's ``--log_samples`` files (``<date>_samples_<task>.jsonl``), as lmms-eval writes them.

From v0.4 to today (read in its ``evaluator.py`` and ``loggers/evaluation_tracker.py``) a
record of a ``generate_until`` task such as ``mmvp`` is::

    {"doc_id": 0, "target": "A", "filtered_resps": "A", "token_counts": [...],
     "doc_hash": "...", "mmvp_accuracy": {"index": 0, ..., "pred": "A", ...},
     "mmvp_pair_accuracy": {...}, "input": "<the prompt>"}

``doc`` and ``arguments`` are dropped before writing; ``resps`` (the raw generations) is dropped
when it equals ``filtered_resps``. Before v0.7 ``filtered_resps`` is a one-element list
(``["A"]``) and ``token_counts`` absent; ``resps``, when kept, is ``[["raw", ...]]`` (v0.4-v0.6)
or ``["raw", ...]`` / ``"raw"`` (v0.7+; reasoning tags stripped from ``filtered_resps``). A task
with ``repeats`` keeps every generation in ``resps``: each is a sample of its own here.

A record names its question by ``doc_id``, the dataset row counted from 0 (``lmms-lab-eval/MMVP``
is in MMVP's order, so question ``doc_id + 1``; an older log that kept ``doc`` names it by the
doc's ``Index``). ``target`` (lmms-eval's ``mmvp`` writes ``A`` / ``B``, with MMVP's label
corrections applied) must be that question's answer key, and ``input`` (the prompt, kept with
the reply) must ask that question; the ``index`` lmms-eval's ``mmvp`` metrics record (``Index``
- 1) must agree with ``doc_id``. A log of another task fails those checks on most records and
is refused as a whole, saying which task it looks like.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from amvicc.catalogue import Catalogue
from amvicc.imports.checks import answer_note, integer, prompt_notes, question_note
from amvicc.imports.formats import Problems, catalogue_question, optional_text
from amvicc.imports.notes import Note
from amvicc.imports.records import ImportedReply, SourceRecord

#: Fields lmms-eval writes into every sample record; any other top-level object is a metric
#: of the task (``mmvp_accuracy``, ``pope_f1_score``, ...).
RECORD_FIELDS = frozenset(
    {
        "doc_id",
        "doc",
        "target",
        "arguments",
        "resps",
        "filtered_resps",
        "token_counts",
        "doc_hash",
        "prompt_hash",
        "target_hash",
        "input",
        "input_media",
    }
)
_SAMPLES_FILE = re.compile(r"samples_(.+?)(?:_\d{4}-\d{2}-\d{2}T[\d-]+(?:\.\d+)?)?\.jsonl?$")


def read_lmms_eval(
    record: SourceRecord, catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    """A sample record: one reply per generation, filed under the question it names."""
    data, where = record.data, record.where
    doc: dict[str, Any] = data["doc"] if isinstance(data.get("doc"), dict) else {}
    stated_index = doc.get("Index", doc.get("index"))
    index = integer(stated_index if stated_index is not None else data.get("doc_id"))
    if index is None:
        problems.add(f"{where}: doc_id {data.get('doc_id')!r} is not a whole number")
        return []
    if stated_index is None:
        index += 1  # doc_id counts dataset rows from 0
    question = catalogue_question(record, index, catalogue, problems)
    if question is None:
        return []
    replies = _generations(data)
    if not replies:
        problems.add(f"{where}: no reply text in resps or filtered_resps")
        return []
    prompt = optional_text(data.get("input")) or _argument_prompt(data.get("arguments"))
    notes = (
        _metric_index_notes(where, data, question.index)
        + question_note(where, doc.get("Question", doc.get("question")), question)
        + answer_note(where, data.get("target"), question)
        + prompt_notes(where, prompt, question)
    )
    tokens = _token_counts(data.get("token_counts")) if len(replies) == 1 else (None, None)
    return [
        ImportedReply(
            question.index,
            text,
            None,
            prompt,
            record,
            sample=sample,
            notes=tuple(notes),
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
        )
        for sample, text in enumerate(replies)
    ]


def _generations(data: dict[str, Any]) -> list[str]:
    """The raw generations, flattened from whichever nesting the version wrote.

    ``resps`` when kept (it differs from the filtered reply), else ``filtered_resps``.
    """
    for key in ("resps", "filtered_resps"):
        if key in data:
            texts = _strings(data[key])
            if texts:
                return texts
    return []


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


def _token_counts(value: object) -> tuple[int | None, int | None]:
    """(input, output) tokens of the first request, as v0.7+ writes them (else None)."""
    first = value[0] if isinstance(value, list) and value else None
    if not isinstance(first, dict):
        return None, None
    return integer(first.get("input_tokens")), integer(first.get("output_tokens"))


def _argument_prompt(arguments: object) -> str:
    """The context of an older log's ``arguments`` (``[[context, ...]]``, or a dict of them)."""
    while isinstance(arguments, list | dict) and arguments:
        arguments = arguments[0] if isinstance(arguments, list) else next(iter(arguments.values()))
    return arguments if isinstance(arguments, str) else ""


def _metric_index_notes(where: str, data: dict[str, Any], index: int) -> list[Note]:
    """A mismatch when lmms-eval's mmvp metrics name another question than ``doc_id`` does."""
    metric = data.get("mmvp_accuracy")
    if not isinstance(metric, dict):
        return []
    stated = integer(metric.get("index"))
    if stated is None or stated < 0 or stated + 1 == index:
        return []
    return [
        Note(
            "index",
            where,
            f"question {stated + 1} (mmvp_accuracy's index {stated})",
            f"doc_id {data.get('doc_id')}",
            index,
        )
    ]


def describe(path: Path, records: Sequence[SourceRecord]) -> str:
    """What a log that is not MMVP's looks like: its task, from its name and metrics."""
    metrics = sorted(
        {
            key
            for record in records[:50]
            for key, value in record.data.items()
            if key not in RECORD_FIELDS and isinstance(value, dict | int | float)
        }
    )
    match = _SAMPLES_FILE.search(path.name)
    task = match.group(1) if match else None
    if task is None and metrics:
        task = metrics[0].split("_")[0]
    shown = ", ".join(metrics[:4]) + (", ..." if len(metrics) > 4 else "")
    what = f"lmms-eval's {task!r} task" if task else "another lmms-eval task"
    return what + (f" (metrics {shown})" if metrics else "")
