"""The deterministic extractor against replies written the way real VLMs write them."""

from __future__ import annotations

import pytest

from amvicc.catalogue import Catalogue
from amvicc.extract import Extraction, extract_choice, extract_from_options

# (question index, reply, expected choice or None for undecided)
# 1: (a) Open (b) Closed · 5: (a) Left (b) Right · 7: (a) Towards the camera (b) Away from the
# camera · 9: (a) Yes (b) No · 117: (a) 1 (b) 2 · 133: (a) OK/SELECT (b) OK · 147: (a) Visible
# (b) Not visible · 153: (a) One (b) More than one · 201: (a) "Happy Easter" (b) "Happy Easter!"
# 265: (a) Tied (b) Untied · 271: (a) Shirt (b) T-shirt · 277: (a) SUGAR (b) UGA
DECIDED = [
    # bare labels
    (1, "(a)", "a"),
    (1, "(b)", "b"),
    (1, "A", "a"),
    (1, "b", "b"),
    (1, "B.", "b"),
    (1, "  (B)  ", "b"),
    (1, "Answer: B", "b"),
    (1, "**B**", "b"),
    # leading labels with option text
    (1, "(a) Open", "a"),
    (1, "A. Open", "a"),
    (1, "B) Closed", "b"),
    (5, "**(b) Right**", "b"),
    (5, "(b) Right. The dog's nose points to the right side of the frame.", "b"),
    (1, "A. The butterfly's wings are spread open.", "a"),
    (5, "B, because the dog looks toward the right edge.", "b"),
    (7, "A - Towards the camera", "a"),
    (1, "a: open", "a"),
    # answer statements
    (1, "Answer: (b) Closed", "b"),
    (1, "The answer is (a).", "a"),
    (1, "The correct answer is B.", "b"),
    (5, "The answer is left.", "a"),
    (5, "Final answer: right", "b"),
    (1, "Looking at the wings, they are folded together above the body. Answer: B", "b"),
    (
        1,
        "The options are (a) Open and (b) Closed. The wings are folded, so the answer is (b).",
        "b",
    ),
    (5, "I would choose B.", "b"),
    (5, "I'd go with (a) Left.", "a"),
    (7, "The correct option is (a) Towards the camera.", "a"),
    (1, "Final Answer: \\boxed{A}", "a"),
    (1, "<think>The wings look spread; maybe open? Let me look again.</think>(a) Open", "a"),
    (5, "My answer: b", "b"),
    (7, "Answer: the bus is driving away from the camera.", "b"),
    # the option's own text
    (1, "Open", "a"),
    (1, "Closed.", "b"),
    (1, "The butterfly's wings are open.", "a"),
    (7, "Towards the camera", "a"),
    (7, "The school bus is heading away from the camera.", "b"),
    (7, "It is coming toward the camera.", "a"),  # towards / toward
    (5, "The dog is facing left.", "a"),
    (1, "The wings are open, not closed.", "a"),
    (147, "Not visible", "b"),
    (147, "The snake's head is not visible in this picture.", "b"),
    (147, "The snake's head is clearly visible.", "a"),
    (153, "There is more than one apple.", "b"),
    (153, "I count one red apple.", "a"),
    (117, "I can see two eyes.", "b"),
    (117, "2", "b"),
    (133, "The center button says OK/SELECT.", "a"),
    (133, "It says OK.", "b"),
    (265, "The shoe is untied.", "b"),
    (265, "The laces are tied.", "a"),
    (271, "He is wearing a T-shirt.", "b"),
    (271, "He wears a button-up shirt.", "a"),
    (277, "The letters are UGA.", "b"),
    (277, "The letters read SUGAR.", "a"),
    (5, "Based on the image, (b) Right.", "b"),
    (5, "It's probably facing to the right.", "b"),
    # yes/no questions
    (9, "Yes", "a"),
    (9, "No.", "b"),
    (9, 'Yes, the key "Z" is visible in the bottom row.', "a"),
    (9, "No, I don't see a Z key on this keyboard.", "b"),
    (9, "The answer is yes.", "a"),
    (9, "Answer: No", "b"),
    (9, "(a) Yes", "a"),
    (9, "B. No", "b"),
    (201, '(b) "Happy Easter!"', "b"),
    (201, "Answer: A", "a"),
    (201, 'The words are "Happy Easter!".', "b"),
    (201, 'It reads "Happy Easter".', "a"),
    # 269: (a) Empty (b) A painting hanging on it -- "A painting" is no label
    (269, "Answer: A painting hanging on it", "b"),
    (269, "A painting hanging on it.", "b"),
    (269, "The wall is empty.", "a"),
    # longer replies, as chat models write them
    (1, "The answer is (a) Open, not (b) Closed.", "a"),
    (1, "(a) Open (b) Closed\nThe answer is (b).", "b"),
    (1, "Options: (a) Open, (b) Closed. The wings are folded together, so Closed.", "b"),
    (1, "The answer is not open but closed.", "b"),
    (1, "The answer is not (a), it is (b).", "b"),
    (1, "(a) is correct, (b) is not.", "a"),
    (1, "**Answer:** (b) Closed", "b"),
    (1, "The correct answer is: (b) Closed", "b"),
    (1, "Answer: B) Closed", "b"),
    (1, "(b) Closed is the correct answer.", "b"),
    (1, "A is incorrect; the answer is B.", "b"),
    (
        5,
        "Based on the image, the dog is facing to the left from the camera's perspective. "
        "Therefore, the answer is (a) Left.",
        "a",
    ),
    (5, "From the camera's perspective, the dog is facing right.", "b"),
    (
        1,
        "Let's look at each option. Option (a) Open: the wings would be spread. Option (b) "
        "Closed: the wings would be pressed together. They are pressed together, so the final "
        "answer is (b).",
        "b",
    ),
    (147, "The snake's head is visible, not hidden.", "a"),
    (9, "There is no visible 'Z' key in the image. The answer is no.", "b"),
]

