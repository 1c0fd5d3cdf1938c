"""Integer codes of the report's subjects and verdicts, and the sections that work on them.

:mod:`amvicc.report.subjects` hashes with Arrow when pyarrow is installed and with pandas'
hash tables otherwise; both must give the same codes as pandas' own factorize / get_indexer,
and the sections built on them the same tables as the string joins they replace.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import amvicc.report.subjects as subjects_module
from amvicc.catalogue import load_catalogue
from amvicc.report.gallery import _choose
from amvicc.report.items import Items, ModelEntry, category_sort_key
from amvicc.report.raters import rater_agreement
from amvicc.report.subjects import count_strings, encode, subject_codes

CATALOGUE = load_catalogue()
STRINGS = st.lists(st.one_of(st.sampled_from(["", "a", "b", "ab", "ü", "a b"]), st.none()))


@pytest.fixture(params=["arrow", "pandas"])
def hashing(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with Arrow's hashing, then with pandas' (as without pyarrow)."""
    if request.param == "pandas":
        monkeypatch.setattr(subjects_module, "pa", None)
        monkeypatch.setattr(subjects_module, "pc", None)
    return str(request.param)


# The fixture only chooses the hashing: the same for every generated input.
@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(STRINGS, STRINGS)
def test_codes_equal_pandas_factorize_and_get_indexer(
    hashing: str, values: list[str | None], others: list[str | None]
) -> None:
    # Python strings are hashed by pandas; pandas' Arrow-backed strings by Arrow (when
    # installed): the codes are the same either way.
    for column in _as_each_string_type(values):
        encoded = encode(column)
        codes, uniques = pd.factorize(column.to_numpy(dtype=object))
        assert encoded.codes.tolist() == codes.tolist()
        assert encoded.names() == list(uniques)
        assert len(encoded) == len(uniques)
        ranks = pd.factorize(column.to_numpy(dtype=object), sort=True)[0]
        assert encoded.ranks().tolist() == ranks.tolist()
        for name in ["", "a", "zz"]:
            assert encoded.number(name) == (list(uniques).index(name) if name in uniques else -1)
        other = pd.Series(others, dtype=object)
        expected = pd.Index(uniques, dtype=object).get_indexer(other.to_numpy(dtype=object))
        assert encoded.find(other).tolist() == expected.tolist()
        counted = count_strings(column)
        assert counted == {str(k): int(n) for k, n in column.value_counts().items()}
        assert list(counted) == list(uniques)  # as first met, whichever hashed them


def _as_each_string_type(values: list[str | None]) -> list[pd.Series]:
    """The values as Python strings, and as pandas' Arrow-backed strings where pyarrow is."""
    columns = [pd.Series(values, dtype=object)]
    if subjects_module.pa is not None:
        columns.append(pd.Series(values, dtype=pd.StringDtype("pyarrow")))
    return columns


def _verdicts(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["subject_id", "source", "value"], dtype=object)
    return frame.assign(verdict_id=range(len(rows)))


def _entry(key: str, modality: str = "igm") -> ModelEntry:
    return ModelEntry(key, key, key, modality, False, 1, "corrected", (f"run-{key}",))


def test_subject_codes_number_subjects_and_leave_unknown_ones_out(hashing: str) -> None:
    frame = pd.DataFrame(
        {
            "entry": ["m", "m", "m", "m"],
            "subject_id": ["x", "", "y", "x"],
            "modality": ["igm"] * 4,
        }
    )
    images = _verdicts(
        [
            ("y", "human:a", "correct"),
            ("gone", "human:a", "incorrect"),
            ("x", "human:b", "cant_tell"),
        ]
    )
    answers = _verdicts([("x", "extractor", "a")])
    items = Items((_entry("m"),), frame, images, answers, CATALOGUE, "human")
    codes = subject_codes(items)
    assert subject_codes(items) is codes  # made once per items
    x, y = codes.rows[0], codes.rows[2]
    assert codes.rows.tolist() == [x, -1, y, x]
    assert codes.first_row[x] == 0 and codes.first_row[y] == 2
    assert codes.image.subject.tolist() == [y, -1, x]
    assert codes.image.sources == ["human:a", "human:b"]
    assert [codes.image.values[v] for v in codes.image.value] == [
        "correct",
        "incorrect",
        "cant_tell",
    ]
    assert codes.response.subject.tolist() == [x]


