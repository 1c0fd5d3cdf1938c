"""``python -m amvicc.generate ...`` (and ``accelerate launch -m amvicc.generate ...``)."""

from amvicc.cli import run_as_module

run_as_module(__package__)
