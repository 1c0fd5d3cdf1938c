from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from amvicc.errors import UserError
from amvicc.store import (
    SCHEMA_VERSION,
    ImageRecord,
    ResponseRecord,
    RunSpec,
    Store,
    VerdictRecord,
    human_source,
    new_id,
)


def _spec(**outputs: object) -> RunSpec:
    return RunSpec(stage="generate", model="tiny-sd3", outputs={"steps": 2, **outputs}, smoke=True)


def _image(run_id: str, key: str, index: int = 1, status: str = "ok") -> ImageRecord:
    return ImageRecord(
        image_id=new_id(),
        run_id=run_id,
        config_key=key,
        question_index=index,
        prompt_kind="implicit",
        sample=0,
        prompt="a butterfly",
        seed=7,
        status=status,  # type: ignore[arg-type]
    )


def test_new_store_is_wal_with_schema_and_foreign_keys(store: Store) -> None:
    conn = store.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.schema_version == SCHEMA_VERSION
    with pytest.raises(sqlite3.IntegrityError):
        store.add_images([_image("no-such-run", "k")])


def test_reading_verbs_refuse_a_folder_that_is_no_workspace(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no amvicc workspace"):
        Store(tmp_path / "missing", create=False)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    Store(tmp_path).close()
    with sqlite3.connect(tmp_path / "amvicc.sqlite") as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(UserError, match="newer than this amvicc"):
        Store(tmp_path)


def test_runs_resume_by_configuration_and_refuse_conflicts(store: Store) -> None:
    run = store.start_run(_spec())
    assert run.run_id.startswith("generate-tiny-sd3-") and run.status == "running"
    assert run.smoke == 1 and run.label_policy == "corrected"
    assert "torch" in run.versions_json and "python" in run.versions_json
    store.finish_run(run.run_id, "finished", {"made": 3})
    again = store.start_run(_spec())
    assert again.run_id == run.run_id and again.status == "running"
    other = store.start_run(_spec(steps=4))
    assert other.run_id != run.run_id
    with pytest.raises(UserError, match="already exists with another configuration"):
        store.start_run(RunSpec("generate", "tiny-sd3", {"steps": 9}, name=run.run_id))
    with pytest.raises(UserError, match="known runs: generate-tiny-sd3"):
        store.run("nope")


def test_images_files_and_current_slots(store: Store) -> None:
    run = store.start_run(_spec())
    first = store.add_image(_image(run.run_id, run.config_key), b"png-1")
    assert first.path is not None and store.path(first.path).read_bytes() == b"png-1"
    assert run.model not in first.path  # raters must not learn the model from a file name
    failed = store.add_image(_image(run.run_id, run.config_key, index=2, status="failed"))
    assert failed.path is None
    assert store.done_image_slots(run.config_key) == {(1, "implicit", 0)}
    regenerated = store.add_image(_image(run.run_id, run.config_key), b"png-2")
    current = store.images(run_id=run.run_id)
    assert [i.image_id for i in current] == [regenerated.image_id, failed.image_id]
    assert len(store.images(run_id=run.run_id, current=False)) == 3
    frame = store.images_frame()
    assert set(frame["model"]) == {"tiny-sd3"} and len(frame) == 2


def test_responses_keep_errors_for_retry(store: Store) -> None:
    run = store.start_run(RunSpec("answer", "openai:gpt-4o", {"temperature": 0}))

    def response(status: str, text: str | None) -> ResponseRecord:
        return ResponseRecord(
            response_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=3,
            image_key="mmvp",
            prompt="Is the flame round?",
            status=status,  # type: ignore[arg-type]
            text=text,
        )

    store.add_response(response("error", None))
    assert store.done_response_slots(run.config_key) == set()
    ok = store.add_response(response("ok", "(a) Round"), raw=b'{"choices": []}')
    assert ok.raw_path and store.path(ok.raw_path).read_bytes() == b'{"choices": []}'
    assert store.done_response_slots(run.config_key) == {(3, "mmvp", 0)}
    frame = store.responses_frame()
    assert frame["text"].tolist() == ["(a) Round"]


def test_verdicts_keep_history_and_skip_unchanged(store: Store) -> None:
    run = store.start_run(_spec())
    image = store.add_image(_image(run.run_id, run.config_key), b"x")
    rater = human_source("ann")
    assert store.add_verdict(VerdictRecord(rater, "correct", image_id=image.image_id))
    assert not store.add_verdict(VerdictRecord(rater, "correct", image_id=image.image_id))
    assert store.add_verdict(VerdictRecord(rater, "incorrect", image_id=image.image_id))
    assert [v.value for v in store.verdicts(image_id=image.image_id)] == ["incorrect"]
    history = store.verdicts(image_id=image.image_id, current=False)
    assert [v.value for v in history] == ["correct", "incorrect"]
    with pytest.raises(ValueError, match="not one of"):
        store.add_verdict(VerdictRecord(rater, "a", image_id=image.image_id))
    assert len(store.verdicts_frame(current=False)) == 2


def test_threads_share_a_store_without_losing_rows(store: Store) -> None:
    run = store.start_run(_spec())
    image = store.add_image(_image(run.run_id, run.config_key), b"x")

    def rate(rater: str) -> None:
        for i in range(50):
            value = "correct" if i % 2 else "incorrect"
            store.add_verdict(VerdictRecord(human_source(rater), value, image_id=image.image_id))

    threads = [threading.Thread(target=rate, args=(f"r{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.verdicts(image_id=image.image_id, current=False)) == 200


def test_atomic_write_leaves_no_partial_file(store: Store) -> None:
    store.write_file("images/aa/x.png", b"complete")
    (store.root / "images" / "aa" / ".y.png.99999999.2.tmp").write_bytes(b"half")  # writer gone
    live = store.root / "images" / "aa" / f".z.png.{os.getpid()}.2.tmp"  # a writer at work
    live.write_bytes(b"in progress")
    assert store.sweep_temporary() == 1
    assert sorted(p.name for p in (store.root / "images" / "aa").iterdir()) == [live.name, "x.png"]


WRITER = textwrap.dedent(
    """
    import sys
    from amvicc.store import ImageRecord, RunSpec, Store, new_id
    store = Store(sys.argv[1])
    run = store.start_run(RunSpec("generate", "m", {"k": 1}))
    print("ready", flush=True)
    n = 0
    while True:
        batch = []
        for i in range(50):
            image_id = new_id()
            path = store.image_file(image_id)
            store.write_file(path, b"x" * 20000)
            batch.append(ImageRecord(image_id, run.run_id, run.config_key, n, "implicit", i,
                                     "p", 1, "ok", path=path))
        store.add_images(batch)
        n += 1
    """
)


def test_a_writer_killed_mid_transaction_leaves_whole_transactions(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(workspace)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(1.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    with Store(workspace) as store:
        assert store.connection().execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        images = store.images(current=False)
        assert images, "the writer committed nothing in 1.5 s"
        assert len(images) % 50 == 0  # each batch is all or nothing
        for image in images:
            assert image.path is not None
            assert store.path(image.path).stat().st_size == 20000


def test_undecided_responses_form_the_audit_queue(store: Store) -> None:
    run = store.start_run(RunSpec("answer", "m", {}))
    ids = []
    for index in (1, 2, 3):
        record = ResponseRecord(
            new_id(), run.run_id, run.config_key, index, "mmvp", "q?", "ok", text="hmm"
        )
        store.add_response(record)
        ids.append(record.response_id)
    store.add_verdict(VerdictRecord("extractor", "a", response_id=ids[0]))
    store.add_verdict(VerdictRecord("extractor", "undecided", response_id=ids[1]))
    assert [r.response_id for r in store.undecided_responses()] == [ids[1]]
    store.add_verdict(VerdictRecord("llm-judge:m", "undecided", response_id=ids[1]))
    assert [r.response_id for r in store.undecided_responses()] == [ids[1]]
    store.add_verdict(VerdictRecord(human_source("ann"), "no_answer", response_id=ids[1]))
    assert store.undecided_responses() == []


def test_runs_record_their_condition_parent_and_counts(store: Store) -> None:
    plain = store.start_run(RunSpec("answer", "openai:gpt-4o", {"temperature": 0}))
    assert (plain.condition, plain.parent_run_id) == ("", None)
    assert plain.run_id == f"answer-openai-gpt-4o-{plain.config_key[:8]}"  # as it always was
    grain = store.start_run(
        RunSpec("answer", "openai:gpt-4o", {"temperature": 0, "g": 0.1}, condition="grain=0.1")
    )
    assert grain.run_id == f"answer-openai-gpt-4o-grain-0.1-{grain.config_key[:8]}"
    arm = store.start_run(
        RunSpec(
            "challenge",
            "openai:gpt-4o",
            {"arm": "control"},
            condition="control",
            parent_run_id=plain.run_id,
        )
    )
    assert (arm.condition, arm.parent_run_id) == ("control", plain.run_id)
    assert [r.run_id for r in store.runs(stage="challenge")] == [arm.run_id]

    def reply(run_id: str, key: str, index: int, status: str, parent: str | None = None) -> str:
        record = ResponseRecord(
            response_id=new_id(),
            run_id=run_id,
            config_key=key,
            question_index=index,
            image_key="mmvp",
            prompt="q",
            status=status,  # type: ignore[arg-type]
            text="(a)" if status == "ok" else None,
            parent_response_id=parent,
        )
        store.add_response(record)
        return record.response_id

    first = reply(plain.run_id, plain.config_key, 1, "ok")
    reply(plain.run_id, plain.config_key, 2, "error")
    second = reply(arm.run_id, arm.config_key, 1, "ok", parent=first)
    assert store.responses(run_id=arm.run_id)[0].parent_response_id == first
    counts = store.run_counts()
    assert (counts[plain.run_id].done, counts[plain.run_id].failed) == (1, 1)
    assert (counts[arm.run_id].done, counts[arm.run_id].failed) == (1, 0)
    assert grain.run_id not in counts
    pairs = store.challenge_replies([arm.config_key], "mmvp")
    assert pairs[["response_id", "parent_response_id"]].values.tolist() == [[second, first]]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="fork is POSIX")
def test_a_forked_child_opens_its_own_connection_and_the_parent_keeps_its_own(
    tmp_path: Path,
) -> None:
    store = Store(tmp_path)
    run = store.start_run(_spec())
    parent_connection = store.connection()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 1
        try:
            fresh = store.connection() is not parent_connection
            found = [r.run_id for r in store.runs()] == [run.run_id]
            os.write(writer, f"{fresh} {found}".encode())
            status = 0
        finally:
            os._exit(status)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        said = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert said == "True True"
    assert store.connection() is parent_connection
    assert [r.run_id for r in store.runs()] == [run.run_id]
    store.close()
