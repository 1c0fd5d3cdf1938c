"""From the workspace to one row per item: was it correct, wrong or missing, and why.

An *item* is one slot a model was asked to fill: for an image model (IGM) a (question, prompt
kind, sample) image, for a VLM a (question, sample) answer about MMVP's own image. Every
slot the catalogue asks for gets a row, so an image never generated or an answer never given
is a *missing* item with its reason rather than silently absent.

Which verdict decides an item:

- images: under ``--verdicts human`` an adjudication if there is one, else the majority of the
  human raters (``human:*`` and ``sheet:*`` sources), else the item is unresolved (a tie) or
  not rated. ``cant_tell`` counts as a vote that the image is *not* correct, so two raters
  saying ``incorrect`` and ``cant_tell`` agree that it fails, and ``correct`` against
  ``cant_tell`` is a tie. ``undecided`` is no vote. Under ``--verdicts judge:<method>:<model>``
  that automatic judge decides; under ``any`` humans decide where they resolve the item and
  the automatic judges' majority elsewhere.
- answers: the option chosen comes from a human audit (adjudicated, else the auditors'
  majority), else the extractor, else the LLM judges' majority; the answer is correct when
  that option is the question's answer under the label policy the report uses (the run's, or
  ``--original-labels``). A yes/no judge's ``not_x`` is wrong when x is that answer; when x is
  not (the judge was shown the other policy's answer) it says nothing, and the item is
  missing. ``no_answer``, an undecided response and a failed request are missing.

Only the models on the report's catalogue get items here
(:class:`~amvicc.report.entries.OnCatalogue`): a scene set's index 5 is another question than
MMVP's 5. The others are kept in :attr:`Items.elsewhere` and scored against their own
catalogue by the same function (:mod:`amvicc.report.catalogues`).

Everything is vectorised with pandas (the same rule as :func:`amvicc.agreement.resolve`,
checked against it in the tests), so 360,000 verdicts take well under a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from amvicc.catalogue import (
    CATEGORIES,
    PROMPT_KINDS,
    Catalogue,
    LabelPolicy,
    check_index_ranges,
    load_catalogue,
)
from amvicc.errors import UserError
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
from amvicc.store import DECIDING_ANSWERS, JUDGE_PREFIX, Store, VerdictSubject, source_role

MMVP_IMAGE_KEY = "mmvp"
DECIDED_ANSWERS = DECIDING_ANSWERS
CATEGORY_ORDER = {c.code: i for i, c in enumerate(CATEGORIES)}


def roles(verdicts: pd.DataFrame) -> pd.Series:
    """Each verdict's :func:`~amvicc.store.source_role` (its ``role`` column when it has one)."""
    if "role" in verdicts.columns:
        return verdicts["role"]
    codes, sources = pd.factorize(verdicts["source"])
    table = np.array([source_role(str(s)) for s in sources] + ["other"], dtype=object)
    return pd.Series(table[codes], index=verdicts.index, dtype=object)


