"""Local vision-language models through transformers (``hf:<repo id or folder>``).

The model loads with ``AutoProcessor`` and ``AutoModelForImageTextToText`` and is prompted
through its own chat template. :meth:`TransformersVLM.ask` is asynchronous like the API back
end: concurrent calls are gathered into batches for one ``generate()`` each, run in the
model's own thread so the event loop keeps storing replies and drawing the progress bar. The
next full batch waits in that thread's queue while one generates, so the model goes from one
batch to the next without waiting for the event loop to hand it over.
"""

from __future__ import annotations

import asyncio
import importlib.util
import io
import json
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amvicc.api import ApiSettings
from amvicc.errors import UserError
from amvicc.vlm.base import (
    VLM,
    ChatTurn,
    EncodedImage,
    LocalSettings,
    Reply,
    check_conversation,
    conversation_images,
    conversation_request,
    fold_system_prompt,
)

if TYPE_CHECKING:
    import torch

# transformers 5.x processors of these families import torchvision (their video processor).
NEEDS_TORCHVISION = frozenset(
    {
        "qwen2_vl",
        "qwen2_5_vl",
        "qwen2_5_omni",
        "qwen3_vl",
        "qwen3_vl_moe",
        "qwen3_omni_moe",
        "smolvlm",
        "llava_onevision",
        "internvl",
        "glm4v",
    }
)
TORCHVISION_HINT = (
    "install torchvision built for your torch (pip install 'amvicc[qwen]'; "
    "see https://pytorch.org for the matching build)"
)


@dataclass
class _Pending:
    turns: tuple[ChatTurn, ...]
    temperature: float
    max_tokens: int
    seed: int | None
    future: asyncio.Future[Reply]

    @property
    def images(self) -> list[EncodedImage]:
        return conversation_images(self.turns)

    @property
    def group(self) -> tuple[int, float, int]:
        """Requests that can share one generate() call (the same number of images)."""
        return (len(self.images), self.temperature, self.max_tokens)


