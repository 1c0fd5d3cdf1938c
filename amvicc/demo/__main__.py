"""``python -m amvicc.demo``: the same as ``amvicc demo``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
