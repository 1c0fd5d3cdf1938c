"""Where the shipped catalogue, rubrics and pipeline files are at run time.

They live at the top of the repository (``prompts/``, ``rubrics/``, ``pipelines/``, and
``grades/``: AMVICC's published human grade sheets, example data) so users find and edit them; a wheel carries copies inside the package under ``amvicc/_data`` (see
``pyproject.toml``). A source checkout or an editable install reads the top-level folders.
"""

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from amvicc.files import sweep_leftovers, temporary_path

ResourceName = Literal["prompts", "rubrics", "pipelines", "grades"]

_PACKAGE_DIR = Path(__file__).resolve().parent


def resource_dir(name: ResourceName) -> Path:
    """Return the folder holding the shipped ``name`` files.

    Args:
        name: ``prompts``, ``rubrics``, ``pipelines`` or ``grades``.

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


def build_folder_once(folder: Path, build: Callable[[Path], None], *, complete: str) -> Path:
    """Make ``folder`` with ``build`` unless it is already complete.

    ``build`` writes into a temporary sibling that is renamed into place, so a build killed
    midway, or several processes building at once, never leave a half-written folder: a
    folder counts as complete when the file ``complete`` is in it. A killed build's staging
    folder is removed by the next build.

    Args:
        folder: where the result lives.
        build: writes the folder's content into the path it is given.
        complete: a file ``build`` writes last (or that only a finished build has).
    """
    if (folder / complete).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    sweep_leftovers(folder.parent)  # staging folders of builds that were killed
    staging = temporary_path(folder)
    staging.mkdir()
    try:
        build(staging)
        if folder.is_dir() and not (folder / complete).is_file():
            shutil.rmtree(folder)  # left by an older, unfinished build or by hand
        try:
            os.replace(staging, folder)
        except OSError:
            # Another process renamed its complete copy into place first: keep that one.
            if not (folder / complete).is_file():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder
