"""The database's shape: its tables and views, their migrations, and the words its columns hold.

A workspace's schema version is SQLite's ``user_version``; opening a workspace applies the
migrations it lacks (:class:`amvicc.store.Store`), so a workspace made by an older amvicc opens
unchanged. A migration is never edited once released: a change to the schema is a new entry
at the end of :data:`MIGRATIONS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

from amvicc.files import DATABASE_NAME as DATABASE_NAME

DEFAULT_STORE = Path("amvicc-runs")

Stage = Literal["generate", "answer", "challenge", "ladder", "grade", "judge", "score", "import"]
RunStatus = Literal["running", "finished", "failed", "interrupted"]
ImageStatus = Literal["ok", "failed", "refused", "external"]
ResponseStatus = Literal["ok", "error"]
ImageVerdictValue = Literal["correct", "incorrect", "cant_tell", "undecided"]
# ``not_a`` / ``not_b``: a yes/no judge said the reply is not (a) / (b), the answer it was shown
# as correct; which option the reply chose, it did not say (see amvicc.grade.llm_judge).
# ``correct`` / ``incorrect``: a reply to a ladder rung (amvicc.ladder), whose answer is derived
# from the scene, so whether it is right is known when it is graded (the read answer is in the
# verdict's detail).
AnswerVerdictValue = Literal[
    "a", "b", "undecided", "no_answer", "not_a", "not_b", "correct", "incorrect"
]
AuditStratum = Literal["extractor", "llm-judge"]

IMAGE_VERDICTS: tuple[str, ...] = get_args(ImageVerdictValue)
ANSWER_VERDICTS: tuple[str, ...] = get_args(AnswerVerdictValue)
AUDIT_STRATA: tuple[str, ...] = get_args(AuditStratum)
#: Answer verdicts that decide a response (``undecided`` does not).
DECIDING_ANSWERS: tuple[str, ...] = (
    "a",
    "b",
    "no_answer",
    "not_a",
    "not_b",
    "correct",
    "incorrect",
)
#: The verdict values of a reply to a ladder rung.
LADDER_VERDICTS: tuple[str, ...] = ("correct", "incorrect", "undecided", "no_answer")

_VERDICTS_TABLE = """CREATE TABLE verdicts (
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
            CHECK (response_id IS NULL OR value IN (%s))
        )"""
_VERDICT_INDEXES = (
    "CREATE INDEX verdicts_image ON verdicts(image_id, source)",
    "CREATE INDEX verdicts_response ON verdicts(response_id, source)",
    "CREATE INDEX verdicts_source ON verdicts(source)",
)
_CURRENT_VERDICTS = """CREATE VIEW current_verdicts AS
            SELECT verdicts.* FROM verdicts JOIN (
                SELECT MAX(verdict_id) AS latest FROM verdicts
                GROUP BY image_id, response_id, source
            ) ON verdicts.verdict_id = latest"""

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
        _VERDICTS_TABLE % "'a', 'b', 'undecided', 'no_answer'",
        *_VERDICT_INDEXES,
        _CURRENT_VERDICTS,
    ),
    # 2: yes/no judges' "not (a)" / "not (b)" (correctness depends on the label policy, so it is
    # computed when reporting); the human audit sample of automatic decisions.
    (
        "DROP VIEW current_verdicts",
        "ALTER TABLE verdicts RENAME TO verdicts_v1",
        _VERDICTS_TABLE % "'a', 'b', 'undecided', 'no_answer', 'not_a', 'not_b'",
        "INSERT INTO verdicts SELECT * FROM verdicts_v1",
        "DROP TABLE verdicts_v1",
        *_VERDICT_INDEXES,
        _CURRENT_VERDICTS,
        """CREATE TABLE audit_samples (
            response_id TEXT PRIMARY KEY REFERENCES responses(response_id),
            run_id TEXT NOT NULL REFERENCES runs(run_id),
            stratum TEXT NOT NULL CHECK (stratum IN ('extractor', 'llm-judge')),
            value TEXT NOT NULL,
            seed INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX audit_samples_run ON audit_samples(run_id, stratum)",
    ),
    # 3: conditions. A run records what was done to its inputs or conversation (``grain=0.1``,
    # a challenge arm such as ``assertion``; empty for a plain run) and the run it was made
    # from (a challenge's answer run); a second-turn reply records the first-turn reply it
    # follows. Older runs and replies read back with an empty condition and no parent.
    (
        "ALTER TABLE runs ADD COLUMN condition TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE runs ADD COLUMN parent_run_id TEXT REFERENCES runs(run_id)",
        "ALTER TABLE responses ADD COLUMN parent_response_id TEXT "
        "REFERENCES responses(response_id)",
        "CREATE INDEX runs_parent ON runs(parent_run_id)",
    ),
    # 4: shared work. A run records the process that has it running (``host:pid:start``), so
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
    # 5: GRIP's question ladder. A ladder run (stage ``ladder``) stores each rung's reply as a
    # response whose image key names the rung (``rung:3``); its verdicts say ``correct`` or
    # ``incorrect`` outright, since the answer is derived from the scene.
    (
        "DROP VIEW current_verdicts",
        "ALTER TABLE verdicts RENAME TO verdicts_v4",
        _VERDICTS_TABLE
        % "'a', 'b', 'undecided', 'no_answer', 'not_a', 'not_b', 'correct', 'incorrect'",
        "INSERT INTO verdicts SELECT * FROM verdicts_v4",
        "DROP TABLE verdicts_v4",
        *_VERDICT_INDEXES,
        _CURRENT_VERDICTS,
    ),
)
SCHEMA_VERSION = len(MIGRATIONS)
