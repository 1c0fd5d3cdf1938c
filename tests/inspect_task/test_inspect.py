"""Inspect AI both ways (issue 21, point 2): the ``amvicc/mmvp`` task, and Inspect logs imported.

Offline: Inspect's ``mockllm/model`` with custom outputs that carry their token usage (without
usage, mockllm counts tokens with tiktoken, which downloads its encoding), and Inspect's CLI
against amvicc's local fake OpenAI-compatible server.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import inspect_ai
import pytest
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ContentImage, ModelOutput, ModelUsage, get_model

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.store import EXTRACTOR_SOURCE, Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import index_in_image, reply_by_index, write_mmvp_images
from tests.imports.test_answers import report_rows


def scripted(index: int) -> str:
    """A reply per question: right, wrong, hedged or rambling, by index."""
    return ("(a)", "B", "I cannot tell from this image.", "The answer is (b).")[index % 4]


def index_asked(messages: list[ChatMessage]) -> int:
    """The question a mockllm call is about, read off the colour of the image it was sent."""
    for message in messages:
        if isinstance(message.content, list):
            for part in message.content:
                if isinstance(part, ContentImage):
                    return index_in_image(base64.b64decode(part.image.split(",", 1)[1]))
    raise AssertionError("no image in the request")


def mock_model(rule: Callable[[int], str] = scripted, *, fail: int | None = None) -> Any:
    """mockllm/model answering by ``rule`` with token usage set; ``fail`` raises for one index."""

    def outputs(messages: list[ChatMessage], tools: Any, choice: Any, config: Any) -> ModelOutput:
        index = index_asked(messages)
        if index == fail:
            raise RuntimeError(f"provider error for question {index}")
        output = ModelOutput.from_content(model="mockllm/model", content=rule(index))
        output.usage = ModelUsage(
            input_tokens=100 + index, output_tokens=3, total_tokens=103 + index
        )
        return output

    return get_model("mockllm/model", custom_outputs=outputs)


@pytest.fixture(scope="module")
def mmvp_images(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_mmvp_images(tmp_path_factory.mktemp("mmvp"), range(1, 301))


def run_task(tmp_path: Path, model: Any, **kwargs: Any) -> EvalLog:
    task_args = {"images": str(kwargs.pop("images")), **kwargs.pop("task_args", {})}
    (log,) = inspect_ai.eval(
        "amvicc/mmvp",
        model=model,
        task_args=task_args,
        log_dir=str(tmp_path / "logs"),
        display="none",
        **kwargs,
    )
    return log


def import_log(log: EvalLog, workspace: Path, model: str = "inspect-mock", *extra: str) -> int:
    return main(
        ["import-answers", log.location, "--model", model, "--store", str(workspace), *extra]
    )


def test_done_means_eval_by_name_with_mockllm_then_the_log_imports_as_4_replies(
    tmp_path: Path, mmvp_images: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = run_task(tmp_path, mock_model(), images=mmvp_images, limit=4)
    assert log.status == "success" and log.eval.task == "amvicc/mmvp"
    assert [s.id for s in log.samples or []] == [1, 2, 3, 4]
    workspace = tmp_path / "ws"
    assert import_log(log, workspace) == 0
    out = capsys.readouterr().out
    assert "(inspect): 4 record(s) answering 4 question(s), 0 note(s); added 4 response(s)" in out
    with Store(workspace) as store:
        replies = {r.question_index: r for r in store.responses()}
    assert {i: r.text for i, r in replies.items()} == {i: scripted(i) for i in range(1, 5)}
    assert (replies[2].prompt_tokens, replies[2].completion_tokens) == (102, 3)
    # the prompt Inspect sent is amvicc's own answer prompt
    assert replies[1].prompt.startswith("Are the butterfly's wings closer to being open or closed?")
    assert replies[1].prompt.endswith(
        "Answer with the option's letter from the given choices directly."
    )


def test_scores_are_the_extractors_with_undecided_as_no_answer(
    tmp_path: Path, mmvp_images: Path, catalogue: Catalogue
) -> None:
    log = run_task(tmp_path, mock_model(), images=mmvp_images, task_args={"categories": "sc,tx"})
    samples = log.samples or []
    questions = [q for q in catalogue if q.category.code in ("sc", "tx")]
    assert sorted(s.id for s in samples) == [q.index for q in questions]
    for sample in samples:
        score = (sample.scores or {})["extractor"]
        question = catalogue.question(int(sample.id))
        chosen = {0: "a", 1: "b", 2: None, 3: "b"}[question.index % 4]
        assert score.answer == chosen
        if chosen is None:
            assert score.value == "N"  # Inspect's no-answer, never a guess
        else:
            assert score.value == ("C" if chosen == question.answer else "I")
    # per-category individual and pair accuracy, against counts made here by hand
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    for code in ("sc", "tx", "all"):
        chosen_qs = [q for q in questions if code in ("all", q.category.code)]
        right = {
            q.index for q in chosen_qs if {0: "a", 1: "b", 3: "b"}.get(q.index % 4) == q.answer
        }
        pairs = {q.pair for q in chosen_qs}
        both = [p for p in pairs if all(q.index in right for q in chosen_qs if q.pair == p)]
        assert metrics[f"individual_{code}"] == pytest.approx(len(right) / len(chosen_qs))
        assert metrics[f"pair_{code}"] == pytest.approx(len(both) / len(pairs))


def test_epochs_are_samples_and_an_errored_sample_is_a_failed_request(
    tmp_path: Path, mmvp_images: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = run_task(
        tmp_path,
        mock_model(fail=3),
        images=mmvp_images,
        task_args={"index": "1-4", "epochs": 2},
        fail_on_error=False,
    )
    assert len(log.samples or []) == 8
    workspace = tmp_path / "ws"
    assert import_log(log, workspace) == 0
    out = capsys.readouterr().out
    assert "8 record(s) answering 8 question(s) (2 samples each), 2 failed request(s)" in out
    assert "missing: 297 question(s) without a reply (3,5-300)" in out
    with Store(workspace) as store:
        slots = {(r.question_index, r.sample): r for r in store.responses()}
    assert sorted(slots) == [(i, k) for i in range(1, 5) for k in (0, 1)]
    assert slots[(3, 1)].status == "error" and slots[(3, 1)].text is None
    assert "provider error for question 3" in (slots[(3, 1)].error or "")
    assert slots[(4, 1)].text == scripted(4)


def test_round_trip_equals_amviccs_own_answer_run_on_the_same_replies(
    tmp_path: Path, mmvp_images: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = tmp_path / "ws"
    log = run_task(tmp_path, mock_model(), images=mmvp_images, task_args={"categories": "sc,tx,qc"})
    assert import_log(log, workspace, "via-inspect", "-q") == 0
    with FakeOpenAIServer(chat=reply_by_index(scripted)) as server:
        args = [
            "answer", "--model", "direct", "--base-url", server.url, "--images",
            str(mmvp_images), "--categories", "sc,tx,qc", "--store", str(workspace), "-q",
        ]  # fmt: skip
        assert main(args) == 0
    rows = report_rows(workspace, capsys)

    def numbers(model: str) -> dict[tuple[str, str], tuple[str, str, str]]:
        return {
            (r["category"], r["metric"]): (r["correct"], r["total"], r["value"])
            for r in rows
            if r["model"] == model
            and r["modality"] == "vlm"
            and r["metric"] in ("individual", "pair")
        }

    inspected, direct = numbers("via-inspect"), numbers("direct")
    assert inspected and inspected == direct
    # and both are the hand counts: asked about sc, tx and qc only, the rest missing (wrong)
    chosen = {0: "a", 1: "b", 3: "b"}  # scripted(): index % 4 == 2 hedges
    for category in catalogue.categories():
        questions = [q for q in catalogue if q.category == category]
        asked = category.code in ("sc", "tx", "qc")
        right = {q.index for q in questions if asked and chosen.get(q.index % 4) == q.answer}
        pairs = {q.pair for q in questions}
        both = {p for p in pairs if all(q.index in right for q in questions if q.pair == p)}
        assert inspected[(category.code, "individual")][:2] == (
            str(len(right)),
            str(len(questions)),
        )
        assert inspected[(category.code, "pair")][:2] == (str(len(both)), str(len(pairs)))
    # and Inspect's own metrics are the report's numbers (the extractor decided every reply
    # it could; the rest are missing, counted wrong in both)
    metrics = {name: m.value for s in log.results.scores for name, m in s.metrics.items()}
    for code in ("sc", "tx", "qc"):
        correct, total, _ = inspected[(code, "individual")]
        assert metrics[f"individual_{code}"] == pytest.approx(int(correct) / int(total))
        correct, total, _ = inspected[(code, "pair")]
        assert metrics[f"pair_{code}"] == pytest.approx(int(correct) / int(total))
    with Store(workspace) as store:
        graded = {v.response_id for v in store.verdicts(source=EXTRACTOR_SOURCE)}
        assert all(r.response_id in graded for r in store.responses() if r.status == "ok")


def test_a_template_with_a_system_prompt_and_the_original_labels(
    tmp_path: Path, mmvp_images: Path, catalogue: Catalogue
) -> None:
    template = tmp_path / "mine.jinja"
    template.write_text(
        '{% set system = "You are a careful observer." %}Q: {{ question.text }} '
        "{{ question.options_text }}"
    )
    log = run_task(
        tmp_path,
        mock_model(),
        images=mmvp_images,
        task_args={"index": "99-100", "template": str(template), "original_labels": True},
    )
    samples = {int(s.id): s for s in log.samples or []}
    assert sorted(samples) == [99, 100]
    first = samples[99].input
    assert not isinstance(first, str)
    assert first[0].role == "system" and first[0].text == "You are a careful observer."
    assert (
        first[1].text == f"Q: {catalogue.question(99).text} {catalogue.question(99).options_text}"
    )
    # MMVP's own label for 99 is (a); amvicc corrects it to (b) unless asked not to
    assert samples[99].target == "a"


def test_missing_images_stop_the_task_naming_them_unless_skipped(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    images = write_mmvp_images(tmp_path / "few", range(1, 5))
    with pytest.raises(Exception, match=r"296 of 300 images .* cannot be used; missing: 5-300"):
        run_task(tmp_path, mock_model(), images=images)
    log = run_task(tmp_path, mock_model(), images=images, task_args={"skip_missing": True})
    assert sorted(int(s.id) for s in log.samples or []) == [1, 2, 3, 4]


def test_inspect_cli_resolves_the_task_by_name(
    tmp_path: Path, mmvp_images: Path, catalogue: Catalogue
) -> None:
    """``inspect eval amvicc/mmvp -T images=DIR`` with an OpenAI-compatible model, offline."""
    inspect = Path(sys.executable).with_name("inspect")
    with FakeOpenAIServer(chat=reply_by_index(scripted)) as server:
        environment = {
            **os.environ,
            "FAKE_API_KEY": "sk-test-not-a-key",
            "FAKE_BASE_URL": server.url,
            "NO_PROXY": "127.0.0.1",
        }
        command = [
            str(inspect), "eval", "amvicc/mmvp", "--model", "openai-api/fake/vlm",
            "-T", f"images={mmvp_images}", "-T", "categories=sc", "--limit", "4",
            "--log-dir", str(tmp_path / "logs"), "--display", "plain",
        ]  # fmt: skip
        done = subprocess.run(
            command, env=environment, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr[-3000:]
        assert len([r for r in server.requests if r.path == "/v1/chat/completions"]) == 4
    (log,) = (tmp_path / "logs").glob("*.eval")
    workspace = tmp_path / "ws"
    assert (
        main(["import-answers", str(log), "--model", "vlm", "--store", str(workspace), "-q"]) == 0
    )
    with Store(workspace) as store:
        replies = store.responses()
    first_four = [q.index for q in catalogue if q.category.code == "sc"][:4]
    assert sorted(r.question_index for r in replies) == first_four
    assert all(r.prompt_tokens for r in replies)  # the server's usage, through Inspect


def test_a_json_log_imports_too(tmp_path: Path, mmvp_images: Path) -> None:
    log = run_task(tmp_path, mock_model(), images=mmvp_images, limit=3, log_format="json")
    assert log.location.endswith(".json")
    workspace = tmp_path / "ws"
    assert import_log(log, workspace, "m", "-q") == 0
    with Store(workspace) as store:
        assert len(store.responses()) == 3


def test_a_log_of_another_task_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    other = Task(
        dataset=[Sample(id=i, input=f"What is {i} + {i}?", target=str(2 * i)) for i in range(1, 6)],
        solver=generate(),
        name="arithmetic",
    )
    (log,) = inspect_ai.eval(
        other,
        model=get_model(
            "mockllm/model", custom_outputs=lambda *_: _usage(ModelOutput.from_content("m", "2"))
        ),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert import_log(log, tmp_path / "ws") == 2
    err = capsys.readouterr().err
    assert "does not look like MMVP answers: 5 of 5 record(s)" in err
    assert "an Inspect log of the task 'arithmetic'" in err
    assert not (tmp_path / "ws").exists()


def _usage(output: ModelOutput) -> ModelOutput:
    output.usage = ModelUsage(input_tokens=5, output_tokens=1, total_tokens=6)
    return output


def test_without_inspect_ai_the_import_names_the_extra(
    tmp_path: Path,
    mmvp_images: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log = run_task(tmp_path, mock_model(), images=mmvp_images, limit=1)
    for module in [m for m in sys.modules if m.split(".")[0] == "inspect_ai"]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # import fails as if not installed
    assert import_log(log, tmp_path / "ws") == 2
    err = capsys.readouterr().err.strip()
    assert "needs inspect-ai: pip install 'amvicc[inspect]' (not installed: inspect_ai)" in err
    assert len(err.splitlines()) == 1


def test_amvicc_never_imports_inspect_ai_itself() -> None:
    code = (
        "import sys, amvicc.inspect, amvicc.imports, amvicc.cli.main;"
        "from amvicc.cli.registry import load_verbs; load_verbs();"
        "assert 'inspect_ai' not in sys.modules, 'inspect_ai was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
