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

Each entry knows the catalogue its runs used (their ``catalogue_sha256`` and the file they
recorded): a report scores only the entries on its own catalogue in its main tables, and the
others apart, each against its own file (:mod:`amvicc.report.catalogues`), so that a scene
set's index 5 is never scored against MMVP's question 5. A model's label is unique among the
entries of one catalogue; the same model on two catalogues keeps its plain name on both.
"""

from __future__ import annotations

import fnmatch
import json
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import PurePath
from typing import Any, Literal

import numpy as np
import pandas as pd

from amvicc.catalogue import Catalogue, LabelPolicy, catalogue_file, load_catalogue
from amvicc.errors import UserError
from amvicc.report.values import missing
from amvicc.store import ImageSlots, Store

Modality = Literal["igm", "vlm"]

IGM_STAGES = ("generate", "import")
VLM_STAGES = ("answer",)


#: A prompt variant's rows carry ``condition = "variant=<name>"``.
VARIANT_CONDITION = "variant="

#: The short name of the shipped catalogue in report rows (its ``catalogue`` column).
SHIPPED_CATALOGUE = "MMVP"
#: :attr:`ModelEntry.catalogue_key` of an entry on the shipped catalogue (any version of it).
SHIPPED_KEY = "shipped"
# A file of this name (what `amvicc scenes build` writes) is named by its folder instead.
_GENERIC_STEMS = frozenset({"catalogue"})


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
        catalogue_sha256: the SHA-256 of the catalogue file its runs used (None: not recorded,
            as in a workspace from before amvicc recorded it).
        catalogue_file: the catalogue file its runs recorded (absolute); None for the shipped
            catalogue, or when they recorded none (``catalogue_recorded`` is then False).
        catalogue_recorded: its runs recorded which file they used (answer runs always did;
            generate and import runs since amvicc recorded it for them).
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
    catalogue_sha256: str | None = None
    catalogue_file: str | None = None
    catalogue_recorded: bool = True

    @property
    def on_shipped_catalogue(self) -> bool:
        """Its runs recorded the shipped catalogue (an older version of it is still MMVP)."""
        return self.catalogue_recorded and self.catalogue_file is None

    @property
    def catalogue_key(self) -> str:
        """Which catalogue it is on: :data:`SHIPPED_KEY`, else its file's SHA-256 ("": unknown)."""
        return SHIPPED_KEY if self.on_shipped_catalogue else self.catalogue_sha256 or ""

    @property
    def row_condition(self) -> str:
        """The report rows' ``condition``: the perturbation, ``variant=<name>``, or ""."""
        if self.condition:
            return self.condition
        return f"{VARIANT_CONDITION}{self.variant}" if self.variant else ""


class OnCatalogue:
    """Which entries are on a report's catalogue, so that their items are its questions.

    An entry is when its runs used the same file (its SHA-256); or recorded no hash (an older
    workspace: nothing says otherwise); or recorded the shipped catalogue and the report is on
    it, whatever its version (an older shipped catalogue is still MMVP); or used a file that is
    still there, unchanged, asking the same questions as the report's in the same order —
    only its prompts differ: a prompt variant (AMVICC's wording ablation), compared item by
    item with the baseline in the main tables. Each file is read once.
    """

    def __init__(self, catalogue: Catalogue) -> None:
        """Decide for ``catalogue``, the whole file (before any selection)."""
        self.catalogue = catalogue
        self._shipped = catalogue_file(catalogue) is None
        self._questions = _question_key(catalogue)
        self._same: dict[tuple[str | None, str], bool] = {}

    def __call__(self, entry: ModelEntry) -> bool:
        """Whether ``entry``'s items are questions of the report's catalogue."""
        sha = entry.catalogue_sha256
        if sha is None or sha == self.catalogue.sha256:
            return True
        if entry.on_shipped_catalogue and self._shipped:
            return True
        if not entry.catalogue_recorded:
            return False
        key = (entry.catalogue_file, sha)
        if key not in self._same:
            self._same[key] = self._same_questions(entry.catalogue_file, sha)
        return self._same[key]

    def _same_questions(self, file: str | None, sha: str) -> bool:
        try:
            other = load_catalogue(file, labels=self.catalogue.label_policy)
        except UserError:
            return False  # gone or broken: scored apart, where the reason is shown
        # A changed file no longer says what the runs were asked (the shipped one still does).
        if file is not None and other.sha256 != sha:
            return False
        return _question_key(other) == self._questions


