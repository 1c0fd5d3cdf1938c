"""``python -m amvicc.report ...``, the same as ``amvicc report ...``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
