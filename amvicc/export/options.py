"""What ``amvicc export --format hf`` is asked to write, and what it reports back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

DatasetFormat = Literal["hf"]
#: The tables, in the order the dataset card lists them (each is one configuration).
TABLES = ("images", "answers", "verdicts", "results")
DEFAULT_LICENSE = "other"


@dataclass(frozen=True)
class DatasetExportOptions:
    """Everything ``amvicc export`` takes besides the workspace, the catalogue and the results.

    Attributes:
        out: the dataset folder to write (replaced whole; never left half-written).
        format: ``hf``, a Hugging Face dataset folder (Parquet and a dataset card).
        run_ids: only these runs' images, replies and verdicts (None: every run).
        license: the dataset card's licence identifier (``cc-by-4.0``, ``mit``, ``other``...).
        keep_rater_names: name raters as they are stored; by default each is a stable
            pseudonym (``rater-1``, ``rater-2``, ... in the order they first rated).
        push_to_hub: upload the folder to this Hugging Face dataset repository (the token
            from the environment, ``HF_TOKEN``).
        private: create the Hub repository private.
        shard_rows: images per Parquet file (bounds the memory an export needs).
    """

    out: Path
    format: DatasetFormat = "hf"
    run_ids: tuple[str, ...] | None = None
    license: str = DEFAULT_LICENSE
    keep_rater_names: bool = False
    push_to_hub: str | None = None
    private: bool = False
    shard_rows: int = 200


@dataclass(frozen=True)
class DatasetExportSummary:
    """What was written (and uploaded).

    Attributes:
        out: the dataset folder.
        rows: rows per table written (a table with no rows has no configuration).
        pushed: the Hub repository it was uploaded to (None: not uploaded).
    """

    out: Path
    rows: dict[str, int] = field(default_factory=dict)
    pushed: str | None = None

    def lines(self) -> list[str]:
        """Where the dataset went and how big each table is."""
        tables = ", ".join(f"{name} {count}" for name, count in self.rows.items())
        lines = [f"wrote the dataset {self.out} ({tables} rows)"]
        first = next((name for name, count in self.rows.items() if count), "results")
        lines.append(f"  load it with datasets.load_dataset({str(self.out)!r}, {first!r})")
        if self.pushed:
            lines.append(f"  uploaded to https://huggingface.co/datasets/{self.pushed}")
        return lines
