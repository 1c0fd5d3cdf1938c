"""Importing VLM replies made elsewhere: the ``amvicc import-answers`` verb (see :mod:`amvicc.imports`).

This package exists so that ``python -m amvicc.import_answers`` runs the verb.
"""
