"""The rows of the workspace as typed, immutable records, and the ids and times they carry."""

from __future__ import annotations

import json
import re
import sqlite3
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, TypeVar

from amvicc.catalogue import LabelPolicy, PromptKind
from amvicc.provenance import config_key
from amvicc.store.schema import (
    ANSWER_VERDICTS,
    IMAGE_VERDICTS,
    ImageStatus,
    ResponseStatus,
    Stage,
)


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id() -> str:
    """A fresh opaque identifier for an image, response or file."""
    return uuid.uuid4().hex


def slug(text: str) -> str:
    """A file- and URL-safe form of a model name: ``openai:gpt-4o`` -> ``openai-gpt-4o``."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")[:48] or "model"


RecordT = TypeVar("RecordT")


def record_from_row(cls: type[RecordT], row: sqlite3.Row) -> RecordT:
    """A record (one of the dataclasses here) from a database row of its table or view.

    Columns the record does not have (e.g. a run's ``model`` joined in) are left out.
    """
    names = _FIELD_NAMES.get(cls)
    if names is None:  # looked up once per class, not once per row read
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))  # type: ignore[arg-type]
    return cls(**{k: row[k] for k in row.keys() if k in names})  # noqa: SIM118 (Row iterates values)


_FIELD_NAMES: dict[type[Any], frozenset[str]] = {}


@dataclass(frozen=True)
class RunSpec:
    """Everything that describes a run before it starts (HELM-style).

    Attributes:
        stage: which stage runs.
        model: the model as the user named it.
        outputs: the parameters that define the outputs; their hash is the run's
            ``config_key``, so rerunning the same command finds its earlier work.
        settings: other parameters worth recording (batch size, device, concurrency) that do
            not change the outputs. Never API keys: name the environment variable instead.
        label_policy: which MMVP labels the run uses.
        smoke: the model has random weights; its numbers mean nothing.
        name: the run's id; defaults to ``<stage>-<model>-<config_key[:8]>`` (with the
            condition before the hash when there is one: ``answer-gpt-4o-grain-0.1-1a2b3c4d``).
        condition: what was done to the run's inputs or conversation: a perturbation
            (``grain=0.1``) or a challenge arm (``assertion``); empty for a plain run. It is
            recorded for reading; what defines it belongs in ``outputs`` too.
        parent_run_id: the run this one was made from (a challenge's answer run).
    """

    stage: Stage
    model: str
    outputs: Mapping[str, Any]
    settings: Mapping[str, Any] = field(default_factory=dict)
    label_policy: LabelPolicy = "corrected"
    catalogue_sha256: str | None = None
    smoke: bool = False
    command: str | None = None
    name: str | None = None
    condition: str = ""
    parent_run_id: str | None = None

    @property
    def config_key(self) -> str:
        """The hash of ``stage``, ``model`` and ``outputs``."""
        return config_key({"stage": self.stage, "model": self.model, **self.outputs})

    @property
    def run_id(self) -> str:
        """The run's id: its name, or one derived from the stage, model and config."""
        if self.name:
            return self.name
        condition = f"{slug(self.condition)}-" if self.condition else ""
        return f"{self.stage}-{slug(self.model)}-{condition}{self.config_key[:8]}"


@dataclass(frozen=True)
class RunRecord:
    """A stored run.

    Attributes:
        condition: a perturbation (``grain=0.1``) or a challenge arm; empty for a plain run
            (and for every run of a workspace made before conditions existed).
        parent_run_id: the run this one was made from (a challenge's answer run).
        owner: the process that has the run running, or last ran it (``host:pid:start``);
            None for runs recorded before amvicc kept it.
    """

    run_id: str
    stage: str
    model: str
    smoke: int
    config_key: str
    config_json: str
    label_policy: str
    catalogue_sha256: str | None
    versions_json: str
    command: str | None
    status: str
    summary_json: str
    started_at: str
    ended_at: str | None
    condition: str = ""
    parent_run_id: str | None = None
    owner: str | None = None

    @property
    def config(self) -> dict[str, Any]:
        """The run's parameters (``outputs`` and ``settings`` merged)."""
        value: dict[str, Any] = json.loads(self.config_json)
        return value

    @property
    def summary(self) -> dict[str, Any]:
        """What the run reported when it ended (counts, time)."""
        value: dict[str, Any] = json.loads(self.summary_json)
        return value


@dataclass(frozen=True)
class ImageRecord:
    """One generated image (or a failed or refused attempt at one).

    Attributes:
        path: relative to the workspace; None when no file was made.
        status: ``ok``; ``failed`` (retried next run); ``refused`` (the model declined, with
            the reason in ``error``); ``external`` (graded elsewhere, e.g. an imported sheet).
    """

    image_id: str
    run_id: str
    config_key: str
    question_index: int
    prompt_kind: PromptKind
    sample: int
    prompt: str
    seed: int | None
    status: ImageStatus
    path: str | None = None
    error: str | None = None
    params_json: str = "{}"
    created_at: str = field(default_factory=utc_now)


@dataclass(frozen=True)
class ResponseRecord:
    """One raw VLM reply to one question about one image.

    Attributes:
        image_key: ``mmvp`` for the benchmark's own image, else the generated image's id.
        input_path: the copy of the image the model saw, relative to the workspace.
        text: the reply text, verbatim; None when the request failed.
        raw_path: the verbatim API body, relative to the workspace.
        parent_response_id: for a second turn (a challenge), the first-turn reply it follows.
    """

    response_id: str
    run_id: str
    config_key: str
    question_index: int
    image_key: str
    prompt: str
    status: ResponseStatus
    sample: int = 0
    image_id: str | None = None
    input_path: str | None = None
    text: str | None = None
    raw_path: str | None = None
    error: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    request_json: str = "{}"
    created_at: str = field(default_factory=utc_now)
    parent_response_id: str | None = None


@dataclass(frozen=True)
class VerdictRecord:
    """One judgement of an image or of a response, by a person or a program.

    Exactly one of ``image_id`` and ``response_id`` is set. Image values: ``correct``,
    ``incorrect``, ``cant_tell``, ``undecided``; response values: the option chosen (``a``,
    ``b``), ``undecided`` or ``no_answer``, a yes/no judge's ``not_a`` / ``not_b``, and for a
    ladder rung's reply ``correct`` or ``incorrect``.
    """

    source: str
    value: str
    image_id: str | None = None
    response_id: str | None = None
    run_id: str | None = None
    rubric_version: str | None = None
    comment: str | None = None
    detail_json: str = "{}"
    created_at: str = field(default_factory=utc_now)
    verdict_id: int | None = None


@dataclass(frozen=True)
class VerdictRow:
    """The columns of a verdict row that say who judged what, without its details.

    What the scoring app's queues follow (:meth:`amvicc.store.Store.verdict_rows_for_rating`): light
    enough to read every verdict of a large workspace when the app starts.
    """

    verdict_id: int
    image_id: str | None
    response_id: str | None
    source: str
    value: str
    comment: str | None


def check_verdict(verdict: VerdictRecord) -> None:
    """Refuse a verdict value its subject cannot take (the schema's CHECK, with a clear message).

    Raises:
        ValueError: an image verdict with an answer value, or the reverse.
    """
    allowed = IMAGE_VERDICTS if verdict.image_id is not None else ANSWER_VERDICTS
    if verdict.value not in allowed:
        raise ValueError(f"verdict value {verdict.value!r} is not one of {', '.join(allowed)}")


@dataclass(frozen=True)
class AuditSampleRecord:
    """One automatic decision drawn for the human audit (GRIP's stage 3).

    Attributes:
        response_id: the response whose decision is audited.
        run_id: its answer run.
        stratum: the stage that decided it: ``extractor`` or ``llm-judge``.
        value: the decision when it was drawn.
        seed: the seed of the draw.
    """

    response_id: str
    run_id: str
    stratum: str
    value: str
    seed: int
    created_at: str = field(default_factory=utc_now)
