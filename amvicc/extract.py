r"""Stage 1 of grading: read which option a VLM's reply chose, deterministically.

:func:`extract_choice` reads the forms real models write: a bare label (``B``, ``(a)``, ``[b]``,
a label alone on the first line), a leading label (``A. Open``, ``**(b) Right**``), an answer
statement (``Answer: B``, ``The answer is left``, ``\boxed{A}``, ``<answer>A</answer>``, ``B is
the right choice``, ``I think it's B``, YAML's ``answer: b``, and their Chinese, Japanese,
Korean, French, Spanish, Italian, Portuguese, German and Russian equivalents), a structured
answer (``{"answer": "b"}``), the option's own text (``Open``, ``Towards the camera``) and, for
yes/no questions, a yes or no that answers (``Yes,``, ``No.``, ``..., but yes —``).

It decides less rather than decides wrong, because a wrong verdict is silent and an undecided
one goes on to the LLM judge and then a person. What decides must commit: an answer statement,
a label, or an option's word that says the option. Weak evidence is read strictly: a yes or no
that opens an idiom ("No doubt about it, ...") is no answer, nor is an option's word used about
something else ("sitting to the left of the bench", "a red cutting board", "one bowl", "the
flowers in the foreground" when the question asks about the background). Evidence against a
pick is read liberally: any use of the other option's word contradicts a label ("(a) Left. The
dog faces right."); reasoning may weigh both options before its answer, but the last option it
names must be the one it gives.

A reply that names both options ("A, B", ``\boxed{\text{(a) or (b)}}``), neither, negates its
pick (also "not on the windowsill (b)"), hedges without concluding, describes something in
between ("partly open", "at least one"), was cut off before its answer, or guesses without
seeing the image ("I can't see images, but ... usually ...") stays undecided. A pick with a
caveat about how sure it is ("I think it's B, but I'm not completely sure") is decided
(``hedged-pick``), as is a hedge followed by an explicit conclusion. A reply that revises itself
("(b). Wait, looking again, it's (a)", "Final answer: B ... Correction: ... Final answer: A")
yields the answer it finally commits to, never the one it abandoned, or stays undecided when the
revision commits to nothing. Sentences that only suppose ("If it were (b), we would see ...") are
not read as answers. Each decision carries the rule that made it, stored with the verdict.
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from amvicc.catalogue import OPTION_LABELS, OptionLabel, Question

# Bump when a rule changes, so stored verdicts say which extractor made them (and graded runs
# are read again). 3: anchors for weak evidence, both labels, blind guesses, cut-offs, hedged
# picks, revised final answers, more languages (issue 23).
EXTRACTOR_VERSION = 3

ExtractionValue = Literal["a", "b", "undecided"]


@dataclass(frozen=True)
class Extraction:
    """The option a reply chose, or None, and the rule that decided.

    Attributes:
        choice: ``a``, ``b`` or None (undecided).
        rule: for a choice, the rule that found it (``label-only``, ``answer-marker``,
            ``leading-label``, ``leading-yes-no``, ``label-mention``, ``option-text``,
            ``structured``, ``self-correction``, ``conclusion-after-hedge``, ``hedged-pick``,
            ``yes-no-clause``); for undecided, why (``empty``, ``hedge``, ``both-labels``,
            ``both-options``, ``conflict``, ``negated``, ``conflicting-answers``, ``revised``,
            ``in-between``, ``no-image``, ``cut-off``, ``other-subject``, ``no-answer-found``,
            ...).
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
    a, b = question.options
    return _Extractor(a.text, b.text, question.text).extract(text)


def extract_from_options(
    text: str | None, options: Sequence[str], question: str = ""
) -> Extraction:
    """:func:`extract_choice` for two option texts given directly (``(a)``, ``(b)``).

    ``question`` is the question asked, when known: an option's word counts as an answer when
    it says what the question asks ("the right half" for "left or right half?"), and without
    the question fewer such mentions are read.
    """
    if len(options) != 2:
        raise ValueError("exactly two options are needed")
    return _Extractor(options[0], options[1], question).extract(text)


def _word_set(words: str) -> frozenset[str]:
    """A set of words written as one string, for long lists of words."""
    return frozenset(words.split())


# --- cleaning --------------------------------------------------------------------------------

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_MARKDOWN = re.compile(r"[*_`#>~|]+")
# Runs of spaces become one space; a line break is kept (one), since it ends what a line says:
# "Final answer: B\nCorrection: ..." and a YAML "answer: b\nreason: ..." read by their lines.
_SPACES = re.compile(r"[^\S\n]+")
_LINE_BREAKS = re.compile(r" ?\n[\s]*")
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
    text = _FIRST_LINE_LABEL.sub(r"(\1)\n", text)
    text = _MARKDOWN.sub(" ", text)
    return _LINE_BREAKS.sub("\n", _SPACES.sub(" ", text)).strip()


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
_YES_WORDS = _word_set("yes yeah yep oui sí si sì sim ja да 是的 是 はい 对 對 네 예")
_YES_NO_WORD = (
    r"(yes|yeah|yep|nope|no|oui|non|sí|sì|si|sim|não|nein|ja|да|нет|是的|不是|不|はい|いいえ|否"
    r"|네|예|아니요|아니오)"
)
# A yes or no that answers: followed by punctuation, the end, or the clause it answers with
# ("Yes, it is", "No the wrists are bare", "Yes there is a door"). Not an idiom that opens with
# the word ("No doubt about it, ...", "No question, ...", "No wonder ...", "Yes No Yes No").
_ANSWERING = (
    r"(?=\s*(?:[,.!;:\u2013\u2014\-)\"'*]|\Z)|\s+(?:it|it's|its|there|there's|the|this|that|these"
    r"|those|they|they're|i|i'm|i've|we|you|he|she|his|her|their|a|an|my|our)\b)"
)
_LEADING_YES_NO = re.compile(r"^[\"'(]?\s*" + _YES_NO_WORD + _ANSWERING, re.IGNORECASE)
# Any yes or no a reply opens with, idioms too: no answer, but it may contradict one.
_OPENING_YES_NO = re.compile(r"^[\"'(]?\s*" + _YES_NO_WORD + r"(?!\w)", re.IGNORECASE)
# A yes or no standing as its own clause later on: "Not sure at first, but yes — ...",
# "I think so — yes, there's a Z", "... So, no." (only for yes/no questions).
_CLAUSE_YES_NO = re.compile(
    r"(?:^|[.!;:,\u2013\u2014\n]|\b(?:but|so|then|thus|hence|therefore))\s*,?\s*"
    r"(yes|yeah|yep|nope|no)(?=\s*(?:[,.!;:\u2013\u2014\n]|\Z))",
    re.IGNORECASE,
)

