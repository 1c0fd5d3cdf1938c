r"""Stage 1 of grading: read which option a VLM's reply chose, deterministically.

:func:`extract_choice` reads the forms real models write: a bare label (``B``, ``(a)``, ``[b]``,
a label alone on the first line), a leading label (``A. Open``, ``**(b) Right**``), an answer
statement (``Answer: B``, ``The answer is left``, ``\boxed{A}``, ``<answer>A</answer>``, ``B is
the right choice``, and their Chinese, Japanese, French, Spanish and German equivalents), a
structured answer (``{"answer": "b"}``), the option's own text (``Open``, ``Towards the
camera``) and a leading yes or no for yes/no questions.

It decides less rather than decides wrong, because a wrong verdict is silent and an undecided
one goes on to the LLM judge and then a person. A reply that names both options, neither,
negates its pick, hedges without concluding, describes something in between ("partly open"),
or gives a label its own words contradict ("(a) Left. The dog faces right.") stays undecided.
A reply that revises itself ("(b). Wait, looking again, it's (a)") yields the answer it
finally commits to, never the one it abandoned, or stays undecided when the revision commits to
nothing. Sentences that only suppose ("If it were (b), we would see ...") are not read as
answers. Each decision carries the rule that made it, stored with the verdict.
"""

from __future__ import annotations

import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from amvicc.catalogue import OPTION_LABELS, OptionLabel, Question

# Bump when a rule changes, so stored verdicts say which extractor made them.
EXTRACTOR_VERSION = 2

ExtractionValue = Literal["a", "b", "undecided"]


