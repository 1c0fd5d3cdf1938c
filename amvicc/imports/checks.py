"""Checking a record against the question it names: question text, options, answer key, prompt.

A record names its question by an index (or a position the format turns into one); what else
it says about that question — its text, its options, its answer key, the prompt that was sent —
must agree, or the record is about another question (a relabelled record, a log of another
task) and is listed as a mismatch instead of being imported under the wrong question.
"""

from __future__ import annotations

import re

from amvicc.catalogue import OptionLabel, Question
from amvicc.imports.notes import Note

_LABEL = re.compile(r"^\W*\(?\s*([ab])\s*\)?\W*$", re.IGNORECASE)
# A labelled option in a prompt: "(a) ...", "A. ...", "a) ...", "B: ..." at a word boundary.
_LABELLED = re.compile(r"(?:^|\s)\(?[ab][).:]\s", re.IGNORECASE)


def normal(text: str) -> str:
    """Text compared loosely: white space collapsed, case folded."""
    return " ".join(str(text).split()).casefold()


def label(value: object) -> OptionLabel | None:
    """An option label written as ``a``, ``(a)``, ``A``, ``A.``; None for anything else."""
    if not isinstance(value, str):
        return None
    match = _LABEL.match(value)
    if match is None:
        return None
    return "a" if match.group(1).lower() == "a" else "b"


def integer(value: object) -> int | None:
    """A whole number written as an int, an integral float or a numeric string; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
        return int(number) if number.is_integer() else None
    return None


def amvicc_prompt(question: Question) -> str:
    """The prompt AMVICC's scripts sent: the question, a space, the options."""
    return f"{question.text} {question.options_text}"


def same_question(stated: str, question: Question) -> bool:
    """Whether a file's question text is the catalogue's (alone, or with its options)."""
    given = normal(stated)
    text = normal(question.text)
    return given == text or given.startswith(text) or given == normal(amvicc_prompt(question))


def question_note(where: str, stated: object, question: Question) -> list[Note]:
    """A mismatch when a stated question text is not the question's (nothing when blank)."""
    if not isinstance(stated, str) or not stated.strip() or same_question(stated, question):
        return []
    return [Note("question text", where, stated, question.text, question.index)]


def answer_note(where: str, stated: object, question: Question) -> list[Note]:
    """A mismatch when a stated answer key is neither of the question's labels.

    Either label is accepted: the corrected one or MMVP's own (other harnesses apply MMVP's
    label corrections, or not, on their own).
    """
    if stated is None or (isinstance(stated, str) and not stated.strip()):
        return []
    if label(stated) in (question.answer, question.mmvp_answer):
        return []
    expected = f"({question.answer})" + (
        f" or ({question.mmvp_answer})" if question.mmvp_answer != question.answer else ""
    )
    return [Note("answer key", where, str(stated), expected, question.index)]


def options_note(where: str, stated: tuple[object, object], question: Question) -> list[Note]:
    """A mismatch when stated option texts (A, B) are not the question's, in order."""
    if all(value is None or str(value).strip() == "" for value in stated):
        return []
    given = [normal(str(value)) for value in stated]
    if given == [normal(option.text) for option in question.options]:
        return []
    text = " ".join(
        f"({option.label}) {value}" for option, value in zip(question.options, stated, strict=True)
    )
    return [Note("options", where, text, question.options_text, question.index)]


def prompt_notes(where: str, prompt: str, question: Question) -> list[Note]:
    """Mismatches when the prompt sent does not ask the question it is filed under.

    The prompt must contain the question's text; when it lists labelled options (``A. Open``,
    ``(a) Open``), they must be the question's, in order. Any wording around them (a
    harness's instruction, a chat template) is the harness's own and is not checked here.
    """
    if not prompt.strip():
        return []
    text = normal(prompt)
    if normal(question.text) not in text:
        return [Note("question text", where, prompt, question.text, question.index)]
    if not _LABELLED.search(prompt) or all(_lists(text, o.label, o.text) for o in question.options):
        return []
    return [Note("options", where, prompt, question.options_text, question.index)]


def _lists(text: str, letter: str, option: str) -> bool:
    """Whether normalised prompt text lists ``option`` under ``letter`` in a usual form."""
    body = normal(option)
    return any(
        f"{form} {body}" in text
        for form in (f"({letter})", f"{letter}.", f"{letter})", f"{letter}:")
    )


def category_note(where: str, stated: object, question: Question) -> list[Note]:
    """A warning when a stated category is neither the question's code nor its name."""
    if not isinstance(stated, str) or not stated.strip():
        return []
    if normal(stated) in (normal(question.category.code), normal(question.category.name)):
        return []
    return [Note("category", where, stated, question.category.code, question.index)]
