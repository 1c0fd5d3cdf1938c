"""The answering engine: ask a VLM about many images, storing every reply as it arrives.

It takes :class:`WorkItem` s (question, image, rendered prompt, sample), asks with bounded
concurrency, and stores each reply verbatim with its latency, token counts and request
parameters before anything parses it. Failures are stored as ``error`` rows (never as wrong
answers) and retried by the next run; a malformed body is also retried at once. The answering
stage, the challenge stage (a second turn after the model's first reply: the same engine with
a longer conversation) and the image judge's question-back method all run on it.
"""

from __future__ import annotations

import asyncio
import queue
import random
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from amvicc.api import drain_bounded, gather_bounded
from amvicc.catalogue import Question
from amvicc.errors import WorkspaceError
from amvicc.provenance import canonical_json, derive_seed
from amvicc.store import ClaimFeed, ResponseRecord, RunRecord, Store, new_id
from amvicc.vlm.base import VLM, ChatTurn, EncodedImage, Reply

if TYPE_CHECKING:
    from tqdm import tqdm

    from amvicc.lifecycle import RunLifecycle

Slot = tuple[int, str, int]


@dataclass(frozen=True)
class SamplingParams:
    """How replies are sampled (part of a run's identity).

    Attributes:
        temperature: 0 for greedy decoding.
        max_tokens: the longest reply.
        seed: the base seed; each item's seed derives from it and the item's slot.
    """

    temperature: float = 0.0
    max_tokens: int = 512
    seed: int = 0


@dataclass(frozen=True)
class WorkItem:
    """One question to ask about one image, alone or after earlier turns of a conversation.

    Attributes:
        question: the MMVP question.
        image_key: ``mmvp`` for the benchmark's image, else the generated image's id.
        image: the image's bytes (sent with ``prompt``, or with the first of ``history``).
        prompt: the rendered prompt: the last user message (stored with the reply).
        sample: which of the repeated samples this is (0-based).
        image_id: the generated image's id, if the image is one.
        input_path: where the image's copy is (or goes) in the workspace; the engine writes the
            copy there before storing the first reply that refers to it.
        extra: more to record with the request (e.g. the generated image's prompt kind).
        history: the turns before ``prompt`` (a challenge: the first question with its image,
            then the model's first reply); empty for a plain question about ``image``.
        parent_response_id: the stored first-turn reply ``history`` replays (a challenge).
    """

    question: Question
    image_key: str
    image: EncodedImage | None
    prompt: str
    sample: int = 0
    image_id: str | None = None
    input_path: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    history: tuple[ChatTurn, ...] = ()
    parent_response_id: str | None = None

    def turns(self) -> tuple[ChatTurn, ...]:
        """The conversation to send: the history, then ``prompt`` (with the image if alone)."""
        if self.history:
            return (*self.history, ChatTurn.user(self.prompt))
        return (ChatTurn.user(self.prompt, self.image),)

    @property
    def slot(self) -> Slot:
        """What identifies the item in a run: (question index, image key, sample)."""
        return (self.question.index, self.image_key, self.sample)


@dataclass(frozen=True)
class EngineResult:
    """What one pass of the engine did.

    Attributes:
        records: the final stored record of each item, in input order.
        errors: items that ended in an error (retried by the next run).
        error_kinds: how often each error message occurred.
        seconds: wall time.
    """

    records: tuple[ResponseRecord, ...]
    errors: int
    error_kinds: Counter[str]
    seconds: float

    @property
    def answered(self) -> int:
        """Items that got a reply."""
        return len(self.records) - self.errors


