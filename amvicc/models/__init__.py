"""Listing the models amvicc can run: the ``amvicc models`` verb (see :mod:`amvicc.cli.models`).

This package exists so that ``python -m amvicc.models`` runs the verb.
"""
