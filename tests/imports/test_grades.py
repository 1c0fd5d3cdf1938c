"""``amvicc import-grades``: messy AMVICC sheets in, AMVICC's own numbers out."""

from __future__ import annotations

import csv
import io
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.imports.grades import import_grade_sheet, read_grade_sheet
from amvicc.store import Store

HEADER = [
    " ID",
    "Category ",
    "Question",
    " Answer Choices ",
    "Answer",
    "Implicit Prompt",
    " Correct_im",
    "Explicit Prompt",
    "Correct_ex  ",
    "Comments",
]


def messy_sheet(catalogue: Catalogue, seed: int = 0, flip: frozenset[int] = frozenset()) -> str:
    """A 300-row AMVICC grade sheet with the defects real exports have.

    Stray spaces in headers and cells, blank verdicts, a blank spreadsheet row, a prompt with
    a line break, an Answer cell holding the options, a typo in a Question cell, and extra
    empty columns. ``flip`` lists IDs whose implicit verdict is inverted (a second rater).
    """
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([*HEADER, "", ""])
    for q in catalogue:
        cells = {}
        for column in ("Correct_im", "Correct_ex"):
            roll = rng.random()
            value = "" if roll < 0.06 else ("Y" if roll < 0.75 else "N")
            if column == "Correct_im" and q.index in flip and value:
                value = "N" if value == "Y" else "Y"
            if value and rng.random() < 0.1:
                value = rng.choice([f" {value}", f"{value} ", f"  {value}  "])
            cells[column] = value
        answer = f"({q.mmvp_answer})"
        question = q.text
        explicit = q.explicit_prompt or ""
        if q.index == 63:
            answer = q.options_text  # the misplaced cell of the real DALL-E 3 sheet
        if q.index == 96:
            question = "3" + question
        if q.index == 36:
            explicit += "\n"
        writer.writerow(
            [
                f" {q.index}" if q.index % 17 == 0 else str(q.index),
                f" {q.category.code} " if q.index % 5 == 0 else q.category.code,
                question,
                q.options_text,
                answer,
                f"{q.implicit_prompt} " if q.index % 7 == 0 else q.implicit_prompt,
                cells["Correct_im"],
                explicit,
                cells["Correct_ex"],
                "hard to tell" if q.index % 50 == 0 else "",
                "",
                "",
            ]
        )
        if q.index == 150:
            writer.writerow([""] * 12)
    return out.getvalue()


def amvicc_analysis(path: Path) -> pd.DataFrame:
    """AMVICC's own analysis (AahanaB24/AMVICC-IGM, scripts/image_gen_eval.py), with white
    space stripped: I Im and I Ex count 'Y' per category, P Im and P Ex walk the category's
    rows two at a time."""
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df.columns = df.columns.str.strip()
    df = df.apply(lambda column: column.str.strip())
    df = df[df["ID"] != ""]
    rows = []
    for category in ["ca", "od", "pf", "pr", "qc", "sc", "sh", "tx", "vp"]:
        subset = df[df["Category"] == category].reset_index()
        total = len(subset)
        im = len(subset[subset["Correct_im"] == "Y"])
        ex = len(subset[subset["Correct_ex"] == "Y"])
        pair_im = pair_ex = pairs = 0
        for index in range(0, len(subset), 2):
            pairs += 1
            if subset["Correct_im"][index] == "Y" and subset["Correct_im"][index + 1] == "Y":
                pair_im += 1
            if subset["Correct_ex"][index] == "Y" and subset["Correct_ex"][index + 1] == "Y":
                pair_ex += 1
        rows += [
            (category, "individual_implicit", im, total),
            (category, "individual_explicit", ex, total),
            (category, "pair_implicit", pair_im, pairs),
            (category, "pair_explicit", pair_ex, pairs),
        ]
    return pd.DataFrame(rows, columns=["category", "metric", "correct", "total"])


