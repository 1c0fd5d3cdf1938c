"""Every image slot and every image verdict as integer arrays: what a report reads at scale.

A report over hundreds of thousands of verdicts spends its time making Python objects. These
arrays are read with as few as possible: each image's id once, its configuration, prompt kind,
status, source and value as codes SQLite makes (``CASE``), and a verdict's image as the
image's row number. Only numpy is needed, so a report reads the verdicts in a second process
while the first imports pandas (:mod:`amvicc.report.early`); the arrays pickle at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd


@dataclass(frozen=True, eq=False)
class ImageSlots:
    """The current image of each slot (the newest row per slot), grouped by configuration.

    Attributes:
        image_rows: each image's row number (``rowid``).
        image_ids: each image's id (Python strings).
        config_codes: each image's configuration, as its place in :attr:`config_keys`.
        question_indices: each image's question.
        kind_codes: each image's prompt kind, as its place in :attr:`kinds`.
        samples: each image's sample.
        status_codes: each image's status, as its place in :attr:`statuses`.
        config_keys: the configurations read, in the order their images are.
        kinds: the prompt kinds the codes name.
        statuses: the statuses the codes name.
    """

    image_rows: np.ndarray
    image_ids: np.ndarray
    config_codes: np.ndarray
    question_indices: np.ndarray
    kind_codes: np.ndarray
    samples: np.ndarray
    status_codes: np.ndarray
    config_keys: tuple[str, ...]
    kinds: tuple[str, ...]
    statuses: tuple[str, ...]

    def of(self, config_keys: Sequence[str]) -> ImageSlots:
        """The slots of these configurations only, in this order."""
        import numpy as np

        bounds = np.searchsorted(self.config_codes, np.arange(len(self.config_keys) + 1))
        place = {key: code for code, key in enumerate(self.config_keys)}
        keys = [key for key in dict.fromkeys(config_keys) if key in place]
        taken = np.concatenate(
            [np.zeros(0, dtype=np.int64)]
            + [np.arange(bounds[place[key]], bounds[place[key] + 1]) for key in keys]
        )
        codes = np.zeros(len(self.config_keys), dtype=np.int64)
        codes[[place[key] for key in keys]] = np.arange(len(keys))
        return replace(
            self,
            image_rows=self.image_rows[taken],
            image_ids=self.image_ids[taken],
            config_codes=codes[self.config_codes[taken]],
            question_indices=self.question_indices[taken],
            kind_codes=self.kind_codes[taken],
            samples=self.samples[taken],
            status_codes=self.status_codes[taken],
            config_keys=tuple(keys),
        )

    def frame(self) -> pd.DataFrame:
        """The slots as a table of Python objects (the codes named), in their order.

        Columns ``image_id``, ``config_key``, ``question_index``, ``prompt_kind``, ``sample``,
        ``status`` and ``image_row``: what a report lays out its items with.
        """
        import numpy as np
        import pandas as pd

        def named(names: Sequence[str], codes: np.ndarray) -> pd.Series:
            return pd.Series(np.asarray(names, dtype=object)[codes], dtype=object)

        return pd.DataFrame(
            {
                "image_id": pd.Series(self.image_ids, dtype=object),
                "config_key": named(self.config_keys, self.config_codes),
                "question_index": self.question_indices,
                "prompt_kind": named(self.kinds, self.kind_codes),
                "sample": self.samples,
                "status": named(self.statuses, self.status_codes),
                "image_row": self.image_rows,
            }
        )


@dataclass(frozen=True, eq=False)
class ImageVerdictCodes:
    """Each source's latest verdict on every image (the ``current_verdicts`` rule), oldest first.

    Attributes:
        image_rows: each verdict's image, as its row number (:attr:`ImageSlots.image_rows`).
        source_codes: each verdict's source, as its place in :attr:`sources`.
        value_codes: each verdict's value, as its place in :attr:`values`.
        verdict_ids: each verdict's id.
        sources: the sources the codes name.
        values: the values the codes name.
    """

    image_rows: np.ndarray
    source_codes: np.ndarray
    value_codes: np.ndarray
    verdict_ids: np.ndarray
    sources: tuple[str, ...]
    values: tuple[str, ...]


def newest_per_slot(rows: np.ndarray, *slot: np.ndarray) -> np.ndarray:
    """The places of the newest row (highest ``rows``) of each slot, in their first order.

    The rule of the ``current_images`` view, applied on integers: that view's GROUP BY over
    every image took longer than reading them.
    """
    import numpy as np

    order = np.lexsort((rows, *reversed(slot)))
    last = np.ones(len(order), dtype=bool)
    if len(order) > 1:
        same = np.logical_and.reduce([column[order][1:] == column[order][:-1] for column in slot])
        last[:-1] = ~same
    return np.sort(order[last])


def latest_per_image_source(
    image_rows: np.ndarray, source_codes: np.ndarray, sources: int
) -> np.ndarray:
    """The places of each (image, source)'s last verdict, in their order; rows -1 left out."""
    import numpy as np

    known = np.flatnonzero(image_rows >= 0)
    key = image_rows[known] * max(sources, 1) + source_codes[known]
    _, first = np.unique(key[::-1], return_index=True)  # the last, read backwards
    return known[np.sort(len(key) - 1 - first)]
