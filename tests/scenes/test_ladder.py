"""GRIP's question ladder: derived answers against hand-worked scenes, and the comparator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amvicc.catalogue import check_catalogue
from amvicc.ladder import LadderQuestion, compare, read_integer
from amvicc.scenes import ScenesOptions, run_scenes
from amvicc.scenes.families import COLORS
from amvicc.scenes.ladder import build_ladder
from amvicc.scenes.render import SHAPES, disc, rectangle


def _plurals(kind: str) -> tuple[str, str]:
    return kind + "s", kind + "es"


RED, BLUE, GREEN = COLORS["red"], COLORS["blue"], COLORS["green"]


def _door_scene() -> tuple[LadderQuestion, ...]:
    objects = (
        disc("circle", RED, (20, 20), 10),  # bbox 10..30: 21 x 21, ink ~346
        rectangle("square", BLUE, 150, 20, 170, 40),  # 21 x 21, ink 441
        rectangle("square", GREEN, 150, 150, 190, 190),  # 41 x 41, ink 1681
        rectangle("door", BLUE, 80, 60, 110, 140),  # 31 x 81 = 2511, the largest
        disc("knob", RED, (104, 100), 3),
    )
    return build_ladder(
        family="door-knob",
        objects=objects,
        question="Does the door have a knob?",
        options=("Yes", "No"),
        answer="a",
        size=200,
        seed=5,
    )


def test_the_ladder_of_a_hand_worked_scene() -> None:
    rungs = _door_scene()
    assert [r.level for r in rungs] == [1, 2, 3, 4, 5]
    # Four things (the door and its knob are one): two squares, a circle, a door.
    assert rungs[0].question == "How many squares are in the image?"
    assert (rungs[0].type, rungs[0].answer) == ("integer", "2")
    assert (rungs[1].type, rungs[1].answer, rungs[1].choices) == ("option", "(a)", ("Yes", "No"))
    # Only the green square is clearly larger than another shape (the blue one is 1.27 times
    # the circle's ink, too close to call).
    third = rungs[2]
    assert third.type == "yes/no" and "green square" in third.question
    other = "red circle" if "red circle" in third.question else "blue square"
    assert other in third.question
    larger_first = third.question.startswith("Is the green square larger")
    assert third.answer == ("yes" if larger_first else "no")
    # The door is the largest thing; only the red circle lies wholly to its left.
    assert rungs[3].question == "How many other objects lie entirely to the left of the door?"
    assert rungs[3].answer == "1"
    assert rungs[4].question.startswith("If every square were removed")
    assert rungs[4].answer == "2"


def test_a_lone_subject_is_asked_which_half_it_is_in() -> None:
    objects = (
        rectangle("wall", BLUE, 130, 100, 170, 140),
        rectangle("roof", RED, 125, 80, 175, 99),
    )
    rungs = build_ladder(
        family="house-view",
        objects=objects,
        question="Is the house seen from above or from the front?",
        options=("From above", "From the front"),
        answer="b",
        size=200,
        seed=1,
    )
    assert [(r.question, r.answer) for r in rungs if r.level != 2] == [
        ("How many objects are in the image?", "1"),  # every kind drawn once: count them all
        ("Is the house in the left half or the right half of the image?", "right"),
        ("How many other objects lie entirely to the left of the house?", "0"),
        ("If every house were removed from the image, how many objects would remain?", "0"),
    ]
    assert rungs[2].type == "word" and rungs[2].choices == ("left", "right")


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("3", True),
        ("There are three squares.", True),
        ("I count 4.", False),
        ("Either 2 or 3.", None),
        ("I can't tell.", None),
        ("", None),
    ],
)
def test_integers_are_parsed(reply: str, expected: bool | None) -> None:
    rung = LadderQuestion(1, "How many squares are in the image?", "integer", "3")
    assert compare(rung, reply) is expected


def test_options_yes_no_and_words_go_through_the_extractor() -> None:
    option = LadderQuestion(2, "Does the door have a knob?", "option", "(a)", ("Yes", "No"))
    assert compare(option, "(a) Yes") is True
    assert compare(option, "No, it has none.") is False
    assert compare(option, "I am not sure.") is None
    yes_no = LadderQuestion(3, "Is the A larger than the B?", "yes/no", "no", ("yes", "no"))
    assert compare(yes_no, "No.") is True
    assert compare(yes_no, "Yes, it is larger.") is False
    word = LadderQuestion(3, "Left or right half?", "word", "right", ("left", "right"))
    assert compare(word, "It is in the right half.") is True
    assert compare(word, "Left") is False
    assert compare(word, "left or right, hard to say") is None
    assert read_integer("twenty") == 20 and read_integer("3 and 3") == 3


def test_a_build_writes_five_typed_rungs_per_image_consistent_with_its_manifest(
    tmp_path: Path,
) -> None:
    run_scenes(ScenesOptions(out=tmp_path, per_category=3, seed=2, level=2))
    catalogue = check_catalogue(tmp_path / "catalogue.csv").catalogue
    assert catalogue is not None
    manifest = {
        e["index"]: e for e in map(json.loads, (tmp_path / "scenes.jsonl").read_text().splitlines())
    }
    lines = [json.loads(x) for x in (tmp_path / "ladder.jsonl").read_text().splitlines()]
    assert [x["index"] for x in lines] == sorted(manifest)
    types = set()
    for line in lines:
        rungs = line["questions"]
        assert [r["level"] for r in rungs] == [1, 2, 3, 4, 5]
        types |= {r["type"] for r in rungs}
        question = catalogue.question(line["index"])
        assert rungs[1]["question"] == question.text
        assert rungs[1]["answer"] == f"({question.answer})"
        kind = rungs[0]["question"].split()[2]  # "How many <kind>s are in the image?"
        objects = manifest[line["index"]]["objects"]
        drawn = [o for o in objects if o["kind"] in SHAPES and kind in _plurals(o["kind"])]
        if drawn:  # a plain shape: the answer is how many of them the manifest lists
            assert int(rungs[0]["answer"]) == len(drawn)
    assert types == {"integer", "option", "yes/no", "word"}
