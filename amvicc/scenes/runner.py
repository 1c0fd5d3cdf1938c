"""``run_scenes``: draw the pairs, write the catalogue, the images and the manifest.

Each pair gets its own seed, derived from the build's seed, the category, the level, the size
and the pair's number, so a pair is the same whichever other categories are built with it, and
the files are byte-identical wherever the same options are given (the PNGs come from a
deterministic encoder, :mod:`amvicc.scenes.png`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import random
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amvicc.catalogue import CATEGORIES, Category, check_catalogue, parse_categories
from amvicc.catalogue.readers import CATALOGUE_COLUMNS
from amvicc.errors import UserError
from amvicc.files import check_output, sweep_leftovers, write_atomic
from amvicc.ladder import LADDER_FILE, LadderQuestion
from amvicc.lifecycle import RunLifecycle
from amvicc.scenes.families import FAMILIES, LEVELS, Layout, PairSpec, distractors
from amvicc.scenes.ladder import build_ladder
from amvicc.scenes.options import LEVELS as LEVEL_NUMBERS
from amvicc.scenes.options import MAX_SIZE, MIN_SIZE, ScenesOptions, ScenesSummary
from amvicc.scenes.png import encode_png
from amvicc.scenes.render import Color, SceneObject, render
from amvicc.store import FolderLeases

CATALOGUE_FILE = "catalogue.csv"
MANIFEST_FILE = "scenes.jsonl"
IMAGES_FOLDER = "images"
_OURS = {CATALOGUE_FILE, MANIFEST_FILE, LADDER_FILE, IMAGES_FOLDER}
_IMAGE_NAME = re.compile(r"^\d+\.png$")


@dataclass(frozen=True)
class SceneImage:
    """One image of the set: its catalogue row, its objects and its pixels as PNG."""

    index: int
    pair: int
    category: Category
    family: str
    seed: int
    answer: str
    question: str
    options: tuple[str, str]
    implicit_prompt: str
    explicit_prompt: str
    objects: tuple[SceneObject, ...]
    size: int
    background: Color
    ladder: tuple[LadderQuestion, ...] = ()

    def png(self) -> bytes:
        """The image drawn and encoded (the costly part of a build, done once per image)."""
        return encode_png(render(list(self.objects), self.size, self.background))

    def row(self) -> dict[str, Any]:
        """The image's question as a catalogue row."""
        return {
            "index": self.index,
            "pair": self.pair,
            "category_code": self.category.code,
            "category": self.category.name,
            "question": self.question,
            "options": f"(a) {self.options[0]} (b) {self.options[1]}",
            "answer": f"({self.answer})",
            "implicit_prompt": self.implicit_prompt,
            "explicit_prompt": self.explicit_prompt,
            "explicit_answer": f"({self.answer})",
        }

    def manifest(self) -> dict[str, Any]:
        """The image's line of ``scenes.jsonl``."""
        return {
            "index": self.index,
            "category": self.category.code,
            "family": self.family,
            "seed": self.seed,
            "answer": f"({self.answer})",
            "objects": [o.manifest() for o in self.objects],
        }


def scene_seed(seed: int, code: str, level: int, size: int, number: int) -> int:
    """The seed of one pair: stable across machines and Python versions (SHA-256 based)."""
    key = f"amvicc-scenes/{seed}/{code}/{level}/{size}/{number}".encode()
    return int.from_bytes(hashlib.sha256(key).digest()[:8], "big")


def draw_pair(
    category: Category, pair_seed: int, *, size: int, level: int
) -> tuple[PairSpec, tuple[tuple[SceneObject, ...], tuple[SceneObject, ...]], bool]:
    """One pair's scenes: the spec, the objects of variants (a) and (b), and their order.

    Returns:
        The spec, both variants' full object lists (distractors first, drawn underneath),
        and whether variant (b) comes first in the pair.
    """
    for attempt in range(100):
        # A crowded draw (no room left for an object) is redrawn from a derived seed.
        rng = random.Random(pair_seed if attempt == 0 else f"{pair_seed}/{attempt}")
        layout = Layout(rng, size, LEVELS[level])
        try:
            spec = FAMILIES[category.code](layout)
            clutter = distractors(layout, spec.avoid)
        except RuntimeError:
            continue
        break
    else:
        raise UserError(f"no room for {category.name} scenes at {size} pixels; use a larger --size")
    scenes = (
        (*clutter, *spec.variants[0].objects),
        (*clutter, *spec.variants[1].objects),
    )
    return spec, scenes, rng.random() < 0.5


