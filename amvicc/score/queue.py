"""Who still needs to rate what, and in which order each rater sees it.

The state is kept in memory and follows the store: :class:`VerdictFeed` reads only the verdict
rows added since its last look (verdict ids only grow), and the ledgers update their counts
from those rows. The work a click costs therefore does not grow with the number of items, and
verdicts given through another server on the same workspace show up at the next click.

Three queues share this machinery, one per screen of the app:

- :class:`RatingQueue`: images still short of ``raters_per_item`` raters, plus those the rater
  already rated (so previous / next can revisit them).
- :class:`AdjudicationQueue`: fully rated images whose raters disagree.
- :class:`AuditQueue`: VLM answers (to MMVP questions and to ladder rungs) no grader decided,
  the seeded sample of automatic decisions drawn for audit (pending until a person audits
  them), plus those the rater decided.

Each rater walks a queue in their own seeded random order (:class:`Order`), so raters do not
see the images model by model and two raters rarely work on the same image at once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import ClassVar, Literal

from amvicc.agreement import resolve
from amvicc.provenance import derive_seed
from amvicc.score.items import OPTION_VERDICTS, RUNG_VERDICTS
from amvicc.store import (
    ADJUDICATION_PREFIX,
    Store,
    VerdictRow,
    adjudication_source,
    human_source,
    is_human_source,
    is_rater_source,
)
from amvicc.store import (
    DECIDING_ANSWERS as _DECIDING,
)

Screen = Literal["rate", "adjudicate", "audit"]
Direction = Literal[-1, 1]

#: Answer verdicts that decide a response (``undecided`` does not).
DECIDING_ANSWERS = frozenset(_DECIDING)


@dataclass(frozen=True)
class Mark:
    """A source's latest verdict on one subject."""

    value: str
    comment: str | None
    verdict_id: int


@dataclass(frozen=True)
class Progress:
    """How far a rater is through a queue: ``done`` of ``total``."""

    done: int
    total: int


