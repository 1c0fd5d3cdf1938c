"""What amvicc's local transformers path costs beside the model's own ``generate()``.

On ``tiny-llava`` (random weights, built offline, CPU), the same N questions about N
photo-like JPEGs are answered, alternately, by

  (a) ``run_answer`` as ``amvicc answer`` runs it with an already loaded model: the image
      checks, the run record, the answering engine (batching, worker thread, claims), every
      reply and its verbatim body stored, the image copies;
  (b) a bare loop a user would write with transformers alone, calling the very same model and
      processor objects: per batch, open the image files, render the chat template, one
      processor call, one ``model.generate`` (greedy, the same ``max_new_tokens``), one
      ``batch_decode``; nothing stored.

Both see the same batches (the questions in order, ``--batch-size`` at a time), prompts and
``max_new_tokens``. The replies of the two must be the same (checked every round). Prints a
table per round and last ``vs_bare_loop: X`` (the median over rounds of amvicc time / bare
time; the target is at most 1.10).

    python benchmarks/local_answer.py [--questions 64] [--batch-size 8] [--max-tokens 32]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from amvicc.answer import AnswerOptions, run_answer
from amvicc.catalogue import Catalogue, load_catalogue
from amvicc.store import Store
from amvicc.vlm import LocalSettings, open_vlm
from amvicc.vlm.engine import SamplingParams
from amvicc.vlm.prompting import ANSWER_TEMPLATE, load_template
from amvicc.vlm.transformers_vlm import TransformersVLM


def make_images(folder: Path, indices: list[int], size: int) -> None:
    """Photo-like JPEGs (smooth gradients plus noise), ``<index>.jpg`` as in MMVP's folder."""
    import numpy as np
    from PIL import Image

    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 255, size)
    for index in indices:
        base = np.stack(
            [
                np.add.outer(ramp, ramp) / 2,
                np.tile(ramp, (size, 1)),
                np.full((size, size), index % 256),
            ],
            axis=-1,
        )
        noisy = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype("uint8")
        Image.fromarray(noisy).save(folder / f"{index}.jpg", quality=85)


def bare_loop(
    vlm: TransformersVLM, prompts: list[str], files: list[Path], batch: int, max_tokens: int
) -> list[str]:
    """What a user would write with transformers alone (the same model and processor)."""
    import torch
    from PIL import Image

    processor, model = vlm.processor, vlm.model
    replies: list[str] = []
    for start in range(0, len(prompts), batch):
        texts = [
            processor.apply_chat_template(
                [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": p}]}],
                add_generation_prompt=True,
                tokenize=False,
            )
            for p in prompts[start : start + batch]
        ]
        images = [[Image.open(f).convert("RGB")] for f in files[start : start + batch]]
        inputs = processor(text=texts, images=images, padding=True, return_tensors="pt")
        with torch.inference_mode():
            output = model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False)
        new = output[:, inputs["input_ids"].shape[1] :]
        replies += [t.strip() for t in processor.batch_decode(new, skip_special_tokens=True)]
    return replies


def timed_amvicc(
    options: AnswerOptions, store: Store, catalogue: Catalogue, vlm: TransformersVLM
) -> tuple[float, float, list[str]]:
    started, cpu = time.perf_counter(), time.process_time()
    summary = run_answer(options, store=store, catalogue=catalogue, vlm=vlm)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    assert summary.answered_now == summary.items == len(catalogue), summary.lines()
    by_index = {
        r.question_index: r.text or ""
        for r in store.responses(run_id=summary.run_id)
        if r.status == "ok"
    }
    return elapsed, cpu, [by_index[q.index] for q in catalogue]