class TransformersVLM(VLM):
    """A transformers image-text-to-text model on this machine.

    Use :meth:`load`; the constructor takes an already loaded model and processor.
    """

    kind = "transformers"

    def __init__(
        self,
        model: Any,
        processor: Any,
        *,
        name: str,
        source: str,
        device: str,
        dtype: str,
        batch_size: int,
        smoke: bool = False,
    ) -> None:
        self.model = model
        self.processor = processor
        self.name = name
        self.source = source
        self.device = device
        self.dtype = dtype
        self.batch_size = batch_size
        self.smoke = smoke
        # Twice a batch in flight keeps the next batch ready while one generates.
        self.concurrency = 2 * batch_size
        self._pending: list[_Pending] = []
        self._drainer: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: ThreadPoolExecutor | None = None  # the one thread that calls the model

    @classmethod
    def load(
        cls, source: str, local: LocalSettings, *, name: str, smoke: bool = False
    ) -> TransformersVLM:
        """Load a model from a Hugging Face repo id or a local folder.

        Raises:
            UserError: the model cannot be found or loaded, is no image-text-to-text model, or
                its processor needs torchvision, which is not installed.
        """
        import torch
        import transformers

        hf: Any = transformers  # its stubs type only part of the API used here
        hf.utils.logging.disable_progress_bar()
        device = resolve_device(local.device)
        dtype = resolve_dtype(local.dtype, device)
        try:
            config = hf.AutoConfig.from_pretrained(source)
        except (OSError, ValueError) as err:
            raise UserError(
                f"cannot load {name}: {_first_line(err)}; give a Hugging Face repo id or a "
                "folder with config.json (offline: download it first with `hf download`)"
            ) from None
        model_type = getattr(config, "model_type", "")
        if model_type in NEEDS_TORCHVISION and importlib.util.find_spec("torchvision") is None:
            raise UserError(
                f"{name} ({model_type}) needs torchvision for its processor; " + TORCHVISION_HINT
            )
        try:
            processor = hf.AutoProcessor.from_pretrained(source)
        except ImportError as err:
            if "torchvision" in str(err):
                raise UserError(
                    f"{name}'s processor needs torchvision; {TORCHVISION_HINT}"
                ) from None
            raise UserError(f"cannot load {name}'s processor: {_first_line(err)}") from None
        except (OSError, ValueError) as err:
            raise UserError(f"cannot load {name}'s processor: {_first_line(err)}") from None
        if getattr(processor, "chat_template", None) is None:
            raise UserError(f"{name} has no chat template; use an instruction-tuned (chat) model")
        try:
            model = hf.AutoModelForImageTextToText.from_pretrained(
                source, dtype=getattr(torch, dtype)
            )
        except ValueError as err:
            raise UserError(
                f"{name} is not an image-text-to-text model transformers can load "
                f"({_first_line(err)})"
            ) from None
        model = model.to(device).eval()
        tokenizer = getattr(processor, "tokenizer", None)
        if tokenizer is not None:
            tokenizer.padding_side = "left"  # decoder-only generation continues on the right
        return cls(
            model,
            processor,
            name=name,
            source=source,
            device=device,
            dtype=dtype,
            batch_size=local.batch_size,
            smoke=smoke,
        )

    def describe(self) -> dict[str, Any]:
        """Where the weights came from and how they run."""
        return {
            "backend": self.kind,
            "source": self.source,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
        }

    def outputs(self) -> dict[str, Any]:
        """The precision changes replies; the device and batch size should not."""
        return {"dtype": self.dtype}

    async def converse(
        self,
        turns: Sequence[ChatTurn],
        *,
        temperature: float = 0.0,
        max_tokens: int = 512,
        seed: int | None = None,
    ) -> Reply:
        """Queue one conversation; it is answered in the next batch. See :meth:`VLM.converse`.

        The model's chat template lays out the turns (the earlier reply as the assistant's
        message), so a second turn is prompted the way the model was trained to continue.
        """
        check_conversation(turns)
        turns = fold_system_prompt(turns)
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._pending, self._drainer, self._loop = [], None, loop
        future: asyncio.Future[Reply] = loop.create_future()
        self._pending.append(_Pending(tuple(turns), temperature, max_tokens, seed, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = loop.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        """Hand batches to the model's thread, at most two at a time, and deliver the replies.

        While one batch generates, the next full one already waits in the thread's queue, so
        the model never idles for the event loop's turn (on a busy machine, each hand-over
        can wait a whole time slice). A batch is always the first ``batch_size`` queued
        questions of one group, as when each batch was taken after the previous one ended: the
        replies do not depend on timing. A partial batch goes only to an idle model.
        """
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="amvicc-model")
        queued: deque[tuple[list[_Pending], asyncio.Future[list[Reply]]]] = deque()
        while self._pending or queued:
            await asyncio.sleep(0)  # let the other callers queue their questions first
            batch = self._take(full=bool(queued)) if len(queued) < 2 else []
            if batch:
                queued.append((batch, loop.run_in_executor(self._thread, self.generate, batch)))
                continue
            if not queued:
                continue
            batch, running = queued.popleft()
            try:
                replies = await running
            except (Exception, asyncio.CancelledError) as err:
                # Every waiting caller is told (generate() turns the model's own errors into
                # error replies; this is a bug, or the run being cancelled), none left hanging.
                self._fail([*batch, *(p for b, _ in queued for p in b)], err)
                if isinstance(err, asyncio.CancelledError):
                    raise
                return
            for pending, reply in zip(batch, replies, strict=True):
                if not pending.future.done():
                    pending.future.set_result(reply)

    def _fail(self, batch: list[_Pending], err: BaseException) -> None:
        waiting, self._pending = [*batch, *self._pending], []
        for pending in waiting:
            if pending.future.done():
                continue
            if isinstance(err, asyncio.CancelledError):
                pending.future.cancel()
            else:
                pending.future.set_exception(err)

    def _take(self, *, full: bool) -> list[_Pending]:
        """The next batch: the first queued questions of the first one's group.

        Args:
            full: take them only if they fill a batch (a model still busy can wait for more).
        """
        if not self._pending:
            return []
        group = self._pending[0].group
        batch = [p for p in self._pending if p.group == group][: self.batch_size]
        if full and len(batch) < self.batch_size:
            return []
        self._pending = [p for p in self._pending if p not in batch]
        return batch

    async def aclose(self) -> None:
        """Stop the model's thread (started again by the next question)."""
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.shutdown(wait=True, cancel_futures=True)

    def generate(self, batch: list[_Pending]) -> list[Reply]:
        """Answer a batch with one ``generate()``; a failure becomes an error per reply."""
        import torch

        started = time.perf_counter()
        first = batch[0]
        request = {
            "model": self.source,
            "temperature": first.temperature,
            "max_tokens": first.max_tokens,
        }
        try:
            inputs = self._inputs(batch)
            options: dict[str, Any] = {"max_new_tokens": first.max_tokens}
            if first.temperature > 0:
                # One generator per generate() call: sampled replies are reproducible for the
                # same batches; use --batch-size 1 for per-question reproducibility.
                torch.manual_seed(first.seed or 0)
                options.update(do_sample=True, temperature=first.temperature)
            else:
                options.update(do_sample=False)
            with torch.inference_mode():
                output = self.model.generate(**inputs, **options)
        except (RuntimeError, ValueError) as err:
            latency = time.perf_counter() - started
            return [
                Reply(None, None, latency_s=latency, request=request, error=_first_line(err))
                for _ in batch
            ]
        latency = time.perf_counter() - started
        prompt_length = inputs["input_ids"].shape[1]
        new_tokens = output[:, prompt_length:]
        texts = self.processor.batch_decode(new_tokens, skip_special_tokens=True)
        pad_id = self._pad_id()
        replies = []
        for row, (pending, text) in enumerate(zip(batch, texts, strict=True)):
            ids = [int(t) for t in new_tokens[row].tolist()]
            completion = len([t for t in ids if t != pad_id]) if pad_id is not None else len(ids)
            prompt_tokens = int(inputs["attention_mask"][row].sum())
            body = {
                "model": self.name,
                "text": text,
                "token_ids": ids,
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion,
            }
            item_request = dict(request, seed=pending.seed, batch_size=len(batch))
            item_request.update(conversation_request(pending.turns))
            replies.append(
                Reply(
                    text=text.strip(),
                    raw=json.dumps(body).encode(),
                    prompt_tokens=prompt_tokens,
                    completion_tokens=completion,
                    latency_s=latency,
                    request=item_request,
                )
            )
        return replies

    def _inputs(self, batch: list[_Pending]) -> dict[str, torch.Tensor]:
        from PIL import Image

        texts = []
        images = []  # one list per prompt: what multi-image processors (Idefics3, Gemma 3) need
        for pending in batch:
            messages = [_template_message(turn) for turn in pending.turns]
            if pending.images:
                images.append(
                    [Image.open(io.BytesIO(image.data)).convert("RGB") for image in pending.images]
                )
            texts.append(
                self.processor.apply_chat_template(
                    messages, add_generation_prompt=True, tokenize=False
                )
            )
        inputs = self.processor(
            text=texts, images=images or None, padding=True, return_tensors="pt"
        )
        return {k: v.to(self.device) for k, v in inputs.items()}

    def _pad_id(self) -> int | None:
        tokenizer = getattr(self.processor, "tokenizer", self.processor)
        pad = getattr(tokenizer, "pad_token_id", None)
        return int(pad) if pad is not None else None


def _template_message(turn: ChatTurn) -> dict[str, Any]:
    """One turn in the shape processors' chat templates take (an image placeholder first)."""
    content: list[dict[str, Any]] = []
    if turn.image is not None:
        content.append({"type": "image"})
    content.append({"type": "text", "text": turn.text})
    return {"role": turn.role, "content": content}


def resolve_device(device: str) -> str:
    """``auto`` becomes CUDA, else Apple's MPS, else CPU; others are checked.

    Raises:
        UserError: the device is not available here.
    """
    import torch

    if device == "auto":
        if torch.cuda.is_available():
            return "cuda"
        if torch.backends.mps.is_available():
            return "mps"
        return "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {device}: CUDA is not available on this machine; use cpu")
    try:
        torch.device(device)
    except RuntimeError:
        raise UserError(
            f"--device {device!r} is not a torch device (cpu, cuda, cuda:1, mps)"
        ) from None
    return device


def resolve_dtype(dtype: str, device: str) -> str:
    """``auto`` becomes bfloat16 on CUDA and float32 elsewhere."""
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float16"
    return "float32"


def _first_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return text[0][:300] if text else type(err).__name__


def open_transformers(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    """The registry's opener for ``hf:<repo id or folder>``."""
    return TransformersVLM.load(target, local, name=name)
