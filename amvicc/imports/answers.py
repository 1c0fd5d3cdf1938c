"""Importing VLM replies made elsewhere (``amvicc import-answers``): one answer run per file format.

Researchers often have replies from other harnesses already. An import brings them in
**verbatim** as an ``answer`` run of the named model (its configuration says ``imported`` and
the format, so it never mixes with replies amvicc asked for), about MMVP's own images
(``image_key`` ``mmvp``), after which they go through the same three-stage grading and into the
same reports as any answer run. Formats, detected from the file name and its first record
(``--format`` forces one): AMVICC's answers and graded results and the generic CSV/JSONL
(:mod:`amvicc.imports.formats`), lmms-eval's ``--log_samples`` (:mod:`.lmms_eval`),
VLMEvalKit's prediction files (:mod:`.vlmevalkit`) and Inspect AI's logs (:mod:`.inspect_logs`).

Every record is filed under the question it names and checked against it (question text,
options, answer key, the prompt sent). Nothing is lost and nothing is filed under the wrong
question:

- a record that disagrees with the question it names is a *mismatch*: listed, and not imported
  unless ``accept_mismatch``;
- a file where most records disagree (a log of another task) is refused whole, in one line
  saying what it looks like;
- two different records naming one question (and sample) are an error naming both;
- a malformed record (no index, a reply that is not text, JSON nested too deep) is an error
  naming its line (and column).

Errors import nothing. Findings that do not hold a record back (a prompt worded differently, a
category named otherwise) are summarised by kind; their full list, with the mismatches held
back, is kept in the workspace beside the run (``amvicc runs --show RUN``).

The write is one transaction that re-reads what the run already holds inside SQLite's write
lock and adds only what is new: importing a file again adds nothing, and two identical imports
at once add each reply once. Each added reply's source record is kept verbatim
(``responses/<run>/<id>.json``) with the file, format and line in its request parameters.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from amvicc.catalogue import Catalogue, catalogue_file
from amvicc.errors import UserError
from amvicc.imports.formats import (
    GRADE_FIELD,
    Problems,
    Reader,
    detect_format,
    read_amvicc_graded,
    read_amvicc_jsonl,
    read_generic,
)
from amvicc.imports.lmms_eval import read_lmms_eval
from amvicc.imports.notes import Note
from amvicc.imports.options import (
    ANSWER_FORMATS,
    AnswerFormat,
    ImportAnswersOptions,
    ImportAnswersSummary,
)
from amvicc.imports.records import ImportedReply, SourceRecord, file_records, read_bytes
from amvicc.imports.vlmevalkit import read_vlmevalkit
from amvicc.lifecycle import record_whole
from amvicc.provenance import canonical_json
from amvicc.store import (
    DATABASE_NAME,
    EXTRACTOR_SOURCE,
    ResponseRecord,
    RunSpec,
    Store,
    VerdictRecord,
    new_id,
    procedure_source,
)
from amvicc.vlm.engine import response_file
from amvicc.vlm.images import MMVP_IMAGE_KEY

# An Inspect log written as JSON opens with its version: {"version": 2, "status": ...
_INSPECT_JSON = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"')
_READERS: dict[str, Reader] = {
    "amvicc-jsonl": read_amvicc_jsonl,
    "amvicc-graded": read_amvicc_graded,
    "lmms-eval": read_lmms_eval,
    "generic": read_generic,
}


@dataclass(frozen=True)
class AnswerFile:
    """An answer file read and checked against the catalogue.

    Attributes:
        name: the file's name.
        format: the format it was read as.
        sha256: the file's SHA-256.
        rows: records read.
        replies: the replies to import, one per (question, sample), in file order.
        held_back: replies of records that disagree with the question they name (not
            imported; empty when mismatches are accepted).
        duplicates: records repeating an earlier one word for word (ignored).
        notes: everything the records say that disagrees with the catalogue.
    """

    name: str
    format: AnswerFormat
    sha256: str
    rows: int
    replies: tuple[ImportedReply, ...]
    held_back: tuple[ImportedReply, ...] = ()
    duplicates: int = 0
    notes: tuple[Note, ...] = ()


@dataclass(frozen=True)
class AnswerImport:
    """What an import added (or would add) to the workspace."""

    run_id: str
    responses_added: int
    verdicts_added: int
    missing: tuple[int, ...]
    judge_source: str | None
    notes_file: str | None = None


# --- reading ---------------------------------------------------------------------------------


def read_answer_file(
    path: Path,
    catalogue: Catalogue,
    *,
    fmt: AnswerFormat | None = None,
    accept_mismatch: bool = False,
) -> AnswerFile:
    """Read an answer file, detect its format and check every record against the catalogue.

    Raises:
        UserError: the file cannot be read, its format cannot be told, most of its records
            are not MMVP's (the message says what the file looks like), or a record is
            malformed, names a question outside the catalogue or conflicts with another; the
            message names the first such record and counts the others.
    """
    if fmt is not None and fmt not in ANSWER_FORMATS:
        raise UserError(f"--format {fmt!r} is not one of {', '.join(ANSWER_FORMATS)}")
    data = read_bytes(path)
    problems = Problems()
    if fmt == "inspect" or (fmt is None and _is_inspect_log(path, data)):
        from amvicc.imports.inspect_logs import read_inspect_log

        chosen: AnswerFormat = "inspect"
        records, replies = read_inspect_log(path, catalogue, problems)
    else:
        records = file_records(path, data)
        if not records:
            raise UserError(f"answer file {path} has no records")
        chosen = fmt or detect_format(path, records)
        replies = _read(chosen, records, catalogue, problems)
    _refuse_another_task(path, chosen, records, replies, problems)
    replies, duplicates = _one_per_slot(replies, problems)
    if problems:
        first, count = problems.all()[0], len(problems.all())
        more = f" (and {count - 1} more problem(s))" if count > 1 else ""
        raise UserError(f"answer file {path} ({chosen}): {first}{more}; nothing was imported")
    return AnswerFile(
        name=path.name,
        format=chosen,
        sha256=hashlib.sha256(data).hexdigest(),
        rows=len(records),
        replies=tuple(r for r in replies if accept_mismatch or not r.mismatched),
        held_back=tuple(r for r in replies if r.mismatched and not accept_mismatch),
        duplicates=duplicates,
        notes=tuple(note for reply in replies for note in _first_sample_notes(reply)),
    )


def _is_inspect_log(path: Path, data: bytes) -> bool:
    suffix = path.suffix.lower()
    return suffix == ".eval" or (suffix == ".json" and _INSPECT_JSON.match(data[:200]) is not None)


def _read(
    fmt: AnswerFormat, records: Sequence[SourceRecord], catalogue: Catalogue, problems: Problems
) -> list[ImportedReply]:
    if fmt == "vlmevalkit":
        return read_vlmevalkit(records, catalogue, problems)
    if fmt == "inspect":
        raise UserError("--format inspect takes an Inspect log (.eval, or .json)")
    reader = _READERS[fmt]
    return [reply for record in records for reply in reader(record, catalogue, problems)]


def _first_sample_notes(reply: ImportedReply) -> tuple[Note, ...]:
    """A record's notes once, though each of its samples carries them."""
    return reply.notes if reply.sample == 0 else ()


