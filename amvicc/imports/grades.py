"""Importing a human grade sheet (``amvicc import-grades``): bring a sheet in AMVICC's format into the workspace.

AMVICC graded images in a spreadsheet, one row per MMVP question::

    ID, Category, Question, Answer Choices, Answer, Implicit Prompt, Correct_im,
    Explicit Prompt, Correct_ex, Comments

with ``Y`` / ``N`` in ``Correct_im`` and ``Correct_ex``. An import records one rater's
verdicts on an image model whose images were made elsewhere: an ``import`` run for the model,
an ``external`` image row for each graded (ID, prompt kind) — with an id derived from the
model and the slot, so a second sheet (another rater) grades the same images and a second
import of the same sheet adds nothing — and one verdict per graded cell from the source
``sheet:<file name>:<rater>``.

Spreadsheet exports are messy, so: white space around headers and cells is stripped (a
verdict cell that carried some, like AMVICC's `` Y``, keeps its raw text in the verdict's
details, because a script that compares raw cells counts it differently); a blank verdict cell
is a missing verdict (nothing is recorded); a cell that disagrees with the catalogue (category,
question, options, answer) is a warning naming its row and column, and the verdicts still
import; a verdict that is neither ``Y``, ``N`` nor blank is an error naming its row and column,
and nothing is imported (all of it is one transaction).

AMVICC's two ablations come in sheets of the same shape:

- **samples**: an ID ``N-k`` is the k-th sample of question N (``81``, then ``81-2``,
  ``81-3``: the same prompt three times). Each is its own image (sample k - 1 in the
  workspace), so the report gives mean@k, pass@k and the spread across samples.
- **prompt variants**: a sheet whose prompt cells differ from the catalogue's (the wording
  ablation) graded images made from *those* prompts. They are recorded as a prompt variant of
  the catalogue — the run's ``variant`` (``--variant NAME``, else ``prompts-<hash>``) with the
  differing prompts, and each image row with its own prompt — so the variant is a model
  configuration of its own, compared with the baseline, never mixed with it.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from amvicc.catalogue import Catalogue, PromptKind, Question, catalogue_file
from amvicc.catalogue.csvtext import csv_records
from amvicc.errors import UserError
from amvicc.imports.options import ImportGradesOptions, ImportGradesSummary
from amvicc.lifecycle import record_whole
from amvicc.provenance import canonical_json
from amvicc.store import (
    DATABASE_NAME,
    ImageRecord,
    RunSpec,
    Store,
    VerdictRecord,
    sheet_source,
)

log = logging.getLogger(__name__)

# Canonical column -> the prompt kind its verdicts grade.
VERDICT_COLUMNS: dict[str, PromptKind] = {"Correct_im": "implicit", "Correct_ex": "explicit"}
SHEET_COLUMNS = (
    "ID",
    "Category",
    "Question",
    "Answer Choices",
    "Answer",
    "Implicit Prompt",
    "Correct_im",
    "Explicit Prompt",
    "Correct_ex",
    "Comments",
)
SHEET_VALUES = {"Y": "correct", "N": "incorrect"}
# Outputs of every import run: the images of a model graded elsewhere are one configuration,
# whichever sheet or rater grades them.
IMPORT_OUTPUTS = {"source": "grade-sheet", "format": "amvicc"}

_ANSWER = re.compile(r"^\(?\s*([ab])\s*\)?$", re.IGNORECASE)


_SAMPLE_ID = re.compile(r"^(\d+)\s*-\s*(\d+)$")


def sheet_id(question_index: int, sample: int = 0) -> str:
    """The ID a sheet gives a slot: ``81`` for the first sample, ``81-2`` for the second."""
    return str(question_index) if sample == 0 else f"{question_index}-{sample + 1}"


@dataclass(frozen=True)
class SheetCell:
    """Where a cell is: the spreadsheet row (the header is row 1), the ID and the column."""

    row: int
    column: str
    question_index: int | None = None
    sample: int = 0

    def __str__(self) -> str:
        where = f"row {self.row}"
        if self.question_index is not None:
            where += f" (ID {sheet_id(self.question_index, self.sample)})"
        return f"{where}, column {self.column}"


@dataclass(frozen=True)
class SheetVerdict:
    """One graded cell: the question, the prompt kind, the sample and the verdict value.

    Attributes:
        raw: the cell as written when it carried white space (`` Y``), else None.
    """

    question_index: int
    kind: PromptKind
    value: str
    row: int
    comment: str | None
    sample: int = 0
    raw: str | None = None


@dataclass(frozen=True)
class GradeSheet:
    """A grade sheet read and checked against the catalogue.

    Attributes:
        name: the file's name (part of the verdicts' source).
        verdicts: every non-blank verdict cell, in sheet order.
        warnings: cells that disagree with the catalogue (the verdicts still import).
        rows: data rows read (blank rows aside).
        blank: verdict cells left blank (missing verdicts).
        prompts: the sheet's prompts that differ from the catalogue's, by ``<index>-<kind>``
            (``81-explicit``): the images were made from these, so they form a prompt variant.
        samples: samples per question (k: 3 when IDs run up to ``N-3``).
    """

    name: str
    verdicts: tuple[SheetVerdict, ...]
    warnings: tuple[str, ...]
    rows: int
    blank: int
    prompts: tuple[tuple[str, str], ...] = ()
    samples: int = 1

    @property
    def padded(self) -> tuple[SheetVerdict, ...]:
        """The verdict cells that carried white space around Y or N."""
        return tuple(v for v in self.verdicts if v.raw is not None)


@dataclass(frozen=True)
class ImportResult:
    """What an import added to the workspace."""

    run_id: str
    source: str
    images_added: int
    verdicts_added: int
    verdicts_read: int
    blank: int
    warnings: int
    variant: str | None = None


def read_grade_sheet(path: Path, catalogue: Catalogue) -> GradeSheet:
    """Read an AMVICC grade sheet and check it against the catalogue.

    Raises:
        UserError: the file cannot be read, lacks the ID or verdict columns, or has a cell
            that is not a usable ID or verdict; the message names the first such cell and
            counts the others.
    """
    records = list(_records(path))
    if not records:
        raise UserError(
            f"grade sheet {path} is empty; it needs a header row (ID, ..., Correct_im, ...)"
        )
    _, header = records[0]
    columns = _columns(header, path)
    errors: list[str] = []
    warnings: list[str] = []
    verdicts: list[SheetVerdict] = []
    seen: dict[tuple[int, int], int] = {}
    prompts: dict[str, str] = {}
    rows = blank = 0
    for row, record in records[1:]:
        if not any(cell.strip() for cell in record):
            continue
        rows += 1
        extra = [cell for cell in record[len(header) :] if cell.strip()]
        if extra:
            errors.append(
                f"row {row} has {len(record)} cells, the header has {len(header)}; quote cells "
                "that contain commas"
            )
            continue
        cells = {name: record[i].strip() if i < len(record) else "" for name, i in columns.items()}
        slot = _slot(cells["ID"], row, catalogue, seen, errors)
        if slot is None:
            continue
        question, sample = slot
        comment = cells.get("Comments") or None
        for column, kind in VERDICT_COLUMNS.items():
            if column not in cells:
                continue
            raw = cells[column]
            if not raw:
                blank += 1
                continue
            value = SHEET_VALUES.get(raw)
            if value is None:
                errors.append(
                    f"{SheetCell(row, column, question.index, sample)}: {raw!r} is not Y, N "
                    "or blank"
                )
                continue
            written = record[columns[column]] if columns[column] < len(record) else raw
            padded = written if written != raw else None
            verdicts.append(SheetVerdict(question.index, kind, value, row, comment, sample, padded))
        warnings.extend(_mismatches(cells, question, row, sample))
        warnings.extend(_variant_prompts(cells, question, row, sample, prompts))
    if errors:
        more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
        raise UserError(f"grade sheet {path}: {errors[0]}{more}; fix it and import again")
    samples = 1 + max((sample for _, sample in seen), default=0)
    return GradeSheet(
        path.name,
        tuple(verdicts),
        tuple(warnings),
        rows,
        blank,
        tuple(sorted(prompts.items(), key=lambda kv: _prompt_key_order(kv[0]))),
        samples,
    )


def import_grade_sheet(
    store: Store | None,
    sheet: GradeSheet,
    catalogue: Catalogue,
    *,
    model: str,
    rater: str,
    command: str | None = None,
    dry_run: bool = False,
    variant: str | None = None,
) -> ImportResult:
    """Record a grade sheet's verdicts as one rater's, in one transaction.

    The run, the missing image rows and the new verdicts are committed together or not at
    all. Nothing is written when the sheet brings nothing new (importing it again), nor on a
    dry run (``store`` may then be None: a workspace that does not exist yet).

    Args:
        store: the workspace (None on a dry run before it exists).
        sheet: the sheet, read and checked.
        catalogue: the questions its IDs refer to.
        model: the image model it grades.
        rater: whose verdicts they are.
        command: the command line, recorded with the run.
        dry_run: count what would be added, writing nothing.
        variant: the prompt variant the sheet's images were made from. None: the sheet's
            prompts decide — the catalogue's (no variant), or, when some differ, the variant
            ``prompts-<hash of the differing prompts>``, so that a second rater's sheet of
            the same images lands on the same images.

    Raises:
        UserError: an image of the same slot was already imported with another prompt (two
            prompt sets under one variant name).
    """
    prompts = dict(sheet.prompts)
    name = variant_name(prompts, variant)
    outputs: dict[str, object] = dict(IMPORT_OUTPUTS)
    # The file the IDs refer to, so the report scores the sheet against it.
    settings: dict[str, object] = {"catalogue": catalogue_file(catalogue)}
    if name is not None:
        outputs["variant"] = name
        settings["variant_prompts"] = prompts
    spec = RunSpec(
        stage="import",
        model=model,
        outputs=outputs,
        settings=settings,
        label_policy=catalogue.label_policy,
        catalogue_sha256=catalogue.sha256,
        command=command,
    )
    source = sheet_source(sheet.name, rater)
    images, verdicts = _records_for(sheet, catalogue, spec, source)
    if store is None or dry_run:
        new_images, new_verdicts = _new(store, images, verdicts, sheet.name, name, source)
        return _import_result(spec, source, sheet, new_images, new_verdicts, verdicts, name)
    # Read what is stored inside the write transaction (SQLite's write lock): an identical
    # import running at the same time then adds nothing the other added.
    with store.transaction():
        new_images, new_verdicts = _new(store, images, verdicts, sheet.name, name, source)
        if new_images or new_verdicts or not store.run_exists(spec.run_id):
            summary = {
                "sheet": sheet.name,
                "rater": rater,
                "rows": sheet.rows,
                "verdicts": len(verdicts),
                "blank": sheet.blank,
                "warnings": len(sheet.warnings),
                "images_added": len(new_images),
                "verdicts_added": len(new_verdicts),
                "samples": sheet.samples,
                "variant": name,
                "padded_cells": len(sheet.padded),
            }
            record_whole(store, spec, summary, lambda: _write(store, new_images, new_verdicts))
    return _import_result(spec, source, sheet, new_images, new_verdicts, verdicts, name)


def _new(
    store: Store | None,
    images: dict[str, ImageRecord],
    verdicts: list[VerdictRecord],
    sheet: str,
    variant: str | None,
    source: str,
) -> tuple[list[ImageRecord], list[VerdictRecord]]:
    """The image rows and verdicts the workspace does not hold yet."""
    existing = store.existing_image_ids(list(images)) if store else set()
    if store is not None and existing:
        _check_prompts(store, images, existing, sheet, variant)
    latest = store.latest_image_values(source, list(images)) if store else {}
    new_images = [image for image_id, image in images.items() if image_id not in existing]
    return new_images, [v for v in verdicts if latest.get(v.image_id or "") != v.value]


def _write(store: Store, images: list[ImageRecord], verdicts: list[VerdictRecord]) -> None:
    store.add_images(images)
    store.add_verdicts(verdicts)


def _import_result(
    spec: RunSpec,
    source: str,
    sheet: GradeSheet,
    new_images: list[ImageRecord],
    new_verdicts: list[VerdictRecord],
    verdicts: list[VerdictRecord],
    variant: str | None,
) -> ImportResult:
    return ImportResult(
        run_id=spec.run_id,
        source=source,
        images_added=len(new_images),
        verdicts_added=len(new_verdicts),
        verdicts_read=len(verdicts),
        blank=sheet.blank,
        warnings=len(sheet.warnings),
        variant=variant,
    )


def _records_for(
    sheet: GradeSheet, catalogue: Catalogue, spec: RunSpec, source: str
) -> tuple[dict[str, ImageRecord], list[VerdictRecord]]:
    """The image rows and verdicts a sheet stands for."""
    images: dict[str, ImageRecord] = {}
    verdicts: list[VerdictRecord] = []
    prompts = dict(sheet.prompts)
    for graded in sheet.verdicts:
        question = catalogue.question(graded.question_index)
        image_id = external_image_id(
            spec.config_key, graded.question_index, graded.kind, graded.sample
        )
        key = f"{graded.question_index}-{graded.kind}"
        images[image_id] = ImageRecord(
            image_id=image_id,
            run_id=spec.run_id,
            config_key=spec.config_key,
            question_index=graded.question_index,
            prompt_kind=graded.kind,
            sample=graded.sample,
            prompt=prompts.get(key) or _prompt(question, graded.kind),
            seed=None,
            status="external",
            params_json=canonical_json({"graded_elsewhere": True}),
        )
        verdicts.append(
            VerdictRecord(
                source=source,
                value=graded.value,
                image_id=image_id,
                run_id=spec.run_id,
                comment=graded.comment,
                detail_json=canonical_json(_detail(sheet.name, graded)),
            )
        )
    return images, verdicts


def _detail(sheet: str, graded: SheetVerdict) -> dict[str, object]:
    detail: dict[str, object] = {"sheet": sheet, "row": graded.row}
    if graded.sample:
        detail["id"] = sheet_id(graded.question_index, graded.sample)
    if graded.raw is not None:
        detail["cell"] = graded.raw  # as written, e.g. " Y"
    return detail


def variant_name(prompts: dict[str, str], variant: str | None) -> str | None:
    """The prompt variant a sheet's images belong to (None: the catalogue's prompts).

    A name given wins; otherwise differing prompts name their variant by their hash, so that
    every rater's sheet of the same images finds the same variant.
    """
    if variant is not None:
        return variant
    if not prompts:
        return None
    digest = hashlib.sha256(canonical_json(prompts).encode()).hexdigest()
    return f"prompts-{digest[:8]}"


def _check_prompts(
    store: Store,
    images: dict[str, ImageRecord],
    existing: set[str],
    sheet: str,
    variant: str | None,
) -> None:
    """Refuse to grade an already imported image as if it had been made from another prompt."""
    stored = store.images_by_id(sorted(existing))
    for image_id, record in stored.items():
        new = images[image_id]
        if _normal(record.prompt) != _normal(new.prompt):
            where = f"prompt variant {variant!r}" if variant else "the catalogue's prompts"
            raise UserError(
                f"{sheet}: ID {sheet_id(new.question_index, new.sample)} {new.prompt_kind} "
                f"prompt {new.prompt!r} differs from the prompt of the image already imported "
                f"for this model under {where} ({record.prompt!r}); import it with another "
                "--variant name (or --model)"
            )


def external_image_id(
    config_key: str, question_index: int, kind: PromptKind, sample: int = 0
) -> str:
    """A stable id for an image graded elsewhere: the same slot always gets the same id."""
    text = f"{config_key}:{question_index}:{kind}:{sample}"
    return hashlib.sha256(text.encode()).hexdigest()[:32]


# --- reading ---------------------------------------------------------------------------------


def _records(path: Path) -> Iterator[tuple[int, list[str]]]:
    """CSV records numbered as spreadsheet rows (a cell with a line break stays one row)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"grade sheet {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"grade sheet {path} is a folder; give the CSV file") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Spreadsheets on Windows export CSV in the ANSI code page.
        text = data.decode("cp1252", errors="replace")
        log.warning("%s is not UTF-8; read it as Windows-1252", path)
    if "\x00" in text:
        raise UserError(f"grade sheet {path} is not a CSV text file; export the sheet as CSV")
    records = csv_records(text, f"grade sheet {path}")
    yield from enumerate((record for _, record in records), start=1)


