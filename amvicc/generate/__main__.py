"""``python -m amvicc.generate ...`` (and ``accelerate launch -m amvicc.generate ...``).

A launched process ends without finalizing the interpreter (why: the module doc of
:mod:`amvicc.generate.distributed`).
"""

from amvicc.cli import run_as_module
from amvicc.generate.distributed import exit_launched_process

run_as_module(__package__, end=exit_launched_process)
