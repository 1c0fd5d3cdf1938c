"""Leases: work a process (or a rater) holds for a while, so that others leave it alone.

Concurrent ``amvicc generate`` or ``amvicc answer`` processes with the same configuration claim
the slots they are about to make before making them (:meth:`Leases.claim`), so together they
make each slot once; the scoring app reserves an image for the rater it is shown to
(:meth:`Leases.reserve`), so an image gets no more raters than asked for. Every lease expires:
one whose holder was killed returns by itself, at once when the holder was a process of this
machine that has certainly ended (:func:`amvicc.store.owners.is_dead`), else after its time to
live. Holders renew their leases while they work.

A lease is a row ``(scope, item, holder, expires_at)``: ``scope`` names the kind of work and
its configuration (``generate:<config key>``), ``item`` the slot or image, ``holder`` a process
id or a rater's verdict source. Times are seconds since the epoch.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from amvicc.store.database import Database
from amvicc.store.owners import is_dead

# Ids per statement: under SQLite's oldest limit on bound parameters (999).
_CHUNK = 400


class Leases(Database):
    """The lease table's operations (mixed into :class:`amvicc.store.Store`)."""

    def claim(
        self,
        scope: str,
        items: Sequence[str],
        holder: str,
        *,
        ttl: float,
        limit: int | None = None,
    ) -> list[str]:
        """Take leases on up to ``limit`` of ``items`` that nobody else holds, in their order.

        Items ``holder`` already holds are renewed and count as taken. Leases of others that
        expired, or whose holder is a dead process of this machine, are removed first. One
        transaction: two processes claiming at once never take the same item.

        Args:
            scope: the kind of work and its configuration.
            items: candidate items, in the order they should be taken.
            holder: who takes them (see :mod:`amvicc.store.owners`).
            ttl: seconds until the leases expire unless renewed.
            limit: take at most this many (None: all that are free).

        Returns:
            The items now held by ``holder``, in the order of ``items``.
        """
        now = time.time()
        taken: list[str] = []
        with self.transaction() as conn:
            held = self._live_holders(scope, now)
            for item in items:
                if limit is not None and len(taken) >= limit:
                    break
                if any(h != holder for h in held.get(item, ())):
                    continue
                taken.append(item)
            conn.executemany(
                "INSERT INTO leases (scope, item, holder, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, item, holder) DO UPDATE SET expires_at = excluded.expires_at",
                [(scope, item, holder, now + ttl) for item in taken],
            )
        return taken

    def reserve(
        self,
        scope: str,
        item: str,
        holder: str,
        *,
        ttl: float,
        capacity: int,
        exclusive: bool = True,
    ) -> bool:
        """Hold ``item`` for ``holder`` if fewer than ``capacity`` others hold it.

        Args:
            scope: the kind of work (e.g. the scoring app's rating screen).
            item: what is held (an image id).
            holder: who holds it (a rater's verdict source).
            ttl: seconds until the reservation expires.
            capacity: how many holders ``item`` may have at once: the reservation is
                refused when ``capacity`` others already hold it.
            exclusive: drop the holder's other reservations in ``scope`` (one item at a time).

        Returns:
            Whether ``holder`` now holds ``item``.
        """
        now = time.time()
        with self.transaction() as conn:
            held = self._live_holders(scope, now, items=[item])
            others = [h for h in held.get(item, ()) if h != holder]
            if len(others) >= capacity:
                return False
            if exclusive:
                conn.execute(
                    "DELETE FROM leases WHERE scope = ? AND holder = ? AND item <> ?",
                    (scope, holder, item),
                )
            conn.execute(
                "INSERT INTO leases (scope, item, holder, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, item, holder) DO UPDATE SET expires_at = excluded.expires_at",
                (scope, item, holder, now + ttl),
            )
        return True

    def held_leases(self, scope: str) -> dict[str, list[str]]:
        """The live leases of a scope: holders by item (expired ones left out)."""
        now = time.time()
        rows = self.connection().execute(
            "SELECT item, holder FROM leases WHERE scope = ? AND expires_at > ?", (scope, now)
        )
        found: dict[str, list[str]] = defaultdict(list)
        for item, holder in rows:
            found[item].append(holder)
        return dict(found)

    def renew_leases(self, scope: str, holder: str, *, ttl: float) -> int:
        """Push back the expiry of every lease ``holder`` has in ``scope``; returns how many."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "UPDATE leases SET expires_at = ? WHERE scope = ? AND holder = ?",
                (time.time() + ttl, scope, holder),
            )
        return int(cursor.rowcount)

    def release_leases(self, scope: str, holder: str, items: Sequence[str] | None = None) -> None:
        """Give up ``holder``'s leases in ``scope`` (only on ``items`` when given)."""
        with self.transaction() as conn:
            if items is None:
                conn.execute("DELETE FROM leases WHERE scope = ? AND holder = ?", (scope, holder))
                return
            for start in range(0, len(items), _CHUNK):
                chunk = list(items[start : start + _CHUNK])
                conn.execute(
                    "DELETE FROM leases WHERE scope = ? AND holder = ? "
                    f"AND item IN ({','.join('?' * len(chunk))})",
                    (scope, holder, *chunk),
                )

    def _live_holders(
        self, scope: str, now: float, items: Sequence[str] | None = None
    ) -> dict[str, list[str]]:
        """Inside a transaction: drop the scope's dead leases, return the live ones by item."""
        conn = self.connection()
        conn.execute("DELETE FROM leases WHERE scope = ? AND expires_at <= ?", (scope, now))
        if items is None:
            rows = conn.execute("SELECT item, holder FROM leases WHERE scope = ?", (scope,))
        else:
            rows = conn.execute(
                f"SELECT item, holder FROM leases WHERE scope = ? "
                f"AND item IN ({','.join('?' * len(items))})",
                (scope, *items),
            )
        held: dict[str, list[str]] = defaultdict(list)
        gone: dict[str, bool] = {}
        for item, holder in rows.fetchall():
            if holder not in gone:
                gone[holder] = is_dead(holder)
            if not gone[holder]:
                held[item].append(holder)
        for holder in (h for h, dead in gone.items() if dead):
            conn.execute("DELETE FROM leases WHERE scope = ? AND holder = ?", (scope, holder))
        return held


