"""Hand-written VLM replies with the option each one means, or None where it means none.

The styles of GPT-4o, Claude, Gemini, Qwen-VL, LLaVA, InternVL, Llama and reasoning models
(``<think>`` traces) answering MMVP's "(a)/(b)" questions, in markdown, LaTeX, JSON, YAML and
XML, in English, Chinese, Japanese, Korean, French, Spanish, Italian, Portuguese, German and
Russian. The table is the extractor's specification: it may leave a reply undecided (a miss,
counted) but never decide one wrongly, nor pick an option where a strict grader reads none.

The rows from IDIOMS_AND_LEADING_WORDS on (203 replies) were written for issue 23 before the
extractor's rules were changed for them, as a held-out set would be.

Each row names its question by MMVP index (``prompts/amvicc.csv``); the most used: 1 (a) Open
(b) Closed · 5 (a) Left (b) Right · 7 (a) Towards the camera (b) Away from the camera · 9 (a) Yes
(b) No (can you see "Z") · 13 (a) Single (b) Multiple · 25 (a) Black (b) Red · 71 (a) Locked
(b) Unlocked · 85 (a) Erect (b) Drooping · 99 (a) Long (b) Short · 103 (a) Up (b) Down · 117 (a) 1
(b) 2 · 141 (a) Raised (b) Lowered · 147 (a) Visible (b) Not visible · 153 (a) One (b) More than
one · 245 and 279 (a) Standing (b) Sitting · 265 (a) Tied (b) Untied · 271 (a) Shirt (b) T-shirt.
"""

from __future__ import annotations

Row = tuple[int, str, str | None]

BARE_LABELS: list[Row] = [
    (1, "a", "a"),
    (1, "B", "b"),
    (1, "(A)", "a"),
    (1, "(b).", "b"),
    (5, "A.", "a"),
    (5, "**B**", "b"),
    (5, "`(a)`", "a"),
    (7, "Option B", "b"),
    (7, "Choice: A", "a"),
    (9, "(a)", "a"),
    (9, "b", "b"),
    (13, "[b]", "b"),
    (13, "[A]", "a"),
    (25, "B)", "b"),
    (99, "  a)  ", "a"),
    (117, "**(b)**", "b"),
    (147, "A", "a"),
    (153, "(B)", "b"),
    (265, "Answer: (a)", "a"),
    (279, "answer: b", "b"),
]

LEADING_LABELS: list[Row] = [
    (1, "(a) Open", "a"),
    (1, "(b) Closed.", "b"),
    (1, "B. Closed - the wings are pressed together above the body.", "b"),
    (3, "A) Round", "a"),
    (3, "(b) Thin. The flame is a narrow sliver.", "b"),
    (5, "**(a) Left**\n\nThe dog's snout points toward the left edge of the photo.", "a"),
    (5, "B - Right", "b"),
    (7, "(a) Towards the camera. The front of the bus, with its headlights, faces us.", "a"),
    (7, "B: Away from the camera", "b"),
    (13, "(a) Single", "a"),
    (13, "B. Multiple ears of corn are stacked in the basket.", "b"),
    (25, "(b) Red", "b"),
    (25, "A. Black", "a"),
    (99, "(a) Long - the tusks reach almost to the ground.", "a"),
    (99, "B. Short", "b"),
    (117, "(b) 2", "b"),
    (117, "(a) 1. Only one eye is visible because the cat is in profile.", "a"),
    (147, "(b) Not visible", "b"),
    (147, "A. Visible", "a"),
    (153, "(b) More than one", "b"),
    (153, "(a) One", "a"),
    (265, "(b) Untied. The laces hang loose.", "b"),
    (265, "A. Tied", "a"),
    (271, "(b) T-shirt", "b"),
    (271, "(a) Shirt. It has a collar and buttons.", "a"),
    (279, "(b) Sitting - she is on a bench.", "b"),
    (279, "A. Standing", "a"),
    (9, "(a) Yes", "a"),
    (9, "B. No", "b"),
    (9, "(b) No, there is no Z key visible.", "b"),
]

ANSWER_MARKERS: list[Row] = [
    (1, "Answer: A", "a"),
    (1, "The answer is (b).", "b"),
    (1, "The correct answer is B.", "b"),
    (1, "**Answer:** (a) Open", "a"),
    (1, "Final answer: B", "b"),
    (3, "My answer is (a) Round.", "a"),
    (3, "The best answer is B.", "b"),
    (5, "The correct option is (b) Right.", "b"),
    (5, "I would choose A.", "a"),
    (5, "I'd go with (b).", "b"),
    (7, "I choose (a).", "a"),
    (7, "I'll pick B.", "b"),
    (7, "Answer - (b)", "b"),
    (13, "Answer = A", "a"),
    (13, "The answer should be (b) Multiple.", "b"),
    (25, "The right answer is (a).", "a"),
    (25, "Correct answer: (b) Red", "b"),
    (99, "I would select (b).", "b"),
    (99, "Answer: Long", "a"),
    (117, "The answer is 2.", "b"),
    (117, "Answer: (a) 1", "a"),
    (147, "The answer is not visible.", "b"),
    (147, "Answer: Visible", "a"),
    (153, "The answer is (b) More than one.", "b"),
    (153, "Final Answer: \\boxed{A}", "a"),
    (153, "Final answer: $\\boxed{B}$", "b"),
    (265, "The correct answer would be (b).", "b"),
    (265, "So the answer is tied.", "a"),
    (271, "The answer is (b) T-shirt.", "b"),
    (279, "Therefore, the answer is (b) Sitting.", "b"),
    (279, "The answer must be A.", "a"),
    (9, "The answer is yes.", "a"),
    (9, "Answer: No", "b"),
    (9, "The correct answer is (a) Yes.", "a"),
    (1, "I'd say (b).", "b"),
    (5, "B is the right choice.", "b"),
    (5, "A is the correct answer.", "a"),
    (1, "(b) is the correct answer.", "b"),
    (7, "Option (a) is correct.", "a"),
    (13, "Option B is the best answer here.", "b"),
]

