"""A second process for a big report: the work split in two halves that run side by side.

A report spends its time in Python and pandas, which one process runs on one core. On a
workspace of hundreds of thousands of verdicts the work is split where it falls in two
independent halves, each half in its own process (:func:`beside` forks the child):

- reading: two children read every image slot and every image verdict, as integer codes,
  while the parent imports pandas and lays out the items, and a third the other workspace
  reads the parent's sections need (:mod:`amvicc.report.early`);
- sections: once the items are decided, a child computes and renders the sections marked
  :attr:`~amvicc.report.section.Section.apart`, for both parts, while the parent computes
  and renders the rest, then takes over those the child has not started
  (:func:`sections_apart`, :class:`Claims`).

The child sends its result back pickled through a pipe. Both processes start from the same
memory, so the numbers are the ones one process gives, byte for byte. Forking is used only
where it is safe and pays: on Linux, with two cores or more, and a big workspace (see
:func:`second_process_pays`). A child that dies or sends what cannot be read costs only time:
the parent then does its work itself. A user's error in the child (a file it cannot read) is
raised in the parent as it would have been there.
"""

from __future__ import annotations

import logging
import mmap
import os
import pickle
import signal
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Generic, TypeVar

if TYPE_CHECKING:
    from amvicc.report.section import Clock, Part

log = logging.getLogger(__name__)
T = TypeVar("T")

# Rows (items, images) below which a second process gains less than forking and pickling cost.
MIN_ROWS = 20_000


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - Linux has sched_getaffinity


def second_process_pays(processes: int | None, rows: int) -> bool:
    """Whether to split work of this size between two processes.

    Args:
        processes: ``1`` never, ``2`` whenever forking is possible, None: when it pays (at
            least :data:`MIN_ROWS` rows of items or images, two cores and half of one idle
            (:func:`idle_cores`): on a machine already busy the halves only take turns, and
            the pickling is lost time).
        rows: how big the work is.
    """
    if processes == 1 or not sys.platform.startswith("linux"):
        # Elsewhere fork is missing or unsafe (macOS system frameworks after fork).
        return False
    if processes is not None:
        return True
    return rows >= MIN_ROWS and usable_cores() >= 2 and idle_cores() >= 0.5


def idle_cores() -> float:
    """Usable cores less the other processes running or waiting to run at this moment."""
    return usable_cores() - busy_elsewhere()


