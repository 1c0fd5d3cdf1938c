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

import time
from collections import defaultdict
from collections.abc import Sequence

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
