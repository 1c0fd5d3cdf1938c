"""A to-do list shared with other processes: take items only after claiming them.

Two identical commands of any stage on one workspace read the same to-do list. Each takes its
next items from a :class:`ClaimFeed`, which claims them in a lease book first (the store's
:meth:`amvicc.store.Store.claim`, one transaction; or :class:`amvicc.store.FolderLeases` for
work outside a workspace) and then checks again that they are still not done, so each item is
made once, by whichever process claimed it, and the processes share the work. A background
thread renews the claims while the process lives; :meth:`ClaimFeed.close` gives them up. Claims
of a killed process return by themselves (at once on this machine, after their time to live
elsewhere). Stages reach it through :class:`amvicc.lifecycle.RunLifecycle`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Collection, Sequence
from contextlib import suppress
from typing import Generic, Protocol, TypeVar

from amvicc.errors import WorkspaceError
from amvicc.store.owners import this_process

log = logging.getLogger(__name__)

ItemT = TypeVar("ItemT")

CLAIM_TTL_S = 120.0
"""How long a claim lives without renewal; the holder renews it every third of that."""
_WINDOW = 256


class LeaseBook(Protocol):
    """Where claims are kept: the workspace's lease table, or a folder of lease files."""

    def claim(
        self,
        scope: str,
        items: Sequence[str],
        holder: str,
        *,
        ttl: float,
        limit: int | None = None,
    ) -> list[str]:
        """Take leases on up to ``limit`` free ``items``; returns those now held."""

    def renew_leases(self, scope: str, holder: str, *, ttl: float) -> int:
        """Push back the expiry of ``holder``'s leases in ``scope``."""

    def release_leases(self, scope: str, holder: str, items: Sequence[str] | None = None) -> None:
        """Give up ``holder``'s leases in ``scope``."""


class ClaimFeed(Generic[ItemT]):
    """Hands out items of a to-do list once this process holds a claim on them.

    Thread-safe: several workers (threads, or coroutines of one loop) may take from it.

    Args:
        book: where the claims are kept (the workspace's :class:`~amvicc.store.Store`).
        scope: what the items are (e.g. ``generate:<config key>``): claims are per scope.
        items: the to-do list, in the order it should be worked through.
        key: an item's identity within the scope (its slot).
        done: which of these items are done by now (asked after claiming, so an item another
            process finished meanwhile is not made again); None: nothing is ever done early.
        chunk: how many items one claim takes at most (one transaction).
        ttl: seconds a claim lives without renewal.
        holder: who claims (default: this process, ``host:pid:start``).
    """

    def __init__(
        self,
        book: LeaseBook,
        scope: str,
        items: Sequence[ItemT],
        key: Callable[[ItemT], str],
        *,
        done: Callable[[Sequence[ItemT]], Collection[str]] | None = None,
        chunk: int = 8,
        ttl: float = CLAIM_TTL_S,
        holder: str | None = None,
    ) -> None:
        self.book = book
        self.scope = scope
        self.key = key
        self.done = done
        self.chunk = max(1, chunk)
        self.ttl = ttl
        self.holder = holder or this_process()
        self._pending: deque[ItemT] = deque(items)
        self._deferred: list[ItemT] = []
        self._ready: deque[ItemT] = deque()
        self._retried = False
        self._lock = threading.Lock()
        self.taken = 0
        self.done_elsewhere = 0
        self.held_elsewhere = 0
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    # taking items

    def take(self, count: int) -> list[ItemT]:
        """Up to ``count`` items claimed by this process and not done yet (empty: no more)."""
        out: list[ItemT] = []
        while len(out) < count:
            item = self.take_one()
            if item is None:
                break
            out.append(item)
        return out

    def take_one(self) -> ItemT | None:
        """The next item this process holds and should make, or None when nothing is left."""
        with self._lock:
            while not self._ready:
                if not self._refill():
                    return None
            self.taken += 1
            return self._ready.popleft()

    def _refill(self) -> bool:
        """Claim the next chunk; False when the list (and one retry of others' items) is done."""
        if not self._pending:
            if self._retried or not self._deferred:
                self.held_elsewhere = len(self._deferred)
                return False
            # Items another process held: taken now if it died or gave them up undone.
            self._retried = True
            self._pending.extend(self._deferred)
            self._deferred.clear()
        window = [self._pending.popleft() for _ in range(min(_WINDOW, len(self._pending)))]
        claimed = set(
            self.book.claim(
                self.scope, [self.key(i) for i in window], self.holder, ttl=self.ttl,
                limit=self.chunk,
            )
        )  # fmt: skip
        self._start_renewing()
        positions = [p for p, item in enumerate(window) if self.key(item) in claimed]
        # The store takes candidates in order until the chunk is full: those before the last
        # one taken that it did not take are held by another process; those after it were not
        # tried yet and go back to the front of the list.
        stop = positions[-1] if len(positions) >= self.chunk else len(window) - 1
        mine = [window[p] for p in positions]
        self._deferred.extend(i for i in window[: stop + 1] if self.key(i) not in claimed)
        self._pending.extendleft(reversed(window[stop + 1 :]))
        if mine and self.done is not None:
            finished = set(self.done(mine))
            fresh = [i for i in mine if self.key(i) not in finished]
            self.done_elsewhere += len(mine) - len(fresh)
            mine = fresh
        self._ready.extend(mine)
        return True

    # keeping and giving up the claims

    def _start_renewing(self) -> None:
        if self._renewer is not None:
            return
        self._renewer = threading.Thread(target=self._renew, name="amvicc-claims", daemon=True)
        self._renewer.start()

    def _renew(self) -> None:
        while not self._stop.wait(self.ttl / 3):
            try:
                self.book.renew_leases(self.scope, self.holder, ttl=self.ttl)
            except WorkspaceError as err:  # the run itself meets the same error and says so
                log.debug("could not renew the claims of %s: %s", self.scope, err)

    def close(self) -> None:
        """Stop renewing and give up every claim (best effort: they expire anyway)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        with suppress(WorkspaceError):
            self.book.release_leases(self.scope, self.holder)

    def __enter__(self) -> ClaimFeed[ItemT]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