def _refuse_another_task(
    path: Path,
    fmt: AnswerFormat,
    records: Sequence[SourceRecord],
    replies: Sequence[ImportedReply],
    problems: Problems,
) -> None:
    """Refuse the file whole when most records disagree with MMVP or name none of it.

    Raises:
        UserError: one line saying what the file looks like; nothing is imported.
    """
    mismatched = {r.record.where: r for r in replies if r.mismatched}
    off = len(mismatched) + len(problems.outside)
    if not records or off * 2 <= len(records):
        return
    notes = [note for reply in mismatched.values() for note in reply.notes if note.mismatch]
    example = notes[0].short() if notes else problems.outside[0]
    raise UserError(
        f"{path.name} does not look like MMVP answers: {off} of {len(records)} record(s) "
        f"disagree with the question they name or name none of the catalogue's (e.g. "
        f"{example}); it looks like {_looks_like(path, fmt, records)}; nothing was imported"
    )


def _looks_like(path: Path, fmt: AnswerFormat, records: Sequence[SourceRecord]) -> str:
    if fmt == "lmms-eval":
        from amvicc.imports.lmms_eval import describe

        return describe(path, records)
    if fmt == "vlmevalkit":
        from amvicc.imports.vlmevalkit import describe as describe_sheet

        return describe_sheet(records)
    if fmt == "inspect":
        from amvicc.imports.inspect_logs import describe as describe_log

        return describe_log(records)
    return "the answers of another benchmark"


