"""Automatic image judges (VLM rubric, VLM question-back, OCR), validated against humans.

:func:`amvicc.judge.runner.judge_images` runs one judge over a generation run's images and
stores its verdicts as an automatic rater (``judge:<method>:<model>``); the report's
judge-validation section compares them with the human verdicts.
"""