def _canonical(name: str) -> str:
    return " ".join(name.split()).casefold()


def _columns(header: list[str], path: Path) -> dict[str, int]:
    """Map the canonical column names to positions, tolerating case and stray spaces."""
    wanted = {_canonical(name): name for name in SHEET_COLUMNS}
    found: dict[str, int] = {}
    for position, cell in enumerate(header):
        name = wanted.get(_canonical(cell))
        if name is not None and name not in found:
            found[name] = position
    if "ID" not in found or not any(column in found for column in VERDICT_COLUMNS):
        present = ", ".join(repr(c.strip()) for c in header if c.strip()) or "none"
        raise UserError(
            f"grade sheet {path} needs the columns ID and Correct_im and/or Correct_ex "
            f"(AMVICC's format); its header has {present}"
        )
    for column in VERDICT_COLUMNS:
        if column not in found:
            log.warning("%s has no %s column; those verdicts stay missing", path, column)
    return found


def _slot(
    raw: str,
    row: int,
    catalogue: Catalogue,
    seen: dict[tuple[int, int], int],
    errors: list[str],
) -> tuple[Question, int] | None:
    """The question and sample an ID names: ``81`` is sample 0 of 81, ``81-2`` sample 1."""
    cell = SheetCell(row, "ID")
    number = 1
    match = _SAMPLE_ID.match(raw)
    try:
        if match:
            index, number = int(match.group(1)), int(match.group(2))
        else:
            value = float(raw)
            if not value.is_integer():
                raise ValueError(raw)
            index = int(value)
    except ValueError:
        errors.append(
            f"{cell}: {raw!r} is not a question number (N, or N-k for the k-th sample)"
            if raw
            else f"{cell}: blank ID"
        )
        return None
    if number < 1:
        errors.append(f"{cell}: {raw!r}: samples count from 1 (N-2 is N's second sample)")
        return None
    key = (index, number - 1)
    if key in seen:
        errors.append(f"{cell}: ID {raw} appears twice (first on row {seen[key]})")
        return None
    seen[key] = row
    try:
        return catalogue.question(index), number - 1
    except KeyError:
        errors.append(f"{cell}: ID {index} is not a question of the catalogue {catalogue.source}")
        return None


