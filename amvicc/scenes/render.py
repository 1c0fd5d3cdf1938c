"""Scene objects and their drawing: polygons, discs and text, without antialiasing.

Every object is drawn with one flat fill, so the manifest can state exactly what is where: an
object's declared colour is the colour of the pixel at the centre of its bounding box (the
shapes are designed to cover their own centre), and text is drawn with the bundled DejaVu Sans
Bold, never a system font, with antialiasing off so the pixels do not depend on the rasteriser's
grey levels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray
    from PIL import ImageFont

FONT_FILE = Path(__file__).resolve().parent / "fonts" / "DejaVuSans-Bold.ttf"

Point = tuple[int, int]
Color = tuple[int, int, int]


@dataclass(frozen=True)
class SceneObject:
    """One drawn object.

    Attributes:
        kind: what it is (``circle``, ``arrow``, ``lid``, ``sign``, ``text``, ...).
        color: the fill drawn, as RGB.
        points: the polygon's corners, or, for discs, the two corners of the bounding box.
        disc: drawn as an ellipse inside ``points``' box instead of a polygon.
        text: for text objects, the word; ``points`` is then where it is drawn from.
        font_size: for text objects.
        text_box: for text objects, the glyphs' bounding box.
    """

    kind: str
    color: Color
    points: tuple[Point, ...]
    disc: bool = False
    text: str | None = None
    font_size: int = 0
    text_box: tuple[int, int, int, int] | None = None

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` in pixels, inclusive."""
        if self.text_box is not None:
            return self.text_box
        xs = [p[0] for p in self.points]
        ys = [p[1] for p in self.points]
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def centre(self) -> Point:
        """The centre of the bounding box (where the declared fill is drawn)."""
        x0, y0, x1, y1 = self.bbox
        return (x0 + x1) // 2, (y0 + y1) // 2

    def manifest(self) -> dict[str, Any]:
        """The object as ``scenes.jsonl`` writes it."""
        entry: dict[str, Any] = {
            "kind": self.kind,
            "color": list(self.color),
            "bbox": list(self.bbox),
        }
        if self.text is not None:
            entry["text"] = self.text
        return entry


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    from PIL import ImageFont

    # The basic layout everywhere: whether Pillow has libraqm must not move a glyph.
    return ImageFont.truetype(str(FONT_FILE), size=size, layout_engine=ImageFont.Layout.BASIC)


def text_object(kind: str, color: Color, text: str, font_size: int, centre: Point) -> SceneObject:
    """A word drawn with the bundled font, centred on ``centre``."""
    left, top, right, bottom = (int(v) for v in _font(font_size).getbbox(text))
    x = centre[0] - (left + right) // 2
    y = centre[1] - (top + bottom) // 2
    box = (x + left, y + top, x + right - 1, y + bottom - 1)
    return SceneObject(kind, color, ((x, y),), text=text, font_size=font_size, text_box=box)


def polygon(kind: str, color: Color, points: list[tuple[float, float]]) -> SceneObject:
    """A filled polygon, corners rounded to whole pixels."""
    return SceneObject(kind, color, tuple((round(x), round(y)) for x, y in points))


def disc(kind: str, color: Color, centre: tuple[float, float], radius: float) -> SceneObject:
    """A filled circle."""
    cx, cy = round(centre[0]), round(centre[1])
    r = max(1, round(radius))
    return SceneObject(kind, color, ((cx - r, cy - r), (cx + r, cy + r)), disc=True)


def rectangle(kind: str, color: Color, x0: float, y0: float, x1: float, y1: float) -> SceneObject:
    """A filled axis-aligned rectangle."""
    return polygon(kind, color, [(x0, y0), (x1, y0), (x1, y1), (x0, y1)])


def rotated(
    points: list[tuple[float, float]], pivot: tuple[float, float], degrees: float
) -> list[tuple[float, float]]:
    """``points`` turned by ``degrees`` about ``pivot`` (positive turns clockwise on screen)."""
    angle = math.radians(degrees)
    cos, sin = math.cos(angle), math.sin(angle)
    px, py = pivot
    return [
        (px + (x - px) * cos - (y - py) * sin, py + (x - px) * sin + (y - py) * cos)
        for x, y in points
    ]


def shape(kind: str, color: Color, centre: tuple[float, float], radius: float) -> SceneObject:
    """One of the plain shapes used as targets and distractors, about ``radius`` in size.

    Every one covers the centre of its own bounding box.
    """
    cx, cy = centre
    r = radius
    if kind == "circle":
        return disc(kind, color, centre, r)
    if kind == "square":
        s = r * 0.85
        return rectangle(kind, color, cx - s, cy - s, cx + s, cy + s)
    if kind == "diamond":
        return polygon(kind, color, [(cx, cy - r), (cx + r, cy), (cx, cy + r), (cx - r, cy)])
    if kind in ("triangle", "hexagon"):
        sides = 3 if kind == "triangle" else 6
        start = -90 if kind == "triangle" else 0
        corners = [
            (
                cx + r * math.cos(math.radians(start + i * 360 / sides)),
                cy + r * math.sin(math.radians(start + i * 360 / sides)),
            )
            for i in range(sides)
        ]
        if kind == "triangle":  # centre the bounding box, not the circumcircle
            shift = (r - r * 0.5) / 2
            corners = [(x, y + shift) for x, y in corners]
        return polygon(kind, color, corners)
    if kind == "star":
        corners = []
        for i in range(10):
            radius_i = r if i % 2 == 0 else r * 0.45
            angle = math.radians(-90 + i * 36)
            corners.append((cx + radius_i * math.cos(angle), cy + radius_i * math.sin(angle)))
        return polygon(kind, color, corners)
    if kind == "cross":
        t = r * 0.35
        return polygon(
            kind,
            color,
            [
                (cx - t, cy - r),
                (cx + t, cy - r),
                (cx + t, cy - t),
                (cx + r, cy - t),
                (cx + r, cy + t),
                (cx + t, cy + t),
                (cx + t, cy + r),
                (cx - t, cy + r),
                (cx - t, cy + t),
                (cx - r, cy + t),
                (cx - r, cy - t),
                (cx - t, cy - t),
            ],
        )
    raise ValueError(f"unknown shape {kind!r}")


SHAPES = ("circle", "square", "triangle", "diamond", "hexagon", "star", "cross")


def render(objects: list[SceneObject], size: int, background: Color) -> NDArray[np.uint8]:
    """Draw the objects in order (later ones on top) and return the RGB pixels."""
    import numpy as np
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (size, size), background)
    draw = ImageDraw.Draw(image)
    draw.fontmode = "1"  # no antialiasing: flat, exactly reproducible glyphs
    for item in objects:
        if item.text is not None:
            draw.text(item.points[0], item.text, fill=item.color, font=_font(item.font_size))
        elif item.disc:
            draw.ellipse([item.points[0], item.points[1]], fill=item.color)
        else:
            draw.polygon(list(item.points), fill=item.color)
    return np.asarray(image, dtype=np.uint8).copy()
