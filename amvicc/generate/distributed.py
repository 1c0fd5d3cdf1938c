"""Which share of the work this process does under ``accelerate launch`` (or ``torchrun``).

A single process needs nothing from here. Under a launcher (``WORLD_SIZE`` > 1), accelerate's
:class:`~accelerate.PartialState` gives the process its index and device, a barrier, a way to
send the main process's to-do list to the others (:meth:`ProcessLayout.broadcast`) and to bring
their image rows back to it (:meth:`ProcessLayout.gather`): only the main process opens the
database, so the launch works across machines that share a file system but not its locks.

A launched process must not let Python finalize: a torch thread (gloo's) stopped by a
finalizing interpreter is ended with ``pthread_exit``, whose unwinding meets a ``noexcept`` C++
destructor and aborts the process ("terminate called without an active exception", exit -6)
after all its work is done. ``python -m amvicc.generate`` therefore ends through
:func:`exit_launched_process` (flush, leave the group, ``os._exit``); code that calls
:func:`current_layout` itself still gets an ``atexit`` hook that leaves the group early.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from amvicc.extras import require_extra

ValueT = TypeVar("ValueT")


@dataclass(frozen=True)
class ProcessLayout:
    """This process's place among the processes sharing a run.

    Attributes:
        index: this process (0 is the main one: it records the run and prints).
        count: how many processes share the run.
        device: the device the launcher assigned this process, if any.
    """

    index: int = 0
    count: int = 1
    device: str | None = None
    _state: Any = None

    @property
    def is_main(self) -> bool:
        """Whether this process records the run and prints the progress and summary."""
        return self.index == 0

    def barrier(self) -> None:
        """Wait until every process reaches this point."""
        if self._state is not None:
            self._state.wait_for_everyone()

    @contextmanager
    def main_first(self) -> Iterator[None]:
        """Run the block on the main process, then on the others (one download, one build)."""
        if self._state is None:
            yield
            return
        with self._state.main_process_first():
            yield

    def broadcast(self, value: ValueT) -> ValueT:
        """The main process's ``value``, on every process (others pass a placeholder)."""
        if self._state is None:
            return value
        from accelerate.utils import broadcast_object_list

        box = [value]
        broadcast_object_list(box, from_process=0)
        return box[0]

    def gather(self, value: ValueT) -> list[ValueT]:
        """Every process's ``value``, in process order."""
        if self._state is None:
            return [value]
        from accelerate.utils import gather_object

        gathered: list[ValueT] = gather_object([value])
        return gathered


def launched_rank() -> int:
    """This process's global rank under a launcher (0 without one)."""
    return int(os.environ.get("RANK", "0") or 0)


def launched_processes() -> int:
    """How many processes the launcher started (1 without a launcher)."""
    return int(os.environ.get("WORLD_SIZE", "1") or 1)


def current_layout(device: str = "auto") -> ProcessLayout:
    """This process's layout, joining the launcher's process group when there is one.

    Args:
        device: the requested device; ``cpu`` (or no GPU at all) joins over gloo, as does
            ``accelerate launch --cpu``.
    """
    if launched_processes() <= 1:
        return ProcessLayout()
    require_extra("local", "a launch across processes (WORLD_SIZE > 1) runs on accelerate")
    import torch
    from accelerate import PartialState

    cpu = (
        device == "cpu"
        or os.environ.get("ACCELERATE_USE_CPU", "").lower() in ("1", "true", "yes")
        or not torch.cuda.is_available()
    )
    state = PartialState(cpu=cpu)
    atexit.unregister(leave_process_group)  # once, however many runs the process starts
    atexit.register(leave_process_group)
    return ProcessLayout(
        index=state.process_index,
        count=state.num_processes,
        device=str(state.device),
        _state=state,
    )


def leave_process_group() -> None:
    """Destroy the launcher's process group, joining its worker threads (see the module doc).

    Safe to call more than once and without a group. Only this process's side is torn down (no
    collective): the others may already have gone.
    """
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def exit_launched_process(status: int | str | None) -> NoReturn:
    """End the process with ``status``; a launched one without finalizing the interpreter.

    Alone (no launcher) this is ``sys.exit``. A launched process has stored everything by now
    (only the main one writes, and its store is closed), so what finalization would do is
    flushing output and leaving the group, done here; skipping the rest takes away the moment
    a C++ thread of torch can be stopped by a finalizing interpreter (see the module doc).
    """
    if launched_processes() <= 1:
        raise SystemExit(status)
    if isinstance(status, str):  # SystemExit("message"): print it as Python would
        print(status, file=sys.stderr)
    code = 0 if status is None else status if isinstance(status, int) else 1
    try:
        leave_process_group()
    finally:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