def _normal(text: str) -> str:
    return " ".join(text.split()).casefold()


def _mismatches(
    cells: dict[str, str], question: Question, row: int, sample: int = 0
) -> Iterator[str]:
    """Warnings for informational cells that disagree with the catalogue.

    The row is matched by ID, so a typo in its question text (AMVICC's ``3From the
    camera's ...``) is only a warning. Prompt cells are not checked here: prompts that
    differ are what the images were made from (:func:`_variant_prompts`).
    """
    expected = {
        "Category": (question.category.code, question.category.name),
        "Question": (question.text,),
        "Answer Choices": (question.options_text,),
    }
    for column, allowed in expected.items():
        value = cells.get(column, "")
        if not value or not allowed[0]:
            continue
        if _normal(value) not in {_normal(a) for a in allowed}:
            yield (
                f"{SheetCell(row, column, question.index, sample)}: {value!r} does not match "
                f"the catalogue's {allowed[0]!r}"
            )
    answer = cells.get("Answer", "")
    if answer:
        match = _ANSWER.match(answer)
        labels = {question.answer, question.mmvp_answer}
        if match is None or match.group(1).lower() not in labels:
            yield (
                f"{SheetCell(row, 'Answer', question.index, sample)}: {answer!r} does not "
                f"match the catalogue's '({question.mmvp_answer})'"
            )