def _one_per_slot(
    replies: Sequence[ImportedReply], problems: Problems
) -> tuple[list[ImportedReply], int]:
    """One reply per (question, sample).

    A word-for-word repeat of a record is dropped; two different records naming one question
    are an error naming both.
    """
    kept: dict[tuple[int, int], ImportedReply] = {}
    duplicates = 0
    for reply in replies:
        slot = (reply.index, reply.sample)
        earlier = kept.get(slot)
        if earlier is None:
            kept[slot] = reply
        elif earlier.record.data == reply.record.data:
            duplicates += reply.sample == 0
        else:
            sample = f" (sample {reply.sample + 1})" if reply.sample else ""
            problems.add(
                f"{earlier.record.where} and {reply.record.where} both name question "
                f"{reply.index}{sample} with different records; keep one"
            )
    return list(kept.values()), duplicates


# --- writing ---------------------------------------------------------------------------------


@dataclass
class _Plan:
    """What an import adds to the run, as read from the store."""

    added: list[tuple[ResponseRecord, bytes]] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)
    missing: tuple[int, ...] = ()


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

    The run's current replies are read inside the write transaction (SQLite's write lock), so
    an identical import running at the same time adds nothing the other added. Nothing is
    written on a dry run, nor when the file brings nothing new; ``store`` may be None on a dry
    run (a workspace that does not exist yet).
    """
    spec = _spec(answers, catalogue, model=model, command=command)
    source = (
        procedure_source("amvicc", f"{GRADE_FIELD}@{answers.name}") if _graded(answers) else None
    )
    notes_file = _notes_file(spec.run_id, answers) if answers.notes or answers.held_back else None
    if store is None or dry_run:
        plan = _plan(store, answers, catalogue, spec, source)
        return _result(spec, plan, source, None)
    with store.transaction():
        plan = _plan(store, answers, catalogue, spec, source)
        if plan.added or plan.verdicts or not store.run_exists(spec.run_id):
            summary = _summary(answers, plan, notes_file)
            record_whole(store, spec, summary, lambda: _write(store, plan, answers, notes_file))
        else:
            notes_file = None
    return _result(spec, plan, source, notes_file)


def _plan(
    store: Store | None,
    answers: AnswerFile,
    catalogue: Catalogue,
    spec: RunSpec,
    source: str | None,
) -> _Plan:
    """The responses and verdicts the file adds to what the run holds now."""
    key = spec.config_key
    current = (
        {(r.question_index, r.sample): r for r in store.responses(config_key=key)} if store else {}
    )
    plan = _Plan()
    response_ids: dict[tuple[int, int], str] = {}
    for reply in answers.replies:
        slot = (reply.index, reply.sample)
        earlier = current.get(slot)
        status = "ok" if reply.text is not None else "error"
        unchanged = earlier is not None and (earlier.status, earlier.text, earlier.error) == (
            status,
            reply.text,
            reply.error,
        )
        # A failed request in a later file never hides a reply the run already has.
        if earlier is not None and (unchanged or (status == "error" and earlier.status == "ok")):
            response_ids[slot] = earlier.response_id
            continue
        record = _response(reply, answers, spec)
        response_ids[slot] = record.response_id
        plan.added.append((record, reply.record.raw))
    verdicts = _grade_verdicts(answers, source, response_ids, spec.run_id) if source else []
    latest = (
        store.latest_response_values(source, [v.response_id or "" for v in verdicts])
        if store is not None and source is not None
        else {}
    )
    plan.verdicts = [v for v in verdicts if latest.get(v.response_id or "") != v.value]
    answered = {slot[0] for slot, r in current.items() if r.status == "ok"}
    answered |= {r.question_index for r, _ in plan.added if r.status == "ok"}
    plan.missing = tuple(sorted(q.index for q in catalogue if q.index not in answered))
    return plan


def _response(reply: ImportedReply, answers: AnswerFile, spec: RunSpec) -> ResponseRecord:
    response_id = new_id()
    request = {
        "imported_from": answers.name,
        "format": answers.format,
        "source_sha256": answers.sha256,
        "where": reply.record.where,
        "prompt_in_file": bool(reply.prompt),
    }
    if reply.mismatched:
        request["mismatch_accepted"] = [note.kind for note in reply.notes if note.mismatch]
    return ResponseRecord(
        response_id=response_id,
        run_id=spec.run_id,
        config_key=spec.config_key,
        question_index=reply.index,
        image_key=MMVP_IMAGE_KEY,
        prompt=reply.prompt,
        status="ok" if reply.text is not None else "error",
        sample=reply.sample,
        text=reply.text,
        error=reply.error,
        raw_path=response_file(spec.run_id, response_id),
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        request_json=canonical_json(request),
    )


def _write(store: Store, plan: _Plan, answers: AnswerFile, notes_file: str | None) -> None:
    for record, raw in plan.added:
        assert record.raw_path is not None
        store.write_file(record.raw_path, raw)
    if notes_file is not None:
        store.write_file(notes_file, notes_text(answers).encode())
    store.add_responses([record for record, _ in plan.added])
    store.add_verdicts(plan.verdicts, skip_unchanged=True)


def _notes_file(run_id: str, answers: AnswerFile) -> str:
    """Where the full list of an import's findings is kept, beside the run's replies."""
    return f"responses/{run_id}/import-{answers.sha256[:12]}-notes.txt"


def notes_text(answers: AnswerFile) -> str:
    """Every finding of an import, in full: what ``amvicc runs --show`` prints."""
    lines = [f"{answers.name} ({answers.format}, SHA-256 {answers.sha256})"]
    if answers.held_back:
        lines.append(
            f"{len(answers.held_back)} reply(ies) not imported: their record disagrees with "
            "the question it names (--accept-mismatch takes them)"
        )
    lines += [note.full() for note in answers.notes]
    return "\n".join(lines) + "\n"


def _summary(answers: AnswerFile, plan: _Plan, notes_file: str | None) -> dict[str, Any]:
    kinds: dict[str, int] = {}
    for note in answers.notes:
        kinds[note.kind] = kinds.get(note.kind, 0) + 1
    return {
        "file": answers.name,
        "format": answers.format,
        "source_sha256": answers.sha256,
        "records": answers.rows,
        "replies": len(answers.replies),
        "held_back": len(answers.held_back),
        "responses_added": len(plan.added),
        "verdicts_added": len(plan.verdicts),
        "missing": len(plan.missing),
        "notes": kinds,
        "notes_file": notes_file,
    }


def _result(spec: RunSpec, plan: _Plan, source: str | None, notes: str | None) -> AnswerImport:
    return AnswerImport(
        spec.run_id, len(plan.added), len(plan.verdicts), plan.missing, source, notes
    )


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
    answers: AnswerFile,
    source: str,
    response_ids: dict[tuple[int, int], str],
    run_id: str,
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
                response_id=response_ids[(reply.index, reply.sample)],
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
    answers = read_answer_file(
        options.file, catalogue, fmt=options.format, accept_mismatch=options.accept_mismatch
    )
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
        notes=answers.notes,
        held_back=tuple(sorted({reply.index for reply in answers.held_back})),
        run_id=result.run_id,
        responses_added=result.responses_added,
        judge_source=result.judge_source,
        verdicts_added=result.verdicts_added,
        dry_run=options.dry_run,
        samples=1 + max((reply.sample for reply in answers.replies), default=0),
        notes_file=result.notes_file,
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