# An answer statement: "Answer: B", "the correct answer is (a)", "I would choose B", and the
# same in Chinese, Japanese, French, Spanish and German. The label follows the statement.
_MARKER = re.compile(
    r"(?:\b(?:final|correct|right|best|my|the)\s+)?"
    r"\b(?:answer|option|choice)\s*(?::|=|\-|\u2013|\u2014|\s(?:is|would\s+be|will\s+be|should\s+be"
    r"|must\s+be|here\s+is)\b\s*:?)"
    r"|\bi\s*(?:would|'d|will|'ll)?\s*(?:choose|pick|select|go\s+with)\b|\bi\s*(?:would|'d)\s+say\b"
    # A pick given with its confidence: "I think it's B", "my best guess is (a)", "I'd lean to"
    r"|\bi\s+(?:think|believe|guess|reckon|suspect)\s+(?:that\s+)?(?:it's|it\s+is|this\s+is"
    r"|it\s+would\s+be|it'd\s+be)(?=\s*[(\[]?\s*[abAB](?![\w']))"
    r"|\bmy\s+(?:best\s+)?guess\s+(?:is|would\s+be)\b"
    r"|\bi(?:'d|\s+would)?\s+lean\s+(?:toward|towards|to)\b"
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
    r"|\bich\s+(?:w[äa]hle|nehme)\b"
    # Italian, Portuguese, Russian, Korean: Risposta: B, la risposta corretta è (a), A resposta
    # correta é B, Ответ: B, Правильный ответ — (a), 정답: B, 답은 (a)입니다
    r"|\b(?:(?:la|mia)\s+)?risposta(?:\s+(?:corretta|giusta|finale))?\s*(?::|\b[èe]\b)"
    r"|\b(?:(?:a|minha)\s+)?resposta(?:\s+(?:correta|certa|final))?\s*(?::|\b[ée]\b)"
    r"|(?:правильный\s+|верный\s+|окончательный\s+)?ответ\s*(?::|\u2014|\u2013|-|\s(?:это|будет)\b)"
    r"|(?:최종\s*)?(?:정답|답)\s*(?::|은|는|은요)",
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
_SEGMENT_END = re.compile(r"(?<![A-Za-z]\.[A-Za-z])[.;!?](?:\s|$)|\n|$")
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
_NEGATED_BEFORE = re.compile(
    r"(?:\bnot|n't|\bnever|\bexcept|\brather\s+than|\binstead\s+of|\bunlike|\bother\s+than"
    r"|\bas\s+opposed\s+to)\s*$",
    re.IGNORECASE,
)
_WRONG = (
    r"(?:is|are|was|seems|would\s+be)\s+(?:not\s+(?:correct|right|true|accurate"
    r"|the\s+(?:correct\s+|right\s+)?answer)|wrong|incorrect|false|inaccurate|ruled\s+out|unlikely)"
    r"|(?:is|are)n't\s+(?:correct|right|true|the\s+answer)|(?:can|could)\s+be\s+ruled\s+out"
    r"|(?:is|are)(?:\s+not|n't)(?=\s*(?:[.,;!]|$))"
)
# Matched where a label or an option's words end (``pattern.match(text, end)``).
_LABEL_WRONG_AFTER = re.compile(r"\s*(?:[\w'\-]+\s+){0,4}?(?:" + _WRONG + r")\b", re.IGNORECASE)
_OPTION_WRONG_AFTER = re.compile(r"\s*(?:" + _WRONG + r")\b", re.IGNORECASE)
# How far back a word can change what a label or an option's word means ("not", "rather than",
# the clause it is in, the option's text before its label). Looking back only this far keeps
# the reading of a long reasoning trace linear in its length.
_LOOKBACK = 240

# Hedges and refusals: the reply does not commit to one option.
_HEDGE = re.compile(
    r"\b(?:can(?:'t|not|\s+not)|could(?:n't|\s+not)|unable\s+to|impossible\s+to|not\s+possible\s+to"
    r"|hard\s+to|difficult\s+to|no\s+way\s+to)\s+(?:\w+\s+){0,3}?"
    r"(?:tell|determine|say|know|answer|decide|judge|be\s+sure|confirm|see\s+the\s+image"
    r"|identify|distinguish|make\s+out|be\s+certain)\b"
    r"|\b(?:not\s+(?:(?:completely|entirely|totally|fully|quite|very|absolutely|100\s*%)\s+)?"
    r"(?:sure|certain|clear)|unsure|uncertain|unclear|ambiguous|inconclusive"
    r"|indeterminate|undeterminable|i\s+don't\s+know|no\s+image|either|neither|maybe|perhaps"
    r"|possibly|might\s+be|could\s+be|may\s+be|if\s+i\s+(?:had|have)\s+to\s+(?:guess|choose|pick))\b"
    r"|\byes\s*(?:and|or|/)\s*no\b|\bno\s*(?:and|or|/)\s*yes\b"
    r"|\b(?:can(?:'t|not)\s+call\s+it|(?:hard|too\s+close)\s+to\s+call|toss[-\s]?up"
    r"|coin\s+(?:flip|toss)|fifty[-\s]fifty|no\s+idea|your\s+guess)\b|\b50\s*/\s*50\b"
    r"|\bboth\s+(?:options|answers|choices|are\s+(?:possible|plausible|correct|valid|true)"
    r"|could|might|seem)\b"
    # other languages
    r"|\b(?:peut-[êe]tre|je\s+ne\s+(?:sais|peux)\s+pas|impossible\s+de\s+(?:dire|d[ée]terminer)"
    r"|ni\s+l'une?\s+ni\s+l'autre|quiz[aá]s?|tal\s+vez|no\s+(?:estoy\s+segur[oa]|puedo\s+(?:determinar"
    r"|decir|saber|ver))|ninguna|vielleicht|nicht\s+(?:(?:ganz|v[öo]llig|hundertprozentig)\s+)?"
    r"sicher|kann\s+(?:ich\s+)?(?:nicht|kein)|weder|forse|non\s+(?:sono\s+)?(?:sicur[oa]|cert[oa])"
    r"|non\s+lo\s+so|talvez|n[ãa]o\s+(?:tenho\s+(?:a\s+)?certeza|sei))\b"
    r"|(?<!\w)(?:не\s+уверен[аы]?|не\s+знаю|возможно|может\s+быть|трудно\s+сказать)(?!\w)"
    r"|모르겠|확실하지|확실치|아마"
    r"|无法|無法|不确定|不確定|不太确定|不太確定|不能确定|也许|也許|可能|都不是|わかりません|分かりません"
    r"|判断でき|かもしれ|どちらとも",
    re.IGNORECASE,
)
# A sentence that only supposes: "If it were (b), we would see ...", "Option (b) would mean ...".
_HYPOTHETICAL = re.compile(
    r"\bif\b|\bwere\s+it\b|\bhad\s+it\b|\botherwise\b|\bunless\b|\bsuppose\b|\bassuming\b"
    r"|\bin\s+that\s+case\b|\bwould\s+(?:mean|show|look|imply|appear|indicate|require|see|have"
    r"|point|face|need)\b|\bwe'd\b|\bsi\s+c'[ée]tait\b|\bwenn\b|\bfalls\b|如果|もし",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"((?<=[.!?;])\s+|\n)")
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
    r"|just\s+kidding|j/?k|en\s+fait|en\s+realidad|eigentlich|moment\s*,|不对|不對|等等|いや)"
    r"(?![\w'])",
    re.IGNORECASE,
)
# What may stand between a clause's start and a revision: "but actually", "oh wait", "hmm, no".
_CLAUSE_LEAD = re.compile(
    r"(?:(?:but|and|oh|hmm+|um+|ah|so|although|though)\s*,?\s*)*\Z", re.IGNORECASE
)
_CLAUSE_START = re.compile(r"(?:^|[.!?;:,\u2013\u2014\-(\n]|\.\.\.)\s*\Z")

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
_CLAUSE_BREAK = re.compile(r"[.,;:!?()]|\bbut\b|\bhowever\b|\bwhile\b|\bwhereas\b", re.IGNORECASE)
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


