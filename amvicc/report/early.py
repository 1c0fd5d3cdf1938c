"""The report's longest reads, started before anything else: every image slot and verdict.

On a big workspace reading every image verdict (:meth:`~amvicc.store.Store.image_verdict_codes`)
and every image slot (:meth:`~amvicc.store.Store.current_image_slots`) takes longer than
Python takes to import pandas and the report's modules, and needs none of them: two forked
children start them first thing, and the three processes run side by side. This module
imports no pandas, so that the children are forked before pandas is imported.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from amvicc.report.parallel import Beside, beside, second_process_pays
from amvicc.report.stats import import_distributions
from amvicc.store import ImageSlots, ImageVerdictCodes, Store

log = logging.getLogger(__name__)
T = TypeVar("T")


class EarlyReads:
    """Every image slot and every image's latest verdicts, read by early children or here.

    Attributes:
        waited: the seconds spent waiting for the children (0 when read here).
    """

    def __init__(
        self,
        store: Store,
        slots: Beside[ImageSlots] | None = None,
        verdicts: Beside[ImageVerdictCodes] | None = None,
    ) -> None:
        self._store = store
        self._slots = slots
        self._verdicts = verdicts
        self.waited = 0.0

    def image_slots(self, config_keys: Sequence[str]) -> ImageSlots:
        """The current image of each slot of these configurations.

        Raises:
            WorkspaceError: the database cannot be read.
        """
        if self._slots is None:
            return self._store.current_image_slots(config_keys)
        every = self._received(self._slots, "image slots", self._store.current_image_slots)
        self._slots = None
        return every.of(config_keys)

    def verdict_codes(self) -> ImageVerdictCodes:
        """Each source's latest verdict on every image, as codes (asked for once).

        Raises:
            WorkspaceError: the database cannot be read.
        """
        if self._verdicts is None:
            return self._store.image_verdict_codes()
        # Before the wait: the sections' second process, forked later, then has it imported.
        import_distributions()
        codes = self._received(self._verdicts, "verdicts", self._store.image_verdict_codes)
        self._verdicts = None
        return codes

    def _received(self, running: Beside[T], what: str, read: Callable[[], T]) -> T:
        """The child's result; a child that died or sent nothing usable costs only time."""
        done, found = running.result()
        self.waited += running.waited
        if done and found is not None:
            return found
        log.warning("the report's second process failed; reading the %s here", what)
        return read()


@contextmanager
def early_reads(store: Store, processes: int | None) -> Iterator[EarlyReads]:
    """Start reading every image slot and verdict in two children, when a second process pays.

    See :func:`~amvicc.report.parallel.second_process_pays`. The block gets the reads; a child
    whose result the block never asked for is stopped when the block ends.
    """
    if not second_process_pays(processes, store.image_rows_written()):
        yield EarlyReads(store)
        return
    # Three processes on two cores: the verdicts are wanted last, so their child yields.
    with (
        beside(store.image_verdict_codes, nice=8) as verdicts,
        beside(store.current_image_slots) as slots,
    ):
        yield EarlyReads(store, slots, verdicts)