UNDECIDED = [
    (1, "", "empty"),
    (1, "   ", "empty"),
    (1, "(a) or (b)", None),
    (1, "It could be either open or closed.", "hedge"),
    (1, "I can't tell from this image.", "hedge"),
    (1, "I cannot determine whether the wings are open or closed.", "hedge"),
    (1, "The image is unclear.", "hedge"),
    (1, "Maybe (a).", "hedge"),
    (1, "Both options are plausible.", "hedge"),
    (1, "Neither; the butterfly is not in the picture.", "hedge"),
    (1, "Open or closed? Hard to say.", None),
    (1, "Are the wings open or closed?", "no-answer-found"),
    (1, "The wings are partly open and partly closed.", "in-between"),
    (1, "(a) Closed", "conflict"),
    (1, "A. The wings are closed.", "conflict"),
    (1, "Answer: (a) Closed", "conflict"),
    (1, "The answer is not (a).", "negated"),
    (1, "(a) is incorrect.", "negated"),
    (1, "It is not option A.", "negated"),
    (1, "The wings are not open.", "no-answer-found"),
    (1, "The answer is (a). No wait, the answer is (b).", "conflicting-answers"),
    (1, "(a) Open (b) Closed", None),
    (1, "Between (a) and (b), I lean to the first.", "both-labels"),
    (5, "Right, the dog faces left.", "both-options"),
    (5, "A dog is sitting on the grass.", "no-answer-found"),
    (5, "The dog is leftover-colored.", "no-answer-found"),  # option text inside another word
    (9, "There is no Z key.", "no-answer-found"),  # a "no" mid-reply is not read
    (9, "Yes and no.", None),
    (9, "(a) No", "conflict"),
    (153, "The one on the left is red.", "no-answer-found"),
    (201, "The words say Happy Easter.", "no-answer-found"),  # options differ only in "!"
    (201, '"Happy Easter" or "Happy Easter!"', "both-options"),
    (1, "The answer is a black dog.", "no-answer-found"),  # "a" is an article
    (1, "I'm sorry, I can't see the image.", "no-image"),
    (1, "<think>The wings look", "unfinished-reasoning"),
    (1, None, "empty"),
    (1, "(a) Open (b) Closed", None),
    (1, "Options: (a) Open, (b) Closed.", None),
    (1, "Not (a).", "negated"),
    (1, "(a) is correct. Actually (a) is wrong.", "revised"),
    (147, "The snake's head is not clearly visible.", "no-answer-found"),
    (1, "It's difficult to say for sure, but it appears to be open.", "hedge"),
    (5, "The dog is looking left, with its body turned right.", "both-options"),
    (153, "There are two apples.", "no-answer-found"),
    (117, "The cat's left eye is visible.", "no-answer-found"),
]


