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

import json
import os
import re
import sqlite3
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from amvicc.catalogue import LabelPolicy, PromptKind
from amvicc.errors import UserError
from amvicc.provenance import canonical_json, config_key, package_versions

if TYPE_CHECKING:
    import pandas as pd

DEFAULT_STORE = Path("amvicc-runs")
DATABASE_NAME = "amvicc.sqlite"

Stage = Literal["generate", "answer", "grade", "judge", "score", "import"]
RunStatus = Literal["running", "finished", "failed", "interrupted"]
ImageStatus = Literal["ok", "failed", "refused", "external"]
ResponseStatus = Literal["ok", "error"]
ImageVerdictValue = Literal["correct", "incorrect", "cant_tell", "undecided"]
AnswerVerdictValue = Literal["a", "b", "undecided", "no_answer"]

IMAGE_VERDICTS: tuple[str, ...] = get_args(ImageVerdictValue)
ANSWER_VERDICTS: tuple[str, ...] = get_args(AnswerVerdictValue)

# Each migration is a list of statements taking the schema from version i to i + 1.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            stage TEXT NOT NULL,
            model TEXT NOT NULL,
            smoke INTEGER NOT NULL DEFAULT 0,
            config_key TEXT NOT NULL,
            config_json TEXT NOT NULL,
            label_policy TEXT NOT NULL CHECK (label_policy IN ('corrected', 'original')),
            catalogue_sha256 TEXT,
            versions_json TEXT NOT NULL,
            command TEXT,
            status TEXT NOT NULL,
            summary_json TEXT NOT NULL DEFAULT '{}',
            started_at TEXT NOT NULL,
            ended_at TEXT
        )""",
        """CREATE TABLE images (
            image_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            config_key TEXT NOT NULL,
            question_index INTEGER NOT NULL,
            prompt_kind TEXT NOT NULL CHECK (prompt_kind IN ('implicit', 'explicit')),
            sample INTEGER NOT NULL DEFAULT 0,
            prompt TEXT NOT NULL,
            seed INTEGER,
            status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'refused', 'external')),
            path TEXT,
            error TEXT,
            params_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX images_slot ON images(config_key, question_index, prompt_kind, sample)",
        "CREATE INDEX images_run ON images(run_id)",
        """CREATE VIEW current_images AS
            SELECT images.* FROM images JOIN (
                SELECT MAX(rowid) AS latest FROM images
                GROUP BY config_key, question_index, prompt_kind, sample
            ) ON images.rowid = latest""",
        """CREATE TABLE responses (
            response_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            config_key TEXT NOT NULL,
            question_index INTEGER NOT NULL,
            image_key TEXT NOT NULL,
            image_id TEXT REFERENCES images(image_id),
            input_path TEXT,
            sample INTEGER NOT NULL DEFAULT 0,
            prompt TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'error')),
            text TEXT,
            raw_path TEXT,
            error TEXT,
            latency_s REAL,
            prompt_tokens INTEGER,
            completion_tokens INTEGER,
            request_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX responses_slot ON responses(config_key, question_index, image_key, sample)",
        "CREATE INDEX responses_run ON responses(run_id)",
        """CREATE VIEW current_responses AS
            SELECT responses.* FROM responses JOIN (
                SELECT MAX(rowid) AS latest FROM responses
                GROUP BY config_key, question_index, image_key, sample
            ) ON responses.rowid = latest""",
        """CREATE TABLE verdicts (
            verdict_id INTEGER PRIMARY KEY AUTOINCREMENT,
            image_id TEXT REFERENCES images(image_id),
            response_id TEXT REFERENCES responses(response_id),
            source TEXT NOT NULL,
            value TEXT NOT NULL,
            run_id TEXT REFERENCES runs(run_id),
            rubric_version TEXT,
            comment TEXT,
            detail_json TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL,
            CHECK ((image_id IS NULL) <> (response_id IS NULL)),
            CHECK (image_id IS NULL OR value IN ('correct', 'incorrect', 'cant_tell', 'undecided')),
            CHECK (response_id IS NULL OR value IN ('a', 'b', 'undecided', 'no_answer'))
        )""",
        "CREATE INDEX verdicts_image ON verdicts(image_id, source)",
        "CREATE INDEX verdicts_response ON verdicts(response_id, source)",
        "CREATE INDEX verdicts_source ON verdicts(source)",
        """CREATE VIEW current_verdicts AS
            SELECT verdicts.* FROM verdicts JOIN (
                SELECT MAX(verdict_id) AS latest FROM verdicts
                GROUP BY image_id, response_id, source
            ) ON verdicts.verdict_id = latest""",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)


def utc_now() -> str:
    """The current time as ISO 8601 UTC with milliseconds (sorts as text)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_id() -> str:
    """A fresh opaque identifier for an image, response or file."""
    return uuid.uuid4().hex


