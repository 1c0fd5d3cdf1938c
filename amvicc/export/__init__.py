"""A study out as a Hugging Face dataset: ``amvicc export --format hf``.

The workspace's tables, one dataset configuration each — ``images`` (every generated image
with its prompt, model and seed), ``answers`` (every VLM reply and how it was decided),
``verdicts`` (who decided what: raters under stable pseudonyms, judges, the extractor) and
``results`` (the report's CSV rows) — as Parquet files under a dataset card (``README.md``)
that ``datasets.load_dataset(folder, config)`` reads, and that ``--push-to-hub`` uploads.
Not to be confused with ``amvicc score export``, which writes the verdicts alone as one CSV or
JSON-lines file.

From Python::

    from pathlib import Path

    from amvicc import Store, load_catalogue
    from amvicc.export import DatasetExportOptions, run_dataset_export

    summary = run_dataset_export(
        DatasetExportOptions(out=Path("amvicc-study")),
        store=Store("runs"),
        catalogue=load_catalogue(),
        results=None,
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.export.options import DatasetExportOptions, DatasetExportSummary
    from amvicc.export.runner import run_dataset_export

_EXPORTS = {
    "DatasetExportOptions": "amvicc.export.options",
    "DatasetExportSummary": "amvicc.export.options",
    "run_dataset_export": "amvicc.export.runner",
}
__all__ = ["DatasetExportOptions", "DatasetExportSummary", "run_dataset_export"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