# Why an item has no usable verdict.
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
            ``source``, ``value``, ``verdict_id``); it may hold verdicts on superseded images
            of the same configurations, which no item refers to.
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
        _apply_image_outcomes(frame, images, decided)
        _blank_cells(frame, {e.key for e in self.entries if e.imported})
        return replace(self, frame=frame, basis=basis)


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
    elsewhere: tuple[ModelEntry, ...] = ()
    # Entries given are another catalogue's: a judge --verdicts names may never have seen
    # them, and then their images are simply not rated.
    check_basis = entries is None
    if entries is None:
        on = OnCatalogue(whole)  # before any selection: a prompt variant asks all of it
        chosen = load_entries(store, options.models, labels=options.labels, on=on)
        elsewhere = tuple(e for e in chosen if not on(e))
        entries = [e for e in chosen if on(e)]
        if not entries:
            raise UserError(_nothing_on(catalogue, elsewhere))
    entries = list(entries)
    if any(e.modality == "igm" for e in entries) and not catalogue.has_prompts:
        raise UserError(
            f"{catalogue.source} has no generation prompts, so image models cannot be scored; "
            "use a catalogue with prompts (e.g. the shipped one)"
        )
    image_rows = store.current_image_slots(entry_keys(entries, "igm"))
    response_rows = store.current_response_slots(entry_keys(entries, "vlm"), MMVP_IMAGE_KEY)
    entries = with_samples(entries, image_rows, response_rows)
    image_verdicts = _latest_verdicts(store, "image", image_rows["image_id"])
    response_verdicts = _latest_verdicts(store, "response", response_rows["response_id"])
    if check_basis:
        _check_basis(options.verdicts, image_verdicts)
    questions = _questions(catalogue)
    frames = []
    igm = [e for e in entries if e.modality == "igm"]
    vlm = [e for e in entries if e.modality == "vlm"]
    if igm:
        frames.append(_image_items(igm, questions, image_rows, image_verdicts, options.verdicts))
    if vlm:
        answers = _answers({e.label_policy for e in vlm}, catalogue)
        frames.append(_answer_items(vlm, questions, response_rows, response_verdicts, answers))
    frame = pd.concat(frames, ignore_index=True)
    if options.smoke_indices is not None:
        frame = _smoke_scope(frame, entries, catalogue, options.smoke_indices)
    _blank_cells(frame, {e.key for e in entries if e.imported})
    return Items(
        entries=tuple(entries),
        frame=frame,
        image_verdicts=image_verdicts,
        response_verdicts=response_verdicts,
        catalogue=catalogue,
        basis=options.verdicts,
        catalogue_name=catalogue_names(catalogue, elsewhere)[catalogue_key(catalogue)],
        elsewhere=elsewhere,
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
    frame: pd.DataFrame, entries: list[ModelEntry], catalogue: Catalogue, indices: frozenset[int]
) -> pd.DataFrame:
    """Keep the smoke-test models' items of the pairs ``indices`` touch (real models keep all).

    Raises:
        UserError: the indices select no question of the report's catalogue.
    """
    pairs = {q.pair for q in catalogue if q.index in indices}
    if not pairs:
        raise UserError("--smoke-index selects no question of the report; widen it")
    smoke = frame["entry"].isin({e.key for e in entries if e.smoke})
    return frame[~smoke | frame["pair"].isin(pairs)].reset_index(drop=True)


# --- reading the store -----------------------------------------------------------------------


def _latest_verdicts(store: Store, subject: VerdictSubject, subjects: pd.Series) -> pd.DataFrame:
    """Each source's latest verdict on these subjects (the store's rule), with its ``role``."""
    rows = store.latest_verdict_values(subject, subjects)
    rows["role"] = roles(rows)
    return rows


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


def _questions(catalogue: Catalogue) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question_index": [q.index for q in catalogue],
            "pair": [q.pair for q in catalogue],
            "category": [q.category.code for q in catalogue],
        }
    )


def _answers(policies: set[LabelPolicy], selected: Catalogue) -> dict[LabelPolicy, pd.Series]:
    """Each label policy's answer per question index."""
    out: dict[LabelPolicy, pd.Series] = {}
    for policy in policies:
        catalogue = (
            selected
            if policy == selected.label_policy
            else load_catalogue(selected.source, labels=policy)
        )
        out[policy] = pd.Series({q.index: q.answer for q in catalogue}, dtype="object")
    return out


# --- deciding items --------------------------------------------------------------------------


