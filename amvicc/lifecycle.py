"""One run lifecycle for every stage: open or resume, share the work, progress, stop, finish.

Every stage that does work per item lives the same life, as Inspect AI's recorder does
(``log_init``, ``log_start``, ``log_sample``, ``log_finish``)::

    with RunLifecycle(store, spec, progress=options.progress, unit="req") as life:
        run = life.start()                            # open, or resume the run with this id
        feed = life.share(todo, item_key, done=...)   # claims shared with identical processes
        bar = life.progress_bar(len(todo), desc=...)  # advanced as each item is stored
        ...
        life.finish("finished", summary)

What it owns, so that no stage copies it:

- **opening**: :meth:`start` records the run (or resumes the stored one with the same id,
  settling runs whose process died as ``interrupted``) and sweeps temporary files of killed
  writers;
- **sharing**: :meth:`share` hands out a to-do list only after claiming each item in the
  workspace's lease table (or a :class:`~amvicc.store.FolderLeases` book for work outside a
  workspace), so identical commands split the work and an item is done once;
- **progress**: one tqdm bar per lifecycle, disabled under ``-q`` or when nothing is to do;
- **stopping**: inside the ``with`` block SIGTERM and SIGHUP raise
  :class:`~amvicc.errors.Terminated`; a Ctrl-C, a signal or the workspace failing marks the
  run ``interrupted``, any other error ``failed``; claims are given up at once and everything
  stored so far stays, so rerunning the same command resumes;
- **finishing**: :meth:`finish` records the status and the summary.

A lifecycle without a spec (``amvicc grade``'s LLM judge works on other stages' runs) still
shares, shows progress and stops cleanly; without a store (``amvicc scenes build``) it shares
through a folder. A stage whose whole work is one write transaction (the imports) shares it
through that transaction: it reads what is stored inside it, so an identical process adds
nothing twice, and records its run with :func:`record_whole`.
"""

from __future__ import annotations

import logging
import signal
import threading
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from amvicc.errors import Terminated, UserError, WorkspaceError
from amvicc.store import ClaimFeed, LeaseBook, RunRecord, RunSpec, RunStatus, Store

if TYPE_CHECKING:
    from tqdm import tqdm

log = logging.getLogger(__name__)

ItemT = TypeVar("ItemT")

