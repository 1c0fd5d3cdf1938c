"""A second process for a big report: half the sections computed beside the other half.

A report's sections are independent once the items are decided, and each spends its time in
Python and pandas, which one process runs on one core. On a workspace of hundreds of thousands
of verdicts, :func:`sections_apart` forks the process after the items are read: the child
computes the sections marked :attr:`~amvicc.report.section.Section.apart` for both parts and
sends their data back (pickled through a pipe) while the parent computes the rest. Both
processes start from the same memory, so the numbers are the ones one process gives, byte for
byte.

Forking is used only where it is safe and pays: on Linux, with two cores or more, and a big
workspace (see :func:`second_process_pays`). A child that dies or sends what cannot be read
costs only time: the parent then computes those sections itself. A user's error in the child
(a file it cannot read) is raised in the parent as it would have been there.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from amvicc.report.section import Clock, Part

log = logging.getLogger(__name__)

# Items below which a second process gains less than forking and pickling cost.
MIN_ITEMS = 20_000


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1  # pragma: no cover - Linux has sched_getaffinity


def second_process_pays(processes: int | None, parts: Sequence[Part]) -> bool:
    """Whether to compute the apart sections in a second process.

    Args:
        processes: ``1`` never, ``2`` whenever forking is possible, None: when it pays (two
            usable cores and at least :data:`MIN_ITEMS` items).
        parts: the report's parts.
    """
    if processes == 1 or not sys.platform.startswith("linux"):
        # Elsewhere fork is missing or unsafe (macOS system frameworks after fork).
        return False
    if processes is not None:
        return True
    items = sum(len(p.items.frame) for p in parts if p.items is not None)
    return usable_cores() >= 2 and items >= MIN_ITEMS


@contextmanager
def sections_apart(
    work: Sequence[tuple[int, str]], parts: Sequence[Part], clock: Clock
) -> Iterator[None]:
    """Compute sections in a forked child while the block runs.

    Args:
        work: (index of the part in ``parts``, section key), in the order to compute them.
        parts: the report's parts.
        clock: where the child's seconds are added.

    When the block ends, the child's data is in the parts (as if computed there) and its
    seconds are added to ``clock``. Without work nothing is forked.

    Raises:
        UserError: the child hit one (re-raised here, as the parent would have).
    """
    if not work:
        yield
        return
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(reader)
        _child(writer, work, parts, clock)
    os.close(writer)
    try:
        with os.fdopen(reader, "rb") as pipe:
            yield
            result = _received(pipe)
    except BaseException:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    os.waitpid(pid, 0)
    if result is None:
        log.warning("the report's second process failed; computing its sections here")
        for index, key in work:
            parts[index][key]
        return
    kind, payload = result
    if kind == "error":
        raise payload
    data, seconds = payload
    for (index, key), value in data.items():
        parts[index].adopt(key, value)
    for name, spent in seconds.items():
        clock.seconds[name] = clock.seconds.get(name, 0.0) + spent


def _received(pipe: Any) -> tuple[str, Any] | None:
    """What the child sent; None when it sent nothing readable (it died, or could not pickle)."""
    try:
        result = pickle.load(pipe)
    except Exception:  # any unreadable message means: compute here instead
        return None
    if not isinstance(result, tuple) or len(result) != 2 or result[0] not in ("ok", "error"):
        return None
    return result


def _child(
    writer: int, work: Sequence[tuple[int, str]], parts: Sequence[Part], clock: Clock
) -> None:  # pragma: no cover - runs in the forked child
    """Compute, send, and leave at once: no exit handlers, no buffers of the parent flushed."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent stops the child on Ctrl-C
    status = 0
    try:
        before = dict(clock.seconds)
        try:
            data = {(index, key): parts[index][key] for index, key in work}
            seconds = {n: s - before.get(n, 0.0) for n, s in clock.seconds.items()}
            message = pickle.dumps(("ok", (data, seconds)), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # the parent raises it, or recomputes
            message = _error_message(err)
        with os.fdopen(writer, "wb") as pipe:
            pipe.write(message)
    except BaseException:
        status = 1
    finally:
        os._exit(status)


def _error_message(err: Exception) -> bytes:  # pragma: no cover - runs in the forked child
    """The pickled error for the parent to raise; an empty message (recompute) if it cannot be."""
    from amvicc.errors import UserError

    if not isinstance(err, UserError):
        return b""  # an unexpected error: the parent recomputes and shows its own traceback
    try:
        return pickle.dumps(("error", err), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # not picklable: the parent recomputes
        return b""
