"""Importing grade sheets: the ``amvicc import-grades`` verb (see :mod:`amvicc.imports`).

This package exists so that ``python -m amvicc.import_grades`` runs the verb.
"""
