"""Which file system a workspace is on, and whether SQLite's locking can be trusted there.

SQLite in WAL mode needs every process that opens the database on one machine: its shared
memory index does not work across machines, and the locks of network file systems (NFS, Lustre,
CIFS, GPFS, ...) are not reliable enough for its rollback journal either. The store warns when
a workspace is on one of them; ``docs/generate.md`` says how to work with one writer.
"""

from __future__ import annotations

import os
from pathlib import Path

# Mount types whose locks SQLite cannot rely on across machines.
NETWORK_FILESYSTEMS = frozenset(
    {
        "nfs",
        "nfs4",
        "lustre",
        "cifs",
        "smb3",
        "smbfs",
        "gpfs",
        "beegfs",
        "ceph",
        "cephfs",
        "glusterfs",
        "fuse.glusterfs",
        "fuse.sshfs",
        "fuse.cephfs",
        "fuse.juicefs",
        "afs",
        "9p",
        "panfs",
        "wekafs",
        "orangefs",
        "pvfs2",
    }
)
MOUNTS_FILE = Path("/proc/self/mounts")


def filesystem_type(path: Path, mounts: str | None = None) -> str | None:
    """The type of the file system holding ``path`` (None where it cannot be told).

    Args:
        path: a file or folder (it need not exist yet: its nearest existing parent counts).
        mounts: the text of ``/proc/self/mounts`` (read when None; Linux only).
    """
    if mounts is None:
        try:
            mounts = MOUNTS_FILE.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    target = Path(os.path.realpath(path))
    best: tuple[int, str] | None = None
    for line in mounts.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        # Spaces in mount points are written as \040.
        point = fields[1].replace("\\040", " ")
        if target == Path(point) or Path(point) in target.parents:
            depth = len(Path(point).parts)
            if best is None or depth >= best[0]:
                best = (depth, fields[2])
    return best[1] if best is not None else None


def network_filesystem(path: Path, mounts: str | None = None) -> str | None:
    """The network file system type ``path`` is on, or None when it is local (or unknown)."""
    kind = filesystem_type(path, mounts)
    return kind if kind is not None and kind.lower() in NETWORK_FILESYSTEMS else None