class VerdictFeed:
    """Reads the verdict rows added to the store since the previous poll.

    Only people's image verdicts and every answer verdict are returned (automatic image
    judges do not decide who rates what). Not thread-safe: the caller serialises polls.
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._last = 0

    def poll(self) -> list[VerdictRow]:
        """The new rows, oldest first."""
        # Reading up to a fixed newest id never skips a row that commits later.
        newest = self._store.newest_verdict_id()
        if newest <= self._last:
            return []
        rows = self._store.verdict_rows_for_rating(self._last, newest)
        self._last = newest
        return rows


class ImageLedger:
    """People's latest verdicts on images, with the counts the rating queues need.

    Invariants kept on every verdict (work proportional to the image's raters, not to the
    number of images): which items are still open (fewer than ``raters_per_item`` raters),
    which each rater rated, how many of those are still open, which fully rated items are
    disputed and which are adjudicated.
    """

    def __init__(self, raters_per_item: int) -> None:
        if raters_per_item < 1:
            raise ValueError("raters_per_item must be at least 1")
        self.raters_per_item = raters_per_item
        self._marks: dict[str, dict[str, Mark]] = defaultdict(dict)
        self._items: frozenset[str] = frozenset()
        self.version = 0
        self._open: set[str] = set()
        self._rated_by: dict[str, set[str]] = defaultdict(set)
        self._open_rated: Counter[str] = Counter()
        self._disputed: set[str] = set()
        self._adjudicated: set[str] = set()

    def set_items(self, image_ids: Iterable[str]) -> None:
        """Replace the set of images being rated and recount everything."""
        self._items = frozenset(image_ids)
        self.version += 1
        self._open.clear()
        self._rated_by.clear()
        self._open_rated.clear()
        self._disputed.clear()
        self._adjudicated.clear()
        for image_id in self._items:
            self._count(image_id)

    def apply(self, row: VerdictRow) -> None:
        """Take one new verdict row into account."""
        if row.image_id is None:
            return
        tracked = row.image_id in self._items
        if tracked:
            self._uncount(row.image_id)
        self._marks[row.image_id][row.source] = Mark(row.value, row.comment, row.verdict_id)
        if tracked:
            self._count(row.image_id)

    # queries

    @property
    def items(self) -> frozenset[str]:
        """The images being rated."""
        return self._items

    def mark(self, image_id: str, source: str) -> Mark | None:
        """A source's latest verdict on an image."""
        return self._marks.get(image_id, {}).get(source)

    def rater_marks(self, image_id: str) -> dict[str, Mark]:
        """Each rater's latest verdict on an image, in the order they were given."""
        marks = self._marks.get(image_id, {})
        raters = {s: m for s, m in marks.items() if is_rater_source(s)}
        return dict(sorted(raters.items(), key=lambda sm: sm[1].verdict_id))

    def adjudication(self, image_id: str) -> Mark | None:
        """The newest adjudication verdict on an image, whoever gave it."""
        marks = [
            m for s, m in self._marks.get(image_id, {}).items() if s.startswith(ADJUDICATION_PREFIX)
        ]
        return max(marks, key=lambda m: m.verdict_id, default=None)

    def is_open(self, image_id: str) -> bool:
        """Whether an image still needs raters."""
        return image_id in self._open

    def rated(self, source: str, image_id: str) -> bool:
        """Whether ``source`` rated this image."""
        return image_id in self._rated_by.get(source, ())

    def is_disputed(self, image_id: str) -> bool:
        """Whether an image has all its raters and they disagree."""
        return image_id in self._disputed

    def is_adjudicated(self, image_id: str) -> bool:
        """Whether anyone adjudicated this image."""
        return image_id in self._adjudicated

    def rating_progress(self, source: str) -> Progress:
        """Images ``source`` rated, of those rated plus those still open to them."""
        done = len(self._rated_by.get(source, ()))
        return Progress(done, done + len(self._open) - self._open_rated[source])

    def adjudication_progress(self) -> Progress:
        """Disputed images adjudicated, of all disputed images."""
        return Progress(len(self._disputed & self._adjudicated), len(self._disputed))

    # bookkeeping

    def _count(self, image_id: str) -> None:
        raters = self.rater_marks(image_id)
        is_open = len(raters) < self.raters_per_item
        if is_open:
            self._open.add(image_id)
        for source in raters:
            self._rated_by[source].add(image_id)
            if is_open:
                self._open_rated[source] += 1
        if not is_open and resolve([m.value for m in raters.values()]).disagreement:
            self._disputed.add(image_id)
        if self.adjudication(image_id) is not None:
            self._adjudicated.add(image_id)

    def _uncount(self, image_id: str) -> None:
        was_open = image_id in self._open
        for source in self.rater_marks(image_id):
            self._rated_by[source].discard(image_id)
            if was_open:
                self._open_rated[source] -= 1
        self._open.discard(image_id)
        self._disputed.discard(image_id)
        self._adjudicated.discard(image_id)


class AnswerLedger:
    """Every source's latest verdict on responses, and which audit candidates are decided."""

    def __init__(self) -> None:
        self._marks: dict[str, dict[str, Mark]] = defaultdict(dict)
        self._candidates: frozenset[str] = frozenset()
        self._sampled: frozenset[str] = frozenset()
        self.version = 0
        self._decided: set[str] = set()
        self._audited_by: dict[str, set[str]] = defaultdict(set)

    def set_candidates(self, response_ids: Iterable[str], sampled: Iterable[str] = ()) -> None:
        """Replace the responses offered for audit and recount.

        Args:
            response_ids: every response offered.
            sampled: those drawn from the automatic decisions: they wait for a person even
                though a program decided them.
        """
        self._candidates = frozenset(response_ids)
        self._sampled = frozenset(sampled) & self._candidates
        self.version += 1
        self._decided = {r for r in self._candidates if self._decides(r)}
        self._audited_by.clear()
        for response_id in self._candidates:
            for source in self._marks.get(response_id, {}):
                self._audited_by[source].add(response_id)

    def apply(self, row: VerdictRow) -> None:
        """Take one new verdict row into account."""
        if row.response_id is None:
            return
        self._marks[row.response_id][row.source] = Mark(row.value, row.comment, row.verdict_id)
        if row.response_id in self._candidates:
            self._audited_by[row.source].add(row.response_id)
            if self._decides(row.response_id):
                self._decided.add(row.response_id)
            else:
                self._decided.discard(row.response_id)

    @property
    def candidates(self) -> frozenset[str]:
        """The responses offered for audit."""
        return self._candidates

    def mark(self, response_id: str, source: str) -> Mark | None:
        """A source's latest verdict on a response."""
        return self._marks.get(response_id, {}).get(source)

    def is_decided(self, response_id: str) -> bool:
        """Whether any source's latest verdict decides the response (:data:`DECIDING_ANSWERS`).

        An option, ``correct`` / ``incorrect`` for a ladder reply, or that there is no answer.
        """
        return response_id in self._decided

    def audited(self, source: str, response_id: str) -> bool:
        """Whether ``source`` gave this response a verdict."""
        return response_id in self._audited_by.get(source, ())

    def progress(self, source: str) -> Progress:
        """Responses ``source`` audited, of those plus the ones still undecided."""
        done = len(self._audited_by.get(source, ()))
        return Progress(done, done + len(self._candidates) - len(self._decided))

    def _decides(self, response_id: str) -> bool:
        marks = self._marks.get(response_id, {})
        if response_id in self._sampled:
            # An audited sample item is decided by a person, not by the program it audits.
            return any(m.value in DECIDING_ANSWERS and is_human_source(s) for s, m in marks.items())
        return any(m.value in DECIDING_ANSWERS for m in marks.values())