@functools.lru_cache(maxsize=64)
def _tokens(text: str) -> tuple[_Token, ...]:
    """``text``'s words, normalised, with their places (cached: a reply is read many times)."""
    lowered = text.lower()
    return tuple(
        _Token(_normalise_token(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(lowered)
    )


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
        # a number only bounded or guessed: "at least one", "about 2", "more than 1"
        "about",
        "around",
        "approximately",
        "roughly",
    ]
)
_IN_BETWEEN_PAIRS = frozenset(
    [
        ("kind", "of"),
        ("sort", "of"),
        ("a", "bit"),
        ("a", "little"),
        ("at", "least"),
        ("at", "most"),
        ("up", "to"),
        ("more", "than"),
        ("less", "than"),
        ("fewer", "than"),
    ]
)


def _in_between(span: _Span, tokens: Sequence[_Token]) -> bool:
    before = [t.norm for t in tokens[max(0, span.first - 2) : span.first]]
    if before and before[-1] in _IN_BETWEEN:
        return True
    return len(before) == 2 and (before[0], before[1]) in _IN_BETWEEN_PAIRS


@dataclass(frozen=True)
class _Span:
    label: OptionLabel
    first: int  # token indices, end exclusive
    last: int


# Words that may follow a one-word option's word when the option is what is said ("facing left
# from ...", "open, and", "closed tightly"). Any other word makes the option's word a modifier
# of something else ("a red cutting board", "one bowl", "the left side of the lawn"), unless the
# question itself puts that word there ("long tusks", "two eyes", "the right half").
_FOLLOWERS = _word_set(
    "and or but nor so because since as than then while whereas although though if when where "
    "that this these those it its it's they their there here he she his her we you i the a an "
    "from to toward in on at by with without into onto for about above below under over behind "
    "beside near against along across through within relative compared is are was were be been "
    "being am has have had do does did can could would should will may might must not no just "
    "only also even very too all both each wide shut tight apart enough again still now anyway "
    "overall yet already instead either well rather up down out upright straight"
)
# Nouns naming what a colour or a state is of, not another thing: "black feathers".
_ATTRIBUTE_NOUNS = _word_set(
    "color colour colored coloured hue shade tone feathers plumage fur coat skin hair paint"
)
# Words of place and direction, which also name where something else is: "to the left of the
# bench", "on the right", "the top of the flower". Numbers are partitive before "of" too.
_POSITIONAL = _word_set(
    "left right top bottom front back side up down above below middle center centre upward "
    "downward forward inward outward"
)
_PLACE_PREPOSITIONS = frozenset(["on", "at", "in"])
_DETERMINERS = frozenset(["the", "its", "his", "her", "their", "a", "an", "this", "that"])
# "right" and "left" as adverb or verb: "right next to", "that's right", "left behind".
_NOT_DIRECTION_BEFORE = {
    "right": frozenset(["all", "that's", "you're", "thats", "youre"]),
    "left": frozenset(["has", "have", "had", "been", "being"]),
}
_NOT_DIRECTION_AFTER = {
    "right": _word_set(
        "next there here now away behind beside above below under beneath underneath between "
        "before after across along against off back"
    ),
    "left": frozenset(["behind", "over", "out", "alone", "unattended"]),
}
_RIGHT_AS_ADVERB = frozenset([("in", "front"), ("on", "top"), ("at", "the"), ("at", "us")])
# Words that tell two parts of a scene apart: a reply about the other part does not answer
# ("The flowers in the foreground are pink" when the question asks about the background).
_CONTRASTS = (
    ("background", "foreground"),
    ("inside", "outside"),
    ("top", "bottom"),
    ("upper", "lower"),
    ("front", "back"),
    ("front", "rear"),
    ("man", "woman"),
    ("boy", "girl"),
    ("male", "female"),
)


def _echoed_pair(words: list[str], first: _Span, second: _Span) -> bool:
    """Whether two options' mentions are named as the alternatives: "X or Y", "between X and Y"."""
    gap = words[first.last : second.first]
    if not gap or len(gap) > 2 or (len(gap) == 2 and gap[1] not in _DETERMINERS):
        return False
    if gap[0] in ("or", "nor", "vs", "versus"):
        return True
    before = words[max(0, first.first - 2) : first.first]
    if before and before[-1] in _DETERMINERS:
        before = before[:-1]
    return gap[0] == "and" and bool(before) and before[-1] == "between"


