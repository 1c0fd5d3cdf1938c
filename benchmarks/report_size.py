"""How big the HTML report is with every image embedded: three image models × 600 images.

Builds a workspace of 3 image models × 600 prompts (300 questions, implicit and explicit) whose
images are real files — drawn scenes of shapes and gradients with some grain, 512 × 512 — rated
by a person, and a VLM that answered the 300 questions about copies of 300 benchmark-sized
images. The pair explorer embeds all 2,100 as thumbnails, the failure galleries and shared
blind spots a few more. Prints the size of ``report.html`` and the seconds it took; the last
line is ``html_megabytes: X`` (target: under 15, one file).

    python benchmarks/report_size.py [--models 3] [--size 512] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from amvicc.catalogue import load_catalogue
from amvicc.store import (
    ImageRecord,
    ResponseRecord,
    RunSpec,
    Store,
    VerdictRecord,
    human_source,
    new_id,
)


def scene(rng: np.random.Generator, size: int) -> bytes:
    """A PNG of a few shaded shapes on a gradient, with grain: about what a generator makes."""
    x = np.linspace(0, 1, size)
    top, bottom = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    background = (top[None, None, :] * (1 - x[:, None, None]) + bottom * x[:, None, None]).repeat(
        size, axis=1
    )
    image = Image.fromarray(background.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    for _ in range(rng.integers(3, 8)):
        box = sorted(rng.integers(0, size, 2)), sorted(rng.integers(0, size, 2))
        colour = tuple(int(c) for c in rng.integers(0, 256, 3))
        shape = draw.ellipse if rng.random() < 0.5 else draw.rectangle
        shape([box[0][0], box[1][0], box[0][1], box[1][1]], fill=colour)
    pixels = np.asarray(image, dtype=np.int16) + rng.normal(0, 8, (size, size, 3)).astype(np.int16)
    buffer = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), "RGB").save(buffer, format="PNG")
    return buffer.getvalue()


def build(root: Path, models: int, size: int, seed: int = 0) -> int:
    """Fill a workspace with image models' files and a VLM's answers; returns the images."""
    rng = np.random.default_rng(seed)
    catalogue = load_catalogue()
    made = 0
    with Store(root) as store:
        for m in range(models):
            run = store.start_run(RunSpec(stage="generate", model=f"model-{m}", outputs={"m": m}))
            verdicts = []
            for question in catalogue:
                for kind in ("implicit", "explicit"):
                    record = ImageRecord(
                        image_id=new_id(),
                        run_id=run.run_id,
                        config_key=run.config_key,
                        question_index=question.index,
                        prompt_kind=kind,
                        sample=0,
                        prompt=f"prompt {question.index}",
                        seed=question.index,
                        status="ok",
                    )
                    stored = store.add_image(record, scene(rng, size))
                    value = "correct" if rng.random() < 0.8 else "incorrect"
                    verdicts.append(
                        VerdictRecord(human_source("ann"), value, image_id=stored.image_id)
                    )
                    made += 1
            store.add_verdicts(verdicts)
            store.finish_run(run.run_id, "finished", {"images": 600})
        run = store.start_run(RunSpec(stage="answer", model="vlm", outputs={"prompt": "mmvp"}))
        answers = []
        for question in catalogue:
            copy = f"inputs/{question.index}.png"
            store.write_file(copy, scene(rng, size))
            response = ResponseRecord(
                response_id=new_id(),
                run_id=run.run_id,
                config_key=run.config_key,
                question_index=question.index,
                image_key="mmvp",
                prompt=f"question {question.index}",
                status="ok",
                text=f"The answer is ({question.answer}).",
                input_path=copy,
            )
            store.add_response(response)
            answers.append(
                VerdictRecord("extractor", question.answer, response_id=response.response_id)
            )
            made += 1
        store.add_verdicts(answers)
        store.finish_run(run.run_id, "finished", {"responses": 300})
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=3)
    parser.add_argument("--size", type=int, default=512, help="image side in pixels")
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="amvicc-report-size-"))
    try:
        if not (root / "amvicc.sqlite").exists():
            start = time.perf_counter()
            made = build(root, args.models, args.size)
            print(f"built {made} image files in {time.perf_counter() - start:.0f} s")
        out = root / "report.html"
        start = time.perf_counter()
        command = [sys.executable, "-m", "amvicc", "report", "--store", str(root), "-o", str(out)]
        subprocess.run([*command, "-q"], check=True)
        seconds = time.perf_counter() - start
        megabytes = out.stat().st_size / 1e6
        thumbnails = out.read_text(encoding="utf-8").count("data:image/jpeg;base64,")
        print(f"report seconds: {seconds:.1f}; embedded JPEG thumbnails: {thumbnails}")
        print(f"html_megabytes: {megabytes:.1f}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