class FolderLeases:
    """Leases kept as files in a folder, for shared work that has no workspace.

    ``amvicc scenes build`` writes a scene set, not a workspace; two identical builds into one
    folder still split its images through a :class:`~amvicc.store.ClaimFeed` over this book.
    A lease is the file ``<folder>/<scope digest>/<item>`` holding its holder and expiry; every
    operation runs under an exclusive ``flock`` of the scope's folder, so two processes never
    take the same item, and the same expiry and dead-holder rules as the store's apply.

    Args:
        folder: where the lease files go (created when missing).
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def claim(
        self,
        scope: str,
        items: Sequence[str],
        holder: str,
        *,
        ttl: float,
        limit: int | None = None,
    ) -> list[str]:
        """Take leases on up to ``limit`` of ``items`` nobody else holds (see :meth:`Leases.claim`)."""
        now = time.time()
        taken: list[str] = []
        with self._locked(scope) as place:
            for item in items:
                if limit is not None and len(taken) >= limit:
                    break
                lease = place / _file_name(item)
                other = _holder_of(lease, now)
                if other is not None and other != holder:
                    continue
                lease.write_text(f"{holder}\n{now + ttl}\n", encoding="utf-8")
                taken.append(item)
        return taken

    def renew_leases(self, scope: str, holder: str, *, ttl: float) -> int:
        """Push back the expiry of every lease ``holder`` has in ``scope``; returns how many."""
        renewed = 0
        with self._locked(scope) as place:
            for lease in place.iterdir():
                if lease.name != _LOCK and _holder_of(lease, time.time()) == holder:
                    lease.write_text(f"{holder}\n{time.time() + ttl}\n", encoding="utf-8")
                    renewed += 1
        return renewed

    def release_leases(self, scope: str, holder: str, items: Sequence[str] | None = None) -> None:
        """Give up ``holder``'s leases in ``scope`` (only on ``items`` when given)."""
        names = None if items is None else {_file_name(item) for item in items}
        with self._locked(scope) as place:
            for lease in place.iterdir():
                if lease.name == _LOCK or (names is not None and lease.name not in names):
                    continue
                if _holder_of(lease, time.time()) in (holder, None):
                    lease.unlink(missing_ok=True)

    @contextmanager
    def _locked(self, scope: str) -> Iterator[Path]:
        import fcntl

        place = self.folder / hashlib.sha256(scope.encode()).hexdigest()[:16]
        place.mkdir(parents=True, exist_ok=True)
        with open(place / _LOCK, "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield place
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


_LOCK = ".lock"


def _file_name(item: str) -> str:
    """A lease file's name: the item's digest (items may hold any characters)."""
    return hashlib.sha256(item.encode()).hexdigest()[:32]


def _holder_of(lease: Path, now: float) -> str | None:
    """Who holds a lease file now: None when there is none, it expired or its holder died."""
    try:
        holder, _, expires = lease.read_text(encoding="utf-8").partition("\n")
        live = float(expires.strip() or 0) > now
    except (OSError, ValueError):
        return None
    return holder if live and not is_dead(holder) else None
