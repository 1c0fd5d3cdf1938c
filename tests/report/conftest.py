"""Fixture workspaces for the report tests, built with the store API."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image

from amvicc.catalogue import PromptKind
from amvicc.store import (
    EXTRACTOR_SOURCE,
    ImageRecord,
    ResponseRecord,
    RunRecord,
    RunSpec,
    Store,
    VerdictRecord,
    new_id,
)


def png(color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 64), color).save(buffer, format="PNG")
    return buffer.getvalue()


@dataclass
class Workspace:
    """Adds runs, images, responses and verdicts to a store in a few lines."""

    store: Store
    images: dict[tuple[str, int, str, int], str] = field(default_factory=dict)
    responses: dict[tuple[str, int, int], str] = field(default_factory=dict)

    png = staticmethod(png)

    def igm(self, model: str, *, smoke: bool = False, stage: str = "generate") -> RunRecord:
        spec = RunSpec(
            stage=stage,  # type: ignore[arg-type]
            model=model,
            outputs={"steps": 4, "seed": 7},
            settings={"api_key_env": "OPENAI_API_KEY", "api_key": "sk-should-never-show-0123"},
            smoke=smoke,
            command=f"amvicc generate {model}",
        )
        return self.store.start_run(spec)

    def vlm(self, model: str, *, smoke: bool = False, labels: str = "corrected") -> RunRecord:
        spec = RunSpec(
            stage="answer",
            model=model,
            outputs={"prompt": "mmvp"},
            label_policy=labels,  # type: ignore[arg-type]
            smoke=smoke,
        )
        return self.store.start_run(spec)

    def image(
        self,
        run: RunRecord,
        index: int,
        kind: PromptKind,
        *,
        sample: int = 0,
        status: str = "ok",
        data: bytes | None = None,
    ) -> str:
        image = ImageRecord(
            image_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=index,
            prompt_kind=kind,
            sample=sample,
            prompt=f"prompt {index} {kind}",
            seed=1000 + index,
            status=status,  # type: ignore[arg-type]
        )
        stored = self.store.add_image(image, data)
        self.images[(run.model, index, kind, sample)] = stored.image_id
        return stored.image_id

    def rate(self, image_id: str, *votes: tuple[str, str]) -> None:
        self.store.add_verdicts(
            [VerdictRecord(source=s, value=v, image_id=image_id) for s, v in votes]
        )

    def graded_image(
        self, run: RunRecord, index: int, kind: PromptKind, *votes: tuple[str, str], sample: int = 0
    ) -> str:
        image_id = self.image(run, index, kind, sample=sample)
        self.rate(image_id, *votes)
        return image_id

    def response(
        self,
        run: RunRecord,
        index: int,
        *,
        sample: int = 0,
        status: str = "ok",
        text: str = "(a)",
        image_key: str = "mmvp",
        input_path: str | None = None,
    ) -> str:
        response = ResponseRecord(
            response_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=index,
            image_key=image_key,
            prompt=f"question {index}",
            status=status,  # type: ignore[arg-type]
            sample=sample,
            text=text if status == "ok" else None,
            input_path=input_path,
        )
        self.store.add_response(response)
        self.responses[(run.model, index, sample)] = response.response_id
        return response.response_id

    def answer(
        self,
        run: RunRecord,
        index: int,
        chosen: str,
        *,
        sample: int = 0,
        source: str = EXTRACTOR_SOURCE,
    ) -> str:
        response_id = self.response(run, index, sample=sample, text=f"I think ({chosen})")
        self.store.add_verdict(VerdictRecord(source=source, value=chosen, response_id=response_id))
        return response_id

    def decide(self, response_id: str, *votes: tuple[str, str]) -> None:
        self.store.add_verdicts(
            [VerdictRecord(source=s, value=v, response_id=response_id) for s, v in votes]
        )


@pytest.fixture
def workspace(store: Store) -> Workspace:
    return Workspace(store)


@pytest.fixture(scope="session")
def shared_tmp(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("report")
