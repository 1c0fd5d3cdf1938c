"""Scene families: one per AMVICC category, each a pair of scenes differing in one attribute.

A family draws a pair from a random generator: the question, its two options, the implicit
prompt both scenes share, and two variants (variant 0 shows option (a), variant 1 option (b)),
each with its objects and explicit prompt. Positions, sizes, colours and distractors come from
the generator; the probed attribute is the only thing that differs between the two variants,
so the answer is known by construction and nothing needs annotating.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from amvicc.scenes.render import (
    SHAPES,
    Color,
    SceneObject,
    disc,
    polygon,
    rectangle,
    rotated,
    shape,
    text_object,
)

COLORS: dict[str, Color] = {
    "red": (220, 30, 30),
    "blue": (30, 70, 220),
    "green": (30, 150, 60),
    "yellow": (240, 200, 20),
    "orange": (245, 130, 20),
    "purple": (140, 50, 180),
    "pink": (240, 110, 170),
    "brown": (130, 80, 40),
    "black": (20, 20, 20),
    "gray": (128, 128, 128),
}
# Colour pairs a Color and Appearance question contrasts.
COLOR_PAIRS = (
    ("red", "blue"),
    ("green", "yellow"),
    ("orange", "purple"),
    ("pink", "brown"),
    ("black", "gray"),
    ("red", "green"),
    ("blue", "yellow"),
)
# Signs' words: none contains another, so OCR finding one never means the other.
WORDS = (
    "OPEN",
    "STOP",
    "EXIT",
    "PARK",
    "SALE",
    "HOTEL",
    "BANK",
    "CAFE",
    "SHOP",
    "BOOK",
    "FIRE",
    "WAIT",
    "PUSH",
    "PULL",
    "TAXI",
    "BREAD",
    "MILK",
    "GATE",
    "ROAD",
    "HELP",
)
SIGN_COLORS: dict[str, Color] = {
    "light yellow": (255, 236, 140),
    "light blue": (190, 220, 255),
    "light green": (205, 240, 195),
}
TEXT_COLOR: Color = (15, 15, 15)
STYLE = "generate a flat, simple illustration of"


@dataclass(frozen=True)
class Level:
    """What a difficulty level changes.

    Attributes:
        radius: the probed object's size, as a fraction of the image size.
        distractors: how many distractors, at least and at most.
        background: the background colour (lower contrast at higher levels).
        counts: Quantity and Count's smaller count, at least and at most.
        font: the sign's font size, as a fraction of the image size.
    """

    radius: float
    distractors: tuple[int, int]
    background: Color
    counts: tuple[int, int]
    font: float


LEVELS: dict[int, Level] = {
    1: Level(0.10, (0, 2), (255, 255, 255), (2, 3), 0.10),
    2: Level(0.08, (3, 5), (240, 238, 230), (3, 5), 0.08),
    3: Level(0.06, (6, 9), (205, 205, 200), (5, 7), 0.065),
}


@dataclass
class Layout:
    """Where things are on one canvas; placing an object reserves its box (with a margin)."""

    rng: random.Random
    size: int
    level: Level
    taken: list[tuple[float, float, float, float]] = field(default_factory=list)

    @property
    def radius(self) -> float:
        """The probed object's size in pixels."""
        return self.level.radius * self.size

    def box(self, width: float, height: float) -> tuple[float, float, float, float]:
        """A free box of this size, reserved; raises RuntimeError when none is found."""
        margin = self.size * 0.03
        for _ in range(2000):
            x0 = self.rng.uniform(margin, self.size - margin - width)
            y0 = self.rng.uniform(margin, self.size - margin - height)
            candidate = (x0, y0, x0 + width, y0 + height)
            if all(_apart(candidate, other, margin) for other in self.taken):
                self.taken.append(candidate)
                return candidate
        raise RuntimeError("no room left for another object; use a larger --size")

    def spot(self, radius: float) -> tuple[float, float]:
        """The centre of a free square of side ``2 * radius``, reserved."""
        x0, y0, x1, y1 = self.box(2 * radius, 2 * radius)
        return (x0 + x1) / 2, (y0 + y1) / 2


def _apart(a: tuple[float, ...], b: tuple[float, ...], margin: float) -> bool:
    return (
        a[2] + margin <= b[0]
        or b[2] + margin <= a[0]
        or a[3] + margin <= b[1]
        or b[3] + margin <= a[1]
    )


@dataclass(frozen=True)
class Variant:
    """One scene of a pair: its objects (distractors come later) and its explicit prompt."""

    objects: tuple[SceneObject, ...]
    explicit_prompt: str


