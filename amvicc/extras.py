"""Install extras: which optional group a feature needs, and one line naming it when missing.

``pip install amvicc`` is the core: the catalogue, scenes, API answering and API image routes,
imports, grading, report and export, without torch, diffusers, transformers, gradio or
onnxruntime (gigabytes a user who asks API models and reads reports never needs). What runs a
local model, serves the scoring app or reads text in images names its extra here, and
:func:`require_extra` turns a missing one into one line (exit 2) before any work starts, rather
than an ``ImportError`` traceback halfway through a run.

:data:`EXTRAS` names, per extra, the modules that show it is installed; ``pyproject.toml``'s
``[project.optional-dependencies]`` says what installs them (``tests/test_extras.py`` checks
that the two agree). Probing uses :func:`importlib.util.find_spec`, which imports nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

from amvicc.errors import UserError

#: extra -> the top-level modules it installs that amvicc imports.
EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("torch", "diffusers", "transformers", "accelerate", "safetensors"),
    "score": ("gradio", "starlette"),
    "ocr": ("rapidocr", "onnxruntime"),
    "inspect": ("inspect_ai",),
    "qwen": ("torchvision",),
    "hf-datasets": ("datasets",),
}


class MissingExtra(UserError):
    """A feature needs an install extra that is not installed (one line, exit 2)."""


def missing_modules(extra: str) -> list[str]:
    """The modules of ``extra`` that cannot be imported here (empty: it is installed).

    Raises:
        KeyError: ``extra`` is not one of :data:`EXTRAS` (a programming error).
    """
    return [module for module in EXTRAS[extra] if _absent(module)]


def _absent(module: str) -> bool:
    try:
        return find_spec(module) is None
    except (ImportError, ValueError):  # a parent package that fails, or a broken __spec__
        return True


def require_extra(extras: str | Sequence[str], purpose: str) -> None:
    """Stop with one line naming the extra(s) to install when any is missing.

    Args:
        extras: an extra of :data:`EXTRAS`, or several a feature needs together.
        purpose: what needs them, as the start of the message, e.g.
            ``"tiny-sd3 runs a local diffusers pipeline"``.

    Raises:
        MissingExtra: ``"<purpose>: pip install 'amvicc[local]' (not installed: torch, ...)"``.
    """
    wanted = [extras] if isinstance(extras, str) else list(extras)
    missing = {extra: missing_modules(extra) for extra in wanted}
    absent = [extra for extra, modules in missing.items() if modules]
    if not absent:
        return
    modules = ", ".join(module for extra in absent for module in missing[extra])
    raise MissingExtra(
        f"{purpose}: pip install 'amvicc[{','.join(absent)}]' (not installed: {modules})"
    )