@dataclass(frozen=True)
class Extraction:
    """The option a reply chose, or None, and the rule that decided.

    Attributes:
        choice: ``a``, ``b`` or None (undecided).
        rule: for a choice, the rule that found it (``label-only``, ``answer-marker``,
            ``leading-label``, ``leading-yes-no``, ``label-mention``, ``option-text``,
            ``structured``, ``self-correction``, ``conclusion-after-hedge``); for undecided,
            why (``empty``, ``hedge``, ``both-labels``, ``both-options``, ``conflict``,
            ``negated``, ``conflicting-answers``, ``revised``, ``in-between``,
            ``no-answer-found``, ...).
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
# Typographic quotes and CJK punctuation NFKC leaves alone, as their ASCII counterparts.
_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u00ab": '"',
        "\u00bb": '"',
        "\u300c": '"',
        "\u300d": '"',
        "\u300e": '"',
        "\u300f": '"',
        "\u3010": "[",
        "\u3011": "]",
        "\u3002": ". ",
        "\u3001": ", ",
    }
)
_ANSWER_TAG = re.compile(r"<answer>\s*(.*?)\s*</answer>", re.DOTALL | re.IGNORECASE)
# A label alone on the first line, the explanation below: "B\nThe dog faces right ...".
_FIRST_LINE_LABEL = re.compile(r"^\s*[*_`#]*\s*[(\[]?\s*([abAB])\s*[)\]]?\s*[*_`]*\s*[.:]?[ \t]*\n")


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    text = _THINK.sub(" ", text)
    text = re.sub(r"\\boxed\s*\{\s*\\?(?:text\s*\{)?([^{}]*)\}?\s*\}", r" Final answer: \1. ", text)
    text = _ANSWER_TAG.sub(r" Final answer: \1. ", text)
    text = _FIRST_LINE_LABEL.sub(r"(\1) ", text)
    text = _MARKDOWN.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


# --- label patterns --------------------------------------------------------------------------

# Letters of CJK scripts: a label directly followed by one ("B选项", "Bです") is still a label.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
_LABEL_ONLY = re.compile(
    r"^(?:option|choice|answer)?\s*[:\-]?\s*[(\[]?\s*([ab])\s*[)\]]?\s*[.:!]?$", re.IGNORECASE
)
# "(a)", "[b]", "option B", "choice (b)", "letter A", "选项B", "opción B": a label anywhere.
_LABEL_MENTION = re.compile(
    r"\(\s*([abAB])\s*\)|\[\s*([abAB])\s*\]"
    r"|(?:\b(?:option|choice|letter|opci[oó]n)|选项|選項|選択肢)\s*[(\[]?\s*([abAB])(?![A-Za-z0-9'])"
    r"[)\]]?",
    re.IGNORECASE,
)
# A reply that starts with its label. A bare uppercase "A" followed by a word is an article.
_LEADING_LABEL = re.compile(
    r"^[\"']?(?:\(\s*([abAB])\s*\)|\[\s*([abAB])\s*\]"
    r"|([abAB])\s*[.):](?![\w.])"
    r"|([AB])(?=\s*(?:$|[,;!\-\u2013\u2014]))"
    r"|(B)(?=\s))"
)
_YES_WORDS = frozenset({"yes", "yeah", "yep", "oui", "sí", "ja", "是的", "是", "はい", "对", "對"})
_LEADING_YES_NO = re.compile(
    r"^[\"'(]?\s*(yes|yeah|yep|nope|no|oui|non|sí|nein|ja|是的|不是|はい|いいえ|否)"
    r"(?![A-Za-z0-9\u00c0-\u024f])",
    re.IGNORECASE,
)

# An answer statement: "Answer: B", "the correct answer is (a)", "I would choose B", and the
# same in Chinese, Japanese, French, Spanish and German. The label follows the statement.
_MARKER = re.compile(
    r"(?:\b(?:final|correct|right|best|my|the)\s+)?"
    r"\b(?:answer|option|choice)\s*(?::|=|\-|\u2013|\u2014|\s(?:is|would\s+be|will\s+be|should\s+be"
    r"|must\s+be|here\s+is)\b\s*:?)"
    r"|\bi\s*(?:would|'d|will|'ll)?\s*(?:choose|pick|select|go\s+with)\b|\bi\s*(?:would|'d)\s+say\b"
    # Chinese and Japanese: 答案：B, 答案是B, 正确答案为B, 我选择B, 选B, 答えはB, 正解はB, 回答：B
    r"|(?:正确|正確|最终|最終)?(?:答案|答え|回答|解答|正解)\s*(?:应该是|應該是|应为|是|为|為|は|:)"
    r"|(?:正确|正確)的?(?:选项|選項|選択肢)\s*(?:是|为|為|は|:)"
    r"|(?:我|我会|我會)?(?:选择|選擇|选|選)(?=\s*[(\[]?\s*[abAB](?![A-Za-z]))"
    # French: Réponse : B, la bonne réponse est (b), l'option correcte est B, je choisis B
    r"|\b(?:(?:la|ma)\s+)?(?:bonne\s+)?r[ée]ponse(?:\s+(?:correcte|finale))?\s*(?::|\best\b)"
    r"|\bl'option\s+(?:correcte\s+|exacte\s+)?est\b|\bje\s+(?:choisis|choisirais|prends|s[ée]lectionne)\b"
    # Spanish: Respuesta: B, la respuesta correcta es (b), la opción correcta es B, elijo B
    r"|\b(?:(?:la|mi)\s+)?respuesta(?:\s+(?:correcta|final))?\s*(?::|\bes\b)"
    r"|\bla\s+opci[oó]n\s+(?:correcta\s+)?es\b|\b(?:yo\s+)?(?:elijo|escojo|selecciono|elegir[ií]a)\b"
    # German: Antwort: B, die richtige Antwort ist (b), die richtige Option ist B, ich wähle B
    r"|\b(?:(?:die|meine)\s+)?(?:richtige\s+|korrekte\s+)?antwort\s*(?::|\b(?:ist|lautet)\b)"
    r"|\b(?:die\s+)?(?:richtige|korrekte)\s+(?:option|wahl)\s+(?:ist|lautet)\b"
    r"|\bich\s+(?:w[äa]hle|nehme)\b",
    re.IGNORECASE,
)
# A label followed by its verdict: "B is the right choice", "选项B是正确的", "Bが正解です".
_LABEL_FIRST = re.compile(
    r"(?:\(\s*([abAB])\s*\)|\[\s*([abAB])\s*\]|(?<![\w'])([AB])(?![A-Za-z0-9']))\s*"
    r"(?:is\s+(?:the\s+)?(?:correct|right|best)(?:\s+(?:answer|choice|option))?\b"
    r"|est\s+(?:la\s+)?(?:bonne\s+r[ée]ponse|correcte)\b|es\s+(?:la\s+)?correcta\b"
    r"|ist\s+(?:die\s+)?(?:richtig|korrekt)|是正确|是正確|是对的|正确|が正解|が正しい|を選)",
    re.IGNORECASE,
)
_SEGMENT_END = re.compile(r"(?<![A-Za-z]\.[A-Za-z])[.;!?\n](?:\s|$)|$")
# The label an answer statement gives; as at the start of a reply, "A painting" is an article.
_SEGMENT_LABEL = re.compile(
    r"^(?:(?i:option|choice|letter|opci[oó]n|the|la|el|le|die)\s*|选项|選項)?"
    r"(?:\(\s*([abAB])\s*\)|\[\s*([abAB])\s*\]"
    rf"|([abAB])(?=\s*(?:$|[).:,;!\-\u2013\u2014{_CJK}]))|(B)(?=\s))"
)
_SEGMENT_NEGATION = re.compile(
    r"^(?:not|never|neither|none|pas|no\s+es|nicht|不是)\b", re.IGNORECASE
)

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
    r"|possibly|might\s+be|could\s+be|may\s+be|if\s+i\s+(?:had|have)\s+to\s+(?:guess|choose|pick))\b"
    r"|\byes\s*(?:and|or|/)\s*no\b|\bno\s*(?:and|or|/)\s*yes\b"
    r"|\bboth\s+(?:options|answers|choices|are\s+(?:possible|plausible|correct|valid|true)"
    r"|could|might|seem)\b"
    # other languages
    r"|\b(?:peut-[êe]tre|je\s+ne\s+(?:sais|peux)\s+pas|impossible\s+de\s+(?:dire|d[ée]terminer)"
    r"|ni\s+l'une?\s+ni\s+l'autre|quiz[aá]s?|tal\s+vez|no\s+(?:estoy\s+segur[oa]|puedo\s+(?:determinar"
    r"|decir|saber|ver))|ninguna|vielleicht|nicht\s+sicher|kann\s+(?:ich\s+)?(?:nicht|kein)"
    r"|weder)\b"
    r"|无法|無法|不确定|不確定|不能确定|也许|也許|可能|都不是|わかりません|分かりません|判断でき|かもしれ"
    r"|どちらとも",
    re.IGNORECASE,
)
# A sentence that only supposes: "If it were (b), we would see ...", "Option (b) would mean ...".
_HYPOTHETICAL = re.compile(
    r"\bif\b|\bwere\s+it\b|\bhad\s+it\b|\botherwise\b|\bunless\b|\bsuppose\b|\bassuming\b"
    r"|\bin\s+that\s+case\b|\bwould\s+(?:mean|show|look|imply|appear|indicate|require|see|have"
    r"|point|face|need)\b|\bwe'd\b|\bsi\s+c'[ée]tait\b|\bwenn\b|\bfalls\b|如果|もし",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?;])\s+")
# A reply that takes back what it said: "Wait", "Actually", "On second thought", "No, it's",
# "Correction:", "Looking closer". Counted only at the start of a clause.
_REVISION = re.compile(
    r"(?<![\w'])(?:actually|wait|hold\s+on|hang\s+on|on\s+second\s+thoughts?"
    r"|on\s+(?:a\s+)?closer\s+(?:look|inspection|examination)"
    r"|(?:upon|after|with|on)\s+(?:a\s+)?(?:closer|further|second|more\s+careful)\s+"
    r"(?:look|inspection|examination|review)"
    r"|looking\s+(?:closer|again|more\s+(?:closely|carefully)|at\s+(?:it|the\s+(?:image|picture))"
    r"\s+again)|(?:re-?checking|checking|re-?examining|looking\s+at)\s+(?:it|the\s+(?:image|picture))"
    r"\s+(?:again|more\s+(?:closely|carefully))|let\s+me\s+(?:re-?consider|re-?check|re-?examine"
    r"|correct|double[-\s]check|check\s+again|look\s+again)|correction\s*:|i\s+(?:was|am)\s+"
    r"(?:wrong|mistaken)|i\s+made\s+(?:a|an)\s+(?:mistake|error)|my\s+(?:mistake|apologies|bad)"
    r"|i\s+apologi[sz]e|scratch\s+that|no\s*,\s*(?:it's|it\s+is|that's|the\s+answer|i\s+mean)"
    r"|en\s+fait|en\s+realidad|eigentlich|moment\s*,|不对|不對|等等|いや)(?![\w'])",
    re.IGNORECASE,
)
# What may stand between a clause's start and a revision: "but actually", "oh wait", "hmm, no".
_CLAUSE_LEAD = re.compile(
    r"(?:(?:but|and|oh|hmm+|um+|ah|so|although|though)\s*,?\s*)*$", re.IGNORECASE
)
_CLAUSE_START = re.compile(r"(?:^|[.!?;:,\u2013\u2014\-(\n]|\.\.\.)\s*$")

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


# Words that put an option's word between the two options: "partly open", "half closed".
_IN_BETWEEN = frozenset(
    [
        "partly",
        "partially",
        "half",
        "halfway",
        "semi",
        "slightly",
        "somewhat",
        "almost",
        "nearly",
        "mostly",
        "kinda",
        "moderately",
        "relatively",
        "fairly",
        "quite",
        "rather",
        "mid",
    ]
)
_IN_BETWEEN_PAIRS = frozenset([("kind", "of"), ("sort", "of"), ("a", "bit"), ("a", "little")])


def _in_between(span: _Span, tokens: list[_Token]) -> bool:
    before = [t.norm for t in tokens[max(0, span.first - 2) : span.first]]
    if before and before[-1] in _IN_BETWEEN:
        return True
    return len(before) == 2 and (before[0], before[1]) in _IN_BETWEEN_PAIRS


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
        # A label with its own option's text ("(b) Closed"): the echo, not a second vote.
        self._echo = {
            label: re.compile(
                rf"(?:[(\[]\s*{label}\s*[)\]]|\b{label}[.):]|\b(?:option|choice)\s+{label}\b\s*:?)\s*[\"']?{re.escape(self.text[label])}[\"']?",
                re.IGNORECASE,
            )
            for label in OPTION_LABELS
        }

    def without_listing(self, text: str) -> str:
        """``text`` with restatements of both options (``(a) Open (b) Closed``) removed."""
        return self._listing.sub(" ", text).strip(" ,.;:\n")

    def without_echoes(self, text: str) -> str:
        """``text`` without a label followed by its own option's text (``(b) Closed``)."""
        for echo in self._echo.values():
            text = echo.sub(" ", text)
        return text

    def label_of_word(self, word: str) -> OptionLabel | None:
        """For yes/no questions: the option a leading yes or no (in any language) stands for."""
        word = "yes" if word.lower() in _YES_WORDS else "no"
        for label in OPTION_LABELS:
            if self.words[label] == (word,):
                return label
        return None

    def votes(self, text: str) -> set[OptionLabel]:
        """The options ``text`` names without negating or qualifying them."""
        return self.read(text)[0]

    def read(self, text: str) -> tuple[set[OptionLabel], set[OptionLabel]]:
        """The options ``text`` names plainly, and those it names only as in between.

        "The door is partly open" uses an option's word for something between the two
        options: that is no vote for either, and the reply stays undecided.
        """
        if self.yes_no:
            return set(), set()
        if not self.usable:
            return self._exact_votes(text), set()
        tokens = _tokens(text)
        spans = [s for s in self._spans(tokens) if not self._negated(s, tokens, text)]
        between = {s.label for s in spans if _in_between(s, tokens)}
        return {s.label for s in spans if not _in_between(s, tokens)}, between

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
        if tuple(before[-2:]) in (("rather", "than"), ("instead", "of")):
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
        structured = self._structured(_THINK.sub(" ", raw))
        if structured is not None:
            return structured
        text = _clean(raw)
        if not text:
            return Extraction(None, "empty")
        only = _LABEL_ONLY.match(text)
        if only:
            return Extraction(_label(only.group(1)), "label-only")
        segments = _revisions(text)
        if len(segments) > 1:
            # A reply that takes its answer back: only what it finally commits to counts.
            last = self._decide(segments[-1])
            earlier = [self._decide(s).choice for s in segments[:-1]]
            if last.choice is not None:
                revised = any(c is not None and c != last.choice for c in earlier)
                return Extraction(last.choice, "self-correction") if revised else last
            if any(c is not None for c in earlier):
                return Extraction(None, "revised")
        return self._decide(text)

    def _structured(self, raw: str) -> Extraction | None:
        """A JSON answer: ``{"answer": "b"}``, ``{"choice": "A", "reason": "..."}``."""
        found: set[OptionLabel] = set()
        other_text: list[str] = []
        for match in _JSON_OBJECT.finditer(raw):
            try:
                data = json.loads(match.group())
            except ValueError:
                continue
            if not isinstance(data, dict):
                continue
            for key, value in data.items():
                if not isinstance(value, str):
                    continue
                if str(key).strip().lower() in _ANSWER_KEYS:
                    label = self._label_of_value(value)
                    if label is None:
                        return None  # an answer field we cannot read: leave it to the text
                    found.add(label)
                else:
                    other_text.append(value)
        if not found:
            return None
        if len(found) == 2:
            return Extraction(None, "conflicting-answers")
        (label,) = found
        votes, _ = self.options.read(self.options.without_echoes(" ".join(other_text)))
        if _other(label) in votes and label not in votes:
            return Extraction(None, "conflict")
        return Extraction(label, "structured")

    def _label_of_value(self, value: str) -> OptionLabel | None:
        cleaned = _clean(value)
        only = _LABEL_ONLY.match(cleaned)
        if only:
            return _label(only.group(1))
        leading = _LEADING_LABEL.match(cleaned)
        if leading:
            label = _label(next(g for g in leading.groups() if g))
            rest, _ = self.options.read(self.options.without_echoes(cleaned))
            return None if _other(label) in rest else label
        for label in OPTION_LABELS:
            if cleaned.lower().strip(" .\"'") == self.options.text[label].lower():
                return label
        if self.options.yes_no:
            word = _LEADING_YES_NO.match(cleaned)
            if word and len(cleaned.split()) == 1:
                return self.options.label_of_word(word.group(1))
        return None

    def _decide(self, text: str) -> Extraction:
        """Read one stretch of a reply (the whole of it, or what follows a revision)."""
        only = _LABEL_ONLY.match(text.strip())
        if only:
            return Extraction(_label(only.group(1)), "label-only")
        text = _factual(text)
        if not text:
            return Extraction(None, "no-answer-found")  # it only asks or supposes
        hedge = _last_hedge(text)
        if hedge is not None:
            return self._conclusion(text[hedge:]) or Extraction(None, "hedge")
        # "(a) Open (b) Closed" restates the options; it answers nothing.
        text = self.options.without_listing(text)
        if not text:
            return Extraction(None, "options-only")

        mentions = self._mentions(text)
        positive = {m.label for m in mentions if not m.negated}
        negated = {m.label for m in mentions if m.negated}
        # What the option words say once each label's echo of its own text is set aside:
        # "(a) Left. The dog faces right." contradicts its label.
        votes, between = self.options.read(self.options.without_echoes(text))

        def decide(label: OptionLabel, rule: str) -> Extraction:
            # A pick the reply also calls wrong, or whose words name the other option, is a
            # contradiction, not an answer.
            if label in negated:
                return Extraction(None, "negated")
            if _other(label) in votes or _other(label) in between:
                return Extraction(None, "conflict")
            return Extraction(label, rule)

        answered = self._marked_answers(text)
        if isinstance(answered, Extraction):
            return answered
        leading = self._leading(text)
        if isinstance(leading, Extraction):
            return leading

        if answered is not None:
            if leading is not None and leading != answered:
                return Extraction(None, "conflict")
            return decide(answered, "answer-marker")
        if leading is not None:
            rule = "leading-yes-no" if _LEADING_YES_NO.match(text) else "leading-label"
            if _other(leading) in positive:
                return Extraction(None, "conflict")
            return decide(leading, rule)
        if len(positive) == 2:
            return Extraction(None, "both-labels")
        if positive:
            (label,) = positive
            return decide(label, "label-mention")
        if negated:
            return Extraction(None, "negated")  # "not (a)" alone: never inferred to be (b)
        if between:
            return Extraction(None, "in-between")
        if len(votes) == 2:
            return Extraction(None, "both-options")
        if votes:
            return Extraction(votes.pop(), "option-text")
        return Extraction(None, "no-answer-found")

    def _conclusion(self, tail: str) -> Extraction | None:
        """After a hedge, an explicit conclusion: "..., but the answer is (b)"."""
        if _last_hedge(tail) is not None:
            return None
        answered = self._marked_answers(tail)
        if not isinstance(answered, str):
            return None
        mentions = self._mentions(tail)
        if any(m.label == answered and m.negated for m in mentions) or any(
            m.label != answered and not m.negated for m in mentions
        ):
            return None
        votes, between = self.options.read(self.options.without_echoes(tail))
        if _other(answered) in votes | between:
            return None
        return Extraction(answered, "conclusion-after-hedge")

    def _mentions(self, text: str) -> list[_Mention]:
        found: list[_Mention] = []
        for match in _LABEL_MENTION.finditer(text):
            letter = next(g for g in match.groups() if g)
            negated = bool(
                _NEGATED_BEFORE.search(text[: match.start()])
                or _LABEL_WRONG_AFTER.match(text[match.end() :])
            )
            found.append(_Mention(_label(letter), negated))
        for match in _LABEL_FIRST.finditer(text):
            letter = next(g for g in match.groups() if g)
            negated = bool(_NEGATED_BEFORE.search(text[: match.start()]))
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


