"""The units the accuracies count and resample: items grouped on integer codes.

Every accuracy of the report sums (model, kind, category, pair, sample) slots: the correct and
counted items of a slot, whether its pair is right. The items frame holds tens of thousands of
rows whose keys are long strings (configuration keys): they are factorized once into integer
codes, and every sum is a ``bincount`` over a combined integer key instead of a group-by
hashing the strings again. Intervals: percentile bootstrap over *pairs* (the two items of a
pair share a question, so they are resampled together), seeded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from amvicc.report.codes import derived
from amvicc.report.items import Items
from amvicc.report.options import ReportOptions
from amvicc.report.stats import Resampler

ALL = "all"


@dataclass(frozen=True)
class Units:
    """One entry per (model, kind, category, pair), summed over samples: the bootstrap's unit.

    ``group`` numbers the (model, kind, category) of each unit, its ``category`` ``all`` for
    the copy of every unit in its model's and kind's ``all`` group (:func:`item_units`); ``sums``
    holds ``ic`` / ``it`` (correct and counted items), ``pc`` / ``pt`` (correct and counted
    pairs, one per sample), ``im`` (missing items) and ``pm`` (pairs with a missing item).
    """

    pair: np.ndarray[Any, Any]
    group: np.ndarray[Any, Any]
    sums: dict[str, np.ndarray[Any, Any]]
    group_entry: np.ndarray[Any, Any]
    group_kind: np.ndarray[Any, Any]
    group_category: np.ndarray[Any, Any]
    entries: np.ndarray[Any, Any]
    kinds: np.ndarray[Any, Any]
    categories: np.ndarray[Any, Any]


@dataclass(frozen=True)
class Slots:
    """The items per (model, kind, category, pair, sample) slot: integer codes and counts.

    ``entry`` / ``kind`` / ``category`` index ``entries`` / ``kinds`` / ``categories`` (in
    the order the items frame first shows them); ``correct``, ``missing`` and ``items`` count
    the slot's items (two for a whole pair).
    """

    entry: np.ndarray[Any, Any]
    kind: np.ndarray[Any, Any]
    category: np.ndarray[Any, Any]
    pair: np.ndarray[Any, Any]
    sample: np.ndarray[Any, Any]
    correct: np.ndarray[Any, Any]
    missing: np.ndarray[Any, Any]
    items: np.ndarray[Any, Any]
    entries: np.ndarray[Any, Any]
    kinds: np.ndarray[Any, Any]
    categories: np.ndarray[Any, Any]

    def counts(self, options: ReportOptions) -> dict[str, np.ndarray[Any, Any]]:
        """Per slot: what each metric counts under the missing-item policy.

        ``ic`` / ``it``: correct and counted items; ``pc`` / ``pt``: the pair right and
        counted; ``im``: missing items; ``pm``: the pair has a missing item.
        """
        c, m, n = self.correct, self.missing, self.items
        exclude = options.missing == "exclude"
        return {
            "ic": c,
            "it": n - m if exclude else n,
            "pc": ((c == n) & (n == 2)).astype(np.int64),
            "pt": (m == 0).astype(np.int64) if exclude else np.ones(len(n), dtype=np.int64),
            "im": m,
            "pm": (m > 0).astype(np.int64),
        }


def codes(column: pd.Series) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A column's integer codes and its distinct values, in the order first met."""
    found, uniques = pd.factorize(column)
    return np.asarray(found, dtype=np.int64), np.asarray(uniques, dtype=object)


@dataclass(frozen=True)
class KeyCodes:
    """An items frame's ``entry``, ``kind`` and ``category`` as codes and distinct values."""

    entry: np.ndarray[Any, Any]
    entries: np.ndarray[Any, Any]
    kind: np.ndarray[Any, Any]
    kinds: np.ndarray[Any, Any]
    category: np.ndarray[Any, Any]
    categories: np.ndarray[Any, Any]


def key_codes(frame: pd.DataFrame) -> KeyCodes:
    """The frame's key columns as codes (factorized once per frame)."""

    def make() -> KeyCodes:
        entry, entries = codes(frame["entry"])
        kind, kinds = codes(frame["kind"])
        category, categories = codes(frame["category"])
        return KeyCodes(entry, entries, kind, kinds, category, categories)

    return derived(frame, "keys", make)


def combined(
    *columns: np.ndarray[Any, Any], radices: list[int] | None = None
) -> tuple[np.ndarray[Any, Any], list[int]]:
    """One integer key per row of several non-negative integer columns, and their radices.

    The radices are each column's largest value plus one unless given.
    """
    if radices is None:
        radices = [int(c.max(initial=0)) + 1 for c in columns]
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column, radix in zip(columns, radices, strict=True):
        key = key * radix + column
    return key, radices


def split(key: np.ndarray[Any, Any], radices: list[int]) -> list[np.ndarray[Any, Any]]:
    """The columns of :func:`combined` keys."""
    out = []
    for radix in reversed(radices):
        out.append(key % radix)
        key = key // radix
    return out[::-1]


def item_slots(items: Items) -> Slots:
    """:class:`Slots` of the items frame (made once per frame)."""
    return derived(items.frame, "slots", lambda: _slots(items.frame))


