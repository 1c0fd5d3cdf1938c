"""Write a :class:`~amvicc.report.build.Report` as HTML, Markdown, CSV or JSON.

Every format walks the sections of :data:`amvicc.report.sections.SECTIONS` in order, for the
real models' part and then the smoke-test models':

- CSV: each section's rows (:mod:`amvicc.report.rows` says what the columns hold), the real
  models' rows of a section before the smoke-test models'.
- JSON: each section's entries, lists of records a section gives for both parts joined, with a
  ``smoke`` flag on each model and number.
- Markdown: each section's partial, ready to paste into a paper.
- HTML: one self-contained file (inline CSS and script, embedded images) that opens offline:
  the first screen answers the question (``glance``), a table of contents stays in view, long
  sections open folded, and the smoke-test models' part is one section of its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

from markupsafe import Markup

from amvicc.catalogue import format_index_ranges
from amvicc.report.build import Report
from amvicc.report.options import CHANCE_INDIVIDUAL, CHANCE_PAIR, ReportFormat
from amvicc.report.rows import csv_header, csv_lines
from amvicc.report.section import SMOKE_MARK, Page, Part, Section
from amvicc.report.sections import SECTION_BY_KEY, SECTIONS
from amvicc.report.sections.smoke import WARNING as SMOKE_WARNING
from amvicc.report.values import json_text


def render_report(report: Report, fmt: ReportFormat) -> str:
    """The report in one format, as text.

    The seconds go to the report's timings: each section's rendering for a page; for the CSV,
    its blocks' rows and lines (``render.rows``, in the process that computed each section when
    there are two) and the joining (``render.csv``); the whole writing for the JSON.
    """
    if fmt == "csv":
        start = time.perf_counter()
        options = report.options
        blocks = [
            _csv_lines(part, section)
            for section in SECTIONS
            if section.rows is not None
            for part in report.parts
            if part[section.key] is not None
        ]
        middle = time.perf_counter()
        text = csv_header(intervals=options.bootstrap > 0) + "".join(blocks)
        report.timings["render.rows"] = report.timings.get("render.rows", 0.0) + middle - start
        report.timings["render.csv"] = time.perf_counter() - middle
        return text
    if fmt == "json":
        start = time.perf_counter()
        text = to_json(report)
        report.timings["render.json"] = time.perf_counter() - start
        return text
    return _page(report, html=fmt == "html")


def prerenderer(fmt: ReportFormat) -> Callable[[Part, str], None] | None:
    """What renders one computed section ahead, into its part's ``rendered``.

    CSV rows, or a page's section body (kept by format and section key); None for the JSON,
    written whole. A report's second process renders the sections it computes (their seconds
    go to the part's clock); :func:`render_report` then takes those as they are.
    """
    if fmt == "csv":
        return _prerender_rows
    if fmt in ("html", "md"):
        return partial(_prerender_body, html=fmt == "html")
    return None


def _prerender_rows(part: Part, key: str) -> None:
    section = SECTION_BY_KEY[key]
    if section.rows is None or part[key] is None:
        return
    with part.clock.timed("render.rows"):
        part.rendered["csv", key] = _csv_lines(part, section)


def _prerender_body(part: Part, key: str, *, html: bool) -> None:
    section = SECTION_BY_KEY[key]
    data = part[key]
    if isinstance(data, Part) or not section.shown(data, part):
        return
    with part.clock.timed(f"render.{key}"):
        part.rendered[_extension(html), key] = _body(section, data, _page_of(part, html), ())


def _csv_lines(part: Part, section: Section) -> str:
    """A section's lines of the CSV for one part (rendered ahead, or now)."""
    if ("csv", section.key) in part.rendered:
        lines: str = part.rendered["csv", section.key]
        return lines
    assert section.rows is not None
    rows = _on_catalogue(section.rows(part[section.key]), part)
    options = part.options
    return csv_lines(rows, intervals=options.bootstrap > 0, excel_safe=options.excel_safe)


def _on_catalogue(rows: Any, part: Part) -> Any:
    """A section's rows, those that name no catalogue on the part's own."""
    if not rows.empty and rows["catalogue"].isna().any():
        named = rows["catalogue"].astype(object)
        rows = rows.assign(catalogue=named.where(named.notna(), part.catalogue_name))
    return rows


# --- JSON ------------------------------------------------------------------------------------


