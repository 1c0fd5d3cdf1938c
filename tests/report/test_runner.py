"""The report stage's runtime settings: the cyclic garbage collector waits until it is done."""

from __future__ import annotations

import gc
from typing import TYPE_CHECKING, Any

import pytest

from amvicc.errors import UserError
from amvicc.report import ReportOptions, run_report
from amvicc.report import runner as runner_module

if TYPE_CHECKING:
    from conftest import Workspace


def test_the_collector_is_paused_while_a_report_is_made_and_resumes_after(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = workspace.igm("sd35")
    for index in (9, 10):
        workspace.graded_image(run, index, "implicit", ("human:ann", "correct"))
    seen = []
    compute = runner_module._compute

    def watched(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return compute(*args)

    monkeypatch.setattr(runner_module, "_compute", watched)
    options = ReportOptions(format="csv", bootstrap=0, progress=False)
    assert gc.isenabled()
    summary = run_report(options, store=workspace.store)
    assert "sd35" in summary.text
    assert seen == [False]
    assert gc.isenabled()


def test_the_collector_resumes_after_a_report_that_fails(
    workspace: Workspace,
) -> None:
    with pytest.raises(UserError, match="nothing to report"):
        run_report(ReportOptions(format="csv", progress=False), store=workspace.store)
    assert gc.isenabled()


def test_a_collector_paused_by_the_caller_stays_paused() -> None:
    gc.disable()
    try:
        with runner_module.cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
