"""Grading VLM replies in three stages: deterministic extractor, LLM judge, human audit.

:func:`amvicc.grade.extract.extract_choice` is the extractor other stages reuse (the image
judge's question-back method reads answers with it); :func:`amvicc.grade.grading.grade_run`
grades a stored run offline.
"""