def to_json(report: Report) -> str:
    """The whole report as JSON (missing numbers as null)."""
    options = asdict(report.options)
    for where_it_goes in ("output", "default_file", "progress", "excel_safe", "processes"):
        options.pop(where_it_goes)  # not how the numbers came
    options["catalogue"] = str(options["catalogue"]) if options["catalogue"] else None
    for name in ("indices", "smoke_indices"):
        options[name] = _indices(getattr(report.options, name))
    if options["prices"] is not None:
        options["prices"] = str(options["prices"])
    document: dict[str, Any] = {
        "amvicc_version": report.version,
        "generated_at": report.generated_at,
        "store": report.store_root,
        "catalogue": {
            "name": report.catalogue_name,
            "source": report.catalogue.source,
            "sha256": report.catalogue.sha256,
            "categories": report.categories,
        },
        "options": options,
        "thresholds": {
            "individual": report.options.threshold_individual,
            "pair": report.options.threshold_pair,
        },
        "chance": {"individual": CHANCE_INDIVIDUAL, "pair": CHANCE_PAIR},
        "smoke_models": report.smoke_models,
        "models": [
            {
                "label": e.label,
                "model": e.model,
                "modality": e.modality,
                "condition": e.condition,
                "smoke": e.smoke,
                "samples": e.samples,
                "label_policy": e.label_policy,
                "runs": list(e.run_ids),
            }
            for e in report.entries
        ],
    }
    for section in SECTIONS:
        if section.document is None:
            continue
        for part in report.parts:
            data = part[section.key]
            if data is not None:
                merge(document, section.document(data))
    return json_text(document) + "\n"


def _indices(indices: Any) -> Any:
    """Selected question indices as JSON: a sorted list (a huge range as its text)."""
    if indices is None:
        return None
    if len(indices) > 100_000:
        return format_index_ranges(indices)
    return sorted(indices)


def merge(document: dict[str, Any], more: dict[str, Any]) -> None:
    """Add a section's entries: lists join, objects merge, counts add up, other values stay."""
    for key, value in more.items():
        if key not in document:
            document[key] = value
        elif isinstance(value, list) and isinstance(document[key], list):
            document[key] = document[key] + value
        elif isinstance(value, dict) and isinstance(document[key], dict):
            merge(document[key], value)
        elif type(value) is int and type(document[key]) is int:
            document[key] += value  # a count of the second part (methods' counts)


# --- HTML and Markdown -----------------------------------------------------------------------


@dataclass(frozen=True)
class Shown:
    """A section as a page shows it: its title, where it is, and its rendered body."""

    section: Section
    title: str
    anchor: str
    body: Markup
    empty: bool
    nested: tuple[Shown, ...] = ()


def _page(report: Report, *, html: bool) -> str:
    real = report.part()
    shown = list(_shown(report, real, html=html))
    skeleton = "report.html.jinja" if html else "report.md.jinja"
    return str(
        _template(skeleton).render(
            report=report,
            page=Page(real, html),
            shown=shown,
            smoke_models=_banner_models(report),
            smoke_warning=SMOKE_WARNING,
            smoke_mark=SMOKE_MARK,
        )
    )


def _shown(report: Report, part: Part, *, html: bool) -> Iterator[Shown]:
    """Each section the part shows, rendered (the smoke-test part nested in its section)."""
    page = _page_of(part, html)
    for section in SECTIONS:
        data = part[section.key]
        if not section.shown(data, part):
            continue
        start = time.perf_counter()
        nested: tuple[Shown, ...] = ()
        if isinstance(data, Part):
            nested = tuple(_shown(report, data, html=html))
            body = _body(section, data, page, nested, {"models": _banner_models(report)})
        elif (_extension(html), section.key) in part.rendered:
            body = part.rendered[_extension(html), section.key]
        else:
            body = _body(section, data, page, ())
        key = f"render.{section.key}"
        report.timings[key] = report.timings.get(key, 0.0) + time.perf_counter() - start
        yield Shown(
            section=section,
            title=section.title_for(part, str if html else _markdown_text),
            anchor=page.anchor(section.key),
            body=body,
            empty=section.empty(data),
            nested=nested,
        )


def _extension(html: bool) -> str:
    return "html" if html else "md"


def _page_of(part: Part, html: bool) -> Page:
    """The page a part's sections are shown on: the smoke-test part's nested one level down."""
    if part.smoke:
        return Page(part, html, anchor_prefix="smoke-", depth=3)
    return Page(part, html)


def _body(
    section: Section,
    data: Any,
    page: Page,
    nested: tuple[Shown, ...],
    view: dict[str, Any] | None = None,
) -> Markup:
    """A section's body: its partial rendered with its view of ``data``."""
    if view is None:
        view = dict(section.view(data, page)) if section.view is not None else {"data": data}
    return Markup(
        _template(f"sections/{section.key}.{_extension(page.html)}.jinja").render(
            view=view, page=page, section=section, nested=nested
        )
    )


def _banner_models(report: Report) -> list[str]:
    """The smoke-test models of the whole report, other catalogues' too: its banner's."""
    smoke = report.part(smoke=True)
    labels = [e.label for e in smoke.entries] + [e.label for e in smoke.elsewhere]
    labels += [e.label for e in smoke["ladder"].entries]
    return list(dict.fromkeys(labels))


def _template(name: str) -> Any:
    """A page's template; Jinja is imported on first use (a CSV or JSON never needs it)."""
    from amvicc.report.templating import template

    return template(name)


def _markdown_text(value: object) -> str:
    from amvicc.report.templating import markdown_text

    return markdown_text(value)