def build_images(options: ScenesOptions) -> list[SceneImage]:
    """Every image of the set, in index order (categories in the canonical order).

    Only the scenes are drawn up here (objects, questions, ladders); the pixels are rendered
    by :meth:`SceneImage.png` when the image is written.
    """
    chosen = parse_categories(options.categories) if options.categories else CATEGORIES
    ordered = [c for c in CATEGORIES if c in chosen]
    background = LEVELS[options.level].background
    images: list[SceneImage] = []
    for category in ordered:
        for number in range(1, options.per_category + 1):
            seed = scene_seed(options.seed, category.code, options.level, options.size, number)
            spec, scenes, b_first = draw_pair(
                category, seed, size=options.size, level=options.level
            )
            order = (1, 0) if b_first else (0, 1)
            for variant in order:
                index = len(images) + 1
                images.append(
                    SceneImage(
                        index=index,
                        pair=(index + 1) // 2,
                        category=category,
                        family=spec.family,
                        seed=seed,
                        answer="ab"[variant],
                        question=spec.question,
                        options=spec.options,
                        implicit_prompt=spec.implicit_prompt,
                        explicit_prompt=spec.variants[variant].explicit_prompt,
                        objects=scenes[variant],
                        size=options.size,
                        background=background,
                        ladder=build_ladder(
                            family=spec.family,
                            objects=scenes[variant],
                            question=spec.question,
                            options=spec.options,
                            answer="ab"[variant],
                            size=options.size,
                            seed=seed,
                        ),
                    )
                )
    return images


def _check_options(options: ScenesOptions) -> None:
    if options.per_category < 1:
        raise UserError(f"--per-category must be at least 1, not {options.per_category}")
    if not MIN_SIZE <= options.size <= MAX_SIZE:
        raise UserError(
            f"--size {options.size} is out of range; give {MIN_SIZE} to {MAX_SIZE} pixels"
        )
    if options.level not in LEVEL_NUMBERS:
        raise UserError(f"--level {options.level} is unknown; give 1, 2 or 3")
    if options.categories is not None and not parse_categories(options.categories):
        raise UserError("--categories names no category; give codes such as tx,qc")


def _prepare(out: Path) -> Path:
    """Create ``out``, refusing a file or a folder holding anything but an earlier build.

    A build killed between writing a file and renaming it leaves a temporary file beside it;
    those of this build's files are recognised and removed, so the rerun resumes.
    """
    check_output(out, what="--out", folder=True)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file; give a folder")
    if out.is_dir():
        images = out / IMAGES_FOLDER
        for folder in (out, images):
            _sweep(folder)
        foreign = sorted(p.name for p in out.iterdir() if p.name not in _OURS)
        if images.is_dir():
            foreign += sorted(
                f"{IMAGES_FOLDER}/{p.name}"
                for p in images.iterdir()
                if not _IMAGE_NAME.match(p.name)
            )
        if foreign:
            raise UserError(
                f"--out {out} holds files that are not a scene set ({', '.join(foreign[:3])}); "
                "give an empty or new folder"
            )
    (out / IMAGES_FOLDER).mkdir(parents=True, exist_ok=True)
    return out


def _sweep(folder: Path) -> None:
    """Remove the temporary files a killed build left in ``folder`` (only of its own files).

    Today's builds write ``.<name>.<pid>.<thread>.tmp`` (:func:`amvicc.files.write_atomic`);
    earlier ones wrote ``<name>.tmp``.
    """
    if not folder.is_dir():
        return
    sweep_leftovers(folder)
    for path in folder.iterdir():
        name = path.name.removesuffix(".tmp")
        ours = name in _OURS or _IMAGE_NAME.match(name)
        if path.name.endswith(".tmp") and ours and path.is_file() and not path.is_symlink():
            path.unlink()


def _write(path: Path, data: bytes) -> None:
    try:
        write_atomic(path, data)
    except OSError as err:
        raise UserError(f"cannot write {path}: {err.strerror or err}") from None


