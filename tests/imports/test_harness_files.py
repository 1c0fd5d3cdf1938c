"""Harness files in, as the harnesses really write them (issue 21, point 1; issue 23, imports).

Every fixture is written by :mod:`tests.imports.harness_writers`, which follows each harness's
own writing code; per-category numbers are checked against counts made here by hand from the
scripted replies, not read back from amvicc.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amvicc.catalogue import Catalogue, Question
from amvicc.cli import main
from amvicc.imports import ImportAnswersOptions, run_import_answers
from amvicc.imports.answers import read_answer_file
from amvicc.imports.vlmevalkit import FAILURE_MESSAGES
from amvicc.store import Store
from tests.imports.harness_writers import (
    mmvp_doc,
    mmvp_doc_to_text,
    write_mmvp_answers,
    write_mmvp_log,
    write_pope_log,
    write_vlmevalkit_predictions,
)
from tests.imports.test_answers import expected_csv, pick, report_rows


def letter(q: Question) -> str:
    """lmms-eval's mmvp asks for the option's letter; the scripted model gives ``A`` / ``B``."""
    return pick(q).upper()


def check_report(
    workspace: Path,
    model: str,
    catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
    missing: tuple[int, ...] = (),
) -> None:
    """The report's per-category individual and pair numbers are the hand counts."""
    rows = report_rows(workspace, capsys)
    vlm = {(r["category"], r["metric"]): r for r in rows if r["model"] == model}
    assert vlm, f"no rows for {model}"
    for code, ((right, total), (both, pairs)) in expected_csv(catalogue, missing=missing).items():
        individual, pair = vlm[(code, "individual")], vlm[(code, "pair")]
        assert (int(individual["correct"]), int(individual["total"])) == (right, total), code
        assert (int(pair["correct"]), int(pair["total"])) == (both, pairs), code
    assert int(vlm[("all", "individual")]["total"]) == 300


def test_hand_counts_are_the_scripted_picks(catalogue: Catalogue) -> None:
    """The hand counts themselves, for two categories, by listing the questions."""
    counts = expected_csv(catalogue, missing=())
    for code in ("sc", "tx"):
        questions = [q for q in catalogue if q.category.code == code]
        right = [q.index for q in questions if q.index % 3]  # pick() is right unless index % 3 == 0
        pairs = {q.pair for q in questions}
        both = [p for p in pairs if all(q.index % 3 for q in questions if q.pair == p)]
        assert counts[code] == ((len(right), len(questions)), (len(both), len(pairs)))


# --- MMVP's own answer file ------------------------------------------------------------------


