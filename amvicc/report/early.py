"""The report's longest reads, started before anything else: every image slot and verdict.

On a big workspace reading every image verdict (:meth:`~amvicc.store.Store.image_verdict_codes`)
and every image slot (:meth:`~amvicc.store.Store.current_image_slots`) takes longer than
Python takes to import pandas and the report's modules, and needs none of them: two forked
children start them first thing, and the three processes run side by side. This module
imports no pandas, so that the children are forked before pandas is imported. Once it is, a
third child reads what the first process's sections need from the workspace
(:data:`READ_AHEAD`) while the items are decided.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import Any, TypeVar

from amvicc.report.parallel import Beside, beside, second_process_pays
from amvicc.report.stats import import_distributions
from amvicc.store import ImageSlots, ImageVerdictCodes, Store

log = logging.getLogger(__name__)
T = TypeVar("T")

# Workspace reads that do not depend on a part's models: made once for both parts of a
# report (:meth:`~amvicc.report.section.Part.shared_read`), by name. On a big workspace a
# child makes those in :data:`READ_AHEAD` while the items are laid out.
SHARED_READS: dict[str, Callable[[Store], Any]] = {
    "usage_frame": lambda store: store.usage_frame(),
    "rubric_versions": lambda store: store.rubric_versions(),
    "image_seed_ranges": lambda store: store.image_seed_ranges(),
    "image_paths": lambda store: store.stored_image_paths(),
}
# The first process's own (the image paths are the explorer's, in the sections' second
# process, and not every format needs them).
READ_AHEAD = ("usage_frame", "rubric_versions", "image_seed_ranges")


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
        children: ExitStack | None = None,
    ) -> None:
        self._store = store
        self._slots = slots
        self._verdicts = verdicts
        self._children = children
        self._ahead: Beside[dict[str, Any]] | None = None
        self._process = os.getpid()
        self.waited = 0.0

    def read_ahead(self) -> None:
        """Start the :data:`READ_AHEAD` reads in a child, where the early reads run in children.

        Called once pandas is imported (the child has it then). The reads are wanted only when
        the sections compute, so the child runs at the lowest priority: the verdicts' child,
        wanted first, goes before it.
        """
        if self._children is None or self._ahead is not None:
            return

        def read(store: Store) -> dict[str, Any]:
            return {name: SHARED_READS[name](store) for name in READ_AHEAD}

        self._ahead = self._children.enter_context(beside(_mapped(self._store, read), nice=19))

    def read_before(self) -> dict[str, Any]:
        """The reads :meth:`read_ahead` started, by name, once ({} after that).

        {} also when none were started, the child died, or this is another process (the
        sections' second one): the read-ahead's result is its parent's to take.
        """
        if self._ahead is None or os.getpid() != self._process:
            return {}
        done, found = self._ahead.result()
        self.waited += self._ahead.waited
        self._ahead = None
        if not done or found is None:
            log.warning("the report's second process failed; reading the workspace here")
            return {}
        return found

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
    # Three processes on two cores: the verdicts are wanted last, so their child yields (it
    # starts first: it reads longest).
    with ExitStack() as children:
        verdicts = children.enter_context(
            beside(_mapped(store, lambda s: s.image_verdict_codes()), nice=8)
        )
        slots = children.enter_context(beside(_mapped(store, lambda s: s.current_image_slots())))
        yield EarlyReads(store, slots, verdicts, children)


def _mapped(store: Store, read: Callable[[Store], T]) -> Callable[[], T]:
    """``read(store)`` for a child, the store read through a memory map.

    See :meth:`~amvicc.store.Store.map_pages`: a child that dies of it costs only time.
    """

    def in_child() -> T:
        store.map_pages()
        return read(store)

    return in_child
