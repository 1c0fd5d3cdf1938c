"""Raster pictures drawn straight from arrays (numpy and Pillow, no plotting library).

The questions × models heatmap has one cell per item and model — tens of thousands at fifty
models — so it is one small palette PNG, its labels laid out in HTML beside it at the same
pixel pitch (:func:`cell_strip`). Drawing it takes milliseconds where a plotting library takes
seconds.
"""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Strip:
    """A picture of rows × columns of coloured cells, and where its column groups lie.

    Attributes:
        uri: the PNG as a ``data:`` URI.
        width: its width in pixels (shown at that size, so labels line up).
        height: its height in pixels.
        row_height: the pixels of one row (the labels' line height).
        groups: (label, title, left, width) of each group of columns, in pixels.
    """

    uri: str
    width: int
    height: int
    row_height: int
    groups: tuple[tuple[str, str, int, int], ...]


def png_uri(pixels: np.ndarray[Any, Any], palette: list[tuple[int, int, int]]) -> str:
    """A palette PNG of ``pixels`` (palette indices, rows × columns) as a ``data:`` URI."""
    from PIL import Image

    image = Image.fromarray(pixels.astype(np.uint8), mode="P")
    image.putpalette([value for colour in palette for value in colour])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def cell_strip(
    codes: np.ndarray[Any, Any],
    groups: list[tuple[str, str, int]],
    palette: list[tuple[int, int, int]],
    *,
    width: int = 960,
    row_height: int = 14,
    gap: int = 6,
) -> Strip:
    """Rows × columns of cells coloured by palette index, columns in groups with gaps between.

    Args:
        codes: palette indices, rows × columns (index 0 is also the gaps' colour).
        groups: (label, title, number of columns) of consecutive column groups.
        palette: the colours of the indices.
        width: about how wide the picture may be; a column is 2 to 8 pixels.
        row_height: the pixels of a row; one pixel of it separates rows.
        gap: the pixels between two groups.
    """
    rows, columns = codes.shape
    space = width - gap * max(len(groups) - 1, 0)
    cell = int(max(2, min(8, space // max(columns, 1))))
    starts = []
    left = 0
    for _, _, count in groups:
        starts.append(left)
        left += count * cell + gap
    total = max(left - gap, 1)
    pixels = np.zeros((rows * row_height, total), dtype=np.uint8)
    column = 0
    for start, (_, _, count) in zip(starts, groups, strict=True):
        block = codes[:, column : column + count]
        wide = np.repeat(np.repeat(block, row_height, axis=0), cell, axis=1)
        wide[row_height - 1 :: row_height, :] = 0  # a white line between rows
        pixels[:, start : start + count * cell] = wide
        column += count
    return Strip(
        uri=png_uri(pixels, palette),
        width=total,
        height=rows * row_height,
        row_height=row_height,
        groups=tuple(
            (label, title, start, count * cell)
            for start, (label, title, count) in zip(starts, groups, strict=True)
        ),
    )