def test_mmvp_answer_file_reports_the_hand_counts(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_mmvp_answers(
        tmp_path / "answer.jsonl", catalogue, lambda q: f"({pick(q)}) {q.option(pick(q)).text}"
    )
    workspace = tmp_path / "ws"
    assert (
        main(["import-answers", str(path), "--model", "llava-1.5", "--store", str(workspace)]) == 0
    )
    out = capsys.readouterr()
    assert "(amvicc-jsonl): 300 record(s) answering 300 question(s), 0 note(s)" in out.out
    # MMVP's own labels (uncorrected at 99, 100, 279, 280) are its answer key: no mismatch
    assert "disagree" not in out.err
    check_report(workspace, "llava-1.5", catalogue, capsys)


# --- lmms-eval ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [(0, 4), (0, 6), (0, 7)])
def test_lmms_eval_mmvp_log_as_each_version_writes_it(
    tmp_path: Path,
    catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
    version: tuple[int, int],
) -> None:
    path = write_mmvp_log(tmp_path / "logs", catalogue, letter, version=version)
    first = json.loads(path.read_text().splitlines()[0])
    assert "doc" not in first and "arguments" not in first and "resps" not in first
    assert first["target"] in ("A", "B") and first["input"].endswith(
        "Answer with the option's letter from the given choices directly."
    )
    # v0.7 flattened filtered_resps to the reply and added token counts
    assert isinstance(first["filtered_resps"], str if version >= (0, 7) else list)
    assert ("token_counts" in first) == (version >= (0, 7))

    workspace = tmp_path / "ws"
    args = ["import-answers", str(path), "--model", "llava-lmms", "--store", str(workspace)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "(lmms-eval): 300 record(s) answering 300 question(s), 0 note(s)" in out
    with Store(workspace) as store:
        by_index = {r.question_index: r for r in store.responses()}
    one = catalogue.question(1)
    # the prompt lmms-eval sent is kept with the reply
    assert by_index[1].prompt == mmvp_doc_to_text(mmvp_doc(one))
    assert by_index[1].text == letter(one)
    expected_tokens = (600, 1) if version >= (0, 7) else (None, None)
    assert (by_index[1].prompt_tokens, by_index[1].completion_tokens) == expected_tokens
    check_report(workspace, "llava-lmms", catalogue, capsys)


def test_lmms_eval_repeats_are_samples_and_the_raw_generation_is_the_reply(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    few = catalogue.select(indices=range(1, 5))
    path = write_mmvp_log(
        tmp_path / "logs",
        few,
        letter,
        repeats=lambda q: [f"<think>hmm</think>{letter(q)}", "A", "B"],
    )
    # take_first keeps the first generation in filtered_resps; resps keeps all three
    first = json.loads(path.read_text().splitlines()[0])
    assert first["resps"] == ["<think>hmm</think>A", "A", "B"]
    answers = read_answer_file(path, few)
    assert [(r.index, r.sample, r.text) for r in answers.replies[:3]] == [
        (1, 0, "<think>hmm</think>A"),
        (1, 1, "A"),
        (1, 2, "B"),
    ]


def test_a_log_of_another_lmms_eval_task_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_pope_log(tmp_path / "logs", records=300)
    workspace = tmp_path / "ws"
    assert main(["import-answers", str(path), "--model", "m", "--store", str(workspace)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "does not look like MMVP answers: 300 of 300 record(s)" in err
    assert "lmms-eval's 'pope' task (metrics pope_accuracy, pope_f1_score" in err
    assert "nothing was imported" in err
    assert not workspace.exists()


def test_a_record_relabelled_onto_another_question_is_an_error_naming_both_lines(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_mmvp_log(tmp_path / "logs", catalogue, letter)
    lines = path.read_text().splitlines()
    moved = json.loads(lines[4])  # question 5, relabelled as question 6
    moved["doc_id"] = 5
    lines[4] = json.dumps(moved, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n")
    workspace = tmp_path / "ws"
    assert main(["import-answers", str(path), "--model", "m", "--store", str(workspace)]) == 2
    err = capsys.readouterr().err
    assert "line 5 and line 6 both name question 6 with different records" in err
    assert not workspace.exists()


def test_a_record_disagreeing_with_its_question_is_listed_and_held_back(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_mmvp_log(tmp_path / "logs", catalogue, letter)
    lines = path.read_text().splitlines()
    wrong = json.loads(lines[9])  # question 10: its answer key swapped, its options swapped
    wrong["target"] = "A" if wrong["target"] == "B" else "B"
    q10 = catalogue.question(10)
    wrong["input"] = wrong["input"].replace(
        f"A. {q10.options[0].text}\nB. {q10.options[1].text}",
        f"A. {q10.options[1].text}\nB. {q10.options[0].text}",
    )
    lines[9] = json.dumps(wrong, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n")
    workspace = tmp_path / "ws"
    args = ["import-answers", str(path), "--model", "m", "--store", str(workspace)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "not imported: 1 question(s) whose record disagrees with them (10)" in out
    assert "answer key: 1 record(s) disagree with the question they name, e.g. line 10" in err
    assert "options: 1 record(s) disagree" in err
    with Store(workspace) as store:
        assert 10 not in {r.question_index for r in store.responses()}
        (run,) = store.runs(stage="answer")
    shown = capsys.readouterr()
    assert main(["runs", "--store", str(workspace), "--show", run.run_id]) == 0
    shown = capsys.readouterr().out
    assert "1 reply(ies) not imported" in shown
    assert "line 10: answer key 'A'" in shown or "line 10: answer key 'B'" in shown

    # --accept-mismatch takes it, and says so in its request record
    assert main([*args, "--accept-mismatch"]) == 0
    with Store(workspace) as store:
        (taken,) = [r for r in store.responses() if r.question_index == 10]
    assert json.loads(taken.request_json)["mismatch_accepted"] == ["answer key", "options"]


# --- VLMEvalKit --------------------------------------------------------------------------------

# question -> the FAILURE_MESSAGES entry its prediction is
FAILED = {3 + 27 * k: k for k in range(len(FAILURE_MESSAGES))}


def vlmevalkit_prediction(q: Question) -> str:
    """A scripted prediction, or one of VLMEvalKit's failure messages (with an error after it)."""
    if q.index in FAILED:
        message = FAILURE_MESSAGES[FAILED[q.index]]
        suffix = "<class 'RuntimeError'> CUDA out of memory" if message.endswith(": ") else ""
        return message + suffix
    return letter(q)


@pytest.mark.parametrize("name", ["GPT4o_MMVP.xlsx", "GPT4o_MMVP.tsv", "GPT4o_MMVP.json"])
def test_vlmevalkit_sheet_with_every_failure_message_reports_the_hand_counts(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    path = write_vlmevalkit_predictions(tmp_path / name, catalogue, vlmevalkit_prediction)
    workspace = tmp_path / "ws"
    assert main(["import-answers", str(path), "--model", "gpt-4o", "--store", str(workspace)]) == 0
    out = capsys.readouterr().out
    failed = len(FAILURE_MESSAGES)
    assert (
        f"(vlmevalkit): 300 record(s) answering 300 question(s), {failed} failed request(s)" in out
    )
    assert f"missing: {failed} question(s) without a reply (3,30,57," in out
    with Store(workspace) as store:
        errors = {r.question_index: r for r in store.responses() if r.status == "error"}
    assert set(errors) == set(FAILED)
    for index, which in FAILED.items():
        assert errors[index].text is None
        assert FAILURE_MESSAGES[which].strip() in (errors[index].error or "")
    check_report(workspace, "gpt-4o", catalogue, capsys, missing=tuple(FAILED))


@pytest.mark.parametrize("message", FAILURE_MESSAGES)
def test_each_vlmevalkit_failure_message_is_a_failed_request(
    tmp_path: Path, catalogue: Catalogue, message: str
) -> None:
    few = catalogue.select(indices=range(1, 5))
    path = write_vlmevalkit_predictions(
        tmp_path / "m_MMVP.tsv", few, lambda q: message if q.index == 2 else letter(q)
    )
    answers = read_answer_file(path, few)
    replies = {r.index: r for r in answers.replies}
    assert replies[2].text is None and replies[2].error is not None
    assert [replies[i].text for i in (1, 3, 4)] == [letter(few.question(i)) for i in (1, 3, 4)]


# --- warnings summarised, kept in full -------------------------------------------------------


def prompt_differs(path: Path, catalogue: Catalogue) -> Path:
    """AMVICC's answers whose prompts add an instruction after the options (every record)."""
    rows = [
        {
            "question_id": q.index,
            "category": q.category.code,
            # differs from the catalogue's prompt only after its first 60 characters
            "prompt": f"{q.text} {q.options_text} Answer with a letter.",
            "answer": f"({q.mmvp_answer})",
            "response": f"({pick(q)})",
            "answer_id": f"id{q.index}",
            "model_id": "m",
        }
        for q in catalogue
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def test_warnings_are_one_line_per_kind_and_kept_in_full_with_the_run(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    path = prompt_differs(tmp_path / "answers.jsonl", catalogue)
    workspace = tmp_path / "ws"
    args = ["import-answers", str(path), "--model", "m", "--store", str(workspace)]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert "300 note(s); added 300 response(s)" in out
    kind_lines = [line for line in err.splitlines() if "prompt:" in line]
    assert len(kind_lines) == 1 and "300 record(s) differ" in kind_lines[0]
    assert "(and 297 more)" in kind_lines[0]
    # the stated prompt and the catalogue's differ only at the end: they never print the same
    example = kind_lines[0].split("e.g. ")[1].split("; line 2")[0]
    stated, expected = example.split(" is not question 1's ")
    assert stated != expected and "Answer with a letter." in stated
    assert "every note is listed by `amvicc runs --show answer-m-" in err
    assert len(err.splitlines()) == 2  # one kind, and where the full list is

    with Store(workspace) as store:
        (run,) = store.runs(stage="answer")
    assert main(["runs", "--store", str(workspace), "--show", run.run_id]) == 0
    shown = capsys.readouterr().out
    assert shown.count(": prompt ") == 300 and "line 300: prompt" in shown
    assert f"run       {run.run_id}" in shown and '"imported": "amvicc-jsonl"' in shown
    assert main(["runs", "--store", str(workspace), "--show", "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err


def test_quiet_keeps_only_the_count_per_kind(
    tmp_path: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    path = prompt_differs(tmp_path / "answers.jsonl", catalogue)
    args = ["import-answers", str(path), "--model", "m", "--store", str(tmp_path / "ws"), "-q"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "answers.jsonl prompt: 300 record(s) differ" in err and "e.g." not in err


# --- hostile input (issue 23) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (
            '{"question_id": 1, "response": "a"}\n{"question_id": 2, "response": }\n',
            "line 2, column 32: not JSON (Expecting value)",
        ),
        (
            '{"question_id": 1, "response": "a"}\n' + "[" * 100_000 + "\n",
            "line 2, column 65: nested deeper than 64 levels",
        ),
        (
            '{"question_id": 1, "response": {"text": "a"}}\n',
            "line 1: response is an object, not a reply's text",
        ),
        (
            '{"question_id": 1, "response": ["a"]}\n',
            "line 1: response is a list, not a reply's text",
        ),
        ('{"question_id": 1, "response": 1}\n', "line 1: response is a number, not a reply's text"),
        (
            '{"question_id": 1, "response": true}\n',
            "line 1: response is a boolean, not a reply's text",
        ),
    ],
)
def test_hostile_jsonl_is_one_error_line_naming_where(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, fragment: str
) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text(content)
    workspace = tmp_path / "ws"
    assert main(["import-answers", str(path), "--model", "m", "--store", str(workspace)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and fragment in err, err
    assert not workspace.exists()


def test_a_json_file_error_names_its_line_and_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.json"
    path.write_text('[\n  {"question_id": 1,\n   "response": "a",,\n  }\n]\n')
    assert main(["import-answers", str(path), "--model", "m", "--store", str(tmp_path / "w")]) == 2
    assert "line 3, column 20: not JSON (Expecting property name" in capsys.readouterr().err
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000)
    assert main(["import-answers", str(deep), "--model", "m", "--store", str(tmp_path / "w")]) == 2
    assert "line 1, column 65: nested deeper than 64 levels" in capsys.readouterr().err


def test_a_generic_reply_that_is_not_text_is_never_stored_as_repr(
    tmp_path: Path, catalogue: Catalogue
) -> None:
    path = tmp_path / "replies.jsonl"
    path.write_text('{"index": 1, "response": "(a)"}\n{"index": 2, "response": {"choice": "b"}}\n')
    with pytest.raises(Exception, match=r"line 2: response is an object, not a reply's text"):
        run_import_answers(
            ImportAnswersOptions(file=path, model="m"), store=tmp_path / "ws", catalogue=catalogue
        )
    assert not (tmp_path / "ws").exists()


def test_a_csv_cell_over_the_field_limit_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "replies.csv"
    path.write_text('index,response\n1,"(a)"\n2,"' + "b" * 200_000 + '"\n')
    assert main(["import-answers", str(path), "--model", "m", "--store", str(tmp_path / "ws")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "row 3: field larger than field limit" in err, err
