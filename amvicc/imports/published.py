"""AMVICC's published grade sheets, shipped as example data, and the names the paper uses.

AMVICC (Basappa et al., 2025) published one human grade sheet per image model (CC0; see
``grades/SOURCE.md``). ``amvicc demo`` imports them first so that its report opens with real
numbers — AMVICC's own image-model table — before the smoke-test part, whose numbers mean
nothing. The models are named as the paper names them, so the report reads like the paper.
"""

from __future__ import annotations

from pathlib import Path

from amvicc.resources import resource_dir

# (file in grades/, the model's name in the paper), in the paper's order.
PUBLISHED_SHEETS: tuple[tuple[str, str], ...] = (
    ("dalle3_grades.csv", "DALL·E 3"),
    ("google_flash_grades.csv", "Gemini 2.5 Flash Image"),
    ("stability_grades.csv", "SD 3.5 Large"),
)


def published_sheets() -> list[tuple[Path, str]]:
    """The shipped sheets' paths with the model each grades, in the paper's order.

    Raises:
        FileNotFoundError: the installation lacks its ``grades/`` folder.
    """
    folder = resource_dir("grades")
    return [(folder / name, model) for name, model in PUBLISHED_SHEETS]
