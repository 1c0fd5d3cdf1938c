"""The notebook in notebooks/ runs against a small fixture workspace (nbclient)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest
from nbclient import NotebookClient

if TYPE_CHECKING:
    from conftest import Workspace

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "report.ipynb"


@pytest.mark.slow
def test_notebook_draws_the_table_and_heatmap(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    igm = workspace.igm("sd35")
    smoke = workspace.igm("tiny", smoke=True)
    vlm = workspace.vlm("llava")
    for index in (9, 10, 61, 62, 13, 14):
        workspace.graded_image(
            igm, index, "implicit", ("human:a", "correct"), ("judge:ocr:r", "correct")
        )
        workspace.graded_image(smoke, index, "explicit", ("human:a", "incorrect"))
        workspace.answer(vlm, index, "a")
    monkeypatch.setenv("AMVICC_STORE", str(workspace.store.root))
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3").execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs)
    assert "smoke-test models, their numbers mean nothing: tiny" in text
    html = "".join(o.get("data", {}).get("text/html", "") for o in outputs)
    assert "tiny (smoke)" in html and "I Im" in html and "judge:ocr:r" in html
    assert "both_fail" in html and "VLMs pooled (1 model)" in html  # the concordance table
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