# A number that goes on ("one and a half", "1.5", "2,5") is another number.
_NOT_THE_WORD = re.compile(r"\s*(?:[.,]\d|\s+and\s+a\s+half\b|½)")


# An answer statement is read up to the end of its sentence, and at most this far.
_STATEMENT_LENGTH = 600


def _neighbour(tokens: Sequence[_Token], text: str, index: int, step: int) -> str:
    """The token next to ``tokens[index]`` (``step`` -1 or +1) in the same phrase, or ''."""
    other = index + step
    if not 0 <= other < len(tokens):
        return ""
    first, second = (tokens[other], tokens[index]) if step < 0 else (tokens[index], tokens[other])
    return tokens[other].norm if not text[first.end : second.start].strip() else ""


def _singulars(words: Sequence[str]) -> set[str]:
    """``words`` with their singular and non-possessive forms ("eyes" -> "eye", "chicken's")."""
    found = set(words)
    found.update(w[:-2] for w in words if w.endswith("'s"))
    found.update(w[:-1] for w in words if w.endswith("s"))
    found.update(w[:-2] for w in words if w.endswith("es"))
    return found


class _OptionText:
    """Finds where a text names each option, skipping negated and echoed mentions."""

    def __init__(self, a: str, b: str, question: str = "") -> None:
        self.text: dict[OptionLabel, str] = {"a": a.strip(), "b": b.strip()}
        self.words: dict[OptionLabel, tuple[str, ...]] = {
            "a": tuple(t.norm for t in _tokens(a)),
            "b": tuple(t.norm for t in _tokens(b)),
        }
        # Options that differ only in punctuation ("Happy Easter" / "Happy Easter!") cannot be
        # told apart by their words; only labels decide those.
        self.usable = all(self.words.values()) and self.words["a"] != self.words["b"]
        self.yes_no = {self.words["a"], self.words["b"]} == {("yes",), ("no",)}
        asked = [t.norm for t in _tokens(question)]
        self.question_words = _singulars(asked)
        self.question_pairs = set(itertools.pairwise(asked))
        self.one_words = {w[0] for w in self.words.values() if len(w) == 1}
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

    def votes(self, text: str, *, strict: bool = False) -> set[OptionLabel]:
        """The options ``text`` names without negating or qualifying them."""
        return self.read(text, strict=strict)[0]

    def read(self, text: str, *, strict: bool = False) -> tuple[set[OptionLabel], set[OptionLabel]]:
        """The options ``text`` names plainly, and those it names only as in between.

        "The door is partly open" uses an option's word for something between the two
        options: that is no vote for either, and the reply stays undecided. ``strict`` counts
        only mentions that say the option rather than describe something else with its word
        (see :meth:`_says_option`): what decides is read strictly, what contradicts liberally.
        """
        spans, between = self._plain(text, strict=strict)
        return {s.label for s in spans}, between

    def sequence(self, text: str) -> list[OptionLabel]:
        """The options ``text`` names plainly (read liberally), in the order it names them."""
        return [s.label for s in self._plain(text, strict=False)[0]]

    def named(self, text: str) -> bool:
        """Whether ``text`` uses either option's words at all, negated or not."""
        if self.yes_no:
            return False
        if not self.usable:
            return bool(self._exact_votes(text))
        return bool(self._spans(_tokens(text)))

    def negated_before(self, prefix: str, label: OptionLabel) -> bool | None:
        """For a label written after its option's text ("not on the windowsill (b)").

        None when ``prefix`` does not end with the text of ``label``'s option; else whether
        that text is negated, which the label then shares.
        """
        if not self.usable:
            return None
        prefix = prefix[-_LOOKBACK:]
        tokens = _tokens(prefix)
        size = len(self.words[label])
        if len(tokens) < size or prefix[tokens[-1].end :].strip(" \"'\n"):
            return None
        if tuple(t.norm for t in tokens[-size:]) != self.words[label]:
            return None
        return self._negated(_Span(label, len(tokens) - size, len(tokens)), tokens, prefix)

    def other_subject(self, text: str) -> bool:
        """Whether ``text`` speaks of another part of the scene than the question asks about."""
        said = _singulars([t.norm for t in _tokens(text)])
        return any(
            asked in self.question_words
            and asked not in said
            and other in said
            and other not in self.question_words
            and not {asked, other} & self.one_words
            for pair in _CONTRASTS
            for asked, other in (pair, pair[::-1])
        )

    def _plain(self, text: str, *, strict: bool) -> tuple[list[_Span], set[OptionLabel]]:
        if self.yes_no:
            return [], set()
        if not self.usable:
            return [_Span(label, 0, 0) for label in sorted(self._exact_votes(text))], set()
        tokens = _tokens(text)
        spans = [s for s in self._spans(tokens) if not self._negated(s, tokens, text)]
        if strict:
            spans = [s for s in spans if self._says_option(s, tokens, text)]
        between = {s.label for s in spans if _in_between(s, tokens)}
        return [s for s in spans if not _in_between(s, tokens)], between

    def _says_option(self, span: _Span, tokens: Sequence[_Token], text: str) -> bool:
        """Whether a mention of a one-word option says the option.

        Not when it uses the word for something else: a place ("on the left"), a part ("the
        top of"), an adverb ("right next to"), another number ("one and a half"), or a
        modifier of another thing ("a red barn", "two hands").
        """
        if span.last - span.first != 1:
            return True
        word = tokens[span.first].norm
        before = _neighbour(tokens, text, span.first, -1)
        after = _neighbour(tokens, text, span.first, 1)
        after2 = _neighbour(tokens, text, span.first + 1, 1) if after else ""
        if before in _NOT_DIRECTION_BEFORE.get(word, ()):
            return False
        if _NOT_THE_WORD.match(text, tokens[span.first].end) or (
            len(before) == 1 and before not in ("a", "i")  # "t shirt", "x ray"
        ):
            return False  # "one and a half", "1.5": another number
        if before in ("of", "from", "after", "before", "until") and word not in _POSITIONAL:
            return False  # "1 of 2": the whole; "stood up from sitting": what it no longer is
        if after in _NOT_DIRECTION_AFTER.get(word, ()) or (
            word == "right" and (after, after2) in _RIGHT_AS_ADVERB
        ):
            return False
        if after and (
            any((w, after) in self.question_pairs for w in self.one_words)
            or (after in self.question_words and after not in _FOLLOWERS and after != "of")
        ):
            return True  # the question's own phrase: "the right half", "long tusks", "two eyes"
        if word in _POSITIONAL:
            place = before
            if before in _DETERMINERS:
                place = _neighbour(tokens, text, span.first - 1, -1)
            if place in _PLACE_PREPOSITIONS and place not in self.question_words:
                return False
        if not after:
            return True
        if after == "of":
            return not (word in _POSITIONAL or word.isdigit())
        return after in _FOLLOWERS or after in _ATTRIBUTE_NOUNS or after.endswith("ly")

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

    def _spans(self, tokens: Sequence[_Token]) -> list[_Span]:
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
        longer = max(OPTION_LABELS, key=lambda label: len(self.words[label]))
        size = len(self.words[longer])
        starts = {s.first for s in found if s.label == longer}
        kept = sorted(
            (
                s
                for s in found
                if s.label == longer
                or size == s.last - s.first
                or not any(f in starts for f in range(s.last - size, s.first + 1))
            ),
            key=lambda s: s.first,
        )
        kept = [s for s in kept if not self._pronoun_one(s, tokens)]
        # "open or closed", "between a mug and a glass" echo the question; they answer nothing.
        echoed: set[int] = set()
        for i, first in enumerate(kept):
            for j in range(i + 1, min(i + 4, len(kept))):
                second = kept[j]
                if first.label != second.label and _echoed_pair(words, first, second):
                    echoed.update((i, j))
        return [s for i, s in enumerate(kept) if i not in echoed]

    def _pronoun_one(self, span: _Span, tokens: Sequence[_Token]) -> bool:
        if span.last - span.first != 1 or tokens[span.first].norm != "1":
            return False
        before = tokens[span.first - 1].norm if span.first > 0 else ""
        after = tokens[span.last].norm if span.last < len(tokens) else ""
        return before in _PRONOUN_ONE_BEFORE or after in ("of", "another")

    def _negated(self, span: _Span, tokens: Sequence[_Token], text: str) -> bool:
        start = tokens[span.first].start
        clause_start = max(0, start - _LOOKBACK)
        for match in _CLAUSE_BREAK.finditer(text, clause_start, start):
            clause_start = match.end()
        before = [
            t.norm for t in tokens[max(0, span.first - 4) : span.first] if t.start >= clause_start
        ]
        if any(word in _NEGATORS for word in before):
            return True
        if tuple(before[-2:]) in (("rather", "than"), ("instead", "of")):
            return True
        return _OPTION_WRONG_AFTER.match(text, tokens[span.last - 1].end) is not None


