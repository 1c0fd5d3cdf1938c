"""A report's second process: the same report, byte for byte, and nothing lost when it fails."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

from amvicc.errors import UserError
from amvicc.report import ReportOptions, build_report, collect_items, parallel, render, run_report
from amvicc.report.build import WAITED_FOR
from amvicc.report.early import READ_AHEAD, EarlyReads, early_reads
from amvicc.report.items import decide_items, select
from amvicc.report.options import ReportFormat
from amvicc.report.sections import SECTION_BY_KEY, SECTIONS, glance
from amvicc.store import Store

if TYPE_CHECKING:
    from conftest import Workspace

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"),
    reason="the second process forks, which amvicc does on Linux only",
)

TIME = re.compile(r"\d{4}-\d{2}-\d{2}T[\d:.]+\+00:00")


def _fill(workspace: Workspace) -> None:
    """Two image models rated by two humans, two VLMs, a smoke-test model: every kind of section."""
    for m, model in enumerate(("sd35", "flux")):
        run = workspace.igm(model)
        for index in range(1, 21):
            for kind in ("implicit", "explicit"):
                good = (index + m + (kind == "explicit")) % 3 != 0
                first = "correct" if good else "incorrect"
                second = first if index % 5 else "cant_tell"
                workspace.graded_image(
                    run, index, kind, ("human:ann", first), ("human:bob", second)
                )
    smoke = workspace.igm("tiny-sd3", smoke=True)
    workspace.graded_image(smoke, 1, "implicit", ("human:ann", "correct"))
    for v, model in enumerate(("qwen", "llava")):
        run = workspace.vlm(model)
        for index in range(1, 21):
            answer = "a" if (index + v) % 4 else "b"
            workspace.answer(run, index, answer)


def _report(workspace: Workspace, fmt: ReportFormat, processes: int) -> str:
    options = ReportOptions(
        format=fmt, bootstrap=200, progress=False, default_file=False, processes=processes
    )
    return TIME.sub("TIME", run_report(options, store=workspace.store).text)


def _forks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record the pid of each child the report forks."""
    children: list[int] = []
    fork = os.fork

    def recorded() -> int:
        pid = fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", recorded)
    return children


def _patch(monkeypatch: pytest.MonkeyPatch, key: str, compute: Any) -> None:
    """Compute section ``key`` with ``compute`` (parts look sections up by key)."""
    monkeypatch.setitem(SECTION_BY_KEY, key, replace(SECTION_BY_KEY[key], compute=compute))


