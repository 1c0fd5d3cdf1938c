"""``python -m amvicc.grade``: the same as ``amvicc grade``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
