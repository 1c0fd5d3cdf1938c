"""Which process holds a run or a lease, and whether that process is certainly gone.

A process is named ``host:pid:start`` (``start``: when the process started, read from Linux's
``/proc``, so a recycled pid is not mistaken for the old process). A holder counts as dead only
when that is certain: it ran on this host and its pid is gone or belongs to a newer process. A
holder on another host is never presumed dead; its leases expire instead.
"""

from __future__ import annotations

import os
import socket
from functools import cache

from amvicc.files import process_alive as alive


@cache
def host_name() -> str:
    """This machine's name, as holders record it (colons would split the id)."""
    return socket.gethostname().replace(":", "-") or "localhost"


def process_start(pid: int) -> str:
    """When a process started (clock ticks since boot on Linux; empty where unknown)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return ""
    # Field 22 of /proc/<pid>/stat; the two before ")" (pid, comm) are cut off above.
    return fields[19] if len(fields) > 19 else ""


def this_process() -> str:
    """This process's holder id, ``host:pid:start``."""
    return holder_id(os.getpid())


def holder_id(pid: int) -> str:
    """The holder id of a process of this machine."""
    return f"{host_name()}:{pid}:{process_start(pid)}"


def is_dead(holder: str | None) -> bool:
    """Whether the process ``holder`` names has certainly ended.

    False for holders of other machines, and for ids that are not process ids (a rater).
    """
    if not holder:
        return False
    host, _, rest = holder.partition(":")
    pid_text, _, start = rest.partition(":")
    if host != host_name() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if not alive(pid):
        return True
    return bool(start) and process_start(pid) not in ("", start)
