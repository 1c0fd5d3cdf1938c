"""``python -m amvicc.import_answers``: the same as ``amvicc import-answers``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
