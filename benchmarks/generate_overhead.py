"""What amvicc's generation stage costs beside the model itself.

On ``tiny-sd3`` at a size and step count where one image takes at least 100 ms, the same N
images are made, alternately, through ``amvicc.generate`` (per-image seeds, PNG provenance,
the store, the progress bar) and through a bare diffusers loop calling the same pipeline object
with the same batch size and saving each image with ``Image.save``. Prints a table per round,
images/s at batch sizes 1, 4 and 16, and last ``overhead_ratio: X`` (the median over rounds of
amvicc time / bare time; the target is at most 1.03).

    python benchmarks/generate_overhead.py [--images 16] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.catalogue import load_catalogue
from amvicc.generate import GenerationOptions, run_generate
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.runner import make_backend
from amvicc.store import Store

if TYPE_CHECKING:
    from amvicc.generate.routes import Backend


def bare_loop(pipe: Any, prompts: list[str], call: dict[str, Any], batch: int, out: Path) -> None:
    """What a user would write with diffusers alone."""
    import torch

    generator = torch.Generator("cpu").manual_seed(0)
    for start in range(0, len(prompts), batch):
        images = pipe(prompt=prompts[start : start + batch], generator=generator, **call).images
        for number, image in enumerate(images, start):
            image.save(out / f"{number}.png")


def timed_amvicc(
    options: GenerationOptions, backend: Backend, store: Store, catalogue: Any
) -> float:
    started = time.perf_counter()
    summary = run_generate(options, store=store, catalogue=catalogue, backend=backend)
    elapsed = time.perf_counter() - started
    assert summary.made == options.limit, summary
    return elapsed


def timed_bare(pipe: Any, prompts: list[str], call: dict[str, Any], batch: int, out: Path) -> float:
    started = time.perf_counter()
    bare_loop(pipe, prompts, call, batch, out)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=16, help="images per timed pass")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds")
    parser.add_argument("--batch-size", type=int, default=1, help="batch size of the timed rounds")
    parser.add_argument("--size", type=int, default=128, help="image width and height")
    parser.add_argument("--steps", type=int, default=4, help="denoising steps")
    args = parser.parse_args()

    os.environ.setdefault("AMVICC_CACHE", tempfile.mkdtemp(prefix="amvicc-bench-cache-"))
    workdir = Path(tempfile.mkdtemp(prefix="amvicc-bench-"))
    catalogue = load_catalogue()
    prompts = [p.text for p in catalogue.prompts()[: args.images]]

    passes = iter(range(1, 1_000_000))

    def options(batch: int) -> GenerationOptions:
        # A new seed per pass: a new configuration, so each pass makes all N images and runs
        # the same resume queries as a real run.
        return GenerationOptions(
            model="tiny-sd3",
            limit=args.images,
            steps=args.steps,
            width=args.size,
            height=args.size,
            batch_size=batch,
            device="cpu",
            seed=next(passes),
        )

    backend = make_backend(options(1), ProcessLayout())
    backend.load()
    pipe = backend.pipe  # the very object both loops call
    call = {
        "num_inference_steps": args.steps,
        "guidance_scale": backend.guidance,
        "width": args.size,
        "height": args.size,
    }
    store = Store(workdir / "ws")
    bare_out = workdir / "bare"
    bare_out.mkdir()

    # Warm-up (first calls allocate), untimed.
    timed_amvicc(options(args.batch_size), backend, store, catalogue)
    per_image = timed_bare(pipe, prompts, call, args.batch_size, bare_out) / args.images
    print(
        f"tiny-sd3 {args.size}x{args.size}, {args.steps} steps: {per_image * 1000:.0f} ms per image"
    )
    if per_image < 0.1:
        print("note: under 100 ms per image; raise --size or --steps", file=sys.stderr)

    print(f"\n{args.images} images per pass, batch size {args.batch_size}")
    print(f"{'round':>5} {'amvicc s':>9} {'bare s':>9} {'ratio':>7}")
    amvicc_total = bare_total = 0.0
    ratios = []
    for number in range(1, args.rounds + 1):
        # Alternate which goes first so drift in machine load falls on both.
        if number % 2:
            ours = timed_amvicc(options(args.batch_size), backend, store, catalogue)
            theirs = timed_bare(pipe, prompts, call, args.batch_size, bare_out)
        else:
            theirs = timed_bare(pipe, prompts, call, args.batch_size, bare_out)
            ours = timed_amvicc(options(args.batch_size), backend, store, catalogue)
        amvicc_total += ours
        bare_total += theirs
        ratios.append(ours / theirs)
        print(f"{number:>5} {ours:>9.3f} {theirs:>9.3f} {ours / theirs:>7.3f}")
    print(f"{'all':>5} {amvicc_total:>9.3f} {bare_total:>9.3f} {amvicc_total / bare_total:>7.3f}")

    print(f"\nimages/s by batch size ({args.images} images, 2 alternating passes each)")
    print(f"{'batch':>5} {'amvicc':>9} {'bare':>9}")
    for batch in (1, 4, 16):
        ours = timed_amvicc(options(batch), backend, store, catalogue)
        theirs = timed_bare(pipe, prompts, call, batch, bare_out)
        theirs += timed_bare(pipe, prompts, call, batch, bare_out)
        ours += timed_amvicc(options(batch), backend, store, catalogue)
        print(f"{batch:>5} {2 * args.images / ours:>9.2f} {2 * args.images / theirs:>9.2f}")

    # The median of the rounds' ratios: one round slowed by another process cannot swing it.
    print(f"overhead_ratio: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
