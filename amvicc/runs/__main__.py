"""``python -m amvicc.runs``: the same as ``amvicc runs``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
