"""Writing the dataset folder (all of it or nothing), and uploading it to the Hub.

The folder is written under a temporary name beside ``--out`` and renamed into place only
when complete, so an export that fails or is killed leaves the previous folder (or none), never
half of one. The images are read from the workspace and embedded in the Parquet files (a shard
of ``shard_rows`` images at a time, so memory stays bounded), so the dataset stands alone.
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.catalogue import Catalogue
from amvicc.errors import UserError
from amvicc.export.card import dataset_card
from amvicc.export.options import TABLES, DatasetExportOptions, DatasetExportSummary
from amvicc.export.tables import StudyTables, mask, study_tables
from amvicc.extras import require_extra
from amvicc.files import check_output
from amvicc.store import Store

if TYPE_CHECKING:
    import pandas as pd

#: A file every amvicc dataset folder holds: an earlier export may be replaced, nothing else.
MARKER = ".amvicc-export"
# Workspace folders an export must never write into or replace.


def run_dataset_export(
    options: DatasetExportOptions,
    *,
    store: Store,
    catalogue: Catalogue,
    results: str | None,
) -> DatasetExportSummary:
    """Write the workspace's study as a Hugging Face dataset folder, then upload it if asked.

    Args:
        options: the folder, the runs, the licence, rater names, the Hub repository.
        store: the workspace.
        catalogue: the catalogue the study used (categories, the card's method section).
        results: the report's CSV text (the ``results`` table); None leaves it out.

    Raises:
        UserError: ``datasets`` is not installed, ``--out`` is not a folder amvicc may
            replace, a run is unknown, or the upload fails (the folder is complete then).
    """
    if options.format != "hf":
        raise UserError(f"--format {options.format!r}: amvicc export writes hf (a dataset)")
    out = _check_out(options.out)
    datasets = _datasets()
    tables = study_tables(
        store, catalogue, run_ids=options.run_ids, keep_rater_names=options.keep_rater_names
    )
    frames = _frames(tables, results)
    if all(frame.empty for frame in frames.values()):
        raise UserError(
            f"nothing to export from {store.root}: no images, replies, verdicts or results "
            "(in the runs asked for)"
        )
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        temporary.mkdir(parents=True)
        with _quiet(datasets):
            files = _write_tables(datasets, frames, temporary, options.shard_rows)
        rows = {name: len(frames[name]) for name in TABLES}
        card = dataset_card(
            rows=rows,
            files=files,
            license=options.license,
            catalogue=catalogue,
            runs=tables.runs,
            raters_named=options.keep_rater_names,
        )
        (temporary / "README.md").write_text(mask(card), encoding="utf-8")
        (temporary / MARKER).write_text("written by amvicc export --format hf\n")
        _replace(temporary, out)
    except OSError as err:
        raise UserError(f"cannot write the dataset to {out}: {err.strerror or err}") from None
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
    pushed = (
        _push(out, options.push_to_hub, private=options.private) if options.push_to_hub else None
    )
    return DatasetExportSummary(out=out, rows=rows, pushed=pushed)


def _datasets() -> Any:
    require_extra("hf-datasets", "amvicc export --format hf writes the dataset with `datasets`")
    import datasets

    return datasets


@contextmanager
def _quiet(datasets: Any) -> Iterator[None]:
    """No progress bar per Parquet file while the export writes (restored afterwards)."""
    utils = datasets.utils
    was = utils.are_progress_bars_disabled()
    utils.disable_progress_bars()
    try:
        yield
    finally:
        if not was:
            utils.enable_progress_bars()


def _check_out(out: Path) -> Path:
    """``--out`` as an absolute path that amvicc may (re)place.

    Raises:
        UserError: it is the workspace, inside its images, inputs or stored bodies, a file, or
            a folder with other content than an earlier export.
    """
    # Any workspace's database, stored files or root folder is refused (links followed).
    check_output(out, what="--out", folder=True)
    target = Path(os.path.abspath(out))
    if target.exists() and not target.is_dir():
        raise UserError(f"--out {out} is a file; give a folder for the dataset")
    if target.is_dir() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise UserError(
            f"--out {out} is a folder holding other files; give a new or empty folder "
            "(an earlier amvicc export there is replaced)"
        )
    return target


def _frames(tables: StudyTables, results: str | None) -> dict[str, pd.DataFrame]:
    import pandas as pd

    frames = {"images": tables.images, "answers": tables.answers, "verdicts": tables.verdicts}
    frames["results"] = (
        pd.read_csv(io.StringIO(results)) if results and results.strip() else (pd.DataFrame())
    )
    return frames


#: Each table's columns and types (``image`` is the image itself); ``results`` keeps the
#: report's columns as the CSV has them.
SCHEMAS: dict[str, dict[str, str]] = {
    "images": {
        "image_id": "string", "run_id": "string", "model": "string", "question": "int32",
        "category": "string", "kind": "string", "prompt": "string", "sample": "int32",
        "seed": "int64", "smoke": "bool", "image": "image",
    },
    "answers": {
        "response_id": "string", "run_id": "string", "model": "string", "condition": "string",
        "question": "int32", "category": "string", "image": "string", "sample": "int32",
        "prompt": "string", "reply": "string", "status": "string", "error": "string",
        "decision": "string", "decided_by": "string", "answer": "string", "correct": "bool",
        "prompt_tokens": "int64", "completion_tokens": "int64", "smoke": "bool",
    },
    "verdicts": {
        "verdict_id": "int64", "subject": "string", "image_id": "string",
        "response_id": "string", "run_id": "string", "model": "string", "question": "int32",
        "category": "string", "kind": "string", "sample": "int32", "decided_by": "string",
        "decider": "string", "source": "string", "value": "string", "comment": "string",
        "rubric_version": "string", "created_at": "string", "current": "bool",
    },
}  # fmt: skip


def _features(datasets: Any, table: str) -> Any:
    schema = SCHEMAS[table]
    return datasets.Features(
        {
            name: datasets.Image() if kind == "image" else datasets.Value(kind)
            for name, kind in schema.items()
        }
    )


def _write_tables(
    datasets: Any, frames: dict[str, pd.DataFrame], folder: Path, shard_rows: int
) -> dict[str, str]:
    """Each table with rows as Parquet under ``<folder>/<table>/``; returns its files' pattern."""
    files: dict[str, str] = {}
    for name in TABLES:
        frame = frames[name]
        if frame.empty:
            continue
        (folder / name).mkdir()
        if name == "images":
            _write_images(datasets, frame, folder / name, shard_rows)
        else:
            columns = {c: [None if _missing(v) else v for v in frame[c]] for c in frame.columns}
            features = _features(datasets, name) if name in SCHEMAS else None
            dataset = datasets.Dataset.from_dict(columns, features=features)
            dataset.to_parquet(str(folder / name / "train-00000-of-00001.parquet"))
        files[name] = _name_by_content(folder / name)
    return files


def _name_by_content(folder: Path) -> str:
    """Put the digest of a table's files in their names; returns their pattern.

    ``datasets`` caches a local dataset under its folder's name, its configuration and the
    card's ``data_files`` patterns, not under the files' contents: a re-export into a folder
    of the same name would load the old, cached tables. A pattern naming the content's digest
    makes every different export a different cache entry (and the same export the same one).
    """
    digest = hashlib.sha256()
    shards = sorted(folder.iterdir())
    for shard in shards:
        digest.update(shard.read_bytes())
    tag = digest.hexdigest()[:12]
    for shard in shards:
        shard.rename(shard.with_name(shard.name.replace("train-", f"train-{tag}-", 1)))
    return f"{folder.name}/train-{tag}-*.parquet"


def _write_images(datasets: Any, frame: pd.DataFrame, folder: Path, shard_rows: int) -> None:
    """The images table in shards, each image's bytes read from the workspace and embedded."""
    features = _features(datasets, "images")
    shards = max(1, -(-len(frame) // shard_rows))
    for number in range(shards):
        part = frame.iloc[number * shard_rows : (number + 1) * shard_rows]
        columns: dict[str, list[Any]] = {
            name: [None if _missing(v) else v for v in part[name]]
            for name in features
            if name != "image"
        }
        columns["image"] = [
            {"bytes": Path(file).read_bytes(), "path": Path(file).name} for file in part["file"]
        ]
        dataset = datasets.Dataset.from_dict(columns, features=features)
        dataset.to_parquet(str(folder / f"train-{number:05d}-of-{shards:05d}.parquet"))


def _missing(value: object) -> bool:
    """None, NaN or pandas' NA: an empty cell."""
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _replace(temporary: Path, out: Path) -> None:
    """Put the finished folder at ``out``, replacing an earlier export there in one rename."""
    if out.exists():
        old = out.with_name(f".{out.name}.{os.getpid()}.old")
        os.replace(out, old)
        try:
            os.replace(temporary, out)
        except OSError:
            os.replace(old, out)
            raise
        shutil.rmtree(old, ignore_errors=True)
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(temporary, out)


def _push(out: Path, repo: str, *, private: bool) -> str:
    """Upload the folder as one commit of a Hub dataset repository (token from the environment).

    Raises:
        UserError: no network, no or a wrong token, or the Hub refused; one line, the local
            folder stays complete.
    """
    from huggingface_hub import HfApi

    try:
        api = HfApi()
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        api.upload_folder(
            folder_path=str(out),
            repo_id=repo,
            repo_type="dataset",
            commit_message="amvicc export --format hf",
            ignore_patterns=[MARKER],
        )
    except Exception as err:  # network, auth, offline mode: all one line, the folder is done
        reason = mask((str(err).splitlines() or [type(err).__name__])[0][:200])
        raise UserError(
            f"could not upload {out} to the Hugging Face Hub dataset {repo} ({reason}); "
            "the folder is complete: upload it when the Hub can be reached (token in HF_TOKEN)"
        ) from None
    return repo
