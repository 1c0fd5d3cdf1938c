"""The database's shape: its tables and views, their migrations, and the words its columns hold.

A workspace's schema version is SQLite's ``user_version``; opening a workspace applies the
migrations it lacks (:class:`amvicc.store.Store`), so a workspace made by an older amvicc opens
unchanged. A migration is never edited once released: a change to the schema is a new entry
at the end of :data:`MIGRATIONS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

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
    # 2: shared work. A run records the process that has it running (``host:pid:start``), so
    # a run whose process died shows as interrupted; leases let concurrent processes split
    # the work (generate, answer) and hold an image for the rater it is shown to (score).
    (
        "ALTER TABLE runs ADD COLUMN owner TEXT",
        """CREATE TABLE leases (
            scope TEXT NOT NULL,
            item TEXT NOT NULL,
            holder TEXT NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (scope, item, holder)
        )""",
        "CREATE INDEX leases_holder ON leases(scope, holder)",
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
