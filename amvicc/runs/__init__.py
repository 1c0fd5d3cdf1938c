"""Listing a workspace's runs: the ``amvicc runs`` verb (see :mod:`amvicc.cli.runs`).

This package exists so that ``python -m amvicc.runs`` runs the verb.
"""
