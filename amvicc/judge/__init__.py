"""Automatic image judges (VLM rubric, VLM question-back, OCR), validated against humans.

:func:`run_judge` runs one judge over a generation run's images and stores its verdicts as an
automatic rater (``judge:<method>:<model>``); the report's judge-validation section compares
them with the human verdicts. From Python::

    from amvicc import Store, load_catalogue
    from amvicc.judge import JudgeOptions, run_judge

    summary = run_judge(
        JudgeOptions(run_id="generate-tiny-sd3-1a2b3c4d", method="ocr"),
        store=Store("runs"),
        catalogue=load_catalogue(),
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.judge.options import JudgeOptions, JudgeSummary
    from amvicc.judge.runner import run_judge

_EXPORTS = {
    "JudgeOptions": "amvicc.judge.options",
    "JudgeSummary": "amvicc.judge.options",
    "run_judge": "amvicc.judge.runner",
}
__all__ = ["JudgeOptions", "JudgeSummary", "run_judge"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
