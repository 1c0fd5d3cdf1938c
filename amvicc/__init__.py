"""amvicc: where do image generators and vision-language models fail on the same concepts?

The flow is benchmark -> generate / answer -> grade / score / judge -> report; each stage is a
verb of the ``amvicc`` command and a module here. This package root re-exports the typed API
that notebooks and later stages use.
"""

__version__ = "0.1.0"

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
