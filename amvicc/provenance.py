"""What a run records about its environment, and the seeds it derives."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
from collections.abc import Iterable, Mapping
from typing import Any

# The packages whose versions can change an image, a response or a number in a report.
TRACKED_PACKAGES = (
    "amvicc",
    "torch",
    "diffusers",
    "transformers",
    "accelerate",
    "openai",
    "pillow",
    "numpy",
    "pandas",
    "scikit-learn",
    "scipy",
    "gradio",
    "rapidocr",
    "onnxruntime",
)


def package_versions(packages: Iterable[str] = TRACKED_PACKAGES) -> dict[str, str]:
    """Installed versions of ``packages`` (absent ones omitted) and of Python.

    Reads package metadata only, so nothing heavy is imported. The metadata is read once per
    process (each lookup searches ``sys.path`` and parses a ``METADATA`` file: together about
    70 ms, paid by every run a process starts otherwise); the packages a process has imported
    do not change while it runs.
    """
    return dict(_versions(tuple(packages)))


@functools.cache
def _versions(packages: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    from importlib import metadata  # 13 ms to import: only where a run is recorded

    versions = [("python", platform.python_version())]
    for name in packages:
        try:
            versions.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            continue
    return tuple(versions)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no white space: equal values give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def config_key(config: Mapping[str, Any]) -> str:
    """A stable hash of everything that defines a run's outputs (HELM-style cache key)."""
    return hashlib.sha256(canonical_json(dict(config)).encode()).hexdigest()


def derive_seed(base: int, *parts: object) -> int:
    """A seed for one item, independent of batching, sharding and order.

    Args:
        base: the user's ``--seed``.
        parts: what identifies the item, e.g. (question index, prompt kind, sample).

    Returns:
        An integer in [0, 2**63), usable by ``torch.Generator.manual_seed`` and APIs.
    """
    text = ":".join(str(p) for p in (base, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
