"""What a registry entry declares about the models it reaches, as ``amvicc models`` prints it.

One description for VLM providers (:mod:`amvicc.vlm.providers`) and image routes
(:mod:`amvicc.generate.routes`) alike.

A :class:`Route` names how ``--model`` reaches a family of models (a prefix such as
``openrouter:``, a fixed name, or any name at ``--base-url``), the environment variable its key
comes from, the defaults it runs with, the install extra it needs and the models it knows by
name (AMVICC's presets, the shipped pipeline files). What it runs is named lazily as
``"module:attribute"`` (lm-evaluation-harness's style): a registry imports an implementation only
when one of its models is opened, so listing the models, or ``amvicc --help``, loads neither
torch nor the openai client.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

ModelKind = Literal["api", "local", "smoke"]


def load_reference(reference: str) -> Any:
    """The object a registry entry names as ``"package.module:attribute"``, imported now.

    Raises:
        ImportError: the module cannot be imported (for a plugin: broken or uninstalled).
        AttributeError: the module has no such attribute.
        ValueError: the reference is not ``module:attribute``.
    """
    module, sep, attribute = reference.partition(":")
    if not sep or not module or not attribute:
        raise ValueError(f"{reference!r} is not 'package.module:attribute'")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class KnownModel:
    """A model a route knows by name; empty fields are the route's.

    Attributes:
        name: what ``--model`` takes, e.g. ``openrouter:x-ai/grok-4`` or ``sd35``.
        notes: what it is, licence, gating.
        kind: ``smoke`` for random weights; empty: the route's kind.
        runs_with: the class or API it runs with, when more precise than the route's.
        source: where its weights or endpoint are, when more precise than the route's.
        defaults: the parameters it runs with, when they differ from the route's.
        key_env: the variable its key is read from, when not the route's ("" for none).
    """

    name: str
    notes: str = ""
    kind: ModelKind | None = None
    runs_with: str = ""
    source: str = ""
    defaults: str = ""
    key_env: str | None = None


@dataclass(frozen=True)
class ModelRow:
    """One line of ``amvicc models`` (and one object of its JSON).

    Attributes:
        name: what ``--model`` takes (a pattern such as ``openai:<model>`` for a whole route).
        kind: ``api``, ``local`` or ``smoke`` (random weights, for tests and demos).
        route: the registry entry that runs it.
        runs_with: the class, or the API it calls.
        source: the repository, folder or endpoint.
        key_env: the environment variable its API key is read from; empty for none.
        extra: the install extra it needs (``pip install 'amvicc[EXTRA]'``); empty for the core.
        defaults: the parameters it runs with unless told otherwise.
        notes: licence, gating, what to know before running it.
    """

    name: str
    kind: str
    route: str
    runs_with: str
    source: str
    key_env: str
    extra: str
    defaults: str
    notes: str = ""


@dataclass(frozen=True, kw_only=True)
class Route:
    """How ``--model`` reaches a family of models, declared once in its registry.

    Attributes:
        name: the entry's name (a VLM provider's prefix, e.g. ``openrouter``).
        pattern: how ``--model`` names its models, e.g. ``openrouter:<provider/model>``.
        kind: ``api``, ``local`` or ``smoke``.
        runs_with: the class or API its models run with.
        source: where the weights or the endpoint are.
        key_env: the environment variable the API key is read from by default; None: no key.
        defaults: the parameters its models run with unless told otherwise.
        extra: the install extra it needs (see :mod:`amvicc.extras`); None: the core.
        needs: what the extra is for, completing "``<model>`` ..." in the one-line message
            when it is missing, e.g. ``runs a local diffusers pipeline``.
        notes: one line for ``amvicc models``.
        models: ``"module:function"`` returning the :class:`KnownModel` s it knows by name;
            None: none.
        any_name: any name fitting ``pattern`` works (listed as a row of its own); False: only
            the known models do.
    """

    name: str
    pattern: str
    kind: ModelKind
    runs_with: str
    source: str
    key_env: str | None = None
    defaults: str = ""
    extra: str | None = None
    needs: str = ""
    notes: str = ""
    models: str | None = None
    any_name: bool = True

    def known_models(self) -> Sequence[KnownModel]:
        """The models this route knows by name (imports the module that lists them)."""
        if self.models is None:
            return ()
        listing: Callable[[], Sequence[KnownModel]] = load_reference(self.models)
        return listing()

    def rows(self) -> list[ModelRow]:
        """This route as ``amvicc models`` lists it: its pattern, then each known model."""
        rows = [self.row(KnownModel(self.pattern, self.notes))] if self.any_name else []
        return rows + [self.row(model) for model in self.known_models()]

    def row(self, model: KnownModel) -> ModelRow:
        """One model of this route as a row, the route filling what the model leaves empty."""
        return ModelRow(
            name=model.name,
            kind=model.kind or self.kind,
            route=self.name,
            runs_with=model.runs_with or self.runs_with,
            source=model.source or self.source,
            key_env=(self.key_env or "") if model.key_env is None else model.key_env,
            extra=self.extra or "",
            defaults=model.defaults or self.defaults,
            notes=model.notes,
        )