def slug(text: str) -> str:
    """A file- and URL-safe form of a model name: ``openai:gpt-4o`` -> ``openai-gpt-4o``."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")[:48] or "model"


# --- verdict sources (DESIGN.md: the words every stage uses) --------------------------------

EXTRACTOR_SOURCE = "extractor"
HUMAN_PREFIX = "human:"
SHEET_PREFIX = "sheet:"
ADJUDICATION_PREFIX = "adjudication:"
JUDGE_PREFIX = "judge:"
LLM_JUDGE_PREFIX = "llm-judge:"
HUMAN_SOURCE_PREFIXES = (HUMAN_PREFIX, SHEET_PREFIX, ADJUDICATION_PREFIX)


def human_source(rater: str) -> str:
    """The source of a verdict given by a rater in the scoring UI."""
    return f"{HUMAN_PREFIX}{rater}"


def adjudication_source(rater: str) -> str:
    """The source of a verdict that settles a disagreement between raters."""
    return f"{ADJUDICATION_PREFIX}{rater}"


def sheet_source(sheet: str, rater: str) -> str:
    """The source of a verdict imported from a grade sheet."""
    return f"{SHEET_PREFIX}{sheet}:{rater}"


def llm_judge_source(model: str) -> str:
    """The source of an answer verdict decided by an LLM judge."""
    return f"{LLM_JUDGE_PREFIX}{model}"


def image_judge_source(method: str, model: str) -> str:
    """The source of an image verdict decided by an automatic image judge."""
    return f"{JUDGE_PREFIX}{method}:{model}"


def is_human_source(source: str) -> bool:
    """Whether a verdict source is a person (rater, grade sheet or adjudicator)."""
    return source.startswith(HUMAN_SOURCE_PREFIXES)


def is_rater_source(source: str) -> bool:
    """Whether a verdict source is one rater's own verdict (in the UI or on a sheet)."""
    return source.startswith((HUMAN_PREFIX, SHEET_PREFIX))


# --- records ---------------------------------------------------------------------------------

RecordT = TypeVar("RecordT")


def _from_row(cls: type[RecordT], row: sqlite3.Row) -> RecordT:
    names = {f.name for f in fields(cls)}  # type: ignore[arg-type]
    return cls(**{k: row[k] for k in row.keys() if k in names})  # noqa: SIM118 (Row iterates values)


@dataclass(frozen=True)
class RunSpec:
    """Everything that describes a run before it starts (HELM-style).

    Attributes:
        stage: which stage runs.
        model: the model as the user named it.
        outputs: the parameters that define the outputs; their hash is the run's
            ``config_key``, so rerunning the same command finds its earlier work.
        settings: other parameters worth recording (batch size, device, concurrency) that do
            not change the outputs. Never API keys: name the environment variable instead.
        label_policy: which MMVP labels the run uses.
        smoke: the model has random weights; its numbers mean nothing.
        name: the run's id; defaults to ``<stage>-<model>-<config_key[:8]>``.
    """

    stage: Stage
    model: str
    outputs: Mapping[str, Any]
    settings: Mapping[str, Any] = field(default_factory=dict)
    label_policy: LabelPolicy = "corrected"
    catalogue_sha256: str | None = None
    smoke: bool = False
    command: str | None = None
    name: str | None = None

    @property
    def config_key(self) -> str:
        """The hash of ``stage``, ``model`` and ``outputs``."""
        return config_key({"stage": self.stage, "model": self.model, **self.outputs})

    @property
    def run_id(self) -> str:
        """The run's id: its name, or one derived from the stage, model and config."""
        return self.name or f"{self.stage}-{slug(self.model)}-{self.config_key[:8]}"


