"""How long `amvicc report` takes on a big workspace.

Builds a synthetic workspace of 50 image models × 600 prompts (300 questions, implicit and
explicit) × 4 samples × 3 human raters — 120,000 images and 360,000 verdict rows — and 4 VLMs
answering the same 300 questions (graded by the extractor), so that every item-level section
runs at size: concordance of 4 × 50 model pairs, paired comparisons of every two models,
explicit − implicit gains, samples. It then times `amvicc report --format csv` and the HTML
report, each as a fresh process (imports included), with the default 1,000 bootstrap
resamples, three times each in turn (``--repeat``), printing every run, and the seconds of each
section of each format's median run, and the machine's speed before and after (a fixed Python
loop: a shared VM's speed changes from minute to minute). The last line is
``report_seconds: X``, the slower of the two medians (target: at most 3 on a quiet 2-core
machine): a median, because one run on a shared VM can meet a slow second that says nothing
of the report.

amvicc's modules are compiled to bytecode first, as ``pip install`` does: where
``PYTHONDONTWRITEBYTECODE`` is set, a checkout would otherwise compile them in every process.
Its templates are compiled into amvicc's cache first too, as the first page of an install does.

    python benchmarks/report_scale.py [--models 50] [--samples 4] [--vlms 4] [--repeat 3]
        [--keep DIR]
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import amvicc
from amvicc.catalogue import load_catalogue
from amvicc.store import RunSpec, Store, new_id, utc_now

RATERS = ("human:r1", "human:r2", "human:r3")


def add_vlms(store: Store, vlms: int, rng: np.random.Generator) -> int:
    """VLM answer runs over all 300 questions, graded by the extractor; returns the verdicts."""
    catalogue = load_catalogue()
    now = utc_now()
    verdicts = 0
    for v in range(vlms):
        run = store.start_run(
            RunSpec(stage="answer", model=f"vlm-{v}", outputs={"prompt": "mmvp", "seed": v})
        )
        responses = []
        rows = []
        for q in catalogue:
            response_id = new_id()
            right = rng.random() < 0.7
            chosen = q.answer if right else ("b" if q.answer == "a" else "a")
            responses.append(
                (
                    response_id,
                    run.run_id,
                    run.config_key,
                    q.index,
                    "mmvp",
                    0,
                    "question",
                    "ok",
                    f"({chosen})",
                    40,
                    2,
                    "{}",
                    now,
                )
            )
            rows.append((None, response_id, "extractor", chosen, run.run_id, None, None, "{}", now))
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO responses (response_id, run_id, config_key, question_index, "
                "image_key, sample, prompt, status, text, prompt_tokens, completion_tokens, "
                "request_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                responses,
            )
            conn.executemany(
                "INSERT INTO verdicts (image_id, response_id, source, value, run_id, "
                "rubric_version, comment, detail_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        store.finish_run(run.run_id, "finished", {"responses": len(responses)})
        verdicts += len(rows)
    return verdicts


def build(
    root: Path, models: int, samples: int, seed: int = 0, vlms: int = 4, smoke_every: int = 10
) -> int:
    """Fill a workspace with synthetic runs, images and verdicts; returns the verdict count."""
    rng = np.random.default_rng(seed)
    catalogue = load_catalogue()
    store = Store(root)
    questions = [(q.index, q.category.code) for q in catalogue]
    codes = sorted({code for _, code in questions})
    now = utc_now()
    verdicts = 0
    for m in range(models):
        run = store.start_run(
            RunSpec(
                stage="generate",
                model=f"model-{m:02d}",
                outputs={"steps": 28, "guidance": 4.5, "seed": m},
                smoke=bool(smoke_every) and m % smoke_every == smoke_every - 1,
            )
        )
        skill = dict(zip(codes, rng.uniform(0.4, 0.98, len(codes)), strict=True))
        images = []
        rows = []
        for index, code in questions:
            for kind in ("implicit", "explicit"):
                for sample in range(samples):
                    image_id = new_id()
                    status = "failed" if rng.random() < 0.01 else "ok"
                    images.append(
                        (
                            image_id,
                            run.run_id,
                            run.config_key,
                            index,
                            kind,
                            sample,
                            f"prompt {index}",
                            index * 10 + sample,
                            status,
                            None,
                            None,
                            "{}",
                            now,
                        )
                    )
                    if status != "ok":
                        continue
                    correct = rng.random() < skill[code]
                    for rater in RATERS:
                        agrees = rng.random() < 0.9
                        value = "correct" if correct == agrees else "incorrect"
                        if rng.random() < 0.02:
                            value = "cant_tell"
                        rows.append(
                            (image_id, None, rater, value, run.run_id, None, None, "{}", now)
                        )
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO images (image_id, run_id, config_key, question_index, prompt_kind, "
                "sample, prompt, seed, status, path, error, params_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                images,
            )
            conn.executemany(
                "INSERT INTO verdicts (image_id, response_id, source, value, run_id, "
                "rubric_version, comment, detail_json, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
        store.finish_run(run.run_id, "finished", {"images": len(images)})
        verdicts += len(rows)
    verdicts += add_vlms(store, vlms, rng)
    store.close()
    return verdicts


def timed(argv: list[str]) -> tuple[float, float, str]:
    """Wall-clock and CPU seconds of a command (CPU time shows what other load on a shared
    machine added to the wall clock), and the report's own timings line (with ``-v``)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sections = next(
        (line for line in done.stderr.splitlines() if line.startswith("report timings:")), ""
    )
    return seconds, cpu, sections


