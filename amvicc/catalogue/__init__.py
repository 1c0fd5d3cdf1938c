"""The benchmark catalogue: MMVP questions in pairs, AMVICC categories and prompts.

- :mod:`amvicc.catalogue.types`: :class:`Catalogue`, :class:`Question`, :class:`Category`, ...
- :mod:`amvicc.catalogue.readers`: the CSV dialects (shipped catalogue, MMVP, AMVICC's copy).
- :mod:`amvicc.catalogue.checks`: validation, the label policy, :func:`load_catalogue`, and
  :func:`catalogue_file` (the path a run records).
- :mod:`amvicc.catalogue.indices`: index ranges such as ``1-20,99``.
"""

from amvicc.catalogue.checks import CheckResult, catalogue_file, check_catalogue, load_catalogue
from amvicc.catalogue.indices import (
    IndexRanges,
    check_index_ranges,
    format_index_ranges,
    parse_index_ranges,
)
from amvicc.catalogue.types import (
    CATEGORIES,
    CATEGORY_BY_CODE,
    MMVP_LABEL_CORRECTIONS,
    OPTION_LABELS,
    PROMPT_KINDS,
    Catalogue,
    Category,
    LabelCorrection,
    LabelPolicy,
    Option,
    OptionLabel,
    Problem,
    Prompt,
    PromptKind,
    Question,
    parse_categories,
)

__all__ = [
    "CATEGORIES",
    "CATEGORY_BY_CODE",
    "MMVP_LABEL_CORRECTIONS",
    "OPTION_LABELS",
    "PROMPT_KINDS",
    "Catalogue",
    "Category",
    "CheckResult",
    "IndexRanges",
    "LabelCorrection",
    "LabelPolicy",
    "Option",
    "OptionLabel",
    "Problem",
    "Prompt",
    "PromptKind",
    "Question",
    "catalogue_file",
    "check_catalogue",
    "check_index_ranges",
    "format_index_ranges",
    "load_catalogue",
    "parse_categories",
    "parse_index_ranges",
]
