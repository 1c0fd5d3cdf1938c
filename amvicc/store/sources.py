"""Who gave a verdict: the vocabulary of verdict sources every stage writes and reads.

A verdict's ``source`` names its author. People: ``human:<rater>`` (the scoring UI),
``sheet:<file>:<rater>`` (an imported grade sheet) and ``adjudication:<rater>`` (settles a
disagreement). Programs: ``extractor`` (reads the option out of a VLM's reply),
``llm-judge:<model>`` (an LLM reading the reply), ``procedure:<name>:<model>`` (an LLM grading
every reply under a published procedure, e.g. AMVICC's own, kept apart from the three-stage
grading; ``procedure:amvicc:gpt_grade@<file>`` when those grades were made elsewhere and
imported with the replies) and ``judge:<method>:<model>`` (an automatic image judge). Stages build sources only with these functions, so the report can tell their
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
PROCEDURE_PREFIX = "procedure:"
HUMAN_SOURCE_PREFIXES = (HUMAN_PREFIX, SHEET_PREFIX, ADJUDICATION_PREFIX)

SourceRole = Literal[
    "rater", "adjudication", "judge", "llm-judge", "procedure", "extractor", "other"
]


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


def procedure_source(procedure: str, model: str) -> str:
    """The source of an answer verdict from a grading procedure run by an LLM (every reply).

    Its own source, so that the report can show a model under that procedure beside the
    three-stage grading, and how far the two agree.
    """
    return f"{PROCEDURE_PREFIX}{procedure}:{model}"


def image_judge_source(method: str, model: str) -> str:
    """The source of an image verdict decided by an automatic image judge."""
    return f"{JUDGE_PREFIX}{method}:{model}"


def is_human_source(source: str) -> bool:
    """Whether a verdict source is a person (rater, grade sheet or adjudicator)."""
    return source.startswith(HUMAN_SOURCE_PREFIXES)


def is_rater_source(source: str) -> bool:
    """Whether a verdict source is one rater's own verdict (in the UI or on a sheet)."""
    return source.startswith((HUMAN_PREFIX, SHEET_PREFIX))


def source_rater(source: str) -> str | None:
    """The person behind a verdict source, or None for a program.

    ``human:alice``, ``adjudication:alice`` and ``sheet:<file>:alice`` (a sheet names its rater
    last) are ``alice``; the extractor and the judges have none.
    """
    kind, _, rest = source.partition(":")
    if kind == "sheet":
        return rest.rpartition(":")[2]
    return rest if kind in ("human", "adjudication") else None


def source_role(source: str) -> SourceRole:
    """What a verdict source does.

    A human ``rater`` (``human:*``, ``sheet:*``), an ``adjudication``, an automatic image
    ``judge``, an ``llm-judge`` of answers, a grading ``procedure``, the answer ``extractor``,
    or ``other``.
    """
    if source.startswith(ADJUDICATION_PREFIX):
        return "adjudication"
    if is_human_source(source):
        return "rater"
    if source.startswith(JUDGE_PREFIX):
        return "judge"
    if source.startswith(LLM_JUDGE_PREFIX):
        return "llm-judge"
    if source.startswith(PROCEDURE_PREFIX):
        return "procedure"
    if source == EXTRACTOR_SOURCE:
        return "extractor"
    return "other"
