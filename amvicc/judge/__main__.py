"""``python -m amvicc.judge``, the same as ``amvicc judge``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