STRUCTURED: list[Row] = [
    (1, '{"answer": "b"}', "b"),
    (1, '{"answer": "A"}', "a"),
    (5, '{"choice": "A", "reason": "The dog faces left."}', "a"),
    (5, '```json\n{"choice": "B", "reason": "The nose points right."}\n```', "b"),
    (7, '{"answer": "(b)", "confidence": "high"}', "b"),
    (9, '{"answer": "Yes"}', "a"),
    (9, '{"answer": "no"}', "b"),
    (13, '{"final_answer": "Multiple"}', "b"),
    (25, '{"option": "a"}', "a"),
    (3, "<answer>A</answer>", "a"),
    (3, "The flame is narrow.\n<answer>B</answer>", "b"),
    (99, "<answer>(b) Short</answer>", "b"),
    (117, "[b]", "b"),
    (117, "Answer: [a]", "a"),
    (147, "Answer - (a)", "a"),
    (1, '{"answer": "a", "explanation": "The wings are closed."}', None),
    (5, '{"answer": "A"} {"answer": "B"}', None),
    (25, '{"answer": "unclear"}', None),
    (153, '{"answer": "", "reason": "cannot see"}', None),
    (265, "<answer>I cannot tell</answer>", None),
]

OPTION_TEXT: list[Row] = [
    (1, "Open", "a"),
    (1, "Closed", "b"),
    (1, "The butterfly's wings are open.", "a"),
    (1, "The wings are closed.", "b"),
    (3, "The flame is thin.", "b"),
    (3, "It looks round.", "a"),
    (5, "The dog is facing left.", "a"),
    (5, "Facing right.", "b"),
    (7, "The bus is driving towards the camera.", "a"),
    (7, "It is driving away from the camera.", "b"),
    (13, "Multiple ears of corn.", "b"),
    (25, "The chicken's body is red.", "b"),
    (25, "Black.", "a"),
    (99, "The tusks are short.", "b"),
    (117, "I can see 1 eye.", "a"),
    (117, "Two eyes are visible.", "b"),
    (147, "The snake's head is not visible.", "b"),
    (153, "There is more than one red apple.", "b"),
    (265, "The laces are untied.", "b"),
    (271, "He is wearing a t-shirt.", "b"),
    (279, "The elderly person is sitting.", "b"),
    (279, "Standing.", "a"),
    (1, '"Closed"', "b"),
    (5, "'Left'", "a"),
    (9, '"Yes"', "a"),
    (9, '"No"', "b"),
    (9, "'No.'", "b"),
    (9, "Yes.", "a"),
    (9, "No, there is no Z key on this keyboard.", "b"),
    (9, "Yes, the Z key is in the bottom row, next to X.", "a"),
]

BOTH_NEITHER_NEGATION: list[Row] = [
    (1, "(a) or (b)", None),
    (1, "Both (a) and (b).", None),
    (1, "Neither.", None),
    (1, "Neither option fits.", None),
    (1, "Open or closed?", None),
    (1, "The wings are open and closed.", None),
    (1, "Not (a).", None),
    (1, "It's not option A.", None),
    (1, "The answer is not (b).", None),
    (5, "Not left.", None),
    (5, "The dog faces neither left nor right; it looks at the camera.", None),
    (5, "(a) is wrong.", None),
    (5, "Left, right, it's hard to say.", None),
    (7, "The bus is not driving towards the camera.", None),
    (9, "Yes and no.", None),
    (9, "Yes or no?", None),
    (13, "Both single and multiple.", None),
    (25, "(a) Red", None),
    (25, "Answer: (b) Black", None),
    (99, "A. Short", None),
    (1, "The wings are not open.", None),
    (5, "It isn't facing right.", None),
    (117, "(a) 2", None),
    (153, "(b) One", None),
    (279, "The answer is (a), not (a).", None),
    (1, "(a) is correct, (b) is not.", "a"),
    (1, "The wings are open, not closed.", "a"),
    (5, "Left, not right.", "a"),
    (1, "The answer is not (a); it is (b).", "b"),
    (147, "Not visible.", "b"),
]

REFUSALS_AND_HEDGES: list[Row] = [
    (1, "I'm sorry, but I can't see any image.", None),
    (1, "I cannot determine whether the wings are open or closed from this image.", None),
    (1, "It's hard to tell.", None),
    (5, "I'm not sure.", None),
    (5, "The image is too blurry to determine the direction.", None),
    (7, "It is unclear whether the bus is coming or going.", None),
    (9, "I'm unable to tell from this picture.", None),
    (13, "Maybe (b).", None),
    (25, "Perhaps black.", None),
    (99, "It could be (a) or (b).", None),
    (117, "Possibly 2.", None),
    (147, "The head might be visible.", None),
    (153, "There may be more than one apple.", None),
    (265, "Both options are plausible.", None),
    (271, "It's ambiguous.", None),
    (279, "I don't know.", None),
    (1, "There is no image attached, so I can't answer.", None),
    (3, "I can't be certain, but it may be thin.", None),
    (5, "It's difficult to say for sure, but it looks like left.", None),
    (1, "Either could be true.", None),
    (
        5,
        "It might look like either direction at first glance, but the answer is (b).",
        "b",
    ),
    (1, "I'm not completely sure, but my final answer is (b) Closed.", "b"),
    (7, "This is a difficult one. It could go either way; however, the answer is (a).", "a"),
    (13, "Maybe it's single, maybe multiple. Final answer: B", "b"),
    (25, "Hard to tell in this light. Answer: (a)", "a"),
    (99, "It's ambiguous, but I'd go with (a).", "a"),
    (117, "Possibly 1; the answer is (b).", "b"),
    (9, "It's hard to say, but the answer is no.", "b"),
    (147, "I'm unsure. Maybe (a), maybe (b).", None),
    (279, "It might be (a). Or maybe (b).", None),
]

