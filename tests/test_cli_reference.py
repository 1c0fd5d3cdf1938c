"""``docs/cli.md`` is the parser's own reference: regenerated here, it must match the file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from amvicc.cli.reference import flags, reference
from amvicc.store import Store

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "docs" / "cli.md"


def test_docs_cli_md_is_what_the_parser_generates() -> None:
    assert REFERENCE.read_text(encoding="utf-8") == reference(), (
        "docs/cli.md is out of date: run `python -m amvicc.cli.reference docs/cli.md`"
    )


def _sections(text: str) -> dict[str, str]:
    """Each command's section of the reference (its heading to the next heading)."""
    found: dict[str, str] = {}
    parts = re.split(r"^#{2,4} (amvicc[^\n]*)\n", text, flags=re.MULTILINE)
    for title, body in zip(parts[1::2], parts[2::2], strict=True):
        found[title.strip()] = body
    return found


def test_every_flag_of_every_verb_is_in_its_section_of_the_reference() -> None:
    sections = _sections(REFERENCE.read_text(encoding="utf-8"))
    every = list(flags())
    assert len(every) > 150  # every verb and sub-verb contributes
    missing = [(c, f) for c, f in every if f"`{f}`" not in sections.get(c, "")]
    assert not missing, missing


def test_the_reference_names_every_verb() -> None:
    from amvicc.cli import load_verbs

    sections = _sections(REFERENCE.read_text(encoding="utf-8"))
    assert {f"amvicc {name}" for name in load_verbs()} <= set(sections)


def _runs(workspace_env: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AMVICC_STORE"}
    if workspace_env is not None:
        env["AMVICC_STORE"] = workspace_env
    return subprocess.run(
        [sys.executable, "-m", "amvicc", "runs", "--format", "csv", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )


def test_amvicc_store_sets_the_default_workspace_and_the_flag_wins(tmp_path: Path) -> None:
    from amvicc.store import RunSpec

    chosen, other = tmp_path / "chosen", tmp_path / "other"
    for folder, model in ((chosen, "from-env"), (other, "from-flag")):
        with Store(folder) as store:
            store.start_run(RunSpec(stage="answer", model=model, outputs={"x": 1}))
    by_env = _runs(str(chosen))
    assert by_env.returncode == 0, by_env.stderr
    assert "from-env" in by_env.stdout and "from-flag" not in by_env.stdout
    by_flag = _runs(str(chosen), "--store", str(other))
    assert by_flag.returncode == 0, by_flag.stderr
    assert "from-flag" in by_flag.stdout and "from-env" not in by_flag.stdout
    missing = _runs(str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "nowhere" in missing.stderr


def test_help_says_where_the_default_workspace_comes_from() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "amvicc", "runs", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "$AMVICC_STORE" in proc.stdout
