"""The files amvicc writes and the input files it reads, handled the same way everywhere.

**Writes** (:func:`write_atomic`, :func:`write_output`): a file is written whole under a
temporary name beside its target, ``.<name>.<pid>.<thread>.tmp``, and renamed into place, so a
process killed at any instant leaves the previous file or the new one, never a 0-byte or
half-written one. A temporary file whose writer has ended is a leftover that the next run
recognises and removes (:func:`sweep_leftovers`). The workspace's own files go through
:meth:`amvicc.store.Store.write_file`, which uses the same writer.

**Where a user may write** (:func:`check_output`): ``-o``, ``--out`` and every other path a
user names for output may never land on a workspace's database (``amvicc.sqlite`` and its
``-wal``/``-shm``/``-journal`` files) or inside its stored files (``images/``, ``inputs/``,
``responses/``). A workspace is recognised by its database, wherever it is, whichever
``--store`` the command names: replacing the database with a CSV, or a stored API body with a
report, would lose the workspace silently.

**Input files** (:func:`read_regular_file`): an input is read only when it is a regular file
(a symbolic link is followed only to one), without blocking and up to a byte cap, so a FIFO
named ``1.png`` or a link to ``/dev/zero`` is one line in a list of unreadable inputs rather
than a hang or a process that reads until it is killed. YAML a user hands in (``--prices``,
``--option KEY=VALUE``, pipeline files) is read by :func:`load_yaml`: no aliases (an alias
bomb of a few hundred bytes expands to gigabytes), no NaN or infinity.
"""

from __future__ import annotations

import errno
import math
import os
import re
import shutil
import stat
import threading
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from amvicc.errors import UserError

#: The workspace's database file (``store.schema`` names it from here).
DATABASE_NAME = "amvicc.sqlite"
#: The workspace's folders of stored files: generated images, input copies, verbatim bodies.
STORED_FOLDERS = ("images", "inputs", "responses")

# `.<name>.<pid>.<thread>.tmp`: the writer's process id says whether it may still finish.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.(?P<pid>[0-9]+)\.(?P<thread>[0-9]+)\.tmp$")


