"""What an import is asked to bring in, and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from amvicc.imports.notes import Note, summary

DEFAULT_RATER = "grader"


@dataclass(frozen=True)
class ImportGradesOptions:
    """Everything ``amvicc import-grades`` takes besides the catalogue and the workspace.

    Attributes:
        sheet: the grade sheet (CSV in AMVICC's columns).
        model: the image model the sheet grades, e.g. ``dalle3``.
        rater: who graded it; each rater's sheet is one vote in the majority.
        dry_run: check the sheet and count what would be added, writing nothing.
        command: the command line, recorded with the run.
        variant: the prompt variant the sheet's images were made from (AMVICC's wording
            ablation), e.g. ``wording``. None: the catalogue's prompts, or — when the sheet's
            prompt cells differ from them — a variant named after those prompts' hash.
    """

    sheet: Path
    model: str
    rater: str = DEFAULT_RATER
    dry_run: bool = False
    command: str | None = None
    variant: str | None = None


@dataclass(frozen=True)
class ImportGradesSummary:
    """What an import read and added.

    Attributes:
        sheet: the sheet's file name.
        rows: data rows read.
        verdicts_read: non-blank verdict cells.
        blank: blank verdict cells (missing verdicts).
        warnings: cells that disagree with the catalogue (their verdicts still import).
        run_id: the import run.
        source: the verdicts' source, ``sheet:<file>:<rater>``.
        images_added: image rows added (or that would be, on a dry run).
        verdicts_added: verdicts added (or that would be).
        dry_run: nothing was written.
        variant: the prompt variant recorded (None: the catalogue's prompts).
        variant_prompts: the sheet's prompts that differ from the catalogue's.
        samples: samples per question (IDs ``N-k``).
        padded: verdict cells that carried white space (read as Y / N; kept as written).
    """

    sheet: str
    rows: int
    verdicts_read: int
    blank: int
    warnings: tuple[str, ...]
    run_id: str
    source: str
    images_added: int
    verdicts_added: int
    dry_run: bool
    variant: str | None = None
    variant_prompts: int = 0
    samples: int = 1
    padded: tuple[str, ...] = ()

    def lines(self) -> list[str]:
        """One line for the terminal."""
        action = "would add" if self.dry_run else "added"
        lines = [
            f"{self.sheet}: {self.rows} rows, {self.verdicts_read} verdicts "
            f"({self.blank} blank = missing), {len(self.warnings)} warning(s); {action} "
            f"{self.images_added} image(s) and {self.verdicts_added} verdict(s) to run "
            f"{self.run_id} as {self.source}"
        ]
        if self.samples > 1:
            lines.append(
                f"  {self.samples} samples per question (IDs N, N-2, ..., N-{self.samples})"
            )
        if self.variant is not None:
            lines.append(
                f"  prompt variant {self.variant!r}: {self.variant_prompts} prompt(s) differ "
                "from the catalogue's; its images are a configuration of their own"
            )
        if self.padded:
            lines.append(
                f"  {len(self.padded)} verdict cell(s) carried white space, read as Y / N "
                f"(a script comparing raw cells counts them otherwise): {self.padded[0]}"
                + (f" and {len(self.padded) - 1} more" if len(self.padded) > 1 else "")
            )
        return lines


AnswerFormat = Literal[
    "amvicc-jsonl", "amvicc-graded", "lmms-eval", "vlmevalkit", "inspect", "generic"
]
ANSWER_FORMATS: tuple[AnswerFormat, ...] = get_args(AnswerFormat)


@dataclass(frozen=True)
class ImportAnswersOptions:
    """Everything ``amvicc import-answers`` takes besides the catalogue and the workspace.

    Attributes:
        file: the replies (JSONL, JSON, CSV, TSV or XLSX, or an Inspect log).
        model: the VLM that wrote them, e.g. ``gpt-4o``.
        format: the file's format; None detects it from the name and the first record.
        dry_run: check the file and count what would be added, writing nothing.
        command: the command line, recorded with the run.
        accept_mismatch: import the replies of records that disagree with the question they
            name (question text, options, answer key, prompt) too; by default they are listed
            and left out.
    """

    file: Path
    model: str
    format: AnswerFormat | None = None
    dry_run: bool = False
    command: str | None = None
    accept_mismatch: bool = False


@dataclass(frozen=True)
class ImportAnswersSummary:
    """What an answer import read and added.

    Attributes:
        file: the file's name.
        format: the format it was read as.
        rows: records read (blank lines aside).
        replies: replies in the file to import (one per question and sample).
        failed: records the other harness marked as failed requests (stored as errors).
        duplicates: records repeating an earlier one word for word (ignored).
        missing: catalogue questions with no reply in the run after the import, by index.
        notes: what records say that disagrees with the catalogue (mismatches and warnings).
        held_back: questions whose record disagrees with them, not imported.
        run_id: the answer run the replies belong to.
        responses_added: response rows added (or that would be, on a dry run).
        judge_source: the source of the file's own grades, if it has any.
        verdicts_added: those grades added as verdicts (or that would be).
        dry_run: nothing was written.
        samples: samples per question in the file (Inspect epochs, lmms-eval repeats).
        notes_file: where the full list of notes is kept in the workspace (None: no notes,
            or nothing was written).
    """

    file: str
    format: str
    rows: int
    replies: int
    failed: int
    duplicates: int
    missing: tuple[int, ...]
    notes: tuple[Note, ...]
    run_id: str
    responses_added: int
    held_back: tuple[int, ...] = ()
    judge_source: str | None = None
    verdicts_added: int = 0
    dry_run: bool = False
    samples: int = 1
    notes_file: str | None = None

    def lines(self) -> list[str]:
        """What the terminal shows: what was read and added, then what is missing."""
        from amvicc.catalogue import format_index_ranges

        action = "would add" if self.dry_run else "added"
        grades = (
            f" and {self.verdicts_added} verdict(s) as {self.judge_source}"
            if self.judge_source
            else ""
        )
        failed = f", {self.failed} failed request(s)" if self.failed else ""
        duplicates = f", {self.duplicates} duplicate(s) ignored" if self.duplicates else ""
        samples = f" ({self.samples} samples each)" if self.samples > 1 else ""
        lines = [
            f"{self.file} ({self.format}): {self.rows} record(s) answering {self.replies} "
            f"question(s){samples}{failed}{duplicates}, {len(self.notes)} note(s); {action} "
            f"{self.responses_added} response(s){grades} to run {self.run_id}"
        ]
        if self.held_back:
            lines.append(
                f"  not imported: {len(self.held_back)} question(s) whose record disagrees with "
                f"them ({format_index_ranges(self.held_back)}); --accept-mismatch takes them"
            )
        if self.missing:
            lines.append(
                f"  missing: {len(self.missing)} question(s) without a reply "
                f"({format_index_ranges(self.missing)}); the report counts them by its "
                "--missing policy"
            )
        return lines

    def note_lines(self, *, examples: bool = True) -> list[str]:
        """The notes summarised, then where the full list is kept.

        One line per kind, with up to three examples when ``examples``.
        """
        if not self.notes:
            return []
        lines = [
            f"{self.file} {line}" for line in summary(self.notes, examples=3 if examples else 0)
        ]
        if self.notes_file is not None:
            lines.append(
                f"{self.file}: every note is listed by `amvicc runs --show {self.run_id}` "
                f"({self.notes_file} in the workspace)"
            )
        return lines