def _slots(f: pd.DataFrame) -> Slots:
    keys_of = key_codes(f)
    entry, kind, category = keys_of.entry, keys_of.kind, keys_of.category
    entries, kinds, categories = keys_of.entries, keys_of.kinds, keys_of.categories
    pair = f["pair"].to_numpy(dtype=np.int64)
    low = int(pair.min(initial=0))
    outcome = f["outcome"]
    key, radices = combined(entry, kind, category, pair - low, f["sample"].to_numpy(dtype=np.int64))
    keys, slot = np.unique(key, return_inverse=True)
    size = len(keys)
    e, k, c, p, sample = split(keys, radices)
    return Slots(
        entry=e,
        kind=k,
        category=c,
        pair=p + low,
        sample=sample,
        correct=np.bincount(
            slot, weights=(outcome == "correct").to_numpy(dtype=bool), minlength=size
        ).astype(np.int64),
        missing=np.bincount(
            slot, weights=(outcome == "missing").to_numpy(dtype=bool), minlength=size
        ).astype(np.int64),
        items=np.bincount(slot, minlength=size),
        entries=entries,
        kinds=kinds,
        categories=categories,
    )


def item_units(items: Items, options: ReportOptions) -> Units:
    """:class:`Units` of the items: their slots summed over samples, then the ``all`` copy."""
    slots = item_slots(items)
    per_slot = slots.counts(options)
    categories = len(slots.categories)
    low = int(slots.pair.min(initial=0))
    key, radices = combined(slots.entry, slots.kind, slots.category, slots.pair - low)
    unit_keys, unit = np.unique(key, return_inverse=True)
    sums = {
        name: np.bincount(unit, weights=x, minlength=len(unit_keys)).astype(np.int64)
        for name, x in per_slot.items()
    }
    entry, kind, category, pair = split(unit_keys, radices)
    unit_group = (entry * len(slots.kinds) + kind) * categories + category
    all_group = unit_group // categories  # (entry, kind)
    groups, group = np.unique(
        np.concatenate([unit_group * 2, all_group * 2 + 1]), return_inverse=True
    )
    is_all = groups % 2 == 1
    halves = groups // 2
    entry_kind = np.where(is_all, halves, halves // categories)
    return Units(
        pair=np.concatenate([pair + low] * 2),
        group=group,
        sums={name: np.concatenate([x, x]) for name, x in sums.items()},
        group_entry=entry_kind // len(slots.kinds),
        group_kind=entry_kind % len(slots.kinds),
        group_category=np.where(is_all, categories, halves % categories),
        entries=slots.entries,
        kinds=slots.kinds,
        categories=np.append(slots.categories, ALL).astype(object),
    )


def pair_units(items: Items, options: ReportOptions) -> pd.DataFrame:
    """One row per (model, kind, category, pair), summed over samples: the bootstrap's unit.

    Columns ``ic`` / ``it``: correct items and counted items; ``pc`` / ``pt``: correct pairs
    and counted pairs (one pair per sample); ``im``: missing items; ``pm``: pairs (per sample)
    with a missing item.
    """
    units = item_units(items, options)
    real = units.group_category[units.group] < len(units.categories) - 1  # not the ``all`` copy
    group = units.group[real]
    return pd.DataFrame(
        {
            "entry": units.entries[units.group_entry[group]],
            "kind": units.kinds[units.group_kind[group]],
            "category": units.categories[units.group_category[group]],
            "pair": units.pair[real],
            **{name: x[real] for name, x in units.sums.items()},
        }
    )


def bootstrap_intervals(units: pd.DataFrame, options: ReportOptions) -> pd.DataFrame:
    """Percentile bootstrap intervals, resampling pairs within each (model, kind, category).

    Each group of n pairs is resampled ``options.bootstrap`` times with multinomial weights
    drawn from a generator seeded by ``(options.seed, n)`` (:class:`Resampler`'s): the same
    data and seed give the same interval whatever else is in the report.

    Args:
        units: one row per (model, kind, category, pair), as :func:`pair_units` gives.
        options: resamples, seed and confidence.

    Returns:
        Index ``(entry, kind, category)``; ``ind_low, ind_high, pair_low, pair_high``.
    """
    keys = ["entry", "kind", "category"]
    group, firsts = pd.MultiIndex.from_frame(units[keys]).factorize()
    sums = {name: units[name].to_numpy(dtype=np.int64) for name in ("ic", "it", "pc", "pt")}
    ind, pair = resampled_intervals(units["pair"].to_numpy(), np.asarray(group), sums, options)
    return pd.DataFrame(
        {"ind_low": ind[0], "ind_high": ind[1], "pair_low": pair[0], "pair_high": pair[1]},
        index=firsts,
    )


def resampled_intervals(
    pair: np.ndarray[Any, Any],
    group: np.ndarray[Any, Any],
    sums: dict[str, np.ndarray[Any, Any]],
    options: ReportOptions,
    resampler: Resampler | None = None,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """:func:`bootstrap_intervals` on arrays: ``(low, high)`` × groups, individual and pair.

    The groups of one size are resampled together, each group's pairs in order.
    """
    groups = int(group.max()) + 1 if len(group) else 0
    out = (np.full((2, groups), np.nan), np.full((2, groups), np.nan))
    if resampler is None:
        resampler = Resampler(options.bootstrap, options.seed, options.confidence)
    if options.bootstrap <= 0 or not groups:
        return out
    ordered = np.lexsort((pair, group))
    sizes = np.bincount(group, minlength=groups)
    for n in np.unique(sizes[sizes > 0]).tolist():
        chosen = np.flatnonzero(sizes == n)
        rows = ordered[np.isin(group[ordered], chosen)]
        for which, (correct, total) in enumerate((("ic", "it"), ("pc", "pt"))):
            # groups × resamples: whole numbers, the same in any order of summation
            num = resampler.sums(sums[correct][rows].reshape(len(chosen), n))
            den = resampler.sums(sums[total][rows].reshape(len(chosen), n))
            assert num is not None
            assert den is not None
            ratio = np.divide(num, den, out=np.full_like(num, np.nan), where=den > 0)
            # A resample with nothing counted (exclude policy) is NaN, and left out.
            out[which][:, chosen] = resampler.interval_rows(ratio)
    return out