# Issue 23: replies extractor v2 decided although a strict grader reads no answer in them, or
# read as the other option, and replies a person reads at once that v2 left undecided. Each
# row's outcome differs from v2's. (index, reply, expected choice, the rule that says why)
# 13 (a) Single (b) Multiple · 19 Yes/No (dorsal fin) · 37 (a) Pink (b) Violet (background) ·
# 85 (a) Erect (b) Drooping · 109 (a) Upward (b) Downward · 141 (a) Raised (b) Lowered ·
# 155 (a) Beside the bedside Table (b) On the Windowsill · 207 (a) Red (b) Yellow ·
# 251 (a) Mug (b) Glass · 279 (a) Standing (b) Sitting
NOT_V2 = [
    # an idiom that opens with "No" is not the option "No"
    (9, "No doubt about it — the Z key is in the bottom row.", None, "no-answer-found"),
    (19, "No question, the fin is visible.", None, "no-answer-found"),
    (9, "No sé.", None, "no-answer-found"),
    # an option's word used about something else in the image
    (5, "The dog is sitting to the left of the bench.", None, "no-answer-found"),
    (207, "A red cutting board holds the pepper.", None, "no-answer-found"),
    (153, "One bowl holds the apples; there are three red ones.", None, "no-answer-found"),
    (37, "The flowers in the foreground are pink.", None, "other-subject"),
    (117, "One and a half.", None, "no-answer-found"),
    (117, "Answer: 1 of 2 eyes.", None, "no-answer-found"),
    (279, "She stood up from sitting.", None, "no-answer-found"),
    (271, "It's a t shirt.", None, "no-answer-found"),
    (153, "At least one red apple.", None, "in-between"),
    # both letters, a repetition of both options, a reply cut off before its answer
    (5, "A, B", None, "both-labels"),
    (13, "Answer: A, B", None, "both-labels"),
    (9, "Yes No Yes No Yes No", None, "no-answer-found"),
    (5, "The dog's head is turned to the left, but its body faces the", None, "cut-off"),
    # ... but an option whose own words end like a cut-off is a finished answer
    (219, "(b) Away from", "b", "leading-label"),
    (219, "Away from", "b", "option-text"),
    (219, "It points towards the", None, "cut-off"),
    # an explicit non-decision in a marker
    (1, r"\boxed{\text{(a) or (b)}}", None, "both-labels"),
    (1, '{"answer": "(a) or (b)"}', None, "both-labels"),
    (1, "答案：A或B", None, "both-labels"),
    # a letter whose words belong to the other option
    (1, '{"answer": "B: Open"}', None, "conflict"),
    (1, '{"answer": "a"} The wings are closed.', None, "conflict"),
    (9, "Yes, no Z key is visible.", None, "conflict"),
    (9, "Yes, but not the Z.", None, "conflict"),
    (9, "Sí, pero no la Z.", None, "conflict"),
    (9, "Nein, doch — die Z-Taste ist da.", None, "conflict"),
    (9, "Ja, doch, die Z-Taste ist zu sehen.", "a", "leading-yes-no"),
    (9, "No Z key, but there is a Y key. Yes, a Y.", None, "conflict"),
    # a guess from a model that says it cannot see the image
    (1, "I'm unable to view images, but the most likely answer is B.", None, "no-image"),
    (207, "I cannot see the pepper, but bell peppers are usually red → (a)", None, "no-image"),
    # the rejected option named last; a label said to be wrong; a revision
    (155, "The vase is not on the windowsill (b).", None, "negated"),
    (155, "The vase sits beside the bedside table, not on the windowsill (b).", "a", "option-text"),
    (1, "B is wrong.", None, "negated"),
    (1, "The answer is (b)... just kidding, (a).", "a", "self-correction"),
    (5, "B\n\nActually A", None, "revised"),
    (109, "Upward — 50/50 honestly, can't call it.", None, "hedge"),
    # what a person reads at once: a hedged pick, a revised final answer, "between X and Y",
    # reasoning that ends with its answer, YAML, Russian and Korean
    (5, "I think it's B, but I'm not completely sure.", "b", "hedged-pick"),
    (1, "I believe the answer is (a), though the angle makes it hard to tell.", "a", "hedged-pick"),
    (1, "Option (b) — but I could be wrong.", "b", "hedged-pick"),
    (
        85,
        "**Final answer: B**\n\nCorrection: the ears stand straight up. **Final answer: A**",
        "a",
        "self-correction",
    ),
    (5, "Between left and right, I'd say right.", "b", "answer-marker"),
    (251, "Between a mug and a glass, I'd pick the glass.", "b", "answer-marker"),
    (
        5,
        "The tail is on the left and the snout on the right, so the dog faces right.\n"
        "Final answer: B",
        "b",
        "answer-marker",
    ),
    (9, "Not sure at first, but yes — it's in the bottom row.", "a", "conclusion-after-hedge"),
    (141, "```yaml\nanswer: b\nreason: trunk hangs down\n```", "b", "answer-marker"),
    (1, "Ответ: B", "b", "answer-marker"),
    (9, "네, Z 키가 보입니다.", "a", "leading-yes-no"),
]


