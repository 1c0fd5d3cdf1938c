"""What raters judge: generated images, and VLM answers the automatic grader left undecided.

Items carry only what a rater may see. The run (and so the model) an image came from is
deliberately not kept: the scoring app is blind to models, and an item cannot leak what it
does not hold.

Two kinds of answers are audited: replies to an MMVP question (:class:`AnswerItem`: which
option does the reply choose?) and replies to a rung of GRIP's question ladder
(:class:`RungItem`: does the reply give the rung's answer?). Each kind says which verdicts a
rater may give on it (``values``).
"""

from __future__ import annotations

import io
import logging
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import ClassVar

from amvicc.catalogue import Catalogue, Category, Option, PromptKind, Question
from amvicc.errors import UserError
from amvicc.ladder import LEVEL_NAMES, LadderQuestion, response_rung
from amvicc.store import ResponseRecord, RunRecord, Store

log = logging.getLogger(__name__)

#: What an auditor says of an MMVP answer: the option the reply chooses, or that it chooses none.
OPTION_VERDICTS: tuple[str, ...] = ("a", "b", "no_answer")
#: What an auditor says of a ladder reply: it gives the rung's answer, another one, or none.
RUNG_VERDICTS: tuple[str, ...] = ("correct", "incorrect", "no_answer")


@dataclass(frozen=True)
class ImageItem:
    """One generated image to rate.

    Attributes:
        image_id: the image's opaque id (also its file name).
        path: the image file, relative to the workspace.
        question: the MMVP question the prompt was written for.
        kind: ``implicit`` or ``explicit``.
        prompt: the prompt the image was made from, as the generator received it.
    """

    image_id: str
    path: str
    question: Question
    kind: PromptKind
    prompt: str

    @property
    def category(self) -> Category:
        """The question's category (whose rubric applies)."""
        return self.question.category

    @property
    def shows(self) -> Option | None:
        """For an explicit image, the option it must show; None for an implicit one."""
        if self.kind != "explicit" or self.question.explicit_answer is None:
            return None
        return self.question.option(self.question.explicit_answer)


@dataclass(frozen=True)
class AnswerItem:
    """One VLM response to audit: which option did the model choose?

    Attributes:
        response_id: the response's id.
        question: the question the model was asked.
        image_path: the image the model saw, relative to the workspace (None when unknown).
        text: the model's reply, verbatim.
        sampled: drawn from the automatic decisions for audit (not left undecided).
    """

    response_id: str
    question: Question
    image_path: str | None
    text: str
    sampled: bool = False
    values: ClassVar[tuple[str, ...]] = OPTION_VERDICTS


@dataclass(frozen=True)
class RungItem:
    """One reply to a rung of GRIP's question ladder to audit: does it give the rung's answer?

    The rung comes from the reply's own record, not from the catalogue the app serves: a
    ladder run asks about a scene set whose catalogue is not MMVP's, and the rung (question
    and answer, derived from the scene) is all the auditor needs. Showing that answer keeps
    the audit blind: it is the question's truth, not what any grader decided.

    Attributes:
        response_id: the response's id.
        rung: the rung the model was asked.
        image_path: the scene image the model saw, relative to the workspace (None when unknown).
        text: the model's reply, verbatim ("" when it was empty).
        sampled: drawn from the automatic decisions for audit (not left undecided).
    """

    response_id: str
    rung: LadderQuestion
    image_path: str | None
    text: str
    sampled: bool = False
    values: ClassVar[tuple[str, ...]] = RUNG_VERDICTS

    @property
    def level_name(self) -> str:
        """What the rung's level tests (``precise comparison``)."""
        return LEVEL_NAMES[self.rung.level]


#: An item of the audit queue.
AuditItem = AnswerItem | RungItem


def load_image_items(
    store: Store, catalogue: Catalogue, run_ids: Sequence[str] | None = None
) -> tuple[ImageItem, ...]:
    """The current images (status ``ok``) of generation runs.

    Args:
        store: the workspace.
        catalogue: the catalogue the runs were made from.
        run_ids: the runs to score; None scores every generation run made from ``catalogue``
            (others are left out with a warning).

    Raises:
        UserError: a named run is unknown, is not a generation run, or was made from another
            catalogue.
    """
    if run_ids:
        runs = [store.run(run_id) for run_id in dict.fromkeys(run_ids)]
        for run in runs:
            if run.stage != "generate":
                raise UserError(
                    f"run {run.run_id!r} is a {run.stage} run; `amvicc score --run` takes "
                    "generation runs"
                )
            if not _same_catalogue(run, catalogue):
                raise UserError(_catalogue_mismatch(run, catalogue))
    else:
        runs = []
        for run in store.runs(stage="generate"):
            if _same_catalogue(run, catalogue):
                runs.append(run)
            else:
                log.warning("%s; its images are left out", _catalogue_mismatch(run, catalogue))
    items: list[ImageItem] = []
    for run in runs:
        for image in store.images(run_id=run.run_id):
            if image.status != "ok" or image.path is None:
                continue
            items.append(
                ImageItem(
                    image_id=image.image_id,
                    path=image.path,
                    question=_question(catalogue, image.question_index, run),
                    kind=image.prompt_kind,
                    prompt=image.prompt,
                )
            )
    return tuple(items)


