"""What a grading job is asked to do, and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

from amvicc.api import ApiSettings
from amvicc.errors import UserError

if TYPE_CHECKING:
    from amvicc.grade.grading import RunGrades

JudgeMode = Literal["yesno", "choice"]
JUDGE_MODES: tuple[JudgeMode, ...] = get_args(JudgeMode)
JUDGE_TEMPLATES: dict[JudgeMode, str] = {
    "yesno": "grade_judge_yesno.jinja",
    "choice": "grade_judge_choice.jinja",
}
#: Published grading procedures an LLM can run over every reply: name -> shipped template.
#: ``amvicc``: AMVICC's GPT-4 grader (yes/no, temperature 0.2, its system and user prompt).
PROCEDURES: dict[str, str] = {"amvicc": "grade_judge_amvicc.jinja"}
PROCEDURE_TEMPERATURE = {"amvicc": 0.2}


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
        procedure: a published procedure (``amvicc``) instead of the three-stage judge: it
            grades every reply with its own template and settings, stored under its own
            source (``procedure:<name>:<model>``) so that it never decides the three-stage
            grading's verdicts.
        all_replies: judge every reply, not only those the extractor left undecided.
    """

    model: str
    settings: JudgeSettings = field(default_factory=JudgeSettings)
    api: ApiSettings = field(default_factory=ApiSettings)
    template: Path | None = None
    procedure: str | None = None
    all_replies: bool = False


@dataclass(frozen=True)
class GradeOptions:
    """Everything ``amvicc grade`` takes besides the store.

    Attributes:
        run_ids: the runs to grade (None: every answer and challenge run in the store).
        catalogue: the catalogue the runs used, if it moved (None: the one each run recorded).
        judge: the LLM judge for extractor-undecided replies (None: they go to human audit).
        audit: how to draw the human audit sample of automatic decisions (None: none drawn).
        progress: show a progress bar while the judge works.
    """

    run_ids: tuple[str, ...] | None = None
    catalogue: Path | None = None
    judge: LLMJudgeOptions | None = None
    audit: AuditSampleOptions | None = field(default_factory=lambda: AuditSampleOptions())
    progress: bool = True


@dataclass(frozen=True)
class AuditSampleOptions:
    """GRIP's stage 3: people audit a sample of the automatic decisions, not only leftovers.

    Per answer run and stage (extractor-decided, LLM-judge-decided), a seeded random sample
    of ``fraction`` of the decisions, at least ``minimum`` (or all, when fewer), goes to the
    scoring app's audit queue; the report gives each stage's audited error rate.

    Attributes:
        fraction: the share of each stratum drawn (0 to 1).
        minimum: the fewest drawn per stratum.
        seed: the draw's seed: the same seed draws the same responses.
    """

    fraction: float = 0.1
    minimum: int = 20
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.fraction <= 1:
            raise UserError(f"--audit-fraction {self.fraction} is not between 0 and 1")
        if self.minimum < 0:
            raise UserError(f"--audit-minimum {self.minimum} is negative")


@dataclass(frozen=True)
class GradeSummary:
    """What grading found, run by run."""

    runs: tuple[RunGrades, ...]

    def lines(self) -> list[str]:
        """Each run's account, one fact a line."""
        return [line for run in self.runs for line in run.lines()]