SELF_CORRECTIONS: list[Row] = [
    (1, "My answer: (b). Hold on — checking the image again, it's really (a).", "a"),
    (9, "(a) Yes... although, looking closer, there is none: (b)", "b"),
    (1, "(a) Open. Wait, no, it's (b) Closed.", "b"),
    (5, "The answer is (a). Actually, the answer is (b).", "b"),
    (5, "Left. On second thought, the dog faces right: (b).", "b"),
    (7, "(b) Away from the camera. Correction: (a) Towards the camera.", "a"),
    (13, "A. Actually, looking more closely, there are several ears: B.", "b"),
    (25, "The chicken is black (a). Wait, the body is red, so (b).", "b"),
    (99, "Answer: (a). Hmm, actually it's (b).", "b"),
    (117, "2. Wait, I made a mistake, only one eye is visible: (a).", "a"),
    (147, "(a) Visible. On closer inspection, the head is hidden behind the rock: (b).", "b"),
    (153, "(a) One... no, it's (b) More than one.", "b"),
    (265, "The laces are tied (a). Actually, no, they are untied: (b).", "b"),
    (271, "(b) T-shirt. Let me reconsider - it has a collar. (a) Shirt.", "a"),
    (279, "Standing. Actually, she is sitting on a bench, so the answer is (b).", "b"),
    (1, "My answer is (b). Wait, let me check again.", None),
    (5, "(a) Left. Actually, I'm not sure.", None),
    (7, "A. Hmm, wait.", None),
    (9, "Yes. Actually, looking again, I cannot tell.", None),
    (13, "(b) Multiple. Correction: I am unable to determine this.", None),
    (25, "The answer is (a). On second thought, it could be (b).", None),
    (99, "(a) Long. Wait - could it be short?", None),
    (117, "1. Hmm, actually there might be two.", None),
    (147, "(b) Not visible. Let me look again at the image.", None),
    (153, "The answer is (a). Wait, no.", None),
    (265, "(a) Tied. Actually (a) is wrong.", None),
    (1, "Wait, let me look closely. The wings are folded. Answer: (b)", "b"),
    (5, "Hmm, wait. The dog's nose points left. The answer is (a).", "a"),
    (7, "Actually, the bus is clearly coming toward us: (a).", "a"),
    (1, "(b) Closed. Actually, the wings are pressed tightly together.", None),
]

HYPOTHETICALS: list[Row] = [
    (5, "(a) Left. If it were (b), we would see the dog's nose pointing right.", "a"),
    (1, "(b) Closed. If the wings were open, we would see the pattern on top.", "b"),
    (7, "(a) Towards the camera. Otherwise, we would see the back of the bus.", "a"),
    (
        99,
        "The answer is (b). Option (a) would mean the tusks reach the ground, which they do not.",
        "b",
    ),
    (147, "(a) Visible. If the head were hidden, the answer would be (b).", "a"),
    (279, "B. If she were standing, her knees would be straight.", "b"),
    (13, "If it were a single ear, the answer would be (a).", None),
    (25, "If the body were black, I would choose (a).", None),
    (3, "Were it round, we would see a circle of light.", None),
    (153, "If there were more than one apple, we'd say (b).", None),
]

CONTRADICTIONS_AND_IN_BETWEEN: list[Row] = [
    (5, "(a) Left. The dog faces right.", None),
    (1, "(a) Open. The wings are closed.", None),
    (7, "(b) Away from the camera. The bus is coming towards the camera.", None),
    (1, "The door is partly open.", None),
    (1, "The wings are partly open.", None),
    (1, "The wings are half open.", None),
    (1, "The wings are slightly closed.", None),
    (99, "The tusks are somewhat long.", None),
    (153, "The answer is (a). There is more than one apple.", None),
    (3, "The answer is (b). The flame is round.", None),
    (265, "B. The shoelaces are tied in a bow.", None),
    (1, "The wings are almost closed.", None),
    (1, "They are half-open.", None),
    (279, "A. She is sitting.", None),
    (25, "Answer: A. The chicken's body is red.", None),
]

