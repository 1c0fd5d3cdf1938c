"""The scoring app without its web page: queues, verdicts, views and statistics.

:class:`ScoringDesk` is what the Gradio handlers call, and what tests, benchmarks and notebooks
can call directly. It is safe to use from many threads at once (one per rater request): the
in-memory queues are guarded by a lock, verdicts are written by the store in their own
transactions, and every call first reads the verdicts other threads or processes added.
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.provenance import canonical_json
from amvicc.rubrics import Rubric, load_rubrics
from amvicc.score.items import AuditItem, ImageItem, load_answer_items, load_image_items
from amvicc.score.queue import (
    AdjudicationQueue,
    AnswerLedger,
    AuditQueue,
    Direction,
    ImageLedger,
    Mark,
    Progress,
    Queue,
    RatingQueue,
    Screen,
    VerdictFeed,
    apply_rows,
)
from amvicc.score.stats import Statistics, compute_statistics
from amvicc.store import Store, VerdictRecord, human_source

MAX_RATER_NAME = 40
MAX_COMMENT = 2000
RESERVATION_S = 600.0
"""How long an image shown to a rater stays reserved for them without a verdict."""
RESERVATION_SCOPE = "score:rate"


class ImageTaken(UserError):
    """The image got its raters while it was shown to this rater; their verdict is not kept.

    Attributes:
        following: the next image waiting for the rater (None: none).
    """

    def __init__(self, message: str, following: str | None) -> None:
        super().__init__(message)
        self.following = following


def normalise_rater(name: str | None) -> str:
    """A rater's name as stored: white space collapsed, printable, at most 40 characters.

    Raises:
        UserError: the name is empty, too long or holds control characters.
    """
    cleaned = " ".join((name or "").split())
    if not cleaned:
        raise UserError("type your name to start rating")
    if len(cleaned) > MAX_RATER_NAME:
        raise UserError(f"a rater name has at most {MAX_RATER_NAME} characters")
    if any(unicodedata.category(c).startswith("C") for c in cleaned):
        raise UserError("a rater name cannot hold control characters")
    return cleaned


def clean_comment(comment: str | None) -> str | None:
    """A comment as stored: stripped, None when empty.

    Raises:
        UserError: the comment is longer than 2000 characters.
    """
    text = (comment or "").strip()
    if len(text) > MAX_COMMENT:
        raise UserError(f"a comment has at most {MAX_COMMENT} characters; shorten it")
    return text or None


@dataclass(frozen=True)
class RaterVerdict:
    """One rater's verdict as an adjudicator sees it: anonymised, except for their own."""

    label: str
    value: str
    comment: str | None


@dataclass(frozen=True)
class ImageView:
    """What the rating or adjudication screen shows.

    Attributes:
        item: the image, or None when the rater's queue is done.
        rubric: the rubric of the image's category.
        mine: the rater's own latest verdict on it (the adjudication verdict when adjudicating).
        progress: how far the rater is.
        raters: the raters' verdicts (adjudication screen only).
    """

    item: ImageItem | None
    rubric: Rubric | None
    mine: Mark | None
    progress: Progress
    raters: tuple[RaterVerdict, ...] = ()


@dataclass(frozen=True)
class AnswerView:
    """What the audit screen shows: a response (None when done), the rater's verdict, progress.

    The response is an MMVP answer or a ladder reply (:data:`~amvicc.score.items.AuditItem`).
    """

    item: AuditItem | None
    mine: Mark | None
    progress: Progress


