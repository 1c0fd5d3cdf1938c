"""Grader self-preference: does an LLM judge accept its own provider's answers more readily?

When LLM judges of several providers grade the answers of models of several providers (as
Blind-Spots-Bench checks), a judge may favour its own family. Per judge (``llm-judge:<model>``
and grading procedures ``procedure:<name>:<model>``), over the answers it decided:

- its **acceptance rate** (the share it graded correct) on its own provider's models and on
  the other providers' models, each with a Wilson interval, and the difference (own −
  others) with Newcombe's interval for two independent proportions;
- its **agreement with the human audit** on the audited answers, split the same way, and how
  often it accepted an answer the auditors rejected.

A higher acceptance of its own provider's answers alone is not proof of bias — that model may
simply answer better — which is why the audit split stands beside it: a judge that agrees less
with people on its own provider's answers, or accepts more of them that people reject, is
favouring them. A model's provider is read from its name (:func:`provider`); models whose
provider cannot be told are left out of both sides.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.items import Items
from amvicc.store import LLM_JUDGE_PREFIX, PROCEDURE_PREFIX

OWN = "own provider"
OTHERS = "other providers"
SELF_PREFERENCE_COLUMNS = [
    "judge",
    "provider",
    "scope",
    "models",
    "judged",
    "accepted",
    "acceptance",
    "acceptance_low",
    "acceptance_high",
    "difference",
    "difference_low",
    "difference_high",
    "audited",
    "agreed",
    "agreement",
    "agreement_low",
    "agreement_high",
    "false_accepts",
]
# Routes a model name may start with (``openai:gpt-4o``); what follows names the model.
_ROUTES = ("openai", "openrouter", "hf", "stability", "anthropic", "google", "gemini")
# An organisation's name on the Hugging Face Hub or OpenRouter, as the provider it is.
_ORGANISATIONS = {
    "x-ai": "xai",
    "meta-llama": "meta",
    "mistralai": "mistral",
    "llava-hf": "llava",
    "deepseek-ai": "deepseek",
    "huggingfacetb": "huggingface",
    "huggingfacem4": "huggingface",
    "opengvlab": "opengvlab",
}
# Model families whose name says who made them.
_FAMILIES = (
    (r"(gpt|chatgpt|dall-e|o[134]\b|o[134]-)", "openai"),
    (r"claude", "anthropic"),
    (r"(gemini|gemma|palm)", "google"),
    (r"grok", "xai"),
    (r"llama", "meta"),
    (r"qwen", "qwen"),
    (r"(mistral|mixtral|pixtral)", "mistral"),
    (r"deepseek", "deepseek"),
    (r"phi-", "microsoft"),
    (r"internvl", "opengvlab"),
    (r"llava", "llava"),
)


def provider(model: str) -> str | None:
    """Who makes a model, from its name: ``openrouter:anthropic/claude-3.5`` → ``anthropic``.

    The organisation before a ``/`` (OpenRouter's and the Hugging Face Hub's names), else a
    known family (``gpt-4o`` → ``openai``, ``claude-…`` → ``anthropic``), else the route for
    ``openai:<name>``; None when nothing says.
    """
    route, separator, rest = model.partition(":")
    name = rest if separator and route.lower() in _ROUTES else model
    if "/" in name:
        organisation = name.split("/", 1)[0].strip().lower()
        if organisation:
            return _ORGANISATIONS.get(organisation, organisation)
    lowered = name.lower()
    for pattern, maker in _FAMILIES:
        if re.match(pattern, lowered):
            return maker
    if separator and route.lower() == "openai":
        return "openai"
    return None


def judge_model(source: str) -> str | None:
    """The model behind an LLM grader's verdict source (None for other sources)."""
    if source.startswith(LLM_JUDGE_PREFIX):
        return source[len(LLM_JUDGE_PREFIX) :]
    if source.startswith(PROCEDURE_PREFIX):
        parts = source.split(":", 2)
        return parts[2] if len(parts) == 3 else None
    return None


def self_preference_table(
    items: Items, graders: pd.DataFrame, human: str, confidence: float = 0.95
) -> pd.DataFrame:
    """Each LLM grader's acceptance and audit agreement, own provider's models against others'.

    Args:
        items: the report's items (for each answering model's name).
        graders: :func:`amvicc.report.grading.grader_correctness`: one row per graded answer,
            a column per grader holding 1 (it graded the answer correct), 0 or NaN.
        human: the column of the human audit's verdict.
        confidence: the intervals' coverage.

    Returns:
        :data:`SELF_PREFERENCE_COLUMNS`: two rows per judge with models of its own provider
        and of others (``scope`` :data:`OWN` and :data:`OTHERS`); the difference of the
        acceptance rates (own − others) and its interval on both.
    """
    models = {e.label: e.model for e in items.entries if e.modality == "vlm"}
    judges = {
        str(column): maker
        for column in graders.columns
        if (model := judge_model(str(column))) and (maker := provider(model))
    }
    if graders.empty or human not in graders.columns or not judges:
        return pd.DataFrame(columns=SELF_PREFERENCE_COLUMNS)
    labels = {str(label) for label in graders["label"].unique()}
    makers = (
        graders["label"]
        .astype(str)
        .map({label: provider(models.get(label, label)) for label in labels})
    )
    rows: list[dict[str, Any]] = []
    for column, maker in judges.items():
        judged = graders[column].notna() & makers.notna()
        own = judged & (makers == maker)
        others = judged & (makers != maker)
        if not own.any() or not others.any():
            continue
        rows += _judge_rows(str(column), maker, graders, human, own, others, confidence)
    return pd.DataFrame(rows, columns=SELF_PREFERENCE_COLUMNS)


def _judge_rows(
    column: str,
    maker: str,
    graders: pd.DataFrame,
    human: str,
    own: pd.Series,
    others: pd.Series,
    confidence: float,
) -> list[dict[str, Any]]:
    from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

    def interval(count: int, total: int) -> tuple[float, float]:
        if not total:
            return np.nan, np.nan
        low, high = proportion_confint(count, total, alpha=1 - confidence, method="wilson")
        return float(low), float(high)

    sides: list[dict[str, Any]] = []
    for scope, rows in ((OWN, own), (OTHERS, others)):
        said = graders.loc[rows, column].astype(int)
        audit = graders.loc[rows, human]
        audited = audit.notna()
        agreed = int((said[audited] == audit[audited].astype(int)).sum())
        sides.append(
            {
                "judge": column,
                "provider": maker,
                "scope": scope,
                "models": sorted({str(label) for label in graders.loc[rows, "label"]}),
                "judged": int(rows.sum()),
                "accepted": int(said.sum()),
                "audited": int(audited.sum()),
                "agreed": agreed,
                "false_accepts": int(((said == 1) & audited & (audit == 0)).sum()),
            }
        )
    for side in sides:
        side["acceptance"] = side["accepted"] / side["judged"]
        side["acceptance_low"], side["acceptance_high"] = interval(side["accepted"], side["judged"])
        side["agreement"] = side["agreed"] / side["audited"] if side["audited"] else np.nan
        side["agreement_low"], side["agreement_high"] = interval(side["agreed"], side["audited"])
    mine, theirs = sides
    low, high = confint_proportions_2indep(
        mine["accepted"],
        mine["judged"],
        theirs["accepted"],
        theirs["judged"],
        method="newcomb",
        compare="diff",
        alpha=1 - confidence,
    )
    for side in sides:
        side["difference"] = mine["acceptance"] - theirs["acceptance"]
        side["difference_low"], side["difference_high"] = float(low), float(high)
    return sides
