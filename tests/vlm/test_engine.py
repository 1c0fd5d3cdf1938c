"""The answering engine as other stages use it: work items in, stored replies out."""

from __future__ import annotations

from pathlib import Path

import pytest

from amvicc.api import ApiSettings
from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.store import RunSpec, Store
from amvicc.testing.fake_openai import FakeOpenAIServer
from amvicc.testing.mmvp_images import image_bytes
from amvicc.vlm import AnswerEngine, EncodedImage, SamplingParams, WorkItem, open_vlm


def items(catalogue: Catalogue, indices: range, samples: int = 1) -> list[WorkItem]:
    out = []
    for index in indices:
        image = EncodedImage.from_bytes(image_bytes(index))
        for sample in range(samples):
            out.append(
                WorkItem(
                    question=catalogue.question(index),
                    image_key="mmvp",
                    image=image,
                    prompt=f"question {index}",
                    sample=sample,
                    input_path=f"inputs/{image.sha256}.png",
                )
            )
    return out


def engine(store: Store, server: FakeOpenAIServer, seed: int = 0) -> AnswerEngine:
    run = store.start_run(RunSpec(stage="answer", model="fake-vlm", outputs={"seed": seed}))
    vlm = open_vlm("fake-vlm", api=ApiSettings(base_url=server.url, max_connections=4))
    return AnswerEngine(store, run, vlm, SamplingParams(seed=seed))


def test_engine_stores_replies_and_image_copies(
    store: Store, server: FakeOpenAIServer, catalogue: Catalogue
) -> None:
    work = items(catalogue, range(1, 6), samples=2)
    answering = engine(store, server)
    result = answering.answer_sync(work)
    assert result.answered == 10 and result.errors == 0
    assert [r.question_index for r in result.records] == [w.question.index for w in work]
    assert answering.pending(work) == []
    for item in work:
        assert store.path(item.input_path or "").read_bytes() == item.image.data  # type: ignore[union-attr]
    assert len(list((store.root / "inputs").iterdir())) == 5  # one copy per distinct image


def test_seeds_depend_only_on_the_slot(
    store: Store, server: FakeOpenAIServer, catalogue: Catalogue
) -> None:
    answering = engine(store, server, seed=5)
    work = items(catalogue, range(1, 4), samples=2)
    seeds = [answering.item_seed(w) for w in work]
    assert seeds == [answering.item_seed(w) for w in reversed(work)][::-1]
    assert len(set(seeds)) == 6
    other = engine(store, server, seed=6)
    assert seeds != [other.item_seed(w) for w in work]


def test_storage_failure_is_one_clear_error(
    store: Store, server: FakeOpenAIServer, catalogue: Catalogue
) -> None:
    (store.root / "responses").write_text("a file where the folder should be")
    answering = engine(store, server)
    with pytest.raises(UserError, match="cannot store replies in"):
        answering.answer_sync(items(catalogue, range(1, 3)))


def test_a_text_only_item(
    store: Store, server: FakeOpenAIServer, catalogue: Catalogue, tmp_path: Path
) -> None:
    answering = engine(store, server)
    with FakeOpenAIServer(chat=lambda request: "no image here") as text_server:
        answering.vlm = open_vlm("fake-vlm", api=ApiSettings(base_url=text_server.url))
        item = WorkItem(question=catalogue.question(1), image_key="none", image=None, prompt="hi")
        (record,) = answering.answer_sync([item]).records
    assert record.text == "no image here" and record.input_path is None
