"""What the later stages ask the workspace: typed reads for grading, scoring, importing, reports.

Every question a stage puts to the database is a method here, named for what it returns, so
the SQL (and the rule behind the ``current_*`` views: the newest row per slot wins) stays in
:mod:`amvicc.store`. Reads that serve pandas code return DataFrames; the others return records.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Literal, get_args

from amvicc.catalogue import PromptKind
from amvicc.store.database import Database, tuples_frame
from amvicc.store.image_codes import (
    ImageSlots,
    ImageVerdictCodes,
    latest_per_image_source,
    newest_per_slot,
)
from amvicc.store.records import (
    ImageRecord,
    ResponseRecord,
    VerdictRecord,
    VerdictRow,
    record_from_row,
)
from amvicc.store.schema import ImageStatus, ImageVerdictValue
from amvicc.store.sources import HUMAN_SOURCE_PREFIXES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

VerdictSubject = Literal["image", "response"]

# Ids per ``IN (...)`` list: under SQLite's oldest limit on bound parameters (999).
CHUNK = 500
# Verdict ids per bulk read of image verdicts: bounds the text SQLite writes (some 20 MB).
VERDICTS_PER_READ = 1 << 20
# Up to this many subjects, latest_verdict_values looks them up rather than reads all verdicts.
FEW_SUBJECTS = 4 * CHUNK

# Every verdict row with what it judged (the verdict export; see verdict_history_frame).
VERDICT_HISTORY_QUERY = """
SELECT v.verdict_id, v.created_at, v.source, v.value, v.comment, v.rubric_version,
       CASE WHEN v.image_id IS NOT NULL THEN 'image' ELSE 'response' END AS subject,
       v.image_id, v.response_id,
       COALESCE(i.run_id, r.run_id) AS subject_run_id,
       runs.model AS model,
       COALESCE(i.question_index, r.question_index) AS question_index,
       i.prompt_kind, COALESCE(i.sample, r.sample) AS sample, r.image_key,
       v.run_id AS verdict_run_id, v.detail_json,
       v.verdict_id IN (SELECT verdict_id FROM current_verdicts) AS current
