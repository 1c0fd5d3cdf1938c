"""Who gave a verdict: the vocabulary of verdict sources every stage writes and reads.

A verdict's ``source`` names its author. People: ``human:<rater>`` (the scoring UI),
``sheet:<file>:<rater>`` (an imported grade sheet) and ``adjudication:<rater>`` (settles a
disagreement). Programs: ``extractor`` (reads the option out of a VLM's reply),
``llm-judge:<model>`` (an LLM reading the reply; ``llm-judge:<grade>@<file>`` when its grades
were made elsewhere and imported with the replies) and ``judge:<method>:<model>`` (an automatic
image judge). Stages build sources only with these functions, so the report can tell their
roles apart (:func:`source_role`).
"""

from __future__ import annotations

from typing import Literal

EXTRACTOR_SOURCE = "extractor"
HUMAN_PREFIX = "human:"
SHEET_PREFIX = "sheet:"
ADJUDICATION_PREFIX = "adjudication:"
JUDGE_PREFIX = "judge:"
LLM_JUDGE_PREFIX = "llm-judge:"
HUMAN_SOURCE_PREFIXES = (HUMAN_PREFIX, SHEET_PREFIX, ADJUDICATION_PREFIX)

SourceRole = Literal["rater", "adjudication", "judge", "llm-judge", "extractor", "other"]


def human_source(rater: str) -> str:
    """The source of a verdict given by a rater in the scoring UI."""
    return f"{HUMAN_PREFIX}{rater}"


def adjudication_source(rater: str) -> str:
    """The source of a verdict that settles a disagreement between raters."""
    return f"{ADJUDICATION_PREFIX}{rater}"


def sheet_source(sheet: str, rater: str) -> str:
    """The source of a verdict imported from a grade sheet."""
    return f"{SHEET_PREFIX}{sheet}:{rater}"


def llm_judge_source(model: str) -> str:
    """The source of an answer verdict decided by an LLM judge."""
    return f"{LLM_JUDGE_PREFIX}{model}"


def imported_judge_source(grade: str, file: str) -> str:
    """The source of answer verdicts an LLM judge gave elsewhere, imported from a file.

    Args:
        grade: what the file calls the grade, e.g. ``gpt_grade`` (AMVICC's GPT-4 grader).
        file: the file's name, so grades of two files stay apart.
    """
    return f"{LLM_JUDGE_PREFIX}{grade}@{file}"


def image_judge_source(method: str, model: str) -> str:
    """The source of an image verdict decided by an automatic image judge."""
    return f"{JUDGE_PREFIX}{method}:{model}"


def is_human_source(source: str) -> bool:
    """Whether a verdict source is a person (rater, grade sheet or adjudicator)."""
    return source.startswith(HUMAN_SOURCE_PREFIXES)


def is_rater_source(source: str) -> bool:
    """Whether a verdict source is one rater's own verdict (in the UI or on a sheet)."""
    return source.startswith((HUMAN_PREFIX, SHEET_PREFIX))


def source_role(source: str) -> SourceRole:
    """What a verdict source does.

    A human ``rater`` (``human:*``, ``sheet:*``), an ``adjudication``, an automatic image
    ``judge``, an ``llm-judge`` of answers, the answer ``extractor``, or ``other``.
    """
    if source.startswith(ADJUDICATION_PREFIX):
        return "adjudication"
    if is_human_source(source):
        return "rater"
    if source.startswith(JUDGE_PREFIX):
        return "judge"
    if source.startswith(LLM_JUDGE_PREFIX):
        return "llm-judge"
    if source == EXTRACTOR_SOURCE:
        return "extractor"
    return "other"