class AnswerEngine:
    """Asks a VLM about work items and stores each reply in a run.

    Args:
        store: the workspace.
        run: the run the replies belong to (its ``config_key`` keys the slots).
        vlm: the model.
        sampling: temperature, reply length, base seed.
        retries: immediate re-asks after a malformed body (HTTP retries are the client's).
        concurrency: requests in flight; defaults to what the model asks for.
    """

    def __init__(
        self,
        store: Store,
        run: RunRecord,
        vlm: VLM,
        sampling: SamplingParams,
        *,
        retries: int = 2,
        concurrency: int | None = None,
    ) -> None:
        self.store = store
        self.run = run
        self.vlm = vlm
        self.sampling = sampling
        self.retries = retries
        self.concurrency = concurrency or vlm.concurrency
        self._errors: Counter[str] = Counter()
        self._progress: tqdm[object] | None = None
        self._writer: ResponseWriter | None = None

    def pending(self, items: Sequence[WorkItem]) -> list[WorkItem]:
        """The items without a successful reply in this run's configuration yet."""
        done = self.store.done_response_slots(self.run.config_key)
        return [item for item in items if item.slot not in done]

    def item_seed(self, item: WorkItem) -> int:
        """The item's seed: independent of order, batching and concurrency."""
        return derive_seed(self.sampling.seed, *item.slot)

    def answered(self, chosen: Sequence[WorkItem]) -> set[str]:
        """Which of ``chosen`` have a successful reply by now (another process's included)."""
        done = self.store.done_response_slots(self.run.config_key)
        return {item_key(item) for item in chosen if item.slot in done}

    def ask_shared(
        self, life: RunLifecycle, todo: Sequence[WorkItem], *, desc: str | None = None
    ) -> EngineResult:
        """Ask about ``todo`` as a to-do list shared with identical processes.

        Each item is claimed through the run's lifecycle before it is asked about, and
        checked again to have no reply yet, so two identical commands (answer, challenge,
        judge) split the work; the lifecycle's bar advances as each reply is stored.
        """
        feed = life.share(todo, item_key, done=self.answered, chunk=self.concurrency)
        bar = life.progress_bar(len(todo), desc=desc or self.vlm.name)
        return self.answer_sync(todo, progress=bar, feed=feed)

    def ask_and_finish(
        self,
        life: RunLifecycle,
        items: Sequence[WorkItem],
        todo: Sequence[WorkItem],
        *,
        desc: str | None = None,
        summary: Mapping[str, Any] | None = None,
    ) -> tuple[EngineResult, int]:
        """Ask about ``todo`` (shared), then finish the run with what every asking stage records.

        The run is ``finished`` when every item of ``items`` has a reply or is another
        process's to answer, else ``failed`` (rerunning retries the failures).

        Returns:
            The engine's result and how many items failed.
        """
        result = self.ask_shared(life, todo, desc=desc)
        # Items another process holds are its to answer, not failures of this run.
        failed = self.unfinished(life, items)
        life.finish(
            "finished" if failed == 0 else "failed",
            {
                "items": len(items),
                "answered": len(items) - failed,
                "errors": failed,
                "asked_now": life.taken,
                "answered_elsewhere": life.elsewhere,
                "seconds": round(result.seconds, 3),
                **(summary or {}),
            },
        )
        return result, failed

    def unfinished(self, life: RunLifecycle, items: Sequence[WorkItem]) -> int:
        """Items still without a reply that no other process holds: this run's failures."""
        life.release()
        held = life.held_elsewhere()
        return sum(1 for item in self.pending(items) if item_key(item) not in held)

    async def answer(
        self,
        items: Sequence[WorkItem],
        *,
        progress: tqdm[object] | None = None,
        feed: ClaimFeed[WorkItem] | None = None,
    ) -> EngineResult:
        """Ask about every item; each reply is stored the moment it arrives.

        Args:
            items: what to ask.
            progress: advanced as each item finishes.
            feed: take the items from this shared to-do list instead (:meth:`ask_shared`):
                ``concurrency`` workers each take their next item when they are free.
        """
        started = time.perf_counter()
        self._errors = Counter()
        self._progress = progress
        if progress is not None:
            progress.set_postfix_str("errors 0", refresh=False)
        self._writer = ResponseWriter(self.store)
        try:
            if feed is None:
                records = await gather_bounded(
                    items, self._answer_one, limit=self.concurrency, progress=progress
                )
            else:
                records = await drain_bounded(
                    feed.take_one, self._answer_one, limit=self.concurrency, progress=progress
                )
        finally:
            try:
                await self.vlm.aclose()
            finally:
                self._writer.close()
        return EngineResult(
            tuple(records),
            sum(r.status == "error" for r in records),
            self._errors,
            time.perf_counter() - started,
        )

    def answer_sync(
        self,
        items: Sequence[WorkItem],
        *,
        progress: tqdm[object] | None = None,
        feed: ClaimFeed[WorkItem] | None = None,
    ) -> EngineResult:
        """:meth:`answer` from synchronous code."""
        return asyncio.run(self.answer(items, progress=progress, feed=feed))

    async def _answer_one(self, item: WorkItem) -> ResponseRecord:
        seed = self.item_seed(item)
        for attempt in range(self.retries + 1):
            reply = await self.vlm.converse(
                item.turns(),
                temperature=self.sampling.temperature,
                max_tokens=self.sampling.max_tokens,
                seed=seed,
            )
            record = self._store(item, reply, seed)
            if reply.ok or not reply.retryable or attempt == self.retries:
                break
            await asyncio.sleep(0.25 * 2**attempt * (1 - 0.25 * random.random()))
        if record.status == "error":
            self._errors[record.error or "error"] += 1
            if self._progress is not None:
                self._progress.set_postfix_str(f"errors {sum(self._errors.values())}")
        return record

    def _store(self, item: WorkItem, reply: Reply, seed: int) -> ResponseRecord:
        request = {"seed": seed, **reply.request, **item.extra}
        response_id = new_id()
        record = ResponseRecord(
            response_id=response_id,
            run_id=self.run.run_id,
            config_key=self.run.config_key,
            question_index=item.question.index,
            image_key=item.image_key,
            prompt=item.prompt,
            status="ok" if reply.ok else "error",
            sample=item.sample,
            image_id=item.image_id,
            input_path=item.input_path,
            text=reply.text,
            error=reply.error,
            latency_s=reply.latency_s,
            prompt_tokens=reply.prompt_tokens,
            completion_tokens=reply.completion_tokens,
            request_json=canonical_json(request),
            raw_path=None if reply.raw is None else response_file(self.run.run_id, response_id),
            parent_response_id=item.parent_response_id,
        )
        assert self._writer is not None
        copy = (item.input_path, item.image.data) if item.input_path and item.image else None
        self._writer.submit(record, reply.raw, copy)
        return record


