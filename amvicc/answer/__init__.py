"""VLM answering: ask vision-language models the paired MMVP questions, keep every reply.

From Python (the model clients themselves are in :mod:`amvicc.vlm`)::

    from amvicc import Store, load_catalogue
    from amvicc.answer import AnswerOptions, run_answer

    summary = run_answer(
        AnswerOptions(model="tiny-llava", images=Path("mmvp")),
        store=Store("runs"),
        catalogue=load_catalogue().select(indices=range(1, 9)),
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.answer.options import AnswerOptions, AnswerSummary
    from amvicc.answer.runner import run_answer

_EXPORTS = {
    "AnswerOptions": "amvicc.answer.options",
    "AnswerSummary": "amvicc.answer.options",
    "run_answer": "amvicc.answer.runner",
}
__all__ = ["AnswerOptions", "AnswerSummary", "run_answer"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
