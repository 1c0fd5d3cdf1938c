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
latest one per slot. Each thread gets its own connection; several processes may write at once
(SQLite's WAL and a busy timeout serialise them).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from amvicc.errors import UserError
from amvicc.provenance import canonical_json, package_versions
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
from amvicc.store.schema import DATABASE_NAME, DEFAULT_STORE, RunStatus, Stage


class Store(Queries):
    """A workspace folder: the database and the files.

    Args:
        root: the folder; created (with the database) unless ``create`` is False.
        create: when False, a missing workspace is a :class:`UserError`.
    """

    def __init__(self, root: str | Path = DEFAULT_STORE, *, create: bool = True) -> None:
        self.root = Path(root)
        db_path = self.root / DATABASE_NAME
        if not db_path.is_file():
            if not create:
                raise UserError(
                    f"no amvicc workspace at {self.root} (no {DATABASE_NAME}); "
                    "pass --store DIR or run `amvicc generate` / `amvicc answer` first"
                )
            self.root.mkdir(parents=True, exist_ok=True)
        super().__init__(db_path)

    # files

    def path(self, relative: str) -> Path:
        """The absolute path of a file recorded relative to the workspace."""
        return self.root / relative

    def write_file(self, relative: str, data: bytes) -> Path:
        """Write a file atomically: a reader sees the whole file or none of it."""
        target = self.root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            temporary.write_bytes(data)
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)
        return target

    def image_file(self, image_id: str, suffix: str = ".png") -> str:
        """Where an image's file goes, relative to the workspace (blind to the model)."""
        return f"images/{image_id[:2]}/{image_id}{suffix}"

    def sweep_temporary(self) -> int:
        """Delete temporary files left by killed writers; returns how many.

        A writer names its temporary file ``.<name>.<pid>.<thread>.tmp``; the files of writers
        still alive (another run sharing the workspace) are kept.
        """
        removed = 0
        for folder in ("images", "inputs", "responses"):
            for temporary in (self.root / folder).rglob(".*.tmp"):
                parts = temporary.name.split(".")
                if len(parts) >= 4 and parts[-3].isdigit() and _alive(int(parts[-3])):
                    continue
                temporary.unlink(missing_ok=True)
                removed += 1
        return removed

    # runs

    def start_run(self, spec: RunSpec) -> RunRecord:
        """Record a run as started, or resume the stored run with the same id.

        Raises:
            UserError: a run with this id exists with a different configuration.
        """
        key = spec.config_key
        config = {**spec.outputs, **spec.settings}
        now = utc_now()
        with self.transaction() as conn:
            row = conn.execute("SELECT * FROM runs WHERE run_id = ?", (spec.run_id,)).fetchone()
            if row is None:
                conn.execute(
                    """INSERT INTO runs (run_id, stage, model, smoke, config_key, config_json,
                        label_policy, catalogue_sha256, versions_json, command, status,
                        started_at, condition, parent_run_id)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?, ?)""",
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
                        spec.command,
                        now,
                        spec.condition,
                        spec.parent_run_id,
                    ),
                )
            elif row["config_key"] != key or row["stage"] != spec.stage:
                raise UserError(
                    f"run {spec.run_id!r} already exists with another configuration; "
                    "choose another --run name or repeat that run's exact options"
                )
            else:
                conn.execute(
                    "UPDATE runs SET status = 'running', ended_at = NULL WHERE run_id = ?",
                    (spec.run_id,),
                )
        return self.run(spec.run_id)

    def finish_run(
        self, run_id: str, status: RunStatus, summary: Mapping[str, Any] | None = None
    ) -> None:
        """Record how a run ended and what it reported."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE runs SET status = ?, ended_at = ?, summary_json = ? WHERE run_id = ?",
                (status, utc_now(), canonical_json(dict(summary or {})), run_id),
            )

    def run(self, run_id: str) -> RunRecord:
        """The stored run with this id.

        Raises:
            UserError: there is none; the message lists the known runs.
        """
        row = self.connection().execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            known = ", ".join(r.run_id for r in self.runs()) or "none yet"
            raise UserError(f"no run {run_id!r} in {self.root}; known runs: {known}")
        return record_from_row(RunRecord, row)

    def runs(self, *, stage: Stage | None = None, model: str | None = None) -> list[RunRecord]:
        """Stored runs, oldest first, optionally of one stage or model."""
        query = "SELECT * FROM runs WHERE (? IS NULL OR stage = ?) AND (? IS NULL OR model = ?)"
        rows = self.connection().execute(
            query + " ORDER BY started_at, run_id", (stage, stage, model, model)
        )
        return [record_from_row(RunRecord, r) for r in rows]

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
        ``a``, ``b``, ``no_answer`` or a yes/no judge's ``not_a`` / ``not_b``; one never graded at all is not in the queue.
        """
        rows = self.connection().execute(
            """SELECT r.* FROM current_responses r
            WHERE r.status = 'ok'
              AND EXISTS (SELECT 1 FROM verdicts v WHERE v.response_id = r.response_id)
              AND NOT EXISTS (SELECT 1 FROM current_verdicts v WHERE v.response_id = r.response_id
                              AND v.value IN ('a', 'b', 'no_answer', 'not_a', 'not_b'))
            ORDER BY r.question_index, r.image_key, r.sample"""
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
        self, verdicts: Iterable[VerdictRecord], *, skip_unchanged: bool = True
    ) -> int:
        """Record verdicts in one transaction; returns how many rows were added.

        Args:
            verdicts: new judgements. A verdict never replaces an older row: it supersedes it.
            skip_unchanged: do not add a verdict whose source's latest verdict on the same
                subject already has the same value (so re-importing or re-grading is a no-op).
        """
        added = 0
        with self.transaction() as conn:
            for verdict in verdicts:
                check_verdict(verdict)
                if skip_unchanged:
                    latest = conn.execute(
                        "SELECT value FROM verdicts WHERE image_id IS ? AND response_id IS ? "
                        "AND source = ? ORDER BY verdict_id DESC LIMIT 1",
                        (verdict.image_id, verdict.response_id, verdict.source),
                    ).fetchone()
                    if latest is not None and latest[0] == verdict.value:
                        continue
                row = {k: v for k, v in asdict(verdict).items() if k != "verdict_id"}
                conn.execute(
                    f"INSERT INTO verdicts ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                )
                added += 1
        return added

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
        columns = [f.name for f in fields(records[0])]
        statement = (
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        )
        with self.transaction() as conn:
            conn.executemany(statement, [tuple(getattr(r, c) for c in columns) for r in records])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True
