"""Inspect AI's evaluation logs (``.eval``, or ``.json``) as replies, read through Inspect itself.

The log is read with ``inspect_ai.log.read_eval_log`` (never parsed by hand: its format is
Inspect's to change), so this needs ``inspect-ai`` (``pip install 'amvicc[inspect]'``). Each
sample is one reply:

- its question: the ``index`` in the sample's metadata (``amvicc/mmvp`` writes it), else the
  sample id (MMVP's index, as most MMVP tasks number their samples);
- its sample k: the epoch (epoch 1 is sample 1);
- its text: the output's completion, verbatim; a sample that errored (or has no output) is a
  failed request (counted missing), never a reply;
- its prompt: the text of the user message(s) sent; its tokens: the output's usage.

The sample's target (``a`` / ``b``; ``A`` and ``(a)`` read the same) and its prompt are checked
against the question like any other format's record.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.extras import require_extra
from amvicc.imports.checks import answer_note, integer, prompt_notes
from amvicc.imports.formats import Problems, catalogue_question
from amvicc.imports.records import ImportedReply, SourceRecord
from amvicc.provenance import canonical_json

if TYPE_CHECKING:
    from inspect_ai.log import EvalSample


def read_inspect_log(
    path: Path, catalogue: Catalogue, problems: Problems
) -> tuple[list[SourceRecord], list[ImportedReply]]:
    """The log's samples as records, and their replies.

    Raises:
        UserError: inspect-ai is not installed, or the file is not an Inspect log.
    """
    require_extra("inspect", f"reading the Inspect log {path.name} needs inspect-ai")
    from inspect_ai.log import read_eval_log

    try:
        log = read_eval_log(str(path), resolve_attachments="core", exclude_fields={"events"})
    except Exception as err:  # a third-party reader of an untrusted file: any failure is one line
        reason = str(err).splitlines()[0][:200] if str(err) else type(err).__name__
        raise UserError(f"{path} is not a readable Inspect log ({reason})") from None
    if not log.samples:
        raise UserError(
            f"Inspect log {path.name} holds no samples (status {log.status}); nothing was imported"
        )
    records: list[SourceRecord] = []
    replies: list[ImportedReply] = []
    for sample in log.samples:
        record = _record(sample, log.eval.task)
        records.append(record)
        reply = _reply(record, sample, catalogue, problems)
        if reply is not None:
            replies.append(reply)
    return records, replies


def _record(sample: EvalSample, task: str) -> SourceRecord:
    """What the sample says, kept verbatim with the reply (images left out)."""
    usage = sample.output.usage
    data: dict[str, Any] = {
        "task": task,
        "id": sample.id,
        "epoch": sample.epoch,
        "target": sample.target,
        "input": _prompt(sample),
        "completion": sample.output.completion,
        "stop_reason": None if sample.output.empty else sample.output.stop_reason,
        "usage": usage.model_dump(exclude_none=True) if usage is not None else None,
        "error": sample.error.message if sample.error is not None else None,
        "metadata": sample.metadata,
    }
    data = _jsonable(data)
    return SourceRecord(
        f"sample {sample.id} epoch {sample.epoch}", data, canonical_json(data).encode()
    )


def _jsonable(data: dict[str, Any]) -> dict[str, Any]:
    """The record as plain JSON values (metadata may hold anything Inspect serialises)."""
    value: dict[str, Any] = json.loads(json.dumps(data, default=str))
    return value


def _reply(
    record: SourceRecord, sample: EvalSample, catalogue: Catalogue, problems: Problems
) -> ImportedReply | None:
    data, where = record.data, record.where
    metadata = data["metadata"] if isinstance(data.get("metadata"), dict) else {}
    stated = metadata.get("index", data["id"])
    index = integer(stated)
    if index is None:
        problems.add(f"{where}: sample id {stated!r} is not an MMVP question number")
        return None
    question = catalogue_question(record, index, catalogue, problems)
    if question is None:
        return None
    target = (
        data["target"][0] if isinstance(data["target"], list) and data["target"] else data["target"]
    )
    prompt = str(data["input"])
    notes = answer_note(where, target, question) + prompt_notes(where, prompt, question)
    usage = sample.output.usage
    tokens = (usage.input_tokens, usage.output_tokens) if usage is not None else (None, None)
    if data["error"] is not None or sample.output.empty:
        why = str(data["error"])[:200] if data["error"] is not None else "no output"
        error = f"the Inspect sample errored: {why}"
        return ImportedReply(
            index, None, error, prompt, record, sample=sample.epoch - 1, notes=tuple(notes)
        )
    return ImportedReply(
        index,
        sample.output.completion,
        None,
        prompt,
        record,
        sample=sample.epoch - 1,
        notes=tuple(notes),
        prompt_tokens=tokens[0],
        completion_tokens=tokens[1],
    )


def _prompt(sample: EvalSample) -> str:
    """The text the model was asked: the sample's input, or its user messages' text parts."""
    if isinstance(sample.input, str):
        return sample.input
    parts = [message.text for message in sample.input if message.role == "user"]
    return "\n".join(part for part in parts if part)


def describe(records: Sequence[SourceRecord]) -> str:
    """What a log that is not MMVP's looks like: its task."""
    task = records[0].data.get("task") if records else None
    return f"an Inspect log of the task {task!r}" if task else "an Inspect log of another task"
