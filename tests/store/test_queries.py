"""The store's typed reads: each returns what the ``current_*`` views and the tables hold."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from amvicc.errors import WorkspaceError
from amvicc.store import (
    EXTRACTOR_SOURCE,
    ImageRecord,
    ResponseRecord,
    RunRecord,
    RunSpec,
    SeedRange,
    Store,
    VerdictRecord,
    adjudication_source,
    human_source,
    image_judge_source,
    llm_judge_source,
    new_id,
    queries,
    sheet_source,
    source_role,
)
from amvicc.store.queries import FEW_SUBJECTS

JUDGE = image_judge_source("ocr", "rapidocr")


def _igm(store: Store, model: str = "sd", *, seed: int = 7) -> RunRecord:
    return store.start_run(RunSpec(stage="generate", model=model, outputs={"seed": seed}))


def _vlm(store: Store, model: str = "llava") -> RunRecord:
    return store.start_run(RunSpec(stage="answer", model=model, outputs={"prompt": "mmvp"}))


def _image(
    store: Store, run: RunRecord, index: int, *, kind: str = "implicit", seed: int | None = None
) -> str:
    image_id = new_id()
    store.add_images(
        [
            ImageRecord(
                image_id=image_id,
                run_id=run.run_id,
                config_key=run.config_key,
                question_index=index,
                prompt_kind=kind,  # type: ignore[arg-type]
                sample=0,
                prompt=f"prompt {index}",
                seed=seed,
                status="ok",
                path=f"images/{image_id}.png",
            )
        ]
    )
    return image_id


def _response(store: Store, run: RunRecord, index: int, *, image_key: str = "mmvp") -> str:
    response_id = new_id()
    store.add_responses(
        [
            ResponseRecord(
                response_id=response_id,
                run_id=run.run_id,
                config_key=run.config_key,
                question_index=index,
                image_key=image_key,
                prompt=f"question {index}",
                status="ok",
                text=f"reply {index}",
            )
        ]
    )
    return response_id


def _view(store: Store, column: str) -> pd.DataFrame:
    """The ``current_verdicts`` view itself, as the reference."""
    rows = [
        (getattr(v, column), v.source, v.value, v.verdict_id)
        for v in store.verdicts()
        if getattr(v, column) is not None
    ]
    return pd.DataFrame(rows, columns=["subject_id", "source", "value", "verdict_id"])


def test_latest_verdict_values_keep_the_newest_per_subject_and_source(store: Store) -> None:
    run = _igm(store)
    one, two, other = (_image(store, run, i) for i in (1, 2, 3))
    store.add_verdicts(
        [
            VerdictRecord(human_source("a"), "incorrect", image_id=one),
            VerdictRecord(human_source("b"), "correct", image_id=one),
            VerdictRecord(human_source("a"), "correct", image_id=one),  # supersedes the first
            VerdictRecord(JUDGE, "incorrect", image_id=one),
            VerdictRecord(human_source("a"), "cant_tell", image_id=two),
            VerdictRecord(human_source("a"), "correct", image_id=other),
        ]
    )
    found = store.latest_verdict_values("image", pd.Series([one, two]))
    assert list(found.columns) == ["subject_id", "source", "value", "verdict_id"]
    assert found[["subject_id", "source", "value"]].values.tolist() == [
        [one, human_source("b"), "correct"],
        [one, human_source("a"), "correct"],
        [one, JUDGE, "incorrect"],
        [two, human_source("a"), "cant_tell"],
    ]
    assert found["verdict_id"].is_monotonic_increasing
    assert found["verdict_id"].dtype == "int64"
    assert store.latest_verdict_values("response", pd.Series([one])).empty
    assert store.latest_verdict_values("image", []).empty


@pytest.mark.parametrize("few", [FEW_SUBJECTS, 0], ids=["looked-up", "read-all"])
def test_latest_verdict_values_agree_with_the_current_verdicts_view(
    store: Store, monkeypatch: pytest.MonkeyPatch, few: int
) -> None:
    monkeypatch.setattr(queries, "FEW_SUBJECTS", few)
    rng = random.Random(3)
    igm, vlm = _igm(store), _vlm(store)
    images = [_image(store, igm, i) for i in range(1, 11)]
    responses = [_response(store, vlm, i) for i in range(1, 11)]
    sources = [human_source("x"), human_source("y"), adjudication_source("z"), JUDGE]
    answer_sources = [EXTRACTOR_SOURCE, llm_judge_source("gpt"), human_source("x")]
    verdicts = []
    for _ in range(300):
        if rng.random() < 0.5:
            value = rng.choice(["correct", "incorrect", "cant_tell", "undecided"])
            verdicts.append(VerdictRecord(rng.choice(sources), value, image_id=rng.choice(images)))
        else:
            value = rng.choice(["a", "b", "undecided", "no_answer"])
            verdicts.append(
                VerdictRecord(rng.choice(answer_sources), value, response_id=rng.choice(responses))
            )
    store.add_verdicts(verdicts, skip_unchanged=False)
    for subject, column, ids in (
        ("image", "image_id", images),
        ("response", "response_id", responses),
    ):
        found = store.latest_verdict_values(subject, pd.Series(ids[:7]))  # type: ignore[arg-type]
        expected = _view(store, column)
        expected = expected[expected["subject_id"].isin(ids[:7])].reset_index(drop=True)
        assert found.astype(object).values.tolist() == expected.astype(object).values.tolist()


def test_latest_verdicts_on_a_few_subjects_match_the_view(store: Store) -> None:
    igm, vlm = _igm(store), _vlm(store)
    image, untouched = _image(store, igm, 1), _image(store, igm, 2)
    response = _response(store, vlm, 1)
    store.add_verdicts(
        [
            VerdictRecord(human_source("a"), "correct", image_id=image, comment="first"),
            VerdictRecord(EXTRACTOR_SOURCE, "undecided", response_id=response),
            VerdictRecord(human_source("a"), "incorrect", image_id=image, comment="second"),
            VerdictRecord(human_source("b"), "correct", image_id=untouched),
            VerdictRecord(human_source("a"), "b", response_id=response),
        ]
    )
    unknown = [f"unknown-{i}" for i in range(600)]  # spreads the ids over chunks
    found = store.latest_verdicts_on([image, *unknown, response, image])
    assert [(v.source, v.value, v.comment) for v in found] == [
        (EXTRACTOR_SOURCE, "undecided", None),
        (human_source("a"), "incorrect", "second"),
        (human_source("a"), "b", None),
    ]
    current = [v for v in store.verdicts() if v.image_id == image or v.response_id == response]
    assert found == current
    assert store.latest_verdicts_on([]) == []


def test_latest_verdicts_by_response_group_one_run(store: Store) -> None:
    run, other = _vlm(store), _vlm(store, "other")
    first, second = _response(store, run, 1), _response(store, run, 2)
    elsewhere = _response(store, other, 1)
    store.add_verdicts(
        [
            VerdictRecord(EXTRACTOR_SOURCE, "undecided", response_id=first),
            VerdictRecord(llm_judge_source("gpt"), "a", response_id=first),
            VerdictRecord(EXTRACTOR_SOURCE, "b", response_id=second),
            VerdictRecord(EXTRACTOR_SOURCE, "a", response_id=first),  # supersedes, now newest
            VerdictRecord(EXTRACTOR_SOURCE, "a", response_id=elsewhere),
        ]
    )
    grouped = store.latest_verdicts_by_response(run.run_id)
    assert set(grouped) == {first, second}
    assert [(v.source, v.value) for v in grouped[first]] == [
        (llm_judge_source("gpt"), "a"),
        (EXTRACTOR_SOURCE, "a"),
    ]
    assert [(v.source, v.value) for v in grouped[second]] == [(EXTRACTOR_SOURCE, "b")]


def test_import_queries(store: Store) -> None:
    run = _igm(store)
    image = _image(store, run, 1)
    source = sheet_source("grades.csv", "ann")
    store.add_verdicts(
        [
            VerdictRecord(source, "incorrect", image_id=image),
            VerdictRecord(source, "correct", image_id=image),
            VerdictRecord(human_source("ann"), "incorrect", image_id=image),
        ]
    )
    assert store.run_exists(run.run_id)
    assert not store.run_exists("nope")
    ids = [f"missing-{i}" for i in range(1200)] + [image]  # more than one chunk
    assert store.existing_image_ids(ids) == {image}
    assert store.latest_image_values(source, ids) == {image: "correct"}
    assert store.latest_image_values(sheet_source("other.csv", "ann"), ids) == {}


def test_records_by_id(store: Store) -> None:
    igm, vlm = _igm(store), _vlm(store)
    image, response = _image(store, igm, 4), _response(store, vlm, 5)
    images = store.images_by_id([image, "unknown"])
    assert list(images) == [image]
    assert images[image].prompt == "prompt 4"
    assert images[image] == store.image(image)
    responses = store.responses_by_id([response])
    assert responses[response].text == "reply 5"


def test_stored_image_paths_are_every_image_with_a_file(store: Store) -> None:
    igm = _igm(store)
    first, second = _image(store, igm, 1), _image(store, igm, 2)
    failed = new_id()
    store.add_images(
        [
            ImageRecord(
                image_id=failed,
                run_id=igm.run_id,
                config_key=igm.config_key,
                question_index=3,
                prompt_kind="implicit",
                sample=0,
                prompt="prompt 3",
                seed=None,
                status="failed",
                path=None,
            )
        ]
    )
    assert store.stored_image_paths() == {
        first: f"images/{first}.png",
        second: f"images/{second}.png",
    }


def test_seed_ranges_and_rubric_versions(store: Store) -> None:
    seeded, single, unseeded = _igm(store, "a"), _igm(store, "b"), _igm(store, "c")
    for index, seed in ((1, 10), (2, 12), (3, 11)):
        _image(store, seeded, index, seed=seed)
    _image(store, single, 1, seed=5)
    _image(store, single, 2, seed=5)
    image = _image(store, unseeded, 1)
    expected = {
        seeded.run_id: SeedRange(count=3, low=10, high=12),
        single.run_id: SeedRange(count=1, low=5, high=5),
    }
    assert store.image_seed_ranges([seeded.run_id, single.run_id, unseeded.run_id]) == expected
    assert store.image_seed_ranges([single.run_id]) == {single.run_id: expected[single.run_id]}
    assert store.image_seed_ranges() == expected  # every run's, in one scan
    store.add_verdicts(
        [
            VerdictRecord(JUDGE, "correct", image_id=image, rubric_version="v2"),
            VerdictRecord(JUDGE, "incorrect", image_id=image, rubric_version="v1"),
            VerdictRecord(human_source("a"), "correct", image_id=image),
        ]
    )
    assert store.rubric_versions() == {JUDGE: ("v1", "v2")}


def test_images_fingerprint_changes_with_images_and_runs(store: Store) -> None:
    empty = store.images_fingerprint()
    assert empty == (0, 0)
    run = _igm(store)
    after_run = store.images_fingerprint()
    _image(store, run, 1)
    after_image = store.images_fingerprint()
    assert len({empty, after_run, after_image}) == 3
    assert store.images_fingerprint() == after_image


def test_verdict_rows_for_rating_follow_people_and_answers(store: Store) -> None:
    igm, vlm = _igm(store), _vlm(store)
    image, response = _image(store, igm, 1), _response(store, vlm, 1)
    assert store.newest_verdict_id() == 0
    store.add_verdicts(
        [
            VerdictRecord(human_source("a"), "correct", image_id=image, comment="ok"),
            VerdictRecord(JUDGE, "incorrect", image_id=image),
            VerdictRecord(sheet_source("s.csv", "b"), "correct", image_id=image),
            VerdictRecord(adjudication_source("c"), "correct", image_id=image),
            VerdictRecord(EXTRACTOR_SOURCE, "undecided", response_id=response),
        ]
    )
    newest = store.newest_verdict_id()
    assert newest == 5
    rows = store.verdict_rows_for_rating(0, newest)
    assert [(r.verdict_id, r.source) for r in rows] == [
        (1, human_source("a")),
        (3, sheet_source("s.csv", "b")),
        (4, adjudication_source("c")),
        (5, EXTRACTOR_SOURCE),
    ]
    assert rows[0].comment == "ok"
    assert [r.verdict_id for r in store.verdict_rows_for_rating(3, 4)] == [4]
    assert store.verdict_rows_for_rating(newest, newest) == []


def test_verdict_history_frame_marks_the_current_rows(store: Store) -> None:
    igm, vlm = _igm(store, "sd"), _vlm(store, "llava")
    image, response = _image(store, igm, 2, kind="explicit"), _response(store, vlm, 3)
    store.add_verdicts(
        [
            VerdictRecord(human_source("a"), "correct", image_id=image),
            VerdictRecord(human_source("a"), "incorrect", image_id=image),
            VerdictRecord(EXTRACTOR_SOURCE, "a", response_id=response),
        ]
    )
    frame = store.verdict_history_frame()
    assert frame["current"].tolist() == [False, True, True]
    assert frame["subject"].tolist() == ["image", "image", "response"]
    assert frame["model"].tolist() == ["sd", "sd", "llava"]
    assert frame["question_index"].tolist() == [2, 2, 3]
    assert frame.loc[0, "prompt_kind"] == "explicit"
    assert frame.loc[2, "image_key"] == "mmvp"


def test_current_slots_of_configurations(store: Store) -> None:
    igm, other, vlm = _igm(store, "sd"), _igm(store, "flux"), _vlm(store)
    _image(store, igm, 1)
    newer = _image(store, igm, 1)  # the same slot again: supersedes the first
    _image(store, other, 1)
    images = store.current_image_slots([igm.config_key]).frame()
    assert images["image_id"].tolist() == [newer]
    assert images["question_index"].dtype == "int64"
    assert store.current_image_slots([]).frame().empty
    mmvp = _response(store, vlm, 1)
    _response(store, vlm, 1, image_key=newer)
    responses = store.current_response_slots([vlm.config_key], "mmvp")
    assert responses["response_id"].tolist() == [mmvp]
    assert list(responses.columns) == [
        "response_id",
        "config_key",
        "question_index",
        "sample",
        "status",
    ]


def test_current_image_slots_agree_with_the_current_images_view(store: Store) -> None:
    # Slots filled again and again, interleaved across configurations and prompt kinds: the
    # newest row of each slot wins, as in the view (read per configuration, decided in pandas).
    rng = random.Random(5)
    runs = [_igm(store, "sd"), _igm(store, "flux"), _igm(store, "dalle")]
    for _ in range(200):
        _image(
            store, rng.choice(runs), rng.randint(1, 6), kind=rng.choice(["implicit", "explicit"])
        )
    keys = [runs[2].config_key, runs[0].config_key]
    columns = ["image_id", "config_key", "question_index", "prompt_kind", "sample", "status"]
    found = store.current_image_slots(keys).frame()
    assert list(found.columns) == [*columns, "image_row"]
    view = pd.read_sql_query(
        f"SELECT {', '.join(columns)}, (SELECT rowid FROM images i "
        "WHERE i.image_id = current_images.image_id) AS image_row FROM current_images "
        "WHERE config_key IN (?, ?)",
        store.connection(),
        params=keys,
    )
    assert len(found) == len(view) == 24
    assert sorted(found.astype(object).values.tolist()) == sorted(
        view.astype(object).values.tolist()
    )
    assert found["config_key"].iloc[0] == keys[0]  # in the order asked for
    # Every configuration's slots, then some of them in another order: the same rows.
    every = store.current_image_slots()
    assert set(every.config_keys) == {r.config_key for r in runs}
    assert every.of(keys).frame().values.tolist() == found.values.tolist()
    assert every.of(["unknown"]).frame().empty


def test_image_verdict_codes_of_images_nobody_rated_are_empty(store: Store) -> None:
    codes = store.image_verdict_codes()  # no image yet
    assert len(codes.image_rows) == 0
    _image(store, _igm(store), 1)
    codes = store.image_verdict_codes()  # an image, no verdict at all
    assert len(codes.image_rows) == len(codes.verdict_ids) == 0
    assert codes.image_rows.dtype == "int64" and codes.sources == ()


@pytest.mark.parametrize("per_read", [queries.VERDICTS_PER_READ, 7])
def test_image_verdict_codes_agree_with_the_current_verdicts_view(
    store: Store, monkeypatch: pytest.MonkeyPatch, per_read: int
) -> None:
    # Verdicts on current and superseded images, sources superseding themselves, answers
    # between them: the codes name each source's latest verdict on each image, oldest first
    # (read in one piece, or in pieces of 7 verdict ids).
    monkeypatch.setattr(queries, "VERDICTS_PER_READ", per_read)
    rng = random.Random(11)
    igm, vlm = _igm(store), _vlm(store)
    images = [_image(store, igm, rng.randint(1, 4)) for _ in range(12)]
    response = _response(store, vlm, 1)
    sources = [human_source("x"), human_source("y"), JUDGE]
    verdicts = []
    for _ in range(200):
        if rng.random() < 0.2:
            verdicts.append(VerdictRecord(EXTRACTOR_SOURCE, "a", response_id=response))
            continue
        value = rng.choice(["correct", "incorrect", "cant_tell", "undecided"])
        verdicts.append(VerdictRecord(rng.choice(sources), value, image_id=rng.choice(images)))
    store.add_verdicts(verdicts, skip_unchanged=False)
    codes = store.image_verdict_codes()
    rows = dict(store.connection().execute("SELECT rowid, image_id FROM images").fetchall())
    found = [
        [rows[int(row)], codes.sources[source], codes.values[value], int(verdict)]
        for row, source, value, verdict in zip(
            codes.image_rows, codes.source_codes, codes.value_codes, codes.verdict_ids, strict=True
        )
    ]
    expected = _view(store, "image_id")
    assert found == expected.astype(object).values.tolist()
    assert len(found) == len({(image, source) for image, source, _, _ in found}) > 12


def test_runs_frame_of_some_stages(store: Store) -> None:
    _igm(store)
    _vlm(store)
    store.start_run(RunSpec(stage="grade", model="extractor", outputs={}))
    assert len(store.runs_frame()) == 3
    assert sorted(store.runs_frame(stages=("generate", "answer"))["stage"]) == [
        "answer",
        "generate",
    ]


@pytest.mark.parametrize(
    ("source", "role"),
    [
        (human_source("a"), "rater"),
        (sheet_source("s.csv", "a"), "rater"),
        (adjudication_source("a"), "adjudication"),
        (JUDGE, "judge"),
        (llm_judge_source("gpt"), "llm-judge"),
        (EXTRACTOR_SOURCE, "extractor"),
        ("someone", "other"),
    ],
)
def test_source_roles(source: str, role: str) -> None:
    assert source_role(source) == role


def test_a_verdict_source_unknown_when_the_sources_were_listed_is_left_out(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A source first written between the list of sources and the read codes -1 (SQL NULL):
    # its verdicts are left out, and no other verdict is taken for it.
    igm = _igm(store)
    image = _image(store, igm, 1)
    store.add_verdicts(
        [
            VerdictRecord(human_source("x"), "correct", image_id=image),
            VerdictRecord(human_source("late"), "incorrect", image_id=image),
        ]
    )
    tuples = store._tuples

    def without_late(query: str, params: list[object]) -> list[tuple[object, ...]]:
        rows = tuples(query, params)
        if "min(source)" in query:  # the list of sources
            rows = [r for r in rows if r[0] != human_source("late")]
        return rows

    monkeypatch.setattr(store, "_tuples", without_late)
    codes = store.image_verdict_codes()
    assert codes.sources == (human_source("x"),)
    assert codes.source_codes.tolist() == [0] and codes.value_codes.tolist() == [0]


def test_a_bulk_read_of_values_that_are_not_what_they_should_be_is_one_clear_error(
    store: Store,
) -> None:
    igm = _igm(store)
    _image(store, igm, 1)
    with pytest.raises(WorkspaceError, match="a column read in bulk holds other values"):
        store._bulk_columns(["prompt"], "FROM images", [])  # text, not integers
    # An id holding the separator of ids (a workspace edited by hand): one line, not a
    # misaligned table.
    store.connection().execute(
        "UPDATE images SET image_id = 'a' || char(31) || 'b' WHERE question_index = 1"
    )
    with pytest.raises(WorkspaceError, match="a column read in bulk holds other values"):
        store.current_image_slots()


def test_usage_of_every_configuration_holds_each_ones_own(store: Store) -> None:
    first, second = _igm(store, "sd"), _vlm(store)
    _image(store, first, 1)
    _image(store, first, 2)
    _response(store, second, 1)
    every = store.usage_frame()
    for key in (first.config_key, second.config_key):
        own = every[every["config_key"] == key].reset_index(drop=True)
        pd.testing.assert_frame_equal(own, store.usage_frame([key]))
    assert len(every) == 3


def test_pages_read_through_a_memory_map_read_the_same(store: Store) -> None:
    igm = _igm(store)
    image = _image(store, igm, 1)
    store.add_verdicts([VerdictRecord(human_source("x"), "correct", image_id=image)])
    before = store.image_verdict_codes()
    store.map_pages()
    assert store.connection().execute("PRAGMA mmap_size").fetchone()[0] > 0
    after = store.image_verdict_codes()
    assert after.verdict_ids.tolist() == before.verdict_ids.tolist() != []
