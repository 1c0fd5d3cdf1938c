"""The workspace: one SQLite database and the files it points to.

A workspace (``--store``, default ``./amvicc-runs``) holds every run, image, response and
verdict, so every stage can ask it what is already done and resume. Layout::

    amvicc-runs/
        amvicc.sqlite          runs, images, responses, verdicts (WAL mode)
        images/ab/<id>.png     generated images, named by opaque ids (blind to the model)
        inputs/<sha256>.jpg    copies of the benchmark images a VLM was shown
        responses/<run>/<id>.json   verbatim API bodies

Durability: files are written under a temporary name and renamed, then their row is committed,
so a process killed at any instant leaves either nothing or a complete file with its row (at
worst an unreferenced file). Rows are never updated to change a result: a regenerated image,
a retried response or a changed verdict is a new row, and the ``current_*`` views pick the
latest one per slot. Each thread gets its own connection; several processes of one machine
may write at once (SQLite's WAL and a busy timeout serialise them). Across machines only one
process may open the database (see ``docs/generate.md``); a workspace on a network file system
gets a warning saying so.

Names users give (run ids) become path components (``responses/<run>/``): they are checked
(:func:`check_name`), and every file the store writes is checked to stay inside the workspace.
A run records the process running it, so a run whose process died (``kill -9``, a full disk)
reads as ``interrupted`` rather than ``running``.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from amvicc.errors import UserError, WorkspaceError
from amvicc.files import STORED_FOLDERS, check_output, sweep_leftovers, write_atomic
from amvicc.provenance import canonical_json, package_versions
from amvicc.redaction import redact_bytes, redact_command, redact_config, redact_text
from amvicc.store.filesystems import network_filesystem
from amvicc.store.leases import Leases
from amvicc.store.owners import is_dead, this_process
from amvicc.store.queries import Queries
from amvicc.store.records import (
    AuditSampleRecord,
    ImageRecord,
    ResponseRecord,
    RunRecord,
    RunSpec,
    VerdictRecord,
    check_verdict,
    record_from_row,
    utc_now,
)
from amvicc.store.schema import (
    DATABASE_NAME,
    DECIDING_ANSWERS,
    DEFAULT_STORE,
    RunStatus,
    Stage,
)
from amvicc.store.sources import is_rater_source

log = logging.getLogger(__name__)
RESPONSES_FOLDER = "responses"  # verbatim API bodies

# A name that becomes one path component: no separators, no leading dot, no "..".
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_WARNED_NETWORK: set[Path] = set()


def check_name(name: str, what: str = "run name") -> str:
    """Refuse a user-given name that would not be one plain path component.

    Raises:
        UserError: the name holds a path separator, starts with a dot or dash, is empty or
            longer than 128 characters, or holds characters other than letters, digits,
            ``.``, ``_`` and ``-``.
    """
    if not _NAME.match(name) or ".." in name:
        raise UserError(
            f"{what} {name!r} is not allowed: use 1 to 128 letters, digits, '.', '_' and '-', "
            "starting with a letter or digit (it names folders inside the workspace)"
        )
    return name


class Store(Queries, Leases):
    """A workspace folder: the database and the files.

    Args:
        root: the folder; created (with the database) unless ``create`` is False.
        create: when False, a missing workspace is a :class:`UserError`.
        database: open the database (False: a process that may only write files, e.g. a
            non-main process of a multi-node launch; every database call then raises).

    Raises:
        UserError: ``root`` is a file, or there is no workspace and ``create`` is False.
        WorkspaceError: the folder cannot be created, or its database cannot be used.
    """

    def __init__(
        self, root: str | Path = DEFAULT_STORE, *, create: bool = True, database: bool = True
    ) -> None:
        self.root = Path(root)
        db_path = self.root / DATABASE_NAME
        if self.root.exists() and not self.root.is_dir():
            raise UserError(
                f"--store {self.root} is a file, not a workspace folder; "
                "pass a folder (it is created when missing)"
            )
        if db_path.exists() and not db_path.is_file():
            raise WorkspaceError(f"{db_path} is not a file; move it aside or pass another --store")
        if not db_path.is_file():
            if not create:
                raise UserError(
                    f"no amvicc workspace at {self.root} (no {DATABASE_NAME}); "
                    "pass --store DIR or run `amvicc generate` / `amvicc answer` first"
                )
            check_output(self.root, what="--store", folder=True)  # not in another's files
            try:
                self.root.mkdir(parents=True, exist_ok=True)
            except OSError as err:
                raise file_error(err, "create the workspace folder", self.root) from None
            if database and not os.access(self.root, os.W_OK):
                raise WorkspaceError(
                    f"cannot create a workspace in {self.root}: the folder is read-only; "
                    "pass --store with a writable folder"
                )
        self.has_database = database
        if database:
            self._warn_if_networked()
        if database:
            super().__init__(db_path)
        else:
            self.db_path = db_path
            self.read_only = False
            self._local = threading.local()
            self._connections = []
            self._lock = threading.Lock()

    def connection(self) -> sqlite3.Connection:
        """This thread's database connection.

        Raises:
            RuntimeError: this store was opened without its database.
        """
        if not self.has_database:
            raise RuntimeError(
                f"this process may not open {self.db_path}: only the main process of a "
                "launch writes the database"
            )
        return super().connection()

    def _warn_if_networked(self) -> None:
        resolved = self.root.resolve()
        if resolved in _WARNED_NETWORK:
            return
        kind = network_filesystem(resolved)
        if kind is None:
            return
        _WARNED_NETWORK.add(resolved)
        log.warning(
            "workspace %s is on a network file system (%s): SQLite's locking is not reliable "
            "there. Keep one writer: run on one machine, or under one `accelerate launch` "
            "(only its main process opens the database), or put --store on a local disk and "
            "copy the folder back when done; see docs/generate.md",
            self.root,
            kind,
        )

    # files

    def path(self, relative: str) -> Path:
        """The absolute path of a file recorded relative to the workspace."""
        return self.root / relative

    def inside(self, relative: str) -> Path:
        """The path of a file the store writes, checked to stay inside the workspace.

        Raises:
            UserError: ``relative`` is absolute or climbs out of the workspace.
        """
        root = os.path.realpath(self.root)
        target = os.path.realpath(os.path.join(root, relative))
        if Path(relative).is_absolute() or os.path.commonpath([root, target]) != root:
            raise UserError(
                f"refusing to write {relative!r}: it is outside the workspace {self.root}"
            )
        return self.root / relative

    def write_file(self, relative: str, data: bytes) -> Path:
        """Write a file atomically: a reader sees the whole file or none of it.

        A verbatim API body (under ``responses/``) is redacted first
        (:func:`amvicc.redaction.redact_bytes`): a server may repeat the request's key in it.

        Raises:
            UserError: the path leads outside the workspace.
            WorkspaceError: the file cannot be written (full disk, read-only folder); no
                partial file is left.
        """
        target = self.inside(relative)
        if relative.startswith(f"{RESPONSES_FOLDER}/"):
            data = redact_bytes(data)
        try:
            write_atomic(target, data)
        except OSError as err:
            raise file_error(err, "write", target) from None
        return target

    def image_file(self, image_id: str, suffix: str = ".png") -> str:
        """Where an image's file goes, relative to the workspace (blind to the model)."""
        return f"images/{image_id[:2]}/{image_id}{suffix}"

    def sweep_temporary(self) -> int:
        """Delete temporary files left by killed writers; returns how many.

        A writer names its temporary file ``.<name>.<pid>.<thread>.tmp``
        (:func:`amvicc.files.temporary_path`); the files of writers still alive (another run
        sharing the workspace) are kept.
        """
        return sum(sweep_leftovers(self.root / folder, recursive=True) for folder in STORED_FOLDERS)

    # runs

    def start_run(self, spec: RunSpec) -> RunRecord:
        """Record a run as started, or resume the stored run with the same id.

        The command and configuration are stored with credentials redacted (URL user info,
        key/token query parameters, options named like keys, tokens or secrets); the run
        records this process as its owner.

        Raises:
            UserError: a run with this id exists with a different configuration, or a new
                run's name is not a plain name (:func:`check_name`).
        """
        key = spec.config_key
        config = redact_config({**spec.outputs, **spec.settings})
        now = utc_now()
        owner = this_process()
        with self.transaction() as conn:
            self._settle_abandoned_runs()
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (spec.run_id,)).fetchone()
            if row is None:
                check_name(spec.run_id)
                conn.execute(
                    """INSERT INTO runs (run_id, stage, model, smoke, config_key, config_json,
                        label_policy, catalogue_sha256, versions_json, command, status,
                        started_at, condition, parent_run_id, owner)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)""",
                    (
                        spec.run_id,
                        spec.stage,
                        spec.model,
                        int(spec.smoke),
                        key,
                        canonical_json(config),
                        spec.label_policy,
                        spec.catalogue_sha256,
                        canonical_json(package_versions()),
                        redact_command(spec.command),
                        now,
                        spec.condition,
                        spec.parent_run_id,
                        owner,
                    ),
                )
            elif row["config_key"] != key or row["stage"] != spec.stage:
                raise UserError(
                    f"run {spec.run_id!r} already exists with another configuration; "
                    "choose another --run name or repeat that run's exact options"
                )
            else:
                conn.execute(
                    "UPDATE runs SET status = 'running', ended_at = NULL, owner = ? "
                    "WHERE run_id = ?",
                    (owner, spec.run_id),
                )
        return self.run(spec.run_id)

    def _settle_abandoned_runs(self) -> None:
        """Inside a transaction: record runs whose process died as interrupted."""
        conn = self.connection()
        rows = conn.execute("SELECT run_id, owner FROM runs WHERE status = 'running'").fetchall()
        for run_id, owner in rows:
            if is_dead(owner):
                conn.execute(
                    "UPDATE runs SET status = 'interrupted', ended_at = ? WHERE run_id = ?",
                    (utc_now(), run_id),
                )

    def finish_run(
        self, run_id: str, status: RunStatus, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Record how a run ended and what it reported."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, ended_at = ?, summary_json = ? WHERE run_id = ?",
                (status, utc_now(), canonical_json(redact_config(dict(summary or {}))), run_id),
            )

    def try_finish_run(
        self, run_id: str, status: RunStatus, summary: Mapping[str, Any] | None = None
    ) -> bool:
        """:meth:`finish_run` where the workspace may be failing (full disk, read-only).

        A run stopped by the workspace itself cannot always record that it stopped; then it
        stays ``running`` in the database, and reads as ``interrupted`` once its process has
        ended (see :meth:`run`). Returns whether the end was recorded.
        """
        try:
            self.finish_run(run_id, status, summary)
        except WorkspaceError as err:
            log.debug("could not record the end of run %s: %s", run_id, err)
            return False
        return True

    def run(self, run_id: str) -> RunRecord:
        """The stored run with this id.

        Raises:
            UserError: there is none; the message lists the known runs.
        """
        row = self.connection().execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            known = ", ".join(r.run_id for r in self.runs()) or "none yet"
            raise UserError(f"no run {run_id!r} in {self.root}; known runs: {known}")
        return _settled(record_from_row(RunRecord, row))

    def runs(self, *, stage: Stage | None = None, model: str | None = None) -> list[RunRecord]:
        """Stored runs, oldest first, optionally of one stage or model.

        A run stored as ``running`` whose process has ended reads as ``interrupted``.
        """
        query = "SELECT * FROM runs WHERE (? IS NULL OR stage = ?) AND (? IS NULL OR model = ?)"
        rows = self.connection().execute(
            query + " ORDER BY started_at, run_id", (stage, stage, model, model)
        )
        return [_settled(record_from_row(RunRecord, r)) for r in rows]

    # images

    def add_image(self, image: ImageRecord, data: bytes | None = None) -> ImageRecord:
        """Store an image: its file first (atomically), then its row.

        Args:
            image: the record; ``path`` is filled in when ``data`` is given.
            data: the encoded image file (PNG), if one was made.
        """
        if data is not None:
            relative = image.path or self.image_file(image.image_id)
            self.write_file(relative, data)
            image = replace(image, path=relative)
        self.add_images([image])
        return image

    def add_images(self, images: Sequence[ImageRecord]) -> None:
        """Insert image rows (files already written) in one transaction."""
        self._insert("images", images)

    def images(
        self, *, run_id: str | None = None, config_key: str | None = None, current: bool = True
    ) -> list[ImageRecord]:
        """Image rows of a run or a configuration; by default only the latest per slot."""
        table = "current_images" if current else "images"
        rows = self.connection().execute(
            f"SELECT * FROM {table} WHERE (? IS NULL OR run_id = ?) "
            "AND (? IS NULL OR config_key = ?) ORDER BY question_index, prompt_kind, sample",
            (run_id, run_id, config_key, config_key),
        )
        return [record_from_row(ImageRecord, r) for r in rows]

    def image(self, image_id: str) -> ImageRecord:
        """One image row by id.

        Raises:
            KeyError: no such image.
        """
        row = (
            self.connection()
            .execute("SELECT * FROM images WHERE image_id = ?", (image_id,))
            .fetchone()
        )
        if row is None:
            raise KeyError(image_id)
        return record_from_row(ImageRecord, row)

    def done_image_slots(self, config_key: str) -> set[tuple[int, str, int]]:
        """The (question index, prompt kind, sample) slots already made for a configuration.

        Refusals count as done (the model declined; rerunning asks again only with --force);
        failures do not, so the next run retries them.
        """
        rows = self.connection().execute(
            "SELECT question_index, prompt_kind, sample FROM current_images "
            "WHERE config_key = ? AND status IN ('ok', 'refused', 'external')",
            (config_key,),
        )
        return {(r[0], r[1], r[2]) for r in rows}

    # responses

    def add_response(self, response: ResponseRecord, raw: bytes | None = None) -> ResponseRecord:
        """Store a response: the verbatim body first (atomically), then its row."""
        if raw is not None:
            relative = (
                response.raw_path or f"responses/{response.run_id}/{response.response_id}.json"
            )
            self.write_file(relative, raw)
            response = replace(response, raw_path=relative)
        self.add_responses([response])
        return response

    def add_responses(self, responses: Sequence[ResponseRecord]) -> None:
        """Insert response rows (files already written) in one transaction."""
        self._insert("responses", responses)

    def responses(
        self, *, run_id: str | None = None, config_key: str | None = None, current: bool = True
    ) -> list[ResponseRecord]:
        """Response rows of a run or a configuration; by default only the latest per slot."""
        table = "current_responses" if current else "responses"
        rows = self.connection().execute(
            f"SELECT * FROM {table} WHERE (? IS NULL OR run_id = ?) "
            "AND (? IS NULL OR config_key = ?) ORDER BY question_index, image_key, sample",
            (run_id, run_id, config_key, config_key),
        )
        return [record_from_row(ResponseRecord, r) for r in rows]

    def done_response_slots(self, config_key: str) -> set[tuple[int, str, int]]:
        """The (question index, image key, sample) slots with a successful response."""
        rows = self.connection().execute(
            "SELECT question_index, image_key, sample FROM current_responses "
            "WHERE config_key = ? AND status = 'ok'",
            (config_key,),
        )
        return {(r[0], r[1], r[2]) for r in rows}

    def undecided_responses(self) -> list[ResponseRecord]:
        """Graded responses that no verdict has decided yet: the human audit queue.

        A response is decided once any source (extractor, LLM judge, a person) gave it
        ``a``, ``b``, ``no_answer``, a yes/no judge's ``not_a`` / ``not_b``, or (a ladder rung)
        ``correct`` / ``incorrect``; one never graded at all is not in the queue.
        """
        deciding = ", ".join("?" * len(DECIDING_ANSWERS))
        rows = self.connection().execute(
            f"""SELECT r.* FROM current_responses r
            WHERE r.status = 'ok'
              AND EXISTS (SELECT 1 FROM verdicts v WHERE v.response_id = r.response_id)
              AND NOT EXISTS (SELECT 1 FROM current_verdicts v WHERE v.response_id = r.response_id
                              AND v.value IN ({deciding}))
            ORDER BY r.question_index, r.image_key, r.sample""",
            DECIDING_ANSWERS,
        )
        return [record_from_row(ResponseRecord, r) for r in rows]

    def add_audit_samples(self, samples: Sequence[AuditSampleRecord]) -> int:
        """Add responses to the human audit sample; ones already drawn keep their first draw.

        Returns:
            How many were new.
        """
        with self.transaction() as conn:
            before = conn.total_changes
            conn.executemany(
                "INSERT OR IGNORE INTO audit_samples (response_id, run_id, stratum, value, seed, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (s.response_id, s.run_id, s.stratum, s.value, s.seed, s.created_at)
                    for s in samples
                ],
            )
            return conn.total_changes - before

    def audit_samples(self, run_ids: Sequence[str] | None = None) -> list[AuditSampleRecord]:
        """The audit sample (of these runs), in the order it was drawn."""
        if run_ids is None:
            rows = self.connection().execute("SELECT * FROM audit_samples ORDER BY rowid")
        else:
            marks = ",".join("?" * len(run_ids))
            rows = self.connection().execute(
                f"SELECT * FROM audit_samples WHERE run_id IN ({marks}) ORDER BY rowid",
                list(run_ids),
            )
        return [record_from_row(AuditSampleRecord, r) for r in rows]

    def audit_sample_responses(self) -> list[ResponseRecord]:
        """The current responses drawn for the human audit (the scoring app's audit queue)."""
        rows = self.connection().execute(
            "SELECT r.* FROM current_responses r JOIN audit_samples a USING (response_id) "
            "ORDER BY a.rowid"
        )
        return [record_from_row(ResponseRecord, r) for r in rows]

    # verdicts

    def add_verdicts(
        self,
        verdicts: Iterable[VerdictRecord],
        *,
        skip_unchanged: bool = True,
        skip_identical: bool = False,
    ) -> int:
        """Record verdicts in one transaction; returns how many rows were added.

        The checks run inside the transaction, so two identical processes recording the same
        verdicts at once add them once.

        Args:
            verdicts: new judgements. A verdict never replaces an older row: it supersedes it.
            skip_unchanged: do not add a verdict whose source's latest verdict on the same
                subject already has the same value (so re-importing or re-grading is a no-op).
            skip_identical: with ``skip_unchanged`` off, still do not add a verdict whose
                source's latest verdict on the subject has the same value *and* detail (a
                newer reader's re-read, whose detail names its version, is added).
        """
        added = 0
        with self.transaction() as conn:
            for verdict in verdicts:
                check_verdict(verdict)
                if skip_unchanged or skip_identical:
                    latest = conn.execute(
                        "SELECT value, detail_json FROM verdicts WHERE image_id IS ? "
                        "AND response_id IS ? AND source = ? ORDER BY verdict_id DESC LIMIT 1",
                        (verdict.image_id, verdict.response_id, verdict.source),
                    ).fetchone()
                    same_value = latest is not None and latest[0] == verdict.value
                    if same_value and (skip_unchanged or latest[1] == verdict.detail_json):
                        continue
                row = {k: v for k, v in asdict(verdict).items() if k != "verdict_id"}
                conn.execute(
                    f"INSERT INTO verdicts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
                added += 1
        return added

    # ratings within raters-per-item: holds and verdicts decided in one transaction

    def hold_for_rating(
        self, scope: str, image_id: str, source: str, *, ttl: float, raters_per_item: int
    ) -> bool:
        """Hold an image for a rater if it still has room for them, in one transaction.

        Room: the raters who rated it (``human:`` and ``sheet:`` verdicts) plus the other
        raters holding it are fewer than ``raters_per_item``. The rater's other holds in
        ``scope`` end (a rater holds one image at a time).

        Returns:
            Whether the image is now held for ``source``.
        """
        with self.transaction() as conn:
            raters = self._rater_sources(image_id)
            if source in raters:
                return False
            held = self._live_holders(scope, time.time(), items=[image_id])
            others = [h for h in held.get(image_id, ()) if h != source and h not in raters]
            if len(raters) + len(others) >= raters_per_item:
                return False
            conn.execute(
                "DELETE FROM leases WHERE scope = ? AND holder = ? AND item <> ?",
                (scope, source, image_id),
            )
            conn.execute(
                "INSERT INTO leases (scope, item, holder, expires_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (scope, item, holder) DO UPDATE SET expires_at = excluded.expires_at",
                (scope, image_id, source, time.time() + ttl),
            )
        return True

    def add_rating(self, scope: str, verdict: VerdictRecord, *, raters_per_item: int) -> bool:
        """Record a rater's image verdict if it keeps the image within its raters.

        Kept when the rater rated the image before (a changed verdict), holds it, or it has
        room besides its raters and the other raters holding it; the rater's hold ends with
        the verdict. Checked and written in one transaction, so raters of several apps on one
        workspace never give an image more than ``raters_per_item`` ratings.

        Returns:
            Whether the verdict was recorded.
        """
        image_id = verdict.image_id
        if image_id is None:
            raise ValueError("a rating judges an image")
        with self.transaction() as conn:
            raters = self._rater_sources(image_id)
            if verdict.source not in raters:
                held = self._live_holders(scope, time.time(), items=[image_id])
                holders = held.get(image_id, [])
                others = [h for h in holders if h != verdict.source and h not in raters]
                if verdict.source not in holders and len(raters) + len(others) >= raters_per_item:
                    return False
            self.add_verdicts([verdict], skip_unchanged=False)
            conn.execute(
                "DELETE FROM leases WHERE scope = ? AND holder = ? AND item = ?",
                (scope, verdict.source, image_id),
            )
        return True

    def _rater_sources(self, image_id: str) -> set[str]:
        rows = self.connection().execute(
            "SELECT DISTINCT source FROM verdicts WHERE image_id = ?", (image_id,)
        )
        return {r[0] for r in rows if is_rater_source(r[0])}

    def add_verdict(self, verdict: VerdictRecord, *, skip_unchanged: bool = True) -> bool:
        """Record one verdict; returns whether a row was added."""
        return self.add_verdicts([verdict], skip_unchanged=skip_unchanged) == 1

    def verdicts(
        self,
        *,
        image_id: str | None = None,
        response_id: str | None = None,
        source: str | None = None,
        current: bool = True,
    ) -> list[VerdictRecord]:
        """Verdict rows, oldest first; by default only each source's latest per subject."""
        table = "current_verdicts" if current else "verdicts"
        rows = self.connection().execute(
            f"SELECT * FROM {table} WHERE (? IS NULL OR image_id = ?) "
            "AND (? IS NULL OR response_id = ?) AND (? IS NULL OR source = ?) ORDER BY verdict_id",
            (image_id, image_id, response_id, response_id, source, source),
        )
        return [record_from_row(VerdictRecord, r) for r in rows]

    # internals

    def _insert(self, table: str, records: Sequence[Any]) -> None:
        if not records:
            return
        if hasattr(records[0], "error"):  # often a server's message: it may quote the key
            records = [
                replace(r, error=redact_text(r.error)) if r.error is not None else r
                for r in records
            ]
        columns = [f.name for f in fields(records[0])]
        statement = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        with self.transaction() as conn:
            conn.executemany(statement, [tuple(getattr(r, c) for c in columns) for r in records])


def _settled(run: RunRecord) -> RunRecord:
    """A run as it really stands: ``running`` with a dead owner is ``interrupted``."""
    if run.status == "running" and is_dead(run.owner):
        return replace(run, status="interrupted")
    return run


def file_error(err: OSError, doing: str, path: Path) -> UserError:
    """One line for a file the workspace could not create or write."""
    reason = err.strerror or str(err)
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return WorkspaceError(
            f"cannot {doing} {path}: {reason}; free some space and rerun the same command "
            "(finished work is kept and resumed)"
        )
    if err.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return WorkspaceError(
            f"cannot {doing} {path}: {reason}; the workspace must be writable (or pass --store "
            "with a writable folder)"
        )
    return WorkspaceError(f"cannot {doing} {path}: {reason}")
