"""Where each finished image goes: a PNG carrying its provenance, and its row in the store.

The PNG's text metadata holds the same provenance as the row (``amvicc``: a JSON object with the
run, configuration, prompt, seed, parameters and package versions), so an image copied out of
the workspace still says how it was made. Smoke-test images say so in both places.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from amvicc import __version__
from amvicc.generate.plan import ImageJob
from amvicc.provenance import canonical_json
from amvicc.redaction import redact_config, redact_text
from amvicc.store import ImageRecord, Store, new_id

if TYPE_CHECKING:
    from PIL import Image
    from tqdm import tqdm

log = logging.getLogger(__name__)

SMOKE_LABEL = "SMOKE TEST MODEL: random weights; this image is not a real result"
METADATA_KEY = "amvicc"


@dataclass
class Counts:
    """Outcomes of this process's images."""

    made: int = 0
    failed: int = 0
    refused: int = 0


class ImageSink:
    """Stores images and failed attempts of one run, counting them.

    Args:
        store: the workspace.
        run_id: the run the images belong to.
        config_key: the configuration that defines the images.
        model: the model as the user named it.
        smoke: the model has random weights.
        params: what defines the images besides prompt and seed (model id, revision, pipeline,
            steps, size...), plus where they were made and the package versions.
        progress: advanced by one per stored image or attempt.
        seeded: the model takes the job's seed (API models do not: their seed is None).
        records_rows: write rows to the database as images are made. False in the other
            processes of a launch, which may not open it: they write the image files (atomic
            renames, safe on shared file systems) and keep the rows for the main process
            (:meth:`take_rows`).
    """

    def __init__(
        self,
        store: Store,
        *,
        run_id: str,
        config_key: str,
        model: str,
        smoke: bool,
        params: Mapping[str, Any],
        progress: tqdm[Any] | None = None,
        seeded: bool = True,
        records_rows: bool = True,
    ) -> None:
        self.store = store
        self.run_id = run_id
        self.config_key = config_key
        self.model = model
        self.smoke = smoke
        self.params = redact_config(dict(params))  # a key in an option never reaches a PNG
        self.params_json = canonical_json(self.params)  # the same for every image of the run
        self.progress = progress
        self.seeded = seeded
        self.records_rows = records_rows
        self.counts = Counts()
        self._rows: list[ImageRecord] = []

    def save(
        self, job: ImageJob, image: Image.Image, *, seed: int | None = None, **details: Any
    ) -> ImageRecord:
        """Store a made image; ``details`` (e.g. a revised prompt) join its parameters.

        Args:
            job: the slot the image fills.
            image: the image.
            seed: the seed the model reports it used, when it differs from the job's (an API
                whose seeds have a narrower range); None records the job's seed (or none, for
                a model that takes no seed).
            details: per-image parameters, e.g. the text a chat model sent with the image.
        """
        image_id = new_id()
        used_seed = seed if seed is not None else (job.seed if self.seeded else None)
        params = {**self.params, **details} if details else self.params
        provenance = canonical_json(
            {
                "image_id": image_id,
                "run_id": self.run_id,
                "config_key": self.config_key,
                "model": self.model,
                "smoke_test": self.smoke,
                "question_index": job.prompt.question.index,
                "prompt_kind": job.prompt.kind,
                "sample": job.sample,
                "prompt": job.prompt.text,
                "seed": used_seed,
                "params": params,
            }
        )
        record = self._keep(
            self._record(job, image_id, "ok", None, params, seed=used_seed),
            encode_png(image, provenance, job.prompt.text, smoke=self.smoke),
        )
        self.counts.made += 1
        self._advance()
        return record

    def reject(
        self, job: ImageJob, status: Literal["failed", "refused"], reason: str, **details: Any
    ) -> ImageRecord:
        """Record an attempt that made no image: ``failed`` (retried next run) or ``refused``.

        The reason is redacted first (:func:`amvicc.redaction.redact_text`): it often quotes
        the server's error body, which may repeat the request's key.
        """
        reason = redact_text(reason)
        params = {**self.params, **details} if details else self.params
        record = self._keep(self._record(job, new_id(), status, reason, params))
        if status == "refused":
            self.counts.refused += 1
            log.info("refused: %s sample %s: %s", job.prompt.key, job.sample, reason)
        else:
            self.counts.failed += 1
            log.warning("failed: %s sample %s: %s", job.prompt.key, job.sample, reason)
        self._advance()
        return record

    def take_rows(self) -> list[ImageRecord]:
        """The rows made since the last call that are not in the database yet (and forget them)."""
        rows, self._rows = self._rows, []
        return rows

    def _keep(self, record: ImageRecord, data: bytes | None = None) -> ImageRecord:
        """Store an image: its file, then its row (or keep the row for the main process)."""
        if self.records_rows:
            return self.store.add_image(record, data)
        if data is not None:
            relative = self.store.image_file(record.image_id)
            self.store.write_file(relative, data)
            record = replace(record, path=relative)
        self._rows.append(record)
        return record

    def _record(
        self,
        job: ImageJob,
        image_id: str,
        status: Literal["ok", "failed", "refused"],
        error: str | None,
        params: Mapping[str, Any],
        *,
        seed: int | None = None,
    ) -> ImageRecord:
        return ImageRecord(
            image_id=image_id,
            run_id=self.run_id,
            config_key=self.config_key,
            question_index=job.prompt.question.index,
            prompt_kind=job.prompt.kind,
            sample=job.sample,
            prompt=job.prompt.text,
            seed=seed if seed is not None else (job.seed if self.seeded else None),
            status=status,
            error=error,
            params_json=self.params_json if params is self.params else canonical_json(params),
        )

    def _advance(self) -> None:
        if self.progress is not None:
            self.progress.update(1)


def encode_png(image: Image.Image, provenance: str, prompt: str, *, smoke: bool) -> bytes:
    """The image as PNG bytes with its provenance in text chunks."""
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text(METADATA_KEY, provenance)
    info.add_text("Description", prompt)
    info.add_text("Software", f"amvicc {__version__}")
    if smoke:
        info.add_text("Comment", SMOKE_LABEL)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


def read_provenance(png: bytes) -> dict[str, Any]:
    """The provenance amvicc wrote into a PNG (empty when there is none)."""
    import json

    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        text = getattr(image, "text", {}).get(METADATA_KEY)
    return dict(json.loads(text)) if text else {}
