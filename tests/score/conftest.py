"""Fixture workspaces for the scoring tests: generation runs with small PNGs, undecided answers,
and a ladder run answered and graded by the real stages."""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from PIL import Image

from amvicc.catalogue import Catalogue
from amvicc.store import (
    EXTRACTOR_SOURCE,
    ImageRecord,
    ResponseRecord,
    RunSpec,
    Store,
    VerdictRecord,
    new_id,
)
from tests.ladder_workspace import HEDGED_COUNT, SECRET_LADDER_VLM, add_ladder_run

if TYPE_CHECKING:
    from amvicc.score.server import ScoringServer

SECRET_MODEL = "secret-model-xyz"
SECRET_VLM = "secret-vlm-abc"


def png_bytes(number: int, size: int = 24) -> bytes:
    """A small PNG whose colour depends on ``number``."""
    colour = ((number * 67) % 256, (number * 131) % 256, (number * 29) % 256)
    buffer = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def add_generation_run(
    store: Store,
    catalogue: Catalogue,
    *,
    model: str = SECRET_MODEL,
    count: int = 6,
    start: int = 0,
    size: int = 24,
) -> tuple[str, list[str]]:
    """A finished generation run with ``count`` images (prompts in catalogue order).

    Returns the run id and the image ids.
    """
    prompts = catalogue.prompts()[start : start + count]
    run = store.start_run(
        RunSpec(
            stage="generate",
            model=model,
            outputs={"fixture": model, "start": start, "count": count},
            catalogue_sha256=catalogue.sha256,
        )
    )
    image_ids = []
    for number, prompt in enumerate(prompts):
        record = ImageRecord(
            image_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=prompt.question.index,
            prompt_kind=prompt.kind,
            sample=0,
            prompt=prompt.text,
            seed=number,
            status="ok",
        )
        store.add_image(record, png_bytes(start + number, size))
        image_ids.append(record.image_id)
    store.finish_run(run.run_id, "finished", {"images": count})
    return run.run_id, image_ids


def add_undecided_answers(
    store: Store,
    catalogue: Catalogue,
    *,
    model: str = SECRET_VLM,
    count: int = 3,
    image_ids: tuple[str, ...] = (),
) -> list[str]:
    """Responses the extractor could not decide: ``count`` about MMVP images, plus one about
    each generated image in ``image_ids``. Returns the response ids."""
    run = store.start_run(
        RunSpec(
            stage="answer",
            model=model,
            outputs={"fixture": model, "count": count, "images": list(image_ids)},
            catalogue_sha256=catalogue.sha256,
        )
    )
    response_ids = []
    subjects: list[tuple[int, str, str | None, str | None]] = []
    for question in catalogue.questions[:count]:
        input_path = f"inputs/{question.index:04d}.png"
        store.write_file(input_path, png_bytes(1000 + question.index))
        subjects.append((question.index, "mmvp", None, input_path))
    for image_id in image_ids:
        image = store.image(image_id)
        subjects.append((image.question_index, image_id, image_id, None))
    for index, image_key, image_id, input_path in subjects:
        response = ResponseRecord(
            response_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=index,
            image_key=image_key,
            image_id=image_id,
            input_path=input_path,
            prompt="Answer with the option's letter.",
            status="ok",
            text=f"Hard to say <b>{index}</b>; maybe both? {{value}} ${{x}}",
        )
        store.add_response(response, b'{"choices": []}')
        store.add_verdict(
            VerdictRecord(EXTRACTOR_SOURCE, "undecided", response_id=response.response_id)
        )
        response_ids.append(response.response_id)
    store.finish_run(run.run_id, "finished")
    return response_ids


@dataclass
class LadderWorkspace:
    """A workspace holding one graded ladder run (see :func:`add_ladder_run`)."""

    store: Store
    run_id: str
    scenes: Path

    @property
    def root(self) -> Path:
        return self.store.root


@pytest.fixture
def ladder_workspace(tmp_path: Path) -> Iterator[LadderWorkspace]:
    add_ladder_run(tmp_path / "ws", tmp_path / "scenes")
    with Store(tmp_path / "ws") as store:
        (run,) = store.runs(stage="ladder")
        yield LadderWorkspace(store, run.run_id, tmp_path / "scenes")


@dataclass
class Workspace:
    """A fixture workspace: one generation run and a few undecided answers."""

    store: Store
    run_id: str
    image_ids: list[str]
    response_ids: list[str]

    @property
    def root(self) -> Path:
        return self.store.root


@pytest.fixture
def workspace(tmp_path: Path, catalogue: Catalogue) -> Iterator[Workspace]:
    with Store(tmp_path / "ws") as store:
        run_id, image_ids = add_generation_run(store, catalogue)
        response_ids = add_undecided_answers(store, catalogue, image_ids=(image_ids[0],))
        yield Workspace(store, run_id, image_ids, response_ids)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Build:
    """The builders above, for tests (conftest modules are not importable in importlib mode)."""

    secret_model = SECRET_MODEL
    secret_vlm = SECRET_VLM
    secret_ladder_vlm = SECRET_LADDER_VLM
    hedged_count = HEDGED_COUNT
    png = staticmethod(png_bytes)
    generation_run = staticmethod(add_generation_run)
    undecided_answers = staticmethod(add_undecided_answers)
    free_port = staticmethod(free_port)
    ladder_run = staticmethod(add_ladder_run)


@pytest.fixture
def build() -> type[Build]:
    return Build


@pytest.fixture
def login_server(workspace: Workspace, catalogue: Catalogue) -> Iterator[ScoringServer]:
    """The scoring app on the fixture workspace, with two logins (alice, bob)."""
    from amvicc.score.desk import ScoringDesk
    from amvicc.score.server import serve

    running = serve(
        ScoringDesk(workspace.store, catalogue),
        port=free_port(),
        auth=[("alice", "pw-a"), ("bob", "pw-b")],
        quiet=True,
    )
    yield running
    running.close()
