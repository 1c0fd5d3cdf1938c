from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from amvicc.catalogue import Catalogue
from amvicc.store import Store

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session", autouse=True)
def smoke_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Smoke models are built once per test session, in a temporary cache."""
    folder = tmp_path_factory.mktemp("amvicc-cache")
    saved = os.environ.get("AMVICC_CACHE")
    os.environ["AMVICC_CACHE"] = str(folder)
    yield folder
    if saved is None:
        os.environ.pop("AMVICC_CACHE", None)
    else:
        os.environ["AMVICC_CACHE"] = saved


@pytest.fixture
def few(catalogue: Catalogue) -> Catalogue:
    """Questions 1-4 (2 pairs): 8 prompts."""
    return catalogue.select(indices=range(1, 5))


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run ``python -m amvicc.generate ARGS`` in a fresh process (as a user would)."""

    def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        environment = {**os.environ, "HF_HUB_OFFLINE": "1", **env}
        environment.pop("OPENAI_API_KEY", None)
        return subprocess.run(
            [sys.executable, "-m", "amvicc.generate", *args],
            capture_output=True,
            text=True,
            env=environment,
            cwd=REPO,
            timeout=300,
            check=False,
        )

    return run


def pixels(store: Store, **query: Any) -> dict[tuple[int, str, int], np.ndarray]:
    """The current images' pixels by slot."""
    out = {}
    for record in store.images(**query):
        assert record.path is not None
        with Image.open(store.path(record.path)) as image:
            out[(record.question_index, record.prompt_kind, record.sample)] = np.asarray(image)
    return out


@pytest.fixture
def read_pixels() -> Callable[..., dict[tuple[int, str, int], np.ndarray]]:
    return pixels