def _question_key(catalogue: Catalogue) -> tuple[tuple[object, ...], ...]:
    """What a catalogue asks, without its prompts: each question, its options and label."""
    return tuple(
        (
            q.index,
            q.pair,
            q.category.code,
            q.text,
            tuple((o.label, o.text) for o in q.options),
            q.mmvp_answer,
        )
        for q in catalogue.questions
    )


# --- reading entries ----------------------------------------------------------------------------------


def load_entries(
    store: Store,
    patterns: Iterable[str] | None = None,
    *,
    labels: LabelPolicy | None = None,
    on: OnCatalogue | None = None,
) -> list[ModelEntry]:
    """The models in the workspace (image models first), optionally only those matching.

    A workspace without generate, import or answer runs has none.

    Args:
        store: the workspace.
        patterns: model names or glob patterns (``openai:*``); each must match a model.
        labels: score every VLM under this label policy instead of its run's.
        on: which entries are on the report's catalogue: labels are made unique among them,
            and among those of each other catalogue (None: per catalogue the runs recorded).
    """
    runs = store.runs_frame(stages=(*IGM_STAGES, *VLM_STAGES))
    if runs.empty:
        return []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in runs.to_dict(orient="records"):
        run = {str(k): v for k, v in record.items()}
        modality = "vlm" if run["stage"] in VLM_STAGES else "igm"
        groups.setdefault((modality, str(run["config_key"])), []).append(run)
    entries: list[ModelEntry] = []
    for (modality, key), group in groups.items():
        last = group[-1]
        config = _config(last["config_json"])
        model = str(last["model"])
        condition = "" if missing(last["condition"]) else str(last["condition"])
        variant = str(config.get("variant") or "")
        clean_key = config.get("clean_config_key")
        policy: LabelPolicy = labels or (
            "original" if last["label_policy"] == "original" else "corrected"
        )
        # Answer runs always recorded their catalogue file (None: the shipped one).
        recorded = last["stage"] in VLM_STAGES or "catalogue" in config
        sha = last["catalogue_sha256"]
        entries.append(
            ModelEntry(
                key=key,
                label=f"{model} · {variant}" if variant else model,
                model=model,
                modality="vlm" if modality == "vlm" else "igm",
                smoke=any(bool(run["smoke"]) for run in group),
                samples=1,
                label_policy=policy,
                run_ids=tuple(str(run["run_id"]) for run in group),
                imported=all(run["stage"] == "import" for run in group),
                condition=condition,
                clean_key=str(clean_key) if condition and clean_key else None,
                variant=variant,
                catalogue_sha256=str(sha) if isinstance(sha, str) and sha else None,
                catalogue_file=str(config["catalogue"]) if config.get("catalogue") else None,
                catalogue_recorded=recorded,
            )
        )
    entries = _unique_labels(entries, on)
    entries.sort(key=lambda e: (e.modality != "igm", e.label.casefold(), condition_order(e)))
    if patterns:
        entries = _select(entries, list(patterns))
    return entries


def _unique_labels(entries: list[ModelEntry], on: OnCatalogue | None) -> list[ModelEntry]:
    """Add the first run's id to the label of a model with several configurations.

    Only configurations on the same catalogue count: the same model answering MMVP and a
    scene set is one model, named alike in both (the ``catalogue`` column tells them apart).
    """

    def group(e: ModelEntry) -> tuple[str, str, str, str, str]:
        where = "" if on is not None and on(e) else e.catalogue_key
        return (e.modality, e.model, e.condition, e.variant, where)

    configs = Counter(group(e) for e in entries)
    return [
        replace(e, label=f"{e.label} [{e.run_ids[0]}]") if configs[group(e)] > 1 else e
        for e in entries
    ]


