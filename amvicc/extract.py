r"""Stage 1 of grading: read which option a VLM's reply chose, deterministically.

:func:`extract_choice` reads the forms real models write: a bare label (``B``, ``(a)``), a
leading label (``A. Open``, ``**(b) Right**``), an answer statement (``Answer: B``, ``The answer
is left``, ``\boxed{A}``), the option's own text (``Open``, ``Towards the camera``) and a leading
yes or no for yes/no questions. It never guesses: a reply that names both options, neither,
negates its pick, contradicts itself or hedges stays undecided, for the LLM judge and then a
person. Each decision carries the rule that made it, stored with the verdict.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from amvicc.catalogue import OPTION_LABELS, OptionLabel, Question

# Bump when a rule changes, so stored verdicts say which extractor made them.
EXTRACTOR_VERSION = 1

ExtractionValue = Literal["a", "b", "undecided"]


@dataclass(frozen=True)
class Extraction:
    """The option a reply chose, or None, and the rule that decided.

    Attributes:
        choice: ``a``, ``b`` or None (undecided).
        rule: for a choice, the rule that found it (``label-only``, ``answer-marker``,
            ``leading-label``, ``leading-yes-no``, ``label-mention``, ``option-text``); for
            undecided, why (``empty``, ``hedge``, ``both-labels``, ``both-options``,
            ``conflict``, ``negated``, ``conflicting-answers``, ``no-answer-found``, ...).
    """

    choice: OptionLabel | None
    rule: str

    @property
    def value(self) -> ExtractionValue:
        """The verdict value: the option, or ``undecided``."""
        return self.choice or "undecided"


def extract_choice(text: str | None, question: Question) -> Extraction:
    """Read which of the question's two options ``text`` chose.

    Args:
        text: the model's reply, verbatim.
        question: the question asked (its options' labels and texts are what is looked for).

    Returns:
        The option and the rule that decided it, or ``choice=None`` with the reason.
    """
    return _Extractor(question.options[0].text, question.options[1].text).extract(text)


def extract_from_options(text: str | None, options: Sequence[str]) -> Extraction:
    """:func:`extract_choice` for two option texts given directly (``(a)``, ``(b)``)."""
    if len(options) != 2:
        raise ValueError("exactly two options are needed")
    return _Extractor(options[0], options[1]).extract(text)


# --- cleaning --------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MARKDOWN = re.compile(r"[*_`#>~|]+")
_SPACES = re.compile(r"\s+")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _THINK.sub(" ", text)
    text = re.sub(r"\\boxed\s*\{\s*\\?(?:text\s*\{)?([^{}]*)\}?\s*\}", r" Final answer: \1. ", text)
    text = _MARKDOWN.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


# --- label patterns --------------------------------------------------------------------------

_LABEL_ONLY = re.compile(
    r"^(?:option|choice|answer)?\s*[:\-]?\s*\(?\s*([ab])\s*\)?\s*[.:!]?$", re.IGNORECASE
)
# "(a)", "option B", "choice (b)", "letter A": a label mentioned anywhere.
_LABEL_MENTION = re.compile(
    r"\(\s*([abAB])\s*\)|\b(?:option|choice|letter)\s*\(?\s*([abAB])\b\)?(?![\w'])", re.IGNORECASE
)
# A reply that starts with its label. A bare uppercase "A" followed by a word is an article.
_LEADING_LABEL = re.compile(
    r"^(?:\(\s*([abAB])\s*\)"
    r"|([abAB])\s*[.):](?![\w.])"
    r"|([AB])(?=\s*(?:$|[,;!\-\u2013\u2014]))"
    r"|(B)(?=\s))"
)
_LEADING_YES_NO = re.compile(r"^(yes|yeah|yep|no|nope)\b", re.IGNORECASE)
_YES_WORDS = frozenset({"yes", "yeah", "yep"})

# An answer statement: "Answer: B", "the correct answer is (a)", "I would choose B".
_MARKER = re.compile(
    r"(?:\b(?:final|correct|right|best|my|the)\s+)?"
    r"\b(?:answer|option|choice)\s*(?::|=|\-|\u2013|\u2014|\s(?:is|would\s+be|will\s+be|should\s+be"
    r"|must\s+be|here\s+is)\b\s*:?)"
    r"|\bi\s*(?:would|'d|will)?\s*(?:choose|pick|select|go\s+with)\b",
    re.IGNORECASE,
)
_SEGMENT_END = re.compile(r"(?<![A-Za-z]\.[A-Za-z])[.;!?\n](?:\s|$)|$")
# The label an answer statement gives; as at the start of a reply, "A painting" is an article.
_SEGMENT_LABEL = re.compile(
    r"^(?:(?i:option|choice|letter)\s*)?(?:\(\s*([abAB])\s*\)"
    r"|([abAB])(?=\s*(?:$|[).:,;!\-\u2013\u2014]))|(B)(?=\s))"
)
_SEGMENT_NEGATION = re.compile(r"^(?:not|never|neither|none)\b", re.IGNORECASE)

# A label or option said to be wrong: "(a) is incorrect", "not (b)", "Open is not right".
_NEGATED_BEFORE = re.compile(r"(?:\bnot|n't|\bnever|\bexcept|\brather\s+than)\s*$", re.IGNORECASE)
_WRONG = (
    r"(?:is|are|was|seems|would\s+be)\s+(?:not\s+(?:correct|right|true|accurate"
    r"|the\s+(?:correct\s+|right\s+)?answer)|wrong|incorrect|false|inaccurate|ruled\s+out|unlikely)"
    r"|(?:is|are)n't\s+(?:correct|right|true|the\s+answer)|(?:can|could)\s+be\s+ruled\s+out"
    r"|(?:is|are)(?:\s+not|n't)(?=\s*(?:[.,;!]|$))"
)
_LABEL_WRONG_AFTER = re.compile(r"^\s*(?:[\w'\-]+\s+){0,4}?(?:" + _WRONG + r")\b", re.IGNORECASE)
_OPTION_WRONG_AFTER = re.compile(r"^\s*(?:" + _WRONG + r")\b", re.IGNORECASE)

# Hedges and refusals: the reply does not commit to one option.
_HEDGE = re.compile(
    r"\b(?:can(?:'t|not|\s+not)|could(?:n't|\s+not)|unable\s+to|impossible\s+to|not\s+possible\s+to"
    r"|hard\s+to|difficult\s+to|no\s+way\s+to)\s+(?:\w+\s+){0,3}?"
    r"(?:tell|determine|say|know|answer|decide|judge|be\s+sure|confirm|see\s+the\s+image"
    r"|identify|distinguish|make\s+out|be\s+certain)\b"
    r"|\b(?:not\s+(?:sure|certain|clear)|unsure|uncertain|unclear|ambiguous|inconclusive"
    r"|indeterminate|undeterminable|i\s+don't\s+know|no\s+image|either|neither|maybe|perhaps"
    r"|possibly|might\s+be|could\s+be|may\s+be)\b"
    r"|\byes\s*(?:and|or|/)\s*no\b|\bno\s*(?:and|or|/)\s*yes\b"
    r"|\bboth\s+(?:options|answers|choices|are\s+(?:possible|plausible|correct|valid|true)"
    r"|could|might|seem)\b",
    re.IGNORECASE,
)

# --- option text -----------------------------------------------------------------------------

_TOKEN = re.compile(r"[a-z0-9]+(?:['/\-][a-z0-9]+)*")
_NUMBER_WORDS = {
    word: str(number)
    for number, word in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
}
_NEGATORS = frozenset(
    [
        "not",
        "no",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "doesn't",
        "don't",
        "didn't",
        "never",
        "neither",
        "nor",
        "without",
        "hardly",
        "barely",
        "cannot",
        "can't",
        "nothing",
        "none",
    ]
)
_CLAUSE_BREAK = re.compile(r"[.,;:!?()]|\bbut\b|\bhowever\b|\bwhile\b|\bwhereas\b")
# "the one on the left", "one of them": the pronoun, not the number.
_PRONOUN_ONE_BEFORE = frozenset(["the", "this", "that", "which", "each", "every", "any", "no"])


@dataclass(frozen=True)
class _Token:
    norm: str
    start: int
    end: int


def _normalise_token(raw: str) -> str:
    token = _NUMBER_WORDS.get(raw, raw)
    if token.endswith("wards"):  # towards -> toward, upwards -> upward
        token = token[:-1]
    return token


def _tokens(text: str) -> list[_Token]:
    lowered = text.lower()
    return [
        _Token(_normalise_token(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(lowered)
    ]


@dataclass(frozen=True)
class _Span:
    label: OptionLabel
    first: int  # token indices, end exclusive
    last: int


class _OptionText:
    """Finds where a text names each option, skipping negated and echoed mentions."""

    def __init__(self, a: str, b: str) -> None:
        self.text: dict[OptionLabel, str] = {"a": a.strip(), "b": b.strip()}
        self.words: dict[OptionLabel, tuple[str, ...]] = {
            "a": tuple(t.norm for t in _tokens(a)),
            "b": tuple(t.norm for t in _tokens(b)),
        }
        # Options that differ only in punctuation ("Happy Easter" / "Happy Easter!") cannot be
        # told apart by their words; only labels decide those.
        self.usable = all(self.words.values()) and self.words["a"] != self.words["b"]
        self.yes_no = {self.words["a"], self.words["b"]} == {("yes",), ("no",)}
        listed = r"(?:\(\s*{label}\s*\)|\b{label}[.):])\s*[\"']?{text}[\"']?"  # (a) Open / a. Open
        self._listing = re.compile(
            listed.format(label="a", text=re.escape(a.strip()))
            + r"\s*[,;]?\s*(?:and\s+|or\s+)?"
            + listed.format(label="b", text=re.escape(b.strip())),
            re.IGNORECASE,
        )

    def without_listing(self, text: str) -> str:
        """``text`` with restatements of both options (``(a) Open (b) Closed``) removed."""
        return self._listing.sub(" ", text).strip(" ,.;:\n")

    def label_of_word(self, word: str) -> OptionLabel | None:
        """For yes/no questions: the option a leading yes or no stands for."""
        word = "yes" if word.lower() in _YES_WORDS else "no"
        for label in OPTION_LABELS:
            if self.words[label] == (word,):
                return label
        return None

    def votes(self, text: str) -> set[OptionLabel]:
        """The options ``text`` names without negating them."""
        if self.yes_no:
            return set()
        if not self.usable:
            return self._exact_votes(text)
        tokens = _tokens(text)
        spans = self._spans(tokens)
        return {s.label for s in spans if not self._negated(s, tokens, text)}

    def _exact_votes(self, text: str) -> set[OptionLabel]:
        """The options whose exact text appears, for options that differ only in punctuation.

        (``"Happy Easter"`` / ``"Happy Easter!"``.) Where one option's text holds the other's,
        the longer one wins.
        """
        lowered = text.lower()
        exact = {label: self.text[label].lower() for label in OPTION_LABELS}
        found = {label for label in OPTION_LABELS if exact[label] and exact[label] in lowered}
        if found == {"a", "b"}:
            longer = max(OPTION_LABELS, key=lambda label: len(exact[label]))
            shorter = _other(longer)
            if exact[shorter] in exact[longer] and lowered.count(exact[shorter]) == lowered.count(
                exact[longer]
            ):
                return {longer}
        return found

    def _spans(self, tokens: list[_Token]) -> list[_Span]:
        words = [t.norm for t in tokens]
        found: list[_Span] = []
        for label in OPTION_LABELS:
            target = self.words[label]
            size = len(target)
            for i in range(len(words) - size + 1):
                if tuple(words[i : i + size]) == target:
                    found.append(_Span(label, i, i + size))
        # A mention inside a longer option's mention belongs to that option
        # ("visible" inside "not visible", "one" inside "more than one").
        kept = [
            s
            for s in found
            if not any(
                o is not s
                and o.last - o.first > s.last - s.first
                and o.first <= s.first
                and s.last <= o.last
                for o in found
            )
        ]
        kept = [s for s in kept if not self._pronoun_one(s, tokens)]
        # "open or closed" echoes the question; it is no answer.
        echoed: set[int] = set()
        for i, first in enumerate(kept):
            for j, second in enumerate(kept):
                if (
                    first.label != second.label
                    and second.first == first.last + 1
                    and words[first.last] in ("or", "nor")
                ):
                    echoed.update((i, j))
        return [s for i, s in enumerate(kept) if i not in echoed]

    def _pronoun_one(self, span: _Span, tokens: list[_Token]) -> bool:
        if span.last - span.first != 1 or tokens[span.first].norm != "1":
            return False
        before = tokens[span.first - 1].norm if span.first > 0 else ""
        after = tokens[span.last].norm if span.last < len(tokens) else ""
        return before in _PRONOUN_ONE_BEFORE or after in ("of", "another")

    def _negated(self, span: _Span, tokens: list[_Token], text: str) -> bool:
        start = tokens[span.first].start
        clause_start = 0
        for match in _CLAUSE_BREAK.finditer(text.lower(), 0, start):
            clause_start = match.end()
        before = [
            t.norm for t in tokens[max(0, span.first - 4) : span.first] if t.start >= clause_start
        ]
        if any(word in _NEGATORS for word in before):
            return True
        return _OPTION_WRONG_AFTER.match(text[tokens[span.last - 1].end :]) is not None


# --- the extractor ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Mention:
    label: OptionLabel
    negated: bool


class _Extractor:
    def __init__(self, a: str, b: str) -> None:
        self.options = _OptionText(a, b)

    def extract(self, raw: str | None) -> Extraction:
        if raw is None:
            return Extraction(None, "empty")
        if re.search(r"<think>", raw, re.IGNORECASE) and not re.search(
            r"</think>", raw, re.IGNORECASE
        ):
            return Extraction(None, "unfinished-reasoning")
        text = _clean(raw)
        if not text:
            return Extraction(None, "empty")
        only = _LABEL_ONLY.match(text)
        if only:
            return Extraction(_label(only.group(1)), "label-only")
        if _HEDGE.search(text):
            return Extraction(None, "hedge")
        # "(a) Open (b) Closed" restates the options; it answers nothing.
        text = self.options.without_listing(text)
        if not text:
            return Extraction(None, "options-only")

        mentions = self._mentions(text)
        positive = {m.label for m in mentions if not m.negated}
        negated = {m.label for m in mentions if m.negated}

        def decide(label: OptionLabel, rule: str) -> Extraction:
            # A pick the reply also calls wrong is a contradiction, not an answer.
            return Extraction(None, "negated") if label in negated else Extraction(label, rule)

        answered = self._marked_answers(text)
        if isinstance(answered, Extraction):
            return answered
        leading = self._leading(text)
        if isinstance(leading, Extraction):
            return leading
        votes = self.options.votes(text)

        if answered is not None:
            if leading is not None and leading != answered:
                return Extraction(None, "conflict")
            return decide(answered, "answer-marker")
        if leading is not None:
            rule = "leading-yes-no" if _LEADING_YES_NO.match(text) else "leading-label"
            if _other(leading) in positive or _contradicts(votes, leading):
                return Extraction(None, "conflict")
            return decide(leading, rule)
        if len(positive) == 2:
            return Extraction(None, "both-labels")
        if positive:
            (label,) = positive
            if _contradicts(votes, label):
                return Extraction(None, "conflict")
            return decide(label, "label-mention")
        if negated:
            return Extraction(None, "negated")  # "not (a)" alone: never inferred to be (b)
        if len(votes) == 2:
            return Extraction(None, "both-options")
        if votes:
            return Extraction(votes.pop(), "option-text")
        return Extraction(None, "no-answer-found")

    def _mentions(self, text: str) -> list[_Mention]:
        found: list[_Mention] = []
        for match in _LABEL_MENTION.finditer(text):
            letter = match.group(1) or match.group(2)
            negated = bool(
                _NEGATED_BEFORE.search(text[: match.start()])
                or _LABEL_WRONG_AFTER.match(text[match.end() :])
            )
            found.append(_Mention(_label(letter), negated))
        return found

    def _marked_answers(self, text: str) -> OptionLabel | Extraction | None:
        """The option every answer statement names; an Extraction when they disagree."""
        chosen: set[OptionLabel] = set()
        for match in _MARKER.finditer(text):
            rest = text[match.end() :].lstrip(" :-\"'")
            end = _SEGMENT_END.search(rest)
            segment = rest[: end.start() if end else len(rest)]
            negation = _SEGMENT_NEGATION.match(segment)
            label_match = None if negation else _SEGMENT_LABEL.match(segment)
            label: OptionLabel | None = None
            if negation:
                # "the answer is not (a)": the label mention is negated (see _mentions);
                # "the answer is not open but closed": read the options' words.
                votes = self.options.votes(segment)
                if len(votes) == 1 and not _LABEL_MENTION.search(segment):
                    label = next(iter(votes))
            elif label_match:
                label = _label(next(g for g in label_match.groups() if g))
                tail_votes = self.options.votes(segment[label_match.end() :])
                if _contradicts(tail_votes, label):
                    return Extraction(None, "conflict")
                if self.options.yes_no:
                    word = _LEADING_YES_NO.match(segment[label_match.end() :].lstrip(" .):-"))
                    if word and self.options.label_of_word(word.group(1)) != label:
                        return Extraction(None, "conflict")
            elif self.options.yes_no:
                word = _LEADING_YES_NO.match(segment)
                if word:
                    label = self.options.label_of_word(word.group(1))
            else:
                votes = self.options.votes(segment)
                if len(votes) == 1:
                    label = next(iter(votes))
            if label is not None:
                chosen.add(label)
        if len(chosen) == 2:
            return Extraction(None, "conflicting-answers")
        return next(iter(chosen)) if chosen else None

    def _leading(self, text: str) -> OptionLabel | Extraction | None:
        """The option a reply opens with: its label, or yes/no for yes/no questions."""
        match = _LEADING_LABEL.match(text)
        if match:
            label = _label(next(g for g in match.groups() if g))
            if self.options.yes_no:
                word = _LEADING_YES_NO.match(text[match.end() :].lstrip(" .):-"))
                if word and self.options.label_of_word(word.group(1)) != label:
                    return Extraction(None, "conflict")
            return label
        if self.options.yes_no:
            word = _LEADING_YES_NO.match(text)
            if word:
                return self.options.label_of_word(word.group(1))
        return None


def _label(letter: str) -> OptionLabel:
    return "a" if letter.lower() == "a" else "b"


def _other(label: OptionLabel) -> OptionLabel:
    return "b" if label == "a" else "a"


def _contradicts(votes: set[OptionLabel], label: OptionLabel) -> bool:
    """The text names only the other option: a label and a text that disagree."""
    return _other(label) in votes and label not in votes