def process_alive(pid: int) -> bool:
    """Whether a process with this pid exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    except OSError:
        return False
    return True


# --- writing ---------------------------------------------------------------------------------


def temporary_path(target: Path) -> Path:
    """Where a file is written before it is renamed to ``target`` (beside it, hidden)."""
    return target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")


def is_leftover(path: Path) -> bool:
    """Whether ``path`` is a temporary file of a writer that has ended (safe to remove)."""
    match = _TEMPORARY.match(path.name)
    return match is not None and not process_alive(int(match.group("pid")))


def write_atomic(target: Path, data: bytes | str, *, durable: bool = False) -> None:
    """Write ``target`` whole or not at all: a temporary file beside it, renamed into place.

    A file that already exists keeps its permissions. The temporary file is removed when the
    write fails.

    Args:
        target: the file; its folder is created when missing.
        data: the content (text is written as UTF-8).
        durable: also flush the file to the disk before the rename (a power cut then keeps
            the old or the new file); a killed process needs no flush, so the workspace's many
            small files skip it.

    Raises:
        OSError: the file cannot be written (full disk, read-only folder).
    """
    payload = data.encode("utf-8") if isinstance(data, str) else data
    temporary = temporary_path(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(temporary, "xb") as handle:
            handle.write(payload)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        with suppress(OSError):
            os.chmod(temporary, stat.S_IMODE(os.stat(target).st_mode))
        os.replace(temporary, target)
    finally:
        with suppress(OSError):
            temporary.unlink(missing_ok=True)


def sweep_leftovers(folder: Path, *, recursive: bool = False) -> int:
    """Remove the temporary files (or staging folders) of ended writers; returns how many.

    Those of writers still running (another process sharing the folder) are kept; so is
    anything that cannot be removed (a read-only folder has nothing to clean).
    """
    if not folder.is_dir():
        return 0
    candidates = folder.rglob(".*.tmp") if recursive else folder.glob(".*.tmp")
    removed = 0
    for path in list(candidates):
        if not is_leftover(path):
            continue
        try:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink(missing_ok=True)
        except OSError:
            continue
        removed += 1
    return removed


def check_output(path: Path, *, what: str = "-o", folder: bool = False) -> Path:
    """Refuse an output path that lands on a workspace's database or its stored files.

    The path is resolved first (symbolic links, ``..``), so a link pointing into a workspace
    is refused as well. Every workspace above the path counts, not only the command's
    ``--store``.

    Args:
        path: what the user named.
        what: the option, for the message (``-o``, ``--out``).
        folder: the output is a folder the command writes into (then the workspace folder
            itself is refused too: its ``images/`` would mix with the workspace's).

    Returns:
        The resolved path, where the output is to be written.

    Raises:
        UserError: the path is a workspace's database or inside its stored files, or (for a
            file output) an existing folder.
    """
    resolved = Path(os.path.realpath(path))
    for root in (resolved, *resolved.parents):
        if not (root / DATABASE_NAME).exists():
            continue
        parts = resolved.relative_to(root).parts
        head = parts[0].lower() if parts else ""
        if head.startswith(DATABASE_NAME) or head in STORED_FOLDERS:
            kind = "database" if head.startswith(DATABASE_NAME) else f"stored {head}"
            raise UserError(
                f"{what} {path} would overwrite the {kind} of the workspace {root}; amvicc "
                "never writes over a workspace's own files: choose a path outside them"
            )
        if not parts and folder:
            raise UserError(
                f"{what} {path} is the workspace {root} itself; give a folder of its own "
                f"(e.g. {root / 'scenes'})"
            )
    if not folder and resolved.is_dir():
        raise UserError(f"{what} {path} is a folder; give a file name")
    return resolved


def write_output(path: Path, data: bytes | str, *, what: str = "-o") -> Path:
    """Write a file the user asked for: checked (:func:`check_output`), then atomic.

    Returns:
        The path written (``path`` resolved).

    Raises:
        UserError: the path is refused, or it cannot be written (one line naming it).
    """
    target = check_output(path, what=what)
    try:
        write_atomic(target, data, durable=True)
    except OSError as err:
        raise UserError(f"cannot write {what} {path}: {err.strerror or err}") from None
    return target


# --- reading ---------------------------------------------------------------------------------


class UnreadableFile(ValueError):
    """An input that is not a regular file, or is larger than its cap (the message says which)."""


def read_regular_file(path: Path, *, limit: int) -> bytes:
    """The bytes of a regular file, at most ``limit`` of them.

    Opened without blocking (a FIFO does not wait for a writer) and checked on the open file
    (no window between a check and the read): a device, FIFO, socket or folder is refused, and
    a symbolic link is followed only to a regular file.

    Raises:
        UnreadableFile: not a regular file, or larger than ``limit`` bytes.
        OSError: the file cannot be opened or read (missing, forbidden).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        descriptor = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ENXIO:  # a socket (or a FIFO opened for writing elsewhere)
            raise UnreadableFile("not a regular file (a socket)") from None
        raise
    try:
        mode = os.fstat(descriptor).st_mode
    except OSError:
        os.close(descriptor)
        raise
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise UnreadableFile(f"not a regular file ({_kind(mode)})")
    with os.fdopen(descriptor, "rb", closefd=True) as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnreadableFile(f"larger than {limit / 2**20:g} MiB")
    return data


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a folder",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "a special file")


class UnsafeYAML(ValueError):
    """YAML that :func:`load_yaml` refuses: an alias, or a number that is not finite."""


def load_yaml(text: str) -> Any:
    """YAML text as Python values, read safely: plain data, no aliases, finite numbers only.

    ``yaml.safe_load`` builds no objects but still expands aliases (``*a``), so a few hundred
    bytes of nested aliases take minutes and gigabytes; and it reads ``.nan`` and ``.inf`` as
    floats that no price, scale or temperature can be.

    Raises:
        UnsafeYAML: an alias, or a float that is not finite (the message says where).
        yaml.YAMLError: not YAML.
    """
    import yaml

    return yaml.load(text, Loader=_strict_loader())  # a SafeLoader subclass


@cache
def _strict_loader() -> type[Any]:
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                event: Any = self.peek_event()  # type: ignore[no-untyped-call]
                line = event.start_mark.line + 1
                raise UnsafeYAML(f"aliases (*name) are not allowed (line {line})")
            return super().compose_node(parent, index)

        def construct_finite_float(self, node: Any) -> float:
            value = float(self.construct_yaml_float(node))
            if not math.isfinite(value):
                line = node.start_mark.line + 1
                raise UnsafeYAML(f"{node.value!r} is not a finite number (line {line})")
            return value

    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.construct_finite_float)
    return StrictLoader
