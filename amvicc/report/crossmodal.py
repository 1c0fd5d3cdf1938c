"""Item-level cross-modal analysis: do VLMs and image models fail on the *same* pairs?

AMVICC compares the modalities per category. Here each MMVP pair is one observation: the VLM's
pair outcome (both answers right) against the image model's *explicit* pair outcome (both
images right — the explicit prompt names the feature the VLM is asked about). For every VLM ×
image-model combination, and for the two modalities pooled, per category and overall:

- the 2×2 table (both pass, only the VLM passes, only the image model passes, both fail);
- percent agreement, Cohen's κ and φ, each with a percentile bootstrap interval over pairs;
- the odds ratio ``ad / bc`` with Fisher's exact p-value (does failing in one modality go
  with failing in the other?).

*Pooled*: a modality passes a pair when more than half of its models pass it (a tie is a
failure; a pair counts when it counts for all of them), prompt variants left out. The report
computes this for its real models and, apart, for its smoke-test models (two parts, see
:mod:`amvicc.report.section`), so the two are never pooled together. With one model, the
pooled modality is that model.
*Shared blind spots*: the pairs every pooled model of both modalities fails.

Every model contributes its first sample (:mod:`amvicc.report.outcomes`); a pair counts for a
combination when it counts for both models (under ``--missing exclude`` a pair with a missing
item leaves it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.gallery import _verdict_lines, cut, embedded_image
from amvicc.report.items import Items
from amvicc.report.outcomes import MISSING, Outcomes, considered
from amvicc.report.stats import Resampler, fisher_exact_many, kappa_phi
from amvicc.store import Store

POOLED_VLM = "VLMs pooled"
POOLED_IGM = "IGMs pooled"
CONCORDANCE_COLUMNS = [
    "vlm",
    "igm",
    "vlm_entry",
    "igm_entry",
    "scope",
    "smoke",
    "category",
    "pairs",
    "missing",
    "both_pass",
    "vlm_only",
    "igm_only",
    "both_fail",
    "agreement",
    "agreement_low",
    "agreement_high",
    "kappa",
    "kappa_low",
    "kappa_high",
    "phi",
    "phi_low",
    "phi_high",
    "odds_ratio",
    "fisher_p",
]


@dataclass(frozen=True)
class _Side:
    """One side of the comparison: a model or a pooled modality, as pass / counted per pair."""

    label: str
    entry: str
    smoke: bool
    passed: np.ndarray[Any, np.dtype[np.float64]]
    counted: np.ndarray[Any, np.dtype[np.float64]]
    missing: np.ndarray[Any, np.dtype[np.bool_]]


def _sides(outcomes: Outcomes, modality: str, kind: str, pooled_label: str) -> list[_Side]:
    columns = outcomes.columns
    chosen = columns[(columns["modality"] == modality) & (columns["kind"] == kind)]
    correct = outcomes.pair_correct()
    counted = outcomes.pair_counted()
    missing = (outcomes.codes == MISSING).any(axis=2)
    sides = [
        _Side(
            label=str(row.label),
            entry=str(row.entry),
            smoke=bool(row.smoke),
            passed=(correct[i] & counted[i]).astype("float64"),
            counted=counted[i].astype("float64"),
            missing=missing[i],
        )
        for i, row in zip(chosen.index, chosen.itertuples(), strict=True)
    ]
    pool = considered(columns, modality, kind)
    if len(pool):
        rows = pool.index.to_numpy()
        votes = (correct[rows] & counted[rows]).sum(axis=0)
        every = counted[rows].all(axis=0)
        sides.append(
            _Side(
                label=f"{pooled_label} ({len(rows)} model{'' if len(rows) == 1 else 's'})",
                entry="",
                smoke=bool(pool["smoke"].astype(bool).all()),
                passed=((2 * votes > len(rows)) & every).astype("float64"),
                counted=every.astype("float64"),
                missing=missing[rows].any(axis=0),
            )
        )
    return sides


def concordance_table(outcomes: Outcomes, resampler: Resampler) -> pd.DataFrame:
    """The 2×2 table and its statistics for every VLM × image model, per category and ``all``.

    Returns:
        :data:`CONCORDANCE_COLUMNS`; ``scope`` is ``model`` or ``pooled``; ``vlm_only``
        counts pairs only the VLM passes, ``igm_only`` pairs only the image model passes;
        ``missing`` the pairs with a missing item on either side (failures under ``fail``,
        left out of ``pairs`` under ``exclude``).
    """
    vlms = _sides(outcomes, "vlm", "answer", POOLED_VLM)
    igms = _sides(outcomes, "igm", "explicit", POOLED_IGM)
    combos = [
        (v, i)
        for v in vlms
        for i in igms
        if (v.entry == "") == (i.entry == "")  # model × model, and pooled × pooled
    ]
    if not combos:
        return pd.DataFrame(columns=CONCORDANCE_COLUMNS)
    v_pass = np.stack([v.passed for v, _ in combos])
    v_count = np.stack([v.counted for v, _ in combos])
    i_pass = np.stack([i.passed for _, i in combos])
    i_count = np.stack([i.counted for _, i in combos])
    both = v_pass * i_pass
    v_side = v_pass * i_count
    i_side = v_count * i_pass
    common = v_count * i_count
    gaps = np.stack([v.missing | i.missing for v, i in combos])
    blocks: list[dict[str, Any]] = []
    for category, part in outcomes.category_slices():
        cells = [x[:, part] for x in (both, v_side, i_side, common)]
        a, vp, ip, n = (x.sum(axis=1) for x in cells)
        b, c = vp - a, ip - a
        d = n - a - b - c
        agreement, kappa, phi = kappa_phi(a, b, c, d)
        odds, fisher = fisher_exact_many(
            np.stack([np.stack([a, b], axis=1), np.stack([c, d], axis=1)], axis=1)
        )
        blocks.append(
            {
                "category": np.full(len(combos), category, dtype=object),
                "pairs": n,
                "missing": gaps[:, part].sum(axis=1),
                "both_pass": a,
                "vlm_only": b,
                "igm_only": c,
                "both_fail": d,
                "agreement": agreement,
                "kappa": kappa,
                "phi": phi,
                "odds_ratio": odds,
                "fisher_p": np.where(n != 0, fisher, np.nan),
                **_bootstrap(resampler, cells),
            }
        )
    count = len(blocks)
    table: dict[str, Any] = {
        "vlm": [v.label for v, _ in combos] * count,
        "igm": [i.label for _, i in combos] * count,
        "vlm_entry": [v.entry for v, _ in combos] * count,
        "igm_entry": [i.entry for _, i in combos] * count,
        "scope": ["pooled" if v.entry == "" else "model" for v, _ in combos] * count,
        "smoke": [v.smoke or i.smoke for v, i in combos] * count,
    }
    for name in blocks[0]:
        values = np.concatenate([block[name] for block in blocks])
        table[name] = values.astype(np.int64) if name in _COUNTS else values
    return pd.DataFrame(table)[CONCORDANCE_COLUMNS]


_COUNTS = ("pairs", "missing", "both_pass", "vlm_only", "igm_only", "both_fail")


def _bootstrap(
    resampler: Resampler, cells: list[np.ndarray[Any, np.dtype[np.float64]]]
) -> dict[str, np.ndarray[Any, np.dtype[np.float64]]]:
    """Intervals of agreement, κ and φ from one resampling matrix of the category's pairs."""
    names = ("agreement", "kappa", "phi")
    size = cells[0].shape[0]
    weights = resampler.weights(cells[0].shape[1])
    if weights is None:
        nan = np.full(size, np.nan)
        return {f"{name}_{end}": nan for name in names for end in ("low", "high")}
    # combinations × resamples: each row is one combination's resamples, as intervals read
    # them; whole numbers (Resampler.sums)
    a, vp, ip = (_sums(resampler, x) for x in cells[:3])
    common = cells[3]
    if common.size and (common == common.flat[0]).all():  # every pair counts for every one
        n = np.full(a.shape, float(common.flat[0]) * common.shape[1])
    else:
        n = _sums(resampler, common)
    b, c = vp - a, ip - a
    statistics = kappa_phi(a, b, c, n - a - b - c)
    out = {}
    for name, values in zip(names, statistics, strict=True):
        low, high = resampler.interval_rows(values)
        out[f"{name}_low"], out[f"{name}_high"] = low, high
    return out


