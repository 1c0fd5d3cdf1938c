"""``python -m amvicc.score ...``, the same as ``amvicc score ...``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