def test_rater_agreement_counts_only_items_and_orders_models_as_first_rated(hashing: str) -> None:
    rng = np.random.default_rng(3)
    frame_rows, verdicts = [], []
    for model in ("second", "first"):
        for i in range(20):
            subject = f"{model}-{i}"
            frame_rows.append({"entry": model, "subject_id": subject, "modality": "igm"})
            for rater in ("human:a", "human:b"):
                verdicts.append((subject, rater, str(rng.choice(["correct", "incorrect"]))))
    verdicts.append(("superseded", "human:a", "correct"))  # no item: left out
    verdicts.append(("second-0", "human:c", "undecided"))  # undecided: left out
    entries = (_entry("first"), _entry("second"))
    items = Items(
        entries, pd.DataFrame(frame_rows), _verdicts(verdicts), _verdicts([]), CATALOGUE, "human"
    )
    table = rater_agreement(items)
    assert table["label"].tolist() == ["second", "first"]
    assert table["raters"].tolist() == ["human:a vs human:b"] * 2
    assert table["items"].tolist() == [20, 20]
    by_subject = pd.DataFrame(verdicts[:80], columns=["subject", "rater", "value"])
    wide = by_subject.pivot(index="subject", columns="rater", values="value")
    for label, row in table.set_index("label").iterrows():
        mine = wide[wide.index.str.startswith(f"{label}-")]
        assert row["percent"] == pytest.approx((mine["human:a"] == mine["human:b"]).mean())


def _reference_choice(items: Items, per_model: int) -> pd.DataFrame:
    """The gallery's choice as pandas sorts and groupbys made it before integer codes."""
    f = items.frame
    wrong = f[f["outcome"] == "incorrect"].copy()
    wrong["_category"] = category_sort_key(wrong["category"])
    wrong = wrong.sort_values(["entry", "_category", "question_index", "kind", "sample"])
    wrong["_turn"] = wrong.groupby(["entry", "category"]).cumcount()
    wrong = wrong.sort_values(["_turn", "_category", "question_index"])
    chosen = wrong.groupby("entry", sort=False).head(per_model)
    order = {e.key: i for i, e in enumerate(items.entries)}
    chosen = chosen.assign(_entry=chosen["entry"].map(order)).sort_values(
        ["_entry", "_category", "question_index", "kind", "sample"]
    )
    return chosen[f.columns]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["b", "a", "c"]),
            st.sampled_from(CATALOGUE.questions[:40]),
            st.sampled_from(["implicit", "explicit"]),
            st.integers(0, 2),
            st.sampled_from(["correct", "incorrect", "missing"]),
        ),
        max_size=60,
        unique_by=lambda row: (row[0], row[1].index, row[2], row[3]),
    ),
    st.integers(1, 5),
)
def test_gallery_choice_equals_the_pandas_sorts(
    rows: list[tuple[str, object, str, int, str]], per_model: int
) -> None:
    frame = pd.DataFrame(
        [
            {
                "entry": entry,
                "label": entry,
                "modality": "igm",
                "kind": kind,
                "question_index": question.index,  # type: ignore[attr-defined]
                "category": question.category.code,  # type: ignore[attr-defined]
                "sample": sample,
                "subject_id": f"{entry}-{question.index}-{kind}-{sample}",  # type: ignore[attr-defined]
                "outcome": outcome,
            }
            for entry, question, kind, sample, outcome in rows
        ],
        columns=[
            "entry",
            "label",
            "modality",
            "kind",
            "question_index",
            "category",
            "sample",
            "subject_id",
            "outcome",
        ],
    )
    entries = (_entry("c"), _entry("a"), _entry("b"))
    items = Items(entries, frame, _verdicts([]), _verdicts([]), CATALOGUE, "human")
    expected = _reference_choice(items, per_model)
    chosen = _choose(items, per_model)
    assert chosen["subject_id"].tolist() == expected["subject_id"].tolist()
