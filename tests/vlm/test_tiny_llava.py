"""The local transformers path end to end on the tiny LLaVA smoke model (offline, CPU)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.store import EXTRACTOR_SOURCE, Store
from amvicc.testing.mmvp_images import image_bytes, write_mmvp_images
from amvicc.vlm import LocalSettings, Reply, open_vlm
from amvicc.vlm.base import ChatTurn
from amvicc.vlm.smoke import build_tiny_llava, tiny_llava_path
from amvicc.vlm.transformers_vlm import TransformersVLM


def digests(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file()
    }


def test_build_is_deterministic_and_loads_through_from_pretrained(tmp_path: Path) -> None:
    first = digests(tiny_llava_path())
    again = tmp_path / "again"
    again.mkdir()
    build_tiny_llava(again)
    second = digests(again)
    assert first == second
    assert {"config.json", "model.safetensors", "tokenizer.json", "processor_config.json"} <= set(
        first
    )
    vlm = open_vlm("tiny-llava", local=LocalSettings(device="cpu", batch_size=2))
    assert isinstance(vlm, TransformersVLM) and vlm.smoke and vlm.name == "tiny-llava"
    assert type(vlm.model).__name__ == "LlavaForConditionalGeneration"
    assert type(vlm.processor).__name__ == "LlavaProcessor"


def test_batched_generate_matches_one_by_one() -> None:
    vlm = open_vlm("tiny-llava", local=LocalSettings(device="cpu", batch_size=3))
    prompts = [f"Is the door open? (a) Open (b) Closed {i}" for i in range(3)]

    async def ask_all(model: TransformersVLM) -> list[str | None]:
        replies = await asyncio.gather(
            *(model.ask(image_bytes(i), p, max_tokens=6) for i, p in enumerate(prompts))
        )
        return [r.text for r in replies]

    assert isinstance(vlm, TransformersVLM)
    batched = asyncio.run(ask_all(vlm))
    vlm.batch_size = 1
    single = asyncio.run(ask_all(vlm))
    assert batched == single  # left padding: a batch gives the same greedy replies
    assert all(isinstance(t, str) for t in batched)


def test_answer_with_tiny_llava(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    images = write_mmvp_images(tmp_path / "imgs", range(1, 5))
    workspace = tmp_path / "ws"
    args = ["answer", "--model", "tiny-llava", "--images", str(images), "--store", str(workspace),
            "--index", "1-4", "--max-tokens", "8", "--batch-size", "2", "--device", "cpu"]  # fmt: skip
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "smoke-test model" in captured.err and "smoke-test model" in captured.out
    with Store(workspace, create=False) as store:
        (run,) = store.runs()
        assert run.smoke == 1 and run.model == "tiny-llava"
        assert run.config["backend"] == "transformers" and run.config["dtype"] == "float32"
        responses = store.responses()
        assert len(responses) == 4 and all(r.status == "ok" for r in responses)
        for response in responses:
            body = json.loads(store.path(response.raw_path or "").read_bytes())
            assert body["text"].strip() == response.text and body["token_ids"]
            assert response.prompt_tokens and response.prompt_tokens > 16  # image tokens included
            assert response.completion_tokens and response.completion_tokens <= 8
        graded = store.verdicts(source=EXTRACTOR_SOURCE)
        assert len(graded) == 4
    # the same command again: nothing to do
    assert main(args) == 0
    with Store(workspace, create=False) as store:
        assert len(store.responses(current=False)) == 4


def test_unknown_local_model_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"cannot load hf:.*config.json"):
        open_vlm(f"hf:{tmp_path / 'nothing-here'}")


def test_processor_needing_torchvision_names_the_extra(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from transformers import Qwen2VLConfig

    if __import__("importlib.util").util.find_spec("torchvision") is not None:
        pytest.skip("torchvision is installed here")
    Qwen2VLConfig().save_pretrained(tmp_path / "qwen")
    with pytest.raises(UserError, match=r"needs torchvision.*amvicc\[qwen\]"):
        open_vlm(f"hf:{tmp_path / 'qwen'}")


def test_a_second_turn_goes_through_the_chat_template() -> None:
    vlm = open_vlm("tiny-llava", local=LocalSettings(device="cpu", batch_size=2))
    assert isinstance(vlm, TransformersVLM)
    first = ChatTurn.user("Is the door open? (a) Open (b) Closed", image_bytes(3))
    conversation = (
        first,
        ChatTurn.assistant("(a)"),
        ChatTurn.user("Please state your final answer."),
    )
    template = vlm.processor.apply_chat_template
    seen: list[str] = []

    def spy(messages: object, **kwargs: object) -> str:
        text = template(messages, **kwargs)
        seen.append(text)
        return str(text)

    vlm.processor.apply_chat_template = spy

    async def both() -> list[Reply]:
        return list(
            await asyncio.gather(
                vlm.converse((first,), max_tokens=4), vlm.converse(conversation, max_tokens=4)
            )
        )

    replies = asyncio.run(both())
    texts = [r.text for r in replies]
    assert all(isinstance(t, str) for t in texts)
    one, two = seen
    assert one.count("<image>") == 1 and two.count("<image>") == 1
    # the model's own reply goes back as the assistant's message, the new question after it
    assert two == one.removesuffix(" ASSISTANT:") + (
        " (a)</s>USER: Please state your final answer. ASSISTANT:"
    )
    assert replies[1].request["turns"] == 3 and "turns" not in replies[0].request
    # the one-turn conversation is exactly what ask() sends
    again = asyncio.run(
        vlm.ask(image_bytes(3), "Is the door open? (a) Open (b) Closed", max_tokens=4)
    )
    assert again.text == replies[0].text


class _Scripted(TransformersVLM):
    """The batching of :class:`TransformersVLM` around a scripted ``generate()``."""

    def __init__(self, batch_size: int, generate: Callable[[list[Any]], list[Reply]]) -> None:
        super().__init__(
            None, None, name="scripted", source="-", device="cpu", dtype="float32",
            batch_size=batch_size,
        )  # fmt: skip
        self._script = generate
        self.batches: list[list[str]] = []

    def generate(self, batch: list[Any]) -> list[Reply]:
        self.batches.append([p.turns[-1].text for p in batch])
        return self._script(batch)


def _echo(batch: list[Any]) -> list[Reply]:
    return [Reply(p.turns[-1].text, None, latency_s=0.0) for p in batch]


def test_the_next_full_batch_waits_in_the_model_thread_while_one_generates() -> None:
    release = threading.Event()
    queued_meanwhile: list[int] = []
    vlm: _Scripted

    def slow_first(batch: list[Any]) -> list[Reply]:
        if len(vlm.batches) == 1:
            assert release.wait(10)
        return _echo(batch)

    vlm = _Scripted(2, slow_first)

    async def ask_all() -> list[str | None]:
        asks = [asyncio.ensure_future(vlm.converse([ChatTurn.user(f"q{i}")])) for i in range(5)]
        while len(vlm.batches) < 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the first batch is generating
        queued_meanwhile.append(len(vlm._pending))
        release.set()
        return [reply.text for reply in await asyncio.gather(*asks)]

    assert asyncio.run(ask_all()) == [f"q{i}" for i in range(5)]
    # the second batch was handed to the model's thread before the first one ended (the fifth
    # question, a partial batch, waits for an idle model); the batches are what they were
    assert queued_meanwhile == [1]
    assert vlm.batches == [["q0", "q1"], ["q2", "q3"], ["q4"]]


def test_an_unexpected_error_in_generate_reaches_every_caller_instead_of_hanging() -> None:
    def broken(batch: list[Any]) -> list[Reply]:
        raise TypeError("a processor bug")

    vlm = _Scripted(2, broken)

    async def ask_all() -> list[Reply | BaseException]:
        asks = [vlm.converse([ChatTurn.user(f"q{i}")]) for i in range(5)]
        gathered = asyncio.gather(*asks, return_exceptions=True)  # each caller's own outcome
        return list(await asyncio.wait_for(gathered, timeout=20))

    outcomes = asyncio.run(ask_all())
    assert len(outcomes) == 5
    assert all(isinstance(o, TypeError) and str(o) == "a processor bug" for o in outcomes)
    asyncio.run(vlm.aclose())
    assert vlm._thread is None
