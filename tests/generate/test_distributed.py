from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from amvicc.catalogue import load_catalogue
from amvicc.generate import GenerationOptions, run_generate
from amvicc.store import Store

REPO = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# Put on the processes' PYTHONPATH: in every process but the main one (RANK 0), opening any
# SQLite database fails, and the process leaves a mark that the ban was in force.
FORBID_DATABASE = """
import os, sqlite3
if os.environ.get("RANK", "0") != "0":
    open(os.path.join(os.environ["AMVICC_TEST_MARKS"], "rank-" + os.environ["RANK"]), "w").close()

    def forbidden(*args, **kwargs):
        raise RuntimeError("process " + os.environ["RANK"] + " may not open a database")

    sqlite3.connect = forbidden
"""


def _launch(
    workspace: Path, *extra: str, forbid_database: Path | None = None
) -> subprocess.CompletedProcess[str]:
    accelerate = Path(sys.executable).with_name("accelerate")
    assert accelerate.is_file(), "accelerate's command is installed beside python"
    # `--multi_gpu` starts the processes through torchrun; on a machine without GPUs amvicc
    # joins them over gloo (`accelerate launch --cpu` would start only one process).
    command = [
        str(accelerate),
        "launch",
        "--multi_gpu",
        "--num_processes",
        "2",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "--main_process_port",
        str(_free_port()),
        "-m",
        "amvicc.generate",
        "--model",
        "tiny-sd3",
        "--index",
        "1-3",
        "--store",
        str(workspace),
        "--device",
        "cpu",
        *extra,
    ]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    if forbid_database is not None:
        hooks = forbid_database / "hooks"
        hooks.mkdir()
        (hooks / "sitecustomize.py").write_text(FORBID_DATABASE)
        env["PYTHONPATH"] = os.pathsep.join([str(hooks), str(REPO), env.get("PYTHONPATH", "")])
        env["AMVICC_TEST_MARKS"] = str(forbid_database)
    return subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=REPO, timeout=400, check=False
    )


def _pixels(store: Store) -> dict[tuple[int, str], np.ndarray]:
    out = {}
    for record in store.images():
        assert record.path is not None
        with Image.open(store.path(record.path)) as image:
            out[(record.question_index, record.prompt_kind)] = np.asarray(image)
    return out


@pytest.mark.slow
def test_two_processes_one_database_writer_resume_and_share_the_work(tmp_path: Path) -> None:
    """Only the main process opens the database; the other sends it its rows (issue 15)."""
    questions = load_catalogue().select(indices=range(1, 4))  # 6 prompts
    workspace = tmp_path / "shared"
    with Store(workspace) as store:  # an earlier, interrupted single-process run made 2
        run_generate(
            GenerationOptions(model="tiny-sd3", limit=2, progress=False),
            store=store,
            catalogue=questions,
        )

    launched = _launch(workspace, forbid_database=tmp_path)
    assert launched.returncode == 0, launched.stderr[-3000:]
    assert (tmp_path / "rank-1").is_file()  # the second process ran with the ban in force
    # Only the main process prints the summary, with every process's counts.
    summaries = [line for line in launched.stdout.splitlines() if "made " in line]
    assert len(summaries) == 1 and "made 4, skipped 2, failed 0" in summaries[0], launched.stdout
    store = Store(workspace)
    rows = store.images(current=False)
    assert len(rows) == 6 == len({(r.question_index, r.prompt_kind, r.sample) for r in rows})
    made_by = [json.loads(r.params_json)["process"] for r in rows]
    assert made_by.count("0/1") == 2 and made_by.count("0/2") == 2 and made_by.count("1/2") == 2
    (run,) = store.runs()
    assert run.status == "finished" and run.summary["processes"] == 2

    # The same images as one process alone makes them.
    alone = Store(tmp_path / "alone")
    run_generate(
        GenerationOptions(model="tiny-sd3", progress=False), store=alone, catalogue=questions
    )
    assert alone.images()[0].config_key == rows[0].config_key
    shared, single = _pixels(store), _pixels(alone)
    assert shared.keys() == single.keys() and len(shared) == 6
    assert all(np.array_equal(shared[k], single[k]) for k in shared)
