from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import amvicc
from amvicc.catalogue import parse_index_ranges
from amvicc.cli import build_parser, load_verbs, main


def test_every_verb_has_help_with_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    for name in load_verbs():
        with pytest.raises(SystemExit) as exit_info:
            main([name, "--help"])
        assert exit_info.value.code == 0
        out = capsys.readouterr().out
        assert "example:" in out and f"amvicc {name}" in out


def test_top_level_help_lists_verbs() -> None:
    text = build_parser().format_help()
    for name in load_verbs():
        assert name in text


def test_prompts_check_on_the_shipped_catalogue(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompts", "check"]) == 0
    out = capsys.readouterr().out
    for line in (
        "questions    300",
        "pairs        150",
        "600 (300 implicit, 300 explicit)",
        "categories   9",
        "rubrics      9 categories",
    ):
        assert line in out


def test_prompts_check_reports_problems_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "index,pair,category_code,category,question,options,answer,implicit_prompt,explicit_prompt\n"
        "1,1,tx,Text,Q?,(a) Yes (b) No,(a),a street,a street\n"
        "3,2,tx,Text,Q?,(a) Yes (b) No,(a),a road,a road with a sign\n"
    )
    assert main(["prompts", "check", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{bad}:2: explicit prompt is identical to the implicit prompt" in out
    assert f"{bad}:3: pair 2 has 1 question(s) (line 3), not 2" in out


def test_prompts_show_lists_a_category(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prompts", "show", "--category", "tx", "--kind", "explicit"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 14
    assert lines[0].split()[:3] == ["9", "tx", "explicit"]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["prompts", "show", "--categories", "zz"], "unknown category 'zz'"),
        (["prompts", "check", "missing.csv"], "catalogue missing.csv does not exist"),
        (["prompts", "show", "--limit", "0"], "must be at least 1"),
        (["prompts", "show", "--index", "5-2"], "not a range"),
        (["nosuchverb"], "invalid choice"),
    ],
)
def test_user_mistakes_are_one_line_and_exit_2(argv: list[str], fragment: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "amvicc", *argv], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 2
    assert fragment in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("name", list(load_verbs()))
def test_every_verb_runs_as_python_m(name: str) -> None:
    module = "amvicc." + name.replace("-", "_")
    proc = subprocess.run(
        [sys.executable, "-m", module, "--help"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert f"usage: amvicc {name}" in proc.stdout


def test_verbs_run_as_modules() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "amvicc.prompts", "check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "questions    300" in proc.stdout


def test_index_ranges() -> None:
    assert parse_index_ranges("1-3,99, 279-280") == {1, 2, 3, 99, 279, 280}


def _probe(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (its imports are its own)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout


def test_building_the_parser_imports_no_heavy_library() -> None:
    """``amvicc --help`` stays fast: verb modules define arguments, stages load on run."""
    heavy = ("torch", "pandas", "gradio", "openai", "transformers", "diffusers", "matplotlib")
    heavy += ("asyncio", "amvicc.extract")  # only commands that call an API or judge need them
    probe = (
        "import sys; from amvicc.cli import build_parser; build_parser(); "
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    assert _probe(probe).strip() == "[]"


def test_a_command_imports_its_own_verb_only() -> None:
    """``amvicc report ...`` builds the report's parser, not every verb's (50 ms a start)."""
    probe = (
        "import sys; from amvicc.cli import build_parser; "
        "args = build_parser('report').parse_args(['report', '--format', 'csv']); "
        "print(args._verb, sorted(m for m in sys.modules if m.startswith('amvicc.cli.')))"
    )
    verb, _, modules = _probe(probe).partition(" ")
    assert verb == "report"
    assert "amvicc.cli.report" in modules
    assert "amvicc.cli.generate" not in modules and "amvicc.cli.prompts" not in modules


def test_a_verbs_help_is_the_same_with_its_parser_alone() -> None:
    def help_of(parser: argparse.ArgumentParser) -> str:
        (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return str(action.choices["report"].format_help())

    assert help_of(build_parser("report")) == help_of(build_parser())


@pytest.mark.parametrize("argv", [["reprot"], ["--help"], ["main"]])
def test_anything_but_a_verb_gets_every_verb(argv: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "amvicc", *argv], capture_output=True, text=True, check=False
    )
    listed = proc.stdout + proc.stderr
    assert all(name in listed for name in ("generate", "report", "prompts", "import-answers"))


def test_the_package_root_imports_its_names_when_first_used() -> None:
    probe = (
        "import sys, amvicc; before = sorted(m for m in ('amvicc.rubrics', 'amvicc.store') "
        "if m in sys.modules); from amvicc import Store, load_rubrics; "
        "print(before, Store.__name__, load_rubrics.__module__, set(amvicc.__all__) <= set(dir(amvicc)))"
    )
    assert _probe(probe).split() == ["[]", "Store", "amvicc.rubrics", "True"]
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        _ = amvicc.nothing  # type: ignore[attr-defined]


EXIT_PROBE = """
import atexit, sys, threading, time
from amvicc.cli.main import exit_now
atexit.register(lambda: print("handler ran", flush=True))
import os
class Finalized:
    def __del__(self, write=os.write):  # bound now: late in a teardown modules are gone
        write(1, b"torn down\\n")
kept = Finalized()  # freed only if the interpreter is torn down
def late():
    time.sleep(0.3)
    print("thread done", flush=True)
if sys.argv[1] != "none":  # a daemon thread does not hold the process, as in Python
    threading.Thread(target=late, daemon=sys.argv[1] == "daemon").start()
print("buffered output", end="")
exit_now(int(sys.argv[2]) if sys.argv[2].isdigit() else sys.argv[2])
"""


@pytest.mark.parametrize(
    ("thread", "status", "code"),
    [("none", "3", 3), ("none", "bad input", 1), ("thread", "0", 0), ("daemon", "4", 4)],
)
def test_the_program_exits_at_once_with_its_status_and_output(
    thread: str, status: str, code: int
) -> None:
    # Without the interpreter's teardown, yet exit handlers ran, output was flushed, and a
    # thread still running was waited for.
    proc = subprocess.run(
        [sys.executable, "-c", EXIT_PROBE, thread, status], capture_output=True, text=True
    )
    assert proc.returncode == code
    assert proc.stdout.startswith("buffered output")
    assert "handler ran" in proc.stdout
    assert ("torn down" in proc.stdout) == (thread == "thread")
    assert ("thread done" in proc.stdout) == (thread == "thread")
    assert ("bad input" in proc.stderr) == (status == "bad input")


def test_a_daemon_thread_does_not_hold_the_program_in_a_teardown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # tqdm's monitor is such a thread: the report ended through Python's teardown (0.3 s).
    import atexit
    import os
    import threading

    from amvicc.cli.main import exit_now

    class Exited(Exception):
        pass

    codes: list[int] = []

    def exit_at_once(code: int) -> None:
        codes.append(code)
        raise Exited

    monkeypatch.setattr(os, "_exit", exit_at_once)
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: None)  # pytest's own stay for later
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
    try:
        with pytest.raises(Exited):
            exit_now(5)
    finally:
        stop.set()
    assert codes == [5]
