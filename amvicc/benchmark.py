"""The benchmark catalogue: MMVP questions in pairs, AMVICC categories and prompts.

Every stage works from a :class:`Catalogue`. The shipped one (``prompts/amvicc.csv``) holds the
300 MMVP questions (150 pairs, 9 categories), each with an implicit and an explicit prompt.
Readers accept the other files users have: MMVP's own ``Questions.csv``, AMVICC's 5-column copy
with unescaped quotes, and a bring-your-own catalogue in the shipped CSV's columns.

Reading never raises on the first bad row: it collects every :class:`Problem` with its file and
line so ``amvicc prompts check`` can list them all, and :func:`load_catalogue` refuses a catalogue
with problems in one line that names the first.
"""

from __future__ import annotations

import csv
import hashlib
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from amvicc.errors import UserError
from amvicc.resources import default_catalogue_path

if TYPE_CHECKING:
    import pandas as pd

OptionLabel = Literal["a", "b"]
PromptKind = Literal["implicit", "explicit"]
LabelPolicy = Literal["corrected", "original"]

PROMPT_KINDS: tuple[PromptKind, ...] = get_args(PromptKind)
OPTION_LABELS: tuple[OptionLabel, ...] = get_args(OptionLabel)


@dataclass(frozen=True)
class Category:
    """One of AMVICC's 9 visual categories."""

    code: str
    name: str


CATEGORIES: tuple[Category, ...] = (
    Category("od", "Orientation and Direction"),
    Category("pf", "Presence of Specific Features"),
    Category("sc", "State and Condition"),
    Category("qc", "Quantity and Count"),
    Category("pr", "Positional and Relational Context"),
    Category("ca", "Color and Appearance"),
    Category("sh", "Structural and Physical Characteristics"),
    Category("tx", "Text"),
    Category("vp", "Viewpoint and Perspective"),
)
CATEGORY_BY_CODE: dict[str, Category] = {c.code: c for c in CATEGORIES}


def parse_categories(codes: Iterable[str]) -> tuple[Category, ...]:
    """Turn user-given category codes (or full names) into categories.

    Raises:
        UserError: a code is unknown; the message lists the known ones.
    """
    by_name = {c.name.lower(): c for c in CATEGORIES}
    chosen: list[Category] = []
    for raw in codes:
        key = raw.strip().lower()
        if not key:
            continue
        found = CATEGORY_BY_CODE.get(key) or by_name.get(key)
        if found is None:
            known = ", ".join(f"{c.code} ({c.name})" for c in CATEGORIES)
            raise UserError(f"unknown category {raw!r}; known categories: {known}")
        if found not in chosen:
            chosen.append(found)
    return tuple(chosen)


@dataclass(frozen=True)
class Option:
    """One answer option of a question, e.g. ``(a) Open``."""

    label: OptionLabel
    text: str


@dataclass(frozen=True)
class Question:
    """One MMVP question about one image.

    Attributes:
        index: MMVP's 1-based index; also the image's file name (``<index>.jpg``).
        pair: the pair number; the two questions of a pair share text and category and differ
            in their image and answer.
        answer: the correct option under the catalogue's label policy.
        mmvp_answer: the label as the source file gives it.
        implicit_prompt: the scene, as an image-generation prompt (None when the source file
            has no prompts, e.g. MMVP's ``Questions.csv``).
        explicit_prompt: the scene plus the feature the correct answer names.
        explicit_answer: the option the explicit prompt asks the image to show.
    """

    index: int
    pair: int
    category: Category
    text: str
    options: tuple[Option, Option]
    answer: OptionLabel
    mmvp_answer: OptionLabel
    implicit_prompt: str | None = None
    explicit_prompt: str | None = None
    explicit_answer: OptionLabel | None = None

    def option(self, label: OptionLabel) -> Option:
        """The option with this label."""
        return self.options[OPTION_LABELS.index(label)]

    @property
    def options_text(self) -> str:
        """The options as MMVP writes them: ``(a) Open (b) Closed``."""
        return " ".join(f"({o.label}) {o.text}" for o in self.options)


@dataclass(frozen=True)
class Prompt:
    """One image-generation prompt: a question's implicit or explicit prompt.

    Attributes:
        shows: for explicit prompts, the option the image must show; None for implicit ones.
    """

    question: Question
    kind: PromptKind
    text: str
    shows: OptionLabel | None

    @property
    def key(self) -> str:
        """A stable identifier such as ``99-explicit``."""
        return f"{self.question.index}-{self.kind}"


@dataclass(frozen=True)
class LabelCorrection:
    """A known MMVP label error (tsb0601/MMVP issues #14 and #30, lmms-eval #1018)."""

    index: int
    question: str
    mmvp: OptionLabel
    corrected: OptionLabel


