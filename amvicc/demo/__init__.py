"""The offline demo: the ``amvicc demo`` verb (see :mod:`amvicc.cli.demo`).

This package exists so that ``python -m amvicc.demo`` runs the verb.
"""
