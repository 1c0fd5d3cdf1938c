"""Procedural paired scenes with exact truth: MMVP's nine categories at any scale.

GRIP's way of building a benchmark: scenes drawn by deterministic code, every answer derived
from the scene, so there is nothing to annotate and no label to get wrong. ``amvicc scenes
build`` writes a catalogue in the project's format, the images and a manifest of every object
(what the pixels show), so every stage runs on it unchanged::

    from pathlib import Path
    from amvicc.scenes import ScenesOptions, run_scenes

    summary = run_scenes(ScenesOptions(out=Path("scenes"), per_category=20, seed=1))
    # scenes/catalogue.csv, scenes/images/<index>.png, scenes/scenes.jsonl
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.scenes.families import FAMILIES
    from amvicc.scenes.options import ScenesOptions, ScenesSummary
    from amvicc.scenes.png import encode_png
    from amvicc.scenes.runner import build_images, run_scenes

_LAZY = {
    "FAMILIES": "amvicc.scenes.families",
    "ScenesOptions": "amvicc.scenes.options",
    "ScenesSummary": "amvicc.scenes.options",
    "build_images": "amvicc.scenes.runner",
    "encode_png": "amvicc.scenes.png",
    "run_scenes": "amvicc.scenes.runner",
}

__all__ = ["FAMILIES", "ScenesOptions", "ScenesSummary", "build_images", "encode_png", "run_scenes"]

__getattr__ = lazy_attributes(__name__, _LAZY)