@pytest.fixture
def sheet(tmp_path: Path, catalogue: Catalogue) -> Path:
    path = tmp_path / "dalle3_grades.csv"
    path.write_text(messy_sheet(catalogue), encoding="utf-8")
    return path


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_import_then_report_gives_amvicc_numbers(
    sheet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = str(tmp_path / "ws")
    status, out, err = run_cli(
        capsys, "import-grades", str(sheet), "--model", "dalle3", "--store", ws
    )
    assert status == 0, err
    assert "added 0" not in out
    status, text, err = run_cli(
        capsys, "report", "--store", ws, "--format", "csv", "--bootstrap", "0"
    )
    assert status == 0, err
    table = pd.read_csv(io.StringIO(text), dtype={"value": str}, keep_default_na=False)
    assert list(table.columns) == [
        "model",
        "modality",
        "category",
        "metric",
        "value",
        "correct",
        "total",
        "condition",
        "p_value",
        "p_adjusted",
        "catalogue",
    ]
    ours = table[table["condition"] == ""].astype({"correct": int, "total": int})
    assert set(ours["model"]) == {"dalle3"} and set(ours["modality"]) == {"igm"}
    expected = amvicc_analysis(sheet)
    merged = expected.merge(ours, on=["category", "metric"], suffixes=("_amvicc", ""))
    assert len(merged) == 36
    assert (merged["correct"] == merged["correct_amvicc"]).all()
    assert (merged["total"] == merged["total_amvicc"]).all()
    assert (merged["value"] == (merged["correct"] / merged["total"]).map("{:.6f}".format)).all()


def test_messy_cells_warn_with_row_and_column(
    sheet: Path, catalogue: Catalogue, capsys: pytest.CaptureFixture[str]
) -> None:
    graded = read_grade_sheet(sheet, catalogue)
    assert graded.rows == 300
    warnings = "\n".join(graded.warnings)
    # Record 63 is spreadsheet row 64 (the header is row 1).
    assert "row 64 (ID 63), column Answer: '(a) Correct (b) Incorrect'" in warnings
    assert "row 97 (ID 96), column Question" in warnings
    # the blank row after ID 150 shifts later rows by one; stray spaces never warn
    assert len(graded.warnings) == 2
    assert len(graded.verdicts) + graded.blank == 600
    by_id = {(v.question_index, v.kind): v for v in graded.verdicts}
    assert by_id.get((150, "implicit")) is None or by_id[(150, "implicit")].row == 151
    assert all(v.row == v.question_index + 1 + (v.question_index > 150) for v in graded.verdicts)
    status, _, err = run_cli(
        capsys, "import-grades", str(sheet), "--model", "m", "--store", str(sheet.parent / "w")
    )
    assert status == 0
    assert "row 64 (ID 63), column Answer" in err and "still import" in err


def test_importing_twice_changes_nothing(sheet: Path, tmp_path: Path, catalogue: Catalogue) -> None:
    store = Store(tmp_path / "ws")
    graded = read_grade_sheet(sheet, catalogue)
    first = import_grade_sheet(store, graded, catalogue, model="dalle3", rater="ann")
    assert first.images_added == first.verdicts_added == len(graded.verdicts)

    def dump() -> list[list[tuple[object, ...]]]:
        with sqlite3.connect(store.db_path) as conn:
            return [
                conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                for table in ("runs", "images", "verdicts")
            ]

    before = dump()
    again = import_grade_sheet(store, graded, catalogue, model="dalle3", rater="ann")
    assert again.images_added == again.verdicts_added == 0
    assert dump() == before


def test_a_second_rater_grades_the_same_images(
    tmp_path: Path, catalogue: Catalogue, sheet: Path
) -> None:
    from amvicc.report import compute_metrics

    store = Store(tmp_path / "ws")
    flipped = frozenset(q.index for q in catalogue if q.category.code == "tx")
    other = tmp_path / "bob.csv"
    other.write_text(messy_sheet(catalogue, flip=flipped), encoding="utf-8")
    import_grade_sheet(store, read_grade_sheet(sheet, catalogue), catalogue, model="d", rater="ann")
    second = import_grade_sheet(
        store, read_grade_sheet(other, catalogue), catalogue, model="d", rater="bob"
    )
    assert second.images_added == 0 and second.verdicts_added > 0
    metrics = compute_metrics(store, bootstrap=0).set_index(["category", "metric"])
    # the raters disagree on every graded implicit tx image: all ties, all missing
    assert metrics.loc[("tx", "individual_implicit"), "correct"] == 0
    assert metrics.loc[("tx", "individual_implicit"), "missing"] == 14
    # elsewhere they agree, so the majority is the sheet's verdict
    expected = amvicc_analysis(sheet).set_index(["category", "metric"])
    assert (
        metrics.loc[("qc", "individual_explicit"), "correct"]
        == expected.loc[("qc", "individual_explicit"), "correct"]
    )
    (run,) = store.runs(stage="import")
    assert run.config["catalogue"] is None  # the shipped catalogue, as answer runs record it


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t.replace(",Y,", ",maybe,", 1), "row 2 (ID 1), column Correct_"),
        (lambda t: t.replace("\n1,", "\nx,", 1), "row 2, column ID: 'x' is not a question number"),
        (lambda t: t.replace("\n1,", "\n301,", 1), "ID 301 is not a question of the catalogue"),
        (lambda t: t.replace("\n2,", "\n1,", 1), "ID 1 appears twice (first on row 2)"),
        (lambda t: t.replace("Correct_ex", "Grade"), None),
        (
            lambda t: t.replace(" Correct_im", "Im").replace("Correct_ex", "Ex"),
            "needs the columns ID",
        ),
    ],
)
def test_bad_sheets_fail_in_one_line_and_import_nothing(
    sheet: Path, capsys: pytest.CaptureFixture[str], edit: object, message: str | None
) -> None:
    text = sheet.read_text(encoding="utf-8")
    sheet.write_text(edit(text), encoding="utf-8")  # type: ignore[operator]
    ws = sheet.parent / "ws"
    status, _, err = run_cli(
        capsys, "import-grades", str(sheet), "--model", "m", "--store", str(ws)
    )
    if message is None:  # a missing verdict column is a warning; the other column imports
        assert status == 0
        return
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], err
    assert not (ws / "amvicc.sqlite").exists() or not Store(ws).runs()


