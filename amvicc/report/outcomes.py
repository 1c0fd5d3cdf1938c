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
from amvicc.report.units import key_codes

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
    keys = key_codes(frame)
    first = frame["sample"].to_numpy() == 0
    kinds = len(keys.kinds)
    combination = keys.entry[first] * kinds + keys.kind[first]
    seen = np.unique(combination)  # the (entry, kind) codes with a first sample
    seen_entries = keys.entries[seen // kinds]
    seen_kinds = keys.kinds[seen % kinds]
    order = {e.key: i for i, e in enumerate(items.entries)}
    ranked = np.lexsort(
        (
            [KIND_ORDER.index(str(kind)) for kind in seen_kinds],
            [order[str(entry)] for entry in seen_entries],
        )
    )
    chosen = [entries[str(k)] for k in seen_entries[ranked]]
    columns = pd.DataFrame(
        {
            "entry": seen_entries[ranked],
            "label": [e.label for e in chosen],
            "model": [e.model for e in chosen],
            "modality": [e.modality for e in chosen],
            "smoke": [e.smoke for e in chosen],
            "kind": seen_kinds[ranked],
            "variant": [e.variant for e in chosen],
        }
    )
    codes = np.full((len(columns), len(pairs), 2), ABSENT, dtype=np.int8)
    if len(columns):
        position = np.empty(len(seen), dtype=np.int64)
        position[ranked] = np.arange(len(seen))
        col = position[np.searchsorted(seen, combination)]
        question = frame["question_index"].to_numpy(dtype=np.int64)[first]
        size = max(int(question.max(initial=0)), max(pair_position, default=0)) + 1
        pair_of = np.full(size, -1, dtype=np.int64)
        slot_of = np.zeros(size, dtype=np.int64)
        pair_of[list(pair_position)] = list(pair_position.values())
        slot_of[list(slot_position)] = list(slot_position.values())
        inside = question >= 0
        pair_number = np.where(inside, pair_of[np.where(inside, question, 0)], -1)
        known = pair_number >= 0
        outcome = frame["outcome"]
        correct = (outcome == "correct").to_numpy(dtype=bool)[first][known]
        incorrect = (outcome == "incorrect").to_numpy(dtype=bool)[first][known]
        value = np.select([correct, incorrect], [CORRECT, INCORRECT], MISSING).astype(np.int8)
        codes[col[known], pair_number[known], slot_of[question[known]]] = value
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
