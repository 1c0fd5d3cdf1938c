"""``python -m amvicc.scenes ...``, the same as ``amvicc scenes ...``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