# --- the extractor ---------------------------------------------------------------------------

# A model that says it cannot see the image: whatever it then picks is a guess about images in
# general, not a reading of this one ("I can't see images, but butterflies usually ... (b)").
_CANNOT = r"(?:can(?:'t|not|\s+not)|could(?:n't|\s+not)|unable\s+to|not\s+able\s+to)"
_BLIND = re.compile(
    r"\b(?:" + _CANNOT + r"|(?:do|does)(?:n't|\s+not)\s+have\s+(?:the\s+)?"
    r"(?:ability|capability|access)\s+to)"
    r"\s+(?:see|view|access|open|load|look\s+at|process|analy[sz]e|perceive)\s+"
    r"(?:(?:the|this|that|your|any|an)\s+)?(?:(?:attached|provided|uploaded|actual)\s+)?"
    r"(?:images?|pictures?|photos?|photographs?)\b"
    r"(?!\s+(?:clearly|well|in\s+detail|properly|fully|closely|very|in\s+full|sharply))"
    r"|\b(?:don't|do\s+not|doesn't|does\s+not)\s+have\s+access\s+to\s+(?:the|any|this|your)\s+"
    r"(?:image|picture|photo)"
    r"|\bno\s+(?:image|picture|photo)s?\s+(?:(?:was|were|is|has\s+been|have\s+been)\s+)?"
    r"(?:provided|attached|uploaded|included|shared|given|shown)"
    r"|\b(?:image|picture|photo)\s+(?:didn't|did\s+not|failed\s+to|doesn't|does\s+not|won't)\s+"
    r"(?:load|come\s+through|display|appear|open)"
    r"|\btext[-\s](?:only|based)\s+(?:model|assistant|ai)\b",
    re.IGNORECASE,
)
# "I cannot see the pepper, but peppers in stock photos are usually red": a guess from priors.
_NOT_SEEN = re.compile(
    r"\b" + _CANNOT + r"\s+(?:see|view|find|locate|spot|make\s+out)\b",
    re.IGNORECASE,
)
_USUALLY = re.compile(
    r"\b(?:usually|typically|generally|in\s+general|commonly|normally|tend\s+to|most\s+often"
    r"|stock\s+photos?|based\s+on\s+typical)\b",
    re.IGNORECASE,
)
# The other label right after a label: "A, B", "(a)/(b)", "A or B", "A或B" name both options.
_AND_OTHER = (
    r"\s*(?:,|/|&|\+|\band\b|\bor\b|\bvs\.?|\bversus\b|\bet\b|\bou\b|\by\b|\bo\b|\bund\b|\boder\b"
    r"|和|或者|或|と|か)?\s*(?:[(\[]\s*[{x}{X}]\s*[)\]]|{X}(?![\w'])|{x}(?=\s*(?:[.,;:!)/]|\Z)))"
)
_BOTH_AFTER = {
    label: re.compile(_AND_OTHER.format(x=other, X=other.upper()), re.IGNORECASE)
    for label, other in (("a", "b"), ("b", "a"))
}
# A bare capital label anywhere ("it could be B"), for checking that a caveat names no option.
_BARE_LABEL = re.compile(r"(?<![\w'])[AB](?![\w'])")
_YES_OR_NO = re.compile(r"\b(?:yes|no)\b", re.IGNORECASE)

# A reply cut off mid-sentence ends on a word that needs more ("... its wings are", "... faces
# the") or on an opening mark ("**Answer:** (").
_DANGLING = _word_set(
    "the a an to of at by for from with into onto toward towards and or but nor because than as "
    "whether if its their his my our your be been being very not"
)
_COPULAS = frozenset(["is", "are", "was", "were", "am"])
_SUBJECTS = _word_set("it they he she i we you there that this which what who")
# ... but a final "A" or a marked "a" is a label: "Answer = A", "réponse : a", "is a".
_LAST_LABEL = re.compile(r"(?:(?<![\w'])A|(?i:[:=]|\bis|\bbe)\s*[aA])\s*\Z")
_OPEN_END = re.compile(r"[(\[:,\u2013\u2014]\s*\Z")
_WORDS = re.compile(r"[\w']+")