CHAINS_OF_THOUGHT: list[Row] = [
    (
        1,
        "Let's analyze the image. The butterfly is perched on a flower. Its wings are spread "
        "wide, showing the pattern on their upper side. Therefore the wings are open.\n\n"
        "Answer: (a)",
        "a",
    ),
    (
        5,
        "To determine which way the dog is facing, I'll look at its head. The snout points "
        "to the right side of the frame, and the tail is on the left. So the dog is facing "
        "right.\n\n**Answer: (b) Right**",
        "b",
    ),
    (
        7,
        "Step 1: Identify the bus. Step 2: Look for headlights or tail lights. I can see the "
        "stop sign arm and the front windshield, which means the bus is approaching. The "
        "answer is (a) Towards the camera.",
        "a",
    ),
    (
        13,
        "The image shows a wooden table. On it there are several ears of corn, at least four, "
        "lying next to each other. So the image is of multiple ears.\n\nFinal answer: B",
        "b",
    ),
    (
        25,
        "Looking at the chicken, its feathers are a deep black with a green sheen. The comb "
        "is red, but the body itself is black. The answer is (a).",
        "a",
    ),
    (
        99,
        "Elephants can have long or short tusks. In this picture the tusks barely extend "
        "past the lips. Therefore, the tusks are short: (b).",
        "b",
    ),
    (
        117,
        "The cat is photographed from the side. Only the eye nearest the camera is visible; "
        "the other is hidden behind the nose. So I can see 1 eye.\nAnswer: (a)",
        "a",
    ),
    (
        147,
        "I looked for the snake's head. The body coils around a branch and the head is "
        "tucked underneath, out of sight. So the answer is (b) Not visible.",
        "b",
    ),
    (
        153,
        "Counting the apples: there is one red apple in the middle and two green ones beside "
        "it. The question asks about red apples, so the answer is (a) One.",
        "a",
    ),
    (
        265,
        "Examining the shoes: the laces are loose and hanging down on both sides, not "
        "knotted. Hence the shoe is untied. Answer: B",
        "b",
    ),
    (
        271,
        "The man's top has short sleeves, no collar, and is pulled over the head. That's a "
        "T-shirt.\n\nAnswer: (b)",
        "b",
    ),
    (
        279,
        "The elderly woman's knees are bent and she rests on a park bench. Therefore, she is "
        "sitting. The correct answer is (b).",
        "b",
    ),
    (
        1,
        "Let's look at each option. Option (a) Open: the wings would be spread. Option (b) "
        "Closed: the wings would be pressed together. They are pressed together, so the final "
        "answer is (b).",
        "b",
    ),
    (
        9,
        "I scanned the keyboard row by row. The bottom row shows the keys X, C, V and B, but "
        "the leftmost key is cut off by the frame. There is no visible 'Z' key. The answer "
        "is no.",
        "b",
    ),
    (
        3,
        "<think>The flame is tall and narrow. That means thin.</think>\n\nThe answer is (b) Thin.",
        "b",
    ),
    (
        5,
        "<think>Nose points left... or is that the tail? It's the nose.</think>(a) Left",
        "a",
    ),
    (
        7,
        "The bus's rear emergency door and tail lights are visible, so it is moving away. "
        "The answer is (b).",
        "b",
    ),
    (
        13,
        "Observing the image carefully, there appears to be just one ear of corn, still in "
        "its husk. Answer: (a) Single",
        "a",
    ),
    (
        25,
        "The chicken has red-brown plumage across its body and wings. Answer: B",
        "b",
    ),
    (
        99,
        "The elephant's tusks curve forward and extend well beyond the trunk's base, which "
        "makes them long. I choose (a).",
        "a",
    ),
    (
        1,
        "There are two possible answers: (a) Open and (b) Closed. Looking at the image, the "
        "butterfly shows only the underside of its wings, which are pressed together. "
        "Therefore, the answer is (b) Closed.",
        "b",
    ),
    (
        5,
        "Options: (a) Left, (b) Right. The dog's nose points toward the right edge, so the "
        "dog is facing right. Answer: B",
        "b",
    ),
    (
        147,
        "First, I locate the snake. Then I check whether the head can be seen. The head with "
        "its eyes is clearly visible at the top. So the answer is (a).",
        "a",
    ),
    (
        153,
        "I count three red apples in the bowl. So there is more than one. Answer: (b)",
        "b",
    ),
    (
        279,
        "The person is walking with a cane, upright, legs straight, so standing. Answer: A",
        "a",
    ),
    (
        117,
        "The cat faces the camera straight on and both eyes are open. I can see two eyes. "
        "Final answer: (b)",
        "b",
    ),
    (
        265,
        "The bow is neatly tied on top of the shoe. The answer is (a) Tied.",
        "a",
    ),
    (
        271,
        "Collar, buttons down the front, long sleeves: this is a button-up shirt, not a "
        "T-shirt. Answer: (a)",
        "a",
    ),
    (
        1,
        "Let me think step by step.\n1. The butterfly is on a leaf.\n2. Its wings are "
        "flat and spread out.\n3. Spread wings are open.\nSo the answer is A.",
        "a",
    ),
    (
        7,
        "Considering both options carefully, the evidence (headlights, windshield, driver) "
        "indicates the bus approaches. (a)",
        "a",
    ),
]

STYLES_BY_MODEL: list[Row] = [
    # GPT-4o: short, often a bold label with its text, sometimes a sentence.
    (1, "**(b) Closed**", "b"),
    (5, "The dog is facing **left** from the camera's perspective.", "a"),
    (7, "**Answer:** (a) Towards the camera", "a"),
    (9, 'No, the key "Z" is not visible in the image.', "b"),
    (25, "The chicken's body is **black**.", "a"),
    # Claude: a sentence of reasoning, then the answer.
    (
        1,
        "Looking at the image, the butterfly's wings are folded upright together over its "
        "back.\n\nThe answer is **(b) Closed**.",
        "b",
    ),
    (5, "The dog is facing to the right from the camera's perspective, so the answer is (b).", "b"),
    (13, "This appears to be a single ear of corn. **(a) Single**", "a"),
    (99, "Based on the image, the elephant has short tusks. The answer is (b) Short.", "b"),
    (147, "The snake's head is visible in this picture - (a) Visible.", "a"),
    # Gemini: a label line, then a bullet explanation.
    (3, "B\n\nThe flame is tall and narrow rather than round.", "b"),
    (7, "A\nThe bus's front is facing the camera.", "a"),
    (25, "**B**\n* The plumage is reddish brown.", "b"),
    (117, "(b)\n\nBoth eyes are visible.", "b"),
    (265, "A\n\n* The laces are tied in a bow.", "a"),
    # Qwen-VL: terse, a letter or the option text, often with a period.
    (1, "A.", "a"),
    (5, "Right", "b"),
    (9, "Yes", "a"),
    (153, "More than one", "b"),
    (279, "B. Sitting", "b"),
    # LLaVA: the option text as a sentence, sometimes echoing the question.
    (1, "The butterfly's wings are closer to being open.", "a"),
    (5, "The dog is facing right from the camera's perspective.", "b"),
    (7, "The school bus is driving away from the camera.", "b"),
    (9, 'Yes, I can see the key "Z" in the image.', "a"),
    (265, "The shoe is tied.", "a"),
    # Llama: an introduction, then the answer statement.
    (
        1,
        "Based on the image provided, I would say that the butterfly's wings are closer to "
        "being closed. The correct answer is (b) Closed.",
        "b",
    ),
    (
        5,
        "After analyzing the image, I can confirm that the dog is facing left from the "
        "camera's perspective. Therefore, the correct answer is (a) Left.",
        "a",
    ),
    (13, "Based on the image, the correct answer is: **(b) Multiple**", "b"),
    (25, "The correct answer is: (a) Black", "a"),
    (147, "The correct answer is (b) Not visible.", "b"),
]

