"""The workspace's SQLite database: one connection per thread, transactions and migrations.

Each thread gets its own connection; several processes on one machine may write at once
(SQLite's WAL and a busy timeout serialise them). Opening a database applies the migrations it
lacks. A database SQLite cannot use (read-only, a full disk, a file that is not a database, a
lock held too long) raises :class:`~amvicc.errors.WorkspaceError`, one line naming the
workspace and what to do, from wherever the store meets it. A workspace that cannot be written
(a read-only folder or mount) still opens for reading: reports and exports work, and the first
write says why it cannot be made.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from amvicc.errors import WorkspaceError
from amvicc.store.schema import MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

# SQLite's messages for a database it cannot use, and what amvicc says instead.
_READ_ONLY = ("readonly", "read-only")
_FULL = ("database or disk is full", "disk is full")
# Columns :meth:`Database._object_frame` reads as int64 (ids and indices, never NULL).
_INTEGER_COLUMNS = frozenset({"question_index", "sample", "verdict_id", "rowid"})
_NOT_A_DATABASE = ("file is not a database", "file is encrypted", "malformed")


def workspace_error(err: sqlite3.Error, db_path: Path) -> WorkspaceError | None:
    """The one-line explanation of a SQLite error about the database itself, or None.

    Errors that mean a bug (a constraint, a wrong statement) are not translated: they should
    surface as they are.
    """
    if isinstance(err, sqlite3.IntegrityError | sqlite3.ProgrammingError | sqlite3.InterfaceError):
        return None
    message = str(err)
    lowered = message.lower()
    root = db_path.parent
    if any(word in lowered for word in _READ_ONLY):
        return WorkspaceError(
            f"workspace {root} is read-only ({message}); amvicc cannot record anything there: "
            "make it writable, or pass --store with a writable copy"
        )
    if any(word in lowered for word in _FULL):
        return WorkspaceError(
            f"the disk holding workspace {root} is full ({message}); free some space and rerun "
            "the same command (finished work is kept and resumed)"
        )
    if any(word in lowered for word in _NOT_A_DATABASE):
        return WorkspaceError(
            f"{db_path} is not a usable amvicc database ({message}); move it aside or pass "
            "another --store"
        )
    if "unable to open" in lowered:
        return WorkspaceError(
            f"cannot open the database {db_path} ({message}); check that the folder exists and "
            "that you may read it"
        )
    if "disk i/o error" in lowered:
        return WorkspaceError(
            f"reading or writing {db_path} failed ({message}); check the disk and its free "
            "space, then rerun the same command"
        )
    if "locked" in lowered or "busy" in lowered:
        return WorkspaceError(
            f"workspace {root} stayed locked by another process for a minute ({message}); on a "
            "network file system use one writer (see docs/generate.md), else retry"
        )
    return None


class _Connection(sqlite3.Connection):
    """A connection whose errors about the database itself are one line for the user."""

    db_path: Path

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        try:
            return super().execute(sql, parameters)
        except sqlite3.Error as err:
            raise _translated(err, self.db_path) from err

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        try:
            return super().executemany(sql, parameters)
        except sqlite3.Error as err:
            raise _translated(err, self.db_path) from err


def _rollback(conn: sqlite3.Connection) -> None:
    """Undo the open transaction, if SQLite has not already (a failed COMMIT may have)."""
    if conn.in_transaction:
        with suppress(sqlite3.Error, WorkspaceError):
            conn.execute("ROLLBACK")


# Every database open in this process, so that a forked child forgets their connections.
_OPEN: weakref.WeakSet[Database] = weakref.WeakSet()


def _forget_connections_in_child() -> None:
    for database in list(_OPEN):
        database._forget_connections()


os.register_at_fork(after_in_child=_forget_connections_in_child)


def _translated(err: sqlite3.Error, db_path: Path) -> Exception:
    return workspace_error(err, db_path) or err


class Database:
    """The connections to one workspace database, brought up to the current schema.

    A process forked from one holding a database (a report's second process) opens its own
    connections: SQLite's cannot cross a fork.

    Args:
        db_path: the SQLite file; created when missing.
    """

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        _OPEN.add(self)
        # A folder or file that cannot be written is opened read-only (and immutable: SQLite
        # would otherwise need to create its WAL index beside the database).
        self.read_only = db_path.is_file() and not (
            os.access(db_path, os.W_OK) and os.access(db_path.parent, os.W_OK)
        )
        self._migrate()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use :meth:`transaction` to write)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._open()
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def map_pages(self, size: int = 1 << 30) -> None:
        """Read this thread's connection's pages through a memory map (up to ``size`` bytes).

        A fifth less CPU on a scan of every verdict: SQLite reads mapped pages instead of
        copying each into its cache. Only for a process that only reads and whose death costs
        nothing (a report's early children): an I/O error on a mapped page kills the process
        (SIGBUS) where a read would have raised.
        """
        self.connection().execute(f"PRAGMA mmap_size = {int(size)}")

    def _forget_connections(self) -> None:
        """Drop the connections without closing them: a forked child's are its parent's.

        Closing one in the child would touch the parent's database and locks; the child
        opens its own on first use and leaves these to its exit.
        """
        self._local = threading.local()
        self._connections = []
        self._lock = threading.Lock()

    def _open(self) -> sqlite3.Connection:
        if not self.read_only:
            return self._connect(None)
        # Read-only: through the WAL when its files are there (another process may be
        # writing), else the database file alone (immutable: nothing can change it).
        uri = f"file:{self.db_path.resolve()}?mode=ro"
        try:
            conn = self._connect(uri)
            conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        except (sqlite3.Error, WorkspaceError):
            return self._connect(uri + "&immutable=1")
        return conn

    def _connect(self, uri: str | None) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                uri or self.db_path,
                timeout=60,
                isolation_level=None,
                check_same_thread=False,
                factory=_Connection,
                uri=uri is not None,
            )
        except sqlite3.Error as err:
            raise _translated(err, self.db_path) from err
        assert isinstance(conn, _Connection)
        conn.db_path = self.db_path
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA busy_timeout = 60000")
            conn.execute("PRAGMA foreign_keys = ON")
            # NORMAL loses nothing when a process dies; only an OS crash can drop the last
            # commits, never corrupt the database.
            conn.execute("PRAGMA synchronous = NORMAL")
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one write transaction: all of it is committed, or none.

        Nested blocks join the enclosing transaction, so several store calls (a run, its
        images, their verdicts) can be made all-or-nothing together.

        Raises:
            WorkspaceError: the workspace cannot be written (read-only, full disk).
        """
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        if self.read_only:
            raise WorkspaceError(
                f"workspace {self.db_path.parent} is read-only (no write access to "
                f"{self.db_path} or its folder); amvicc cannot record anything there: make it "
                "writable, or pass --store with a writable copy"
            )
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            _rollback(conn)
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            _rollback(conn)
            raise

    def close(self) -> None:
        """Close every connection this store opened."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def schema_version(self) -> int:
        """The database's schema version."""
        return int(self.connection().execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self) -> None:
        conn = self.connection()
        try:
            version = self.schema_version
            if version > SCHEMA_VERSION:
                raise WorkspaceError(
                    f"workspace {self.db_path.parent} has schema version {version}, newer than "
                    f"this amvicc understands ({SCHEMA_VERSION}); upgrade amvicc"
                )
            if version == SCHEMA_VERSION:
                return
            if self.read_only:
                raise WorkspaceError(
                    f"workspace {self.db_path.parent} was made by an older amvicc (schema "
                    f"{version}) and is read-only; open it once with write access to upgrade it"
                )
            conn.execute("PRAGMA journal_mode = WAL")
            while True:
                with self.transaction():
                    version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                    if version == SCHEMA_VERSION:
                        return
                    for statement in MIGRATIONS[version]:
                        conn.execute(statement)
                    conn.execute(f"PRAGMA user_version = {version + 1}")
        except BaseException:
            self.close()
            raise

    # reading many rows

    def _frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """A query as a DataFrame, with pandas' own column types."""
        import pandas as pd

        return pd.read_sql_query(query, self.connection(), params=list(params))

    def _object_frame(
        self, query: str, params: Sequence[Any], columns: Sequence[str]
    ) -> pd.DataFrame:
        """A query as a DataFrame of Python objects, integer id and index columns as int64.

        Faster than :meth:`_frame` on hundreds of thousands of rows: pandas' default string
        dtype converts every id on the way in, then again in each ``isin`` and merge.
        """
        return tuples_frame(self._tuples(query, params), columns)

    def _bulk_columns(
        self, integers: Sequence[str], rest: str, params: Sequence[Any], *, ids: str | None = None
    ) -> tuple[list[np.ndarray], list[str]]:
        """``SELECT integers rest`` as one int64 array per expression (NULL reads as -1).

        Fetching a row makes a Python tuple and an int per value: 0.2 s a column on 356k
        verdicts. Here SQLite writes each column as one text (``group_concat``) that numpy
        parses in C. The aggregates see the same rows in the same order, so the columns stay
        aligned. ``ids``: one more column, of ids (which never hold the unit separator),
        returned as strings.

        Raises:
            WorkspaceError: the database cannot be read, or a value is not what it should be.
        """
        ((columns, named),) = self._bulk_column_sets([(integers, rest, params)], ids=ids)
        return columns, named

    def _bulk_column_sets(
        self,
        reads: Sequence[tuple[Sequence[str], str, Sequence[Any]]],
        *,
        ids: str | None = None,
    ) -> list[tuple[list[np.ndarray], list[str]]]:
        """Several :meth:`_bulk_columns` reads (``integers``, ``rest``, ``params``) at once.

        In one statement, so that all of them see the workspace at one moment. ``ids`` goes
        with the first.

        Raises:
            WorkspaceError: the database cannot be read, or a value is not what it should be.
        """
        selects = []
        for number, (integers, rest, _) in enumerate(reads):
            aggregates = "".join(f", group_concat(COALESCE({e}, -1))" for e in integers)
            if ids is not None and number == 0:
                aggregates += f", group_concat({ids}, char(31))"
            selects.append(f"(SELECT count(*){aggregates} {rest})")
        query = f"SELECT * FROM {', '.join(selects)}"
        try:
            row = self.connection().execute(query, [p for *_, ps in reads for p in ps]).fetchone()
        except sqlite3.Error as err:
            raise _translated(err, self.db_path) from err
        out = []
        for number, (integers, _, _) in enumerate(reads):
            named_here = ids is not None and number == 0
            width = 1 + len(integers) + named_here
            count, *texts = row[:width]
            row = row[width:]
            columns = [_integers(text, int(count)) for text in texts[: len(integers)]]
            parsed = [c for c in columns if c is not None]
            named = texts[len(integers)].split("\x1f") if named_here and count else []
            if len(parsed) < len(columns) or (named_here and len(named) != count):
                raise WorkspaceError(f"{self.db_path}: a column read in bulk holds other values")
            out.append((parsed, named))
        return out

    def _tuples(self, query: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        """A query's rows as plain tuples (a third faster to fetch than sqlite3.Row)."""
        cursor = self.connection().cursor()
        cursor.row_factory = None
        try:
            return cursor.execute(query, list(params)).fetchall()
        except sqlite3.Error as err:
            raise _translated(err, self.db_path) from err


def _integers(text: str | None, count: int) -> np.ndarray | None:
    """``count`` comma-separated integers, parsed in C; None when the text holds other than that."""
    import warnings

    import numpy as np

    if count == 0:
        return np.zeros(0, dtype=np.int64)
    if text is None:
        return None
    with warnings.catch_warnings():  # numpy 1 warns where it stops early: the count tells
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            numbers = np.fromstring(text, dtype=np.int64, sep=",")
        except ValueError:  # numpy 2 raises there
            return None
    return numbers if len(numbers) == count else None


def tuples_frame(rows: list[tuple[Any, ...]], columns: Sequence[str]) -> pd.DataFrame:
    """Fetched rows as a DataFrame of Python objects, :data:`_INTEGER_COLUMNS` as int64.

    Built a column at a time, each straight into its numpy array: faster than handing pandas
    the rows (or numpy a table of them) and converting the integer columns afterwards.
    """
    from operator import itemgetter

    import numpy as np
    import pandas as pd

    data = {}
    for position, column in enumerate(columns):
        values = map(itemgetter(position), rows)
        if column in _INTEGER_COLUMNS:
            data[column] = pd.Series(np.fromiter(values, np.int64, len(rows)), copy=False)
        else:
            array = np.fromiter(values, object, len(rows))
            data[column] = pd.Series(array, dtype=object, copy=False)
    return pd.DataFrame(data, columns=list(columns), copy=False)
