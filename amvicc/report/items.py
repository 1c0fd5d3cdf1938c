"""From the workspace to one row per item: was it correct, wrong or missing, and why.

An *item* is one slot a model was asked to fill: for an image model (IGM) a (question, prompt
kind, sample) image, for a VLM a (question, sample) answer about MMVP's own image. Every
slot the catalogue asks for gets a row, so an image never generated or an answer never given
is a *missing* item with its reason rather than silently absent.

An answer is correct when the option its verdicts chose (:mod:`amvicc.report.verdicts`) is the
question's answer under the label policy the report uses (the run's, or ``--original-labels``).
A yes/no judge's ``not_x`` is wrong when x is that answer; when x is not (the judge was shown
the other policy's answer) it says nothing, and the item is missing. ``no_answer``, an
undecided response and a failed request are missing; so are images never generated or rated.

Only the models on the report's catalogue get items here
(:class:`~amvicc.report.entries.OnCatalogue`): a scene set's index 5 is another question than
MMVP's 5. The others are kept in :attr:`Items.elsewhere` and scored against their own
catalogue by the same function (:mod:`amvicc.report.catalogues`).

Everything is vectorised with pandas, so 360,000 verdicts take well under a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from amvicc.catalogue import (
    CATEGORIES,
    Catalogue,
    check_index_ranges,
    load_catalogue,
)
from amvicc.errors import UserError
from amvicc.report.early import EarlyReads
from amvicc.report.entries import (
    ModelEntry,
    OnCatalogue,
    catalogue_key,
    catalogue_names,
    entry_keys,
    load_entries,
    with_samples,
)
from amvicc.report.options import ANY_VERDICTS, HUMAN_VERDICTS, ReportOptions
from amvicc.report.slots import (
    answer_items,
    answer_keys,
    answer_outcomes,
    apply_image_outcomes,
    blank_cells,
    decide_images,
    image_grid,
    questions_frame,
)
from amvicc.report.verdict_frames import image_items, image_verdicts_of, latest_verdicts
from amvicc.report.verdicts import DECIDED_ANSWERS, image_values, latest_per_subject, roles
from amvicc.store import JUDGE_PREFIX, Store

MMVP_IMAGE_KEY = "mmvp"
CATEGORY_ORDER = {c.code: i for i, c in enumerate(CATEGORIES)}


MISSING_REASONS = {
    "not_generated": "no image was generated",
    "blank_in_sheet": "the grade sheet's cell was blank",
    "failed": "generation failed",
    "refused": "the model refused to generate",
    "not_rated": "nobody rated the image",
    "unresolved": "the raters tied",
    "not_answered": "the VLM was never asked",
    "error": "the request failed",
    "not_graded": "the answer was never graded",
    "undecided": "no grader could tell which option was chosen",
    "no_answer": "the VLM chose no option",
    "other_labels": "a yes/no judge said only that the reply is not the other label policy's answer",
}


@dataclass(frozen=True, eq=False)
class Items:
    """Every item of every model in the report, with its outcome.

    Attributes:
        entries: the models, image models first, each sorted by name.
        frame: one row per item: ``entry``, ``label``, ``modality``, ``kind`` (``implicit``,
            ``explicit`` or ``answer``), ``question_index``, ``pair``, ``category``,
            ``sample``, ``subject_id`` (image or response id, empty when none was made),
            ``status``, ``value`` (the verdict or option that decided it), ``outcome``
            (``correct``, ``incorrect``, ``missing``) and ``reason`` (why it is missing).
        image_verdicts: each source's latest verdict on the report's images (``subject_id``,
            ``source``, ``value``, ``verdict_id``, ``role``, and ``item``: the index label in
            ``frame`` of the item of the verdict's image, -1 for none); it may hold verdicts on
            superseded images of the same configurations, which no item refers to.
        response_verdicts: the same for the report's answers.
        catalogue: the questions reported on.
        basis: whose image verdicts decided the items.
        catalogue_name: the catalogue's short name, the ``catalogue`` column of the rows
            (:func:`~amvicc.report.entries.catalogue_names`).
        elsewhere: the selected entries on another catalogue, left out of these items: they
            are scored apart, against their own catalogue (:mod:`amvicc.report.catalogues`).
    """

    entries: tuple[ModelEntry, ...]
    frame: pd.DataFrame
    image_verdicts: pd.DataFrame
    response_verdicts: pd.DataFrame
    catalogue: Catalogue
    basis: str
    catalogue_name: str = ""
    elsewhere: tuple[ModelEntry, ...] = ()

    def judge_sources(self) -> list[str]:
        """The automatic image judges that rated any of the report's images."""
        verdicts = self.image_verdicts
        return sorted(verdicts.loc[roles(verdicts) == "judge", "source"].unique())

    def with_basis(self, basis: str) -> Items:
        """The same items with image outcomes decided by another source (answers unchanged)."""
        if basis == self.basis:
            return self
        frame = self.frame.copy()
        images = frame["modality"] == "igm"
        decided = image_values(self.image_verdicts, basis)
        apply_image_outcomes(frame, images, decided)
        blank_cells(frame, {e.key for e in self.entries if e.imported})
        return replace(self, frame=frame, basis=basis)

    def image_verdict_rows(self) -> np.ndarray | None:
        """Per image verdict, the position in ``frame`` of its image's item (-1: none).

        Found through the ``item`` column (an index label of the frame that
        :func:`decide_items` made), so no 32-character id is hashed: that took a tenth of a
        second per use on 360,000 verdicts. None when the verdicts have no such column.
        """
        if "item" not in self.image_verdicts.columns:
            return None
        rows: np.ndarray = self.frame.index.get_indexer(pd.Index(self.image_verdicts["item"]))
        return rows

    def split(
        self, smoke_keys: set[str], drop_sources: set[str]
    ) -> tuple[Items | None, Items | None]:
        """The items of the real models and of the smoke-test models (in ``smoke_keys``).

        Each part has its entries, its rows and the verdicts on its subjects only (one
        membership test per verdict table, shared by both parts); the real part also loses
        the verdicts of ``drop_sources`` (a smoke-test model's verdicts on real models'
        items mean nothing). A part without entries is None.
        """
        if not smoke_keys and not drop_sources:
            return self, None
        if smoke_keys >= {e.key for e in self.entries}:
            return None, self
        smoke_rows = self.frame["entry"].isin(smoke_keys)
        smoke_subjects = pd.Index(self.frame.loc[smoke_rows, "subject_id"])
        image_rows = self.image_verdict_rows()
        masks = [
            self.image_verdicts["subject_id"].isin(smoke_subjects).to_numpy()
            if image_rows is None
            else np.append(smoke_rows.to_numpy(), False)[image_rows],  # row -1: no item
            self.response_verdicts["subject_id"].isin(smoke_subjects).to_numpy(),
        ]
        dropped = [
            verdicts["source"].isin(drop_sources).to_numpy()
            if drop_sources
            else np.zeros(len(verdicts), dtype=bool)
            for verdicts in (self.image_verdicts, self.response_verdicts)
        ]
        parts: list[Items | None] = []
        for smoke in (False, True):
            entries = tuple(e for e in self.entries if (e.key in smoke_keys) == smoke)
            if not entries:
                parts.append(None)
                continue
            rows = smoke_rows if smoke else ~smoke_rows
            image, response = (
                verdicts[mask if smoke else ~mask & ~drop]
                for verdicts, mask, drop in zip(
                    (self.image_verdicts, self.response_verdicts), masks, dropped, strict=True
                )
            )
            parts.append(
                replace(
                    self,
                    entries=entries,
                    frame=self.frame[rows.to_numpy()],
                    image_verdicts=image,
                    response_verdicts=response,
                )
            )
        return parts[0], parts[1]


@dataclass(frozen=True)
class Selection:
    """What a report is on: its catalogue's selected questions and the selected models.

    Attributes:
        catalogue: the questions reported on (``--categories`` and ``--index`` applied).
        name: the catalogue's short name, the ``catalogue`` column of the rows.
        entries: the selected models whose runs used this catalogue.
        elsewhere: the selected models on another catalogue, scored apart.
    """

    catalogue: Catalogue
    name: str
    entries: tuple[ModelEntry, ...]
    elsewhere: tuple[ModelEntry, ...]


def select(store: Store, options: ReportOptions) -> Selection:
    """The report's catalogue and the selected models, split by the catalogue they used.

    A workspace without any generate, import or answer run selects no model.

    Raises:
        UserError: a bad ``--index`` or ``--categories``, or an unknown ``--models`` name.
    """
    catalogue = whole = load_catalogue(options.catalogue, labels=options.labels or "corrected")
    if options.indices is not None:
        check_index_ranges(options.indices, [q.index for q in catalogue], catalogue.source)
    if options.categories:
        from amvicc.catalogue import parse_categories

        catalogue = catalogue.select(categories=parse_categories(options.categories))
    if options.indices is not None:
        pairs = {q.pair for q in catalogue if q.index in options.indices}
        catalogue = catalogue.select(indices={q.index for q in catalogue if q.pair in pairs})
        if not len(catalogue):
            raise UserError("--index selects no question of the benchmark; widen it")
    on = OnCatalogue(whole)  # before any selection: a prompt variant asks all of it
    chosen = load_entries(store, options.models, labels=options.labels, on=on)
    elsewhere = tuple(e for e in chosen if not on(e))
    return Selection(
        catalogue=catalogue,
        name=catalogue_names(catalogue, elsewhere)[catalogue_key(catalogue)],
        entries=tuple(e for e in chosen if on(e)),
        elsewhere=elsewhere,
    )


def nothing_to_report(store: Store, selection: Selection) -> UserError:
    """The error of a report with no model on its catalogue (and nothing else to show)."""
    if not selection.elsewhere:
        return UserError(
            f"nothing to report in {store.root}: it has no generate, import or answer runs; "
            "run `amvicc generate`, `amvicc answer` or `amvicc import-grades` first"
        )
    return UserError(_nothing_on(selection.catalogue, selection.elsewhere))


def collect_items(
    store: Store,
    options: ReportOptions | None = None,
    *,
    entries: Sequence[ModelEntry] | None = None,
) -> Items:
    """Read the workspace and decide every item of every selected model on its catalogue.

    The selected models on another catalogue than ``options.catalogue`` are left out (in
    :attr:`Items.elsewhere`): their question indices mean other questions.

    Args:
        store: the workspace.
        options: the catalogue, the selection and how to decide.
        entries: decide the items of exactly these entries, read before and known to be on
            ``options.catalogue`` (None: the workspace's selected entries on it).

    Raises:
        UserError: nothing to report, no selected run on the catalogue, an unknown
            ``--models`` name or ``--verdicts`` source.
    """
    options = options or ReportOptions()
    if entries is not None:
        # Entries given are another catalogue's: a judge --verdicts names may never have seen
        # them, and then their images are simply not rated.
        selection = select_questions(options)
        return decide_items(store, options, selection, tuple(entries), check_basis=False)
    selection = select(store, options)
    if not selection.entries:
        raise nothing_to_report(store, selection)
    return decide_items(store, options, selection, selection.entries)


def select_questions(options: ReportOptions) -> Selection:
    """The selected questions of ``options.catalogue``, without reading any model."""
    catalogue = load_catalogue(options.catalogue, labels=options.labels or "corrected")
    if options.categories:
        from amvicc.catalogue import parse_categories

        catalogue = catalogue.select(categories=parse_categories(options.categories))
    return Selection(catalogue, catalogue_names(catalogue, ())[catalogue_key(catalogue)], (), ())


def decide_items(
    store: Store,
    options: ReportOptions,
    selection: Selection,
    entries: tuple[ModelEntry, ...],
    *,
    check_basis: bool = True,
    early: EarlyReads | None = None,
) -> Items:
    """Read the items of ``entries`` (on ``selection``'s catalogue) and decide each one.

    ``early``: the reads of every image slot and verdict, when started before (None: read
    here).

    Raises:
        UserError: image models on a catalogue without prompts, or an unknown ``--verdicts``.
    """
    catalogue = selection.catalogue
    if any(e.modality == "igm" for e in entries) and not catalogue.has_prompts:
        raise UserError(
            f"{catalogue.source} has no generation prompts, so image models cannot be scored; "
            "use a catalogue with prompts (e.g. the shipped one)"
        )
    early = early or EarlyReads(store)
    image_slots = early.image_slots(entry_keys(list(entries), "igm"))
    response_rows = store.current_response_slots(entry_keys(list(entries), "vlm"), MMVP_IMAGE_KEY)
    response_verdicts = latest_verdicts(store, "response", response_rows["response_id"])
    chosen = with_samples(list(entries), image_slots, response_rows)
    questions = questions_frame(catalogue)
    frames = []
    igm = [e for e in chosen if e.modality == "igm"]
    vlm = [e for e in chosen if e.modality == "vlm"]
    grid_rows = np.full(0, -1, dtype=np.int64)
    if igm:
        grid, grid_rows = image_grid(igm, questions, image_slots)
        frames.append(grid)
    if vlm:
        answers = answer_keys({e.label_policy for e in vlm}, catalogue)
        frames.append(answer_items(vlm, questions, response_rows, response_verdicts, answers))
    # The verdicts last: everything above is done while they are read.
    image_verdicts, coded = image_verdicts_of(image_slots, early.verdict_codes())
    if check_basis:
        _check_basis(options.verdicts, image_verdicts)
    if igm:
        decide_images(grid, grid_rows, image_verdicts, options.verdicts, coded)
    frame = pd.concat(frames, ignore_index=True)
    # The grid comes first, so a grid row's index label is its number.
    image_verdicts["item"] = image_items(grid_rows, coded)
    if options.smoke_indices is not None:
        frame, image_verdicts = _smoke_scope(
            frame, image_verdicts, chosen, catalogue, options.smoke_indices
        )
    blank_cells(frame, {e.key for e in chosen if e.imported})
    return Items(
        entries=tuple(chosen),
        frame=frame,
        image_verdicts=image_verdicts,
        response_verdicts=response_verdicts,
        catalogue=catalogue,
        basis=options.verdicts,
        catalogue_name=selection.name,
        elsewhere=selection.elsewhere,
    )


def _nothing_on(catalogue: Catalogue, elsewhere: Sequence[ModelEntry]) -> str:
    """Why a report on ``catalogue`` has nothing, and which catalogues the runs used."""
    names = catalogue_names(catalogue, elsewhere)
    used = []
    for e in elsewhere:
        if e.on_shipped_catalogue:
            where = f"{names[e.catalogue_key]} (the shipped catalogue: leave out --catalogue)"
        else:
            where = f"{names[e.catalogue_key]} ({e.catalogue_file or 'file not recorded'})"
        used.append(where)
    return (
        f"no selected run used the catalogue {catalogue.source}; they used "
        f"{', '.join(dict.fromkeys(used))}: report with --catalogue set to one of them"
    )


def _smoke_scope(
    frame: pd.DataFrame,
    image_verdicts: pd.DataFrame,
    entries: list[ModelEntry],
    catalogue: Catalogue,
    indices: frozenset[int],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Keep the smoke-test models' items of the pairs ``indices`` touch (real models keep all).

    The frame is numbered anew, and the image verdicts' ``item`` labels with it.

    Raises:
        UserError: the indices select no question of the report's catalogue.
    """
    pairs = {q.pair for q in catalogue if q.index in indices}
    if not pairs:
        raise UserError("--smoke-index selects no question of the report; widen it")
    smoke = frame["entry"].isin({e.key for e in entries if e.smoke})
    kept = (~smoke | frame["pair"].isin(pairs)).to_numpy()
    renumbered = np.where(kept, np.cumsum(kept) - 1, -1)
    items = image_verdicts["item"].to_numpy()
    image_verdicts["item"] = np.where(items >= 0, renumbered[items], -1)
    return frame[kept].reset_index(drop=True), image_verdicts


def _check_basis(basis: str, image_verdicts: pd.DataFrame) -> None:
    if basis in (HUMAN_VERDICTS, ANY_VERDICTS):
        return
    known = sorted(set(image_verdicts.loc[roles(image_verdicts) == "judge", "source"]))
    if not basis.startswith(JUDGE_PREFIX) or basis not in known:
        listed = ", ".join(known) or "none in this workspace"
        raise UserError(
            f"--verdicts {basis!r} is not human, any or an image judge of these models "
            f"(judges: {listed})"
        )


# --- deciding items --------------------------------------------------------------------------


def answer_column(items: Items) -> pd.Series:
    """The correct option of each VLM item under its entry's label policy (index as frame)."""
    vlm = items.frame[items.frame["modality"] == "vlm"]
    policies = {e.key: e.label_policy for e in items.entries if e.modality == "vlm"}
    answers = answer_keys(set(policies.values()), items.catalogue)
    out = pd.Series("", index=vlm.index, dtype="object")
    for policy, series in answers.items():
        mask = vlm["entry"].map(policies) == policy
        out[mask] = vlm.loc[mask, "question_index"].map(series).astype("object")
    return out


def source_answer_items(items: Items, source: str) -> pd.DataFrame:
    """The VLM items as one verdict source alone decides them (e.g. a grading procedure).

    The same slots, answers and outcome rules as :attr:`Items.frame`; only the option chosen
    comes from ``source``'s latest verdict (an item it never judged is ``not_graded``).
    """
    frame = items.frame[items.frame["modality"] == "vlm"].copy()
    verdicts = items.response_verdicts
    own = verdicts[(verdicts["source"] == source) & verdicts["value"].isin(DECIDED_ANSWERS)]
    chosen = frame["subject_id"].map(latest_per_subject(own))
    graded = frame["subject_id"].isin(set(verdicts.loc[verdicts["source"] == source, "subject_id"]))
    return answer_outcomes(frame, chosen, graded, answer_column(items))


def category_sort_key(codes: pd.Series) -> pd.Series:
    """Sort categories in AMVICC's order, with ``all`` last."""
    return codes.map(CATEGORY_ORDER).fillna(len(CATEGORY_ORDER)).astype("int64")


def plain_only(items: Items) -> Items:
    """The items of plain entries (no condition): what the main tables count."""
    if all(not e.condition for e in items.entries):
        return items
    keys = {e.key for e in items.entries if not e.condition}
    frame = items.frame[items.frame["entry"].isin(keys)]
    entries = tuple(e for e in items.entries if e.key in keys)
    return replace(items, frame=frame, entries=entries)
