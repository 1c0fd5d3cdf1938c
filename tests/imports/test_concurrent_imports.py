"""Two identical imports at once add each row once (issue 23: imports share their work).

The race is made certain rather than likely: the test holds the workspace's write lock while
both processes start, open the workspace and read what they need, then lets them go together.
An import that read what is stored before taking the lock would then add everything twice
(600 replies for 300 questions) or die on a duplicate key; one that reads inside its write
transaction adds each row once.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.imports import ImportGradesOptions, run_import_grades
from amvicc.resources import resource_dir
from amvicc.store import DATABASE_NAME, EXTRACTOR_SOURCE, Store
from tests.imports.harness_writers import write_mmvp_answers
from tests.imports.test_answers import pick

REPO = Path(__file__).resolve().parents[2]


def start(*args: str) -> subprocess.Popen[str]:
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "amvicc", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def opened(process: subprocess.Popen[str], database: Path) -> bool:
    """Whether the process has the workspace's database open (Linux: its open files)."""
    try:
        links = [os.readlink(fd) for fd in Path(f"/proc/{process.pid}/fd").iterdir()]
    except OSError:
        return False
    return str(database.resolve()) in links


def both_at_once(workspace: Path, args: list[str]) -> list[tuple[int, str]]:
    """Run two identical commands, released together once both have opened the workspace."""
    database = workspace / DATABASE_NAME
    holder = Store(workspace)
    with holder.transaction():  # the write lock: both processes queue behind it
        processes = [start(*args), start(*args)]
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not all(opened(p, database) for p in processes):
            time.sleep(0.1)
        if Path("/proc").is_dir():
            time.sleep(2.0)  # past opening: reading what is stored, or waiting for the lock
        else:  # no /proc: give both time to start and read
            time.sleep(15.0)
    holder.close()
    results = []
    for process in processes:
        _, err = process.communicate(timeout=300)
        results.append((process.returncode, err))
    return results


def test_two_identical_answer_imports_at_once_add_each_reply_once(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    path = write_mmvp_answers(tmp_path / "answer.jsonl", catalogue, lambda q: f"({pick(q)})")
    workspace = tmp_path / "ws"
    Store(workspace).close()
    results = both_at_once(
        workspace, ["import-answers", str(path), "--model", "m", "--store", str(workspace), "-q"]
    )
    for code, err in results:
        assert code == 0, err[-2000:]
    with Store(workspace) as store:
        responses = store.responses(current=False)
        assert len(responses) == 300
        assert len({r.question_index for r in responses}) == 300
        extractor = Counter(
            v.response_id for v in store.verdicts(current=False) if v.source == EXTRACTOR_SOURCE
        )
        assert set(extractor.values()) == {1}  # graded once each, too
        assert len(store.runs(stage="answer")) == 1


def test_two_identical_grade_imports_at_once_add_each_verdict_once(tmp_path: Path) -> None:
    sheet = resource_dir("grades") / "dalle3_grades.csv"
    workspace = tmp_path / "ws"
    Store(workspace).close()
    args = ["import-grades", str(sheet), "--model", "dalle3", "--store", str(workspace), "-q"]
    results = both_at_once(workspace, args)
    for code, err in results:
        assert code == 0, err[-2000:]
        assert "IntegrityError" not in err and "Traceback" not in err
    once = run_import_grades(
        ImportGradesOptions(sheet=sheet, model="dalle3", dry_run=True),
        store=tmp_path / "empty",
        catalogue=load_catalogue(),
    )
    with Store(workspace) as store:
        images = store.images(current=False)
        verdicts = store.verdicts(current=False)
    assert len(images) == once.images_added == len({i.image_id for i in images})
    assert len(verdicts) == once.verdicts_added == len({v.image_id for v in verdicts})
