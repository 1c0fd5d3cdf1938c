"""Prompt templates: jinja2 files shipped in ``prompts/`` that users can replace.

A template's text is part of a run's identity (its SHA-256 goes into the run's outputs), and
every rendered prompt is stored with its response, so a changed template never mixes with
replies to the old one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.errors import UserError
from amvicc.resources import resource_dir

if TYPE_CHECKING:
    import jinja2

ANSWER_TEMPLATE = "answer.jinja"
#: A rung of GRIP's question ladder (amvicc.ladder), asked about a scene image.
LADDER_TEMPLATE = "answer_ladder.jinja"


@dataclass(frozen=True)
class PromptTemplate:
    """A loaded jinja2 template.

    Attributes:
        name: the shipped file's name, or the path the user gave.
        text: the template source.
    """

    name: str
    text: str
    _compiled: jinja2.Template = field(repr=False, compare=False)

    @property
    def sha256(self) -> str:
        """The SHA-256 of the template source: what a run records."""
        return hashlib.sha256(self.text.encode()).hexdigest()

    @property
    def shipped(self) -> bool:
        """Whether this is one of amvicc's own templates."""
        return "/" not in self.name and "\\" not in self.name

    def render(self, **context: Any) -> str:
        """Fill in the template; the result is stripped of surrounding white space.

        Raises:
            UserError: the template uses a variable that is not given.
        """
        import jinja2

        try:
            return self._compiled.render(**context).strip()
        except jinja2.UndefinedError as err:
            known = ", ".join(sorted(context))
            raise UserError(
                f"template {self.name}: {err.message}; the variables are {known}"
            ) from None


def render_with_system(template: PromptTemplate, **context: Any) -> tuple[str | None, str]:
    """The template's system prompt (its top-level ``{% set system = ... %}``) and its text.

    Raises:
        UserError: the template uses a variable that is not given.
    """
    import jinja2

    text = template.render(**context)
    try:
        system = getattr(template._compiled.make_module(context), "system", None)
    except jinja2.UndefinedError as err:
        raise UserError(f"template {template.name}: {err.message}") from None
    return (str(system).strip() or None) if system is not None else None, text


def load_template(path: str | Path | None, *, default: str) -> PromptTemplate:
    """Load a user's template file, or a shipped one.

    Args:
        path: a template file; a bare file name that is not in the current folder names a
            shipped template (``answer_amvicc.jinja``); None loads ``default``.
        default: the shipped template used when no path is given.

    Raises:
        UserError: the file is missing, not UTF-8, or not valid jinja2.
    """
    import jinja2

    if path is None:
        file = resource_dir("prompts") / default
        name = default
    else:
        file = Path(path)
        name = str(path)
        shipped = resource_dir("prompts") / name
        if not file.exists() and file.name == name and shipped.is_file():
            file = shipped
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"template {name} does not exist; check the path") from None
    except IsADirectoryError:
        raise UserError(f"template {name} is a folder; give a .jinja file") from None
    except UnicodeDecodeError:
        raise UserError(f"template {name} is not UTF-8 text") from None
    environment = jinja2.Environment(
        undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=False
    )
    try:
        compiled = environment.from_string(text)
    except jinja2.TemplateSyntaxError as err:
        raise UserError(f"template {name}, line {err.lineno}: {err.message}") from None
    return PromptTemplate(name, text, compiled)