def catalogue_key(catalogue: Catalogue) -> str:
    """The :attr:`ModelEntry.catalogue_key` of entries made on ``catalogue``."""
    return SHIPPED_KEY if catalogue_file(catalogue) is None else catalogue.sha256


def catalogue_names(catalogue: Catalogue, elsewhere: Iterable[ModelEntry]) -> dict[str, str]:
    """Short names for report rows: the report's catalogue's and those ``elsewhere`` are on.

    ``MMVP`` for the shipped catalogue; else the file's stem, or its folder's name for a
    generic ``catalogue.csv`` (a scene set's); a catalogue whose file was not recorded is its
    hash's first 8 hex digits. Two catalogues of one name both get those digits added.

    Returns:
        The name of each catalogue key (:func:`catalogue_key` for the report's catalogue).
    """
    own = catalogue_key(catalogue)
    known: dict[str, tuple[str | None, str]] = {own: (catalogue_file(catalogue), catalogue.sha256)}
    for e in elsewhere:
        known.setdefault(e.catalogue_key, (e.catalogue_file, e.catalogue_sha256 or ""))
    base = {key: _base_name(key, file, sha) for key, (file, sha) in known.items()}
    used = Counter(base.values())
    return {
        key: f"{name} {known[key][1][:8]}" if used[name] > 1 else name for key, name in base.items()
    }


def recorded_catalogue_name(file: str | None, sha: str) -> str:
    """The short name of the catalogue a run recorded (its file, or None: the shipped one).

    The rule of :func:`catalogue_names`, for one catalogue (no clash to resolve).
    """
    return _base_name(SHIPPED_KEY if file is None else sha, file, sha)


def _base_name(key: str, file: str | None, sha: str) -> str:
    if key == SHIPPED_KEY:
        return SHIPPED_CATALOGUE
    if file is None:
        return sha[:8]
    path = PurePath(file)
    if path.stem.casefold() in _GENERIC_STEMS and path.parent.name:
        return path.parent.name
    return path.stem


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


def _config(config_json: object) -> dict[str, Any]:
    """A run's configuration (empty when it does not parse as an object)."""
    try:
        config = json.loads(str(config_json))
    except ValueError:
        return {}
    return config if isinstance(config, dict) else {}


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
    entries: list[ModelEntry], images: ImageSlots, responses: pd.DataFrame
) -> list[ModelEntry]:
    """The entries with their samples per slot (k): one more than the highest stored sample.

    The images' highest sample per configuration is taken on their codes; the responses'
    grouped on integer codes of their keys (a frame's keys repeat one configuration key per
    row, and hashing each row's copy was most of the cost).
    """
    highest: dict[str, int] = {}
    tops = np.full(len(images.config_keys), -1, dtype=np.int64)
    np.maximum.at(tops, images.config_codes, images.samples)
    for key, top in zip(images.config_keys, tops.tolist(), strict=True):
        if top >= 0:
            highest[key] = max(highest.get(key, 0), top)
    codes, keys = pd.factorize(responses["config_key"].to_numpy())
    answered = pd.Series(responses["sample"].to_numpy()).groupby(codes).max()
    for code, top in zip(answered.index.to_numpy(), answered.to_numpy(), strict=True):
        key = str(keys[code])
        highest[key] = max(highest.get(key, 0), int(top))
    return [replace(e, samples=highest.get(e.key, 0) + 1) for e in entries]


def entry_keys(entries: list[ModelEntry], modality: Modality) -> list[str]:
    """The configuration keys of the entries of one modality."""
    return [e.key for e in entries if e.modality == modality]
