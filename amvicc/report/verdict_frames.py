"""The verdicts of a report's items, read from the store as frames.

Each source's latest verdict on the items' images and answers, with the ``role`` of its
source; image verdicts also get the row of their image's item (``item``), found on the
integer codes the store read, so that no 32-character id is hashed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from amvicc.report.verdicts import roles
from amvicc.store import ImageSlots, ImageVerdictCodes, Store, VerdictSubject, source_role


def latest_verdicts(
    store: Store, subject: VerdictSubject, subjects: pd.Series | list[str]
) -> pd.DataFrame:
    """Each source's latest verdict on these subjects (the store's rule), with its ``role``."""
    rows = store.latest_verdict_values(subject, subjects)
    rows["role"] = roles(rows)
    return rows


def image_verdicts_of(
    images: ImageSlots, codes: ImageVerdictCodes
) -> tuple[pd.DataFrame, ImageVerdictCodes]:
    """Each source's latest verdict on these images, with its ``role``, as a frame and as codes.

    Each verdict's image is found through its row number, so no id is hashed; in the codes
    returned, ``image_rows`` is the image's place in ``images``. Verdicts on other images
    (superseded ones, other models') are left out.
    """
    rows = images.image_rows
    place = np.full(max(int(rows.max(initial=-1)), int(codes.image_rows.max(initial=-1))) + 1, -1)
    place[rows] = np.arange(len(rows))
    positions = place[codes.image_rows]
    kept = np.flatnonzero(positions >= 0)
    coded = replace(
        codes,
        image_rows=positions[kept],
        source_codes=codes.source_codes[kept],
        value_codes=codes.value_codes[kept],
        verdict_ids=codes.verdict_ids[kept],
    )
    sources = np.asarray(coded.sources, dtype=object)
    verdicts = pd.DataFrame(
        {
            "subject_id": _objects(images.image_ids[coded.image_rows]),
            "source": _objects(sources[coded.source_codes]),
            "value": _objects(np.asarray(coded.values, dtype=object)[coded.value_codes]),
            "verdict_id": coded.verdict_ids,
        }
    )
    # Each source's role, looked up once per source rather than hashed per verdict.
    role_of_source = np.array([source_role(str(s)) for s in sources], dtype=object)
    verdicts["role"] = _objects(role_of_source[coded.source_codes])
    return verdicts, coded


def image_items(grid_rows: np.ndarray, coded: ImageVerdictCodes) -> np.ndarray:
    """Per image verdict, the row of the grid that holds its image (-1: none does).

    Args:
        grid_rows: per grid row, its image's place in the images (-1: none).
        coded: the verdicts, each one's image given as its place in the images.
    """
    have = grid_rows >= 0
    size = max(int(grid_rows.max(initial=-1)), int(coded.image_rows.max(initial=-1))) + 1
    item_of_image = np.full(size, -1, dtype=np.int64)
    item_of_image[grid_rows[have]] = np.flatnonzero(have)
    items: np.ndarray = item_of_image[coded.image_rows]
    return items


def _objects(values: np.ndarray) -> pd.Series:
    """A column of Python strings as they are (not converted to pandas' string type)."""
    return pd.Series(values, dtype=object, copy=False)