OTHER_LANGUAGES: list[Row] = [
    # Chinese
    (1, "答案：B", "b"),
    (1, "答案是A。", "a"),
    (5, "正确答案是(b)。", "b"),
    (5, "我选择A。", "a"),
    (7, "选B", "b"),
    (7, "正确选项是A", "a"),
    (13, "答案：(b) Multiple", "b"),
    (25, "最终答案：a", "a"),
    (99, "答案为B，象牙很短。", "b"),
    (117, "选项B是正确的。", "b"),
    (147, "答案应该是A", "a"),
    (153, "我选B。", "b"),
    (279, "答案：b", "b"),
    (9, "是的，我可以看到Z键。", "a"),
    (9, "不是。", "b"),
    (1, "无法确定。", None),
    (5, "可能是A。", None),
    (7, "都不是。", None),
    # Japanese
    (1, "答え：B", "b"),
    (1, "答えはAです。", "a"),
    (5, "正解は(b)です。", "b"),
    (5, "Aを選びます。", "a"),
    (7, "回答：B", "b"),
    (13, "答えは B です。", "b"),
    (25, "Bが正解です。", "b"),
    (99, "答え：(a)", "a"),
    (9, "はい、Zキーが見えます。", "a"),
    (9, "いいえ、見えません。", "b"),
    (1, "わかりません。", None),
    (5, "Aかもしれません。", None),
    # French
    (1, "Réponse : B", "b"),
    (1, "La réponse est (a).", "a"),
    (5, "La bonne réponse est B.", "b"),
    (5, "Je choisis A.", "a"),
    (7, "L'option correcte est (b).", "b"),
    (13, "réponse : a", "a"),
    (25, "La réponse correcte est (b) Red.", "b"),
    (9, "Oui, je vois la touche Z.", "a"),
    (9, "Non, il n'y a pas de touche Z.", "b"),
    (99, "Je ne sais pas.", None),
    (117, "Peut-être (b).", None),
    # Spanish
    (1, "Respuesta: B", "b"),
    (1, "La respuesta es (a).", "a"),
    (5, "La respuesta correcta es B.", "b"),
    (5, "Elijo A.", "a"),
    (7, "La opción correcta es (b).", "b"),
    (13, "respuesta: b", "b"),
    (25, "La respuesta correcta es la B.", "b"),
    (9, "Sí, puedo ver la tecla Z.", "a"),
    (99, "No estoy seguro.", None),
    (117, "Tal vez (a).", None),
    # German
    (1, "Antwort: B", "b"),
    (1, "Die Antwort ist (a).", "a"),
    (5, "Die richtige Antwort ist B.", "b"),
    (5, "Ich wähle A.", "a"),
    (7, "Die richtige Option ist (b).", "b"),
    (13, "antwort: a", "a"),
    (25, "Die korrekte Antwort lautet (b).", "b"),
    (9, "Ja, die Taste Z ist zu sehen.", "a"),
    (9, "Nein, ich sehe keine Z-Taste.", "b"),
    (99, "Vielleicht (a).", None),
    (117, "Ich bin mir nicht sicher.", None),
]

EDGE_CASES: list[Row] = [
    (1, "", None),
    (1, "   \n  ", None),
    (1, "<think>The wings look", None),
    (5, "A dog is sitting on the grass.", None),
    (5, "A large dog is shown.", None),
    (1, "The answer is a black dog.", None),
    (153, "The one on the left is red.", None),
    (117, "The cat's left eye is visible.", None),
    (5, "The dog is leftover-colored.", None),
    (1, "(a) Open (b) Closed", None),
    (1, "Options: (a) Open, (b) Closed.", None),
    (1, "Are the wings open or closed?", None),
    (9, "There is no Z key.", None),
    (9, "I see keys: X, C, V.", None),
    (13, "Corn.", None),
    (271, "A shirt.", "a"),
    (269, "A painting hanging on it.", "b"),
    (269, "Answer: A painting hanging on it", "b"),
    (25, "A red chicken.", "b"),
    (99, "A", "a"),
]

IDIOMS_AND_LEADING_WORDS: list[Row] = [
    # An idiom that opens with "No" or "Yes" is no answer; what follows it may be.
    (9, "No doubt about it — the Z key sits at the bottom left, next to X.", "a"),
    (19, "No question, the dorsal fin is sticking out of the water.", "a"),
    (43, "No wonder the bus looks so tall: all four wheels are hidden behind the snowbank.", "b"),
    (97, "No kidding, every key glows blue from underneath.", "a"),
    (87, "No way to miss it: a hand rests on the mouse.", "a"),
    (67, "No matter where I look, the sky is clear blue with no clouds.", "b"),
    (11, "Yes and no: the tail is half raised but not fanned.", None),
    (55, "Not sure at first, but yes — the stems are at the top of the bunch.", "a"),
    (73, "Yes! Definitely wet — puddles everywhere.", "a"),
    (81, "Nope. The head is rounded, not hammer-shaped.", "b"),
    (39, "No doubt the duck is floating; it sits high on the water.", "a"),
    (113, "No, not one window anywhere.", "b"),
    (89, "No people, just an empty beach.", "b"),
    (125, "Yes there is a door on the left wall.", "a"),
    (93, "No the wrists are bare.", "b"),
    (1, "No doubt about it — the wings are spread wide open.", "a"),
    (71, "No question about it, it's locked.", "a"),
]

