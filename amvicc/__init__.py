"""amvicc: where do image generators and vision-language models fail on the same concepts?

The flow is benchmark -> generate / answer -> grade / score / judge -> report; each stage is a
verb of the ``amvicc`` command and a module here. This package root re-exports the typed API
that notebooks and later stages use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from amvicc.catalogue import (
        CATEGORIES,
        MMVP_LABEL_CORRECTIONS,
        Catalogue,
        Category,
        Option,
        Prompt,
        Question,
        check_catalogue,
        load_catalogue,
    )
    from amvicc.errors import UserError
    from amvicc.rubrics import Rubric, load_rubrics
    from amvicc.store import (
        ImageRecord,
        ResponseRecord,
        RunRecord,
        RunSpec,
        Store,
        VerdictRecord,
    )

# Each name's module, imported when the name is first used: ``python -m amvicc report`` then
# imports what the report needs, not the rubrics' YAML or the catalogue checks up front.
_HOMES = {
    **dict.fromkeys(
        (
            "CATEGORIES",
            "MMVP_LABEL_CORRECTIONS",
            "Catalogue",
            "Category",
            "Option",
            "Prompt",
            "Question",
            "check_catalogue",
            "load_catalogue",
        ),
        "amvicc.catalogue",
    ),
    "UserError": "amvicc.errors",
    "Rubric": "amvicc.rubrics",
    "load_rubrics": "amvicc.rubrics",
    **dict.fromkeys(
        ("ImageRecord", "ResponseRecord", "RunRecord", "RunSpec", "Store", "VerdictRecord"),
        "amvicc.store",
    ),
}


def __getattr__(name: str) -> Any:
    """The re-exported name ``name``, imported from its module on first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'amvicc' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The names of the package, the lazily imported ones included."""
    return sorted({*globals(), *_HOMES})


__all__ = [
    "CATEGORIES",
    "MMVP_LABEL_CORRECTIONS",
    "Catalogue",
    "Category",
    "ImageRecord",
    "Option",
    "Prompt",
    "Question",
    "ResponseRecord",
    "Rubric",
    "RunRecord",
    "RunSpec",
    "Store",
    "UserError",
    "VerdictRecord",
    "__version__",
    "check_catalogue",
    "load_catalogue",
    "load_rubrics",
]
