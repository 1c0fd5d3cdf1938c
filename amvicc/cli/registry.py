"""The verbs of the ``amvicc`` command: every module of :mod:`amvicc.cli` that defines one.

A verb is declared once, by its module: ``amvicc/cli/import_answers.py`` *is* the
``import-answers`` verb (underscores become dashes), and its run function carries the
:func:`verb` decorator with the summary, examples and arguments. A command imports its verb's
module only (:func:`load_verb`); the full parser (``amvicc --help``) imports every module of the
package, so each must stay light (argument definitions only; the stage's heavy libraries load
when the verb runs). ``python -m amvicc.<module>`` runs the same verb.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

RunFunction = Callable[[argparse.Namespace], int]

_PACKAGE = "amvicc.cli"


@dataclass(frozen=True)
class Verb:
    """A CLI verb: its arguments, what it does and an example for ``--help``.

    Attributes:
        name: the verb as typed: its module's name with dashes.
        summary: one line for ``amvicc --help``.
        examples: full command lines for ``amvicc <name> --help``.
        configure: adds the verb's arguments to its parser.
        run: runs the verb on the parsed arguments; returns the exit status.
        order: where it comes in ``amvicc --help`` (the order of a study's steps).
    """

    name: str
    summary: str
    examples: tuple[str, ...]
    configure: Callable[[argparse.ArgumentParser], None]
    run: RunFunction
    order: int


_REGISTRY: dict[str, Verb] = {}


def verb_name(module: str) -> str:
    """The verb a module defines: ``amvicc.cli.import_answers`` -> ``import-answers``."""
    return module.rpartition(".")[2].replace("_", "-")


def verb(
    *,
    summary: str,
    examples: Sequence[str],
    configure: Callable[[argparse.ArgumentParser], None],
    order: int,
) -> Callable[[RunFunction], RunFunction]:
    """Register the decorated function as the verb its module names.

    Args:
        summary: one line for ``amvicc --help``.
        examples: full command lines shown at the end of ``amvicc <name> --help``.
        configure: adds the verb's arguments to its parser.
        order: its place in ``amvicc --help`` (lower first).
    """

    def register(run: RunFunction) -> RunFunction:
        name = verb_name(run.__module__)
        _REGISTRY[name] = Verb(name, summary, tuple(examples), configure, run, order)
        return run

    return register


def load_verbs() -> dict[str, Verb]:
    """Every verb, in ``order`` (importing every module of :mod:`amvicc.cli`)."""
    for module in _modules():
        importlib.import_module(f"{_PACKAGE}.{module}")
    return {v.name: v for v in sorted(_REGISTRY.values(), key=lambda v: (v.order, v.name))}


def load_verb(name: str) -> Verb | None:
    """Verb ``name`` alone, importing its module only (None: no module defines it).

    A command runs one verb: importing the others' modules (their options, their specs)
    took 50 ms of every start.
    """
    module = name.replace("-", "_")
    if verb_name(module) != name or module not in _modules():
        return None
    importlib.import_module(f"{_PACKAGE}.{module}")
    return _REGISTRY.get(name)


def _modules() -> list[str]:
    package = importlib.import_module(_PACKAGE)
    return [module.name for module in pkgutil.iter_modules(package.__path__)]
