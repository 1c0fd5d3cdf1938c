"""The methods section: what was run, with which parameters, seeds and judges.

Everything comes from the run records, so a report says how its numbers were made. Run
parameters never hold API keys (only the names of the environment variables that do), and the
store redacts credentials in commands and configurations; both are redacted again here all the
same, so a key stored by an older amvicc (in a URL, an option) never reaches a report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from amvicc.provenance import canonical_json
from amvicc.redaction import REDACTED, redact_command, redact_config
from amvicc.report.items import Items
from amvicc.report.subjects import count_strings
from amvicc.store import SHEET_PREFIX, SeedRange, Store, source_role

# Values that are keys whatever their name (a key stored by mistake under another name).
_SECRET_VALUE = re.compile(r"^(sk-|sk_|hf_|Bearer\s)[A-Za-z0-9_\-]{8,}")


@dataclass(frozen=True)
class RunInfo:
    """One run behind the report."""

    run_id: str
    stage: str
    model: str
    label: str
    status: str
    smoke: bool
    label_policy: str
    started_at: str
    ended_at: str | None
    command: str | None
    config: str
    seeds: str
    catalogue_note: str | None
    condition: str = ""


@dataclass(frozen=True)
class SourceInfo:
    """One source of verdicts on the report's items."""

    source: str
    kind: str
    subjects: int
    rubric_versions: str


@dataclass(frozen=True)
class Methods:
    """How the report's numbers were made."""

    runs: tuple[RunInfo, ...]
    sources: tuple[SourceInfo, ...]
    counts: tuple[tuple[str, int], ...]
    catalogue_source: str
    catalogue_sha256: str
    label_policies: str
    versions: str


def scrub(value: Any) -> Any:
    """A copy of a configuration without anything that looks like a secret.

    Credentials by name and in URLs (:func:`amvicc.redaction.redact_config`), and values that
    look like keys whatever their name.
    """
    return _scrub_values(redact_config(value))


def _scrub_values(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _scrub_values(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub_values(item) for item in value]
    if isinstance(value, str) and _SECRET_VALUE.match(value):
        return REDACTED
    return value


ROLE_WORDS = {
    "adjudication": "adjudication",
    "rater": "human rater",
    "judge": "automatic image judge",
    "llm-judge": "LLM answer judge",
    "procedure": "grading procedure (LLM, every reply)",
    "extractor": "answer extractor",
    "other": "other",
}


def source_kind(source: str) -> str:
    """What kind of judge a verdict source is, in words."""
    if source.startswith(SHEET_PREFIX):
        return "grade sheet (human)"
    return ROLE_WORDS[source_role(source)]


def _seed_text(config: Any, seeds: SeedRange | None) -> str:
    """How a run's seeds read in the methods table (``seeds``: its image seed range, if any)."""
    text = "none recorded"
    if seeds is not None:
        text = (
            f"{seeds.count} per-image seed(s), {seeds.low}…{seeds.high}"
            if seeds.count > 1
            else f"{seeds.low}"
        )
    if isinstance(config, Mapping) and "seed" in config:
        text = f"base seed {config['seed']}; {text}"
    if isinstance(config, Mapping) and str(config.get("seeds", "")).startswith("not controllable"):
        # An API without a seed parameter (OpenAI images, chat-completion images).
        text = str(config["seeds"])
    return text


def _counts(items: Items, verdicts: int) -> tuple[tuple[str, int], ...]:
    """The report's counts: models, questions, items by outcome, images and answers by status."""
    f = items.frame
    counts: list[tuple[str, int]] = [
        ("models", len(items.entries)),
        ("questions", len(items.catalogue)),
        ("items", len(f)),
    ]
    counts += [(f"items {o}", int(n)) for o, n in f["outcome"].value_counts().sort_index().items()]
    counts += [
        (f"images {s or 'not generated'}", int(n))
        for s, n in f.loc[f["modality"] == "igm", "status"].value_counts().sort_index().items()
    ]
    counts += [
        (f"answers {s or 'not answered'}", int(n))
        for s, n in f.loc[f["modality"] == "vlm", "status"].value_counts().sort_index().items()
    ]
    counts.append(("verdicts (latest per source and item)", verdicts))
    return tuple(counts)


def _judged(items: Items) -> dict[str, int]:
    """How many of the report's items each verdict source judged.

    One row per (subject, source) in the verdict tables, so a source's row count is the items
    it judged; counted without a Python string per verdict.
    """
    judged: dict[str, int] = {}
    for verdicts in (items.image_verdicts, items.response_verdicts):
        for source, count in count_strings(verdicts["source"]).items():
            judged[source] = judged.get(source, 0) + count
    return judged


def describe_methods(
    store: Store,
    items: Items,
    rubric_versions: Mapping[str, tuple[str, ...]] | None = None,
    seed_ranges: Mapping[str, SeedRange] | None = None,
) -> Methods:
    """Collect the runs, seeds, judges and counts behind the report.

    ``rubric_versions``: :meth:`Store.rubric_versions`, and ``seed_ranges``: every run's
    :meth:`Store.image_seed_ranges`, when the caller has read them already (each scans a
    whole table); read here otherwise.
    """
    labels = {run_id: e.label for e in items.entries for run_id in e.run_ids}
    # Runs on other catalogues are reported apart, but are runs behind the report all the same.
    apart = {run_id: e.label for e in items.elsewhere for run_id in e.run_ids}
    labels.update(apart)
    runs = store.runs()
    # A challenge run belongs with the answer run it continues.
    for run in runs:
        if run.stage == "challenge" and run.parent_run_id in labels:
            labels[run.run_id] = labels[str(run.parent_run_id)]
    seeds = seed_ranges if seed_ranges is not None else store.image_seed_ranges(list(labels))
    infos = []
    for run in runs:
        if run.run_id not in labels:
            continue
        config = scrub(run.config)
        note = None
        if run.run_id in apart:
            note = "on another catalogue than the report's: scored apart, against its own"
        elif run.catalogue_sha256 and run.catalogue_sha256 != items.catalogue.sha256:
            note = "made with another catalogue file than the report's"
        infos.append(
            RunInfo(
                run_id=run.run_id,
                stage=run.stage,
                model=run.model,
                label=labels[run.run_id],
                status=run.status,
                smoke=bool(run.smoke),
                label_policy=run.label_policy,
                started_at=run.started_at,
                ended_at=run.ended_at,
                command=redact_command(run.command),
                config=canonical_json(config),
                seeds=_seed_text(config, seeds.get(run.run_id)),
                catalogue_note=note,
                condition=run.condition,
            )
        )
    if rubric_versions is None:
        rubric_versions = store.rubric_versions()
    rubric = {source: ", ".join(v) for source, v in rubric_versions.items()}
    judged = _judged(items)
    sources = tuple(
        SourceInfo(
            source=source,
            kind=source_kind(source),
            subjects=count,
            rubric_versions=rubric.get(source, ""),
        )
        for source, count in sorted(judged.items())
    )
    counts = _counts(items, sum(judged.values()))
    from amvicc.provenance import package_versions

    versions = package_versions(("amvicc", "numpy", "pandas", "scipy", "scikit-learn"))
    return Methods(
        runs=tuple(infos),
        sources=sources,
        counts=counts,
        catalogue_source=items.catalogue.source,
        catalogue_sha256=items.catalogue.sha256,
        label_policies=", ".join(
            sorted({f"{e.label}: {e.label_policy}" for e in items.entries if e.modality == "vlm"})
        )
        or "no VLMs",
        versions=", ".join(f"{k} {v}" for k, v in versions.items()),
    )
