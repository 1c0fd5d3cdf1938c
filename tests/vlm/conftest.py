"""VLM client tests: smoke models in a temporary cache, no real key (see the root conftest)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module", autouse=True)
def _isolated(isolated_environment: Path) -> Path:
    return isolated_environment
