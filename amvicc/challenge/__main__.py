"""``python -m amvicc.challenge``: the same as ``amvicc challenge``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
