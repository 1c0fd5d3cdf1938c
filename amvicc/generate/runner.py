"""A generation run from start to summary: plan, resume, shard, load, render, record.

Order matters for durability and speed: what is already made is read from the store before
any weights are loaded (a finished run loads nothing); the weights are loaded before the run is
recorded (a missing download leaves no empty run behind); every image is stored the moment its
batch is done (a killed run loses at most the batch in flight).

Sharing: each job is claimed in the store before it is made (:class:`amvicc.store.ClaimFeed`),
so concurrent identical commands on one workspace make every image once between them. Under a
launcher only the main process opens the database: it claims each round's jobs and sends them
to the others, which write their image files and send the rows back (see docs/generate.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from amvicc.catalogue import Catalogue, catalogue_file
from amvicc.generate.distributed import ProcessLayout, current_layout
from amvicc.generate.options import GenerationOptions, GenerationSummary
from amvicc.generate.plan import ImageJob, jobs_to_do, plan_jobs
from amvicc.generate.remote import RemoteBackend
from amvicc.generate.routes import open_backend
from amvicc.generate.sink import SMOKE_LABEL, Counts, ImageSink
from amvicc.generate.specs import resolve_model
from amvicc.lifecycle import RunLifecycle
from amvicc.store import ClaimFeed, RunSpec, Store

if TYPE_CHECKING:
    from tqdm import tqdm

    from amvicc.generate.pipeline import DiffusersBackend
    from amvicc.generate.routes import Backend

log = logging.getLogger(__name__)


def make_backend(options: GenerationOptions, layout: ProcessLayout) -> Backend:
    """The backend for ``options.model``, with the options checked (no weights read yet).

    Raises:
        UserError: the model is unknown, its route's install extra is missing (see
            :mod:`amvicc.generate.routes`), or the options do not suit it.
    """
    spec = resolve_model(options.model, base_url=options.api.base_url, image_api=options.image_api)
    return open_backend(spec, options, layout)


def run_generate(
    options: GenerationOptions,
    *,
    store: Store,
    catalogue: Catalogue,
    layout: ProcessLayout | None = None,
    backend: Backend | None = None,
) -> GenerationSummary:
    """Make the images ``options`` ask for, for the (already selected) ``catalogue``.

    Rerunning with the same options makes only the images still missing (``force`` makes them
    all again, as new rows that supersede the old). Under ``accelerate launch`` each process
    makes its share; the main one records the run and returns the totals.

    Args:
        options: the model, its parameters and the run's settings.
        store: the workspace the images go to.
        catalogue: the questions whose prompts are rendered.
        layout: this process's share of the work (default: from the launcher, if any).
        backend: a backend from :func:`make_backend` for the same model options, possibly
            loaded already, to reuse one pipeline across calls (the demo, the benchmark).

    Returns:
        What was made, skipped, failed and refused, and the run's id.

    Raises:
        UserError: bad input (unknown model, missing weights, impossible size, empty
            selection, out of memory); images finished before it are kept.
    """
    started = time.perf_counter()
    layout = layout or current_layout(options.device)
    backend = _checked_backend(options, layout, backend)
    jobs = plan_jobs(
        catalogue,
        kinds=options.kinds,
        limit=options.limit,
        num_images=options.num_images,
        seed=options.seed,
    )
    spec = _spec(options, backend, catalogue)
    todo = _to_do(options, store, layout, jobs, spec.config_key)
    if todo:
        # The main process downloads (or builds) the weights; the others then read them.
        with layout.main_first():
            backend.load()
        log.info("%s", backend.describe())
    if backend.smoke:
        log.info("%s: %s", backend.spec.name, SMOKE_LABEL)
    main = layout.is_main
    # Only the main process opens the database: it records the run and claims the work.
    with RunLifecycle(store if main else None, spec if main else None, unit="img",
                      progress=options.progress and main) as life:  # fmt: skip
        if main:
            life.start()
        # Nobody writes before every process has read the same to-do list.
        layout.barrier()
        sink = _sink(options, store, layout, backend, spec, life, len(todo))
        feed = None
        if main:
            api = isinstance(backend, RemoteBackend)
            feed = life.share(
                todo,
                slot_key,
                done=None if options.force else _done_in(store, spec.config_key),
                chunk=options.api.max_connections if api else layout.count * options.batch_size,
            )

        def account(counts: list[Counts], generating: float = 0.0) -> GenerationSummary:
            return GenerationSummary(
                run_id=spec.run_id,
                model=backend.spec.name,
                config_key=spec.config_key,
                smoke=backend.smoke,
                planned=len(jobs),
                made=sum(c.made for c in counts),
                skipped=len(jobs) - len(todo),
                failed=sum(c.failed for c in counts),
                refused=sum(c.refused for c in counts),
                seconds=round(time.perf_counter() - started, 3),
                generation_seconds=round(generating, 3),
                processes=layout.count,
                elsewhere=life.elsewhere,
            )

        life.partial = lambda: account([sink.counts]).as_dict()
        generating = _render(backend, feed, jobs, sink, store, layout, options.batch_size, todo)
        life.release()
        layout.barrier()
        result = account(layout.gather(sink.counts), generating)
        if main:
            life.finish("finished", result.as_dict())
    return result


def _checked_backend(
    options: GenerationOptions, layout: ProcessLayout, backend: Backend | None
) -> Backend:
    """The backend for the options: the one given, checked to fit them, or a new one."""
    expected = make_backend(options, layout)
    if backend is None:
        return expected
    if backend.outputs != expected.outputs:
        raise ValueError("the backend was made for other model options than these")
    return backend


def _spec(options: GenerationOptions, backend: Backend, catalogue: Catalogue) -> RunSpec:
    """The generation run: what defines its images (outputs) and what else is recorded."""
    seeding = {"base_seed": options.seed} if backend.seeded else {}
    return RunSpec(
        stage="generate",
        model=backend.spec.name,
        # The catalogue's content is part of the images' identity: a reworded catalogue (a
        # prompt variant) is a run of its own, side by side with the baseline, never
        # replacing its images.
        outputs={**backend.outputs, **seeding, "catalogue_sha256": catalogue.sha256},
        # The file, not only its hash, so the report can score the images against it.
        settings={
            **backend.settings,
            "batch_size": options.batch_size,
            "catalogue": catalogue_file(catalogue),
        },
        label_policy=catalogue.label_policy,
        catalogue_sha256=catalogue.sha256,
        smoke=backend.smoke,
        command=options.command,
        name=options.run_name,
    )


def _to_do(
    options: GenerationOptions,
    store: Store,
    layout: ProcessLayout,
    jobs: list[ImageJob],
    key: str,
) -> list[ImageJob]:
    """The jobs still to make, read by the main process and sent to the others.

    A launch across machines shares files, not SQLite's locks: only the main process reads
    the database.
    """
    positions: list[int] | None = None
    if layout.is_main:
        todo_jobs = (
            jobs
            if options.force
            else jobs_to_do(jobs, store.done_image_slots(key), store.images(config_key=key))
        )
        slot_position = {job.slot: n for n, job in enumerate(jobs)}
        positions = [slot_position[job.slot] for job in todo_jobs]
    positions = layout.broadcast(positions)
    assert positions is not None
    return [jobs[n] for n in positions]


def _sink(
    options: GenerationOptions,
    store: Store,
    layout: ProcessLayout,
    backend: Backend,
    spec: RunSpec,
    life: RunLifecycle,
    total: int,
) -> ImageSink:
    """Where this process's images go, with the run's progress bar on the main process."""
    api = isinstance(backend, RemoteBackend)
    share = total if api or layout.count == 1 else -(-total // layout.count)
    progress = None
    if layout.is_main:
        split = f" (process 0 of {layout.count}, {total} in all)" if layout.count > 1 else ""
        progress = life.progress_bar(share, desc=f"{backend.spec.name}{split}")
    return ImageSink(
        store,
        run_id=spec.run_id,
        config_key=spec.config_key,
        model=backend.spec.name,
        smoke=backend.smoke,
        params={**backend.params, **({"base_seed": options.seed} if backend.seeded else {})},
        progress=progress,
        seeded=backend.seeded,
        records_rows=layout.is_main,
    )


def _render(
    backend: Backend,
    feed: ClaimFeed[ImageJob] | None,
    jobs: Sequence[ImageJob],
    sink: ImageSink,
    store: Store,
    layout: ProcessLayout,
    batch_size: int,
    todo: Sequence[ImageJob],
) -> float:
    """Make the to-do list's images; returns the seconds spent generating."""
    if not todo:
        return 0.0
    began = time.perf_counter()
    with _logging_beside(sink.progress):
        if isinstance(backend, RemoteBackend):
            if feed is not None:  # under a launcher, the main process asks alone
                backend.generate_from(feed, sink)
        else:
            _in_rounds(backend, feed, jobs, sink, store, layout, batch_size)
    return time.perf_counter() - began


