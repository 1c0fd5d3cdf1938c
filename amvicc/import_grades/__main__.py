"""``python -m amvicc.import_grades``: the same as ``amvicc import-grades``."""

from amvicc.cli import run_as_module

run_as_module(__package__)
