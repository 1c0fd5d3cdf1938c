"""Stage 2 of grading: an LLM judge for the replies the extractor left undecided.

Two modes, each a jinja2 template users can replace:

- ``choice``: which option did the response choose? The judge replies ``A``, ``B`` or ``NONE``
  (the response chose neither, refused or could not decide: verdict ``no_answer``).
- ``yesno``: in the spirit of MMVP's GPT grader, the judge sees the correct answer and replies
  ``yes`` or ``no``. ``yes`` is recorded as the option it was shown; ``no`` as ``not_a`` or
  ``not_b``: the reply is not that option, which is all the judge said. It is never recorded as
  the other option, because the correct option depends on the label policy: under the other
  policy (MMVP's original labels differ at 99/100/279/280) a "no" would turn into a correct
  answer. The report computes correctness under its own policy (a ``not_x`` is wrong when x is
  the answer, and tells nothing otherwise). ``judged_correct`` in the verdict's detail keeps the
  judge's own word. Replies to questions without a known correct answer (images from implicit
  prompts) are judged in ``choice`` mode.

A procedure (``amvicc``: AMVICC's own GPT-4 grader, word for word) grades every reply in yes/no
mode with its own template, system prompt and temperature, under its own verdict source.

A judge reply that does not parse is stored as ``undecided`` — never as a wrong answer — and the
response goes on to the human audit queue. Model, prompt, temperature, seed and the raw reply
are kept in the verdict's detail.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amvicc.api import ApiSettings
from amvicc.catalogue import Option, Question
from amvicc.errors import UserError
from amvicc.grade.options import (
    JUDGE_MODES,
    JUDGE_TEMPLATES,
    PROCEDURE_TEMPERATURE,
    PROCEDURES,
    JudgeMode,
    JudgeSettings,
    LLMJudgeOptions,
)
from amvicc.provenance import config_key, derive_seed
from amvicc.store import AnswerVerdictValue, llm_judge_source, procedure_source
from amvicc.vlm import VLM, Reply, open_vlm
from amvicc.vlm.prompting import PromptTemplate, load_template, render_with_system


@dataclass(frozen=True)
class Judgement:
    """The judge's decision on one response.

    Attributes:
        value: the verdict (``a``, ``b``, ``no_answer``, or ``undecided`` when the reply did
            not parse); None when the request failed (nothing is stored, the next grading
            asks again).
        mode: the mode actually used.
        prompt: what the judge was asked.
        reply: the judge's reply, verbatim.
        judged_correct: in ``yesno`` mode, the judge's yes (True) or no (False).
    """

    value: AnswerVerdictValue | None
    mode: JudgeMode
    prompt: str
    reply: Reply
    judged_correct: bool | None = None

    def detail(self, judge: LLMJudge, seed: int) -> dict[str, Any]:
        """What the verdict records about how it was reached."""
        detail: dict[str, Any] = {
            "judge_key": judge.key,
            "model": judge.vlm.name,
            "mode": self.mode,
            "template": judge.templates[self.mode].name,
            "prompt": self.prompt,
            "temperature": judge.settings.temperature,
            "seed": seed,
            "max_tokens": judge.settings.max_tokens,
            "reply": self.reply.text,
            "raw": self.reply.raw.decode("utf-8", "replace") if self.reply.raw else None,
        }
        if self.judged_correct is not None:
            detail["judged_correct"] = self.judged_correct
        return detail


class LLMJudge:
    """Asks a text model which option a response chose.

    Args:
        vlm: the judge model (any :func:`~amvicc.vlm.providers.open_vlm` model; asked
            without an image).
        settings: mode, temperature, seed, reply length.
        templates: the template of each mode.
    """

    def __init__(
        self,
        vlm: VLM,
        settings: JudgeSettings,
        templates: dict[JudgeMode, PromptTemplate],
        *,
        procedure: str | None = None,
        all_replies: bool = False,
    ) -> None:
        self.vlm = vlm
        self.settings = settings
        self.templates = templates
        self.procedure = procedure
        # A procedure grades every reply: that is what makes its numbers its own.
        self.all_replies = all_replies or procedure is not None

    @property
    def source(self) -> str:
        """The verdict source: ``llm-judge:<model>``, or ``procedure:<name>:<model>``."""
        if self.procedure is not None:
            return procedure_source(self.procedure, self.vlm.name)
        return llm_judge_source(self.vlm.name)

    @property
    def key(self) -> str:
        """What makes two judgements comparable.

        A response already judged under the same key is not sent to the judge again.
        """
        return config_key(
            {
                "model": self.vlm.name,
                "mode": self.settings.mode,
                "templates": {m: t.sha256 for m, t in sorted(self.templates.items())},
                "temperature": self.settings.temperature,
                "seed": self.settings.seed,
                "max_tokens": self.settings.max_tokens,
                "procedure": self.procedure,
            }
        )

    def seed_for(self, response_id: str) -> int:
        """The seed for judging one response."""
        return derive_seed(self.settings.seed, "judge", response_id)

    def prompt(
        self, question: Question, response: str, correct: Option | None
    ) -> tuple[JudgeMode, str]:
        """The mode used for this response and the rendered prompt."""
        mode, _, text = self._render(question, response, correct)
        return mode, text

    def _render(
        self, question: Question, response: str, correct: Option | None
    ) -> tuple[JudgeMode, str | None, str]:
        mode: JudgeMode = self.settings.mode if correct is not None else "choice"
        system, text = render_with_system(
            self.templates[mode], question=question, response=response, correct=correct
        )
        return mode, system, text

    async def judge(
        self, question: Question, response: str, correct: Option | None, *, response_id: str
    ) -> Judgement:
        """Ask the judge about one response."""
        mode, system, prompt = self._render(question, response, correct)
        reply = await self.vlm.ask(
            None,
            prompt,
            temperature=self.settings.temperature,
            max_tokens=self.settings.max_tokens,
            seed=self.seed_for(response_id),
            system=system,
        )
        if not reply.ok or reply.text is None:
            return Judgement(None, mode, prompt, reply)
        if mode == "yesno" and correct is not None:
            verdict = parse_yes_no(reply.text)
            if verdict is None:
                return Judgement("undecided", mode, prompt, reply)
            value: AnswerVerdictValue = correct.label if verdict else f"not_{correct.label}"  # type: ignore[assignment]
            return Judgement(value, mode, prompt, reply, judged_correct=verdict)
        return Judgement(parse_choice(reply.text) or "undecided", mode, prompt, reply)


_YES_NO = re.compile(r"^[\W_]*(yes|no)\b", re.IGNORECASE)
_CHOICE = re.compile(r"^[\W_]*\(?\s*(a|b|none)\s*\)?[\W_]*$", re.IGNORECASE)


def parse_yes_no(reply: str) -> bool | None:
    """``yes`` -> True, ``no`` -> False, else None.

    The reply must open with one of the two words and never say the other.
    """
    line = _first_line(reply)
    match = _YES_NO.match(line)
    if match is None:
        return None
    word = match.group(1).lower()
    other = "no" if word == "yes" else "yes"
    if re.search(rf"\b{other}\b", reply, re.IGNORECASE):
        return None
    return word == "yes"


def parse_choice(reply: str) -> AnswerVerdictValue | None:
    """``A`` -> ``a``, ``B`` -> ``b``, ``NONE`` -> ``no_answer``; None for anything else.

    The first line must be the bare word (markdown, brackets and punctuation aside): a reply
    starting "A response that..." is not a choice.
    """
    match = _CHOICE.match(_first_line(reply))
    if match is None:
        return None
    word = match.group(1).lower()
    return "no_answer" if word == "none" else ("a" if word == "a" else "b")


def _first_line(reply: str) -> str:
    for line in reply.strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def open_judge(
    model: str,
    settings: JudgeSettings,
    *,
    api: ApiSettings,
    templates: dict[JudgeMode, str | Path | None] | None = None,
) -> LLMJudge:
    """Open a judge model with its templates (the shipped ones unless paths are given).

    Raises:
        UserError: the model or a template cannot be opened.
    """
    chosen = templates or {}
    loaded = {
        mode: load_template(chosen.get(mode), default=JUDGE_TEMPLATES[mode]) for mode in JUDGE_MODES
    }
    return LLMJudge(open_vlm(model, api=api), settings, loaded)


def open_procedure(options: LLMJudgeOptions) -> LLMJudge:
    """Open a published grading procedure (``amvicc``) run by ``options.model``.

    Its template and temperature are the procedure's own; the mode is yes/no.

    Raises:
        UserError: the procedure is unknown, or the model cannot be opened.
    """
    name = options.procedure or ""
    if name not in PROCEDURES:
        raise UserError(
            f"--judge-template {name!r} names no grading procedure; known: {', '.join(PROCEDURES)}"
            " (or give a .jinja file)"
        )
    template = load_template(None, default=PROCEDURES[name])
    settings = JudgeSettings(
        mode="yesno",
        temperature=PROCEDURE_TEMPERATURE[name],
        seed=options.settings.seed,
        max_tokens=options.settings.max_tokens,
    )
    return LLMJudge(
        open_vlm(options.model, api=options.api),
        settings,
        {"yesno": template, "choice": load_template(None, default=JUDGE_TEMPLATES["choice"])},
        procedure=name,
    )


def open_llm_judge(options: LLMJudgeOptions) -> LLMJudge:
    """Open the judge :class:`~amvicc.grade.options.LLMJudgeOptions` describe.

    Raises:
        UserError: the model or the template cannot be opened.
    """
    if options.procedure is not None:
        return open_procedure(options)
    templates: dict[JudgeMode, str | Path | None] | None = (
        {options.settings.mode: options.template} if options.template else None
    )
    judge = open_judge(options.model, options.settings, api=options.api, templates=templates)
    judge.all_replies = options.all_replies
    return judge