def _sums(resampler: Resampler, cells: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    sums = resampler.sums(cells)
    assert sums is not None  # only called with a bootstrap
    return sums


# --- shared blind spots ----------------------------------------------------------------------


BLIND_SPOT_COLUMNS = ["pair", "category", "first", "second", "vlms", "igms"]


def blind_spots(outcomes: Outcomes) -> pd.DataFrame:
    """The pairs that every pooled VLM and every pooled image model (explicit) fails.

    A pair qualifies only when it counts for every one of those models: a model that has no
    outcome there cannot be said to fail it.

    Returns:
        :data:`BLIND_SPOT_COLUMNS`; ``vlms`` / ``igms`` list the models' labels.
    """
    vlm = considered(outcomes.columns, "vlm", "answer")
    igm = considered(outcomes.columns, "igm", "explicit")
    if vlm.empty or igm.empty:
        return pd.DataFrame(columns=BLIND_SPOT_COLUMNS)
    rows = np.concatenate([vlm.index.to_numpy(), igm.index.to_numpy()])
    correct = outcomes.pair_correct()[rows]
    counted = outcomes.pair_counted()[rows]
    failed = (counted & ~correct).all(axis=0)
    chosen = outcomes.pairs[failed]
    return pd.DataFrame(
        {
            "pair": chosen["pair"].to_numpy(),
            "category": chosen["category"].to_numpy(),
            "first": chosen["first"].to_numpy(),
            "second": chosen["second"].to_numpy(),
            "vlms": [list(vlm["label"])] * len(chosen),
            "igms": [list(igm["label"])] * len(chosen),
        },
        columns=BLIND_SPOT_COLUMNS,
    )


@dataclass(frozen=True)
class Evidence:
    """What one model made for one question of a blind spot.

    Attributes:
        thumbnail: an embedded image (``data:`` URI), None when there is no file.
        note: why there is no thumbnail.
        text: the image's prompt, or the VLM's raw reply.
        verdicts: ``source: value (comment)`` lines.
    """

    label: str
    modality: str
    question_index: int
    thumbnail: str | None
    note: str | None
    text: str | None
    verdicts: tuple[str, ...]


@dataclass(frozen=True)
class BlindSpot:
    """A shared blind spot with what each model made for it."""

    pair: int
    category: str
    question: str
    options: str
    answers: str
    evidence: tuple[Evidence, ...]


def blind_spot_evidence(
    store: Store, items: Items, spots: pd.DataFrame, *, limit: int
) -> list[BlindSpot]:
    """The first ``limit`` blind spots with each pooled model's images or replies.

    Images are the explicit ones, as embedded thumbnails with their prompt and verdicts;
    replies are the VLM's raw text.
    """
    if spots.empty or limit <= 0:
        return []
    shown = spots.head(limit)
    labels = set(shown["vlms"].iloc[0]) | set(shown["igms"].iloc[0])
    indices = set(shown["first"]) | set(shown["second"])
    f = items.frame
    rows = f[
        (f["sample"] == 0)
        & f["label"].isin(labels)
        & f["question_index"].isin(indices)
        & f["kind"].isin(("explicit", "answer"))
        & (f["subject_id"] != "")
    ]
    subjects = [str(s) for s in rows["subject_id"]]
    modalities = list(rows["modality"])
    images = store.images_by_id(
        [s for s, m in zip(subjects, modalities, strict=True) if m == "igm"]
    )
    replies = store.responses_by_id(
        [s for s, m in zip(subjects, modalities, strict=True) if m == "vlm"]
    )
    verdicts = _verdict_lines(store, subjects)
    found = {
        (str(label), int(index)): subject
        for label, index, subject in zip(
            rows["label"], rows["question_index"], subjects, strict=True
        )
    }
    vlm_labels = set(shown["vlms"].iloc[0])
    order = list(shown["igms"].iloc[0]) + list(shown["vlms"].iloc[0])
    out = []
    for spot in shown.to_dict(orient="records"):
        first, second_index = int(spot["first"]), int(spot["second"])
        question = items.catalogue.question(first)
        evidence = []
        for label in order:
            for index in (first, second_index):
                subject = found.get((label, index), "")
                image = images.get(subject)
                reply = replies.get(subject)
                text: str | None
                if image is not None:
                    thumbnail, note = embedded_image(store, image.path)
                    text = image.prompt
                else:
                    thumbnail, note = None, None
                    text = cut(reply.text) if reply is not None else None
                evidence.append(
                    Evidence(
                        label=label,
                        modality="vlm" if label in vlm_labels else "igm",
                        question_index=index,
                        thumbnail=thumbnail,
                        note=note,
                        text=text,
                        verdicts=tuple(verdicts.get(subject, ())),
                    )
                )
        second = items.catalogue.question(second_index)
        out.append(
            BlindSpot(
                pair=int(spot["pair"]),
                category=str(spot["category"]),
                question=question.text,
                options=question.options_text,
                answers=f"#{question.index}: ({question.answer}), #{second.index}: "
                f"({second.answer})",
                evidence=tuple(evidence),
            )
        )
    return out