def run_scenes(options: ScenesOptions) -> ScenesSummary:
    """Build a procedural scene set into ``options.out``.

    Writes ``catalogue.csv`` (the project's catalogue format), ``images/<index>.png`` and
    ``scenes.jsonl`` (one line per image: index, category, family, seed, answer, level and
    the objects with kind, colour, bounding box and text) and ``ladder.jsonl`` (GRIP's five
    questions per image with typed, derived answers). An earlier build in the same folder
    is replaced, including its surplus images. Identical builds into one folder share the
    images (each is claimed before it is drawn), and a rerun after a kill draws only what is
    missing.

    Raises:
        UserError: the options are out of range, or ``out`` holds other files.
    """
    _check_options(options)
    images = build_images(options)
    out = _prepare(options.out)
    folder = out / IMAGES_FOLDER
    keep = {f"{image.index}.png" for image in images}
    for stale in folder.iterdir():
        if _IMAGE_NAME.match(stale.name) and stale.name not in keep:
            stale.unlink()
    marks = _WrittenMarks(out, options)
    with RunLifecycle(
        None,
        scope="images",
        book=FolderLeases(marks.folder),
        progress=options.progress,
        unit="img",
    ) as life:
        written = marks.written(images)
        todo = [image for image in images if str(image.index) not in written]
        feed = life.share(todo, _image_key, done=marks.written, chunk=4)
        bar = life.progress_bar(len(todo), desc="scenes")
        while (image := feed.take_one()) is not None:
            _write(folder / f"{image.index}.png", image.png())
            marks.mark(image.index)
            bar.update(1)
        life.finish("finished")
    drawn, elsewhere = life.taken, life.elsewhere

    table = io.StringIO()
    writer = csv.DictWriter(
        table, fieldnames=[*CATALOGUE_COLUMNS, "explicit_answer"], lineterminator="\n"
    )
    writer.writeheader()
    writer.writerows(image.row() for image in images)
    catalogue_path = out / CATALOGUE_FILE
    _write(catalogue_path, table.getvalue().encode("utf-8"))

    lines = []
    for image in images:
        entry = image.manifest()
        entry["level"] = options.level
        entry["size"] = options.size
        lines.append(json.dumps(entry, ensure_ascii=False) + "\n")
    manifest_path = out / MANIFEST_FILE
    _write(manifest_path, "".join(lines).encode("utf-8"))

    rungs = [
        json.dumps({"index": image.index, "questions": [r.manifest() for r in image.ladder]}) + "\n"
        for image in images
    ]
    _write(out / LADDER_FILE, "".join(rungs).encode("utf-8"))

    checked = check_catalogue(catalogue_path)
    if checked.problems:  # a bug here, not the user's mistake
        raise RuntimeError(f"the scene catalogue has problems: {checked.problems[0]}")
    pairs: dict[str, int] = {}
    for image in images:
        pairs[image.category.code] = pairs.get(image.category.code, 0) + 1
    return ScenesSummary(
        out=out,
        catalogue=catalogue_path,
        manifest=manifest_path,
        images=len(images),
        pairs={code: n // 2 for code, n in pairs.items()},
        drawn=drawn,
        elsewhere=elsewhere,
    )


def _image_key(image: SceneImage) -> str:
    return str(image.index)


class _WrittenMarks:
    """Which images this very build (same folder, same options) has written already.

    A mark records the size and modification time an image file had when the build wrote
    it; an image whose file still matches its mark is done. Marks and the claims live in
    the system's temporary folder, not in the scene set, keyed by the folder and the options.
    """

    def __init__(self, out: Path, options: ScenesOptions) -> None:
        identity = json.dumps(
            [str(out.resolve()), options.seed, options.per_category, options.size,
             options.level, options.categories],
        )  # fmt: skip
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        self.images = out / IMAGES_FOLDER
        self.folder = Path(tempfile.gettempdir()) / "amvicc-scenes" / digest
        (self.folder / "written").mkdir(parents=True, exist_ok=True)

    def mark(self, index: int) -> None:
        """Record that image ``index`` was just written."""
        stat = (self.images / f"{index}.png").stat()
        _write(self.folder / "written" / str(index), f"{stat.st_mtime_ns} {stat.st_size}".encode())

    def written(self, chosen: Sequence[SceneImage]) -> set[str]:
        """Which of ``chosen`` are written by this build already (by any process)."""
        done: set[str] = set()
        for image in chosen:
            try:
                stat = (self.images / f"{image.index}.png").stat()
                mark = (self.folder / "written" / str(image.index)).read_text()
            except OSError:
                continue
            if mark == f"{stat.st_mtime_ns} {stat.st_size}":
                done.add(str(image.index))
        return done
