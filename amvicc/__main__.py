"""``python -m amvicc VERB ...``, the same as ``amvicc VERB ...``."""

from amvicc.cli import console

console()
