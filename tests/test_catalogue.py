from __future__ import annotations

import csv
from pathlib import Path

import pytest

from amvicc.catalogue import (
    CATEGORIES,
    Catalogue,
    check_catalogue,
    load_catalogue,
    parse_categories,
)
from amvicc.errors import UserError
from amvicc.resources import default_catalogue_path

DATA = Path(__file__).parent / "data"


def test_shipped_catalogue_has_the_amvicc_shape(catalogue: Catalogue) -> None:
    assert len(catalogue) == 300
    assert len(catalogue.pairs()) == 150
    prompts = catalogue.prompts()
    assert len(prompts) == 600
    assert sum(p.kind == "implicit" for p in prompts) == 300
    assert {c.code for c in catalogue.categories()} == {
        "od",
        "pf",
        "sc",
        "qc",
        "pr",
        "ca",
        "sh",
        "tx",
        "vp",
    }
    counts = {c.code: sum(q.category == c for q in catalogue) for c in CATEGORIES}
    assert counts == {
        "od": 30,
        "pf": 70,
        "sc": 54,
        "qc": 24,
        "pr": 32,
        "ca": 28,
        "sh": 30,
        "tx": 14,
        "vp": 18,
    }


def test_questions_parse_options_and_pairs(catalogue: Catalogue) -> None:
    q = catalogue.question(1)
    assert q.text == "Are the butterfly's wings closer to being open or closed?"
    assert [(o.label, o.text) for o in q.options] == [("a", "Open"), ("b", "Closed")]
    assert q.options_text == "(a) Open (b) Closed"
    assert q.pair == 1 and q.category.name == "State and Condition"
    for first, second in catalogue.pairs().values():
        assert first.text == second.text and first.answer != second.answer


def test_label_errors_are_corrected_by_default(catalogue: Catalogue) -> None:
    assert catalogue.label_policy == "corrected"
    assert catalogue.corrected_indices == (99, 100, 279, 280)
    assert [catalogue.question(i).answer for i in (99, 100, 279, 280)] == ["b", "a", "b", "a"]
    assert [catalogue.question(i).mmvp_answer for i in (99, 100, 279, 280)] == ["a", "b", "a", "b"]
    assert catalogue.question(101).answer == "a"


def test_original_labels_keep_mmvp() -> None:
    original = load_catalogue(labels="original")
    assert original.corrected_indices == ()
    assert [original.question(i).answer for i in (99, 100, 279, 280)] == ["a", "b", "a", "b"]


def test_explicit_prompt_target_does_not_follow_the_label_policy(catalogue: Catalogue) -> None:
    # AMVICC wrote the explicit prompts of 279/280 for the corrected labels, of 99/100 for MMVP's.
    original = load_catalogue(labels="original")
    for cat in (catalogue, original):
        assert cat.question(279).explicit_answer == "b"  # "sitting on a bench"
        assert cat.question(280).explicit_answer == "a"  # "standing up"
        assert cat.question(99).explicit_answer == "a"  # "long curved tusks"
    explicit = {p.question.index: p for p in catalogue.prompts(["explicit"])}
    assert explicit[279].shows == "b"
    assert "sitting" in explicit[279].text


def test_amvicc_questions_copy_with_unescaped_quotes_parses_all_rows() -> None:
    result = check_catalogue(DATA / "amvicc_questions.csv")
    assert result.problems == ()
    cat = result.catalogue
    assert cat is not None and cat.format == "amvicc-questions"
    assert len(cat) == 300 and len(cat.pairs()) == 150
    assert cat.question(9).text == 'Can you see the key "Z" in the image?'
    assert cat.question(130).text.startswith(
        'From the camera\'s perspective, are the words "SCHOOL BUS"'
    )
    assert cat.question(130).category.code == "od"
    assert not cat.has_prompts
    with pytest.raises(UserError, match="no generation prompts"):
        cat.prompts()


def _write_mmvp(path: Path, catalogue: Catalogue) -> None:
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Index", "Question", "Options", "Correct Answer"])
        for q in catalogue:
            writer.writerow([q.index, q.text, q.options_text, f"({q.mmvp_answer})"])


def test_mmvp_original_format_takes_amvicc_categories(tmp_path: Path, catalogue: Catalogue) -> None:
    path = tmp_path / "Questions.csv"
    _write_mmvp(path, catalogue)
    loaded = load_catalogue(path)
    assert loaded.format == "mmvp"
    assert len(loaded) == 300
    assert loaded.question(9).text == catalogue.question(9).text
    assert all(loaded.question(q.index).category == q.category for q in catalogue)
    assert loaded.corrected_indices == (99, 100, 279, 280)