OPTION_WORDS_ABOUT_SOMETHING_ELSE: list[Row] = [
    # The option's word describes another thing in the image: no answer to the question.
    (
        5,
        "The dog is sitting to the left of the bench, and it's looking straight at the camera.",
        None,
    ),
    (123, "The duck floats to the right of a rock, and its beak points left.", "a"),
    (243, "A white rabbit sits on the left side of the lawn.", None),
    (
        293,
        "The sports car is parked on the right side of the street, nose pointing toward the left "
        "edge of the photo.",
        "a",
    ),
    (259, "The elderly couple walks on the right-hand path.", None),
    (25, "The chicken stands on black soil in front of a red barn.", None),
    (37, "The flowers in the foreground are pink.", None),
    (181, "The car is white with a blue stripe down the middle.", "a"),
    (207, "A red cutting board holds the pepper.", None),
    (103, "Down in the corner there is a needle, pointing up.", "a"),
    (75, "The photo shows the top of the flower, shot from directly above.", "a"),
    (149, "The piano stands against the left wall; its back panel faces right.", None),
    (5, "Right, so the dog is facing left.", "a"),
    (245, "The elderly man is sitting on a bench while a child is standing next to him.", "b"),
    (153, "One bowl holds the apples; there are three red ones.", "b"),
    (135, "Two hands hold a single cup of coffee.", "a"),
    (179, "One rider and two wheels are in view.", "b"),
    (47, "Two of the spots are on the head; there are 6 in total.", "b"),
]

BOTH_LETTERS_AND_REPETITION: list[Row] = [
    (1, "A, B", None),
    (5, "A/B", None),
    (7, "(a)(b)", None),
    (13, "Answer: A, B", None),
    (25, "A and B", None),
    (85, "Erect Drooping Erect Drooping Erect Drooping Erect Drooping", None),
    (99, "(a) (a) (a) (b) (b) (b) (a) (b) (a) (b)", None),
    (9, "Yes No Yes No Yes No Yes No", None),
    (141, "raised raised raised raised lowered lowered lowered", None),
]

CUT_OFF: list[Row] = [
    (1, "Looking at the butterfly, its wings are", None),
    (71, "The lock on the fence is", None),
    (5, "Let's analyze the dog's posture. The head is turned toward the", None),
    (99, "The correct answer is", None),
    (83, "Step 1: locate the truck cab. Step 2: check the door. The door appears to be", None),
    (7, "**Answer:** (", None),
    (85, "The dog's ears are clearly", None),
    (147, "Final answer: Not", None),
]

MARKED_NON_DECISIONS: list[Row] = [
    (1, r"\boxed{\text{(a) or (b)}}", None),
    (5, r"Final answer: $\boxed{\text{A or B}}$", None),
    (7, '{"answer": "(a) or (b)", "reason": "the bus is too far to tell"}', None),
    (13, '{"answer": "A/B"}', None),
    (25, "<answer>(a) or (b)</answer>", None),
    (85, "answer: either\nreason: ears are hidden by the hat", None),
    (99, "Answer: A or B, depending on the lighting.", None),
    (103, "<answer>up or down</answer>", None),
    (9, '{"answer": "yes or no"}', None),
    (141, "Final answer: (a)/(b)", None),
    (71, r"\boxed{?}", None),
    (1, "<response><answer>none</answer></response>", None),
]

LABEL_AGAINST_ITS_WORDS: list[Row] = [
    (1, "Answer: B (Open)", None),
    (5, "**A** – the dog looks to the right.", None),
    (7, "(b) — it's heading towards the camera, headlights on.", None),
    (71, "B. The shackle is clicked shut into the body; it's locked.", None),
    (99, "Option A: Short", None),
    (265, '{"answer": "b", "label_text": "Tied"}', None),
    (245, "B) Standing", None),
]

BLIND_GUESSES: list[Row] = [
    # A model that says it cannot see the image answers nothing about it, whatever it guesses.
    (1, "I can't see images, but butterflies usually rest with closed wings, so (b).", None),
    (5, "I'm unable to view the image. If I had to guess, I'd say (a) Left.", None),
    (
        9,
        "As a text-only model I cannot see the picture; most keyboards have a Z key, so yes.",
        None,
    ),
    (25, "No image was provided. Assuming a typical hen, the answer would be (b) Red.", None),
    (
        99,
        "I don't have the ability to view images. Based on typical African elephants, (a) Long.",
        None,
    ),
    (71, "Sorry, the image didn't load. Generally such locks are locked: A.", None),
    (207, "I cannot see the pepper, but bell peppers in stock photos are usually red → (a)", None),
]

REJECTED_OPTION_LAST: list[Row] = [
    (155, "The vase is beside the bedside table, not on the windowsill (b).", "a"),
    (1, "The wings are open (a), rather than closed (b).", "a"),
    (5, "It faces left, so the answer is (a) and not (b).", "a"),
    (85, "Erect, definitely not drooping (b).", "a"),
    (163, "It's in front of a large window, not in front of a wall between two windows (b).", "a"),
    (251, "It's a glass, not a mug (a).", "b"),
    (71, "Unlocked — not (a) Locked.", "b"),
    (99, "The tusks are long (a); they are certainly not short (b).", "a"),
]

