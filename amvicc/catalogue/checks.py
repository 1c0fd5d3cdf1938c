"""Validation of catalogue rows into questions, the label policy, and loading a catalogue.

Reading never raises on the first bad row: it collects every :class:`Problem` with its file and
line so ``amvicc prompts check`` can list them all, and :func:`load_catalogue` refuses a catalogue
with problems in one line that names the first.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from amvicc.catalogue.csvtext import csv_records
from amvicc.catalogue.readers import (
    ANSWER_PATTERN,
    OPTIONS_PATTERN,
    Row,
    amvicc_categories,
    dialect_of,
    read_text,
)
from amvicc.catalogue.types import (
    CATEGORY_BY_CODE,
    MMVP_LABEL_CORRECTIONS,
    Catalogue,
    Category,
    LabelPolicy,
    Option,
    OptionLabel,
    Problem,
    Question,
)
from amvicc.errors import UserError
from amvicc.resources import default_catalogue_path


@dataclass(frozen=True)
class CheckResult:
    """The outcome of reading a catalogue file: its problems, and the catalogue if none."""

    path: Path
    problems: tuple[Problem, ...]
    catalogue: Catalogue | None


def _validate(
    rows: list[Row], file: str, *, needs_prompts: bool
) -> tuple[list[Question], list[Problem]]:
    problems: list[Problem] = []
    questions: list[Question] = []
    lines: dict[int, int] = {}
    fallback_categories: dict[int, Category] | None = None
    for row in rows:
        before = len(problems)

        def problem(message: str, line: int = row.line) -> None:
            problems.append(Problem(file, line, message))

        try:
            index = int(row.index)
        except ValueError:
            problem(f"index {row.index!r} is not a whole number")
            continue
        if index in lines:
            problem(f"duplicate index {index} (first on line {lines[index]})")
            continue
        lines[index] = row.line

        pair = (index + 1) // 2
        if row.pair is not None:
            try:
                pair = int(row.pair)
            except ValueError:
                problem(f"pair {row.pair!r} is not a whole number")

        category: Category | None
        if row.category_code is None:
            if fallback_categories is None:
                fallback_categories = amvicc_categories()
            category = fallback_categories.get(index)
            if category is None:
                problem(f"no AMVICC category is known for index {index}; add a category_code")
        else:
            category = CATEGORY_BY_CODE.get(row.category_code.lower())
            if category is None:
                codes = ", ".join(CATEGORY_BY_CODE)
                problem(f"unknown category {row.category_code!r} (known: {codes})")
            elif row.category_name and row.category_name.lower() != category.name.lower():
                problem(
                    f"category {row.category_name!r} does not match code {category.code!r} "
                    f"({category.name})"
                )

        if not row.question:
            problem("empty question")
        options = OPTIONS_PATTERN.match(row.options)
        if options is None:
            problem(f"options {row.options!r} do not read as '(a) ... (b) ...'")
        answer = ANSWER_PATTERN.match(row.answer)
        if answer is None:
            problem(f"answer {row.answer!r} is not (a) or (b)")

        explicit_answer: OptionLabel | None = None
        if needs_prompts:
            for kind, text in (
                ("implicit", row.implicit_prompt),
                ("explicit", row.explicit_prompt),
            ):
                if not text:
                    problem(f"missing {kind} prompt")
            if (
                row.implicit_prompt
                and row.explicit_prompt
                and _normalise(row.implicit_prompt) == _normalise(row.explicit_prompt)
            ):
                problem("explicit prompt is identical to the implicit prompt")
            if row.explicit_answer is not None:
                shown = ANSWER_PATTERN.match(row.explicit_answer)
                if shown is None:
                    problem(f"explicit_answer {row.explicit_answer!r} is not (a) or (b)")
                else:
                    explicit_answer = _label(shown.group("label"))

        if len(problems) > before or category is None or options is None or answer is None:
            continue
        label = _label(answer.group("label"))
        questions.append(
            Question(
                index=index,
                pair=pair,
                category=category,
                text=row.question,
                options=(Option("a", options.group("a")), Option("b", options.group("b"))),
                answer=label,
                mmvp_answer=label,
                implicit_prompt=row.implicit_prompt or None,
                explicit_prompt=row.explicit_prompt or None,
                explicit_answer=(explicit_answer or label) if needs_prompts else None,
            )
        )
    problems.extend(_pair_problems(questions, lines, file))
    return questions, problems


def _pair_problems(questions: list[Question], lines: dict[int, int], file: str) -> list[Problem]:
    problems: list[Problem] = []
    grouped: dict[int, list[Question]] = defaultdict(list)
    for q in questions:
        grouped[q.pair].append(q)
    for pair, members in grouped.items():
        line = lines[members[0].index]
        where = ", ".join(f"line {lines[q.index]}" for q in members)
        if len(members) != 2:
            problems.append(
                Problem(file, line, f"pair {pair} has {len(members)} question(s) ({where}), not 2")
            )
            continue
        first, second = members
        if _normalise(first.text) != _normalise(second.text):
            problems.append(Problem(file, line, f"pair {pair} has two different questions"))
        if first.category != second.category:
            problems.append(Problem(file, line, f"pair {pair} has two different categories"))
        if first.answer == second.answer:
            problems.append(
                Problem(file, line, f"pair {pair} has the same answer ({first.answer}) twice")
            )
    return problems


def _normalise(text: str) -> str:
    return " ".join(text.lower().split())


def _label(raw: str) -> OptionLabel:
    return "a" if raw.lower() == "a" else "b"


def _apply_label_policy(
    questions: list[Question], policy: LabelPolicy
) -> tuple[list[Question], tuple[int, ...]]:
    if policy == "original":
        return questions, ()
    fixes = {c.index: c for c in MMVP_LABEL_CORRECTIONS}
    corrected: list[Question] = []
    changed: list[int] = []
    for q in questions:
        fix = fixes.get(q.index)
        # Only MMVP's own question at that index, still carrying MMVP's wrong label.
        if fix and _normalise(fix.question) == _normalise(q.text) and q.answer == fix.mmvp:
            q = replace(q, answer=fix.corrected)
            changed.append(q.index)
        corrected.append(q)
    return corrected, tuple(changed)


def check_catalogue(
    path: str | Path | None = None, *, labels: LabelPolicy = "corrected"
) -> CheckResult:
    """Read a catalogue file in any supported format and list every problem in it.

    Args:
        path: the CSV; None reads the shipped AMVICC catalogue.
        labels: ``corrected`` fixes MMVP's 4 known label errors; ``original`` keeps them.

    Raises:
        UserError: the file cannot be read at all (missing, not UTF-8, empty).
    """
    file_path = Path(path) if path is not None else default_catalogue_path()
    raw = file_path.read_bytes() if file_path.is_file() else b""
    text = read_text(file_path)
    file = str(file_path)
    first_line = text.split("\n", 1)[0].strip()
    if not first_line:
        raise UserError(f"catalogue {file} is empty; it needs a header row and 2 rows per pair")
    header = tuple(cell.strip() for cell in csv_records(first_line, file)[0][1])
    dialect = dialect_of(header)
    fmt = dialect.name
    rows, problems = dialect.read(text, file)
    questions, more = _validate(rows, file, needs_prompts=dialect.needs_prompts)
    problems = sorted([*problems, *more], key=lambda p: p.line)
    if not questions and not problems:
        problems.append(Problem(file, 1, "no questions"))
    if problems:
        return CheckResult(file_path, tuple(problems), None)
    questions, changed = _apply_label_policy(questions, labels)
    catalogue = Catalogue(
        questions=tuple(questions),
        source=file,
        sha256=hashlib.sha256(raw).hexdigest(),
        label_policy=labels,
        corrected_indices=changed,
        format=fmt,
    )
    return CheckResult(file_path, (), catalogue)


def load_catalogue(
    path: str | Path | None = None, *, labels: LabelPolicy = "corrected"
) -> Catalogue:
    """Load a catalogue, refusing one with problems.

    Args:
        path: the CSV; None loads the shipped AMVICC catalogue.
        labels: ``corrected`` (default) fixes MMVP's 4 known label errors (indices 99, 100, 279,
            280); ``original`` keeps MMVP's labels.

    Raises:
        UserError: the file is missing or has problems; the message names the first one.
    """
    result = check_catalogue(path, labels=labels)
    if result.catalogue is None:
        first = result.problems[0]
        more = len(result.problems) - 1
        extra = f" (and {more} more problem(s))" if more else ""
        raise UserError(f"{first}{extra}; run `amvicc prompts check {result.path}` to list them")
    return result.catalogue


def catalogue_file(catalogue: Catalogue) -> str | None:
    """The catalogue's file as runs record it: its absolute path, or None for the shipped one.

    Absolute, so a later stage (grading, the report) finds it from any folder; None for the
    shipped catalogue, so a run on it still names MMVP after amvicc is moved or upgraded.
    """
    resolved = Path(catalogue.source).resolve()
    return None if resolved == default_catalogue_path().resolve() else str(resolved)
