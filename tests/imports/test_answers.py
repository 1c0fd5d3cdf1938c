"""``amvicc import-answers``: replies from other harnesses in, graded, into the same reports."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from amvicc.catalogue import Catalogue, Question
from amvicc.cli import main
from amvicc.imports import ImportAnswersOptions, run_import_answers
from amvicc.imports.answers import read_answer_file
from amvicc.imports.checks import amvicc_prompt
from amvicc.store import EXTRACTOR_SOURCE, Store

MISSING = (5, 17, 230)


def pick(question: Question) -> str:
    """The option a scripted model picks: right for two questions in three, else wrong."""
    if question.index % 3:
        return question.answer
    return "b" if question.answer == "a" else "a"


def reply(question: Question) -> str:
    label = pick(question)
    return f"({label}) {question.option(label).text}" + ("" if question.index % 2 else "\n\nIt is.")


def amvicc_jsonl(path: Path, catalogue: Catalogue, *, skip: tuple[int, ...] = MISSING) -> Path:
    """An answers file as AMVICC's script writes it (a failed request leaves its line out)."""
    lines = [
        json.dumps(
            {
                "question_id": q.index,
                "category": q.category.code,
                "prompt": amvicc_prompt(q),
                "answer": f"({q.mmvp_answer})",
                "response": reply(q),
                "answer_id": f"id{q.index}",
                "model_id": "openai/gpt-4o",
            }
        )
        for q in catalogue
        if q.index not in skip
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def expected_csv(catalogue: Catalogue, *, missing: tuple[int, ...] = MISSING) -> dict[str, Any]:
    """Per category: (correct, total) for individual and pair, missing counted as wrong."""
    out: dict[str, Any] = {}
    for category in catalogue.categories():
        questions = [q for q in catalogue if q.category == category]
        right = {q.index for q in questions if q.index not in missing and pick(q) == q.answer}
        pairs = {q.pair for q in questions}
        both = sum(all(q.index in right for q in questions if q.pair == p) for p in pairs)
        out[category.code] = ((len(right), len(questions)), (both, len(pairs)))
    return out


def report_rows(workspace: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    capsys.readouterr()
    args = ["report", "--store", str(workspace), "--format", "csv", "--bootstrap", "0", "-o", "-"]
    assert main(args) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def test_done_means_amvicc_answers_then_report_shows_per_category_vlm_accuracies(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = amvicc_jsonl(tmp_path / "answers.jsonl", catalogue)
    workspace = tmp_path / "ws"
    assert (
        main(["import-answers", str(answers), "--model", "gpt-4o", "--store", str(workspace)]) == 0
    )
    out = capsys.readouterr().out
    assert "answers.jsonl (amvicc-jsonl): 297 record(s) answering 297 question(s)" in out
    assert "added 297 response(s)" in out
    assert "missing: 3 question(s) without a reply (5,17,230)" in out
    assert "graded run answer-gpt-4o-" in out  # the same grading as any answer run
    rows = report_rows(workspace, capsys)
    vlm = {(r["category"], r["metric"]): r for r in rows if r["model"] == "gpt-4o"}
    assert {r["modality"] for r in rows if r["model"] == "gpt-4o"} == {"vlm"}
    for code, ((right, total), (both, pairs)) in expected_csv(catalogue).items():
        individual, pair = vlm[(code, "individual")], vlm[(code, "pair")]
        assert (int(individual["correct"]), int(individual["total"])) == (right, total), code
        assert float(individual["value"]) == pytest.approx(right / total, abs=1e-6)
        assert (int(pair["correct"]), int(pair["total"])) == (both, pairs), code
    assert int(vlm[("all", "individual")]["total"]) == 300

    # the same file again adds nothing; the run and its replies stay as they were
    with Store(workspace) as store:
        before = (len(store.responses(current=False)), len(store.verdicts(current=False)))
    assert (
        main(["import-answers", str(answers), "--model", "gpt-4o", "--store", str(workspace)]) == 0
    )
    assert "added 0 response(s)" in capsys.readouterr().out
    with Store(workspace) as store:
        assert (len(store.responses(current=False)), len(store.verdicts(current=False))) == before
        (run,) = store.runs(stage="answer")
        assert (
            run.config["imported"] == "amvicc-jsonl"
            and run.config["source_file"] == "answers.jsonl"
        )
        response = store.responses()[0]
        # the source line is kept verbatim beside the reply
        line = json.loads(store.path(response.raw_path or "").read_text())
        assert line["response"] == response.text and line["question_id"] == response.question_index
        assert json.loads(response.request_json)["where"] == "line 1"


def test_a_later_file_fills_the_missing_questions(tmp_path: Path, catalogue: Catalogue) -> None:
    few = catalogue.select(indices=range(1, 9))
    first = amvicc_jsonl(tmp_path / "a.jsonl", few, skip=(5,))
    second = amvicc_jsonl(tmp_path / "b.jsonl", few, skip=())
    workspace = tmp_path / "ws"
    one = run_import_answers(
        ImportAnswersOptions(file=first, model="m"), store=workspace, catalogue=few
    )
    two = run_import_answers(
        ImportAnswersOptions(file=second, model="m"), store=workspace, catalogue=few
    )
    assert (one.missing, one.responses_added) == ((5,), 7)
    assert (two.missing, two.responses_added, two.run_id) == ((), 1, one.run_id)
    # a third file whose request for question 3 failed keeps the reply the run has
    lines = [json.loads(line) for line in second.read_text().splitlines()]
    lines[2]["response"] = "Error: 500 Server Error"
    failed = tmp_path / "c.jsonl"
    failed.write_text("\n".join(json.dumps(line) for line in lines))
    three = run_import_answers(
        ImportAnswersOptions(file=failed, model="m"), store=workspace, catalogue=few
    )
    assert (three.failed, three.responses_added, three.missing) == (1, 0, ())
    with Store(workspace) as store:
        assert {r.status for r in store.responses()} == {"ok"}


def test_failed_requests_in_amvicc_files_are_errors_not_answers(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    few = catalogue.select(indices=range(1, 5))
    path = amvicc_jsonl(tmp_path / "answers.jsonl", few, skip=())
    lines = path.read_text().splitlines()
    broken = json.loads(lines[1])
    broken["response"] = "Error: 429 Client Error: Too Many Requests for url"
    lines[1] = json.dumps(broken)
    path.write_text("\n".join(lines) + "\n")
    summary = run_import_answers(
        ImportAnswersOptions(file=path, model="m"), store=tmp_path / "ws", catalogue=few
    )
    assert summary.failed == 1 and summary.missing == (2,)
    with Store(tmp_path / "ws") as store:
        (error,) = [r for r in store.responses() if r.status == "error"]
        assert error.question_index == 2 and error.text is None
        assert error.error is not None and "Too Many Requests" in error.error


def graded_json(path: Path, catalogue: Catalogue) -> Path:
    """AMVICC's grader output: statistics, then detailed_results with gpt_grade."""
    details = []
    for q in catalogue:
        label = pick(q)
        grade = "yes" if label == q.mmvp_answer else "no"
        if q.index == 3:
            grade = "Could not determine yes or no."
        details.append(
            {
                "question_id": q.index,
                "category": q.category.code,
                "question": amvicc_prompt(q),
                "correct_answer": f"({q.mmvp_answer})",
                "model_response": "Maybe." if q.index == 4 else reply(q),
                "is_correct": grade == "yes",
                "gpt_grade": grade,
            }
        )
    body = {"overall_statistics": {"pair_accuracy": 0.5}, "detailed_results": details}
    path.write_text(json.dumps(body, indent=2))
    return path


def test_amvicc_graded_results_bring_gpt_grade_as_a_judge_of_its_own(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    few = catalogue.select(indices=range(1, 9))
    path = graded_json(tmp_path / "evaluation_results_grok4.json", few)
    workspace = tmp_path / "ws"
    args = ["import-answers", str(path), "--model", "grok-4", "--store", str(workspace)]
    assert main(args) == 0
    out = capsys.readouterr().out
    source = "procedure:amvicc:gpt_grade@evaluation_results_grok4.json"
    assert f"and 8 verdict(s) as {source}" in out
    assert f"{source} and the extractor pick the same option for 6 of the 6" in out
    with Store(workspace) as store:
        by_response = {r.response_id: r for r in store.responses()}
        graded = {
            by_response[v.response_id or ""].question_index: v
            for v in store.verdicts(source=source)
        }
        assert graded[3].value == "undecided"
        for index in (1, 2, 5, 6):
            question = few.question(index)
            detail = json.loads(graded[index].detail_json)
            right = pick(question) == question.mmvp_answer
            assert detail["judged_correct"] == right
            # "no" says only that the reply is not the graded-against option
            against = detail["graded_against"]
            assert graded[index].value == (against if right else f"not_{against}")
        extracted = {
            by_response[v.response_id or ""].question_index: v.value
            for v in store.verdicts(source=EXTRACTOR_SOURCE)
        }
        assert extracted[4] == "undecided"  # "Maybe.": left to the human audit
    rows = report_rows(workspace, capsys)
    (overall,) = [
        r
        for r in rows
        if r["model"] == "grok-4" and (r["category"], r["metric"]) == ("all", "individual")
    ]
    # right: 1, 2, 5, 7, 8 by the extractor; AMVICC's grades never decide the three-stage
    # grading (their "yes" on 4, "Maybe.", counts only under AMVICC's procedure)
    assert (int(overall["correct"]), int(overall["total"])) == (5, 300)
    with Store(workspace) as store:
        from amvicc.report import ReportOptions, build_report

        procedures = build_report(store, ReportOptions(bootstrap=0, gallery=0)).procedures
    amvicc = procedures[
        (procedures["grading"] == source) & (procedures["metric"] == "individual")
    ].iloc[0]
    # AMVICC's procedure: yes on 1, 2, 4, 5, 7, 8; "no" on 6, undecided on 3 (counted wrong)
    assert (int(amvicc["correct"]), int(amvicc["total"])) == (6, 300)
    assert main(args) == 0
    assert "added 0 response(s) and 0 verdict(s)" in capsys.readouterr().out


def lmms_eval_samples(path: Path, catalogue: Catalogue, *, with_index: bool) -> Path:
    rows = []
    for q in catalogue:
        doc: dict[str, Any] = {"Question": q.text, "Options": q.options_text}
        if with_index:
            doc["Index"] = q.index
        rows.append(
            {
                "doc_id": q.index - 1,
                "doc": doc,
                "target": q.answer.upper(),
                "arguments": [[f"{q.text}\nA. {q.options[0].text}\nB. {q.options[1].text}", {}]],
                "resps": [[f"{pick(q).upper()}. because"]],
                "filtered_resps": [pick(q).upper()],
                "mmvp_accuracy": {"index": q.index - 1},
            }
        )
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


@pytest.mark.parametrize("with_index", [True, False])
def test_lmms_eval_samples_map_doc_ids_to_mmvp_indices(
    tmp_path: Path, catalogue: Catalogue, with_index: bool
) -> None:
    few = catalogue.select(indices=range(1, 9))
    path = lmms_eval_samples(tmp_path / "samples_mmvp.jsonl", few, with_index=with_index)
    answers = read_answer_file(path, few)
    assert answers.format == "lmms-eval"
    assert [r.index for r in answers.replies] == list(range(1, 9))
    assert answers.replies[0].text == f"{pick(few.question(1)).upper()}. because"  # raw, unfiltered
    assert answers.replies[0].prompt.startswith(few.question(1).text)


def test_lmms_eval_record_whose_doc_asks_another_question_is_held_back(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    few = catalogue.select(indices=range(1, 9))
    path = lmms_eval_samples(tmp_path / "samples.jsonl", few, with_index=False)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[2]["doc"]["Question"] = "How many apples are there?"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    answers = read_answer_file(path, few)
    assert [r.index for r in answers.held_back] == [3]
    assert 3 not in {r.index for r in answers.replies}
    (note,) = answers.notes
    assert note.short() == (
        "line 3: question text 'How many apples are there?' is not question 3's "
        f"{few.question(3).text!r}"
    )
    # a log where most records ask other questions is refused whole
    for row in rows[:5]:
        row["doc"]["Question"] = "How many apples are there?"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    with pytest.raises(Exception, match=r"does not look like MMVP answers: 5 of 8 record"):
        read_answer_file(path, few)


def vlmevalkit_frame(catalogue: Catalogue, *, base: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "index": [q.index - 1 + base for q in catalogue],
            "question": [q.text for q in catalogue],
            "A": [q.options[0].text for q in catalogue],
            "B": [q.options[1].text for q in catalogue],
            "answer": [q.mmvp_answer.upper() for q in catalogue],
            "category": [q.category.name for q in catalogue],
            "prediction": [f"{pick(q).upper()}" for q in catalogue],
        }
    )


@pytest.mark.parametrize(("suffix", "base"), [(".xlsx", 0), (".xlsx", 1), (".tsv", 0)])
def test_vlmevalkit_predictions_find_their_index_base(
    tmp_path: Path, catalogue: Catalogue, suffix: str, base: int
) -> None:
    few = catalogue.select(indices=range(1, 9))
    frame = vlmevalkit_frame(few, base=base)
    path = tmp_path / f"GPT4o_MMVP{suffix}"
    if suffix == ".xlsx":
        frame.to_excel(path, index=False)
    else:
        frame.to_csv(path, sep="\t", index=False)
    answers = read_answer_file(path, few)
    assert answers.format == "vlmevalkit"
    assert {r.index: r.text for r in answers.replies} == {q.index: pick(q).upper() for q in few}


def test_vlmevalkit_rows_of_another_benchmark_are_refused(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    few = catalogue.select(indices=range(1, 9))
    frame = vlmevalkit_frame(few, base=0)
    frame.loc[4, "question"] = "What colour is the sky?"
    path = tmp_path / "other.tsv"
    frame.to_csv(path, sep="\t", index=False)
    # one row asking another question is held back, the rest import
    answers = read_answer_file(path, few)
    assert [r.index for r in answers.held_back] == [5]
    assert "row 6: question text 'What colour is the sky?'" in answers.notes[0].short()
    frame.loc[:5, "question"] = "What colour is the sky?"
    frame.to_csv(path, sep="\t", index=False)
    with pytest.raises(Exception, match=r"6 of 8 record.*VLMEvalKit prediction file of another"):
        read_answer_file(path, few)


def test_generic_csv_and_jsonl(tmp_path: Path, catalogue: Catalogue) -> None:
    few = catalogue.select(indices=range(1, 5))
    table = tmp_path / "replies.csv"
    table.write_text('index,response\n1,"(a), clearly"\n2,B\n3,a\n')
    lines = tmp_path / "replies.jsonl"
    lines.write_text('{"question_id": 4, "response": "b"}\n{"question_id": 1, "response": "a"}\n')
    from_table = read_answer_file(table, few)
    from_lines = read_answer_file(lines, few)
    assert from_table.format == from_lines.format == "generic"
    assert [(r.index, r.text) for r in from_table.replies] == [
        (1, "(a), clearly"),
        (2, "B"),
        (3, "a"),
    ]
    assert [(r.index, r.text) for r in from_lines.replies] == [(4, "b"), (1, "a")]


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            '{"question_id": 1, "response": "a"}\n{"question_id": 2, "response": \n',
            "line 2, column 32: not JSON",
        ),
        (
            '{"question_id": 1, "response": "a"}\n{"question_id": 301, "response": "b"}\n',
            "line 2: question 301 is not in the catalogue",
        ),
        (
            '{"question_id": 1, "response": "a"}\n{"question_id": "x1", "response": "b"}\n',
            "line 2: question_id 'x1' is not a question number",
        ),
        (
            '{"question_id": 1, "response": "a"}\n{"question_id": 1, "response": "b"}\n',
            "line 1 and line 2 both name question 1 with different records",
        ),
        ('{"question_id": 1, "answer": "a"}\n', "cannot tell the format"),
    ],
)
def test_a_partly_malformed_file_imports_nothing_and_names_its_first_bad_line(
    tmp_path: Path,
    catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
    content: str,
    fragment: str,
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    workspace = tmp_path / "ws"
    assert main(["import-answers", str(path), "--model", "m", "--store", str(workspace)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert not workspace.exists()  # nothing was written, not even an empty workspace


def test_a_bad_file_leaves_an_existing_workspace_as_it_was(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    workspace = tmp_path / "ws"
    good = amvicc_jsonl(tmp_path / "good.jsonl", catalogue.select(indices=range(1, 5)), skip=())
    assert main(["import-answers", str(good), "--model", "m", "--store", str(workspace), "-q"]) == 0
    with Store(workspace) as store:
        before = (store.runs(), store.responses(current=False), store.verdicts(current=False))
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good.read_text() + '{"question_id": 2, "response": "different"}\n')
    assert main(["import-answers", str(bad), "--model", "m", "--store", str(workspace), "-q"]) == 2
    with Store(workspace) as store:
        after = (store.runs(), store.responses(current=False), store.verdicts(current=False))
    assert after == before


def test_dry_run_counts_without_writing(tmp_path: Path, catalogue: Catalogue) -> None:
    path = amvicc_jsonl(tmp_path / "answers.jsonl", catalogue.select(indices=range(1, 5)), skip=())
    summary = run_import_answers(
        ImportAnswersOptions(file=path, model="m", dry_run=True),
        store=tmp_path / "ws",
        catalogue=catalogue,
    )
    assert summary.responses_added == 4 and summary.dry_run
    assert "would add 4 response(s)" in summary.lines()[0]
    assert not (tmp_path / "ws").exists()


def test_runs_as_python_m(tmp_path: Path, catalogue: Catalogue) -> None:
    path = amvicc_jsonl(tmp_path / "answers.jsonl", catalogue.select(indices=range(1, 3)), skip=())
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.import_answers",
            str(path),
            "--model",
            "m",
            "--store",
            str(tmp_path / "ws"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "added 2 response(s)" in proc.stdout
