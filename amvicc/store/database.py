"""The workspace's SQLite database: one connection per thread, transactions and migrations.

Each thread gets its own connection; several processes may write at once (SQLite's WAL and a
busy timeout serialise them). Opening a database applies the migrations it lacks.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from amvicc.errors import UserError
from amvicc.store.schema import MIGRATIONS, SCHEMA_VERSION

if TYPE_CHECKING:
    import pandas as pd


class Database:
    """The connections to one workspace database, brought up to the current schema.

    Args:
        db_path: the SQLite file; created when missing.
    """

    def __init__(self, db_path: Path) -> None:
        self.db_path = db_path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._migrate()

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; use :meth:`transaction` to write)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(
                self.db_path, timeout=60, isolation_level=None, check_same_thread=False
            )
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA busy_timeout = 60000")
            conn.execute("PRAGMA foreign_keys = ON")
            # NORMAL loses nothing when a process dies; only an OS crash can drop the last
            # commits, never corrupt the database.
            conn.execute("PRAGMA synchronous = NORMAL")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Run the block in one write transaction: all of it is committed, or none.

        Nested blocks join the enclosing transaction, so several store calls (a run, its
        images, their verdicts) can be made all-or-nothing together.
        """
        conn = self.connection()
        if conn.in_transaction:
            yield conn
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

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
        conn.execute("PRAGMA journal_mode = WAL")
        while True:
            with self.transaction():
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise UserError(
                        f"workspace {self.db_path.parent} has schema version {version}, newer "
                        f"than this amvicc understands ({SCHEMA_VERSION}); upgrade amvicc"
                    )
                if version == SCHEMA_VERSION:
                    return
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version + 1}")

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
        import pandas as pd

        rows = self.connection().execute(query, list(params)).fetchall()
        frame = pd.DataFrame(rows, columns=list(columns), dtype=object)
        for column in ("question_index", "sample", "verdict_id"):
            if column in frame.columns:
                frame[column] = frame[column].astype("int64")
        return frame