@dataclass(frozen=True)
class PairSpec:
    """A drawn pair, before distractors.

    Attributes:
        family: the family's name, recorded in the manifest.
        question: asked about both images.
        options: the texts of (a) and (b).
        implicit_prompt: the scene both images show, without the probed attribute.
        variants: variant 0 shows option (a), variant 1 option (b).
        avoid: distractor shapes that would change the answer (the counted or named shape).
    """

    family: str
    question: str
    options: tuple[str, str]
    implicit_prompt: str
    variants: tuple[Variant, Variant]
    avoid: frozenset[str] = frozenset()


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith(("s", "x")) else "s")


def quantity(layout: Layout) -> PairSpec:
    """Quantity and Count: n vs n + 1 identical shapes; the extra one is the only change."""
    rng = layout.rng
    kind = rng.choice(SHAPES)
    name = rng.choice(list(COLORS))
    n = rng.randint(*layout.level.counts)
    radius = layout.radius * 0.7
    objects = [shape(kind, COLORS[name], layout.spot(radius), radius) for _ in range(n + 1)]
    scene = f"{STYLE} several {name} {_plural(kind)} among other shapes"
    return PairSpec(
        family="count-shapes",
        question=f"How many {name} {_plural(kind)} are in the image?",
        options=(str(n), str(n + 1)),
        implicit_prompt=scene,
        variants=(
            Variant(tuple(objects[:n]), f"{scene}, with exactly {n} {name} {_plural(kind)}"),
            Variant(tuple(objects), f"{scene}, with exactly {n + 1} {name} {_plural(kind)}"),
        ),
        avoid=frozenset({kind}),
    )


def orientation(layout: Layout) -> PairSpec:
    """Orientation and Direction: one arrow pointing left vs right (mirrored in place).

    The manifest names the direction in the kind (``arrow-left``, ``arrow-right``): the two
    arrows share colour and bounding box.
    """
    rng = layout.rng
    name = rng.choice(list(COLORS))
    r = layout.radius
    x0, y0, x1, y1 = layout.box(2.8 * r, 1.6 * r)
    w, cy = x1 - x0, (y0 + y1) / 2
    shaft = 0.3 * r
    neck = x0 + 0.55 * w
    right = [
        (x0, cy - shaft),
        (neck, cy - shaft),
        (neck, y0),
        (x1, cy),
        (neck, y1),
        (neck, cy + shaft),
        (x0, cy + shaft),
    ]
    left = [(x0 + x1 - x, y) for x, y in right]
    scene = f"{STYLE} a {name} arrow among a few shapes"
    return PairSpec(
        family="arrow",
        question="Is the arrow pointing to the left or to the right?",
        options=("Left", "Right"),
        implicit_prompt=scene,
        variants=(
            Variant((polygon("arrow-left", COLORS[name], left),), f"{scene}, pointing to the left"),
            Variant(
                (polygon("arrow-right", COLORS[name], right),), f"{scene}, pointing to the right"
            ),
        ),
    )


def color(layout: Layout) -> PairSpec:
    """Color and Appearance: the one shape of its kind in one colour vs another."""
    rng = layout.rng
    kind = rng.choice(SHAPES)
    first, second = rng.choice(COLOR_PAIRS)
    centre = layout.spot(layout.radius)
    scene = f"{STYLE} a {kind} among other shapes"
    return PairSpec(
        family="shape-color",
        question=f"Is the {kind} {first} or {second}?",
        options=(first.capitalize(), second.capitalize()),
        implicit_prompt=scene,
        variants=tuple(  # type: ignore[arg-type]
            Variant(
                (shape(kind, COLORS[chosen], centre, layout.radius),),
                f"{scene}, the {kind} coloured {chosen}",
            )
            for chosen in (first, second)
        ),
        avoid=frozenset({kind}),
    )


def position(layout: Layout) -> PairSpec:
    """Positional and Relational Context: shape A left of shape B vs the two swapped."""
    rng = layout.rng
    kind_a, kind_b = rng.sample(SHAPES, 2)
    name_a, name_b = rng.sample(list(COLORS), 2)
    r = layout.radius * 0.8
    gap = rng.uniform(0.8, 2.0) * r
    x0, y0, x1, y1 = layout.box(4 * r + gap, 2 * r)
    cy = (y0 + y1) / 2
    left_x, right_x = x0 + r, x1 - r
    a_name, b_name = f"{name_a} {kind_a}", f"{name_b} {kind_b}"
    scene = f"{STYLE} a {a_name} and a {b_name} side by side among other shapes"

    def scene_with(a_x: float, b_x: float) -> tuple[SceneObject, ...]:
        return (
            shape(kind_a, COLORS[name_a], (a_x, cy), r),
            shape(kind_b, COLORS[name_b], (b_x, cy), r),
        )

    return PairSpec(
        family="left-right",
        question=f"Is the {a_name} to the left or to the right of the {b_name}?",
        options=("Left", "Right"),
        implicit_prompt=scene,
        variants=(
            Variant(scene_with(left_x, right_x), f"{scene}, the {a_name} on the left"),
            Variant(scene_with(right_x, left_x), f"{scene}, the {a_name} on the right"),
        ),
        avoid=frozenset({kind_a, kind_b}),
    )


