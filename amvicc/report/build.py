"""A report: every section's numbers, computed once from the workspace.

:func:`build_report` reads the workspace once, splits its models into the real ones and the
smoke-test ones (two :class:`~amvicc.report.section.Part` objects) and computes each section of
:data:`amvicc.report.sections.SECTIONS` for both, as far as the output needs. The Python API
for notebooks and other stages:

>>> from amvicc.report import compute_metrics, judge_agreement
>>> metrics = compute_metrics(Store("amvicc-runs"), missing="exclude")  # doctest: +SKIP
>>> judges = judge_agreement(Store("amvicc-runs"))  # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any

import pandas as pd
from tqdm import tqdm

from amvicc import __version__
from amvicc.catalogue import Catalogue
from amvicc.report.early import EarlyReads
from amvicc.report.entries import ModelEntry
from amvicc.report.items import (
    Items,
    collect_items,
    decide_items,
    nothing_to_report,
    select,
)
from amvicc.report.metrics import metric_table, with_interaction
from amvicc.report.options import ReportOptions
from amvicc.report.parallel import second_process_pays, sections_apart
from amvicc.report.section import Clock, Need, Part, Pending, Section
from amvicc.report.sections import SECTION_BY_KEY, SECTIONS
from amvicc.report.self_preference import judge_model
from amvicc.report.stats import Resampler
from amvicc.store import Store, utc_now


@dataclass(frozen=True, eq=False)
class Report:
    """Everything a report shows: its sections' data, for the real and the smoke-test models.

    Each section's data is ``report.part(smoke).__getitem__(key)``; the tables the Python API
    has always had are attributes (``report.metrics``, ``report.failures``, ``report.missing``,
    ``report.analyses.gains``, ...), each the section's table for both parts, real models
    first (see each section's ``exports``).

    Attributes:
        options: how the numbers were counted.
        generated_at: when the report was made (UTC).
        store_root: the workspace.
        catalogue: the questions reported on.
        catalogue_name: the catalogue's short name (the rows' ``catalogue``).
        entries: every model on the catalogue, real and smoke-test, in the report's order.
        parts: the real models' part, then the smoke-test models'.
        timings: seconds per step and per section (``render.<section>`` once rendered).
    """

    options: ReportOptions
    generated_at: str
    store_root: str
    catalogue: Catalogue
    catalogue_name: str
    entries: tuple[ModelEntry, ...]
    parts: tuple[Part, Part]
    timings: dict[str, float] = field(default_factory=dict)
    version: str = __version__

    def part(self, smoke: bool = False) -> Part:
        """The real models' part, or (``smoke``) the smoke-test models'."""
        return self.parts[1] if smoke else self.parts[0]

    @property
    def smoke_models(self) -> list[str]:
        """Labels of the random-weight smoke-test models (their numbers mean nothing)."""
        return [e.label for e in self.entries if e.smoke]

    @property
    def categories(self) -> list[str]:
        """The category codes reported, in AMVICC's order."""
        return [c.code for c in self.catalogue.categories()]

    def __getattr__(self, name: str) -> Any:
        """A table a section exports (e.g. ``metrics``), both parts together."""
        if name.startswith("_") or name in {f.name for f in fields(self)}:
            raise AttributeError(name)
        if name == "analyses":
            return _Exports(self, "analyses.")
        return _exported(self, name)


class _Exports:
    """``report.analyses.<name>``: the item-level tables under their historical names."""

    def __init__(self, report: Report, prefix: str) -> None:
        self._report = report
        self._prefix = prefix

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return _exported(self._report, self._prefix + name)


def _exported(report: Report, name: str) -> Any:
    values = [
        export(part)
        for section in SECTIONS
        for part in report.parts
        for exported, export in section.exports.items()
        if exported == name
    ]
    if not values:
        raise AttributeError(name)
    return combine(values)


def combine(values: list[Any]) -> Any:
    """One value from several parts': tables and tuples joined in order, the rest the first's.

    Dataclasses (the challenge tables, the other catalogues, the ladder) are combined field by
    field. None (a part without the table) is skipped.
    """
    present = [v for v in values if v is not None]
    if not present:
        return None
    first = present[0]
    if len(present) == 1:
        return first
    if isinstance(first, pd.DataFrame):
        kept = [v for v in present if not v.empty]
        return pd.concat(kept, ignore_index=True) if len(kept) > 1 else (kept or [first])[0]
    if isinstance(first, tuple | list):
        return type(first)(itertools.chain.from_iterable(present))
    if is_dataclass(first) and not isinstance(first, type):
        changes = {
            f.name: combine([getattr(v, f.name) for v in present]) for f in fields(first) if f.init
        }
        return replace(first, **changes)
    return first


def _options(options: ReportOptions | None, changes: dict[str, Any]) -> ReportOptions:
    return replace(options or ReportOptions(), **changes)