@pytest.mark.parametrize(("index", "reply", "expected", "rule"), NOT_V2)
def test_issue_23_replies(
    catalogue: Catalogue, index: int, reply: str, expected: str | None, rule: str
) -> None:
    result = extract_choice(reply, catalogue.question(index))
    assert (result.choice, result.rule) == (expected, rule)


def test_a_pick_is_checked_against_every_use_of_the_other_option(catalogue: Catalogue) -> None:
    """Option words decide only when they say the option, but contradict a pick in any use."""
    q = catalogue.question(5)
    assert extract_choice("The dog is on the right side of the photo.", q).choice is None
    assert extract_choice("(a) Left. Its right side faces us.", q).rule == "conflict"
    # reasoning may weigh both; the last option it names before its answer must agree
    assert extract_choice("Its nose points right, its tail left. Answer: (b)", q).rule == "conflict"
    assert extract_choice("Its tail is left, its nose right. Answer: (b)", q).choice == "b"


def test_the_question_tells_an_answer_from_another_use_of_the_word() -> None:
    """Without the question, "the right half" might be any right half; with it, it answers."""
    reply, options = "It is in the right half.", ["left", "right"]
    assert extract_from_options(reply, options).choice is None
    asked = "Is the house in the left half or the right half of the image?"
    assert extract_from_options(reply, options, asked) == Extraction("b", "option-text")


@pytest.mark.parametrize(("index", "reply", "expected"), DECIDED)
def test_decided(catalogue: Catalogue, index: int, reply: str, expected: str | None) -> None:
    result = extract_choice(reply, catalogue.question(index))
    assert result.choice == expected, result


@pytest.mark.parametrize(("index", "reply", "reason"), UNDECIDED)
def test_undecided(catalogue: Catalogue, index: int, reply: str | None, reason: str | None) -> None:
    result = extract_choice(reply, catalogue.question(index))
    assert result.choice is None, result
    assert result.value == "undecided"
    if reason is not None:
        assert result.rule == reason


def test_table_is_large_enough() -> None:
    assert len(DECIDED) + len(UNDECIDED) >= 60


def test_rules_are_named(catalogue: Catalogue) -> None:
    q = catalogue.question(1)
    assert extract_choice("(b)", q) == Extraction("b", "label-only")
    assert extract_choice("The answer is (a).", q).rule == "answer-marker"
    assert extract_choice("A. Open", q).rule == "leading-label"
    assert extract_choice("Open", q).rule == "option-text"
    assert extract_choice("Based on the image, (b) Closed.", q).rule == "label-mention"
    assert extract_choice("Yes.", catalogue.question(9)).rule == "leading-yes-no"
    assert extract_choice("No, not one.", catalogue.question(9)).rule == "leading-yes-no"
    assert extract_choice("It's hard to say, so no.", catalogue.question(9)).rule == (
        "conclusion-after-hedge"
    )
    assert extract_choice("I looked twice — no.", catalogue.question(9)).rule == "yes-no-clause"


def test_options_given_directly() -> None:
    assert extract_from_options("It points down.", ["Up", "Down"]).choice == "b"
    with pytest.raises(ValueError, match="two options"):
        extract_from_options("x", ["only one"])


def test_deterministic(catalogue: Catalogue) -> None:
    q = catalogue.question(5)
    replies = [r for i, r, _ in DECIDED if i == 5]
    assert [extract_choice(r, q) for r in replies] == [extract_choice(r, q) for r in replies]
