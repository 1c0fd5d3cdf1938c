"""Per-category rubrics: what a correct implicit and a correct explicit image must show.

Each category has one Markdown file with YAML front matter in ``rubrics/`` (``code``, ``name``,
``version``, lists ``implicit``, ``explicit`` and ``failures``) followed by free-form notes for
raters. The scoring UI shows them and the rubric judge puts them in its prompt; every verdict
records :attr:`Rubric.version_id` so a later edit of a rubric is visible in the data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from amvicc.catalogue import CATEGORIES, CATEGORY_BY_CODE, Category, PromptKind
from amvicc.errors import UserError
from amvicc.resources import resource_dir


@dataclass(frozen=True)
class Rubric:
    """The grading criteria of one category.

    Attributes:
        implicit: what a correct implicit image shows (every component of the prompt).
        explicit: what a correct explicit image shows (the feature of the correct answer).
        failures: typical ways images fail in this category.
        notes: free-form guidance for raters (Markdown).
        version: the author's version number from the front matter.
        digest: the first 12 hex digits of the file's sha256.
    """

    category: Category
    version: int
    implicit: tuple[str, ...]
    explicit: tuple[str, ...]
    failures: tuple[str, ...]
    notes: str
    digest: str

    @property
    def version_id(self) -> str:
        """What a verdict records, e.g. ``tx@1:3fa2c1d09b7e``."""
        return f"{self.category.code}@{self.version}:{self.digest}"

    def criteria(self, kind: PromptKind) -> tuple[str, ...]:
        """The criteria for an image made from an implicit or explicit prompt."""
        return self.implicit if kind == "implicit" else self.explicit


def _split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise UserError(f"rubric {path} must start with YAML front matter between '---' lines")
    try:
        _, front, body = text.split("---", 2)
        meta = yaml.safe_load(front)
    except (ValueError, yaml.YAMLError) as err:
        raise UserError(f"rubric {path}: front matter is not valid YAML ({err})") from None
    if not isinstance(meta, dict):
        raise UserError(f"rubric {path}: front matter must be a mapping of fields")
    return meta, body.strip()


def _string_list(meta: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = meta.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise UserError(f"rubric {path}: field {key!r} must be a non-empty list of sentences")
    return tuple(v.strip() for v in value)


def load_rubric(path: Path) -> Rubric:
    """Read one rubric file.

    Raises:
        UserError: the file is malformed; the message names the field.
    """
    raw = path.read_bytes()
    meta, notes = _split_front_matter(raw.decode("utf-8"), path)
    code = str(meta.get("code", path.stem))
    category = CATEGORY_BY_CODE.get(code)
    if category is None:
        raise UserError(f"rubric {path}: unknown category code {code!r}")
    version = meta.get("version")
    if not isinstance(version, int):
        raise UserError(f"rubric {path}: field 'version' must be a whole number")
    return Rubric(
        category=category,
        version=version,
        implicit=_string_list(meta, "implicit", path),
        explicit=_string_list(meta, "explicit", path),
        failures=_string_list(meta, "failures", path),
        notes=notes,
        digest=hashlib.sha256(raw).hexdigest()[:12],
    )


def load_rubrics(folder: str | Path | None = None) -> dict[str, Rubric]:
    """Load the rubric of every category, keyed by category code.

    Args:
        folder: a folder of ``<code>.md`` files; None reads the shipped rubrics.

    Raises:
        UserError: a category has no rubric, or a file is malformed.
    """
    root = Path(folder) if folder is not None else resource_dir("rubrics")
    rubrics = {}
    for category in CATEGORIES:
        path = root / f"{category.code}.md"
        if not path.is_file():
            raise UserError(f"no rubric for category {category.code} ({category.name}): {path}")
        rubrics[category.code] = load_rubric(path)
    return rubrics
