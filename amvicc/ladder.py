"""GRIP's question ladder as every stage reads it: rungs, their file, and the typed comparator.

A procedural scene (:mod:`amvicc.scenes`) carries five questions of rising competence, each
with an answer derived from the scene's state: 1 observe or count, 2 basic relation or class
(the pair's own question), 3 precise comparison, 4 multi-step integration, 5 a counterfactual
about a modified scene. The scenes stage writes them to ``ladder.jsonl``; the answering stage
asks them (``amvicc answer --ladder``), grading reads the replies with :func:`compare`, and
the report counts them per level. They live here, below the stages, because stages never
import each other.

The comparator decides less rather than decides wrong: a whole number is read only when the
reply names exactly one; options, yes/no and words go through the MMVP extractor over the
rung's two choices; anything else stays undecided, for the LLM judge or a person.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from amvicc.errors import UserError
from amvicc.extract import extract_from_options
from amvicc.provenance import canonical_json

if TYPE_CHECKING:
    from amvicc.store import ResponseRecord

AnswerType = Literal["option", "integer", "yes/no", "word"]
ANSWER_TYPES: tuple[str, ...] = get_args(AnswerType)
LADDER_LEVELS = (1, 2, 3, 4, 5)
LEVEL_NAMES = {
    1: "observe or count",
    2: "basic relation or class",
    3: "precise comparison",
    4: "multi-step integration",
    5: "counterfactual",
}
LADDER_FILE = "ladder.jsonl"
#: A ladder reply's image key: the rung asked about the image (``rung:3``).
RUNG_PREFIX = "rung:"
#: Bumped when :func:`compare` reads replies differently (stored with every verdict), which
#: includes every change of the extractor it reads options with (2: extractor v3).
COMPARATOR_VERSION = 2


@dataclass(frozen=True)
class LadderQuestion:
    """One rung: the question, the type of its answer, the answer, and the choices offered.

    Attributes:
        level: 1 (observe) to 5 (counterfactual).
        question: as asked.
        type: ``option``, ``integer``, ``yes/no`` or ``word``.
        answer: ``(a)``/``(b)``, a whole number as text, ``yes``/``no``, or the word.
        choices: the two choices for option, yes/no and word questions.
    """

    level: int
    question: str
    type: AnswerType
    answer: str
    choices: tuple[str, str] | None = None

    def manifest(self) -> dict[str, Any]:
        """The rung as ``ladder.jsonl`` writes it (and an answer run records it)."""
        entry: dict[str, Any] = {
            "level": self.level,
            "question": self.question,
            "type": self.type,
            "answer": self.answer,
        }
        if self.choices is not None:
            entry["choices"] = list(self.choices)
        return entry

    @classmethod
    def from_manifest(cls, entry: Mapping[str, Any]) -> LadderQuestion:
        """The rung :meth:`manifest` wrote.

        Raises:
            ValueError: a field is missing or of the wrong kind.
        """
        level, question, kind, answer = (
            entry.get(k) for k in ("level", "question", "type", "answer")
        )
        if not isinstance(level, int) or level not in LADDER_LEVELS:
            raise ValueError(f"level must be one of 1-5, not {level!r}")
        if not isinstance(question, str) or not question.strip():
            raise ValueError("a rung needs its question")
        if kind not in ANSWER_TYPES:
            raise ValueError(f"type must be one of {', '.join(ANSWER_TYPES)}, not {kind!r}")
        if not isinstance(answer, str) or not answer:
            raise ValueError("a rung needs its answer")
        raw = entry.get("choices")
        choices: tuple[str, str] | None = None
        if kind == "integer":
            if not answer.isdigit():
                raise ValueError(f"an integer rung's answer must be a whole number, not {answer!r}")
        elif not (isinstance(raw, list) and len(raw) == 2 and all(isinstance(c, str) for c in raw)):
            raise ValueError(f"a {kind} rung needs its two choices")
        else:
            choices = (raw[0], raw[1])
        return cls(level, question, kind, answer, choices)

    @property
    def expected(self) -> str:
        """The answer as a person reads it: the option's text for an option rung."""
        if self.type == "option" and self.choices is not None:
            return f"{self.answer} {self.choices[0 if self.answer == '(a)' else 1]}"
        return self.answer