_JSON_OBJECT = re.compile(r"\{[^{}]*\}")
_ANSWER_KEYS = frozenset(
    [
        "answer",
        "choice",
        "option",
        "final_answer",
        "selected",
        "selection",
        "label",
        "prediction",
        "correct_option",
        "answer_choice",
        "choix",
        "respuesta",
        "antwort",
        "答案",
    ]
)


def _factual(text: str) -> str:
    """``text`` without the sentences that only suppose or ask ("If it were (b), ...")."""
    sentences = _SENTENCE.split(text)
    return " ".join(
        s for s in sentences if not _HYPOTHETICAL.search(s) and not s.rstrip().endswith("?")
    ).strip()


def _last_hedge(text: str) -> int | None:
    """Where the last hedge in ``text`` ends, or None when it has none."""
    end = None
    for match in _HEDGE.finditer(text):
        end = match.end()
    return end


def _revisions(text: str) -> list[str]:
    """``text`` cut where it takes back what it said, each revision starting a piece.

    A revision word counts at the start of a clause only ("(b). Actually, it is (a)", not "it
    is actually open"), and only after something was said.
    """
    cuts = [0]
    for match in _REVISION.finditer(text):
        before = text[: match.start()]
        lead = _CLAUSE_LEAD.search(before)
        head = before[: lead.start()] if lead else before
        if not head.strip() or not _CLAUSE_START.search(head):
            continue
        cuts.append(match.start())
    cuts.append(len(text))
    return [text[i:j] for i, j in itertools.pairwise(cuts) if text[i:j].strip()]