def feature(layout: Layout) -> PairSpec:
    """Presence of Specific Features: a door with a knob vs the same door without one."""
    rng = layout.rng
    door_name = rng.choice(["brown", "blue", "green", "red", "purple"])
    knob_name = "yellow" if rng.random() < 0.5 else "black"
    r = layout.radius
    x0, y0, x1, y1 = layout.box(1.3 * r, 2.6 * r)
    w, h = x1 - x0, y1 - y0
    door = rectangle("door", COLORS[door_name], x0, y0, x1, y1)
    knob = disc("knob", COLORS[knob_name], (x1 - 0.2 * w, y0 + 0.55 * h), 0.11 * w + 2)
    scene = f"{STYLE} a closed {door_name} door among a few shapes"
    return PairSpec(
        family="door-knob",
        question="Does the door have a knob?",
        options=("Yes", "No"),
        implicit_prompt=scene,
        variants=(
            Variant((door, knob), f"{scene}, with a round {knob_name} doorknob"),
            Variant((door,), f"{scene}, with no doorknob at all"),
        ),
    )


def state(layout: Layout) -> PairSpec:
    """State and Condition: a box whose lid is open (turned up on its hinge) vs closed."""
    rng = layout.rng
    body_name, lid_name = rng.sample(["brown", "blue", "green", "red", "purple", "orange"], 2)
    r = layout.radius
    _, _, bx1, by1 = layout.box(3.8 * r, 4.0 * r)
    # The body sits at the bottom right of the reserved box; the open lid rises at its left.
    body_w, body_h, lid_h = 2.2 * r, 1.3 * r, 0.28 * r
    x0, y1 = bx1 - body_w, by1
    top = y1 - body_h
    body = rectangle("box", COLORS[body_name], x0, top, bx1, y1)
    hinge = (x0 - 0.05 * body_w, top)
    lid_corners = [
        hinge,
        (bx1 + 0.05 * body_w, top),
        (bx1 + 0.05 * body_w, top - lid_h),
        (hinge[0], top - lid_h),
    ]
    closed = polygon("lid", COLORS[lid_name], lid_corners)
    opened = polygon("lid", COLORS[lid_name], rotated(lid_corners, hinge, -rng.uniform(95, 120)))
    scene = f"{STYLE} a {body_name} box with a {lid_name} hinged lid among a few shapes"
    return PairSpec(
        family="box-lid",
        question="Is the lid of the box open or closed?",
        options=("Open", "Closed"),
        implicit_prompt=scene,
        variants=(
            Variant((body, opened), f"{scene}, the lid standing wide open"),
            Variant((body, closed), f"{scene}, the lid shut flat on top"),
        ),
    )


def structure(layout: Layout) -> PairSpec:
    """Structural and Physical Characteristics: a bar that is straight vs bent in the middle."""
    rng = layout.rng
    name = rng.choice(list(COLORS))
    r = layout.radius
    x0, _, x1, y1 = layout.box(3.2 * r, 2.6 * r)
    cx, cy = (x0 + x1) / 2, y1 - 0.3 * r
    half, thick = 1.5 * r, 0.17 * r + 1
    fill = COLORS[name]
    straight = rectangle("bar", fill, cx - half, cy - thick, cx + half, cy + thick)
    left = rectangle("bar", fill, cx - half, cy - thick, cx, cy + thick)
    right_corners = [
        (cx, cy - thick),
        (cx + half, cy - thick),
        (cx + half, cy + thick),
        (cx, cy + thick),
    ]
    bent_right = polygon("bar", fill, rotated(right_corners, (cx, cy), -rng.uniform(40, 65)))
    joint = disc("joint", fill, (cx, cy), thick)
    scene = f"{STYLE} a {name} bar among a few shapes"
    return PairSpec(
        family="bar-bend",
        question=f"Is the {name} bar straight or bent?",
        options=("Straight", "Bent"),
        implicit_prompt=scene,
        variants=(
            Variant((straight,), f"{scene}, the bar perfectly straight"),
            Variant((left, bent_right, joint), f"{scene}, the bar bent sharply in the middle"),
        ),
    )