# A hedge that only says how sure the reply is, in a clause that concedes it after a pick:
# "I think it's B, but I'm not completely sure." Hedges that weigh the options are no caveat.
_CONCESSIVE = re.compile(
    r"\b(?:but|though|although|however|yet|albeit|even\s+(?:though|if)|mais|pero|aunque|aber"
    r"|obwohl|ma|mas|però|но)\b|但|不过|不過|けど|하지만",
    re.IGNORECASE,
)
_CONFIDENCE = re.compile(
    r"sure|certain|unclear|ambiguous|hard|difficult|tell|determine|sicher|确定|確定|segur|sicur"
    r"|certez|уверен|확실",
    re.IGNORECASE,
)
_WEIGHS_OPTIONS = re.compile(
    r"either|neither|both|\bor\b|image|know|guess|maybe|perhaps|possibly|might|could\s+be"
    r"|may\s+be",
    re.IGNORECASE,
)
# The rest of a sentence that opens with yes or no and says the opposite: "Yes, no Z key is
# visible", "No, there is a Z in the bottom row".
_ABSENT = re.compile(
    r"^[\s,:\u2013\u2014-]*(?:no\s+\w|there(?:'s|\s+is|\s+are)\s+no\b|nothing\b|none\b)"
    r"|\b(?:not|n't)\s+(?:visible|present|there|shown|see|seen)\b|\binvisible\b"
    # "Yes, but not the Z": the yes is taken back in its own sentence (Spanish, German, French).
    r"|\bbut\s+not\b|\bpero\s+no\b|\baber\s+nicht\b|\bmais\s+pas\b",
    re.IGNORECASE,
)
_PRESENT = re.compile(
    # German "Nein, doch": the no is taken back at once ("no — yes, it is").
    r"^[\s,:\u2013\u2014-]*(?:doch\b|there(?:'s|\s+is|\s+are)\s+(?:a|an|one|two|some|several)\b"
    r"|i\s+(?:can\s+)?see\s+(?:a|an|the|it|one|two|some)\b)"
    r"|^(?:(?!\b(?:not|no|n't|never|nothing)\b).)*(?:\b(?:is|are)|'s|'re)\s+(?:clearly\s+)?"
    r"(?:visible|there|present)\b",
    re.IGNORECASE,
)
_MAY_BE_WRONG = re.compile(r"\s+(?:wrong|mistaken)\b", re.IGNORECASE)
_CLAUSE_MARK = re.compile(r"[.!?;,\n\u2013\u2014(]")
_SENTENCE_END = re.compile(r"[.!?;\n]|\Z")


@dataclass(frozen=True)
class _Mention:
    label: OptionLabel
    negated: bool


