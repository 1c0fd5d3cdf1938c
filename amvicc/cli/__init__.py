"""The command line: the only layer that knows argparse.

:mod:`amvicc.cli.main` builds the ``amvicc`` parser and runs a verb; :mod:`amvicc.cli.registry`
lists the verbs; :mod:`amvicc.cli.arguments` holds the options several verbs share; each verb
module (``generate``, ``answer``, ...) turns its arguments into the stage's frozen options
object and calls the stage. Nothing outside this package and the ``__main__`` modules imports
it.
"""

from amvicc.cli.main import ArgumentParser, build_parser, console, main, run_as_module
from amvicc.cli.registry import load_verbs, verb

__all__ = [
    "ArgumentParser",
    "build_parser",
    "console",
    "load_verbs",
    "main",
    "run_as_module",
    "verb",
]
