"""``amvicc export --format hf``: a study out as a Hugging Face dataset (issue 21, point 3)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from datasets import load_dataset
from PIL import Image

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.export import DatasetExportOptions, run_dataset_export
from amvicc.export.tables import pseudonyms
from amvicc.store import ResponseRecord, RunSpec, Store, VerdictRecord, human_source, new_id
from tests.imports.harness_writers import write_mmvp_answers
from tests.score.conftest import add_generation_run

SECRET = "sk-test-this-must-never-leak-0123456789"


@pytest.fixture
def study(tmp_path: Path, catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """A workspace with images rated by two people, an imported answer run, a sheet import,
    and a failed request whose error echoed an API key."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    workspace = tmp_path / "ws"
    with Store(workspace) as store:
        run_id, image_ids = add_generation_run(store, catalogue, model="sd-fake", count=12)
        for number, image_id in enumerate(image_ids):
            value = "correct" if number % 3 else "incorrect"
            store.add_verdict(VerdictRecord(human_source("alice"), value, image_id=image_id))
            store.add_verdict(VerdictRecord(human_source("bob"), "correct", image_id=image_id))
        echoed = store.start_run(
            RunSpec(
                stage="answer",
                model="openai:gpt-4o",
                outputs={"fixture": "echo"},
                catalogue_sha256=catalogue.sha256,
                command=f"amvicc answer --model openai:gpt-4o --api-key {SECRET}",
            )
        )
        store.add_response(
            ResponseRecord(
                response_id=new_id(),
                run_id=echoed.run_id,
                config_key=echoed.config_key,
                question_index=1,
                image_key="mmvp",
                prompt="Q",
                status="error",
                error=f"401 Unauthorized: invalid key Bearer {SECRET}",
            )
        )
        store.finish_run(echoed.run_id, "finished")
    answers = write_mmvp_answers(
        tmp_path / "answer.jsonl", catalogue, lambda q: "(a)" if q.index % 3 else "unsure"
    )
    base = ["--store", str(workspace), "-q"]
    assert main(["import-answers", str(answers), "--model", "llava", *base]) == 0
    with Store(workspace) as store:
        (imported,) = [r for r in store.runs(stage="answer") if r.model == "llava"]
        reply = store.responses(run_id=imported.run_id)[2]  # question 3: "unsure"
        store.add_verdict(VerdictRecord(human_source("carol"), "b", response_id=reply.response_id))
    sheet = Path(__file__).resolve().parents[2] / "grades" / "dalle3_grades.csv"
    assert main(["import-grades", str(sheet), "--model", "dalle3", "--rater", "dave", *base]) == 0
    return {"workspace": workspace, "generation": run_id, "answers": imported.run_id}


def export(study: dict[str, Any], out: Path, *extra: str) -> int:
    return main(
        ["export", "--format", "hf", "--out", str(out), "--store", str(study["workspace"]), *extra]
    )


def load(out: Path, config: str) -> Any:
    """A configuration of the folder, cached beside it (not in the user's cache)."""
    return load_dataset(str(out), config, split="train", cache_dir=str(out.parent / "hf-cache"))


def every_text(out: Path) -> str:
    """Every string cell of every configuration, and the card."""
    texts = [(out / "README.md").read_text()]
    for config in ("images", "answers", "verdicts", "results"):
        if (out / config).is_dir():
            frame = (
                load(out, config)
                .remove_columns([c for c in ("image",) if config == "images"])
                .to_pandas()
            )
            texts.append(frame.to_csv())
    return "\n".join(texts)