@dataclass(frozen=True)
class Order:
    """One rater's order of a queue's subjects."""

    ids: tuple[str, ...]
    position: Mapping[str, int]

    @classmethod
    def seeded(cls, subjects: Iterable[str], seed: int, screen: Screen, rater: str) -> Order:
        """Sort by a hash of (seed, screen, rater, subject).

        Every rater gets their own order, the same one every time, and a subject added later
        does not reshuffle the others.
        """
        ids = tuple(sorted(subjects, key=lambda s: derive_seed(seed, screen, rater, s)))
        return cls(ids, {s: i for i, s in enumerate(ids)})

    def first(self, wanted: Callable[[str], bool], start: int = 0) -> str | None:
        """The first subject from ``start`` on that is ``wanted``, wrapping around to the top."""
        start = min(start, len(self.ids))
        for index in chain(range(start, len(self.ids)), range(start)):
            if wanted(self.ids[index]):
                return self.ids[index]
        return None

    def neighbour(
        self, wanted: Callable[[str], bool], current: str | None, direction: Direction
    ) -> str | None:
        """The nearest ``wanted`` subject before or after ``current`` (no wrapping).

        From no subject (the rater finished the queue), going back starts at the end.
        """
        if current is not None and current in self.position:
            index = self.position[current] + direction
        else:
            index = len(self.ids) - 1 if direction < 0 else len(self.ids)
        while 0 <= index < len(self.ids):
            if wanted(self.ids[index]):
                return self.ids[index]
            index += direction
        return None


class Queue(ABC):
    """One screen's queue: which subjects a rater may visit, and which still need them."""

    screen: ClassVar[Screen]
    #: The verdict values a rater can give on this screen.
    values: ClassVar[tuple[str, ...]]

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._orders: dict[str, tuple[int, Order]] = {}

    @abstractmethod
    def subjects(self) -> Iterable[str]:
        """Every subject that can be in this queue."""

    @abstractmethod
    def version(self) -> int:
        """Changes whenever :meth:`subjects` does."""

    @abstractmethod
    def source(self, rater: str) -> str:
        """The verdict source a rater's verdicts on this screen get."""

    @abstractmethod
    def member(self, rater: str, subject: str) -> bool:
        """Whether the rater may visit the subject (pending, or already judged by them)."""

    @abstractmethod
    def pending(self, rater: str, subject: str) -> bool:
        """Whether the subject still waits for this rater."""

    @abstractmethod
    def progress(self, rater: str) -> Progress:
        """How far the rater is through this queue."""

    @abstractmethod
    def mark(self, rater: str, subject: str) -> Mark | None:
        """The rater's own latest verdict on the subject on this screen."""

    def order(self, rater: str) -> Order:
        """The rater's order of this queue (cached until the subjects change)."""
        cached = self._orders.get(rater)
        if cached is None or cached[0] != self.version():
            cached = (self.version(), Order.seeded(self.subjects(), self.seed, self.screen, rater))
            self._orders[rater] = cached
        return cached[1]

    def resume(self, rater: str) -> str | None:
        """Where the rater resumes: the first subject in their order still waiting for them."""
        return self.order(rater).first(lambda s: self.pending(rater, s))

    def next_pending(self, rater: str, current: str | None) -> str | None:
        """After a verdict on ``current``: the next subject waiting for the rater."""
        order = self.order(rater)
        start = order.position.get(current, -1) + 1 if current is not None else 0
        return order.first(lambda s: self.pending(rater, s), start)

    def step(self, rater: str, current: str | None, direction: Direction) -> str | None:
        """Previous / next: the neighbouring subject the rater may visit."""
        return self.order(rater).neighbour(lambda s: self.member(rater, s), current, direction)


