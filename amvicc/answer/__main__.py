"""``python -m amvicc.answer``: the same as ``amvicc answer``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
