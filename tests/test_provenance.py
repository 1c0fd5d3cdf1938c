"""What a run records about its environment."""

from __future__ import annotations

import platform
from importlib import metadata

import pytest

from amvicc import provenance
from amvicc.provenance import TRACKED_PACKAGES, package_versions


def test_package_versions_read_the_metadata_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked_up: list[str] = []
    real = metadata.version

    def counting(name: str) -> str:
        looked_up.append(name)
        return real(name)

    monkeypatch.setattr(metadata, "version", counting)
    provenance._versions.cache_clear()
    first = package_versions()
    assert package_versions() == first and first["python"] == platform.python_version()
    assert first["amvicc"] and first["torch"]
    assert sorted(looked_up) == sorted(TRACKED_PACKAGES)  # each once, not once per run
    first["torch"] = "edited by a caller"
    assert package_versions()["torch"] != "edited by a caller"  # every caller gets a copy
    assert set(package_versions(("numpy", "not-a-package"))) == {"python", "numpy"}