@dataclass(frozen=True)
class RunRecord:
    """A stored run."""

    run_id: str
    stage: str
    model: str
    smoke: int
    config_key: str
    config_json: str
    label_policy: str
    catalogue_sha256: str | None
    versions_json: str
    command: str | None
    status: str
    summary_json: str
    started_at: str
    ended_at: str | None

    @property
    def config(self) -> dict[str, Any]:
        """The run's parameters (``outputs`` and ``settings`` merged)."""
        value: dict[str, Any] = json.loads(self.config_json)
        return value

    @property
    def summary(self) -> dict[str, Any]:
        """What the run reported when it ended (counts, time)."""
        value: dict[str, Any] = json.loads(self.summary_json)
        return value


@dataclass(frozen=True)
class ImageRecord:
    """One generated image (or a failed or refused attempt at one).

    Attributes:
        path: relative to the workspace; None when no file was made.
        status: ``ok``; ``failed`` (retried next run); ``refused`` (the model declined, with
            the reason in ``error``); ``external`` (graded elsewhere, e.g. an imported sheet).
    """

    image_id: str
    run_id: str
    config_key: str
    question_index: int
    prompt_kind: PromptKind
    sample: int
    prompt: str
    seed: int | None
    status: ImageStatus
    path: str | None = None
    error: str | None = None
    params_json: str = "{}"
    created_at: str = field(default_factory=utc_now)


@dataclass(frozen=True)
class ResponseRecord:
    """One raw VLM reply to one question about one image.

    Attributes:
        image_key: ``mmvp`` for the benchmark's own image, else the generated image's id.
        input_path: the copy of the image the model saw, relative to the workspace.
        text: the reply text, verbatim; None when the request failed.
        raw_path: the verbatim API body, relative to the workspace.
    """

    response_id: str
    run_id: str
    config_key: str
    question_index: int
    image_key: str
    prompt: str
    status: ResponseStatus
    sample: int = 0
    image_id: str | None = None
    input_path: str | None = None
    text: str | None = None
    raw_path: str | None = None
    error: str | None = None
    latency_s: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    request_json: str = "{}"
    created_at: str = field(default_factory=utc_now)


@dataclass(frozen=True)
class VerdictRecord:
    """One judgement of an image or of a response, by a person or a program.

    Exactly one of ``image_id`` and ``response_id`` is set. Image values: ``correct``,
    ``incorrect``, ``cant_tell``, ``undecided``; response values: the option chosen (``a``,
    ``b``), ``undecided`` or ``no_answer``.
    """

    source: str
    value: str
    image_id: str | None = None
    response_id: str | None = None
    run_id: str | None = None
    rubric_version: str | None = None
    comment: str | None = None
    detail_json: str = "{}"
    created_at: str = field(default_factory=utc_now)
    verdict_id: int | None = None


# --- the store -------------------------------------------------------------------------------


