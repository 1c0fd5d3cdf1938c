"""Report entries: the models a report shows, one per stored configuration of a model.

A model run twice with the same options is one entry (its runs share a ``config_key``, so
their items fill the same slots); the same model with other options is another entry, labelled
with its first run's id. Image models come from ``generate`` and ``import`` runs, VLMs from
``answer`` runs. An answer run under a condition (a perturbation such as ``grain=0.1``) is an
entry of its own that carries the condition and its clean counterpart's key; it keeps the
model's name as its label (the condition tells it apart), and only plain entries (empty
condition) fill the main tables. Challenge runs are not entries: they are read by
:mod:`amvicc.report.interaction` beside the answer run they continue. A model's images made
from a prompt variant (AMVICC's wording ablation; the run's ``variant``) are an entry of their
own too, labelled ``model · variant``, with ``variant=<name>`` as their rows' condition.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from amvicc.catalogue import LabelPolicy
from amvicc.errors import UserError
from amvicc.store import Store

Modality = Literal["igm", "vlm"]

IGM_STAGES = ("generate", "import")
VLM_STAGES = ("answer",)


#: A prompt variant's rows carry ``condition = "variant=<name>"``.
VARIANT_CONDITION = "variant="


@dataclass(frozen=True)
class ModelEntry:
    """A model as the report shows it: one stored configuration of one model.

    Attributes:
        key: the configuration's ``config_key`` (images and responses are slotted by it).
        label: the name shown: the model's name, with its run id when the model has several
            configurations of the same modality.
        model: the model as the user named it.
        modality: ``igm`` (image model) or ``vlm``.
        smoke: a random-weight smoke-test model; its numbers mean nothing.
        samples: samples per slot (k), from the stored items.
        label_policy: the labels its answers are scored under (VLMs).
        run_ids: the runs that made its items, oldest first.
        imported: its images were graded elsewhere (a grade sheet), not generated here.
        condition: what was done to its inputs (``grain=0.1``); empty for a plain entry.
        clean_key: for a perturbed entry, the configuration key of the same model and options
            without the perturbation (its clean counterpart).
        variant: the prompt variant its images were made from ("": the catalogue's prompts).
    """

    key: str
    label: str
    model: str
    modality: Modality
    smoke: bool
    samples: int
    label_policy: LabelPolicy
    run_ids: tuple[str, ...]
    imported: bool = False
    condition: str = ""
    clean_key: str | None = None
    variant: str = ""

    @property
    def row_condition(self) -> str:
        """The report rows' ``condition``: the perturbation, ``variant=<name>``, or ""."""
        if self.condition:
            return self.condition
        return f"{VARIANT_CONDITION}{self.variant}" if self.variant else ""


# --- reading entries ----------------------------------------------------------------------------------


def load_entries(
    store: Store, patterns: Iterable[str] | None = None, *, labels: LabelPolicy | None = None
) -> list[ModelEntry]:
    """The models in the workspace (image models first), optionally only those matching.

    Args:
        store: the workspace.
        patterns: model names or glob patterns (``openai:*``); each must match a model.
        labels: score every VLM under this label policy instead of its run's.
    """
    runs = store.runs_frame(stages=(*IGM_STAGES, *VLM_STAGES))
    if runs.empty:
        raise UserError(
            f"nothing to report in {store.root}: it has no generate, import or answer runs; "
            "run `amvicc generate`, `amvicc answer` or `amvicc import-grades` first"
        )
    runs["modality"] = np.where(runs["stage"].isin(VLM_STAGES), "vlm", "igm")
    runs["condition"] = runs["condition"].fillna("").astype(str)
    runs["variant"] = runs["config_json"].map(_variant)
    entries: list[ModelEntry] = []
    configs_per_model = (
        runs.groupby(["modality", "model", "condition", "variant"])["config_key"]
        .nunique()
        .to_dict()
    )
    for (modality, key), group in runs.groupby(["modality", "config_key"], sort=False):
        model = str(group["model"].iloc[-1])
        condition = str(group["condition"].iloc[-1])
        variant = str(group["variant"].iloc[-1])
        run_ids = tuple(str(r) for r in group["run_id"])
        label = f"{model} · {variant}" if variant else model
        if configs_per_model[(modality, model, condition, variant)] > 1:
            label = f"{label} [{run_ids[0]}]"
        clean_key = json.loads(str(group["config_json"].iloc[-1])).get("clean_config_key")
        policy: LabelPolicy = labels or (
            "original" if group["label_policy"].iloc[-1] == "original" else "corrected"
        )
        entries.append(
            ModelEntry(
                key=str(key),
                label=label,
                model=model,
                modality="vlm" if modality == "vlm" else "igm",
                smoke=bool(group["smoke"].astype(bool).any()),
                samples=1,
                label_policy=policy,
                run_ids=run_ids,
                imported=bool((group["stage"] == "import").all()),
                condition=condition,
                clean_key=str(clean_key) if condition and clean_key else None,
                variant=variant,
            )
        )
    entries.sort(key=lambda e: (e.modality != "igm", e.label.casefold(), condition_order(e)))
    if patterns:
        entries = _select(entries, list(patterns))
    return entries


def parse_condition(condition: str) -> tuple[str, float]:
    """A condition's kind and level: ``grain=0.1`` -> (``grain``, 0.1); plain -> ("", 0)."""
    kind, _, level = condition.partition("=")
    try:
        return kind, float(level)
    except ValueError:
        return kind, math.nan


def condition_order(entry: ModelEntry) -> tuple[bool, str, float]:
    """Plain entries first, then by perturbation kind and level."""
    kind, level = parse_condition(entry.condition)
    return (bool(entry.condition), kind, level)


def _variant(config_json: object) -> str:
    """The prompt variant a run's configuration names ("" for the catalogue's prompts)."""
    try:
        config = json.loads(str(config_json))
    except ValueError:
        return ""
    value = config.get("variant") if isinstance(config, dict) else None
    return str(value) if value else ""


def _select(entries: list[ModelEntry], patterns: list[str]) -> list[ModelEntry]:
    chosen: list[ModelEntry] = []
    for pattern in patterns:
        matched = [
            e
            for e in entries
            if fnmatch.fnmatchcase(e.model, pattern) or fnmatch.fnmatchcase(e.label, pattern)
        ]
        if not matched:
            known = ", ".join(sorted({e.model for e in entries}))
            raise UserError(f"no model matches {pattern!r}; models in the workspace: {known}")
        chosen.extend(e for e in matched if e not in chosen)
    return [e for e in entries if e in chosen]


def with_samples(
    entries: list[ModelEntry], images: pd.DataFrame, responses: pd.DataFrame
) -> list[ModelEntry]:
    """The entries with their samples per slot (k): one more than the highest stored sample."""
    counts = (
        pd.concat([images[["config_key", "sample"]], responses[["config_key", "sample"]]])
        .groupby("config_key")["sample"]
        .max()
    )
    return [replace(e, samples=int(counts.get(e.key, 0)) + 1) for e in entries]


def entry_keys(entries: list[ModelEntry], modality: Modality) -> list[str]:
    """The configuration keys of the entries of one modality."""
    return [e.key for e in entries if e.modality == modality]