def load_ladder(path: Path) -> dict[int, tuple[LadderQuestion, ...]]:
    """Every image's rungs from a ``ladder.jsonl`` (``amvicc scenes build`` writes one).

    Raises:
        UserError: the file cannot be read, or a line is not a ladder entry (file and line).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(
            f"no ladder at {path}; `amvicc scenes build` writes one beside its catalogue"
        ) from None
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"cannot read the ladder {path}: {err}") from None
    ladder: dict[int, tuple[LadderQuestion, ...]] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            index = entry["index"]
            if not isinstance(index, int) or index < 1:
                raise ValueError(f"index must be a positive whole number, not {index!r}")
            if index in ladder:
                raise ValueError(f"index {index} appears twice")
            rungs = tuple(LadderQuestion.from_manifest(q) for q in entry["questions"])
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            reason = f"missing {err}" if isinstance(err, KeyError) else str(err)
            raise UserError(f"{path}, line {number}: not a ladder entry ({reason})") from None
        ladder[index] = rungs
    if not ladder:
        raise UserError(f"{path} holds no ladder entry")
    return ladder


def rung_key(level: int) -> str:
    """The image key a reply to this rung is stored under (one slot per rung of an image)."""
    return f"{RUNG_PREFIX}{level}"


def response_rung(response: ResponseRecord) -> LadderQuestion:
    """The rung a ladder reply answers, as the answering stage recorded it with the reply.

    Grading, the scoring app's audit and the report read the rung from the store alone (the
    ``rung`` of the reply's request record), so none of them needs the ``ladder.jsonl`` the
    run was asked from, nor the scene catalogue.

    Raises:
        ValueError: the request record holds no rung (not a ladder reply) or a malformed one.
    """
    try:
        request = json.loads(response.request_json)
    except ValueError:
        raise ValueError(f"reply {response.response_id}: its request record is not JSON") from None
    entry = request.get("rung") if isinstance(request, dict) else None
    if not isinstance(entry, dict):
        raise ValueError(f"reply {response.response_id} records no ladder rung")
    try:
        return LadderQuestion.from_manifest(entry)
    except ValueError as err:
        raise ValueError(f"reply {response.response_id}: its rung is malformed ({err})") from None


def ladder_sha256(ladder: Mapping[int, tuple[LadderQuestion, ...]]) -> str:
    """A ladder's identity: the SHA-256 of its rungs, whatever the file's layout."""
    rungs = {str(index): [r.manifest() for r in ladder[index]] for index in sorted(ladder)}
    return hashlib.sha256(canonical_json(rungs).encode()).hexdigest()


_NUMBER_LIST = "zero one two three four five six seven eight nine ten eleven twelve thirteen"
_NUMBER_LIST += " fourteen fifteen sixteen seventeen eighteen nineteen twenty"
_NUMBER_WORDS = {word: value for value, word in enumerate(_NUMBER_LIST.split(" "))}
_NUMBER = re.compile(r"\b(\d+|" + "|".join(_NUMBER_WORDS) + r")\b", re.IGNORECASE)


def read_integer(reply: str | None) -> int | None:
    """The whole number a reply gives, or None when it gives none or several different ones."""
    if not reply:
        return None
    found = {int(m) if m.isdigit() else _NUMBER_WORDS[m.lower()] for m in _NUMBER.findall(reply)}
    return found.pop() if len(found) == 1 else None


@dataclass(frozen=True)
class Reading:
    """What the comparator read in a reply.

    Attributes:
        read: the answer as read (a number, ``(a)``, ``yes``, a word), or None (undecided).
        rule: how it was read (``integer``, or the extractor's rule), or why not.
        correct: whether ``read`` is the rung's answer; None when undecided.
    """

    read: str | None
    rule: str
    correct: bool | None

    @property
    def value(self) -> Literal["correct", "incorrect", "undecided"]:
        """The verdict value the grading stage stores."""
        if self.correct is None:
            return "undecided"
        return "correct" if self.correct else "incorrect"


def read_reply(rung: LadderQuestion, reply: str | None) -> Reading:
    """Read a reply to a rung: numbers parsed, words normalised, options by the extractor."""
    if rung.type == "integer":
        value = read_integer(reply)
        if value is None:
            return Reading(None, "no-single-number", None)
        return Reading(str(value), "integer", value == int(rung.answer))
    choices = rung.choices
    if choices is None:
        raise ValueError(f"a {rung.type} rung needs its two choices")
    extraction = extract_from_options(reply, choices, rung.question)
    if extraction.choice is None:
        return Reading(None, extraction.rule, None)
    if rung.type == "option":
        read = f"({extraction.choice})"
        return Reading(read, extraction.rule, read == rung.answer)
    chosen = choices[0] if extraction.choice == "a" else choices[1]
    return Reading(chosen.lower(), extraction.rule, chosen.lower() == rung.answer.lower())


def compare(rung: LadderQuestion, reply: str | None) -> bool | None:
    """Whether a reply answers the rung correctly; None when it cannot be read (undecided)."""
    return read_reply(rung, reply).correct
