"""AMVICC's two ablations, in sheets of AMVICC's shape (written here, questions 81–100).

- wording: the explicit prompts reworded; imported as a prompt variant of the catalogue and
  compared with the baseline sheet of the same model;
- randomness: the same prompts three times, IDs ``81`` … ``100``, ``81-2`` … ``100-3``;
  imported as three samples of one model.

``amvicc report --index 81-100`` must give the per-category numbers a hand computation (the
way AMVICC's ``ablation_studies_display.py`` counts, blanks as failures) gives.
"""

from __future__ import annotations

import csv
import io
import random
import statistics
from collections.abc import Callable
from pathlib import Path

import pytest

from amvicc.catalogue import Catalogue
from amvicc.cli import main
from amvicc.store import Store

HEADER = [
    "ID ",
    "Category",
    "Question",
    "Answer Choices",
    "Answer",
    "Implicit Prompt",
    "Correct_im",
    "Explicit Prompt",
    "Correct_ex",
    "Comments",
]
INDICES = range(81, 101)
METRIC_COLUMNS = {
    "individual_implicit": ("Correct_im", False),
    "individual_explicit": ("Correct_ex", False),
    "pair_implicit": ("Correct_im", True),
    "pair_explicit": ("Correct_ex", True),
}


def write_sheet(
    path: Path,
    catalogue: Catalogue,
    *,
    seed: int,
    samples: int = 1,
    explicit: Callable[[str], str] = lambda text: text,
) -> Path:
    """A sheet in AMVICC's format: verdicts drawn from ``seed``, some blank, a typo on 96."""
    rng = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    for sample in range(1, samples + 1):
        for index in INDICES:
            q = catalogue.question(index)
            cells = [rng.choice(["Y", "Y", "Y", "N", "N", ""]) for _ in range(2)]
            writer.writerow(
                [
                    str(index) if sample == 1 else f"{index}-{sample}",
                    q.category.code,
                    ("3" + q.text) if index == 96 else q.text,  # AMVICC's typo
                    q.options_text,
                    f"({q.mmvp_answer})",
                    q.implicit_prompt,
                    cells[0],
                    explicit(q.explicit_prompt or ""),
                    cells[1],
                    "",
                ]
            )
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def by_hand(path: Path) -> dict[tuple[int, str, str], tuple[int, int]]:
    """(sample, category, metric) -> (correct, total), counting as AMVICC's script does.

    Rows are grouped by sample (the suffix of the ID), then by category in sheet order;
    pairs are two consecutive rows of a category; a blank is not ``Y``.
    """
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    out: dict[tuple[int, str, str], tuple[int, int]] = {}
    samples = sorted({int(r["ID "].split("-")[1]) if "-" in r["ID "] else 1 for r in rows})
    for sample in samples:
        mine = [
            r for r in rows if (int(r["ID "].split("-")[1]) if "-" in r["ID "] else 1) == sample
        ]
        for category in sorted({r["Category"] for r in mine}):
            subset = [r for r in mine if r["Category"] == category]
            for metric, (column, pairs) in METRIC_COLUMNS.items():
                if pairs:
                    units = [subset[i : i + 2] for i in range(0, len(subset), 2)]
                    right = sum(all(r[column] == "Y" for r in unit) for unit in units)
                    out[(sample, category, metric)] = (right, len(units))
                else:
                    right = sum(r[column] == "Y" for r in subset)
                    out[(sample, category, metric)] = (right, len(subset))
    return out


def report_rows(store: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, str]]:
    capsys.readouterr()
    argv = ["report", "--store", str(store), "--index", "81-100", "--format", "csv"]
    assert main([*argv, "--bootstrap", "0", "-q"]) == 0
    return list(csv.DictReader(io.StringIO(capsys.readouterr().out)))


