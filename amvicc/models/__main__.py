"""``python -m amvicc.models``: the same as ``amvicc models``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