def _no_take_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let the child compute every apart section: the first process, its own sections done,
    would otherwise take over those the child has not started (on a small workspace, often).
    """
    claim = parallel.Claims.claim

    def child_only(self: parallel.Claims, position: int, who: int) -> bool:
        return who == parallel.Claims.CHILD and claim(self, position, who)

    monkeypatch.setattr(parallel.Claims, "claim", child_only)


def _dies_in_a_child(function: Any) -> Any:
    """``function``, except in a forked child, which it ends (as if killed for memory)."""
    parent = os.getpid()

    def dies_in_child(*args: Any) -> Any:
        if os.getpid() != parent:
            os._exit(9)
        return function(*args)

    return dies_in_child


def _reaped(pid: int) -> bool:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("fmt", ["csv", "json", "md", "html"])
def test_two_processes_write_the_report_one_writes(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, fmt: ReportFormat
) -> None:
    _fill(workspace)
    alone = _report(workspace, fmt, processes=1)
    children = _forks(monkeypatch)
    together = _report(workspace, fmt, processes=2)
    # Two read the image slots and verdicts, one the other workspace reads (usage, seeds,
    # rubric versions), one computes (and renders) the apart sections.
    assert len(children) == 4
    assert together == alone
    assert all(_reaped(pid) for pid in children)


@pytest.mark.parametrize("fmt", ["json", "html"])
def test_sections_apart_are_computed_in_the_child(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, fmt: ReportFormat
) -> None:
    """The parent never computes an apart section: it takes the child's data.

    Not even for a page, whose first screen shows the concordance: the parent renders its
    own sections while the child works, and leaves that one for when the data are here.
    """
    _fill(workspace)
    parent = os.getpid()
    computed_here: list[str] = []
    for section in SECTIONS:
        if section.apart:
            compute = section.compute

            def watched(part: Any, compute: Any = compute, key: str = section.key) -> Any:
                if os.getpid() == parent:
                    computed_here.append(key)
                return compute(part)

            _patch(monkeypatch, section.key, watched)
    assert {s.key for s in SECTIONS if s.apart} >= {"concordance", "explorer"}
    _no_take_over(monkeypatch)
    text = _report(workspace, fmt, processes=2)
    assert "concordance" in text
    assert computed_here == []


def test_the_first_screen_rendered_ahead_makes_its_matrices_once(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first screen is rendered while the child computes the concordance its cross-modal
    # line needs: asked again once that is here, it reuses the matrices it made.
    _fill(workspace)
    made: list[tuple[int, str]] = []
    matrix = glance._matrix

    def counted(metrics: Any, modality: str, page: Any) -> Any:
        made.append((id(page.part), modality))
        return matrix(metrics, modality, page)

    monkeypatch.setattr(glance, "_matrix", counted)
    _report(workspace, "html", processes=2)
    # Once per modality for the real models, once for the smoke-test ones.
    assert len(made) == len(set(made)) == 4


def test_the_first_process_takes_over_what_a_slow_child_has_not_started(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The child is stuck on the first apart section; the first process, its own sections
    # done, computes every other apart section itself, from the back, and the report is the
    # one a single process writes.
    _fill(workspace)
    alone = _report(workspace, "html", processes=1)
    parent, computed_here = os.getpid(), []
    for section in SECTIONS:
        if section.apart:
            compute = section.compute

            def watched(part: Any, compute: Any = compute, key: str = section.key) -> Any:
                if os.getpid() == parent:
                    computed_here.append((part.smoke, key))
                elif key == first_key and not part.smoke:
                    time.sleep(3)
                return compute(part)

            _patch(monkeypatch, section.key, watched)
    # In the child's order: those the first process waits for first.
    apart = sorted((s.key for s in SECTIONS if s.apart), key=lambda k: k not in WAITED_FOR)
    first_key = apart[0]
    caplog.set_level("DEBUG", logger="amvicc.report.parallel")
    assert _report(workspace, "html", processes=2) == alone
    expected = [(True, k) for k in reversed(apart)] + [(False, k) for k in reversed(apart[1:])]
    assert computed_here == expected
    assert f"apart: {len(expected)} of {2 * len(apart)} sections taken over here" in caplog.text


def test_claims_give_each_section_to_one_process() -> None:
    # A child claiming from the front and this process from the back, at the same time:
    # every section is claimed once.
    claims = parallel.Claims(400)
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the forked child
        os.close(reader)
        mine = [p for p in range(400) if claims.claim(p, parallel.Claims.CHILD)]
        os.write(writer, json.dumps(mine).encode())
        os._exit(0)
    os.close(writer)
    here = [p for p in reversed(range(400)) if claims.claim(p, parallel.Claims.PARENT)]
    with os.fdopen(reader) as pipe:
        there = json.loads(pipe.read())
    os.waitpid(pid, 0)
    claims.close()
    assert sorted(here + there) == list(range(400))
    assert not set(here) & set(there)


def test_without_a_claims_board_the_child_computes_every_apart_section(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)
    alone = _report(workspace, "md", processes=1)

    def unavailable(name: str) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(os, "memfd_create", unavailable)
    assert _report(workspace, "md", processes=2) == alone


@pytest.mark.parametrize("fmt", ["csv", "html"])
def test_the_child_renders_the_sections_it_computes(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, fmt: ReportFormat
) -> None:
    _fill(workspace)
    rendered_here: list[str] = []
    body, rows = render._body, render._on_catalogue

    def watched_body(section: Any, *args: Any, **kwargs: Any) -> Any:
        rendered_here.append(section.key)
        return body(section, *args, **kwargs)

    def watched_rows(found: Any, part: Any) -> Any:
        rendered_here.append("rows")
        return rows(found, part)

    monkeypatch.setattr(render, "_body", watched_body)
    monkeypatch.setattr(render, "_on_catalogue", watched_rows)
    alone = _report(workspace, fmt, processes=1)
    here_alone = list(rendered_here)
    rendered_here.clear()
    _no_take_over(monkeypatch)
    assert _report(workspace, fmt, processes=2) == alone
    apart = {s.key for s in SECTIONS if s.apart}
    if fmt == "html":
        assert apart & set(here_alone) and not apart & set(rendered_here)
    else:  # the child's sections' rows were rendered there
        assert len(rendered_here) < len(here_alone)


def test_a_user_error_in_the_child_is_raised_in_the_parent(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)

    def unreadable(part: Any) -> Any:
        raise UserError("cannot read prices.yaml: line 3 is not a price")

    _patch(monkeypatch, "usage", unreadable)
    children = _forks(monkeypatch)
    with pytest.raises(UserError, match="line 3 is not a price"):
        _report(workspace, "csv", processes=2)
    assert children and all(_reaped(pid) for pid in children)


def test_a_child_that_dies_costs_time_not_the_report(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _fill(workspace)
    alone = _report(workspace, "csv", processes=1)
    _patch(monkeypatch, "concordance", _dies_in_a_child(SECTION_BY_KEY["concordance"].compute))
    assert _report(workspace, "csv", processes=2) == alone
    assert "second process failed" in caplog.text


def test_an_error_in_the_parent_stops_the_child(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)

    def slow_in_child(part: Any) -> Any:
        time.sleep(60)

    def fails(part: Any) -> Any:
        raise UserError("the parent's section failed")

    _patch(monkeypatch, "concordance", slow_in_child)
    _patch(monkeypatch, "samples", fails)
    children = _forks(monkeypatch)
    with pytest.raises(UserError, match="the parent's section failed"):
        _report(workspace, "csv", processes=2)
    assert children and all(_reaped(pid) for pid in children)


def test_a_small_workspace_is_reported_in_one_process(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)
    children = _forks(monkeypatch)
    options = ReportOptions(format="csv", bootstrap=0, progress=False, default_file=False)
    run_report(options, store=workspace.store)
    assert children == []


def test_slots_and_verdicts_read_in_children_decide_the_same_items(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)
    store = workspace.store
    alone = collect_items(store, ReportOptions(processes=1))
    children = _forks(monkeypatch)
    options = ReportOptions(processes=2)
    with early_reads(store, 2) as early:
        selection = select(store, options)
        together = decide_items(store, options, selection, selection.entries, early=early)
    assert len(children) == 2
    assert early.waited > 0
    pd.testing.assert_frame_equal(together.frame, alone.frame)
    pd.testing.assert_frame_equal(together.image_verdicts, alone.image_verdicts)


@pytest.mark.parametrize("read", ["current_image_slots", "image_verdict_codes"])
def test_a_failed_read_in_a_child_is_made_here(
    workspace: Workspace,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    read: str,
) -> None:
    _fill(workspace)
    store = workspace.store
    alone = _report(workspace, "csv", processes=1)
    monkeypatch.setattr(type(store), read, _dies_in_a_child(getattr(type(store), read)))
    assert _report(workspace, "csv", processes=2) == alone
    assert "second process failed; reading the" in caplog.text


def test_the_workspace_reads_are_made_ahead_in_a_child(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Usage, seeds and rubric versions are read by a child while the items are laid out: the
    # first process, whose sections need them, reads none of them.
    _fill(workspace)
    alone = _report(workspace, "html", processes=1)
    parent, read_here = os.getpid(), []
    for name in READ_AHEAD:
        read = getattr(Store, name)

        def watched(store: Store, *args: Any, read: Any = read, name: str = name) -> Any:
            if os.getpid() == parent:
                read_here.append(name)
            return read(store, *args)

        monkeypatch.setattr(Store, name, watched)
    assert _report(workspace, "html", processes=2) == alone
    assert read_here == []


def test_the_read_ahead_is_waited_for_once_the_sections_child_is_forked(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The sections' child does not need the reads made ahead: the first process forks it
    # before waiting for them (slots, verdicts, read-ahead, sections: four children by then).
    _fill(workspace)
    children = _forks(monkeypatch)
    forked_by_then: list[int] = []
    read_before = EarlyReads.read_before

    def watched(self: EarlyReads) -> dict[str, Any]:
        forked_by_then.append(len(children))
        return read_before(self)

    monkeypatch.setattr(EarlyReads, "read_before", watched)
    _report(workspace, "html", processes=2)
    assert forked_by_then[0] == 4


def test_the_sections_child_leaves_the_read_ahead_to_the_first_process(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A section computed in the second process that needs a read made ahead reads it there:
    # taking the read-ahead's result would leave the first process without it.
    _fill(workspace)
    alone = _report(workspace, "html", processes=1)
    compute = SECTION_BY_KEY["concordance"].compute

    def needs_usage(part: Any) -> Any:
        part.shared_read("usage_frame")
        return compute(part)

    _patch(monkeypatch, "concordance", needs_usage)
    parent, read_here = os.getpid(), []
    usage_frame = Store.usage_frame

    def watched(store: Store, *args: Any) -> Any:
        if os.getpid() == parent:
            read_here.append("usage_frame")
        return usage_frame(store, *args)

    monkeypatch.setattr(Store, "usage_frame", watched)
    assert _report(workspace, "html", processes=2) == alone
    assert read_here == []


def test_a_read_ahead_child_that_dies_costs_time_not_the_report(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _fill(workspace)
    alone = _report(workspace, "md", processes=1)
    monkeypatch.setattr(Store, "rubric_versions", _dies_in_a_child(Store.rubric_versions))
    assert _report(workspace, "md", processes=2) == alone
    assert "second process failed; reading the workspace here" in caplog.text


def test_early_reads_nobody_asked_for_are_stopped(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(workspace)
    children = _forks(monkeypatch)
    with early_reads(workspace.store, 2):
        pass  # a report that failed before reading: the children are not left behind
    assert len(children) == 2 and all(_reaped(pid) for pid in children)


@pytest.mark.parametrize(
    ("processes", "rows", "cores", "busy", "splits"),
    [
        (None, 120_000, 2, 0, True),  # a big workspace on a quiet machine
        (None, 120_000, 2, 2, False),  # every core already busy: the halves would take turns
        (None, 120_000, 1, 0, False),  # one core
        (None, 5_000, 8, 0, False),  # small: forking and pickling cost more than they gain
        (1, 120_000, 8, 0, False),
        (2, 10, 1, 4, True),  # asked for
    ],
)
def test_the_work_is_split_when_it_pays_or_is_asked_for(
    monkeypatch: pytest.MonkeyPatch,
    processes: int | None,
    rows: int,
    cores: int,
    busy: int,
    splits: bool,
) -> None:
    monkeypatch.setattr(parallel, "usable_cores", lambda: cores)
    monkeypatch.setattr(parallel, "busy_elsewhere", lambda: busy)
    assert parallel.second_process_pays(processes, rows) is splits


def _machine(monkeypatch: pytest.MonkeyPatch, load: float, runnable: int) -> None:
    """Two cores, this last minute's load average, and the tasks runnable at this moment."""
    monkeypatch.setattr(os, "getloadavg", lambda: (load, 1.0, 1.0))
    monkeypatch.setattr(parallel, "usable_cores", lambda: 2)
    real = parallel.Path.read_text

    def loadavg(path: Any, *args: Any, **kwargs: Any) -> str:
        if str(path) == "/proc/loadavg":
            return f"{load:.2f} 1.00 1.00 {runnable}/312 4242\n"
        return real(path, *args, **kwargs)

    monkeypatch.setattr(parallel.Path, "read_text", loadavg)


