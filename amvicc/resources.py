"""Where the shipped catalogue, rubrics and pipeline files are at run time.

They live at the top of the repository (``prompts/``, ``rubrics/``, ``pipelines/``) so users
find and edit them; a wheel carries copies inside the package under ``amvicc/_data`` (see
``pyproject.toml``). A source checkout or an editable install reads the top-level folders.
"""

import os
from pathlib import Path
from typing import Literal

ResourceName = Literal["prompts", "rubrics", "pipelines"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(name: ResourceName) -> Path:
    """Return the folder holding the shipped ``name`` files.

    Args:
        name: ``prompts``, ``rubrics`` or ``pipelines``.

    Raises:
        FileNotFoundError: the installation is incomplete (neither location exists).
    """
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"amvicc's {name}/ folder is missing from this installation; reinstall amvicc"
    )


def default_catalogue_path() -> Path:
    """The shipped AMVICC catalogue (300 questions, 600 prompts)."""
    return resource_dir("prompts") / "amvicc.csv"


def cache_dir(*parts: str) -> Path:
    """A folder under amvicc's cache (``$AMVICC_CACHE``, else ``~/.cache/amvicc``), created.

    Smoke-test models are built here once and then loaded like any downloaded model.
    """
    root = Path(os.environ.get("AMVICC_CACHE") or Path.home() / ".cache" / "amvicc")
    folder = root.joinpath(*parts)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
