"""Fixtures for the answering tests: an isolated smoke-model cache, MMVP images, a fake VLM."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import reply_by_index, write_mmvp_images


class Cycle:
    """Replies as real models write them, cycling over the indices."""

    replies = ("(a)", "The answer is (b).", "I can't tell from this image.", "**(b)**")
    values = ("a", "b", "undecided", "b")  # what the extractor must read

    def reply(self, index: int) -> str:
        return self.replies[index % 4]

    def value(self, index: int) -> str:
        return self.values[index % 4]


@pytest.fixture
def cycle() -> Cycle:
    return Cycle()


@pytest.fixture(scope="module", autouse=True)
def _isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Smoke models are built in a temporary cache (once per module); no real key is seen."""
    folder = tmp_path_factory.mktemp("amvicc-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AMVICC_CACHE", str(folder))
        patch.delenv("OPENAI_API_KEY", raising=False)
        yield folder


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(chat=reply_by_index(Cycle().reply)) as fake:
        yield fake


@pytest.fixture
def images(tmp_path: Path) -> Path:
    return write_mmvp_images(tmp_path / "mmvp", range(1, 301))