def item_key(item: WorkItem) -> str:
    """An item's slot as a claim names it: ``<index>:<image key>:<sample>``."""
    index, image_key, sample = item.slot
    return f"{index}:{image_key}:{sample}"


def response_file(run_id: str, response_id: str) -> str:
    """Where a response's verbatim body is kept, relative to the workspace."""
    return f"responses/{run_id}/{response_id}.json"


# A reply to store: its row, its raw body, and the image copy it refers to (path, bytes).
_Entry = tuple[ResponseRecord, bytes | None, tuple[str, bytes] | None]


class ResponseWriter:
    """Stores replies from a background thread: files first, then rows, in batches.

    The event loop only queues a reply; a thread writes the image copy (once) and the raw body
    atomically, then commits the waiting rows in one transaction. A reply is on disk within
    milliseconds of arriving; a process killed in between loses only the replies still queued,
    which the next run asks for again (their slots are not done).
    """

    def __init__(self, store: Store, *, batch: int = 64) -> None:
        self.store = store
        self.batch = batch
        self._queue: queue.SimpleQueue[_Entry | None] = queue.SimpleQueue()
        self._present: set[str] = set()
        self._error: BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, name="amvicc-response-writer", daemon=True
        )
        self._thread.start()

    def submit(
        self, record: ResponseRecord, raw: bytes | None, copy: tuple[str, bytes] | None
    ) -> None:
        """Queue a reply (with the image copy it refers to, if any) for storing."""
        self._raise()
        self._queue.put((record, raw, copy))

    def close(self) -> None:
        """Store everything queued, stop the thread, and raise its error if it had one."""
        self._queue.put(None)
        self._thread.join()
        self._raise()

    def _run(self) -> None:
        while True:
            entry = self._queue.get()
            stop = entry is None
            batch: list[_Entry] = []
            while entry is not None:
                batch.append(entry)
                if len(batch) >= self.batch:
                    break
                try:
                    entry = self._queue.get_nowait()
                except queue.Empty:
                    break
                stop = entry is None
            if batch and self._error is None:
                try:
                    self._write(batch)
                except BaseException as err:  # raised in the event loop by submit() or close()
                    self._error = err
            if stop:
                return

    def _write(self, batch: list[_Entry]) -> None:
        for record, raw, copy in batch:
            if copy is not None and copy[0] not in self._present:
                if not self.store.path(copy[0]).is_file():
                    self.store.write_file(copy[0], copy[1])
                self._present.add(copy[0])
            if raw is not None and record.raw_path is not None:
                self.store.write_file(record.raw_path, raw)
        self.store.add_responses([record for record, _, _ in batch])

    def _raise(self) -> None:
        error = self._error
        if error is None:
            return
        if isinstance(error, OSError | sqlite3.Error | WorkspaceError):
            raise WorkspaceError(f"cannot store replies in {self.store.root}: {error}") from error
        raise error
