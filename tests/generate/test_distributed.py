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
# SQLite database fails, and the process leaves a mark that the ban was in force. Every
# launched process also marks it if its interpreter runs its exit hooks (it should not).
FORBID_DATABASE = """
import atexit, os, sqlite3
if "RANK" in os.environ and "LOCAL_RANK" in os.environ:
    mark = os.path.join(os.environ["AMVICC_TEST_MARKS"], "exit-hooks-rank-" + os.environ["RANK"])
    atexit.register(lambda: open(mark, "w").close())
if os.environ.get("RANK", "0") != "0":
    open(os.path.join(os.environ["AMVICC_TEST_MARKS"], "rank-" + os.environ["RANK"]), "w").close()

    def forbidden(*args, **kwargs):
        raise RuntimeError("process " + os.environ["RANK"] + " may not open a database")

    sqlite3.connect = forbidden
"""


def _accelerate_launch(*program: str) -> list[str]:
    """Two processes of ``program`` under ``accelerate launch``."""
    accelerate = Path(sys.executable).with_name("accelerate")
    assert accelerate.is_file(), "accelerate's command is installed beside python"
    # `--multi_gpu` starts the processes through torchrun; on a machine without GPUs amvicc
    # joins them over gloo (`accelerate launch --cpu` would start only one process).
    return [
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
        *program,
    ]


def _launch(
    workspace: Path, *extra: str, forbid_database: Path | None = None
) -> subprocess.CompletedProcess[str]:
    command = _accelerate_launch(
        "-m", "amvicc.generate", "--model", "tiny-sd3", "--index", "1-3",
        "--store", str(workspace), "--device", "cpu", *extra,
    )  # fmt: skip
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
    # Each process ended with os._exit once its work was stored: no interpreter finalized, so
    # no torch thread was stopped by one (the abort one launch in twelve saw, issue 23.8).
    assert list(tmp_path.glob("exit-hooks-rank-*")) == []
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


# Run by each launched process: amvicc's layout and collectives, then, at the very end of the
# interpreter's exit hooks (registered first, so run last), the gloo threads still alive.
GLOO_THREADS_AT_EXIT = """
import atexit, os, sys

def gloo_threads_left():
    names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
    left = [n for n in names if n.startswith(("pt_gloo", "gloo_"))]
    with open(os.path.join(sys.argv[1], "rank-" + os.environ["RANK"]), "w") as marks:
        marks.write(",".join(left))

atexit.register(gloo_threads_left)

from amvicc.generate.distributed import current_layout

layout = current_layout("cpu")
todo = layout.broadcast(list(range(10)) if layout.is_main else None)
assert layout.gather({"rank": layout.index, "todo": len(todo)})[-1]["todo"] == 10
layout.barrier()
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads Linux thread names")
def test_the_process_group_is_gone_before_python_finalizes(tmp_path: Path) -> None:
    """No gloo thread can outlive the interpreter and abort the exit (issue 23, point 8).

    A gloo worker still releasing the last collective's tensors when Python finalizes is ended
    by ``pthread_exit``, and its unwinding through a ``noexcept`` destructor aborts the process
    ("terminate called without an active exception") after the work is done: one run in ten
    under load. Here the group is seen to be destroyed, its threads joined, by then.
    """
    script = tmp_path / "collectives.py"
    script.write_text(GLOO_THREADS_AT_EXIT)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")])
    launched = subprocess.run(
        _accelerate_launch(str(script), str(tmp_path)),
        capture_output=True, text=True, env=env, cwd=REPO, timeout=400, check=False,
    )  # fmt: skip
    assert launched.returncode == 0, launched.stderr[-3000:]
    left = {rank: (tmp_path / f"rank-{rank}").read_text() for rank in (0, 1)}
    assert left == {0: "", 1: ""}, f"gloo threads alive as Python finalizes: {left}"