class RatingQueue(Queue):
    """Images still short of raters, and those the rater already rated."""

    screen = "rate"
    values = ("correct", "incorrect", "cant_tell")

    def __init__(self, ledger: ImageLedger, seed: int) -> None:
        super().__init__(seed)
        self.ledger = ledger

    def subjects(self) -> Iterable[str]:  # noqa: D102 (documented in Queue)
        return self.ledger.items

    def version(self) -> int:  # noqa: D102
        return self.ledger.version

    def source(self, rater: str) -> str:  # noqa: D102
        return human_source(rater)

    def member(self, rater: str, subject: str) -> bool:  # noqa: D102
        return self.ledger.is_open(subject) or self.ledger.rated(self.source(rater), subject)

    def pending(self, rater: str, subject: str) -> bool:  # noqa: D102
        return self.ledger.is_open(subject) and not self.ledger.rated(self.source(rater), subject)

    def progress(self, rater: str) -> Progress:  # noqa: D102
        return self.ledger.rating_progress(self.source(rater))

    def mark(self, rater: str, subject: str) -> Mark | None:  # noqa: D102
        return self.ledger.mark(subject, self.source(rater))


class AdjudicationQueue(Queue):
    """Fully rated images whose raters disagree; pending until someone adjudicates them.

    Only fully rated images are offered, so an adjudicator never sees the verdicts on an image
    that is still in someone's rating queue.
    """

    screen = "adjudicate"
    values = RatingQueue.values

    def __init__(self, ledger: ImageLedger, seed: int) -> None:
        super().__init__(seed)
        self.ledger = ledger

    def subjects(self) -> Iterable[str]:  # noqa: D102
        return self.ledger.items

    def version(self) -> int:  # noqa: D102
        return self.ledger.version

    def source(self, rater: str) -> str:  # noqa: D102
        return adjudication_source(rater)

    def member(self, rater: str, subject: str) -> bool:  # noqa: D102
        return self.ledger.is_disputed(subject)

    def pending(self, rater: str, subject: str) -> bool:  # noqa: D102
        return self.ledger.is_disputed(subject) and not self.ledger.is_adjudicated(subject)

    def progress(self, rater: str) -> Progress:  # noqa: D102
        return self.ledger.adjudication_progress()

    def mark(self, rater: str, subject: str) -> Mark | None:  # noqa: D102
        return self.ledger.adjudication(subject)


class AuditQueue(Queue):
    """VLM answers no grader decided, the audit sample, and those the rater decided.

    MMVP answers and ladder replies share the queue (one order, one progress count); each
    item allows only its own kind's verdicts (``AnswerItem.values``, ``RungItem.values``),
    which the desk checks.
    """

    screen = "audit"
    values = tuple(dict.fromkeys((*OPTION_VERDICTS, *RUNG_VERDICTS)))

    def __init__(self, ledger: AnswerLedger, seed: int) -> None:
        super().__init__(seed)
        self.ledger = ledger

    def subjects(self) -> Iterable[str]:  # noqa: D102
        return self.ledger.candidates

    def version(self) -> int:  # noqa: D102
        return self.ledger.version

    def source(self, rater: str) -> str:  # noqa: D102
        return human_source(rater)

    def member(self, rater: str, subject: str) -> bool:  # noqa: D102
        return not self.ledger.is_decided(subject) or self.ledger.audited(
            self.source(rater), subject
        )

    def pending(self, rater: str, subject: str) -> bool:  # noqa: D102
        return subject in self.ledger.candidates and not self.ledger.is_decided(subject)

    def progress(self, rater: str) -> Progress:  # noqa: D102
        return self.ledger.progress(self.source(rater))

    def mark(self, rater: str, subject: str) -> Mark | None:  # noqa: D102
        return self.ledger.mark(subject, self.source(rater))


def apply_rows(rows: Sequence[VerdictRow], images: ImageLedger, answers: AnswerLedger) -> None:
    """Hand each new verdict row to the ledger of its subject."""
    for row in rows:
        if row.image_id is not None:
            images.apply(row)
        else:
            answers.apply(row)