def load_answer_items(store: Store, catalogue: Catalogue) -> tuple[AuditItem, ...]:
    """The audit queue: undecided responses and the audit sample of automatic decisions.

    Responses no grader could decide (``Store.undecided_responses``), and the sample drawn
    for audit (``Store.audit_sample_responses``). The sampled items say so (``sampled``),
    never what the program decided: the audit is blind. Responses from runs made from another
    catalogue are left out with a warning. Replies of ladder runs need no catalogue (their
    rung is in their record), so they are offered whatever ``catalogue`` is; one whose record
    holds no readable rung is left out with a warning.
    """
    runs: dict[str, RunRecord] = {}
    items: list[AuditItem] = []
    skipped = broken = 0
    sampled = store.audit_sample_responses()
    drawn = {r.response_id for r in sampled}
    for response in [*store.undecided_responses(), *sampled]:
        run = runs.get(response.run_id)
        if run is None:
            run = runs[response.run_id] = store.run(response.run_id)
        if run.stage == "ladder":
            try:
                rung = response_rung(response)
            except ValueError as err:
                log.debug("%s", err)
                broken += 1
                continue
            items.append(
                RungItem(
                    response_id=response.response_id,
                    rung=rung,
                    image_path=_seen_image(store, response),
                    text=response.text or "",
                    sampled=response.response_id in drawn,
                )
            )
            continue
        if not _same_catalogue(run, catalogue) or response.text is None:
            skipped += 1
            continue
        items.append(
            AnswerItem(
                response_id=response.response_id,
                question=_question(catalogue, response.question_index, run),
                image_path=_seen_image(store, response),
                text=response.text,
                sampled=response.response_id in drawn,
            )
        )
    if skipped:
        log.warning(
            "%d undecided answer(s) come from runs made from another catalogue; serve with that "
            "--catalogue to audit them",
            skipped,
        )
    if broken:
        log.warning(
            "%d ladder repl(ies) have no readable rung in their request record; they are left "
            "out of the audit",
            broken,
        )
    return tuple(items)


def _seen_image(store: Store, response: ResponseRecord) -> str | None:
    """The workspace file of the image the model saw: its input copy, else the generated image."""
    if response.input_path is not None or response.image_id is None:
        return response.input_path
    try:
        return store.image(response.image_id).path
    except KeyError:
        return None


def image_file(store: Store, relative: str | None) -> tuple[Path, str] | None:
    """An image file of the workspace and its MIME type; None when it is missing.

    Only files inside the workspace are returned: a path that leads outside it (``..``, an
    absolute path, a symbolic link out) counts as missing, whatever the database says.
    """
    if not relative:
        return None
    root = store.root.resolve()
    path = (root / relative).resolve()
    if not path.is_relative_to(root) or not path.is_file():
        return None
    mime = mimetypes.guess_type(path.name)[0] or ""
    if not mime.startswith("image/"):
        return None
    return path, mime


# Modes a PNG holds as they are; other images are converted (palettes to RGB or RGBA).
_PNG_MODES = frozenset({"1", "L", "LA", "I;16", "RGB", "RGBA"})


def pixels_only(path: Path) -> bytes:
    """An image file as a rater may see it: a PNG of its pixels and nothing else.

    A generated PNG names its model, endpoint and configuration in text chunks, a photo its
    camera in EXIF or XMP: saved from the page, any of them unblinds the rater. The pixels are
    turned as a viewer turns them (EXIF orientation), then written into a fresh image with no
    text, EXIF, XMP or ICC. Cached per file version (a rater goes back and forth).
    """
    state = path.stat()
    return _pixels_only(str(path), state.st_mtime_ns, state.st_size)


@lru_cache(maxsize=32)
def _pixels_only(path: str, modified: int, size: int) -> bytes:
    from PIL import Image, ImageOps

    with Image.open(path) as opened:
        image = ImageOps.exif_transpose(opened)
    if image.mode not in _PNG_MODES or "transparency" in image.info:
        transparent = image.mode in ("P", "PA", "LA", "RGBA") or "transparency" in image.info
        image = image.convert("RGBA" if transparent else "RGB")
    clean = Image.frombytes(image.mode, image.size, image.tobytes())
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG", compress_level=3)
    return buffer.getvalue()


def _same_catalogue(run: RunRecord, catalogue: Catalogue) -> bool:
    return run.catalogue_sha256 is None or run.catalogue_sha256 == catalogue.sha256


def _catalogue_mismatch(run: RunRecord, catalogue: Catalogue) -> str:
    recorded = (run.catalogue_sha256 or "")[:12]
    return (
        f"run {run.run_id!r} was made from another catalogue (sha256 {recorded}…) than "
        f"{Path(catalogue.source).name}; pass the catalogue it used with --catalogue FILE"
    )


def _question(catalogue: Catalogue, index: int, run: RunRecord) -> Question:
    try:
        return catalogue.question(index)
    except KeyError:
        raise UserError(
            f"run {run.run_id!r} has question {index}, which {Path(catalogue.source).name} "
            "does not; pass the catalogue the run used with --catalogue FILE"
        ) from None