class _Extractor:
    def __init__(self, a: str, b: str, question: str = "") -> None:
        self.options = _OptionText(a, b, question)

    def _ends_with_an_option(self, text: str) -> bool:
        """The reply ends with an option's whole words: finished, however the option ends.

        "(b) Away from" answers "Towards / Away from"; its last word is no sign of a cut-off.
        """
        words = tuple(t.norm for t in _tokens(text))
        return any(
            option and words[-len(option) :] == option for option in self.options.words.values()
        )

    def extract(self, raw: str | None) -> Extraction:
        if raw is None:
            return Extraction(None, "empty")
        if re.search(r"<think>", raw, re.IGNORECASE) and not re.search(
            r"</think>", raw, re.IGNORECASE
        ):
            return Extraction(None, "unfinished-reasoning")
        text = _clean(raw)
        if _BLIND.search(text) or (_NOT_SEEN.search(text) and _USUALLY.search(text)):
            return Extraction(None, "no-image")
        structured = self._structured(_THINK.sub(" ", raw))
        if structured is not None:
            return structured
        if not text:
            return Extraction(None, "empty")
        only = _LABEL_ONLY.match(text)
        if only:
            return Extraction(_label(only.group(1)), "label-only")
        cut = None if self._ends_with_an_option(text) else _unfinished(text)
        if cut is not None:
            # Only what the reply finished saying counts, and only when the cut-off part
            # names no answer it might have gone on to give or take back.
            if not text[:cut].strip() or self._names_an_answer(text[cut:]):
                return Extraction(None, "cut-off")
            text = text[:cut].rstrip()
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

    def _names_an_answer(self, text: str) -> bool:
        """Whether ``text`` names an option in any way: a label, its words, a yes or no."""
        return bool(
            self.options.named(text)
            or _LABEL_MENTION.search(text)
            or _BARE_LABEL.search(text)
            or (self.options.yes_no and _YES_OR_NO.search(text))
        )

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
                    if label is None or isinstance(label, Extraction):
                        return label  # None: an answer field we cannot read; the text may
                    found.add(label)
                else:
                    other_text.append(value)
        if not found:
            return None
        if len(found) == 2:
            return Extraction(None, "conflicting-answers")
        (label,) = found
        # The other fields and the text around the object may not name the other option.
        other_text.append(_JSON_OBJECT.sub(" ", raw))
        votes, _ = self.options.read(self.options.without_echoes(" ".join(other_text)))
        if _other(label) in votes and label not in votes:
            return Extraction(None, "conflict")
        return Extraction(label, "structured")

    def _label_of_value(self, value: str) -> OptionLabel | Extraction | None:
        cleaned = _clean(value)
        only = _LABEL_ONLY.match(cleaned)
        if only:
            return _label(only.group(1))
        leading = _LEADING_LABEL.match(cleaned)
        if leading:
            label = _matched_label(leading)
            if _BOTH_AFTER[label].match(cleaned[leading.end() :]):
                return Extraction(None, "both-labels")  # "(a) or (b)": no decision
            rest, _ = self.options.read(self.options.without_echoes(cleaned))
            # "B: Open": the letter and its words disagree. Not for the text to read again.
            return Extraction(None, "conflict") if _other(label) in rest else label
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
        if hedge is None:
            return self._read(text)
        caveats = self._caveats(text)
        if not caveats:
            return self._conclusion(text[hedge:]) or Extraction(None, "hedge")
        # A pick with a caveat about how sure it is: the pick, told apart by its rule.
        kept, start = [], 0
        for begin, end in caveats:
            kept.append(text[start:begin])
            start = end
        picked = self._read("".join([*kept, text[start:]]))
        return Extraction(picked.choice, "hedged-pick") if picked.choice else picked

    def _caveats(self, text: str) -> list[tuple[int, int]] | None:
        """Where each hedge of ``text`` is a caveat after a pick; None if one is not.

        A caveat is a clause that concedes ("but", "though", "aber", ...), says only how sure
        the reply is, follows something said, and names no option.
        """
        spans: list[tuple[int, int]] = []
        for hedge in _HEDGE.finditer(text):
            said = hedge.group()
            own_doubt = _MAY_BE_WRONG.match(text, hedge.end()) is not None  # "I could be wrong"
            if not own_doubt and (_WEIGHS_OPTIONS.search(said) or not _CONFIDENCE.search(said)):
                return None
            window = max(0, hedge.start() - _LOOKBACK)
            marks = _CLAUSE_MARK.finditer(text, window, hedge.start())
            start = max((m.end() for m in marks), default=window)
            end_mark = _SENTENCE_END.search(text, hedge.end())
            end = end_mark.end() if end_mark else len(text)
            clause = text[start:end]
            if not _CONCESSIVE.search(clause) or not _WORDS.search(text, 0, start):
                return None
            if self._names_an_answer(clause):
                return None
            spans.append((start, end))
        return spans

    def _read(self, text: str) -> Extraction:
        """Decide a stretch of reply that holds no hedge."""
        # "(a) Open (b) Closed" restates the options; it answers nothing.
        text = self.options.without_listing(text)
        if not text:
            return Extraction(None, "options-only")
        mentions = self._mentions(text)
        positive = {m.label for m in mentions if not m.negated}
        negated = {m.label for m in mentions if m.negated}
        # What the option words say once each label's echo of its own text is set aside:
        # "(a) Left. The dog faces right." contradicts its label. Read liberally: any use of
        # the other option's word counts against a pick.
        votes, between = self.options.read(self.options.without_echoes(text))

        def decide(label: OptionLabel, rule: str, at: int | None = None) -> Extraction:
            # A pick the reply also calls wrong, or whose words name the other option, is a
            # contradiction, not an answer.
            if label in negated:
                return Extraction(None, "negated")
            against = _other(label) in votes if at is None else self._against(text, label, at)
            if against or _other(label) in between or self._yes_no_clauses(text) - {label}:
                return Extraction(None, "conflict")
            return Extraction(label, rule)

        answered = self._marked_answers(text)
        if isinstance(answered, Extraction):
            return answered
        leading = self._leading(text)
        if isinstance(leading, Extraction):
            return leading
        if answered is not None:
            label, at = answered
            if leading is not None and leading != label:
                return Extraction(None, "conflict")
            return decide(label, "answer-marker", at)
        if leading is not None:
            rule = "leading-yes-no" if _LEADING_YES_NO.match(text) else "leading-label"
            if _other(leading) in positive:
                return Extraction(None, "conflict")
            return decide(leading, rule)
        said = self._yes_no_clauses(text)
        if len(said) == 1 and not positive - said:
            opening = _OPENING_YES_NO.match(text)  # "No Z key, ... Yes, a Y": no answer
            if opening and self.options.label_of_word(opening.group(1)) not in said:
                return Extraction(None, "conflict")
            return decide(next(iter(said)), "yes-no-clause")
        if len(positive) == 2:
            return Extraction(None, "both-labels")
        if positive:
            (label,) = positive
            return decide(label, "label-mention")
        return self._option_words(text, negated, votes, between)

    def _option_words(
        self,
        text: str,
        negated: set[OptionLabel],
        votes: set[OptionLabel],
        between: set[OptionLabel],
    ) -> Extraction:
        """Decide by the options' own words, the weakest evidence.

        Only a word that says an option ("the wings are open"), not one that describes
        something else with it ("the left side of the lawn"), and only about what the question
        asks ("the flowers in the foreground" is not about the background).
        """
        said = self.options.votes(self.options.without_echoes(text), strict=True)
        if negated and not (len(votes) == 1 and said == votes and not said & negated):
            return Extraction(None, "negated")  # "not (a)" alone: never inferred to be (b)
        if between:
            return Extraction(None, "in-between")
        if len(votes) == 2:
            return Extraction(None, "both-options")
        if not said:
            return Extraction(None, "no-answer-found")
        if self.options.other_subject(text):
            return Extraction(None, "other-subject")
        return Extraction(next(iter(said)), "option-text")

    def _against(self, text: str, label: OptionLabel, at: int) -> bool:
        """Whether the reply's words name the other option against its answer statement.

        Words after the statement may not name the other option. Reasoning before it may
        weigh both options, but the last option it names must be the one the statement gives:
        "The tail is on the left, the snout on the right ... so it faces right. Answer: B".
        """
        other = _other(label)
        if other in self.options.votes(self.options.without_echoes(text[at:])):
            return True
        before = self.options.sequence(self.options.without_echoes(text[:at]))
        return bool(before) and before[-1] == other

    def _yes_no_clauses(self, text: str, *, opening: bool = True) -> set[OptionLabel]:
        """For yes/no questions: the options a yes or no standing as its own clause gives.

        ``opening=False`` leaves out one that ``text`` opens with: after a hedge ("Maybe
        yes.") that is the hedged word, not a clause of its own.
        """
        if not self.options.yes_no:
            return set()
        start = len(text) - len(text.lstrip())
        found = (
            self.options.label_of_word(m.group(1))
            for m in _CLAUSE_YES_NO.finditer(text)
            if opening or m.start(1) > start
        )
        return {label for label in found if label is not None}

    def _conclusion(self, tail: str) -> Extraction | None:
        """After a hedge, an explicit conclusion: "..., but the answer is (b)"."""
        if _last_hedge(tail) is not None:
            return None
        answered = self._marked_answers(tail)
        said = self._yes_no_clauses(tail, opening=False)  # "Not sure at first, but yes — ..."
        label: OptionLabel | None = None
        if isinstance(answered, tuple):
            label = answered[0]
        elif answered is None and len(said) == 1:
            label = next(iter(said))
        if label is None:
            return None
        if said - {label}:
            return None
        mentions = self._mentions(tail)
        if any(m.label == label and m.negated for m in mentions) or any(
            m.label != label and not m.negated for m in mentions
        ):
            return None
        votes, between = self.options.read(self.options.without_echoes(tail))
        if _other(label) in votes | between:
            return None
        return Extraction(label, "conclusion-after-hedge")

    def _mentions(self, text: str) -> list[_Mention]:
        found: list[_Mention] = []
        for match in _LABEL_MENTION.finditer(text):
            label = _matched_label(match)
            before = text[max(0, match.start() - _LOOKBACK) : match.start()]
            negated = bool(
                _NEGATED_BEFORE.search(before)
                or _LABEL_WRONG_AFTER.match(text, match.end())
                # A label after its option's text shares its negation: "not closed (b)".
                or self.options.negated_before(before, label)
            )
            found.append(_Mention(label, negated))
        for match in _LABEL_FIRST.finditer(text):
            before = text[max(0, match.start() - _LOOKBACK) : match.start()]
            found.append(_Mention(_matched_label(match), bool(_NEGATED_BEFORE.search(before))))
        leading = _LEADING_LABEL.match(text)
        if leading and _LABEL_WRONG_AFTER.match(text, leading.end()):
            found.append(_Mention(_matched_label(leading), True))  # "B is wrong"
        return found

    def _marked_answers(self, text: str) -> tuple[OptionLabel, int] | Extraction | None:
        """The option every answer statement names, and where the first of them starts.

        An Extraction instead when they disagree or one names both options.
        """
        chosen: dict[OptionLabel, int] = {}
        for match in _MARKER.finditer(text):
            label = self._statement(text[match.end() : match.end() + _STATEMENT_LENGTH])
            if isinstance(label, Extraction):
                return label
            if label is not None:
                chosen.setdefault(label, match.start())
        if len(chosen) == 2:
            return Extraction(None, "conflicting-answers")
        return next(iter(chosen.items())) if chosen else None

    def _statement(self, rest: str) -> OptionLabel | Extraction | None:
        """The option an answer statement gives, read from what follows its marker."""
        rest = rest.lstrip(" :-\"'")
        end = _SEGMENT_END.search(rest)
        segment = rest[: end.start() if end else len(rest)]
        if _SEGMENT_NEGATION.match(segment):
            # "the answer is not (a)": the label mention is negated (see _mentions);
            # "the answer is not open but closed": read the options' words.
            votes = self.options.votes(segment, strict=True)
            if len(votes) == 1 and not _LABEL_MENTION.search(segment):
                return next(iter(votes))
            return None
        label_match = _SEGMENT_LABEL.match(segment)
        if label_match:
            label = _matched_label(label_match)
            after = segment[label_match.end() :]
            both = _BOTH_AFTER[label].match(after)
            if both and not _LABEL_WRONG_AFTER.match(after, both.end()):  # not "A, B is wrong"
                return Extraction(None, "both-labels")  # "Answer: A, B", "(a) or (b)"
            if _contradicts(self.options.votes(after), label):
                return Extraction(None, "conflict")
            if self.options.yes_no:
                word = _LEADING_YES_NO.match(after.lstrip(" .):-"))
                if word and self.options.label_of_word(word.group(1)) != label:
                    return Extraction(None, "conflict")
            return label
        if self.options.yes_no:
            word = _LEADING_YES_NO.match(segment)
            return self.options.label_of_word(word.group(1)) if word else None
        votes = self.options.votes(segment, strict=True)
        if len(votes) == 1 and len(self.options.votes(segment)) == 1:
            return next(iter(votes))
        return None

    def _leading(self, text: str) -> OptionLabel | Extraction | None:
        """The option a reply opens with: its label, or yes/no for yes/no questions."""
        match = _LEADING_LABEL.match(text)
        if match and not _LABEL_WRONG_AFTER.match(text, match.end()):  # not "B is wrong"
            label = _matched_label(match)
            if _BOTH_AFTER[label].match(text[match.end() :]):
                return Extraction(None, "both-labels")  # "A, B", "(a)(b)"
            if self.options.yes_no:
                word = _LEADING_YES_NO.match(text[match.end() :].lstrip(" .):-"))
                if word and self.options.label_of_word(word.group(1)) != label:
                    return Extraction(None, "conflict")
            return label
        if self.options.yes_no:
            word = _LEADING_YES_NO.match(text)
            if word:
                said = self.options.label_of_word(word.group(1))
                rest = text[word.end() :]
                end = _SENTENCE_END.search(rest)
                sentence = rest[: end.start() if end else len(rest)]
                opposite = _ABSENT if said == self.options.label_of_word("yes") else _PRESENT
                return Extraction(None, "conflict") if opposite.search(sentence) else said
        return None