#: Signals that stop a run the way Ctrl-C does (recorded as ``interrupted``).
STOP_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every stage's options hold besides its own work.

    Attributes:
        run_name: the run's id (default: derived from the stage, model and configuration).
        command: the command line, recorded with the run (credentials redacted).
        progress: show a progress bar.
    """

    run_name: str | None = None
    command: str | None = None
    progress: bool = True


class RunLifecycle:
    """One run from opening to its summary; see the module docstring.

    Args:
        store: the workspace (None: work outside one, e.g. a scene set; give ``book``).
        spec: the run (None: work without a run record of its own).
        scope: what the claims are about (default: ``<stage>:<config key>`` of ``spec``).
        book: where claims are kept (default: the store's lease table).
        progress: show a progress bar.
        unit: the bar's unit (``req``, ``img``).
    """

    def __init__(
        self,
        store: Store | None,
        spec: RunSpec | None = None,
        *,
        scope: str | None = None,
        book: LeaseBook | None = None,
        progress: bool = True,
        unit: str = "item",
    ) -> None:
        self.store = store
        self.spec = spec
        self.scope = scope or (f"{spec.stage}:{spec.config_key}" if spec is not None else None)
        self.book: LeaseBook | None = book or store
        self.show_progress = progress
        self.unit = unit
        self.run: RunRecord | None = None
        self.partial: Callable[[], Mapping[str, Any]] | None = None
        self._feeds: list[ClaimFeed[Any]] = []
        self._bar: tqdm[object] | None = None
        self._ended = False
        self._previous: dict[int, Any] = {}

    # log_init / log_start

    def __enter__(self) -> RunLifecycle:
        self._catch_stop_signals()
        return self

    def start(self) -> RunRecord:
        """Record the run as running, or resume the stored run with the same id.

        Raises:
            UserError: a run with this id exists with another configuration.
        """
        if self.store is None or self.spec is None:
            raise RuntimeError("a lifecycle without a store or a spec has no run to start")
        self.run = self.store.start_run(self.spec)
        self.store.sweep_temporary()
        return self.run

    @property
    def run_id(self) -> str:
        """The run's id (its spec's, before :meth:`start`)."""
        if self.spec is None:
            raise RuntimeError("this lifecycle has no run")
        return self.run.run_id if self.run is not None else self.spec.run_id

    # sharing the work

    def share(
        self,
        items: Sequence[ItemT],
        key: Callable[[ItemT], str],
        *,
        done: Callable[[Sequence[ItemT]], Collection[str]] | None = None,
        chunk: int = 8,
        scope: str | None = None,
    ) -> ClaimFeed[ItemT]:
        """The to-do list as a feed shared with identical processes.

        Args:
            items: what is still to do, in order.
            key: an item's identity within the scope.
            done: which of some items another process finished meanwhile (asked after
                claiming them, so nothing is done twice).
            chunk: how many items one claim takes at most.
            scope: the claims' scope (default: the lifecycle's).
        """
        scope = scope or self.scope
        if scope is None or self.book is None:
            raise RuntimeError("sharing needs a scope and a lease book")
        feed = ClaimFeed(self.book, scope, items, key, done=done, chunk=chunk)
        self._feeds.append(feed)
        return feed

    @property
    def elsewhere(self) -> int:
        """Items another process did, or still holds, instead of this one."""
        return sum(f.done_elsewhere + f.held_elsewhere for f in self._feeds)

    @property
    def taken(self) -> int:
        """Items this process claimed and worked on."""
        return sum(f.taken for f in self._feeds)

    def held_elsewhere(self, scope: str | None = None) -> set[str]:
        """Items another process holds now (its to finish, not this run's failures).

        Asked after this process gave its own claims up (:meth:`release`).
        """
        scope = scope or self.scope
        if self.store is None or scope is None:
            return set()
        return set(self.store.held_leases(scope))

    def release(self) -> None:
        """Give up this process's claims (done by :meth:`finish` and on any stop too)."""
        for feed in self._feeds:
            feed.close()

    # log_sample

    def progress_bar(self, total: int, *, desc: str) -> tqdm[object]:
        """The run's progress bar (disabled under ``-q`` or with nothing to do).

        Log lines are printed above it rather than through it.
        """
        from tqdm import tqdm

        self._close_bar()
        self._bar = cast(
            "tqdm[object]",
            tqdm(
                total=total,
                unit=self.unit,
                desc=desc,
                disable=not self.show_progress or not total,
                dynamic_ncols=True,
            ),
        )
        return self._bar

    def advance(self, count: int = 1) -> None:
        """One more item stored (``log_sample``)."""
        if self._bar is not None:
            self._bar.update(count)

    # log_finish

    def finish(self, status: RunStatus, summary: Mapping[str, Any] | None = None) -> None:
        """Give up the claims and record how the run ended and what it reported."""
        self.release()
        self._close_bar()
        self._ended = True
        if self.store is not None and self.spec is not None:
            self.store.finish_run(self.run_id, status, summary)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._restore_signals()
        self.release()
        self._close_bar()
        if error is None or self._ended or self.run is None or self.store is None:
            return
        stopped = isinstance(error, KeyboardInterrupt | WorkspaceError)
        status: RunStatus = "interrupted" if stopped else "failed"
        summary = {**(self.partial() if self.partial else {}), "error": str(error)}
        if not isinstance(error, UserError | KeyboardInterrupt):
            summary["error"] = f"{type(error).__name__}: {error}"
        # The workspace may be what failed: then the run reads as interrupted once this
        # process has ended (its owner is gone).
        self.store.try_finish_run(self.run.run_id, status, summary)

    # internals

    def _close_bar(self) -> None:
        """Close the bar; work another process took shrinks its total, and it says so."""
        bar = self._bar
        if bar is None:
            return
        elsewhere = self.elsewhere
        if elsewhere and bar.total and bar.n < bar.total:
            bar.total = bar.n
            bar.set_postfix_str(f"{elsewhere} by another process", refresh=False)
            bar.refresh()
        bar.close()
        self._bar = None

    def _catch_stop_signals(self) -> None:
        """SIGTERM and SIGHUP stop the run as Ctrl-C does (main thread, default handler only)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for number in STOP_SIGNALS:
            if signal.getsignal(number) is signal.SIG_DFL:
                self._previous[number] = signal.signal(number, _raise_terminated)

    def _restore_signals(self) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()


def _raise_terminated(number: int, frame: FrameType | None) -> None:
    raise Terminated(number)


def record_whole(
    store: Store, spec: RunSpec, summary: Mapping[str, Any], write: Callable[[], None]
) -> None:
    """A run whose work is written at once (an import): opened, written and finished.

    Called inside the caller's :meth:`~amvicc.store.Store.transaction`, so the run, its rows
    and its end are committed together or not at all.
    """
    with RunLifecycle(store, spec, progress=False) as life:
        life.start()
        write()
        life.finish("finished", summary)