def build_report(
    store: Store,
    options: ReportOptions | None = None,
    *,
    progress: bool = False,
    need: Need = "view",
    early: EarlyReads | None = None,
    prerender: Callable[[Part, str], None] | None = None,
    **changes: Any,
) -> Report:
    """Compute every section of the report the output needs.

    Args:
        store: the workspace.
        options: how to count; keyword arguments override single fields
            (``build_report(store, missing="exclude")``).
        progress: show a progress bar on stderr (when it is a terminal).
        need: ``rows`` (the CSV: only sections with rows), ``document`` (the JSON), or
            ``view`` (HTML and Markdown: every section).
        early: the reads of every image slot and verdict, when started before (None: read
            here).
        prerender: renders a section for the output; a second process renders the sections
            it computes with it (:func:`~amvicc.report.parallel.sections_apart`).
        **changes: :class:`ReportOptions` fields to override.

    Raises:
        UserError: nothing to report, a bad selection, or a file it needs that cannot be read.
    """
    options = _options(options, changes)
    clock = Clock()
    real, smoke = prepare(store, options, clock, early)
    chosen = [s for s in SECTIONS if s.needed(need)]
    parts = (real, smoke)
    apart = _apart(chosen, options, parts)
    here = [(index, s.key) for s in chosen for index in (0, 1) if (index, s.key) not in apart]
    # disable=None: no bar when stderr is not a terminal (logs, pipes, CI).
    with (
        sections_apart(apart, parts, clock, prerender) as take_over,
        tqdm(
            here, desc="report", unit="section", disable=None if progress else True, leave=False
        ) as bar,
    ):
        for index, key in bar:
            bar.set_postfix_str(key)
            parts[index][key]
        if apart and prerender is not None:
            _prerender_meanwhile(here, apart, parts, prerender)
        take_over()
    everything = [*real.entries, *smoke.entries]
    order = {key: i for i, key in enumerate(real.selection_order)}
    return Report(
        options=options,
        generated_at=utc_now(),
        store_root=str(store.root),
        catalogue=real.catalogue,
        catalogue_name=real.catalogue_name,
        entries=tuple(sorted(everything, key=lambda e: order.get(e.key, len(order)))),
        parts=(real, smoke),
        timings=clock.seconds,
    )


def _prerender_meanwhile(
    here: list[tuple[int, str]],
    apart: list[tuple[int, str]],
    parts: tuple[Part, Part],
    prerender: Callable[[Part, str], None],
) -> None:
    """Render this process's sections while the second process still computes its own.

    A section whose view needs one of those (the first screen's concordance headline) is
    left for when they are here.
    """
    for index, part in enumerate(parts):
        part.pending = frozenset(key for i, key in apart if i == index)
    try:
        for index, key in here:
            with suppress(Pending):
                prerender(parts[index], key)
    finally:
        for part in parts:
            part.pending = frozenset()


#: Apart sections that sections of the first process need (the first screen's cross-modal line
#: and the blind spots read the concordance): the second process computes them first.
WAITED_FOR = ("concordance",)


def _apart(
    chosen: list[Section], options: ReportOptions, parts: tuple[Part, Part]
) -> list[tuple[int, str]]:
    """What a second process computes (part index, section key): nothing on a small workspace.

    The sections marked apart, for both parts; they need no metric table, which the other
    sections share, so neither process computes what the other does (the first takes over
    those the second has not started once its own are done).
    """
    items = sum(len(p.items.frame) for p in parts if p.items is not None)
    if not second_process_pays(options.processes, items):
        return []
    # The real models' first: the first process takes over from the back, where the
    # smoke-test models' small sections are. In each part, those the first waits for first.
    return [
        (index, s.key)
        for index in (0, 1)
        for first in (True, False)
        for s in chosen
        if s.apart and (s.key in WAITED_FOR) == first
    ]


def prepare(
    store: Store,
    options: ReportOptions,
    clock: Clock,
    early: EarlyReads | None = None,
) -> tuple[Part, Part]:
    """Read the workspace once and split its models into the real and the smoke-test part.

    Nothing is computed yet: each section computes on first use (``part[key]``).

    Raises:
        UserError: nothing to report, or a bad selection.
    """
    if early is not None:
        early.read_ahead()
    with clock.timed("items"):
        selection = select(store, options)
        if not selection.entries and (selection.elsewhere or not store.runs(stage="ladder")):
            raise nothing_to_report(store, selection)
        everything = (
            decide_items(store, options, selection, selection.entries, early=early)
            if selection.entries
            else None
        )
    shared: dict[str, Any] = {}
    if early is not None and early.waited:
        clock.seconds["items.wait"] = early.waited
    resampler = Resampler(options.bootstrap, options.seed, options.confidence)
    parts: tuple[Items | None, Items | None] = (None, None)
    if everything is not None:
        with clock.timed("items"):
            smoke_keys = {e.key for e in everything.entries if e.smoke}
            parts = everything.split(smoke_keys, _smoke_judges(store, everything))
    real, smoke = (
        Part(
            store,
            options,
            smoke=kind,
            catalogue=selection.catalogue,
            catalogue_name=selection.name,
            items=None if items is None else replace(items, elsewhere=elsewhere),
            elsewhere=elsewhere,
            resampler=resampler,
            clock=clock,
            sections=SECTION_BY_KEY,
            shared=shared,
            ahead=early,
        )
        for kind, items, elsewhere in (
            (kind, parts[kind], tuple(e for e in selection.elsewhere if e.smoke == kind))
            for kind in (False, True)
        )
    )
    real.selection_order = tuple(e.key for e in selection.entries)
    if smoke.items is not None or smoke.elsewhere or _smoke_ladder(store):
        real.smoke_part = smoke
    return real, smoke


