"""amvicc inside Inspect AI: the ``amvicc/mmvp`` task (``inspect eval amvicc/mmvp``).

Inspect finds the task through amvicc's ``inspect_ai`` entry point (``amvicc.inspect._registry``);
``inspect_ai`` is an optional install (``pip install 'amvicc[inspect]'``), so nothing here is
imported by amvicc itself, and importing this package alone loads nothing of Inspect. From
Python::

    import inspect_ai

    logs = inspect_ai.eval("amvicc/mmvp", model="openai/gpt-4o", task_args={"images": "MMVP"})

Inspect's logs come back into amvicc with ``amvicc import-answers LOG.eval`` (graded and
reported like any answer run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.inspect.task import extractor, mmvp

_EXPORTS = {"mmvp": "amvicc.inspect.task", "extractor": "amvicc.inspect.task"}
__all__ = ["extractor", "mmvp"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
