"""The workspace: the database every stage shares, and the only code that speaks SQL to it.

- :mod:`~amvicc.store.schema`: the tables and views, their migrations, the words columns hold;
- :mod:`~amvicc.store.sources`: who gave a verdict (``human:alice``, ``extractor``, ...);
- :mod:`~amvicc.store.records`: rows as typed records (runs, images, responses, verdicts);
- :mod:`~amvicc.store.database`: connections, transactions and migrations;
- :mod:`~amvicc.store.queries`: the typed reads later stages need (reports, scoring, imports);
- :mod:`~amvicc.store.workspace`: :class:`Store`, the workspace folder: files, writes, reads;
- :mod:`~amvicc.store.leases`: leases on work items (claims, reservations) with expiry, in
  the workspace or, for work outside one, in a folder (:class:`FolderLeases`);
- :mod:`~amvicc.store.claims`: :class:`ClaimFeed`, a to-do list shared with other processes;
- :mod:`~amvicc.store.owners`: which process holds a run or a lease, and whether it is gone;
- :mod:`~amvicc.store.filesystems`: whether a workspace is on a network file system.

Other modules import from here (``from amvicc.store import Store``).
"""

from amvicc.store.claims import CLAIM_TTL_S, ClaimFeed, LeaseBook
from amvicc.store.image_codes import ImageSlots, ImageVerdictCodes
from amvicc.store.leases import FolderLeases
from amvicc.store.queries import RunCounts, SeedRange, VerdictSubject
from amvicc.store.records import (
    AuditSampleRecord,
    ImageRecord,
    ResponseRecord,
    RunRecord,
    RunSpec,
    VerdictRecord,
    VerdictRow,
    new_id,
    slug,
    utc_now,
)
from amvicc.store.schema import (
    ANSWER_VERDICTS,
    AUDIT_STRATA,
    DATABASE_NAME,
    DECIDING_ANSWERS,
    DEFAULT_STORE,
    IMAGE_VERDICTS,
    LADDER_VERDICTS,
    MIGRATIONS,
    SCHEMA_VERSION,
    AnswerVerdictValue,
    AuditStratum,
    ImageStatus,
    ImageVerdictValue,
    ResponseStatus,
    RunStatus,
    Stage,
)
from amvicc.store.sources import (
    ADJUDICATION_PREFIX,
    EXTRACTOR_SOURCE,
    HUMAN_PREFIX,
    HUMAN_SOURCE_PREFIXES,
    JUDGE_PREFIX,
    LLM_JUDGE_PREFIX,
    PROCEDURE_PREFIX,
    SHEET_PREFIX,
    SourceRole,
    adjudication_source,
    human_source,
    image_judge_source,
    is_human_source,
    is_rater_source,
    llm_judge_source,
    procedure_source,
    sheet_source,
    source_rater,
    source_role,
)
from amvicc.store.workspace import Store

__all__ = [
    "ADJUDICATION_PREFIX",
    "ANSWER_VERDICTS",
    "AUDIT_STRATA",
    "CLAIM_TTL_S",
    "DATABASE_NAME",
    "DECIDING_ANSWERS",
    "DEFAULT_STORE",
    "EXTRACTOR_SOURCE",
    "HUMAN_PREFIX",
    "HUMAN_SOURCE_PREFIXES",
    "IMAGE_VERDICTS",
    "JUDGE_PREFIX",
    "LADDER_VERDICTS",
    "LLM_JUDGE_PREFIX",
    "MIGRATIONS",
    "PROCEDURE_PREFIX",
    "SCHEMA_VERSION",
    "SHEET_PREFIX",
    "AnswerVerdictValue",
    "AuditSampleRecord",
    "AuditStratum",
    "ClaimFeed",
    "FolderLeases",
    "ImageRecord",
    "ImageSlots",
    "ImageStatus",
    "ImageVerdictCodes",
    "ImageVerdictValue",
    "LeaseBook",
    "ResponseRecord",
    "ResponseStatus",
    "RunCounts",
    "RunRecord",
    "RunSpec",
    "RunStatus",
    "SeedRange",
    "SourceRole",
    "Stage",
    "Store",
    "VerdictRecord",
    "VerdictRow",
    "VerdictSubject",
    "adjudication_source",
    "human_source",
    "image_judge_source",
    "is_human_source",
    "is_rater_source",
    "llm_judge_source",
    "new_id",
    "procedure_source",
    "sheet_source",
    "slug",
    "source_rater",
    "source_role",
    "utc_now",
]