def test_bad_verdict_names_row_and_column(sheet: Path, catalogue: Catalogue) -> None:
    lines = sheet.read_text(encoding="utf-8").split("\n")
    cells = next(csv.reader([lines[10]]))
    cells[8] = "y"
    lines[10] = ",".join(f'"{c}"' for c in cells)
    sheet.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(
        UserError, match=r"row 11 \(ID 10\), column Correct_ex: 'y' is not Y, N or blank"
    ):
        read_grade_sheet(sheet, catalogue)


def test_a_failure_midway_leaves_nothing_half_imported(
    sheet: Path, tmp_path: Path, catalogue: Catalogue, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = Store(tmp_path / "ws")

    def broken(*args: object, **kwargs: object) -> int:
        raise OSError("disk full")

    monkeypatch.setattr(store, "add_verdicts", broken)
    with pytest.raises(OSError, match="disk full"):
        import_grade_sheet(
            store, read_grade_sheet(sheet, catalogue), catalogue, model="m", rater="r"
        )
    assert store.runs() == [] and store.images() == []


def test_dry_run_writes_nothing(
    sheet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = tmp_path / "none"
    status, out, _ = run_cli(
        capsys, "import-grades", str(sheet), "--model", "m", "--store", str(ws), "--dry-run"
    )
    assert status == 0 and "would add" in out
    assert not ws.exists()


def test_module_entry_point(sheet: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "amvicc.import_grades",
            str(sheet),
            "--model",
            "m",
            "--store",
            str(tmp_path / "w"),
            "-q",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verdicts" in done.stdout
