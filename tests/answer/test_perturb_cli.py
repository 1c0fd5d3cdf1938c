"""``amvicc answer --perturb``: one run per level, the images kept, the model sees the noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amvicc.cli import main
from amvicc.store import Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import write_coded_images
from amvicc.testing.scripted import Seen, scripted_chat
from amvicc.vlm.base import EncodedImage
from amvicc.vlm.perturb import Perturbation


def sees_grain(seen: Seen) -> str:
    """Right on the clean image; wrong on every odd question above 0.075 grain, every
    question above 0.15."""
    right = "a" if seen.index % 2 else "b"
    wrong = "b" if right == "a" else "a"
    if seen.grain > 0.15 or (seen.grain > 0.075 and seen.index % 2):
        return f"({wrong})"
    return f"({right})"


@pytest.fixture
def server() -> FakeOpenAIServer:  # type: ignore[misc]
    with FakeOpenAIServer(chat=scripted_chat(sees_grain)) as fake:
        yield fake


def args(server: FakeOpenAIServer, images: Path, workspace: Path, *extra: str) -> list[str]:
    return [
        "answer", "--model", "fake-vlm", "--base-url", server.url, "--images", str(images),
        "--index", "1-8", "--store", str(workspace), "-q", *extra,
    ]  # fmt: skip


def test_each_level_is_a_run_that_sees_its_noise(
    server: FakeOpenAIServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = write_coded_images(tmp_path / "mmvp", range(1, 9))
    workspace = tmp_path / "ws"
    assert main(args(server, images, workspace)) == 0
    assert main(args(server, images, workspace, "--perturb", "grain:0.05,0.1,0.2")) == 0
    out = capsys.readouterr().out
    assert "answered 8/8 [grain=0.05]" in out and "answered 8/8 [grain=0.2]" in out
    accuracy = [line.split()[1] for line in out.splitlines() if line.strip().startswith("accuracy")]
    assert accuracy == ["8/8", "8/8", "4/8", "0/8"]  # clean, 0.05, 0.1, 0.2: as told
    assert len(server.requests) == 32

    with Store(workspace) as store:
        clean, *perturbed = store.runs(stage="answer")
        assert clean.condition == "" and "perturbation" not in clean.config
        assert [r.condition for r in perturbed] == ["grain=0.05", "grain=0.1", "grain=0.2"]
        assert [r.run_id.split("-")[4] for r in perturbed] == ["0.05", "0.1", "0.2"]
        for run in perturbed:
            level = float(run.condition.split("=")[1])
            assert run.config["perturbation"] == {"kind": "grain", "level": level, "seed": 0}
            assert run.config["clean_config_key"] == clean.config_key
            grain = Perturbation("grain", level)
            for reply in store.responses(run_id=run.run_id):
                request = json.loads(reply.request_json)
                source = (images / f"{reply.question_index}.png").read_bytes()
                expected = grain.apply(EncodedImage.from_bytes(source))
                # the image the model saw is kept, content-addressed, and is the perturbation
                assert reply.input_path == f"inputs/{expected.sha256}.png"
                assert store.path(reply.input_path).read_bytes() == expected.data
                assert request["image_sha256"] == expected.sha256
                assert request["perturbation"] == run.condition
                assert request["source_image_sha256"] == EncodedImage.from_bytes(source).sha256
        clean_inputs = {r.input_path for r in store.responses(run_id=clean.run_id)}
        assert len(clean_inputs) == 8 and len(list((workspace / "inputs").iterdir())) == 32

    # the same command resumes: nothing is asked again
    assert main(args(server, images, workspace, "--perturb", "grain:0.05,0.1,0.2")) == 0
    assert len(server.requests) == 32
    # other kinds, repeated --perturb
    assert main(args(server, images, workspace, "--perturb", "blur:1", "--perturb", "jpeg:40")) == 0
    with Store(workspace) as store:
        assert [r.condition for r in store.runs(stage="answer")][-2:] == ["blur=1", "jpeg=40"]


def exit_status(argv: list[str]) -> int:
    """The status of ``amvicc`` (argparse exits on a bad argument, a stage's mistake returns)."""
    try:
        return main(argv)
    except SystemExit as exited:
        return int(exited.code or 0)


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (("--perturb", "grain:abc"), "grain level 'abc' is not a number"),
        (("--perturb", "fog:0.1"), "unknown perturbation 'fog'"),
        (("--perturb", "grain:0.1,0.2", "--run", "mine"), "--run names one run"),
    ],
)
def test_bad_perturbations_are_one_line_and_exit_2(
    server: FakeOpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    extra: tuple[str, ...],
    fragment: str,
) -> None:
    images = write_coded_images(tmp_path / "mmvp", range(1, 9))
    assert exit_status(args(server, images, tmp_path / "ws", *extra)) == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1, err
    assert not server.requests
