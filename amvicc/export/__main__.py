"""``python -m amvicc.export``: the same as ``amvicc export``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
