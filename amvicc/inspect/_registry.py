"""What Inspect AI loads through amvicc's ``inspect_ai`` entry point: the ``amvicc/mmvp`` task.

Only Inspect imports this module (it imports ``inspect_ai``); amvicc itself never does.
"""

from amvicc.inspect.task import mmvp

__all__ = ["mmvp"]
