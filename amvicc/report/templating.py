"""The Jinja environment of the HTML and Markdown reports, made when a page is first rendered.

Jinja and the compiled templates are loaded only here, so a CSV or JSON report never imports
them. Templates live in ``templates/`` (a skeleton per format, a partial per section).
"""

from __future__ import annotations

import html
import re
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

from jinja2 import (
    Environment,
    FileSystemBytecodeCache,
    FileSystemLoader,
    StrictUndefined,
    select_autoescape,
)
from jinja2.bccache import Bucket

from amvicc import __version__
from amvicc.report.values import number, p_value, percent, signed
from amvicc.resources import cache_dir

TEMPLATES = Path(__file__).resolve().parent / "templates"


def template(name: str) -> Any:
    """The template ``name`` (a path under ``templates/``)."""
    return _environment().get_template(name)


class _Compiled(FileSystemBytecodeCache):
    """Compiled templates, kept in amvicc's cache.

    Compiling fifty partials takes a report a third of a second; loading them, milliseconds.
    A cache that cannot be read or written (a read-only home) only costs that time.
    """

    def load_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: Bucket) -> None:
        with suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> _Compiled | None:
    try:
        return _Compiled(str(cache_dir("templates", __version__)))
    except OSError:
        return None


#: What a dict has as attributes (its methods): ``row.items`` in a template is the method.
_DICT_ATTRIBUTES = frozenset(dir(dict))
_ABSENT = object()


class _Environment(Environment):
    """Jinja's environment, looking up ``row.name`` in a dict key-first.

    Views hand templates dicts; Jinja tries ``getattr`` first and catches the AttributeError
    before it reads the key — a hundred thousand lookups in a report at scale. A dict has no
    attributes but its class's, so trying the key first for any other name gives the same.
    """

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in _DICT_ATTRIBUTES:
            value = obj.get(attribute, _ABSENT)
            if value is not _ABSENT:
                return value
        return super().getattr(obj, attribute)


@cache
def _environment() -> Environment:
    environment = _Environment(
        loader=FileSystemLoader(TEMPLATES),
        bytecode_cache=_bytecode_cache(),
        autoescape=select_autoescape(["html.jinja"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    environment.filters["num"] = number
    environment.filters["pct"] = percent
    environment.filters["md"] = markdown_text
    environment.filters["code"] = markdown_code
    environment.filters["pval"] = p_value
    environment.filters["signed"] = signed
    return environment


# Characters that would start Markdown syntax (emphasis, links, code, tables) in plain text.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_{}\[\]()#+!|~])")


def markdown_text(value: object) -> str:
    """Any text (a model name, a prompt, a reply) as inert Markdown on one line.

    HTML is escaped as entities (``<script>`` shows as text, never runs), Markdown's own
    punctuation is backslash-escaped (no links, images or emphasis from data), and line breaks
    become spaces so a table row stays one row.
    """
    text = " ".join(str(value).splitlines())
    text = html.escape(text, quote=False)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def markdown_code(value: object) -> str:
    """Any text as one Markdown code span (shown verbatim, HTML never interpreted).

    The fence is one backtick longer than the longest run of backticks inside, so no value
    closes it early; ``|`` is escaped so a table cell stays one cell.
    """
    text = " ".join(str(value).splitlines()).replace("|", "\\|")
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