def busy_elsewhere() -> float:
    """How many other tasks keep the cores busy: the smaller of two counts that err apart.

    - The tasks running or waiting to run at this moment (``/proc/loadavg``'s count, this
      one out) count a shell pipeline's other commands, which are runnable for the instant
      they start (``amvicc report | less``): alone, they kept a report in one process.
    - The last minute's load average lags: a report run just after another (a benchmark's
      next run, a user's second format) read the previous report's two processes as a busy
      machine.

    A machine that is really busy is busy by both. Without ``/proc``: the load average.
    """
    load = os.getloadavg()[0]
    try:
        running = int(Path("/proc/loadavg").read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return load
    return min(max(running - 1, 0), load)


class Beside(Generic[T]):
    """What a task run in a forked child gave: :meth:`result` waits for it."""

    def __init__(self, pid: int, pipe: BinaryIO | None) -> None:
        self._pid = pid
        self._pipe = pipe
        self.waited = 0.0

    def result(self) -> tuple[bool, T | None]:
        """(True, the task's value), or (False, None) when the child died or sent nothing usable.

        Raises:
            UserError: the task raised one (raised here, as it would have been in this process).
        """
        if self._pipe is None:
            return False, None
        start = time.perf_counter()
        try:
            message = _received(self._pipe)
        finally:
            self._pipe.close()
            self._pipe = None
            os.waitpid(self._pid, 0)
            self.waited = time.perf_counter() - start
        if message is None:
            return False, None
        kind, payload = message
        if kind == "error":
            raise payload
        value: T = payload
        return True, value

    def stop(self) -> None:
        """Kill the child if it still runs (this process failed: its result is not wanted)."""
        if self._pipe is None:
            return
        with suppress(ProcessLookupError):
            os.kill(self._pid, signal.SIGKILL)
        self._pipe.close()
        self._pipe = None
        os.waitpid(self._pid, 0)


@contextmanager
def beside(task: Callable[[], T], *, nice: int = 0) -> Iterator[Beside[T]]:
    """Run ``task`` in a forked child while the block runs; the block reads its result.

    The child starts from this process's memory (its reads and imports included), sends what
    the task returned, pickled through a pipe, and leaves without exit handlers. When the
    block raises, or ends without reading the result, the child is stopped. ``nice``: how
    much lower the child's priority is (``os.nice``), for a child whose result is wanted
    last: where the processes outnumber the cores, the others go first.
    """
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(reader)
        if nice:
            with suppress(OSError):
                os.nice(nice)
        _child(writer, task)
    os.close(writer)
    running = Beside[T](pid, os.fdopen(reader, "rb"))
    try:
        yield running
    finally:
        running.stop()


class Claims:
    """Who computes each section of a list, for two processes sharing it as they go.

    The child takes sections from the front, the parent from the back once its own are done,
    so that neither waits for the other while work is left: the split of the work follows
    the moment's speed of each. The board is an anonymous file (``memfd``) both processes
    map; a claim is made under its ``lockf`` lock, which the kernel releases if the holder
    dies.
    """

    CHILD, PARENT = 1, 2

    def __init__(self, count: int) -> None:
        """A board of ``count`` unclaimed sections, shared with children forked after.

        Raises:
            OSError: no anonymous file can be made here (then the child takes every section).
        """
        self._fd = os.memfd_create("amvicc-claims")
        try:
            os.ftruncate(self._fd, max(count, 1))
            self._board = mmap.mmap(self._fd, max(count, 1))
        except OSError:
            os.close(self._fd)
            raise

    def claim(self, position: int, who: int) -> bool:
        """Take section ``position`` for ``who`` (False: the other process has it)."""
        import fcntl  # Unix only: a report forks on Linux only, and imports this module anywhere

        fcntl.lockf(self._fd, fcntl.LOCK_EX)
        try:
            if self._board[position]:
                return False
            self._board[position] = who
            return True
        finally:
            fcntl.lockf(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Release the board."""
        self._board.close()
        os.close(self._fd)


@contextmanager
def sections_apart(
    work: Sequence[tuple[int, str]],
    parts: Sequence[Part],
    clock: Clock,
    prerender: Callable[[Part, str], None] | None = None,
) -> Iterator[Callable[[], None]]:
    """Compute sections in a forked child while the block runs.

    Args:
        work: (index of the part in ``parts``, section key), in the order to compute them.
        parts: the report's parts.
        clock: where the child's seconds are added.
        prerender: renders a computed section for the report's format into its part's
            ``rendered``; the child renders what it computed, so that the two processes
            share the rendering too.

    The block gets a function to call once its own work is done: it computes here, from the
    back of ``work``, the sections the child has not started (:class:`Claims`). When the
    block ends, the child's data (and renderings) are in the parts, as if computed there,
    and its seconds are added to ``clock``, with ``apart.wait``: how long this process then
    waited for the child (``-v`` also says how many sections it took over). A child that
    failed costs only time: its sections are then computed here. Without work nothing is
    forked.

    Raises:
        UserError: the child hit one (re-raised here, as the parent would have).
    """
    if not work:
        yield lambda: None
        return
    try:
        claims: Claims | None = Claims(len(work))
    except (OSError, AttributeError):  # no memfd (a sandbox, not Linux): the child takes all
        claims = None

    def claimed(position: int, who: int) -> bool:
        return claims.claim(position, who) if claims is not None else who == Claims.CHILD

    def compute() -> tuple[dict[tuple[int, str], Any], dict[str, float]]:
        before = dict(clock.seconds)
        data: dict[tuple[int, str], tuple[Any, dict[tuple[str, str], Any]]] = {}
        for position, (index, key) in enumerate(work):
            if not claimed(position, Claims.CHILD):
                break  # the parent took the rest
            data[index, key] = (parts[index][key], _rendered(parts[index], key, prerender))
        return data, {n: s - before.get(n, 0.0) for n, s in clock.seconds.items()}

    taken_here = 0

    def take_over() -> None:
        nonlocal taken_here
        for position in reversed(range(len(work))):
            if not claimed(position, Claims.PARENT):
                return
            index, key = work[position]
            parts[index][key]
            _rendered(parts[index], key, prerender)
            taken_here += 1

    try:
        with beside(compute) as child:
            yield take_over
            done, result = child.result()
    finally:
        if claims is not None:
            claims.close()
    clock.seconds["apart.wait"] = child.waited
    log.debug("apart: %d of %d sections taken over here", taken_here, len(work))
    if not done or result is None:
        log.warning("the report's second process failed; computing its sections here")
        for index, key in work:
            parts[index][key]
        return
    data, seconds = result
    for (index, key), (value, rendered) in data.items():
        parts[index].adopt(key, value)
        parts[index].rendered.update(rendered)
    for name, spent in seconds.items():
        clock.seconds[name] = clock.seconds.get(name, 0.0) + spent


def _rendered(
    part: Part, key: str, prerender: Callable[[Part, str], None] | None
) -> dict[tuple[str, str], Any]:
    """Section ``key`` of ``part`` rendered for the output (nothing without ``prerender``)."""
    if prerender is None:
        return {}
    prerender(part, key)
    return {k: v for k, v in part.rendered.items() if k[1] == key}


def _received(pipe: BinaryIO) -> tuple[str, Any] | None:
    """What the child sent; None when it sent nothing readable (it died, or could not pickle)."""
    try:
        result = pickle.load(pipe)
    except Exception:  # any unreadable message means: compute here instead
        return None
    if not isinstance(result, tuple) or len(result) != 2 or result[0] not in ("ok", "error"):
        return None
    return result


def _child(writer: int, task: Callable[[], Any]) -> None:  # pragma: no cover - forked child
    """Run, send, and leave at once: no exit handlers, no buffers of the parent flushed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the child on Ctrl-C
    status = 0
    try:
        try:
            message = pickle.dumps(("ok", task()), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # the parent raises it, or does the work itself
            message = _error_message(err)
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(message)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _error_message(err: Exception) -> bytes:  # pragma: no cover - runs in the forked child
    """The pickled error for the parent to raise; an empty message (redo here) if it cannot be."""
    from amvicc.errors import UserError

    if not isinstance(err, UserError):
        return b""  # an unexpected error: the parent redoes the work and shows its own traceback
    try:
        return pickle.dumps(("error", err), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # not picklable: the parent redoes the work
        return b""