def test_busy_means_running_now_not_a_minute_ago(monkeypatch: pytest.MonkeyPatch) -> None:
    # A quiet moment after a busy minute (the last report's two processes): the load average
    # says busy, the count of runnable tasks says idle, and the work is split.
    _machine(monkeypatch, load=1.9, runnable=1)
    assert parallel.busy_elsewhere() == 0
    assert parallel.second_process_pays(None, 120_000)


def test_a_pipeline_starting_beside_a_quiet_machine_is_not_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `amvicc report | grep | tr`: the other commands are runnable for the instant they start,
    # on a machine idle this last minute; the work is still split.
    _machine(monkeypatch, load=0.2, runnable=4)
    assert parallel.busy_elsewhere() == 0.2
    assert parallel.second_process_pays(None, 120_000)
    # Busy by both counts: one process.
    _machine(monkeypatch, load=2.5, runnable=4)
    assert parallel.busy_elsewhere() == 2.5
    assert not parallel.second_process_pays(None, 120_000)


def test_busy_without_proc_is_the_load_average(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(path: Any, *args: Any, **kwargs: Any) -> str:
        raise FileNotFoundError(path)

    monkeypatch.setattr(parallel.Path, "read_text", missing)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.5, 1.0, 1.0))
    assert parallel.busy_elsewhere() == 1.5


def test_a_child_asked_to_yield_runs_at_a_lower_priority() -> None:
    with parallel.beside(lambda: os.getpriority(os.PRIO_PROCESS, 0), nice=5) as child:
        done, priority = child.result()
    assert done and priority == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 5)


def test_a_report_rendered_ahead_in_one_format_renders_the_others_unchanged(
    workspace: Workspace,
) -> None:
    # The CSV rows rendered ahead (by both processes) are no page's section bodies.
    _fill(workspace)
    options = ReportOptions(bootstrap=200, progress=False, default_file=False, processes=2)
    ahead = build_report(workspace.store, options, prerender=render.prerenderer("csv"))
    plain = build_report(workspace.store, replace(options, processes=1))
    for fmt in ("html", "md", "csv"):
        written = TIME.sub("TIME", render.render_report(ahead, fmt))  # type: ignore[arg-type]
        assert written == TIME.sub("TIME", render.render_report(plain, fmt))  # type: ignore[arg-type]


def test_the_report_imports_where_there_is_no_fcntl() -> None:
    # Windows has no fcntl: the claims board needs it only where a report forks (Linux).
    probe = "import sys; sys.modules['fcntl'] = None; import amvicc.report.build; print('ok')"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.stdout.strip() == "ok", done.stderr
