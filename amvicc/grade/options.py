"""What a grading job is asked to do, and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from amvicc.api import ApiSettings

if TYPE_CHECKING:
    from amvicc.grade.grading import RunGrades

JudgeMode = Literal["yesno", "choice"]
JUDGE_MODES: tuple[JudgeMode, ...] = get_args(JudgeMode)
JUDGE_TEMPLATES: dict[JudgeMode, str] = {
    "yesno": "grade_judge_yesno.jinja",
    "choice": "grade_judge_choice.jinja",
}


@dataclass(frozen=True)
class JudgeSettings:
    """How the judge is asked (recorded with every verdict it gives).

    Attributes:
        mode: ``choice`` or ``yesno``.
        temperature: 0 for the most repeatable judgement.
        seed: base seed; each response's seed derives from it and the response id.
        max_tokens: the longest judge reply.
    """

    mode: JudgeMode = "choice"
    temperature: float = 0.0
    seed: int = 0
    max_tokens: int = 64


@dataclass(frozen=True)
class LLMJudgeOptions:
    """Which LLM judge grades the replies the extractor leaves undecided (stage 2).

    Attributes:
        model: any :func:`~amvicc.vlm.open_vlm` name, e.g. ``openai:gpt-4o-mini``.
        settings: mode, temperature, seed and reply length.
        api: how to reach the judge's server (its own URL and key variable).
        template: a jinja2 template for ``settings.mode`` (None: the shipped one).
    """

    model: str
    settings: JudgeSettings = field(default_factory=JudgeSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    template: Path | None = None


@dataclass(frozen=True)
class GradeOptions:
    """Everything ``amvicc grade`` takes besides the store.

    Attributes:
        run_ids: the runs to grade (None: every answer and challenge run in the store).
        catalogue: the catalogue the runs used, if it moved (None: the one each run recorded).
        judge: the LLM judge for extractor-undecided replies (None: they go to human audit).
        progress: show a progress bar while the judge works.
    """

    run_ids: tuple[str, ...] | None = None
    catalogue: Path | None = None
    judge: LLMJudgeOptions | None = None
    progress: bool = True


@dataclass(frozen=True)
class GradeSummary:
    """What grading found, run by run."""

    runs: tuple[RunGrades, ...]

    def lines(self) -> list[str]:
        """Each run's account, one fact a line."""
        return [line for run in self.runs for line in run.lines()]
