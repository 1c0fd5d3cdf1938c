"""GRIP's question ladder: five questions of rising competence per scene, answers derived.

Every scene image carries five questions whose answers follow from the scene's state (the
objects drawn), never from annotation:

1. observe or count: how many shapes of the commonest kind, or of every kind when each is
   drawn once (integer);
2. basic relation or class: the pair's own question (option);
3. precise comparison: is one plain shape clearly larger than another (yes/no), or, without
   two such shapes, which half of the image an object is in (word);
4. multi-step integration: how many objects lie entirely to the left of a named one (integer);
5. counterfactual: how many objects would remain if every shape of one kind were removed
   (integer).

Replies are graded by :func:`amvicc.ladder.compare`, a typed deterministic comparator: numbers are parsed
(digits or words), yes/no, words and options go through the answering stage's extractor, so
a reply it cannot read stays undecided for a later judge or a person, as with MMVP questions.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from amvicc.ladder import LadderQuestion
from amvicc.scenes.families import COLORS
from amvicc.scenes.render import SHAPES, SceneObject

# The family's subject, drawn as several objects but one thing to count.
SUBJECTS = {
    "arrow": "arrow",
    "door-knob": "door",
    "box-lid": "box",
    "bar-bend": "bar",
    "sign-word": "sign",
    "house-view": "house",
}
_COLOR_NAMES = {rgb: name for name, rgb in COLORS.items()}
# How much more ink one shape must have than another for "larger" to be unambiguous.
SIZE_RATIO = 1.5
# The share of its bounding box each plain shape fills, so sizes compare by ink, not box.
FILL = {
    "circle": 0.785,
    "square": 1.0,
    "diamond": 0.5,
    "triangle": 0.5,
    "hexagon": 0.75,
    "star": 0.36,
    "cross": 0.58,
}


@dataclass(frozen=True)
class Item:
    """One thing in the scene as a person would count it: a shape, or the family's subject."""

    name: str
    kind: str
    bbox: tuple[int, int, int, int]

    @property
    def area(self) -> int:
        """The bounding box's area in pixels."""
        x0, y0, x1, y1 = self.bbox
        return (x1 - x0 + 1) * (y1 - y0 + 1)

    @property
    def ink(self) -> float:
        """About how many pixels a plain shape covers (its box times its fill share)."""
        return self.area * FILL.get(self.kind, 1.0)


def scene_items(family: str, objects: tuple[SceneObject, ...]) -> list[Item]:
    """The scene's things: every plain shape on its own, the subject's parts as one."""
    items: list[Item] = []
    parts: list[SceneObject] = []
    for item in objects:
        if item.kind in SHAPES:
            colour = _COLOR_NAMES.get(item.color, "")
            items.append(Item(f"{colour} {item.kind}".strip(), item.kind, item.bbox))
        else:
            parts.append(item)
    if parts:
        boxes = [p.bbox for p in parts]
        union = (
            min(b[0] for b in boxes),
            min(b[1] for b in boxes),
            max(b[2] for b in boxes),
            max(b[3] for b in boxes),
        )
        noun = SUBJECTS.get(family, family)
        items.append(Item(noun, noun, union))
    return items


def _plural(kind: str) -> str:
    return kind + ("es" if kind.endswith(("s", "x", "ch")) else "s")


def build_ladder(
    *,
    family: str,
    objects: tuple[SceneObject, ...],
    question: str,
    options: tuple[str, str],
    answer: str,
    size: int,
    seed: int,
) -> tuple[LadderQuestion, ...]:
    """The five rungs for one scene image.

    Args:
        family: the scene family (names the subject).
        objects: everything drawn, distractors first.
        question: the pair's own question.
        options: its two options' texts.
        answer: ``a`` or ``b``, the option this image shows.
        size: the image side in pixels.
        seed: the scene's seed; choices between equally good questions are drawn from it.
    """
    rng = random.Random(f"ladder/{seed}")
    items = scene_items(family, objects)
    counts: dict[str, int] = {}
    for item in items:
        counts[item.kind] = counts.get(item.kind, 0) + 1
    # The most numerous kind (ties: alphabetical), so counting means something.
    kind = sorted(counts, key=lambda k: (-counts[k], k))[0]
    # Counting a kind drawn once is a near-constant "1": then count every object instead.
    count = (
        LadderQuestion(
            1, f"How many {_plural(kind)} are in the image?", "integer", str(counts[kind])
        )
        if counts[kind] > 1
        else LadderQuestion(1, "How many objects are in the image?", "integer", str(len(items)))
    )
    rungs = [
        count,
        LadderQuestion(2, question, "option", f"({answer})", options),
        _comparison(items, size, rng),
        _left_of(items),
        LadderQuestion(
            5,
            f"If every {kind} were removed from the image, how many objects would remain?",
            "integer",
            str(len(items) - counts[kind]),
        ),
    ]
    return tuple(rungs)


def _unique(items: list[Item]) -> list[Item]:
    names = [i.name for i in items]
    return [i for i in items if names.count(i.name) == 1]


def _comparison(items: list[Item], size: int, rng: random.Random) -> LadderQuestion:
    named = _unique(items)
    shapes = [i for i in named if i.kind in FILL]  # the subject's box says little of its ink
    pairs = [
        (a, b)
        for a in shapes
        for b in shapes
        if a is not b and a.ink >= SIZE_RATIO * b.ink  # a clearly larger than b
    ]
    if pairs:
        larger, smaller = pairs[rng.randrange(len(pairs))]
        first, second = (larger, smaller) if rng.random() < 0.5 else (smaller, larger)
        return LadderQuestion(
            3,
            f"Is the {first.name} larger than the {second.name}?",
            "yes/no",
            "yes" if first is larger else "no",
            ("yes", "no"),
        )
    target = named[0] if named else items[0]
    x0, _, x1, _ = target.bbox
    centre = (x0 + x1) / 2
    if abs(centre - size / 2) < size * 0.05:  # too close to call: ask about the edge instead
        side = "left" if x0 < size - 1 - x1 else "right"
        return LadderQuestion(
            3,
            f"Is the {target.name} nearer the left edge or the right edge of the image?",
            "word",
            side,
            ("left", "right"),
        )
    return LadderQuestion(
        3,
        f"Is the {target.name} in the left half or the right half of the image?",
        "word",
        "left" if centre < size / 2 else "right",
        ("left", "right"),
    )


def _left_of(items: list[Item]) -> LadderQuestion:
    named = _unique(items) or items
    reference = max(named, key=lambda i: (i.area, i.name))
    left = sum(1 for i in items if i is not reference and i.bbox[2] < reference.bbox[0])
    return LadderQuestion(
        4,
        f"How many other objects lie entirely to the left of the {reference.name}?",
        "integer",
        str(left),
    )