def _smoke_ladder(store: Store) -> bool:
    return any(run.smoke for run in store.runs(stage="ladder"))


def _smoke_judges(store: Store, items: Items) -> set[str]:
    """Verdict sources of smoke-test judges: their verdicts on real models' items mean nothing."""
    models = {
        run.model for stage in ("judge", "grade") for run in store.runs(stage=stage) if run.smoke
    }
    if not models:
        return set()
    sources = set(items.image_verdicts["source"]) | set(items.response_verdicts["source"])
    return {s for s in sources if _judge_of(s) in models}


def _judge_of(source: str) -> str | None:
    """The model of an automatic judge's source (``judge:<method>:<model>``, LLM graders)."""
    if source.startswith("judge:"):
        parts = source.split(":", 2)
        return parts[2] if len(parts) == 3 else None
    return judge_model(source)


def compute_metrics(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """AMVICC's metrics for every model, per category and ``all``, as a tidy DataFrame.

    Columns ``label, model, modality, condition, catalogue, smoke, samples, category, metric,
    value, correct, total, missing, ci_low, ci_high`` (and ``entry``, the configuration key):
    the CSV's rows of the report's catalogue (runs on other catalogues are scored apart, see
    :func:`~amvicc.report.catalogues.other_catalogues`). Perturbed runs give ``individual`` /
    ``pair`` rows with their condition (``grain=0.1``); challenge arms give ``capitulation``,
    ``correction`` and their ``_adjusted`` rows with the arm as condition; an empty condition
    is a plain run. Keyword arguments override :class:`ReportOptions` fields, e.g.
    ``missing="exclude"``, ``verdicts="judge:ocr:rapidocr"``, ``bootstrap=0``.
    """
    from amvicc.report.interaction import interaction_table

    options = _options(options, changes)
    items = collect_items(store, options)
    metrics = metric_table(items, options)
    return with_interaction(metrics, interaction_table(store, items, options))


def _real_and_smoke(store: Store, options: ReportOptions, key: str) -> pd.DataFrame:
    """One section's table for every model (real and smoke-test parts together)."""
    table: pd.DataFrame = combine([part[key] for part in prepare(store, options, Clock())])
    return table


def judge_agreement(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Every automatic image judge against the resolved human verdicts.

    Per judge, per image model (and ``all models``), per category and ``all``: ``items``,
    ``accuracy``, ``kappa`` (Cohen's), ``false_positive_rate`` (judge says correct, humans
    say not), ``recall``, and the confusion counts. Use it to see where a judge may stand in
    for human raters.
    """
    from amvicc.report.raters import judge_agreement_table

    return judge_agreement_table(collect_items(store, _options(options, changes)))


def concordance(store: Store, options: ReportOptions | None = None, **changes: Any) -> pd.DataFrame:
    """Item-level concordance of VLM and image-model pair outcomes, per category and ``all``.

    One row per VLM × image model (and the modalities pooled): the 2×2 counts (``both_pass``,
    ``vlm_only``, ``igm_only``, ``both_fail``), ``agreement``, Cohen's ``kappa``, ``phi``
    (each with ``_low`` / ``_high`` bootstrap bounds), ``odds_ratio`` and ``fisher_p``. Real
    and smoke-test models are never combined. See :mod:`amvicc.report.crossmodal`.
    """
    return _real_and_smoke(store, _options(options, changes), "concordance")


def compare_models(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Paired comparisons of every two models of a modality on the same items.

    Per metric and category: each side's accuracy, the ``difference`` with its paired
    bootstrap interval, McNemar's exact ``p_value`` and Holm's ``p_holm`` across categories.
    A smoke-test model is compared with smoke-test models only. See
    :mod:`amvicc.report.comparisons`.
    """
    return _real_and_smoke(store, _options(options, changes), "comparisons")


def human_agreement(
    store: Store, options: ReportOptions | None = None, **changes: Any
) -> pd.DataFrame:
    """Agreement between human raters per model (percent, Cohen's κ, Fleiss' κ)."""
    from amvicc.report.raters import rater_agreement

    return rater_agreement(collect_items(store, _options(options, changes)))