def _label(letter: str) -> OptionLabel:
    return "a" if letter.lower() == "a" else "b"


def _matched_label(match: re.Match[str]) -> OptionLabel:
    """The label a pattern with one group per way of writing a label found."""
    return _label(next(g for g in match.groups() if g))


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
    pieces = _SENTENCE.split(text)  # sentences and, between them, what separated them
    sentences, separators = pieces[::2], [*pieces[1::2], ""]
    return "".join(
        sentence + separator
        for sentence, separator in zip(sentences, separators, strict=True)
        if not _HYPOTHETICAL.search(sentence) and not sentence.rstrip().endswith("?")
    ).strip()


def _unfinished(text: str) -> int | None:
    """Where the last sentence starts when the reply was cut off in it, else None."""
    stripped = text.rstrip()
    if not _OPEN_END.search(stripped):
        if not stripped or stripped[-1] in ".!?)]}\"'":
            return None
        words = _WORDS.findall(stripped[-60:])
        last = words[-1].lower() if words else ""
        after_subject = len(words) > 1 and words[-2].lower() in _SUBJECTS
        if _LAST_LABEL.search(stripped) or (
            last not in _DANGLING and not (last in _COPULAS and not after_subject)
        ):
            return None
    starts = [m.end() for m in _SENTENCE.finditer(stripped)]
    return starts[-1] if starts else 0


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
        before = text[max(0, match.start() - _LOOKBACK) : match.start()]
        lead = _CLAUSE_LEAD.search(before)
        head = before[: lead.start()] if lead else before
        if not head.strip() or not _CLAUSE_START.search(head):
            continue
        cuts.append(match.start())
    cuts.append(len(text))
    return [text[i:j] for i, j in itertools.pairwise(cuts) if text[i:j].strip()]
