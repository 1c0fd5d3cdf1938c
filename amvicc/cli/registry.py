"""The verbs of the ``amvicc`` command, each registered by the module that defines it.

:data:`VERB_MODULES` names every verb's module as a string, so building the parser imports them
(each must stay light: argument definitions only, the stage's heavy libraries load when the verb
runs) and nothing here imports a verb module statically.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# verb name -> module that registers it (imported to build the parser; must stay light).
VERB_MODULES: dict[str, str] = {
    "prompts": "amvicc.cli.prompts",
    "models": "amvicc.cli.models",
    "runs": "amvicc.cli.runs",
    "generate": "amvicc.cli.generate",
    "answer": "amvicc.cli.answer",
    "challenge": "amvicc.cli.challenge",
    "grade": "amvicc.cli.grade",
    "judge": "amvicc.cli.judge",
    "score": "amvicc.cli.score",
    "import-grades": "amvicc.cli.import_grades",
    "import-answers": "amvicc.cli.import_answers",
    "export": "amvicc.cli.export",
    "report": "amvicc.cli.report",
    "scenes": "amvicc.cli.scenes",
    "demo": "amvicc.cli.demo",
}

RunFunction = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class Verb:
    """A CLI verb: its arguments, what it does and an example for ``--help``."""

    name: str
    summary: str
    examples: tuple[str, ...]
    configure: Callable[[argparse.ArgumentParser], None]
    run: RunFunction


_REGISTRY: dict[str, Verb] = {}


def verb(
    name: str,
    *,
    summary: str,
    examples: Sequence[str],
    configure: Callable[[argparse.ArgumentParser], None],
) -> Callable[[RunFunction], RunFunction]:
    """Register the decorated function as the ``amvicc <name>`` verb.

    Args:
        name: the verb as typed on the command line.
        summary: one line for ``amvicc --help``.
        examples: full command lines shown at the end of ``amvicc <name> --help``.
        configure: adds the verb's arguments to its parser.
    """

    def register(run: RunFunction) -> RunFunction:
        _REGISTRY[name] = Verb(name, summary, tuple(examples), configure, run)
        return run

    return register


def load_verbs() -> dict[str, Verb]:
    """Every verb, in :data:`VERB_MODULES`' order (importing their light modules)."""
    for module in VERB_MODULES.values():
        importlib.import_module(module)
    return {name: _REGISTRY[name] for name in VERB_MODULES}