HEADER = "index,pair,category_code,category,question,options,answer,implicit_prompt,explicit_prompt"
GOOD = [
    "1,1,tx,Text,Is there a sign?,(a) Yes (b) No,(a),a street,a street with a STOP sign",
    "2,1,tx,Text,Is there a sign?,(a) Yes (b) No,(b),a street,a street without any sign",
]


def _catalogue_file(tmp_path: Path, rows: list[str], header: str = HEADER) -> Path:
    path = tmp_path / "mine.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_bring_your_own_catalogue(tmp_path: Path) -> None:
    cat = load_catalogue(_catalogue_file(tmp_path, GOOD))
    assert len(cat) == 2 and cat.prompts()[1].text == "a street with a STOP sign"
    assert cat.question(1).explicit_answer == "a"


def test_corrections_apply_only_to_mmvps_own_question(tmp_path: Path) -> None:
    rows = [
        "99,50,sh,Structural and Physical Characteristics,Is it big?,(a) Yes (b) No,(a),x,x big",
        "100,50,sh,Structural and Physical Characteristics,Is it big?,(a) Yes (b) No,(b),x,x small",
    ]
    cat = load_catalogue(_catalogue_file(tmp_path, rows))
    assert cat.corrected_indices == ()
    assert cat.question(99).answer == "a"


@pytest.mark.parametrize(
    ("rows", "line", "message"),
    [
        ([GOOD[0], GOOD[1].replace("a street without any sign", "")], 3, "missing explicit prompt"),
        ([GOOD[0].replace(",a street,", ",,"), GOOD[1]], 2, "missing implicit prompt"),
        ([GOOD[0], GOOD[1].replace("a street without any sign", "A  Street")], 3, "identical"),
        ([GOOD[0], GOOD[1].replace("tx,Text", "zz,Text")], 3, "unknown category 'zz'"),
        ([GOOD[0], GOOD[1].replace("2,1,", "1,1,")], 3, "duplicate index 1 (first on line 2)"),
        ([GOOD[0]], 2, "pair 1 has 1 question(s)"),
        ([GOOD[0], GOOD[1].replace(",(b),", ",(a),")], 2, "same answer"),
        ([GOOD[0], GOOD[1].replace("Is there a sign?", "Is it red?")], 2, "different questions"),
        ([GOOD[0], GOOD[1].replace("tx,Text", "qc,Quantity and Count")], 2, "different categories"),
        ([GOOD[0], GOOD[1].replace("(a) Yes (b) No", "Yes or No")], 3, "do not read as"),
        ([GOOD[0], GOOD[1].replace(",(b),", ",(c),")], 3, "is not (a) or (b)"),
        ([GOOD[0], GOOD[1].replace("tx,Text", "tx,Colour")], 3, "does not match code"),
        ([GOOD[0], GOOD[1] + ",extra"], 3, "has 10 fields"),
    ],
)
def test_check_names_file_and_line(
    tmp_path: Path, rows: list[str], line: int, message: str
) -> None:
    path = _catalogue_file(tmp_path, rows)
    result = check_catalogue(path)
    assert result.catalogue is None
    assert any(p.line == line and message in p.message for p in result.problems), result.problems
    assert str(result.problems[0]).startswith(f"{path}:")
    with pytest.raises(UserError, match=r"mine\.csv:\d+: .*amvicc prompts check"):
        load_catalogue(path)


def test_missing_columns_and_unreadable_files(tmp_path: Path) -> None:
    result = check_catalogue(_catalogue_file(tmp_path, GOOD, header="index,question"))
    assert result.problems[0].line == 1 and "missing column(s)" in result.problems[0].message
    with pytest.raises(UserError, match="does not exist"):
        check_catalogue(tmp_path / "nope.csv")
    binary = tmp_path / "bin.csv"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(UserError, match="not UTF-8"):
        check_catalogue(binary)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(UserError, match="empty"):
        check_catalogue(empty)


def test_selection_and_categories(catalogue: Catalogue) -> None:
    text = catalogue.select(categories=parse_categories(["tx"]))
    assert len(text) == 14 and {q.category.code for q in text} == {"tx"}
    assert [q.index for q in catalogue.select(indices={99, 100, 5})] == [5, 99, 100]
    assert parse_categories(["Text", "qc"])[0].code == "tx"
    with pytest.raises(UserError, match="known categories: od"):
        parse_categories(["colour"])


def test_shipped_catalogue_matches_its_source_columns() -> None:
    with default_catalogue_path().open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 300
    assert [r["index"] for r in rows if r["explicit_answer"] != r["answer"]] == ["279", "280"]


def test_frame_has_one_row_per_question(catalogue: Catalogue) -> None:
    frame = catalogue.to_frame()
    assert frame.shape[0] == 300
    assert frame.loc[frame["index"] == 99, "answer"].item() == "b"