def slot_key(job: ImageJob) -> str:
    """A job's slot as a claim names it: ``<index>:<prompt kind>:<sample>``."""
    index, kind, sample = job.slot
    return f"{index}:{kind}:{sample}"


def _done_in(store: Store, key: str) -> Callable[[Sequence[ImageJob]], set[str]]:
    """Which jobs another process made (with the same prompt) since the to-do list was read."""

    def done(jobs: Sequence[ImageJob]) -> set[str]:
        made = store.done_image_prompts(key)
        return {slot_key(j) for j in jobs if made.get(j.slot) == j.prompt.text}

    return done


def _in_rounds(
    backend: DiffusersBackend,
    feed: ClaimFeed[ImageJob] | None,
    jobs: Sequence[ImageJob],
    sink: ImageSink,
    store: Store,
    layout: ProcessLayout,
    batch_size: int,
) -> None:
    """Render the to-do list round by round, every process one batch of each round.

    The main process claims the round's jobs (``feed``) and sends their places in ``jobs`` to
    the others; after the round, the others' image rows come back to it and it records them.
    One process alone runs the same loop with no one to send to.
    """
    position = {job.slot: n for n, job in enumerate(jobs)}
    while True:
        chosen = None
        if feed is not None:
            chosen = [position[job.slot] for job in feed.take(layout.count * batch_size)]
        chosen = layout.broadcast(chosen)
        if not chosen:
            return
        mine = [jobs[n] for n in chosen[layout.index :: layout.count]]
        if mine:
            backend.generate(mine, sink, batch_size=batch_size)
        if layout.count > 1:
            rows = layout.gather(sink.take_rows())
            if layout.is_main:
                store.add_images([row for part in rows for row in part])


def _logging_beside(progress: tqdm[Any] | None) -> AbstractContextManager[object]:
    """Log lines printed above the progress bar instead of through it."""
    if progress is None:
        return nullcontext()
    from tqdm.contrib.logging import logging_redirect_tqdm

    return logging_redirect_tqdm()
