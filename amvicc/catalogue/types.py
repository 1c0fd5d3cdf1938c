"""The catalogue's types: categories, questions in pairs, prompts and the catalogue itself.

Every stage works from a :class:`Catalogue`. The shipped one (``prompts/amvicc.csv``) holds the
300 MMVP questions (150 pairs, 9 categories), each with an implicit and an explicit prompt.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Literal, get_args

from amvicc.catalogue.indices import IndexRanges, check_index_ranges
from amvicc.errors import UserError

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
        """The questions in these categories and with these indices (None keeps all).

        Raises:
            UserError: index ranges a user typed (:class:`IndexRanges`) reach beyond this
                catalogue's largest index (checked by their ends, before anything expands).
        """
        if isinstance(indices, IndexRanges):
            check_index_ranges(indices, self._by_index.keys(), self.source)
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