HEDGED_PICKS: list[Row] = [
    # A pick with a caveat is still a pick: a person reads it at once.
    (5, "I think it's B, but I'm not completely sure.", "b"),
    (1, "I believe the answer is (a), though the angle makes it a little hard to tell.", "a"),
    (71, "Probably locked — the shackle looks closed, but the photo is small.", "a"),
    (99, "I'm fairly confident it's (b) Short.", "b"),
    (85, "My best guess is (a) Erect.", "a"),
    (7, "I'm not 100% certain, but I'd go with (b).", "b"),
    (13, "Most likely multiple, but it's hard to be certain.", "b"),
    (103, "It looks like the needle points down, although the dial is blurry.", "b"),
    (9, "I think so — yes, there's a Z in the lower left.", "a"),
    (141, "I'd lean toward (a) Raised.", "a"),
]

REVISED_FINAL_ANSWERS: list[Row] = [
    (
        1,
        "Final answer: (a)\n\nWait — looking again, the wings are pressed together. Final answer: (b)",
        "b",
    ),
    (
        5,
        "Answer: Left. Actually, on closer inspection the nose points right, so the answer is Right.",
        "b",
    ),
    (85, "**Final answer: B**\n\nCorrection: the ears stand straight up. **Final answer: A**", "a"),
    (99, "Final answer: (b). Hmm, hold on, they're long. Final answer: (a).", "a"),
    (71, "Final answer: A. Wait, I may be wrong.", None),
    (
        141,
        "Final answer: (a) Raised. Let me double-check... yes, the trunk is lifted above the head. "
        "(a).",
        "a",
    ),
]

BETWEEN_X_AND_Y: list[Row] = [
    (5, "Between left and right, I'd say left.", "a"),
    (99, "Between (a) and (b), I'd say (b).", "b"),
    (85, "Between erect and drooping, I'd go with drooping.", "b"),
    (71, "Between locked and unlocked, it's locked.", "a"),
    (1, "Between (a) and (b), it's hard to decide.", None),
    (251, "Between a mug and a glass, I'd pick the glass.", "b"),
]

REASONING_TRACES: list[Row] = [
    (
        1,
        "<think>\nThe wings form a flat V... the upper side pattern is visible, so they're "
        "spread.\n</think>\n\nFinal answer: A",
        "a",
    ),
    (
        5,
        "Let me reason. The tail is on the left, the snout on the right. A dog faces where its "
        "snout points. Therefore it faces right.\n\nFinal answer: B",
        "b",
    ),
    (
        85,
        "Thinking: The ears fold down over the sides of the head, covering the ear canal. That "
        "is drooping, not erect.\nFinal answer: B",
        "b",
    ),
    (
        9,
        "Okay, so the question is whether Z is visible. Row three: A S D F... row four: Z X C V. "
        "There it is.\nFinal answer: Yes",
        "a",
    ),
    (
        103,
        "<think>Needle tip at 6 o'clock. So down. But wait, is that the tail? No, the tail is the "
        "short end.</think>\nDown",
        "b",
    ),
    (141, "<think>raised? lowered? The trunk curls up above the head.</think>", None),
    (71, "<think>The shackle is inserted into the body.</think>\n\n**Answer:** Locked (a)", "a"),
    (245, "<think>\nShe sits on a bench. Sitting.\n</think>\nThe answer is (b) Sitting.", "b"),
    (13, "<think>I count six ears... wait, that's one ear with leaves. Single.</think>\n(a)", "a"),
    (
        75,
        "<think>Looking down at the flower? The petals radiate in a full circle around the "
        "center, so top view.</think>\n\nA",
        "a",
    ),
    (
        99,
        "<think>Tusks short. Answer B.</think>\nLet me double check: the tusks are short. Final "
        "answer: B",
        "b",
    ),
    (
        265,
        "Reasoning:\n1. Laces visible? Yes.\n2. Knot or bow? A bow is visible.\n3. Conclusion: "
        "tied.\n\nFinal answer: A",
        "a",
    ),
    (
        243,
        "Step-by-step: (1) find the rabbit's head; (2) the ears point back to the right; (3) the "
        "nose is on the left. Final answer: Left",
        "a",
    ),
    (
        19,
        "The fin? Let me check the top of the back. A tall triangular fin cuts the surface. "
        "Final answer: (a) Yes",
        "a",
    ),
]

MODEL_FAMILIES: list[Row] = [
    # GPT-4o / GPT-4.1
    (85, "The dog's ears are **drooping**.", "b"),
    (103, "The needle is pointing **down**.", "b"),
    (141, "**(a) Raised** — the trunk is lifted above the head.", "a"),
    (71, "The lock is **unlocked**; the shackle is open.", "b"),
    # Claude
    (
        99,
        "Looking at this image, I can see an elephant whose tusks extend well past its chin and "
        "curve upward. These are long tusks.\n\n**Answer: (a) Long**",
        "a",
    ),
    (
        245,
        "In this image, the elderly woman is seated on a park bench with her hands resting in "
        "her lap. She is sitting.\n\nThe answer is **(b) Sitting**.",
        "b",
    ),
    (
        9,
        'I don\'t see a "Z" key in this image — the visible portion of the keyboard shows only '
        "the number row and part of the QWERTY row.\n\n**(b) No**",
        "b",
    ),
    (
        5,
        "I can't determine the dog's orientation with confidence from this image, as it "
        "appears to be blurred.",
        None,
    ),
    # Gemini
    (
        141,
        "**Answer:** (b) Lowered\n\n**Explanation:**\n* The trunk hangs straight down toward "
        "the ground.",
        "b",
    ),
    (
        13,
        "The image shows **multiple** ears of corn.\n\n* There are at least five ears stacked in a crate.",
        "b",
    ),
    (
        85,
        "Based on the image, the dog's ears are **erect**.\n\nHere's why:\n* They point straight up.",
        "a",
    ),
    # Qwen-VL
    (71, "Locked", "a"),
    (243, "Left.", "a"),
    (263, "Slice", "a"),
    (25, "The chicken's body is black.", "a"),
    # LLaVA
    (85, "The dog's ears are drooping.", "b"),
    (103, "The needle is pointing up.", "a"),
    (9, 'No, there is no key with the letter "Z" visible in the image.', "b"),
    (245, "The elderly person in the picture is sitting on a bench.", "b"),
    (19, "Yes, the dorsal fin of the dolphin is visible in the image.", "a"),
    # InternVL
    (5, "B", "b"),
    (99, "A. Long", "a"),
    (141, "(b) Lowered", "b"),
    (103, "The answer is A.", "a"),
    (71, "B. Unlocked", "b"),
    # Llama 3.2 Vision
    (
        85,
        "**Step 1: Analyze the image.** The dog has long ears that hang down.\n\n**Step 2: "
        "Determine the answer.** They are drooping.\n\n*Answer*: (b) Drooping",
        "b",
    ),
    (245, "**Answer:** B", "b"),
]