def compile_templates() -> int:
    """Compile every report template into amvicc's cache; returns how many.

    The first page a user's amvicc renders compiles them (a third of a second) and caches
    them; every later report loads them. Timed here is a report after the first, as the
    bytecode is compiled first for the same reason.
    """
    from amvicc.report.templating import TEMPLATES, template

    names = sorted(p.relative_to(TEMPLATES).as_posix() for p in TEMPLATES.rglob("*.jinja"))
    for name in names:
        template(name)
    return len(names)


def machine_speed() -> float:
    """Seconds of a fixed pure-Python loop (best of three): how fast the machine runs now.

    A shared VM's speed changes by half from one minute to the next; printed before and
    after the timing, this says whether a slow report met a slow machine.
    """

    def loop() -> float:
        start = time.perf_counter()
        total = 0
        for i in range(3_000_000):
            total += i * i
        return time.perf_counter() - start

    return min(loop() for _ in range(3))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=50)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--vlms", type=int, default=4)
    parser.add_argument(
        "--smoke-every",
        type=int,
        default=10,
        help="every Nth image model is a smoke-test model (default 10: 5 of 50; 0: none)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="time each format this many times and take the median (default 3; odd)",
    )
    parser.add_argument("--keep", type=Path, help="build the workspace here and keep it")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    root = args.keep or Path(tempfile.mkdtemp(prefix="amvicc-report-scale-"))
    try:
        start = time.perf_counter()
        if not (root / "amvicc.sqlite").exists():
            verdicts = build(
                root, args.models, args.samples, vlms=args.vlms, smoke_every=args.smoke_every
            )
            print(
                f"built {args.models} image models × 600 prompts × {args.samples} samples and "
                f"{args.vlms} VLMs × 300 questions: {verdicts} verdict rows in "
                f"{time.perf_counter() - start:.1f} s"
            )
        compileall.compile_dir(Path(amvicc.__file__).parent, quiet=1)
        compile_templates()
        # -v: the report logs the seconds of each of its sections (at debug level).
        base = [sys.executable, "-m", "amvicc", "report", "--store", str(root), "-v"]
        print(f"load average before timing: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        print(f"machine speed before timing: {machine_speed():.3f} s for a fixed Python loop")
        runs: dict[str, list[tuple[float, float, str]]] = {"csv": [], "html": []}
        for run in range(1, args.repeat + 1):
            for fmt in ("csv", "html"):  # alternated: a slow minute falls on both formats
                out = root / f"report.{fmt}"
                seconds, cpu, sections = timed([*base, "--format", fmt, "-o", str(out)])
                runs[fmt].append((seconds, cpu, sections))
                size = f"; {out.stat().st_size / 1e6:.1f} MB" if fmt == "html" else ""
                print(f"run {run}: {fmt} {seconds:.2f} s (cpu {cpu:.2f}{size})")
        medians = {}
        for fmt, timings in runs.items():
            middle = sorted(timings)[len(timings) // 2]
            medians[fmt] = middle[0]
            print(f"{fmt}_seconds: {middle[0]:.2f} (cpu {middle[1]:.2f}; median of {len(timings)})")
            print(f"  {middle[2]}")
        print(f"machine speed after timing: {machine_speed():.3f} s for a fixed Python loop")
        print(f"report_seconds: {max(medians.values()):.2f}")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