_PROMPT_COLUMNS: dict[str, PromptKind] = {
    "Implicit Prompt": "implicit",
    "Explicit Prompt": "explicit",
}


def _variant_prompts(
    cells: dict[str, str], question: Question, row: int, sample: int, prompts: dict[str, str]
) -> Iterator[str]:
    """Collect the row's prompts that differ from the catalogue's (the sheet's variant).

    A question's samples share their prompt; a later row that gives another one is a warning
    (its images keep the first).
    """
    for column, kind in _PROMPT_COLUMNS.items():
        value = " ".join(cells.get(column, "").split())
        catalogue_text = _prompt(question, kind)
        if not value or not catalogue_text or _normal(value) == _normal(catalogue_text):
            continue
        key = f"{question.index}-{kind}"
        first = prompts.setdefault(key, value)
        if _normal(first) != _normal(value):
            yield (
                f"{SheetCell(row, column, question.index, sample)}: {value!r} differs from the "
                f"prompt an earlier row gave this question ({first!r}); the first one counts"
            )


def _prompt_key_order(key: str) -> tuple[int, str]:
    index, kind = key.split("-", 1)
    return int(index), kind


def _prompt(question: Question, kind: PromptKind) -> str:
    text = question.implicit_prompt if kind == "implicit" else question.explicit_prompt
    return text or ""


