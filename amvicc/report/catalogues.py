"""Results on other catalogues: scored apart, each against its own file, and side by side.

A workspace may hold runs on MMVP and on a procedural scene set (``amvicc scenes build``):
their question indices name different questions, so the report's main tables hold only the
entries on the report's catalogue (:class:`~amvicc.report.entries.OnCatalogue`). Every
other entry is scored here by the same code as the main tables
(:func:`~amvicc.report.items.collect_items`, :func:`~amvicc.report.metrics.metric_table`),
against the catalogue file its runs recorded, when that file still exists and is still the one
they used (its SHA-256). When it is not, the entry is listed as not scored, with the reason:
never silently mixed into the main numbers.

For each model with results on more than one catalogue, its per-category accuracies are put
side by side with their difference: how far MMVP's photographs and clean procedural scenes
agree is a finding of its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from amvicc.catalogue import Catalogue, load_catalogue, parse_categories
from amvicc.errors import UserError
from amvicc.report.entries import ModelEntry, catalogue_key, catalogue_names
from amvicc.report.items import Items, category_sort_key, collect_items
from amvicc.report.metrics import (
    IGM_METRICS,
    METRIC_COLUMNS,
    METRIC_ORDER,
    VLM_METRICS,
    metric_table,
    plain,
)
from amvicc.report.options import ReportOptions
from amvicc.store import Store

#: The columns of :attr:`Catalogues.side_by_side`: who, which number, on which catalogue, the
#: metric table's counts, and the difference from the reference catalogue.
SIDE_BY_SIDE_COLUMNS = (
    *("label", "model", "modality", "smoke", "metric", "category", "catalogue"),
    *METRIC_COLUMNS[METRIC_COLUMNS.index("value") :],
    *("reference", "difference"),
)


@dataclass(frozen=True, eq=False)
class OtherCatalogue:
    """The entries on one other catalogue, scored against it.

    Attributes:
        name: its short name (the rows' ``catalogue``).
        items: its entries' items, decided as the main tables' are.
        metrics: :func:`~amvicc.report.metrics.metric_table` of those items.
    """

    name: str
    items: Items
    metrics: pd.DataFrame

    @property
    def categories(self) -> list[str]:
        """The category codes it has (of those selected), in AMVICC's order."""
        return [c.code for c in self.items.catalogue.categories()]


@dataclass(frozen=True)
class NotScored:
    """An entry on another catalogue that could not be scored, and why."""

    label: str
    modality: str
    smoke: bool
    runs: tuple[str, ...]
    catalogue: str
    file: str | None
    sha256: str
    reason: str


@dataclass(frozen=True, eq=False)
class Catalogues:
    """The report's catalogue's name, and every other catalogue its workspace's runs used.

    Attributes:
        name: the report's catalogue's short name.
        others: each other catalogue with scored entries, in the order first met.
        not_scored: the entries whose catalogue could not be used, with the reason.
        side_by_side: for each model (label and modality) with plain results on more than
            one catalogue, every accuracy on each of them (:data:`SIDE_BY_SIDE_COLUMNS`):
            ``reference`` is the catalogue differences are taken from (the report's when the
            model has results on it), ``difference`` the value minus the reference's value
            (empty on the reference's own rows).
    """

    name: str
    others: tuple[OtherCatalogue, ...]
    not_scored: tuple[NotScored, ...]
    side_by_side: pd.DataFrame

    @property
    def metrics(self) -> pd.DataFrame:
        """The metric rows of every other catalogue (empty without one)."""
        if not self.others:
            return pd.DataFrame()
        return pd.concat([o.metrics for o in self.others], ignore_index=True)

    @property
    def any(self) -> bool:
        """Whether any selected run is on another catalogue than the report's."""
        return bool(self.others or self.not_scored)


def other_catalogues(
    store: Store,
    options: ReportOptions,
    catalogue: Catalogue,
    elsewhere: tuple[ModelEntry, ...],
    metrics: pd.DataFrame,
) -> Catalogues:
    """Score the entries on other catalogues, each against its own catalogue, and compare.

    Args:
        store: the workspace.
        options: the report's options; ``--index`` and ``--smoke-index`` name questions of
            the report's catalogue, so other catalogues are scored on all their questions.
        catalogue: the report's catalogue.
        elsewhere: the entries on other catalogues.
        metrics: the report's metric rows (the main catalogue's side of the comparison).
    """
    names = catalogue_names(catalogue, elsewhere)
    groups: dict[str, list[ModelEntry]] = {}
    for entry in elsewhere:
        groups.setdefault(entry.catalogue_key, []).append(entry)
    others: list[OtherCatalogue] = []
    not_scored: list[NotScored] = []
    for key, entries in groups.items():
        name = names[key]
        try:
            others.append(_score(store, options, entries, name))
        except UserError as err:
            not_scored += [_not_scored(e, name, str(err)) for e in entries]
    own = names[catalogue_key(catalogue)]
    return Catalogues(
        name=own,
        others=tuple(others),
        not_scored=tuple(not_scored),
        side_by_side=side_by_side(metrics, own, [o.metrics for o in others]),
    )


def report_rows(metrics: pd.DataFrame, catalogues: Catalogues) -> pd.DataFrame:
    """The report's metric rows, then every other catalogue's (the CSV's and JSON's rows)."""
    if not catalogues.others:
        return metrics
    return pd.concat([metrics, catalogues.metrics], ignore_index=True)


def _score(
    store: Store, options: ReportOptions, entries: list[ModelEntry], name: str
) -> OtherCatalogue:
    """Score ``entries`` (all on one catalogue) against the file their runs recorded.

    Raises:
        UserError: why they cannot be scored: no file recorded, the file is gone or changed,
            or it has none of the selected categories.
    """
    path = _catalogue_path(entries)
    own = replace(options, catalogue=path, indices=None, smoke_indices=None)
    catalogue = load_catalogue(path, labels=options.labels or "corrected")
    if options.categories and not len(
        catalogue.select(categories=parse_categories(options.categories))
    ):
        raise UserError(f"{catalogue.source} has none of the selected categories")
    items = replace(collect_items(store, own, entries=entries), catalogue_name=name)
    return OtherCatalogue(name=name, items=items, metrics=metric_table(items, own))


def _catalogue_path(entries: list[ModelEntry]) -> Path | None:
    """The catalogue file the entries' runs used (None: the shipped one).

    Raises:
        UserError: no file was recorded, or none recorded is still there unchanged.
    """
    first = entries[0]
    if first.on_shipped_catalogue:
        return None  # an older version of the shipped catalogue is still MMVP
    sha = first.catalogue_sha256 or ""
    if not first.catalogue_recorded:
        raise UserError(
            f"its runs used another catalogue (SHA-256 {sha[:12]}…) and, made before amvicc "
            "recorded the file, do not say which; report it with --catalogue FILE"
        )
    files = list(dict.fromkeys(e.catalogue_file for e in entries if e.catalogue_file))
    for file in files:
        path = Path(file)
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == sha:
            return path
    existing = [f for f in files if Path(f).is_file()]
    if existing:
        raise UserError(
            f"its catalogue {existing[0]} has changed since its runs (they used SHA-256 "
            f"{sha[:12]}…); report it with --catalogue set to the file they used"
        )
    raise UserError(
        f"its catalogue {files[0] if files else 'file'} no longer exists; report it with "
        "--catalogue set to a copy of it"
    )


def _not_scored(entry: ModelEntry, name: str, reason: str) -> NotScored:
    return NotScored(
        label=entry.label,
        modality=entry.modality,
        smoke=entry.smoke,
        runs=entry.run_ids,
        catalogue=name,
        file=entry.catalogue_file,
        sha256=entry.catalogue_sha256 or "",
        reason=reason,
    )


def side_by_side(metrics: pd.DataFrame, name: str, others: list[pd.DataFrame]) -> pd.DataFrame:
    """Each model's accuracies on every catalogue it has plain results on, and the differences.

    Args:
        metrics: the report's metric rows (its catalogue ``name``).
        name: the report's catalogue's short name, the reference where a model has it.
        others: every other catalogue's metric rows.

    Returns:
        :data:`SIDE_BY_SIDE_COLUMNS` rows of the models on more than one catalogue, sorted
        by modality, model, metric, catalogue (the report's first) and category.
    """
    accuracies = set(IGM_METRICS) | set(VLM_METRICS)
    parts = [plain(m) for m in (metrics, *others) if not m.empty]
    rows = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if rows.empty:
        return pd.DataFrame(columns=list(SIDE_BY_SIDE_COLUMNS))
    rows = rows[rows["metric"].isin(accuracies)]
    spread = rows.groupby(["label", "modality"])["catalogue"].transform("nunique")
    rows = rows[spread > 1].copy()
    if rows.empty:
        return pd.DataFrame(columns=list(SIDE_BY_SIDE_COLUMNS))
    order = {c: i for i, c in enumerate(dict.fromkeys([name, *rows["catalogue"]]))}
    rows["_catalogue"] = rows["catalogue"].map(order)
    first = rows.groupby(["label", "modality"])["_catalogue"].transform("min")
    rows["reference"] = first.map({i: c for c, i in order.items()})
    keys = ["label", "modality", "metric", "category"]
    reference = rows.loc[rows["catalogue"] == rows["reference"], [*keys, "value"]]
    rows = rows.merge(reference.rename(columns={"value": "_reference"}), on=keys, how="left")
    rows["difference"] = (
        rows["value"].astype("float64") - rows["_reference"].astype("float64")
    ).where(rows["catalogue"] != rows["reference"])
    rows = rows.assign(
        _modality=rows["modality"] != "igm",
        _label=rows["label"].str.casefold(),
        _metric=rows["metric"].map(METRIC_ORDER.index),
        _category=category_sort_key(rows["category"]),
    ).sort_values(["_modality", "_label", "_metric", "_catalogue", "_category"])
    return rows[list(SIDE_BY_SIDE_COLUMNS)].reset_index(drop=True)
