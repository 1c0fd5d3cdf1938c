"""What ``amvicc scenes build`` is asked to make, and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from amvicc.lifecycle import RunOptions

# Below this, level 3's clutter no longer fits beside the probed objects.
MIN_SIZE = 256
MAX_SIZE = 2048
LEVELS = (1, 2, 3)


@dataclass(frozen=True)
class ScenesOptions(RunOptions):
    """A procedural scene set: which categories, how many pairs, how hard, from which seed.

    Attributes:
        out: the folder to write ``catalogue.csv``, ``images/<index>.png`` and
            ``scenes.jsonl`` into (created; a folder holding anything else is refused).
        per_category: pairs per category (two images each).
        seed: every scene derives its own seed from this, the category and its number, so the
            same options give byte-identical files anywhere.
        categories: category codes (None: all nine), built in the canonical order.
        size: the images' width and height in pixels.
        level: difficulty 1..3 (more objects and clutter, smaller objects, lower contrast).

    ``progress`` (of :class:`~amvicc.lifecycle.RunOptions`) shows a bar while images are drawn.
    """

    out: Path
    per_category: int = 20
    seed: int = 0
    categories: tuple[str, ...] | None = None
    size: int = 512
    level: int = 1


@dataclass(frozen=True)
class ScenesSummary:
    """What a build wrote.

    Attributes:
        out: the folder.
        catalogue: the catalogue CSV (``amvicc prompts check`` accepts it).
        manifest: ``scenes.jsonl``, one line per image with the scene's exact truth.
        images: how many images the set holds.
        pairs: per category code, how many pairs.
        drawn: images this process drew now (the rest were there from an earlier, killed run
            of the same build, or drawn by an identical build running beside it).
        elsewhere: images an identical build running beside this one drew or still held.
    """

    out: Path
    catalogue: Path
    manifest: Path
    images: int
    pairs: dict[str, int]
    drawn: int = 0
    elsewhere: int = 0

    def lines(self) -> list[str]:
        """What ``amvicc scenes build`` prints."""
        per = ", ".join(f"{code} {n}" for code, n in self.pairs.items())
        shared = f", {self.elsewhere} by another process" if self.elsewhere else ""
        return [
            f"wrote {self.images} images to {self.out / 'images'} ({per} pairs; "
            f"{self.drawn} drawn now{shared})",
            f"catalogue  {self.catalogue}",
            f"manifest   {self.manifest}",
            f"next: amvicc answer --catalogue {self.catalogue} --images {self.out / 'images'} "
            "--model MODEL",
        ]