def test_done_means_the_export_loads_back_with_datasets(
    tmp_path: Path, study: dict[str, Any], catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "dataset"
    assert export(study, out, "--license", "cc-by-4.0") == 0
    printed = capsys.readouterr().out
    assert f"wrote the dataset {out} (images 12, answers 301, verdicts" in printed

    images = load(out, "images")
    assert len(images) == 12
    first = images[0]
    assert first["model"] == "sd-fake" and first["kind"] in ("implicit", "explicit")
    assert first["prompt"] == catalogue.question(first["question"]).__getattribute__(
        f"{first['kind']}_prompt"
    )
    assert isinstance(first["image"], Image.Image) and first["image"].size == (24, 24)
    assert images.features["image"].__class__.__name__ == "Image"
    # the image is embedded: the workspace's file, pixel for pixel
    with Store(study["workspace"]) as store:
        stored = store.path(store.image(first["image_id"]).path or "").read_bytes()
    assert first["image"].tobytes() == Image.open(io.BytesIO(stored)).convert("RGB").tobytes()

    answers = load(out, "answers").to_pandas()
    llava = answers[answers["model"] == "llava"].set_index("question")
    assert len(llava) == 300
    assert llava.loc[1, "reply"] == "(a)" and llava.loc[1, "decision"] == "a"
    assert llava.loc[1, "decided_by"] == "extractor" and bool(llava.loc[1, "correct"]) is True
    assert llava.loc[3, "decision"] == "b" and llava.loc[3, "decided_by"] == "human"
    failed = answers[answers["status"] == "error"].iloc[0]
    assert failed["decision"] == "failed" and "[redacted]" in failed["error"]

    verdicts = load(out, "verdicts").to_pandas()
    roles = set(verdicts["decided_by"])
    assert {"rater", "extractor"} <= roles
    people = verdicts[verdicts["decided_by"] == "rater"]
    assert set(people["decider"]) == {"rater-1", "rater-2", "rater-3", "rater-4"}
    assert not any(s.startswith("sheet:dalle3_grades.csv") for s in verdicts["source"])

    results = load(out, "results").to_pandas()
    llava_all = results[
        (results["model"] == "llava")
        & (results["category"] == "all")
        & (results["metric"] == "individual")
    ].iloc[0]
    # (a) is right for odd questions; question 3 ("unsure") is settled by carol as (b): wrong
    right = sum(1 for q in catalogue if q.index % 3 and q.answer == "a")
    assert (int(llava_all["correct"]), int(llava_all["total"])) == (right, 300)


def test_the_card_has_the_yaml_header_the_columns_the_method_and_the_citations(
    tmp_path: Path, study: dict[str, Any], catalogue: Catalogue
) -> None:
    out = tmp_path / "dataset"
    assert export(study, out, "--license", "cc-by-4.0") == 0
    card = (out / "README.md").read_text()
    _, header, body = card.split("---\n", 2)
    meta = yaml.safe_load(header)
    assert meta["license"] == "cc-by-4.0"
    assert set(meta["task_categories"]) == {"text-to-image", "visual-question-answering"}
    assert [c["config_name"] for c in meta["configs"]] == [
        "images",
        "answers",
        "verdicts",
        "results",
    ]
    ((pattern,),) = [[f["path"] for f in c["data_files"]] for c in meta["configs"][:1]]
    assert pattern.startswith("images/train-") and pattern.endswith("-*.parquet")
    (shard,) = (out / "images").glob("*.parquet")
    assert shard.match(pattern.split("/")[1])
    for column in ("`prompt`", "`decision`", "`decided_by`", "`decider`", "`seed`"):
        assert column in body
    assert catalogue.sha256 in body and "corrected" in body
    assert "amvicc 0.1.0" in body and "`sd-fake`" in body and "`llava`" in body
    assert "@inproceedings{basappa2025amvicc" in body and "Eyes Wide Shut?" in body


def test_keys_and_rater_names_never_appear(tmp_path: Path, study: dict[str, Any]) -> None:
    out = tmp_path / "dataset"
    assert export(study, out) == 0
    text = every_text(out)
    assert SECRET not in text
    for name in ("alice", "bob", "carol", "dave"):
        assert name not in text
    # nor anywhere in the folder's bytes
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes()

    named = tmp_path / "named"
    assert export(study, named, "--keep-rater-names") == 0
    deciders = set(load(named, "verdicts").to_pandas()["decider"])
    assert {"alice", "bob", "carol", "dave"} <= deciders
    assert SECRET not in every_text(named)


def test_a_re_export_into_the_same_folder_loads_its_new_tables(
    tmp_path: Path, study: dict[str, Any], catalogue: Catalogue
) -> None:
    """datasets caches a local folder by its name and configuration; the content's digest in
    the card's file patterns keeps a re-export from loading the old, cached tables."""
    out = tmp_path / "dataset"
    assert export(study, out, "--runs", study["generation"]) == 0
    assert len(load(out, "verdicts")) == 24  # two raters on 12 images
    assert export(study, out) == 0
    assert len(load(out, "verdicts")) > 24


def test_pseudonyms_are_stable_across_exports_of_other_runs(
    tmp_path: Path, study: dict[str, Any]
) -> None:
    everything, only_images = tmp_path / "all", tmp_path / "images"
    assert export(study, everything) == 0
    assert export(study, only_images, "--runs", study["generation"]) == 0
    whole = load(everything, "verdicts").to_pandas()
    part = load(only_images, "verdicts").to_pandas()
    assert set(part["run_id"]) == {study["generation"]}
    assert len(load(only_images, "images")) == 12 and not (only_images / "answers").exists()
    same = whole.merge(part, on="verdict_id", suffixes=("", "_part"))
    assert len(same) == len(part) and (same["decider"] == same["decider_part"]).all()
    assert pseudonyms(["human:x", "extractor", "sheet:f.csv:y", "human:x", "adjudication:y"]) == {
        "x": "rater-1",
        "y": "rater-2",
    }


def test_nothing_half_written_and_other_folders_left_alone(
    tmp_path: Path,
    study: dict[str, Any],
    catalogue: Catalogue,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "dataset"
    assert export(study, out) == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}

    import amvicc.export.runner as runner

    def broken(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runner, "_write_images", broken)
    assert export(study, out) == 2
    assert "cannot write the dataset" in capsys.readouterr().err
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # the earlier export is whole
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".dataset")]  # no leftovers

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    assert export(study, mine) == 2
    assert "holding other files" in capsys.readouterr().err
    assert export(study, study["workspace"] / "images" / "hf") == 2
    assert "never writes over a workspace's own files" in capsys.readouterr().err
    assert export(study, study["workspace"]) == 2  # the workspace folder itself
    assert "is the workspace" in capsys.readouterr().err