def resolve_votes(votes: pd.DataFrame, adjudicated: pd.Series | None = None) -> pd.DataFrame:
    """:func:`amvicc.agreement.resolve` for many subjects at once.

    Args:
        votes: one row per rater verdict: ``subject_id`` and ``value``.
        adjudicated: the adjudicated value per subject id, which overrides the raters.

    Returns:
        One row per subject (index ``subject_id``): ``value`` (None on a tie), ``how``
        (``adjudicated``, ``unanimous``, ``majority`` or ``tie``) and ``raters``.
    """
    subject_codes, subjects = pd.factorize(votes["subject_id"])
    value_codes, values = pd.factorize(votes["value"])
    if not len(values):
        return pd.DataFrame(
            {"value": [], "how": [], "raters": []}, index=pd.Index([], name="subject_id")
        ).astype({"value": "object", "how": "object", "raters": "int64"})
    width = len(values)
    # counts[s, v]: how many raters gave subject s the value v.
    counts = np.bincount(
        subject_codes * width + value_codes, minlength=len(subjects) * width
    ).reshape(len(subjects), width)
    top = counts.max(axis=1, initial=0)
    leaders = (counts == top[:, None]).sum(axis=1)
    distinct = (counts > 0).sum(axis=1)
    winner = np.asarray(values, dtype=object)[counts.argmax(axis=1)]
    result = pd.DataFrame(
        {
            "value": np.where(leaders == 1, winner, None),
            "how": np.where(leaders > 1, "tie", np.where(distinct == 1, "unanimous", "majority")),
            "raters": counts.sum(axis=1).astype("int64"),
        },
        index=pd.Index(subjects, name="subject_id", dtype=object),
    ).astype({"value": "object", "how": "object"})
    if adjudicated is not None and not adjudicated.empty:
        result = result.reindex(result.index.union(adjudicated.index))
        result.loc[adjudicated.index, "value"] = adjudicated.astype("object")
        result.loc[adjudicated.index, "how"] = "adjudicated"
        result["raters"] = result["raters"].fillna(0).astype("int64")
    result.index.name = "subject_id"
    return result


def _latest_per_subject(rows: pd.DataFrame) -> pd.Series:
    latest = rows.sort_values("verdict_id").drop_duplicates("subject_id", keep="last")
    return latest.set_index("subject_id")["value"].astype("object")


def _as_correct(values: pd.Series) -> pd.Series:
    """``correct`` stays; ``incorrect`` and ``cant_tell`` are not correct."""
    return values.where(values == "correct", "incorrect").astype("object")


def image_values(verdicts: pd.DataFrame, basis: str = HUMAN_VERDICTS) -> pd.DataFrame:
    """The deciding verdict of each rated image under ``basis``.

    Returns:
        Index ``subject_id``; ``value`` (``correct``, ``incorrect`` or None on a tie) and
        ``how``. Images nobody rated are absent.
    """
    usable = verdicts[verdicts["value"] != "undecided"]
    if basis == HUMAN_VERDICTS:
        return _human_image_values(usable)
    if basis == ANY_VERDICTS:
        human = _human_image_values(usable)
        judges = usable[roles(usable) == "judge"]
        automatic = resolve_votes(judges.assign(value=_as_correct(judges["value"])))
        automatic["how"] = "judges-" + automatic["how"].astype(str)
        resolved = human[human["value"].notna()]
        rest = automatic[~automatic.index.isin(resolved.index)]
        unresolved = human[human["value"].isna() & ~human.index.isin(rest.index)]
        return pd.concat([resolved, rest, unresolved])
    judged = usable[usable["source"] == basis]
    values = _latest_per_subject(judged)
    return pd.DataFrame({"value": _as_correct(values), "how": "judge"}, index=values.index)


def _human_image_values(usable: pd.DataFrame) -> pd.DataFrame:
    role = roles(usable)
    raters = usable[role == "rater"]
    adjudicated = _latest_per_subject(usable[role == "adjudication"])
    resolved = resolve_votes(
        raters.assign(value=_as_correct(raters["value"])), _as_correct(adjudicated)
    )
    return resolved[["value", "how"]]


