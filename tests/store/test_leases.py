"""Leases (shared work), run owners, names that become paths, network file systems."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from amvicc.errors import UserError
from amvicc.store import RunSpec, Store
from amvicc.store.filesystems import filesystem_type, network_filesystem
from amvicc.store.owners import holder_id, is_dead, this_process
from amvicc.store.workspace import check_name

MOUNTS = """\
/dev/vda / ext4 rw,relatime 0 0
server:/export /mnt/shared nfs4 rw,relatime 0 0
lustre@tcp:/fs /lustre lustre rw 0 0
tmpfs /mnt/shared/local tmpfs rw 0 0
"""


def test_claims_split_items_between_holders(store: Store) -> None:
    assert store.claim("s", ["a", "b", "c", "d"], "p1", ttl=60, limit=2) == ["a", "b"]
    assert store.claim("s", ["a", "b", "c", "d"], "p2", ttl=60, limit=5) == ["c", "d"]
    assert store.claim("s", ["a", "b", "c", "d"], "p1", ttl=60) == ["a", "b"]  # renewed
    store.release_leases("s", "p1", ["a"])
    assert store.claim("s", ["a", "b"], "p2", ttl=60) == ["a"]
    assert store.claim("other", ["a"], "p3", ttl=60) == ["a"]  # scopes are apart


def test_expired_leases_and_dead_holders_return(store: Store) -> None:
    assert store.claim("s", ["a"], "p1", ttl=0.05) == ["a"]
    time.sleep(0.1)
    assert store.claim("s", ["a"], "p2", ttl=60) == ["a"]
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    gone = holder_id(dead.pid)  # this machine, a pid no longer running
    assert is_dead(gone) and not is_dead(this_process())
    assert not is_dead("other-host:1:1") and not is_dead("human:alice")
    assert store.claim("s", ["b"], gone, ttl=600) == ["b"]
    assert store.claim("s", ["b"], "p2", ttl=60) == ["b"]  # at once, not after 600 s


def test_reservations_hold_an_item_for_up_to_capacity_holders(store: Store) -> None:
    assert store.reserve("rate", "img1", "alice", ttl=60, capacity=2)
    assert store.reserve("rate", "img1", "bob", ttl=60, capacity=2)
    assert not store.reserve("rate", "img1", "carol", ttl=60, capacity=2)
    assert store.reserve("rate", "img1", "alice", ttl=60, capacity=2)  # her own, renewed
    assert store.reserve("rate", "img2", "alice", ttl=60, capacity=2)  # moves on: img1 freed
    assert store.reserve("rate", "img1", "carol", ttl=60, capacity=2)
    assert store.held_leases("rate") == {"img1": ["bob", "carol"], "img2": ["alice"]}
    assert store.renew_leases("rate", "bob", ttl=60) == 1


def test_a_run_whose_process_died_reads_as_interrupted(tmp_path: Path) -> None:
    code = (
        "from amvicc.store import Store, RunSpec\n"
        f"Store({str(tmp_path)!r}).start_run(RunSpec(stage='answer', model='m', outputs={{}}, "
        "name='killed'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ})
    with Store(tmp_path) as store:
        run = store.run("killed")
        assert run.status == "interrupted" and run.owner and run.owner.split(":")[1].isdigit()
        store.start_run(RunSpec(stage="answer", model="other", outputs={}))
        # the next run started records it for good
        row = store.connection().execute("SELECT status FROM runs WHERE run_id = 'killed'")
        assert row.fetchone()[0] == "interrupted"


@pytest.mark.parametrize(
    "name", ["../../elsewhere", "a/b", "..", ".hidden", "-x", "", "a" * 200, "x\\y", "a b", "é"]
)
def test_run_names_are_plain_names(store: Store, name: str) -> None:
    with pytest.raises(UserError, match="not allowed"):
        check_name(name)
    if name:  # an empty name means "derive one"
        with pytest.raises(UserError, match="not allowed"):
            store.start_run(RunSpec(stage="answer", model="m", outputs={}, name=name))
    assert store.runs() == []


def test_files_stay_inside_the_workspace(store: Store, tmp_path: Path) -> None:
    for outside in ("../escaped.json", "/tmp/escaped.json", "responses/../../escaped.json"):
        with pytest.raises(UserError, match="outside the workspace"):
            store.write_file(outside, b"{}")
    assert not (tmp_path / "escaped.json").exists()
    assert store.write_file("responses/run-1/x.json", b"{}").is_file()


def test_network_file_systems_are_recognised(tmp_path: Path) -> None:
    assert filesystem_type(Path("/mnt/shared/runs/ws"), MOUNTS) == "nfs4"
    assert network_filesystem(Path("/lustre/project/ws"), MOUNTS) == "lustre"
    assert network_filesystem(Path("/mnt/shared/local/ws"), MOUNTS) is None  # deepest mount
    assert network_filesystem(Path("/home/me/ws"), MOUNTS) is None


def test_a_workspace_on_nfs_gets_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr("amvicc.store.workspace.network_filesystem", lambda path: "nfs4")
    with caplog.at_level(logging.WARNING), Store(tmp_path / "ws"):
        pass
    assert "network file system (nfs4)" in caplog.text
    assert "accelerate launch" in caplog.text and "local disk" in caplog.text


def test_a_store_without_its_database_refuses_every_query(tmp_path: Path) -> None:
    Store(tmp_path / "ws").close()
    files_only = Store(tmp_path / "ws", database=False)
    files_only.write_file("images/ab/x.png", b"png")
    with pytest.raises(RuntimeError, match="only the main process"):
        files_only.runs()
