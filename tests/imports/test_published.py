"""AMVICC's published grade sheets, shipped in ``grades/``, reproduce AMVICC's README table.

The table below is AMVICC-IGM's README ("Image Generation Models"), as printed: I Im, I Ex,
P Im, P Ex per category for DALL·E 3, Gemini 2.5 Flash Image ("Google Flash") and SD 3.5 Large
("Stable Diffusion") — 108 numbers. The README prints no all-category row; the 12 numbers of
that row follow from the printed ones (each category's count is its value times its size),
so 120 numbers in all are checked against ``amvicc import-grades`` + the report.

Two printed numbers come from a raw cell: DALL·E 3's sheet grades question 109's implicit
image `` Y`` (row 110), which AMVICC's script compared with ``Y`` as written. Read stripped,
sc I Im is 54/54 and sc P Im 27/27; the report says so beside the table and gives the raw
reading — which is the printed 0.981481 and 0.962963.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest

from amvicc.catalogue import Catalogue
from amvicc.imports import ImportGradesOptions, run_import_grades
from amvicc.imports.published import PUBLISHED_SHEETS, published_sheets
from amvicc.report import ReportOptions, build_report, render_report
from amvicc.store import Store

README = {
    "DALL·E 3": """
        sc  0.981481  0.777778  0.962963  0.555556
        sh  1.000000  0.900000  1.000000  0.800000
        od  0.966667  0.666667  0.933333  0.400000
        tx  1.000000  0.714286  1.000000  0.428571
        qc  0.916667  0.666667  0.916667  0.500000
        pr  1.000000  0.750000  1.000000  0.562500
        pf  0.985714  0.757143  0.971429  0.571429
        vp  1.000000  0.833333  1.000000  0.666667
        ca  0.928571  0.892857  0.928571  0.857143
    """,
    "Gemini 2.5 Flash Image": """
        ca  1.000000  0.964286  1.000000  0.928571
        od  0.966667  0.966667  0.933333  0.933333
        pf  0.971429  0.857143  0.971429  0.742857
        pr  0.968750  0.906250  0.937500  0.812500
        qc  1.000000  0.750000  1.000000  0.666667
        sc  1.000000  0.944444  1.000000  0.888889
        sh  1.000000  0.966667  1.000000  0.933333
        tx  1.000000  0.785714  1.000000  0.571429
        vp  1.000000  1.000000  1.000000  1.000000
    """,
    "SD 3.5 Large": """
        ca  0.964286  0.785714  0.928571  0.642857
        od  0.866667  0.566667  0.800000  0.200000
        pf  0.928571  0.671429  0.885714  0.400000
        pr  0.875000  0.437500  0.875000  0.125000
        qc  0.916667  0.500000  0.916667  0.250000
        sc  0.962963  0.555556  0.925926  0.259259
        sh  0.900000  0.733333  0.866667  0.466667
        tx  0.857143  0.428571  0.857143  0.142857
        vp  0.944444  0.777778  0.888889  0.666667
    """,
}
METRICS = ("individual_implicit", "individual_explicit", "pair_implicit", "pair_explicit")
RAW_CELL = {("DALL·E 3", "sc", "individual_implicit"), ("DALL·E 3", "sc", "pair_implicit")}
# Byte-for-byte copies of AMVICC-IGM's scripts/*_grades.csv (see grades/SOURCE.md).
SHA256 = {
    "dalle3_grades.csv": "8540b0addf976b53ebd45105a3fe9149c232ae32a0b870cfaee670a017d76ceb",
    "google_flash_grades.csv": "a67a9394a991793c91b55f7acddc4f65f09278eac5edc1522cddfd89e8a9011f",
    "stability_grades.csv": "02ff6ea90f9745bc93c0762c87a565c62e42a5e1ceb12203758500e82ecd03d6",
}


def published_table() -> dict[tuple[str, str, str], float]:
    table = {}
    for model, text in README.items():
        for line in text.strip().splitlines():
            code, *values = line.split()
            for metric, value in zip(METRICS, values, strict=True):
                table[(model, code, metric)] = float(value)
    return table


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, catalogue: Catalogue) -> Path:
    root = tmp_path_factory.mktemp("published") / "ws"
    for sheet, model in published_sheets():
        run_import_grades(
            ImportGradesOptions(sheet=sheet, model=model), store=root, catalogue=catalogue
        )
    return root


def test_the_shipped_sheets_are_amviccs_byte_for_byte() -> None:
    sheets = published_sheets()
    assert [(path.name, model) for path, model in sheets] == list(PUBLISHED_SHEETS)
    for path, _ in sheets:
        assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[path.name]
    assert (sheets[0][0].parent / "SOURCE.md").read_text().count("CC0") == 1


def test_all_120_numbers_of_amviccs_readme_table(imported: Path, catalogue: Catalogue) -> None:
    with Store(imported, create=False) as store:
        report = build_report(store, ReportOptions(bootstrap=0))
    metrics = report.metrics.set_index(["label", "category", "metric"])
    published = published_table()
    assert len(published) == 108
    raw = {
        (row.label, row.category, row.metric): row
        for row in report.analyses.raw_cells.itertuples()
        if row.category != "all"
    }
    checked = 0
    for (model, code, metric), value in published.items():
        if (model, code, metric) in RAW_CELL:
            note = raw[(model, code, metric)]
            assert round(note.raw_value, 6) == value  # the printed number, from the raw cell
            assert note.value == 1.0 and note.cells == [
                "dalle3_grades.csv row 110: ' Y' (ID 109, Correct_im)"
            ]
        else:
            assert round(float(metrics.loc[(model, code, metric), "value"]), 6) == value
        checked += 1
    assert set(raw) == RAW_CELL  # no other number differs
    # The all-category row: the categories' counts (value × size) over the 300 questions.
    sizes = {c.code: len(catalogue.select(categories=[c])) for c in catalogue.categories()}
    for model in README:
        for metric in METRICS:
            unit = 2 if metric.startswith("pair") else 1
            right = sum(
                round(published[(model, code, metric)] * size / unit)
                for code, size in sizes.items()
            )
            if model == "DALL·E 3" and metric.endswith("implicit"):
                right += 1  # the stripped reading of ID 109's ` Y`
            got = metrics.loc[(model, "all", metric)]
            assert (int(got["correct"]), int(got["total"])) == (right, 300 // unit)
            checked += 1
    assert checked == 120
    # SOURCE.md's quick check: all-category I Ex.
    assert [
        round(float(metrics.loc[(m, "all", "individual_explicit"), "value"]), 6) for m in README
    ] == [0.773333, 0.906667, 0.613333]


def test_the_report_names_the_models_and_says_why_one_cell_differs(imported: Path) -> None:
    with Store(imported, create=False) as store:
        report = build_report(store, ReportOptions(bootstrap=0))
    html = render_report(report, "html")
    first = html[html.index("<table") : html.index("</table>")]
    assert [name in first for name in README] == [True, True, True]
    assert "Human grades imported from grade sheets: DALL·E 3 (dalle3_grades.csv)" in html
    assert "gives\n    <strong>0.981481</strong> (53/54)" in html
    markdown = render_report(report, "md")
    assert "A script comparing raw cells (AMVICC's own analysis) gives 0.962963 (26/27)" in markdown
    frame = pd.DataFrame(report.analyses.raw_cells)
    assert set(frame["category"]) == {"sc", "all"}
