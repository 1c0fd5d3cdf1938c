from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import reply_by_index, write_mmvp_images

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

# Tests never reach the network: Hugging Face, Gradio analytics and proxies stay off.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
os.environ.setdefault("no_proxy", "127.0.0.1,localhost")


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return load_catalogue()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "ws") as opened:
        yield opened


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


@pytest.fixture(scope="module")
def isolated_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Smoke models are built in a temporary cache (once per module); no real key is seen.

    The answering and VLM tests use it automatically (their conftest files).
    """
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
