"""Package roots that name their public API but import it on first use.

Every package root of amvicc uses this, so ``amvicc --help`` and ``import amvicc.vlm`` stay
fast: torch, pandas, gradio and the openai client load only when something that needs them is
touched. Type checkers read the same names from each root's ``if TYPE_CHECKING:`` imports.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` (PEP 562) that imports ``exports[name]`` when asked for ``name``.

    Args:
        package: the package's ``__name__``, for the error message.
        exports: public name -> the module defining it.
    """

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    return __getattr__