def imported(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["import-grades", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def sheets(tmp_path: Path, catalogue: Catalogue) -> dict[str, Path]:
    return {
        "normal": write_sheet(tmp_path / "dalle3_normalab.csv", catalogue, seed=1),
        "wording": write_sheet(
            tmp_path / "dalle3_wording_ab.csv",
            catalogue,
            seed=2,
            explicit=lambda text: f"Generate {text.removeprefix('generate ')}, clearly visible",
        ),
        "randomness": write_sheet(tmp_path / "dalle3_randomness.csv", catalogue, seed=3, samples=3),
    }


def test_wording_sheet_is_a_prompt_variant_compared_with_its_baseline(
    sheets: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "ws"
    status, out, err = imported(
        [str(sheets["normal"]), "--model", "dalle3-ab", "--store", str(store)], capsys
    )
    assert status == 0 and "prompt variant" not in out
    assert "row 17 (ID 96), column Question" in err  # the typo: a warning, matched by ID
    status, out, _ = imported(
        [
            str(sheets["wording"]),
            "--model",
            "dalle3-ab",
            "--variant",
            "wording",
            "--store",
            str(store),
        ],
        capsys,
    )
    assert status == 0
    assert "prompt variant 'wording': 20 prompt(s) differ from the catalogue's" in out

    with Store(store, create=False) as opened:
        variant = next(r for r in opened.runs(stage="import") if "wording" in r.config_json)
        assert variant.config["variant"] == "wording"
        prompts = variant.config["variant_prompts"]
        assert len(prompts) == 20 and prompts["81-explicit"].startswith("Generate a hammerhead")
        images = opened.images(run_id=variant.run_id)
        explicit = {i.question_index: i.prompt for i in images if i.prompt_kind == "explicit"}
        assert explicit[81] == prompts["81-explicit"]  # each image tied to its own prompt

    rows = report_rows(store, capsys)
    for sheet, label, condition in (
        (sheets["normal"], "dalle3-ab", ""),
        (sheets["wording"], "dalle3-ab · wording", "variant=wording"),
    ):
        hand = by_hand(sheet)
        got = {
            (r["category"], r["metric"]): (int(r["correct"]), int(r["total"]))
            for r in rows
            if r["model"] == label and r["condition"] == condition and r["category"] != "all"
        }
        assert got == {(c, m): v for (_, c, m), v in hand.items()}
    normal, wording = by_hand(sheets["normal"]), by_hand(sheets["wording"])
    difference = next(
        r
        for r in rows
        if r["metric"] == "pair_explicit_difference"
        and r["category"] == "pf"
        and r["condition"] == "variant=wording vs=dalle3-ab"
    )
    (right_w, total), (right_n, _) = (
        wording[(1, "pf", "pair_explicit")],
        normal[(1, "pf", "pair_explicit")],
    )
    assert float(difference["value"]) == pytest.approx((right_w - right_n) / total, abs=5e-7)
    assert difference["p_value"] and difference["p_adjusted"]
    # Exactly the 20 questions: the six categories they hold, 10 pairs in all.
    categories = {r["category"] for r in rows if r["model"] == "dalle3-ab" and not r["condition"]}
    assert categories == {"pf", "sc", "ca", "sh", "tx", "pr", "all"}
    total_pairs = next(
        r
        for r in rows
        if r["model"] == "dalle3-ab" and r["category"] == "all" and r["metric"] == "pair_explicit"
    )
    assert total_pairs["total"] == "10"
    status = main(
        ["report", "--store", str(store), "--index", "81-100", "-o", str(tmp_path / "r.md")]
    )
    markdown = (tmp_path / "r.md").read_text()
    assert status == 0 and "| dalle3-ab · wording | dalle3-ab | P Ex | pf |" in markdown


def test_randomness_sheet_is_three_samples_of_one_model(
    sheets: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "ws"
    status, out, _ = imported(
        [str(sheets["randomness"]), "--model", "dalle3-rand", "--store", str(store)], capsys
    )
    assert status == 0 and "3 samples per question (IDs N, N-2, ..., N-3)" in out
    with Store(store, create=False) as opened:
        samples = {i.sample for i in opened.images()}
        assert samples == {0, 1, 2}
    rows = report_rows(store, capsys)
    hand = by_hand(sheets["randomness"])
    mine = [r for r in rows if r["model"] == "dalle3-rand"]
    for (sample, category, metric), (right, total) in hand.items():
        got = next(
            r
            for r in mine
            if r["condition"] == f"sample={sample}"
            and r["category"] == category
            and r["metric"] == metric
        )
        assert (int(got["correct"]), int(got["total"])) == (right, total)
    for category in {c for _, c, _ in hand}:
        for metric in METRIC_COLUMNS:
            values = [
                hand[(s, category, metric)][0] / hand[(s, category, metric)][1] for s in (1, 2, 3)
            ]
            cells = {
                r["condition"]: r
                for r in mine
                if r["category"] == category and r["metric"] == metric
            }
            assert float(cells["mean@3"]["value"]) == pytest.approx(
                statistics.mean(values), abs=5e-7
            )
            assert float(cells["min@3"]["value"]) == pytest.approx(min(values), abs=5e-7)
            assert float(cells["max@3"]["value"]) == pytest.approx(max(values), abs=5e-7)
            assert float(cells["sd@3"]["value"]) == pytest.approx(
                statistics.stdev(values), abs=5e-7
            )
            # The accuracy rows count every (item, sample): mean@k under --missing fail.
            assert float(cells[""]["value"]) == pytest.approx(statistics.mean(values), abs=5e-7)
            right = sum(hand[(s, category, metric)][0] for s in (1, 2, 3))
            assert int(cells[""]["correct"]) == right
    assert main(["report", "--store", str(store), "--index", "81-100", "-q"]) == 0
    html = (store / "report.html").read_text()
    assert 'title="sample 1: ' in html and "<th>min</th><th>max</th><th>sd</th>" in html


def test_a_second_rater_of_the_variant_grades_the_same_images(
    sheets: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    catalogue: Catalogue,
) -> None:
    store = tmp_path / "ws"
    base = ["--model", "m", "--store", str(store)]
    assert imported([str(sheets["wording"]), *base], capsys)[0] == 0  # unnamed: hashed name
    second = write_sheet(
        tmp_path / "wording_bob.csv",
        catalogue,
        seed=9,
        explicit=lambda text: f"Generate {text.removeprefix('generate ')}, clearly visible",
    )
    status, out, _ = imported([str(second), *base, "--rater", "bob"], capsys)
    assert status == 0 and "prompt variant 'prompts-" in out
    with Store(store, create=False) as opened:
        (run,) = opened.runs(stage="import")  # one configuration: bob's votes join ann's
        assert run.config["variant"].startswith("prompts-")
        sources = {v.source for v in opened.verdicts()}
        assert sources == {"sheet:dalle3_wording_ab.csv:grader", "sheet:wording_bob.csv:bob"}
    other = write_sheet(
        tmp_path / "other_wording.csv", catalogue, seed=4, explicit=lambda text: f"{text}, twice"
    )
    status, _, err = imported(
        [str(other), "--model", "m", "--variant", run.config["variant"], "--store", str(store)],
        capsys,
    )
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "differs from the prompt of the image already imported" in err


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("81-0", "samples count from 1"),
        ("81-x", "is not a question number"),
        ("82", "appears twice"),
    ],
)
def test_bad_sample_ids_fail_in_one_line(
    cell: str,
    message: str,
    tmp_path: Path,
    catalogue: Catalogue,
    capsys: pytest.CaptureFixture[str],
) -> None:
    sheet = write_sheet(tmp_path / "bad.csv", catalogue, seed=5, samples=2)
    lines = sheet.read_text().splitlines()
    lines[3] = cell + lines[3][lines[3].index(",") :]  # the row of ID 83
    sheet.write_text("\n".join(lines) + "\n")
    status, _, err = imported([str(sheet), "--model", "m", "--store", str(tmp_path / "ws")], capsys)
    assert status == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "ws").exists()
