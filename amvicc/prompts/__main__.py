"""``python -m amvicc.prompts``: the same as ``amvicc prompts``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