def timed_bare(
    vlm: TransformersVLM, prompts: list[str], files: list[Path], batch: int, max_tokens: int
) -> tuple[float, float, list[str]]:
    started, cpu = time.perf_counter(), time.process_time()
    replies = bare_loop(vlm, prompts, files, batch, max_tokens)
    return time.perf_counter() - started, time.process_time() - cpu, replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=64, help="questions per timed pass")
    parser.add_argument("--batch-size", type=int, default=8, help="questions per generate()")
    parser.add_argument("--max-tokens", type=int, default=32, help="max_new_tokens")
    parser.add_argument("--image-size", type=int, default=448, help="JPEG width and height")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds")
    parser.add_argument(
        "--threads", type=int, default=1, help="torch intra-op threads, the same for both"
    )
    args = parser.parse_args()

    import torch

    # Both loops compute with the same number of threads. On a busy machine OpenMP's
    # spin-waiting threads fight over the cores, and by how much depends on which thread calls
    # the model (amvicc's worker thread or the bare loop's main thread) more than on the work.
    torch.set_num_threads(args.threads)

    os.environ.setdefault("AMVICC_CACHE", tempfile.mkdtemp(prefix="amvicc-bench-cache-"))
    workdir = Path(tempfile.mkdtemp(prefix="amvicc-bench-"))
    catalogue = load_catalogue().select(indices=range(1, args.questions + 1))
    indices = [q.index for q in catalogue]
    images = workdir / "images"
    make_images(images, indices, args.image_size)
    files = [images / f"{index}.jpg" for index in indices]
    template = load_template(None, default=ANSWER_TEMPLATE)
    prompts = [template.render(question=q) for q in catalogue]

    vlm = open_vlm("tiny-llava", local=LocalSettings(device="cpu", batch_size=args.batch_size))
    assert isinstance(vlm, TransformersVLM)
    store = Store(workdir / "ws")
    passes = iter(range(1, 1_000_000))

    def options() -> AnswerOptions:
        # A new seed per pass: a new run, so each pass asks all N questions (greedy decoding:
        # the seed does not change a reply).
        return AnswerOptions(
            model="tiny-llava",
            images=images,
            sampling=SamplingParams(max_tokens=args.max_tokens, seed=next(passes)),
            local=LocalSettings(device="cpu", batch_size=args.batch_size),
            progress=False,
        )

    # Warm-up (first calls allocate, import and compile), untimed.
    timed_amvicc(options(), store, catalogue, vlm)
    timed_bare(vlm, prompts, files, args.batch_size, args.max_tokens)

    print(
        f"tiny-llava, {args.questions} questions, batch size {args.batch_size}, "
        f"max_new_tokens {args.max_tokens}, {args.image_size}x{args.image_size} JPEGs"
    )
    print(f"{'round':>5} {'amvicc s':>9} {'bare s':>9} {'ratio':>7} {'cpu ratio':>10}")
    ratios, cpu_ratios = [], []
    for number in range(1, args.rounds + 1):
        # Alternate which goes first so drift in machine load falls on both.
        runs: dict[str, Any] = {}
        order = ("amvicc", "bare") if number % 2 else ("bare", "amvicc")
        for which in order:
            if which == "amvicc":
                runs[which] = timed_amvicc(options(), store, catalogue, vlm)
            else:
                runs[which] = timed_bare(vlm, prompts, files, args.batch_size, args.max_tokens)
        (ours, our_cpu, our_replies) = runs["amvicc"]
        (theirs, their_cpu, their_replies) = runs["bare"]
        if our_replies != their_replies:
            raise SystemExit("amvicc's replies differ from the bare loop's: not the same work")
        ratios.append(ours / theirs)
        cpu_ratios.append(our_cpu / their_cpu)
        print(
            f"{number:>5} {ours:>9.3f} {theirs:>9.3f} {ours / theirs:>7.3f} "
            f"{our_cpu / their_cpu:>10.3f}",
            flush=True,
        )

    print("same replies: yes")
    # CPU seconds of the whole process (every thread): steadier than wall time on a machine
    # shared with other work, and what the overhead costs where cores are scarce.
    print(f"cpu_vs_bare_loop: {statistics.median(cpu_ratios):.3f}")
    # The median of the rounds' ratios: one round slowed by another process cannot swing it.
    print(f"vs_bare_loop: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