def _image_items(
    entries: list[ModelEntry],
    questions: pd.DataFrame,
    images: pd.DataFrame,
    verdicts: pd.DataFrame,
    basis: str,
) -> pd.DataFrame:
    slots = [
        (e.key, e.label, kind, sample)
        for e in entries
        for kind in PROMPT_KINDS
        for sample in range(e.samples)
    ]
    grid = pd.DataFrame(slots, columns=["entry", "label", "kind", "sample"]).merge(
        questions, how="cross"
    )
    found = images.rename(
        columns={"config_key": "entry", "prompt_kind": "kind", "image_id": "subject_id"}
    )
    frame = _attach(grid, found, ["entry", "question_index", "kind", "sample"])
    frame["modality"] = "igm"
    _apply_image_outcomes(frame, frame["modality"] == "igm", image_values(verdicts, basis))
    return frame


def _attach(grid: pd.DataFrame, found: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Give each slot of ``grid`` the ``subject_id`` and ``status`` of its stored row.

    A left merge on the key columns, done on one integer code per slot: merging on the long
    configuration keys takes seconds at 120,000 slots.
    """
    both = pd.concat([grid[keys], found[keys]], ignore_index=True)
    codes = [pd.factorize(both[k])[0] for k in keys]
    slot = np.ravel_multi_index(codes, [int(c.max()) + 1 for c in codes])
    position = pd.Index(slot[len(grid) :]).get_indexer(pd.Index(slot[: len(grid)]))
    have = position >= 0
    frame = grid.copy()
    for column in ("subject_id", "status"):
        values = np.full(len(grid), "", dtype=object)
        values[have] = found[column].to_numpy(dtype=object)[position[have]]
        frame[column] = values
    return frame


def _blank_cells(frame: pd.DataFrame, imported: set[str]) -> None:
    """An imported model's item without an image is a blank sheet cell, not a failed run."""
    blank = frame["entry"].isin(imported) & (frame["reason"] == "not_generated")
    frame.loc[blank, "reason"] = "blank_in_sheet"


def _apply_image_outcomes(frame: pd.DataFrame, rows: pd.Series, decided: pd.DataFrame) -> None:
    """Fill ``value``, ``outcome`` and ``reason`` of the image items selected by ``rows``."""
    images = frame.loc[rows]
    subject = images["subject_id"]
    position = decided.index.get_indexer(pd.Index(subject))
    found = position >= 0
    value = pd.Series(None, index=images.index, dtype=object)
    value[found] = decided["value"].to_numpy(dtype=object)[position[found]]
    how = pd.Series(None, index=images.index, dtype=object)
    how[found] = decided["how"].to_numpy(dtype=object)[position[found]]
    status = images["status"]
    reason = np.select(
        [
            subject == "",
            status == "failed",
            status == "refused",
            how.isna(),
            value.isna(),
        ],
        ["not_generated", "failed", "refused", "not_rated", "unresolved"],
        "",
    )
    outcome = np.where(reason != "", "missing", value.fillna("").astype(str))
    frame.loc[rows, "value"] = value.where(reason == "", None).astype("object")
    frame.loc[rows, "outcome"] = outcome
    frame.loc[rows, "reason"] = reason


def answer_values(verdicts: pd.DataFrame) -> pd.Series:
    """The option each graded response chose: human audit > extractor > LLM judges.

    Returns:
        The decided value (``a``, ``b`` or ``no_answer``) per ``subject_id``; responses
        that no source decided are absent.
    """
    decided = verdicts[verdicts["value"].isin(DECIDED_ANSWERS)]
    role = roles(decided)
    audit = resolve_votes(
        decided[role == "rater"], _latest_per_subject(decided[role == "adjudication"])
    )
    extractor = _latest_per_subject(decided[role == "extractor"])
    llm = resolve_votes(decided[role == "llm-judge"])
    combined = audit["value"].dropna()
    for fallback in (extractor, llm["value"].dropna()):
        combined = pd.concat([combined, fallback[~fallback.index.isin(combined.index)]])
    return combined.astype("object")


def _answer_items(
    entries: list[ModelEntry],
    questions: pd.DataFrame,
    responses: pd.DataFrame,
    verdicts: pd.DataFrame,
    answers: dict[LabelPolicy, pd.Series],
) -> pd.DataFrame:
    slots = [
        (e.key, e.label, e.label_policy, sample) for e in entries for sample in range(e.samples)
    ]
    grid = pd.DataFrame(slots, columns=["entry", "label", "label_policy", "sample"]).merge(
        questions, how="cross"
    )
    found = responses.rename(columns={"config_key": "entry", "response_id": "subject_id"})
    frame = _attach(grid, found, ["entry", "question_index", "sample"])
    frame["modality"] = "vlm"
    frame["kind"] = "answer"
    chosen = frame["subject_id"].map(answer_values(verdicts))
    graded = frame["subject_id"].isin(set(verdicts["subject_id"]))
    answer = pd.Series("", index=frame.index, dtype="object")
    for policy, series in answers.items():
        mask = frame["label_policy"] == policy
        answer[mask] = frame.loc[mask, "question_index"].map(series).astype("object")
    return _answer_outcomes(frame, chosen, graded, answer).drop(columns=["label_policy"])


def answer_column(items: Items) -> pd.Series:
    """The correct option of each VLM item under its entry's label policy (index as frame)."""
    vlm = items.frame[items.frame["modality"] == "vlm"]
    policies = {e.key: e.label_policy for e in items.entries if e.modality == "vlm"}
    answers = _answers(set(policies.values()), items.catalogue)
    out = pd.Series("", index=vlm.index, dtype="object")
    for policy, series in answers.items():
        mask = vlm["entry"].map(policies) == policy
        out[mask] = vlm.loc[mask, "question_index"].map(series).astype("object")
    return out


def _answer_outcomes(
    frame: pd.DataFrame, chosen: pd.Series, graded: pd.Series, answer: pd.Series
) -> pd.DataFrame:
    """Fill ``value``, ``outcome`` and ``reason`` of answer items from the option chosen."""
    denied = chosen.astype("object").fillna("").astype(str).str.startswith("not_")
    reason = np.select(
        [
            frame["subject_id"] == "",
            frame["status"] == "error",
            chosen.isna() & ~graded,
            chosen.isna(),
            chosen == "no_answer",
            denied & (chosen != "not_" + answer),
        ],
        ["not_answered", "error", "not_graded", "undecided", "no_answer", "other_labels"],
        "",
    )
    frame["value"] = chosen.where(chosen.notna(), None).astype("object")
    frame["outcome"] = np.where(
        reason != "", "missing", np.where(chosen == answer, "correct", "incorrect")
    )
    frame["reason"] = reason
    return frame


def source_answer_items(items: Items, source: str) -> pd.DataFrame:
    """The VLM items as one verdict source alone decides them (e.g. a grading procedure).

    The same slots, answers and outcome rules as :attr:`Items.frame`; only the option chosen
    comes from ``source``'s latest verdict (an item it never judged is ``not_graded``).
    """
    frame = items.frame[items.frame["modality"] == "vlm"].copy()
    verdicts = items.response_verdicts
    own = verdicts[(verdicts["source"] == source) & verdicts["value"].isin(DECIDED_ANSWERS)]
    chosen = frame["subject_id"].map(_latest_per_subject(own))
    graded = frame["subject_id"].isin(set(verdicts.loc[verdicts["source"] == source, "subject_id"]))
    return _answer_outcomes(frame, chosen, graded, answer_column(items))


def category_sort_key(codes: pd.Series) -> pd.Series:
    """Sort categories in AMVICC's order, with ``all`` last."""
    return codes.map(lambda code: CATEGORY_ORDER.get(code, len(CATEGORY_ORDER)))