def test_push_to_hub_without_network_fails_in_one_line_with_the_folder_complete(
    tmp_path: Path,
    study: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_test_token_never_printed_0123456789")
    out = tmp_path / "dataset"
    assert export(study, out, "--push-to-hub", "someone/amvicc-study") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "could not upload" in err and "the folder is complete" in err
    assert "hf_test_token_never_printed" not in err
    assert len(load(out, "answers")) == 301


def test_push_to_hub_uploads_the_folder_as_one_commit(
    tmp_path: Path, study: dict[str, Any], catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[str, dict[str, Any]]] = []

    class FakeApi:
        def create_repo(self, repo: str, **kwargs: Any) -> None:
            calls.append(("create_repo", {"repo": repo, **kwargs}))

        def upload_folder(self, **kwargs: Any) -> None:
            calls.append(("upload_folder", kwargs))

    monkeypatch.setattr("huggingface_hub.HfApi", FakeApi)
    with Store(study["workspace"]) as store:
        summary = run_dataset_export(
            DatasetExportOptions(out=tmp_path / "ds", push_to_hub="me/study", private=True),
            store=store,
            catalogue=catalogue,
            results=None,
        )
    assert summary.pushed == "me/study"
    assert calls[0] == (
        "create_repo",
        {"repo": "me/study", "repo_type": "dataset", "private": True, "exist_ok": True},
    )
    assert calls[1][1]["folder_path"] == str(tmp_path / "ds")
    assert not (tmp_path / "ds" / "results").exists()  # no report: no results table
    assert "results" not in json.dumps(
        yaml.safe_load((tmp_path / "ds" / "README.md").read_text().split("---\n")[1])
    )


def test_an_empty_workspace_has_nothing_to_export(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Store(tmp_path / "ws").close()
    args = [
        "export",
        "--format",
        "hf",
        "--out",
        str(tmp_path / "ds"),
        "--store",
        str(tmp_path / "ws"),
    ]
    assert main(args) == 2
    assert "nothing to export" in capsys.readouterr().err
    assert not (tmp_path / "ds").exists()
    assert main([*args, "--runs", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err