def text(layout: Layout) -> PairSpec:
    """Text: a sign reading one word vs another, large and OCR-legible."""
    rng = layout.rng
    first, second = rng.sample(WORDS, 2)
    sign_name = rng.choice(list(SIGN_COLORS))
    font_size = max(24, round(layout.level.font * layout.size))  # OCR-legible at any size
    probe = [text_object("text", TEXT_COLOR, w, font_size, (0, 0)).bbox for w in (first, second)]
    text_w = max(b[2] - b[0] for b in probe)
    text_h = max(b[3] - b[1] for b in probe)
    sign_w, sign_h = text_w + 0.8 * text_h, 3.0 * text_h
    post_h = 1.2 * text_h
    x0, y0, x1, y1 = layout.box(sign_w, sign_h + post_h)
    cx = (x0 + x1) / 2
    sign = rectangle("sign", SIGN_COLORS[sign_name], x0, y0, x1, y0 + sign_h)
    post = rectangle(
        "post", COLORS["gray"], cx - 0.12 * text_h, y0 + sign_h + 1, cx + 0.12 * text_h, y1
    )
    # The word sits in the sign's upper part, so the sign's own centre shows its fill.
    where = (round(cx), round(y0 + 0.95 * text_h))
    scene = f"{STYLE} a {sign_name} sign on a post with one word on it, among a few shapes"
    return PairSpec(
        family="sign-word",
        question="Which word is written on the sign?",
        options=(first, second),
        implicit_prompt=scene,
        variants=tuple(  # type: ignore[arg-type]
            Variant(
                (sign, post, text_object("text", TEXT_COLOR, word, font_size, where)),
                f'{scene}, the sign reading the word "{word}"',
            )
            for word in (first, second)
        ),
    )


def viewpoint(layout: Layout) -> PairSpec:
    """Viewpoint and Perspective: a gabled house seen from above vs from the front."""
    rng = layout.rng
    wall_name = rng.choice(["yellow", "orange", "pink", "blue", "green"])
    roof_name = rng.choice(["red", "brown", "purple"])
    roof, wall = COLORS[roof_name], COLORS[wall_name]
    shade: Color = (roof[0] * 2 // 3, roof[1] * 2 // 3, roof[2] * 2 // 3)
    r = layout.radius
    x0, y0, x1, y1 = layout.box(2.6 * r, 3.2 * r)
    cx = (x0 + x1) / 2
    wall_top = y1 - 2 * r
    front = (
        rectangle("wall", wall, cx - r, wall_top, cx + r, y1),
        polygon("roof", roof, [(x0, wall_top), (x1, wall_top), (cx, y0 + 0.05 * r)]),
        rectangle("door", COLORS["brown"], cx - 0.25 * r, y1 - 0.8 * r, cx + 0.25 * r, y1),
    )
    mid = (y0 + y1) / 2
    above = (
        rectangle("roof", roof, x0, mid - 1.1 * r, x1, mid),
        rectangle("roof", shade, x0, mid + 1, x1, mid + 1.1 * r),
    )
    scene = f"{STYLE} a small house with {wall_name} walls and a {roof_name} gabled roof"
    return PairSpec(
        family="house-view",
        question="Is the house seen from above or from the front?",
        options=("From above", "From the front"),
        implicit_prompt=scene,
        variants=(
            Variant(above, f"{scene}, seen from directly above so only the roof shows"),
            Variant(front, f"{scene}, seen straight from the front with its door"),
        ),
    )


FAMILIES: dict[str, Callable[[Layout], PairSpec]] = {
    "od": orientation,
    "pf": feature,
    "sc": state,
    "qc": quantity,
    "pr": position,
    "ca": color,
    "sh": structure,
    "tx": text,
    "vp": viewpoint,
}


def distractors(layout: Layout, avoid: frozenset[str]) -> tuple[SceneObject, ...]:
    """Plain shapes placed clear of everything already laid out, the same in both images."""
    rng = layout.rng
    kinds = [k for k in SHAPES if k not in avoid]
    count = rng.randint(*layout.level.distractors)
    out = []
    for _ in range(count):
        radius = layout.radius * rng.uniform(0.4, 0.7)
        kind = rng.choice(kinds)
        name = rng.choice(list(COLORS))
        out.append(shape(kind, COLORS[name], layout.spot(radius), radius))
    return tuple(out)