class ScoringDesk:
    """Rating, adjudication and audit queues over one workspace.

    Args:
        store: the workspace.
        catalogue: the catalogue the runs were made from.
        rubrics: the rubric per category code (default: the shipped rubrics).
        run_ids: the generation runs to rate (default: all made from ``catalogue``).
        raters_per_item: how many people rate each image.
        seed: the base of each rater's random order.
        reservation_s: how long an image shown to a rater is held for them. While held, it
            counts toward its ``raters_per_item`` and is offered to nobody else, so raters
            working at once (in one app or several on the same workspace) never give an image
            more ratings than asked for. A verdict, or the next image, ends the hold.
    """

    def __init__(
        self,
        store: Store,
        catalogue: Catalogue,
        *,
        rubrics: dict[str, Rubric] | None = None,
        run_ids: Sequence[str] | None = None,
        raters_per_item: int = 2,
        seed: int = 0,
        reservation_s: float = RESERVATION_S,
    ) -> None:
        if raters_per_item < 1:
            raise UserError("--raters-per-item must be at least 1")
        self.store = store
        self.catalogue = catalogue
        self.rubrics = rubrics if rubrics is not None else load_rubrics()
        self.run_ids = tuple(run_ids) if run_ids else None
        self.raters_per_item = raters_per_item
        self.reservation_s = reservation_s
        self._lock = threading.RLock()
        self._feed = VerdictFeed(store)
        self._image_ledger = ImageLedger(raters_per_item)
        self._answer_ledger = AnswerLedger()
        self.queues: dict[Screen, Queue] = {
            "rate": RatingQueue(self._image_ledger, seed),
            "adjudicate": AdjudicationQueue(self._image_ledger, seed),
            "audit": AuditQueue(self._answer_ledger, seed),
        }
        self._images: dict[str, ImageItem] = {}
        self._answers: dict[str, AuditItem] = {}
        self._images_marker: tuple[int, int] | None = None
        self.reload_images()
        self.reload_answers()

    # loading

    @property
    def images(self) -> tuple[ImageItem, ...]:
        """The images being rated."""
        return tuple(self._images.values())

    @property
    def answers(self) -> tuple[AuditItem, ...]:
        """The responses offered for audit (MMVP answers and ladder replies)."""
        return tuple(self._answers.values())

    def reload_images(self) -> None:
        """Pick up images stored since the desk opened (cheap when there are none)."""
        marker = self.store.images_fingerprint()
        if marker == self._images_marker:
            return
        items = load_image_items(self.store, self.catalogue, self.run_ids)
        with self._lock:
            self._poll()
            self._images = {item.image_id: item for item in items}
            self._image_ledger.set_items(self._images)
            self._images_marker = marker

    def reload_answers(self) -> None:
        """Add the responses that became undecided since the last look to the audit queue.

        Responses already offered stay (decided ones remain visible to whoever audited them).
        """
        fresh = load_answer_items(self.store, self.catalogue)
        with self._lock:
            if all(item.response_id in self._answers for item in fresh):
                return
            self._poll()
            self._answers.update((item.response_id, item) for item in fresh)
            self._answer_ledger.set_candidates(
                self._answers, (r for r, item in self._answers.items() if item.sampled)
            )

    # navigation and verdicts

    def resume(self, screen: Screen, rater: str) -> str | None:
        """Where the rater resumes: the first subject in their order still waiting for them.

        None when nothing waits for them on this screen.
        """
        with self._lock:
            self._poll()
            if screen == "rate":
                return self._reserve_next(rater, None, from_start=True)
            return self.queues[screen].resume(rater)

    def upcoming(self, screen: Screen, rater: str, current: str) -> str | None:
        """What a verdict on ``current`` would most likely show next (to fetch it early)."""
        with self._lock:
            following = self.queues[screen].next_pending(rater, current)
        return following if following != current else None

    def step(
        self, screen: Screen, rater: str, current: str | None, direction: Direction
    ) -> str | None:
        """Previous (-1) or next (+1) subject the rater may visit; ``current`` at either end."""
        with self._lock:
            self._poll()
            following = self.queues[screen].step(rater, current, direction) or current
            if screen == "rate" and following is not None:
                self._hold(rater, following)
            return following

    def decide(
        self, screen: Screen, rater: str, subject: str, value: str, comment: str | None = None
    ) -> str | None:
        """Record the rater's verdict and return the next subject waiting for them.

        The verdict is committed before this returns. Giving the same verdict and comment
        again adds nothing; any change adds a new row (earlier ones stay as history).

        Raises:
            UserError: the value does not belong to the screen (or, on the audit screen, to
                the kind of answer: an option for an MMVP answer, correct / incorrect for a
                ladder reply), the subject is unknown or the comment is too long.
        """
        queue = self.queues[screen]
        if value not in queue.values:
            raise UserError(
                f"{value!r} is not a verdict here; use one of {', '.join(queue.values)}"
            )
        rater = normalise_rater(rater)
        comment = clean_comment(comment)
        source = queue.source(rater)
        with self._lock:
            self._poll()
            record = self._record(screen, source, subject, value, comment)
            mine = (
                self._answer_ledger.mark(subject, source)
                if screen == "audit"
                else self._image_ledger.mark(subject, source)
            )
        if mine is None or (mine.value, mine.comment) != (value, comment):
            if screen != "rate":
                self.store.add_verdicts([record], skip_unchanged=False)
            elif not self.store.add_rating(
                RESERVATION_SCOPE, record, raters_per_item=self.raters_per_item
            ):
                with self._lock:
                    self._poll()
                    following = self._reserve_next(rater, subject)
                raise ImageTaken(
                    f"this image got its {self.raters_per_item} raters while it was shown to "
                    "you, so your verdict was not kept; here is the next one",
                    following,
                )
        with self._lock:
            self._poll()
            if screen == "rate":
                return self._reserve_next(rater, subject)
            return queue.next_pending(rater, subject)

    # what the screens show

    def image_view(self, screen: Screen, rater: str, image_id: str | None) -> ImageView:
        """The rating or adjudication screen for one image (or the end of the queue)."""
        queue = self.queues[screen]
        with self._lock:
            self._poll()
            progress = queue.progress(rater)
            item = self._images.get(image_id) if image_id else None
            if item is None:
                return ImageView(None, None, None, progress)
            raters: tuple[RaterVerdict, ...] = ()
            if screen == "adjudicate":
                me = human_source(rater)
                raters = tuple(
                    RaterVerdict(
                        f"Rater {number}" + (" (you)" if source == me else ""),
                        mark.value,
                        mark.comment,
                    )
                    for number, (source, mark) in enumerate(
                        self._image_ledger.rater_marks(item.image_id).items(), start=1
                    )
                )
            return ImageView(
                item,
                self.rubrics[item.category.code],
                queue.mark(rater, item.image_id),
                progress,
                raters,
            )

    def answer_view(self, rater: str, response_id: str | None) -> AnswerView:
        """The audit screen for one response (or the end of the queue)."""
        queue = self.queues["audit"]
        with self._lock:
            self._poll()
            item = self._answers.get(response_id) if response_id else None
            mine = queue.mark(rater, item.response_id) if item else None
            return AnswerView(item, mine, queue.progress(rater))

    def image_path(self, subject: str) -> str | None:
        """The workspace-relative image file of a rated image or an audited answer."""
        with self._lock:
            image = self._images.get(subject)
            if image is not None:
                return image.path
            answer = self._answers.get(subject)
            return answer.image_path if answer is not None else None

    def statistics(self) -> Statistics:
        """Agreement per category and per-rater counts over the images being rated."""
        with self._lock:
            self._poll()
            return compute_statistics(tuple(self._images.values()), self._image_ledger)

    # reservations: an image shown to a rater is held for them (rating screen only)

    def _others_holding(self, source: str, image_id: str, held: dict[str, list[str]]) -> int:
        """Raters other than ``source`` holding the image who have not rated it yet."""
        return sum(
            1
            for holder in held.get(image_id, ())
            if holder != source and not self._image_ledger.rated(holder, image_id)
        )

    def _room(self, source: str, image_id: str, held: dict[str, list[str]]) -> bool:
        raters = len(self._image_ledger.rater_marks(image_id))
        return raters + self._others_holding(source, image_id, held) < self.raters_per_item

    def _reserve_next(
        self, rater: str, current: str | None, *, from_start: bool = False
    ) -> str | None:
        """The next image waiting for the rater that can be held for them, now held.

        Images already held by enough other raters are passed over; the store decides in one
        transaction, so two apps on one workspace never over-fill an image either. Called with
        the desk's lock held.
        """
        queue = self.queues["rate"]
        source = queue.source(rater)
        held = self.store.held_leases(RESERVATION_SCOPE)
        full: set[str] = set()
        order = queue.order(rater)
        start = 0 if from_start or current is None else order.position.get(current, -1) + 1
        while True:

            def wanted(subject: str, held: dict[str, list[str]] = held) -> bool:
                return (
                    subject not in full
                    and queue.pending(rater, subject)
                    and self._room(source, subject, held)
                )

            candidate = order.first(wanted, start)
            if candidate is None:
                self.store.release_leases(RESERVATION_SCOPE, source)
                return None
            if self.store.hold_for_rating(
                RESERVATION_SCOPE,
                candidate,
                source,
                ttl=self.reservation_s,
                raters_per_item=self.raters_per_item,
            ):
                return candidate
            full.add(candidate)  # another app took it meanwhile
            held = self.store.held_leases(RESERVATION_SCOPE)

    def _hold(self, rater: str, image_id: str) -> None:
        """Hold an image the rater walked to, if it still needs raters and has room."""
        source = self.queues["rate"].source(rater)
        if self._image_ledger.rated(source, image_id) or not self._image_ledger.is_open(image_id):
            return
        self.store.hold_for_rating(
            RESERVATION_SCOPE,
            image_id,
            source,
            ttl=self.reservation_s,
            raters_per_item=self.raters_per_item,
        )

    # internals

    def _poll(self) -> None:
        apply_rows(self._feed.poll(), self._image_ledger, self._answer_ledger)

    def _record(
        self, screen: Screen, source: str, subject: str, value: str, comment: str | None
    ) -> VerdictRecord:
        detail = canonical_json({"screen": screen})
        if screen == "audit":
            answer = self._answers.get(subject)
            if answer is None:
                raise UserError("that answer is not in the audit queue; reload the page")
            if value not in answer.values:
                raise UserError(
                    f"{value!r} is not a verdict on this answer; use one of "
                    f"{', '.join(answer.values)}"
                )
            return VerdictRecord(
                source, value, response_id=subject, comment=comment, detail_json=detail
            )
        item = self._images.get(subject)
        if item is None:
            raise UserError("that image is not in the scoring queue; reload the page")
        return VerdictRecord(
            source,
            value,
            image_id=subject,
            rubric_version=self.rubrics[item.category.code].version_id,
            comment=comment,
            detail_json=detail,
        )