def run_import_grades(
    options: ImportGradesOptions, *, store: Store | Path, catalogue: Catalogue
) -> ImportGradesSummary:
    """Read and check a grade sheet, then record its verdicts in one transaction.

    Args:
        options: the sheet, the model it grades and its rater.
        store: the workspace, or its folder: opened (and created) only once the sheet reads
            without errors, and never created by a dry run.
        catalogue: the questions the sheet's IDs refer to.

    Raises:
        UserError: a blank model or rater, or a sheet with errors (nothing is imported).
    """
    rater = options.rater.strip()
    model = options.model.strip()
    if not rater or not model:
        raise UserError("--model and --rater must not be blank")
    variant = options.variant.strip() if options.variant is not None else None
    if variant == "":
        raise UserError("--variant must not be blank")
    sheet = read_grade_sheet(options.sheet, catalogue)
    workspace: Store | None = store if isinstance(store, Store) else None
    if isinstance(store, Path) and (not options.dry_run or (store / DATABASE_NAME).is_file()):
        workspace = Store(store)
    result = import_grade_sheet(
        workspace,
        sheet,
        catalogue,
        model=model,
        rater=rater,
        command=options.command,
        dry_run=options.dry_run,
        variant=variant,
    )
    return ImportGradesSummary(
        sheet=sheet.name,
        rows=sheet.rows,
        verdicts_read=result.verdicts_read,
        blank=result.blank,
        warnings=tuple(f"{sheet.name} {w}; the verdicts still import" for w in sheet.warnings),
        run_id=result.run_id,
        source=result.source,
        images_added=result.images_added,
        verdicts_added=result.verdicts_added,
        dry_run=options.dry_run,
        variant=result.variant,
        variant_prompts=len(sheet.prompts),
        samples=sheet.samples,
        padded=tuple(
            f"{SheetCell(v.row, _column_of(v.kind), v.question_index, v.sample)}: {v.raw!r}"
            for v in sheet.padded
        ),
    )


def _column_of(kind: PromptKind) -> str:
    return next(column for column, k in VERDICT_COLUMNS.items() if k == kind)