MMVP_LABEL_CORRECTIONS: tuple[LabelCorrection, ...] = (
    LabelCorrection(99, "Does the elephant have long or short tusks?", "a", "b"),
    LabelCorrection(100, "Does the elephant have long or short tusks?", "b", "a"),
    LabelCorrection(279, "Is the elderly person standing or sitting in the picture?", "a", "b"),
    LabelCorrection(280, "Is the elderly person standing or sitting in the picture?", "b", "a"),
)


@dataclass(frozen=True)
class Problem:
    """A defect in a catalogue file, located by file and line."""

    file: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


@dataclass(frozen=True)
class Catalogue:
    """A set of paired questions with their prompts.

    Attributes:
        questions: in file order.
        source: where it was read from.
        sha256: of the source file's bytes, so a run records exactly what it used.
        label_policy: ``corrected`` (MMVP's 4 known label errors fixed) or ``original``.
        corrected_indices: the questions whose label the policy changed.
        format: ``catalogue``, ``mmvp`` or ``amvicc-questions``.
    """

    questions: tuple[Question, ...]
    source: str
    sha256: str
    label_policy: LabelPolicy
    corrected_indices: tuple[int, ...] = ()
    format: str = "catalogue"

    @cached_property
    def _by_index(self) -> dict[int, Question]:
        return {q.index: q for q in self.questions}

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    @property
    def has_prompts(self) -> bool:
        """Whether the source file carries generation prompts."""
        return all(q.implicit_prompt and q.explicit_prompt for q in self.questions)

    def question(self, index: int) -> Question:
        """The question with this MMVP index.

        Raises:
            KeyError: no such question.
        """
        return self._by_index[index]

    def pairs(self) -> dict[int, tuple[Question, ...]]:
        """Questions grouped by pair number."""
        grouped: dict[int, list[Question]] = defaultdict(list)
        for q in self.questions:
            grouped[q.pair].append(q)
        return {pair: tuple(qs) for pair, qs in grouped.items()}

    def categories(self) -> tuple[Category, ...]:
        """The categories present, in the canonical order."""
        present = {q.category for q in self.questions}
        return tuple(c for c in CATEGORIES if c in present)

    def prompts(self, kinds: Collection[PromptKind] = PROMPT_KINDS) -> tuple[Prompt, ...]:
        """Generation prompts, question by question, implicit before explicit.

        Raises:
            UserError: the catalogue has no prompts (e.g. MMVP's ``Questions.csv``).
        """
        if not self.has_prompts:
            raise UserError(
                f"{self.source} has no generation prompts; use a catalogue with "
                "implicit_prompt and explicit_prompt columns (e.g. the shipped one)"
            )
        out: list[Prompt] = []
        for q in self.questions:
            if "implicit" in kinds:
                out.append(Prompt(q, "implicit", q.implicit_prompt or "", None))
            if "explicit" in kinds:
                out.append(Prompt(q, "explicit", q.explicit_prompt or "", q.explicit_answer))
        return tuple(out)

    def select(
        self,
        *,
        categories: Collection[Category] | None = None,
        indices: Collection[int] | None = None,
    ) -> Catalogue:
        """The questions in these categories and with these indices (None keeps all)."""
        kept = tuple(
            q
            for q in self.questions
            if (not categories or q.category in categories)
            and (indices is None or q.index in indices)
        )
        return replace(self, questions=kept)

    def to_frame(self) -> pd.DataFrame:
        """One row per question, in the shipped catalogue's columns plus ``mmvp_answer``."""
        import pandas as pd

        return pd.DataFrame(
            [
                {
                    "index": q.index,
                    "pair": q.pair,
                    "category_code": q.category.code,
                    "category": q.category.name,
                    "question": q.text,
                    "options": q.options_text,
                    "answer": q.answer,
                    "mmvp_answer": q.mmvp_answer,
                    "implicit_prompt": q.implicit_prompt,
                    "explicit_prompt": q.explicit_prompt,
                    "explicit_answer": q.explicit_answer,
                }
                for q in self.questions
            ]
        )


# --- reading ---------------------------------------------------------------------------------

CATALOGUE_COLUMNS = (
    "index",
    "pair",
    "category_code",
    "category",
    "question",
    "options",
    "answer",
    "implicit_prompt",
    "explicit_prompt",
)
MMVP_HEADER = ("Index", "Question", "Options", "Correct Answer")
AMVICC_QUESTIONS_HEADER = ("Index", "Category", "Question", "Options", "Correct Answer")

_OPTIONS = re.compile(r"^\s*\(a\)\s*(?P<a>.+?)\s*\(b\)\s*(?P<b>.+?)\s*$", re.IGNORECASE | re.DOTALL)
_ANSWER = re.compile(r"^\s*\(?\s*(?P<label>[ab])\s*\)?\s*$", re.IGNORECASE)
# AMVICC's copy quotes the question but does not double embedded quotes (see SOURCE.md).
_AMVICC_LINE = re.compile(r"^(\d+),([a-z]+),\"(.*)\",(\(a\).*?),(\([ab]\))$")