FORMATS: list[Row] = [
    (1, "## Answer\n\n**(b) Closed**", "b"),
    (5, "> **Answer:** Right", "b"),
    (85, "- **Ears:** drooping\n- **Answer:** (b)", "b"),
    (99, r"The tusks are short, so the answer is $\boxed{B}$.", "b"),
    (103, r"$$\boxed{\text{(b) Down}}$$", "b"),
    (141, r"\textbf{Answer:} (a) Raised", "a"),
    (71, r"\boxed{\text{Locked}}", "a"),
    (9, r"\boxed{\text{No}}", "b"),
    (5, '```json\n{\n  "answer": "(a)",\n  "rationale": "snout points left"\n}\n```', "a"),
    (13, '{"answer": "B", "confidence": 0.9}', "b"),
    (85, '{"choice": "Drooping"}', "b"),
    (141, "```yaml\nanswer: b\nreason: trunk hangs down\n```", "b"),
    (99, "answer: (a)\nconfidence: high", "a"),
    (245, "<answer>\n  (b)\n</answer>", "b"),
    (1, "<response>\n  <choice>a</choice>\n  <reason>wings spread</reason>\n</response>", "a"),
    (71, "<result><answer>B</answer></result>", "b"),
    (5, '{"answer": "Left", "reason": "The dog faces right."}', None),
    (25, "```\nB\n```", "b"),
]

MORE_LANGUAGES: list[Row] = [
    # Korean
    (1, "정답: B", "b"),
    (5, "답은 (a)입니다.", "a"),
    (9, "네, Z 키가 보입니다.", "a"),
    (9, "아니요, Z 키는 보이지 않습니다.", "b"),
    (71, "잘 모르겠습니다.", None),
    # Italian
    (1, "Risposta: B", "b"),
    (5, "La risposta corretta è (a).", "a"),
    (9, "Sì, il tasto Z è visibile.", "a"),
    (85, "Non sono sicuro.", None),
    (99, "La risposta è B: le zanne sono corte.", "b"),
    # Portuguese ("A" is the article)
    (1, "Resposta: (b)", "b"),
    (5, "A resposta correta é B.", "b"),
    (9, "Não, não vejo a tecla Z.", "b"),
    (71, "Não tenho certeza.", None),
    (245, "A pessoa idosa está sentada. Resposta: B", "b"),
    # Russian
    (1, "Ответ: B", "b"),
    (5, "Правильный ответ — (a).", "a"),
    (9, "Да, клавиша Z видна.", "a"),
    (9, "Нет, клавиши Z не видно.", "b"),
    (85, "Не уверен.", None),
    # Chinese
    (85, "耳朵是下垂的，所以答案是(b)。", "b"),
    (9, "不，看不到Z键。", "b"),
    (1, "答案：A或B", None),
    (71, "我认为是(a)，但不太确定。", "a"),
    # Japanese
    (85, "耳は垂れています。答え：(b)", "b"),
    (9, "いいえ。", "b"),
    (5, "最終的な答え：B", "b"),
    # French
    (85, "Les oreilles sont tombantes, donc (b).", "b"),
    (71, "Réponse finale : A", "a"),
    (9, "Non.", "b"),
    # Spanish
    (85, "Las orejas están caídas. Respuesta final: B", "b"),
    (9, "No, no se ve la tecla Z.", "b"),
    (71, "Respuesta: A o B", None),
    # German
    (85, "Die Ohren hängen herab. Antwort: (b)", "b"),
    (71, "Ich denke, es ist (a), bin mir aber nicht ganz sicher.", "a"),
    (9, "Nein.", "b"),
]

TABLE: list[Row] = [
    *BARE_LABELS,
    *LEADING_LABELS,
    *ANSWER_MARKERS,
    *STRUCTURED,
    *OPTION_TEXT,
    *BOTH_NEITHER_NEGATION,
    *REFUSALS_AND_HEDGES,
    *SELF_CORRECTIONS,
    *HYPOTHETICALS,
    *CONTRADICTIONS_AND_IN_BETWEEN,
    *CHAINS_OF_THOUGHT,
    *STYLES_BY_MODEL,
    *OTHER_LANGUAGES,
    *EDGE_CASES,
    *IDIOMS_AND_LEADING_WORDS,
    *OPTION_WORDS_ABOUT_SOMETHING_ELSE,
    *BOTH_LETTERS_AND_REPETITION,
    *CUT_OFF,
    *MARKED_NON_DECISIONS,
    *LABEL_AGAINST_ITS_WORDS,
    *BLIND_GUESSES,
    *REJECTED_OPTION_LAST,
    *HEDGED_PICKS,
    *REVISED_FINAL_ANSWERS,
    *BETWEEN_X_AND_Y,
    *REASONING_TRACES,
    *MODEL_FAMILIES,
    *FORMATS,
    *MORE_LANGUAGES,
]
