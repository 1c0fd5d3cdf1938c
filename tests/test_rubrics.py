from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from amvicc.catalogue import CATEGORIES
from amvicc.errors import UserError
from amvicc.resources import resource_dir
from amvicc.rubrics import load_rubrics


def test_every_category_has_a_rubric_with_both_kinds() -> None:
    rubrics = load_rubrics()
    assert set(rubrics) == {c.code for c in CATEGORIES}
    for code, rubric in rubrics.items():
        assert rubric.category.code == code
        assert rubric.criteria("implicit") and rubric.criteria("explicit") and rubric.failures
        assert rubric.version_id.startswith(f"{code}@1:")
    assert any("legible" in line for line in rubrics["tx"].explicit)


def test_missing_rubric_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics"
    shutil.copytree(resource_dir("rubrics"), folder)
    (folder / "vp.md").unlink()
    with pytest.raises(UserError, match=r"no rubric for category vp \(Viewpoint and Perspective\)"):
        load_rubrics(folder)


def test_malformed_rubric_names_the_field(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics"
    shutil.copytree(resource_dir("rubrics"), folder)
    text = (folder / "tx.md").read_text().replace("version: 1", "version: one")
    (folder / "tx.md").write_text(text)
    with pytest.raises(UserError, match=r"tx\.md: field 'version'"):
        load_rubrics(folder)
    (folder / "tx.md").write_text("no front matter")
    with pytest.raises(UserError, match="front matter"):
        load_rubrics(folder)


def test_editing_a_rubric_changes_its_version_id(tmp_path: Path) -> None:
    folder = tmp_path / "rubrics"
    shutil.copytree(resource_dir("rubrics"), folder)
    before = load_rubrics(folder)["qc"].version_id
    (folder / "qc.md").write_text((folder / "qc.md").read_text() + "\nCount the legs too.\n")
    assert load_rubrics(folder)["qc"].version_id != before
