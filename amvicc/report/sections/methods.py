"""Methods: how the numbers were made — runs, parameters, seeds, judges, raters, versions.

From the run records (:mod:`amvicc.report.methods`), credentials redacted, even in runs an
older amvicc recorded.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from amvicc.report.methods import Methods, describe_methods
from amvicc.report.section import Part, Section


def _compute(part: Part) -> Methods | None:
    if part.items is None:
        return None
    store = part.store
    rubric = part.shared_read("rubric_versions")
    seeds = part.shared_read("image_seed_ranges")
    return describe_methods(store, part.items, rubric, seeds)


def _document(methods: Methods) -> dict[str, Any]:
    return {
        "methods": {
            "runs": [asdict(r) for r in methods.runs],
            "sources": [asdict(s) for s in methods.sources],
            "counts": dict(methods.counts),
            "versions": methods.versions,
        }
    }


SECTION = Section(
    key="methods",
    title="Methods",
    compute=_compute,
    document=_document,
    exports={"methods": lambda part: part["methods"]},
)