@dataclass(frozen=True)
class _Row:
    """One source row, before validation, with the line it started on."""

    line: int
    index: str
    pair: str | None
    category_code: str | None
    category_name: str | None
    question: str
    options: str
    answer: str
    implicit_prompt: str | None = None
    explicit_prompt: str | None = None
    explicit_answer: str | None = None


@dataclass(frozen=True)
class CheckResult:
    """The outcome of reading a catalogue file: its problems, and the catalogue if none."""

    path: Path
    problems: tuple[Problem, ...]
    catalogue: Catalogue | None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise UserError(f"catalogue {path} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"catalogue {path} is a folder; give the CSV file inside it") from None
    except UnicodeDecodeError as err:
        raise UserError(
            f"catalogue {path} is not UTF-8 text (byte {err.start}); save it as UTF-8 CSV"
        ) from None


def _csv_rows(text: str) -> Iterator[tuple[int, list[str]]]:
    """CSV records with the line each starts on."""
    reader = csv.reader(text.splitlines(keepends=True))
    start = 1
    for record in reader:
        yield start, record
        start = reader.line_num + 1


def _rows_from_catalogue(text: str, file: str) -> tuple[list[_Row], list[Problem]]:
    records = _csv_rows(text)
    _, header = next(records)
    header = [h.strip() for h in header]
    missing = [c for c in CATALOGUE_COLUMNS if c not in header]
    if missing:
        return [], [Problem(file, 1, f"missing column(s) {', '.join(missing)}")]
    col = {name: header.index(name) for name in header}
    rows: list[_Row] = []
    problems: list[Problem] = []
    for line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(header):
            problems.append(
                Problem(file, line, f"has {len(record)} fields, the header has {len(header)}")
            )
            continue

        def get(name: str, record: list[str] = record) -> str | None:
            return record[col[name]].strip() if name in col else None

        rows.append(
            _Row(
                line=line,
                index=get("index") or "",
                pair=get("pair"),
                category_code=get("category_code"),
                category_name=get("category"),
                question=get("question") or "",
                options=get("options") or "",
                answer=get("answer") or "",
                implicit_prompt=get("implicit_prompt"),
                explicit_prompt=get("explicit_prompt"),
                explicit_answer=get("explicit_answer") or None,
            )
        )
    return rows, problems


def _rows_from_mmvp(text: str, file: str) -> tuple[list[_Row], list[Problem]]:
    records = _csv_rows(text)
    next(records)
    rows: list[_Row] = []
    problems: list[Problem] = []
    for line, record in records:
        if not any(cell.strip() for cell in record):
            continue
        if len(record) != len(MMVP_HEADER):
            problems.append(Problem(file, line, f"has {len(record)} fields, expected 4"))
            continue
        index, question, options, answer = (cell.strip() for cell in record)
        rows.append(_Row(line, index, None, None, None, question, options, answer))
    return rows, problems


def _rows_from_amvicc_questions(text: str, file: str) -> tuple[list[_Row], list[Problem]]:
    rows: list[_Row] = []
    problems: list[Problem] = []
    for line, raw in enumerate(text.splitlines()[1:], start=2):
        if not raw.strip():
            continue
        match = _AMVICC_LINE.match(raw.strip())
        if match is None:
            problems.append(
                Problem(file, line, 'does not read as Index,Category,"Question",Options,Answer')
            )
            continue
        index, code, question, options, answer = match.groups()
        rows.append(_Row(line, index, None, code, None, question, options, answer))
    return rows, problems


def _amvicc_categories() -> dict[int, Category]:
    """AMVICC's category of each MMVP index, for files that do not carry one."""
    text = default_catalogue_path().read_text(encoding="utf-8")
    rows, _ = _rows_from_catalogue(text, "amvicc.csv")
    return {int(r.index): CATEGORY_BY_CODE[r.category_code or ""] for r in rows}


def _validate(
    rows: list[_Row], file: str, *, needs_prompts: bool
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
                fallback_categories = _amvicc_categories()
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
        options = _OPTIONS.match(row.options)
        if options is None:
            problem(f"options {row.options!r} do not read as '(a) ... (b) ...'")
        answer = _ANSWER.match(row.answer)
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
                shown = _ANSWER.match(row.explicit_answer)
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
    text = _read_text(file_path)
    file = str(file_path)
    first_line = text.split("\n", 1)[0].strip()
    if not first_line:
        raise UserError(f"catalogue {file} is empty; it needs a header row and 2 rows per pair")
    header = tuple(cell.strip() for cell in next(csv.reader([first_line])))
    needs_prompts = False
    if header == MMVP_HEADER:
        fmt = "mmvp"
        rows, problems = _rows_from_mmvp(text, file)
    elif header == AMVICC_QUESTIONS_HEADER:
        fmt = "amvicc-questions"
        rows, problems = _rows_from_amvicc_questions(text, file)
    else:
        fmt = "catalogue"
        needs_prompts = True
        rows, problems = _rows_from_catalogue(text, file)
    questions, more = _validate(rows, file, needs_prompts=needs_prompts)
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
