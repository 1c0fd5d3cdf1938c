"""Item outcomes as one array: every (model, kind) column × every pair × its two questions.

The item-level sections (concordance, paired comparisons, explicit − implicit gains, prompt
variants) all compare two columns on the same pairs. They read this array instead of the
items table, so that a comparison is a few boolean operations and matrix products whatever
the number of models.

Each model contributes its *first* sample, so that every model has one outcome per item and
two models are compared on the same footing; the spread over samples has its own section.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.items import CATEGORY_ORDER, Items
from amvicc.report.options import MissingPolicy

CORRECT, INCORRECT, MISSING, ABSENT = 1, 0, -1, -2
KIND_ORDER = ("implicit", "explicit", "answer")
BoolArray = np.ndarray[Any, np.dtype[np.bool_]]


@dataclass(frozen=True, eq=False)
class Outcomes:
    """The first sample's outcome of every item, by column, pair and position in the pair.

    Attributes:
        columns: one row per column: ``entry``, ``label``, ``model``, ``modality``,
            ``smoke``, ``kind`` (``implicit``, ``explicit`` or ``answer``), ``variant``.
        pairs: one row per pair, in AMVICC's category order: ``pair``, ``category``,
            ``first`` and ``second`` (the question indices).
        codes: ``int8`` array (columns × pairs × 2): 1 correct, 0 incorrect, -1 missing,
            -2 outside the model's scope (``--smoke-index``).
        missing: the missing-item policy: ``fail`` counts a missing item as wrong,
            ``exclude`` leaves it out, and its pair with it.
    """

    columns: pd.DataFrame
    pairs: pd.DataFrame
    codes: np.ndarray[Any, np.dtype[np.int8]]
    missing: MissingPolicy

    def column(self, entry: str, kind: str) -> int | None:
        """The position of a (model, kind) column, None when it has no items."""
        return self._positions.get((entry, kind))

    @cached_property
    def _positions(self) -> dict[tuple[str, str], int]:
        positions: dict[tuple[str, str], int] = {}
        for position, entry, kind in zip(
            self.columns.index, self.columns["entry"], self.columns["kind"], strict=True
        ):
            positions.setdefault((str(entry), str(kind)), int(position))
        return positions

    def item_correct(self) -> BoolArray:
        """Columns × pairs × 2: the item is correct."""
        return np.asarray(self.codes == CORRECT, dtype=bool)

    def item_counted(self) -> BoolArray:
        """Columns × pairs × 2: the item counts (missing ones only under ``fail``)."""
        if self.missing == "fail":
            return np.asarray(self.codes >= MISSING, dtype=bool)
        return np.asarray(self.codes >= INCORRECT, dtype=bool)

    def pair_correct(self) -> BoolArray:
        """Columns × pairs: both questions of the pair are correct."""
        return np.asarray(self.item_correct().all(axis=2), dtype=bool)

    def pair_counted(self) -> BoolArray:
        """Columns × pairs: the pair counts (both items count)."""
        return np.asarray(self.item_counted().all(axis=2), dtype=bool)

    def category_slices(self) -> list[tuple[str, slice]]:
        """(category, its pairs) for each category present, in AMVICC's order, then ``all``.

        Pairs are laid out category by category, so each category is one slice: a view, not
        a copy, of every per-pair array.
        """
        codes = list(self.pairs["category"])
        out = []
        start = 0
        for position in range(1, len(codes) + 1):
            if position == len(codes) or codes[position] != codes[start]:
                out.append((str(codes[start]), slice(start, position)))
                start = position
        out.append(("all", slice(0, len(codes))))
        return out


def collect_outcomes(items: Items, missing: MissingPolicy) -> Outcomes:
    """Lay the items' first samples out as :class:`Outcomes`."""
    entries = {e.key: e for e in items.entries}
    questions = sorted(items.catalogue, key=lambda q: (CATEGORY_ORDER[q.category.code], q.pair))
    pair_rows: dict[int, list[int]] = {}
    categories: dict[int, str] = {}
    for question in questions:
        pair_rows.setdefault(question.pair, []).append(question.index)
        categories[question.pair] = question.category.code
    pairs = pd.DataFrame(
        {
            "pair": list(pair_rows),
            "category": [categories[p] for p in pair_rows],
            "first": [sorted(v)[0] for v in pair_rows.values()],
            "second": [sorted(v)[-1] for v in pair_rows.values()],
        }
    )
    pair_position: dict[int, int] = {}
    slot_position: dict[int, int] = {}
    for number, members in enumerate(pair_rows.values()):
        for slot, index in enumerate(sorted(members)[:2]):
            pair_position[index] = number
            slot_position[index] = slot
    frame = items.frame
    first = frame[frame["sample"] == 0]
    seen = first[["entry", "kind"]].drop_duplicates()
    order = {e.key: i for i, e in enumerate(items.entries)}
    seen = seen.assign(
        _entry=seen["entry"].map(order), _kind=seen["kind"].map(KIND_ORDER.index)
    ).sort_values(["_entry", "_kind"])
    columns = pd.DataFrame(
        {
            "entry": seen["entry"].to_numpy(dtype=object),
            "label": [entries[k].label for k in seen["entry"]],
            "model": [entries[k].model for k in seen["entry"]],
            "modality": [entries[k].modality for k in seen["entry"]],
            "smoke": [entries[k].smoke for k in seen["entry"]],
            "kind": seen["kind"].to_numpy(dtype=object),
            "variant": [entries[k].variant for k in seen["entry"]],
        }
    )
    codes = np.full((len(columns), len(pairs), 2), ABSENT, dtype=np.int8)
    if len(columns):
        keys = pd.MultiIndex.from_frame(columns[["entry", "kind"]])
        col = keys.get_indexer(pd.MultiIndex.from_frame(first[["entry", "kind"]]))
        pair_number = first["question_index"].map(pair_position)
        known = pair_number.notna().to_numpy()
        slots = first["question_index"].map(slot_position).to_numpy()[known].astype(np.int64)
        outcome = first["outcome"].to_numpy(dtype=object)[known]
        value = np.select(
            [outcome == "correct", outcome == "incorrect"], [CORRECT, INCORRECT], MISSING
        ).astype(np.int8)
        codes[col[known], pair_number.to_numpy()[known].astype(np.int64), slots] = value
    return Outcomes(columns=columns, pairs=pairs, codes=codes, missing=missing)


def considered(columns: pd.DataFrame, modality: str, kind: str) -> pd.DataFrame:
    """The columns a modality's pooled numbers use: its real models, else its smoke models.

    Prompt variants are left out (they are ablations of a model already counted).
    """
    part = columns[
        (columns["modality"] == modality) & (columns["kind"] == kind) & (columns["variant"] == "")
    ]
    real = part[~part["smoke"].astype(bool)]
    return real if not real.empty else part
