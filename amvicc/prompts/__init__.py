"""Checking and listing catalogues: the ``amvicc prompts`` verb (see :mod:`amvicc.catalogue`).

This package exists so that ``python -m amvicc.prompts`` runs the verb.
"""