FROM verdicts v
LEFT JOIN images i ON i.image_id = v.image_id
LEFT JOIN responses r ON r.response_id = v.response_id
LEFT JOIN runs ON runs.run_id = COALESCE(i.run_id, r.run_id)
ORDER BY v.verdict_id
"""


@dataclass(frozen=True)
class RunCounts:
    """What a run has made so far: items done and items failed (retried by a rerun).

    Responses count by their current row per slot (``ok`` done, ``error`` failed); images by
    theirs (``ok``, ``refused`` and ``external`` done, ``failed`` failed); a run that made
    neither (an OCR judge) counts the verdicts it gave as done.
    """

    done: int = 0
    failed: int = 0


@dataclass(frozen=True)
class SeedRange:
    """The per-image seeds a run recorded: how many distinct ones, the lowest and highest."""

    count: int
    low: int
    high: int


class Queries(Database):
    """The typed reads of a workspace database that stages other than the writers need."""

    # runs

    def run_exists(self, run_id: str) -> bool:
        """Whether a run with this id is stored.

        :meth:`amvicc.store.Store.run` raises on an unknown id (with the known runs listed);
        an import asks first, to tell a new sheet from one imported before.
        """
        row = self.connection().execute("SELECT 1 FROM runs WHERE run_id = ?", (run_id,))
        return row.fetchone() is not None

    def run_counts(self) -> dict[str, RunCounts]:
        """Items done and failed per run id (runs that made nothing are absent).

        What ``amvicc runs`` lists beside each run, so a user can tell a finished run from one
        to resume before choosing which to challenge or report.
        """
        rows = self.connection().execute(
            """SELECT run_id, SUM(done), SUM(failed), SUM(verdicts) FROM (
                SELECT run_id, status = 'ok' AS done, status = 'error' AS failed, 0 AS verdicts
                    FROM current_responses
                UNION ALL
                SELECT run_id, status IN ('ok', 'refused', 'external'), status = 'failed', 0
                    FROM current_images
                UNION ALL
                SELECT run_id, 0, 0, 1 FROM current_verdicts WHERE run_id IS NOT NULL
            ) GROUP BY run_id"""
        )
        counts: dict[str, RunCounts] = {}
        for run_id, done, failed, verdicts in rows:
            made = int(done) + int(failed)
            counts[run_id] = RunCounts(int(done) if made else int(verdicts), int(failed))
        return counts

    def challenge_replies(self, config_keys: Sequence[str], image_key: str) -> pd.DataFrame:
        """The current second-turn reply of each slot of these challenge configurations.

        Columns ``response_id``, ``parent_response_id`` (the first-turn reply it follows),
        ``config_key``, ``question_index``, ``sample`` and ``status``, as Python objects: what
        the report pairs with the first turns' verdicts to count capitulations and corrections.
        """
        columns = [
            "response_id",
            "parent_response_id",
            "config_key",
            "question_index",
            "sample",
            "status",
        ]
        return self._object_frame(
            f"SELECT {', '.join(columns)} FROM current_responses "
            f"WHERE image_key = ? AND config_key IN ({_marks(config_keys)})",
            [image_key, *config_keys],
            columns,
        )

    def image_seed_ranges(self, run_ids: Sequence[str] | None = None) -> dict[str, SeedRange]:
        """The seeds each of these runs gave its images, by run id (runs without seeds absent).

        The report's methods section states how images were seeded without listing every seed.
        ``run_ids`` None: every run's, in one scan of the images table, which costs less than
        reaching most of its rows through the run index.
        """
        ranges: dict[str, SeedRange] = {}
        if run_ids is None:
            rows = self.connection().execute(
                "SELECT run_id, COUNT(DISTINCT seed), MIN(seed), MAX(seed) FROM images "
                "NOT INDEXED WHERE seed IS NOT NULL GROUP BY run_id"
            )
            return {r[0]: SeedRange(int(r[1]), int(r[2]), int(r[3])) for r in rows}
        for chunk in _chunks(run_ids):
            rows = self.connection().execute(
                "SELECT run_id, COUNT(DISTINCT seed), MIN(seed), MAX(seed) FROM images "
                f"WHERE seed IS NOT NULL AND run_id IN ({_marks(chunk)}) GROUP BY run_id",
                chunk,
            )
            ranges.update({r[0]: SeedRange(int(r[1]), int(r[2]), int(r[3])) for r in rows})
        return ranges

    # images and responses

    def existing_image_ids(self, image_ids: Sequence[str]) -> set[str]:
        """Which of these image ids are stored (in any run, current or superseded).

        An imported grade sheet names its images by derived ids; only the ones not yet stored
        are added.
        """
        found: set[str] = set()
        for chunk in _chunks(image_ids):
            rows = self.connection().execute(
                f"SELECT image_id FROM images WHERE image_id IN ({_marks(chunk)})", chunk
            )
            found.update(r[0] for r in rows)
        return found

    def images_by_id(self, image_ids: Sequence[str]) -> dict[str, ImageRecord]:
        """The stored images with these ids, by id (unknown ids are absent).

        For the few items a report shows in full (its failure gallery).
        """
        found: dict[str, ImageRecord] = {}
        for chunk in _chunks(image_ids):
            rows = self.connection().execute(
                f"SELECT * FROM images WHERE image_id IN ({_marks(chunk)})", chunk
            )
            found.update((r["image_id"], record_from_row(ImageRecord, r)) for r in rows)
        return found

    def stored_image_paths(self) -> dict[str, str]:
        """Every stored image's workspace file, by id (images without a file absent).

        The report's pair explorer thumbnails every first-sample image: one scan of the
        images table costs less than looking tens of thousands of ids up by key.
        """
        rows = self.connection().execute("SELECT image_id, path FROM images WHERE path IS NOT NULL")
        return dict(rows.fetchall())

    def responses_by_id(self, response_ids: Sequence[str]) -> dict[str, ResponseRecord]:
        """The stored responses with these ids, by id (unknown ids are absent).

        For the few answers a report shows in full (its failure gallery).
        """
        found: dict[str, ResponseRecord] = {}
        for chunk in _chunks(response_ids):
            rows = self.connection().execute(
                f"SELECT * FROM responses WHERE response_id IN ({_marks(chunk)})", chunk
            )
            found.update((r["response_id"], record_from_row(ResponseRecord, r)) for r in rows)
        return found

    def done_image_prompts(self, config_key: str) -> dict[tuple[int, str, int], str]:
        """The prompt each slot was made from, for the slots already made for a configuration.

        What :meth:`amvicc.store.Store.done_image_slots` counts as made (refusals included),
        with the prompt, so that a slot whose catalogue prompt changed is made again.
        """
        rows = self.connection().execute(
            "SELECT question_index, prompt_kind, sample, prompt FROM current_images "
            "WHERE config_key = ? AND status IN ('ok', 'refused', 'external')",
            (config_key,),
        )
        return {(r[0], r[1], r[2]): r[3] for r in rows}

    def images_fingerprint(self) -> tuple[int, int]:
        """A cheap marker that changes whenever an image or a run is added.

        (Newest image row, number of runs): the scoring app polls it on each page and reloads
        its images only when it changed.
        """
        row = (
            self.connection()
            .execute("SELECT COALESCE(MAX(rowid), 0), (SELECT COUNT(*) FROM runs) FROM images")
            .fetchone()
        )
        return int(row[0]), int(row[1])

    # verdicts

    def latest_verdicts_on(self, subject_ids: Sequence[str]) -> list[VerdictRecord]:
        """Each source's latest verdict on each of these images or responses, oldest first.

        The ``current_verdicts`` view restricted to a few subjects, read through the indexes
        instead of grouping every verdict of the workspace (the report's gallery shows them).
        """
        rows: list[VerdictRecord] = []
        for chunk in _chunks(list(dict.fromkeys(subject_ids)), CHUNK // 2):  # each id twice
            marks = _marks(chunk)
            rows += [
                record_from_row(VerdictRecord, r)
                for r in self.connection().execute(
                    f"SELECT * FROM verdicts WHERE image_id IN ({marks}) "
                    f"OR response_id IN ({marks})",
                    [*chunk, *chunk],
                )
            ]
        return latest_per_source(sorted(rows, key=_verdict_order))

    def latest_verdicts_by_response(self, run_id: str) -> dict[str, list[VerdictRecord]]:
        """Each source's latest verdict on each response of a run, oldest first, by response id.

        What grading needs to decide every response of a run: one indexed query on the
        verdicts table, instead of one pass of the ``current_verdicts`` view per response.
        """
        rows = self.connection().execute(
            "SELECT v.* FROM verdicts v JOIN responses r ON v.response_id = r.response_id "
            "WHERE r.run_id = ? ORDER BY v.verdict_id",
            (run_id,),
        )
        grouped: dict[str, list[VerdictRecord]] = {}
        for verdict in latest_per_source(record_from_row(VerdictRecord, r) for r in rows):
            grouped.setdefault(verdict.response_id or "", []).append(verdict)
        return grouped

    def latest_image_values(self, source: str, image_ids: Sequence[str]) -> dict[str, str]:
        """One source's latest verdict value on each of these images (unjudged ones absent).

        An import compares a sheet with what the same sheet said before, to add only changes.
        """
        latest: dict[str, str] = {}
        for chunk in _chunks(image_ids):
            rows = self.connection().execute(
                "SELECT image_id, value FROM current_verdicts WHERE source = ? "
                f"AND image_id IN ({_marks(chunk)})",
                [source, *chunk],
            )
            latest.update({r[0]: r[1] for r in rows})
        return latest

    def latest_response_values(self, source: str, response_ids: Sequence[str]) -> dict[str, str]:
        """One source's latest verdict value on each of these responses (unjudged ones absent).

        An import of graded answers compares the file's grades with what it said before, to add
        only changes (and to count them on a dry run).
        """
        latest: dict[str, str] = {}
        for chunk in _chunks(response_ids):
            rows = self.connection().execute(
                "SELECT response_id, value FROM current_verdicts WHERE source = ? "
                f"AND response_id IN ({_marks(chunk)})",
                [source, *chunk],
            )
            latest.update({r[0]: r[1] for r in rows})
        return latest

    def rubric_versions(self) -> dict[str, tuple[str, ...]]:
        """The rubric versions each verdict source used, sorted, by source.

        The report's methods section names the rubric behind each judge's verdicts.
        """
        # NOT INDEXED: through the source index SQLite reaches every row out of order, which
        # takes five times as long as scanning the table.
        rows = self.connection().execute(
            "SELECT DISTINCT source, rubric_version FROM verdicts NOT INDEXED "
            "WHERE rubric_version IS NOT NULL"
        )
        found: dict[str, set[str]] = {}
        for source, version in rows:
            found.setdefault(source, set()).add(version)
        return {source: tuple(sorted(versions)) for source, versions in found.items()}

    def newest_verdict_id(self) -> int:
        """The largest verdict id stored (0 when there are none).

        Verdict ids only grow, and writers are serialised by SQLite, so once id N is visible
        every smaller id is committed: a reader that follows the verdicts reads up to a fixed
        N and never skips a row that commits later.
        """
        row = self.connection().execute("SELECT COALESCE(MAX(verdict_id), 0) FROM verdicts")
        return int(row.fetchone()[0])

    def verdict_rows_for_rating(self, after: int, upto: int) -> list[VerdictRow]:
        """The verdicts that decide who rates what, with ids in ``(after, upto]``, oldest first.

        People's image verdicts (raters, grade sheets, adjudicators) and every answer verdict:
        what the scoring app's queues follow. Automatic image judges are left out.
        """
        people = " OR ".join("source GLOB ?" for _ in HUMAN_SOURCE_PREFIXES)
        rows = self.connection().execute(
            "SELECT verdict_id, image_id, response_id, source, value, comment FROM verdicts "
            f"WHERE verdict_id > ? AND verdict_id <= ? AND (response_id IS NOT NULL OR {people}) "
            "ORDER BY verdict_id",
            (after, upto, *(f"{prefix}*" for prefix in HUMAN_SOURCE_PREFIXES)),
        )
        return [VerdictRow(*row) for row in rows]

    # DataFrames for analysis, reports and notebooks

    def runs_frame(self, *, stages: Sequence[str] | None = None) -> pd.DataFrame:
        """One row per run, oldest first; only runs of ``stages`` when given."""
        if stages is None:
            return self._frame("SELECT * FROM runs ORDER BY started_at, run_id")
        return self._frame(
            f"SELECT * FROM runs WHERE stage IN ({_marks(stages)}) ORDER BY started_at, run_id",
            stages,
        )

    def images_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per image, with its run's ``model``, ``stage`` and ``smoke`` flag."""
        table = "current_images" if current else "images"
        return self._frame(
            f"SELECT i.*, r.model, r.smoke FROM {table} i JOIN runs r USING (run_id) "
            "ORDER BY r.model, i.question_index, i.prompt_kind, i.sample"
        )

    def responses_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per response, with its run's ``model``, ``label_policy`` and ``smoke``."""
        table = "current_responses" if current else "responses"
        return self._frame(
            f"SELECT x.*, r.model, r.label_policy, r.smoke FROM {table} x "
            "JOIN runs r USING (run_id) ORDER BY r.model, x.question_index, x.image_key, x.sample"
        )

    def verdicts_frame(self, *, current: bool = True) -> pd.DataFrame:
        """One row per verdict (by default each source's latest per subject)."""
        table = "current_verdicts" if current else "verdicts"
        return self._frame(f"SELECT * FROM {table} ORDER BY verdict_id")

    def verdict_history_frame(self) -> pd.DataFrame:
        """Every verdict row, history included, with what it judged; oldest first.

        Columns: the verdict's own (``verdict_id``, ``created_at``, ``source``, ``value``,
        ``comment``, ``rubric_version``, ``detail_json``, ``verdict_run_id``), its subject
        (``subject`` is ``image`` or ``response``, ``image_id``, ``response_id``) and the
        subject's ``subject_run_id``, ``model``, ``question_index``, ``prompt_kind``,
        ``sample`` and ``image_key``; ``current`` marks each source's latest on its subject.
        The table ``amvicc score export`` writes.
        """
        frame = self._frame(VERDICT_HISTORY_QUERY)
        frame["current"] = frame["current"].astype(bool)
        return frame

    def current_image_slots(self, config_keys: Sequence[str] | None = None) -> ImageSlots:
        """The current image of each slot of these configurations (None: of every one).

        The newest row of each slot, as integer arrays: every image id is made into a Python
        string once, and nothing else is; prompt kinds, statuses and configurations are codes
        SQLite makes (:mod:`amvicc.store.image_codes`). Read in bulk one configuration at a
        time on the slot index, and the rule of the ``current_images`` view applied on
        integers.
        """
        import numpy as np

        if config_keys is None:
            config_keys = [k for (k,) in self._tuples("SELECT DISTINCT config_key FROM images", [])]
        config_keys = tuple(dict.fromkeys(config_keys))
        kinds, statuses = get_args(PromptKind), get_args(ImageStatus)
        integers = ["rowid", "question_index", _case("prompt_kind", kinds), "sample"]
        integers.append(_case("status", statuses))
        read = [
            self._bulk_columns(
                integers,
                "FROM images WHERE config_key = ?",
                [*kinds, *statuses, key],
                ids="image_id",
            )
            for key in config_keys
        ]
        counts = [len(ids) for _, ids in read]
        image_rows, questions, kind_codes, samples, status_codes = (
            np.concatenate([np.zeros(0, dtype=np.int64), *(columns[i] for columns, _ in read)])
            for i in range(len(integers))
        )
        image_ids = np.array([i for _, ids in read for i in ids], dtype=object)
        config_codes = np.repeat(np.arange(len(config_keys)), counts)
        current = newest_per_slot(image_rows, config_codes, questions, kind_codes, samples)
        return ImageSlots(
            image_rows=image_rows[current],
            image_ids=image_ids[current],
            config_codes=config_codes[current],
            question_indices=questions[current],
            kind_codes=kind_codes[current],
            samples=samples[current],
            status_codes=status_codes[current],
            config_keys=config_keys,
            kinds=kinds,
            statuses=statuses,
        )

    def image_verdict_codes(self) -> ImageVerdictCodes:
        """Each source's latest verdict on every image (the ``current_verdicts`` rule), as codes.

        As integer arrays (:mod:`amvicc.store.image_codes`): a verdict's image is the image's
        row number (:attr:`ImageSlots.image_rows`), which SQLite finds; sources and values are
        codes SQLite makes. No id becomes a Python string. A verdict on an image the table
        lacks is left out. Needs numpy only: a report reads this in a second process while the
        first imports pandas.
        """
        import numpy as np

        # Source by source on the source index (a scan of it took a twentieth of a second).
        sources = tuple(
            s
            for (s,) in self._tuples(
                "WITH RECURSIVE found(source) AS (SELECT min(source) FROM verdicts UNION ALL "
                "SELECT (SELECT min(source) FROM verdicts WHERE source > found.source) "
                "FROM found WHERE found.source IS NOT NULL) "
                "SELECT source FROM found WHERE source IS NOT NULL",
                [],
            )
        )
        values = get_args(ImageVerdictValue)
        if not sources:  # no verdict at all (images generated, none rated yet)
            empty = np.zeros(0, dtype=np.int64)
            return ImageVerdictCodes(empty, empty, empty, empty, sources, values)
        columns = [
            self._verdict_codes_between(sources, values, low, low + VERDICTS_PER_READ)
            for low in range(0, self.newest_verdict_id(), VERDICTS_PER_READ)
        ]
        image_rows, codes, verdict_ids = (np.concatenate(c) for c in zip(*columns, strict=True))
        order = np.argsort(verdict_ids, kind="stable")  # oldest first, whatever SQLite's plan
        # A source first written after the list of sources was read codes -1: left out.
        kept = order[codes[order] >= 0]
        kept = kept[
            latest_per_image_source(image_rows[kept], codes[kept] // len(values), len(sources))
        ]
        return ImageVerdictCodes(
            image_rows=image_rows[kept],
            source_codes=codes[kept] // len(values),
            value_codes=codes[kept] % len(values),
            verdict_ids=verdict_ids[kept],
            sources=sources,
            values=values,
        )

    def _verdict_codes_between(
        self, sources: tuple[str, ...], values: tuple[str, ...], low: int, high: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Image rows, source × value codes (-1: unknown) and ids of some image verdicts.

        Those with ids in (``low``, ``high``]. Two passes rather than a join per verdict:
        each image looks its verdicts up on the ``verdicts_image`` index, which holds their
        source and id (a third of the lookups, none into the table), and one scan of the table
        gives the values, matched by id. In one statement, so that both see the workspace at
        one moment. Two numbers go in one (``a * width + b + 1``): fewer texts to write and
        parse.
        """
        import numpy as np

        joined, valued = self._bulk_column_sets(
            [
                (
                    [
                        f"images.rowid * {len(sources) + 1} "
                        f"+ COALESCE({_case('verdicts.source', sources)}, -1) + 1",
                        "verdicts.verdict_id",
                    ],
                    "FROM images CROSS JOIN verdicts ON verdicts.image_id = images.image_id "
                    "WHERE verdicts.verdict_id > ? AND verdicts.verdict_id <= ?",
                    [*sources, low, high],
                ),
                (
                    [
                        f"verdict_id * {len(values) + 1} + COALESCE({_case('value', values)}, -1) + 1"
                    ],
                    "FROM verdicts WHERE image_id IS NOT NULL "
                    "AND verdict_id > ? AND verdict_id <= ?",
                    [*values, low, high],
                ),
            ]
        )
        (by_image, verdict_ids), (by_id,) = joined[0], valued[0]
        image_rows, source_codes = np.divmod(by_image, len(sources) + 1)
        valued_ids, value_codes = np.divmod(by_id, len(values) + 1)
        # Each value by its verdict's id; a verdict the scan missed has none (-1).
        value_by_id = np.zeros(high - low, dtype=np.int64)
        value_by_id[valued_ids - low - 1] = value_codes
        value = value_by_id[verdict_ids - low - 1] - 1
        codes = np.where(
            (source_codes > 0) & (value >= 0), (source_codes - 1) * len(values) + value, -1
        )
        return image_rows, codes, verdict_ids

    def current_response_slots(self, config_keys: Sequence[str], image_key: str) -> pd.DataFrame:
        """The current response of each slot of these configurations about one image.

        Columns ``response_id``, ``config_key``, ``question_index``, ``sample`` and
        ``status``, as Python objects (see :meth:`current_image_slots`). A report scores
        answers about MMVP's own image (``image_key`` ``mmvp``).
        """
        columns = ["response_id", "config_key", "question_index", "sample", "status"]
        return self._object_frame(
            f"SELECT {', '.join(columns)} FROM current_responses "
            f"WHERE image_key = ? AND config_key IN ({_marks(config_keys)})",
            [image_key, *config_keys],
            columns,
        )

    def image_rows_written(self) -> int:
        """How many image rows were ever written (the newest rowid): a workspace's size, at once."""
        row = self.connection().execute("SELECT MAX(rowid) FROM images").fetchone()
        return int(row[0] or 0)

    def latest_verdict_values(
        self, subject: VerdictSubject, subject_ids: pd.Series | Sequence[str]
    ) -> pd.DataFrame:
        """Each source's latest verdict on these images or responses, oldest first.

        Columns ``subject_id``, ``source``, ``value`` and ``verdict_id``, as Python objects.
        The rule of the ``current_verdicts`` view (the newest row per subject and source),
        applied in pandas: on hundreds of thousands of verdicts that is about twice as fast as
        SQLite's GROUP BY. Comments and rubric versions are left out;
        :meth:`latest_verdicts_on` reads them for the few rows shown. (A report reads its
        image verdicts as codes: :meth:`image_verdict_codes`.)
        """
        import numpy as np
        import pandas as pd

        columns = ["subject_id", "source", "value", "verdict_id"]
        if len(subject_ids) == 0:
            return pd.DataFrame(columns=columns)
        column = "image_id" if subject == "image" else "response_id"
        query = f"SELECT {column}, source, value, verdict_id FROM verdicts WHERE {column} "
        if len(subject_ids) <= FEW_SUBJECTS:
            # A few subjects (a report's answers beside its images): looked up on the index
            # rather than found by reading every verdict.
            read: list[tuple[object, ...]] = []
            for chunk in _chunks(list(dict.fromkeys(subject_ids))):
                read += self._tuples(f"{query} IN ({_marks(chunk)})", chunk)
            read.sort(key=itemgetter(3))
        else:
            read = self._tuples(f"{query} IS NOT NULL ORDER BY verdict_id", [])
        rows = tuples_frame(read, columns)
        # On integer codes: hashing the ids once is the cost; isin and drop_duplicates on the
        # strings would hash them three times.
        wanted = np.asarray(subject_ids, dtype=object)
        codes, known = pd.factorize(np.concatenate([wanted, rows["subject_id"].to_numpy()]))
        subject_codes = codes[len(wanted) :]
        source_codes, sources = pd.factorize(rows["source"].to_numpy())
        keep = (
            ~pd.Series(subject_codes * max(len(sources), 1) + source_codes)
            .duplicated(keep="last")
            .to_numpy()
        )
        asked = np.zeros(len(known), dtype=bool)
        asked[codes[: len(wanted)]] = True
        keep &= asked[subject_codes]
        if keep.all():
            return rows
        return rows[keep].reset_index(drop=True)

    def usage_frame(self, config_keys: Sequence[str] | None = None) -> pd.DataFrame:
        """What these configurations (None: all) asked for, per question: every attempt counts.

        Each request was paid for, so superseded and failed rows are counted too. Images
        graded elsewhere (``external``) cost nothing here and are left out.

        Returns:
            Columns ``config_key``, ``question_index``, ``subject`` (``response`` or
            ``image``), ``requests``, ``failed`` (errors, failed or refused images),
            ``with_usage`` (requests whose route reported token counts), ``prompt_tokens``
            and ``completion_tokens`` (summed over those), as Python objects. Image routes
            report usage in ``params_json``'s ``usage`` (``input_tokens`` /
            ``output_tokens``, or ``prompt_tokens`` / ``completion_tokens``).
        """
        columns = [
            "config_key",
            "question_index",
            "subject",
            "requests",
            "failed",
            "with_usage",
            "prompt_tokens",
            "completion_tokens",
        ]
        chosen = "" if config_keys is None else f"AND config_key IN ({_marks(config_keys)})"
        # JSON is parsed only where "usage" appears: most image routes report none.
        image_in = (
            "CASE WHEN instr(params_json, '\"usage\"') > 0 THEN "
            "COALESCE(json_extract(params_json, '$.usage.input_tokens'), "
            "json_extract(params_json, '$.usage.prompt_tokens')) END"
        )
        image_out = (
            "CASE WHEN instr(params_json, '\"usage\"') > 0 THEN "
            "COALESCE(json_extract(params_json, '$.usage.output_tokens'), "
            "json_extract(params_json, '$.usage.completion_tokens')) END"
        )
        query = f"""
            SELECT config_key, question_index, 'response', COUNT(*), SUM(status = 'error'),
                   COUNT(prompt_tokens), COALESCE(SUM(prompt_tokens), 0),
                   COALESCE(SUM(completion_tokens), 0)
            FROM responses WHERE 1 {chosen} GROUP BY config_key, question_index
            UNION ALL
            SELECT config_key, question_index, 'image', COUNT(*), SUM(status != 'ok'),
                   COUNT({image_in}), COALESCE(SUM({image_in}), 0),
                   COALESCE(SUM({image_out}), 0)
            FROM images WHERE status != 'external' {chosen}
            GROUP BY config_key, question_index
        """
        keys = [] if config_keys is None else list(config_keys)
        return self._object_frame(query, [*keys, *keys], columns)

    def sheet_verdict_details(self, image_ids: Sequence[str]) -> pd.DataFrame:
        """Each grade sheet's latest verdict on these images, with its ``detail_json``.

        What a report needs to find the sheet cells that carried white space (the raw cell
        is in the details), which change what a script comparing raw cells computes.

        Returns:
            Columns ``subject_id``, ``source``, ``value``, ``detail_json``.
        """
        import pandas as pd

        columns = ["subject_id", "source", "value", "detail_json", "verdict_id"]
        # A range on the indexed source column: every ``sheet:...`` source.
        rows = self._object_frame(
            "SELECT image_id, source, value, detail_json, verdict_id FROM verdicts "
            "WHERE source >= 'sheet:' AND source < 'sheet;' AND image_id IS NOT NULL "
            "ORDER BY verdict_id",
            [],
            columns,
        )
        if rows.empty:
            return pd.DataFrame(columns=columns[:4])
        rows = rows[rows["subject_id"].isin(set(image_ids))]
        latest = rows.drop_duplicates(["subject_id", "source"], keep="last")
        return latest[columns[:4]].reset_index(drop=True)


def latest_per_source(verdicts: Iterable[VerdictRecord]) -> list[VerdictRecord]:
    """Of verdicts given oldest first, each source's latest per subject, oldest first.

    The rule of the ``current_verdicts`` view, for verdicts already read.
    """
    latest: dict[tuple[str | None, str | None, str], VerdictRecord] = {}
    for verdict in verdicts:
        key = (verdict.image_id, verdict.response_id, verdict.source)
        latest.pop(key, None)  # re-inserted last: insertion order stays the order of age
        latest[key] = verdict
    return list(latest.values())


def _verdict_order(verdict: VerdictRecord) -> int:
    return verdict.verdict_id or 0


def _chunks(ids: Sequence[str], size: int = CHUNK) -> Iterator[list[str]]:
    for start in range(0, len(ids), size):
        yield list(ids[start : start + size])


def _marks(values: Sequence[object]) -> str:
    return ",".join("?" * len(values))


def _case(column: str, names: Sequence[str]) -> str:
    """SQL that gives ``column``'s place in ``names`` (bound as parameters, in order)."""
    return f"(CASE {column} {' '.join(f'WHEN ? THEN {i}' for i in range(len(names)))} END)"