class Store:
    """A workspace folder: the database and the files.

    Args:
        root: the folder; created (with the database) unless ``create`` is False.
        create: when False, a missing workspace is a :class:`UserError`.
    """

    def __init__(self, root: str | Path = DEFAULT_STORE, *, create: bool = True) -> None:
        self.root = Path(root)
        self.db_path = self.root / DATABASE_NAME
        if not self.db_path.is_file():
            if not create:
                raise UserError(
                    f"no amvicc workspace at {self.root} (no {DATABASE_NAME}); "
                    "pass --store DIR or run `amvicc generate` / `amvicc answer` first"
                )
            self.root.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._migrate()

    # connections and transactions

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

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _migrate(self) -> None:
        conn = self.connection()
        conn.execute("PRAGMA journal_mode = WAL")
        while True:
            with self.transaction():
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                if version > SCHEMA_VERSION:
                    raise UserError(
                        f"workspace {self.root} has schema version {version}, newer than this "
                        f"amvicc understands ({SCHEMA_VERSION}); upgrade amvicc"
                    )
                if version == SCHEMA_VERSION:
                    return
                for statement in MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {version + 1}")

    @property
    def schema_version(self) -> int:
        """The database's schema version."""
        return int(self.connection().execute("PRAGMA user_version").fetchone()[0])

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
                        started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)""",
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
        return _from_row(RunRecord, row)

    def runs(self, *, stage: Stage | None = None, model: str | None = None) -> list[RunRecord]:
        """Stored runs, oldest first, optionally of one stage or model."""
        query = "SELECT * FROM runs WHERE (? IS NULL OR stage = ?) AND (? IS NULL OR model = ?)"
        rows = self.connection().execute(
            query + " ORDER BY started_at, run_id", (stage, stage, model, model)
        )
        return [_from_row(RunRecord, r) for r in rows]

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
        return [_from_row(ImageRecord, r) for r in rows]

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
        return _from_row(ImageRecord, row)

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
        return [_from_row(ResponseRecord, r) for r in rows]

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
        ``a``, ``b`` or ``no_answer``; one never graded at all is not in the queue.
        """
        rows = self.connection().execute(
            """SELECT r.* FROM current_responses r
            WHERE r.status = 'ok'
              AND EXISTS (SELECT 1 FROM verdicts v WHERE v.response_id = r.response_id)
              AND NOT EXISTS (SELECT 1 FROM current_verdicts v WHERE v.response_id = r.response_id
                              AND v.value IN ('a', 'b', 'no_answer'))
            ORDER BY r.question_index, r.image_key, r.sample"""
        )
        return [_from_row(ResponseRecord, r) for r in rows]

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
                _check_verdict(verdict)
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
        return [_from_row(VerdictRecord, r) for r in rows]

    # data frames for analysis and notebooks

    def frame(self, query: str, params: Sequence[Any] = ()) -> pd.DataFrame:
        """Any SQL query as a DataFrame."""
        import pandas as pd

        return pd.read_sql_query(query, self.connection(), params=list(params))

    def runs_frame(self) -> pd.DataFrame:
        """One row per run."""
        return self.frame("SELECT * FROM runs ORDER BY started_at, run_id")

    def images_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per image, with its run's ``model``, ``stage`` and ``smoke`` flag."""
        table = "current_images" if current else "images"
        return self.frame(
            f"SELECT i.*, r.model, r.smoke FROM {table} i JOIN runs r USING (run_id) "
            "ORDER BY r.model, i.question_index, i.prompt_kind, i.sample"
        )

    def responses_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per response, with its run's ``model``, ``label_policy`` and ``smoke``."""
        table = "current_responses" if current else "responses"
        return self.frame(
            f"SELECT x.*, r.model, r.label_policy, r.smoke FROM {table} x "
            "JOIN runs r USING (run_id) ORDER BY r.model, x.question_index, x.image_key, x.sample"
        )

    def verdicts_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per verdict (by default each source's latest per subject)."""
        table = "current_verdicts" if current else "verdicts"
        return self.frame(f"SELECT * FROM {table} ORDER BY verdict_id")

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


def _check_verdict(verdict: VerdictRecord) -> None:
    allowed = IMAGE_VERDICTS if verdict.image_id is not None else ANSWER_VERDICTS
    if verdict.value not in allowed:
        raise ValueError(f"verdict value {verdict.value!r} is not one of {', '.join(allowed)}")
