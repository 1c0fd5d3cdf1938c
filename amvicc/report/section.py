"""A report section, and the part of a report (real models, or smoke-test models) it is made for.

A report is an ordered list of sections (:data:`amvicc.report.sections.SECTIONS`). A section is
one module of :mod:`amvicc.report.sections` defining a :class:`Section`: how it computes its
numbers from a :class:`Part`, which rows it adds to the CSV, what it adds to the JSON, what
its two templates (``templates/sections/<key>.html.jinja`` and ``<key>.md.jinja``) show, and
the names it gives the Python API (:class:`amvicc.report.build.Report`'s attributes). Building
a report computes every section the format needs; rendering walks the same list.

A report has two parts, each the same list of sections: the real models, and the smoke-test
models (random weights, built offline). A smoke-test model never shares a part with a real
one, so it never enters a comparison, a pooled number, a heatmap or a gallery with real models;
its part is shown in a section of its own (``smoke``), and its rows follow the real models' in
the CSV and JSON.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pandas as pd

from amvicc.catalogue import CATEGORY_BY_CODE, Catalogue
from amvicc.report.early import READ_AHEAD, SHARED_READS, EarlyReads
from amvicc.report.entries import ModelEntry
from amvicc.report.items import Items
from amvicc.report.options import ReportOptions
from amvicc.report.stats import Resampler
from amvicc.report.values import records
from amvicc.store import Store

if TYPE_CHECKING:
    from amvicc.report.outcomes import Outcomes

Need = Literal["rows", "document", "view"]
T = TypeVar("T")
SMOKE_MARK = "⚠ smoke"


def no_data(data: Any) -> bool:
    """Whether a section's data holds nothing to show (None, an empty table or collection)."""
    if data is None:
        return True
    if isinstance(data, pd.DataFrame):
        return data.empty
    if isinstance(data, list | tuple | dict):
        return not data
    return False


@dataclass(frozen=True)
class Section:
    """One section of the report.

    Attributes:
        key: its name: the HTML element's id, and its templates' stem
            (``templates/sections/<key>.html.jinja`` and ``.md.jinja``).
        title: its heading, and its entry in the table of contents.
        compute: its numbers, from a part of the report (None: the section does not apply
            to the part, e.g. no model of it; the section is then left out).
        rows: its rows of the CSV (:data:`amvicc.report.rows.ROW_COLUMNS`), if it has any.
        document: its entries of the JSON document, if it has any (lists of records; a key
            that several sections or both parts give is one list, in their order).
        view: what its templates show (they also see the whole page); None: its data as is.
        exports: attributes of :class:`~amvicc.report.build.Report` it provides, each
            computed from a part (a name several sections or parts provide is combined).
        folds: shown in a ``<details>`` element in the HTML (the first screen is not).
        opens: when folded, whether it starts open.
        empty: whether its data shows nothing. A part of smoke-test models leaves such a
            section out; the real part shows it with a note on how to fill it, unless
            ``hides`` (then it is left out there too).
        hides: leave the section out wherever it is empty.
        heading: its title for a part, when the title depends on it (the catalogue's name):
            called with the part and how to write its data into the page (escaped for
            Markdown; HTML escapes everything itself).
        toc: a shorter title for the table of contents.
        apart: heavy and independent of the metric table, which the sections it is computed
            beside would need: on a big workspace a second process computes it while this one
            computes the rest (:mod:`amvicc.report.parallel`).
    """

    key: str
    title: str
    compute: Callable[[Part], Any]
    rows: Callable[[Any], pd.DataFrame] | None = None
    document: Callable[[Any], dict[str, Any]] | None = None
    view: Callable[[Any, Page], Mapping[str, Any]] | None = None
    exports: Mapping[str, Callable[[Part], Any]] = field(default_factory=dict)
    folds: bool = True
    opens: bool = False
    empty: Callable[[Any], bool] = no_data
    hides: bool = False
    heading: Callable[[Part, Callable[[str], str]], str] | None = None
    toc: str | None = None
    apart: bool = False

    def title_for(self, part: Part, text: Callable[[str], str] = str) -> str:
        """Its title in ``part``, the data in it written with ``text``."""
        return self.heading(part, text) if self.heading is not None else self.title

    def shown(self, data: Any, part: Part) -> bool:
        """Whether the section is shown in ``part`` with this data."""
        if data is None:
            return False
        return not ((part.smoke or self.hides) and self.empty(data))

    def needed(self, need: Need) -> bool:
        """Whether an output that needs ``need`` (rows: CSV; document: JSON) computes it."""
        if need == "rows":
            return self.rows is not None
        if need == "document":
            return self.document is not None
        return True


class Pending(Exception):
    """A section asked for while another process computes it (:attr:`Part.pending`)."""


class Clock:
    """Seconds spent per named step; a step run inside another counts for itself only."""

    def __init__(self) -> None:
        """Start with nothing timed."""
        self.seconds: dict[str, float] = {}
        self._inner: list[float] = []

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Add the enclosed code's seconds to ``name`` (less what nested steps took)."""
        start = time.perf_counter()
        self._inner.append(0.0)
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            nested = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed - nested
            if self._inner:
                self._inner[-1] += elapsed


class Part:
    """The models of one kind in a report — real, or smoke-test — and their sections' data.

    The inputs most sections share (the items, the metric table, the item outcomes) are
    computed once, on first use; so is each section (``part[key]``), so a section may read
    another's data in any order.

    Attributes:
        store: the workspace.
        options: the report's options.
        smoke: the part of the smoke-test models.
        catalogue: the report's catalogue (its selected questions).
        catalogue_name: its short name (the rows' ``catalogue``).
        items: the items of the part's models on the report's catalogue (None: it has none).
        elsewhere: the part's models on other catalogues.
        resampler: the bootstrap weights, shared by both parts.
        clock: where the seconds of each step go.
        smoke_part: in the real part, the smoke-test models' part (None without any).
        shared: workspace reads both parts need, made once (see :meth:`shared_read`).
        ahead: the reads started ahead in a child (:meth:`EarlyReads.read_ahead`), whose
            result :meth:`shared_read` takes when a section first needs one of them.
        rendered: sections already rendered, by format (``csv``, ``html``, ``md``) and key
            (the second process renders what it computes:
            :func:`amvicc.report.render.prerenderer`).
        pending: sections the second process is computing, while this one renders its own
            ahead: asking for one raises :class:`Pending` rather than computing it twice.
    """

    def __init__(
        self,
        store: Store,
        options: ReportOptions,
        *,
        smoke: bool,
        catalogue: Catalogue,
        catalogue_name: str,
        items: Items | None,
        elsewhere: tuple[ModelEntry, ...],
        resampler: Resampler,
        clock: Clock,
        sections: Mapping[str, Section],
        shared: dict[str, Any] | None = None,
        ahead: EarlyReads | None = None,
    ) -> None:
        """Hold the part's inputs; nothing is computed yet."""
        self.store = store
        self.options = options
        self.smoke = smoke
        self.catalogue = catalogue
        self.catalogue_name = catalogue_name
        self.items = items
        self.elsewhere = elsewhere
        self.resampler = resampler
        self.clock = clock
        self.smoke_part: Part | None = None
        self.selection_order: tuple[str, ...] = ()
        self._sections = sections
        self._data: dict[str, Any] = {}
        self.shared: dict[str, Any] = {} if shared is None else shared
        self.ahead = ahead
        self.rendered: dict[tuple[str, str], Any] = {}
        self.pending: frozenset[str] = frozenset()

    @property
    def entries(self) -> tuple[ModelEntry, ...]:
        """The part's models on the report's catalogue."""
        return self.items.entries if self.items is not None else ()

    @property
    def categories(self) -> list[str]:
        """The category codes reported, in AMVICC's order."""
        return [c.code for c in self.catalogue.categories()]

    def __getitem__(self, key: str) -> Any:
        """Section ``key``'s data for this part, computed on first use.

        Raises:
            Pending: ``key`` is being computed by the second process (see :attr:`pending`).
        """
        if key not in self._data:
            if key in self.pending:
                raise Pending(key)
            with self.clock.timed(key):
                self._data[key] = self._sections[key].compute(self)
        return self._data[key]

    def adopt(self, key: str, data: Any) -> None:
        """Take section ``key``'s data as computed elsewhere (another process, same inputs)."""
        self._data[key] = data

    def shared_read(self, name: str) -> Any:
        """The workspace read ``name`` of :data:`~amvicc.report.early.SHARED_READS`, made once.

        Such a read does not depend on the part's models (a scan of every verdict, say): the
        second part reuses the first's, and a big report may have made it ahead in a child.
        """
        if name not in self.shared and name in READ_AHEAD and self.ahead is not None:
            # Taken here, not before the sections: the second process, forked first, does
            # not need these, and the first may have other sections to compute meanwhile.
            waited = self.ahead.waited
            self.shared.update(self.ahead.read_before())
            if self.ahead.waited > waited:
                self.clock.seconds["ahead.wait"] = self.ahead.waited - waited
        if name not in self.shared:
            self.shared[name] = SHARED_READS[name](self.store)
        return self.shared[name]

    def __contains__(self, key: str) -> bool:
        """Whether section ``key`` has been computed for this part."""
        return key in self._data

    @cached_property
    def plain_items(self) -> Items | None:
        """The items of plain entries (no perturbation): what the main tables count."""
        if self.items is None:
            return None
        from amvicc.report.items import plain_only

        with self.clock.timed("items"):
            return plain_only(self.items)

    @cached_property
    def metrics(self) -> pd.DataFrame | None:
        """:func:`~amvicc.report.metrics.metric_table` of every entry of the part."""
        if self.items is None:
            return None
        from amvicc.report.metrics import metric_table

        with self.clock.timed("metrics"):
            return metric_table(self.items, self.options, self.resampler)

    @cached_property
    def outcomes(self) -> Outcomes | None:
        """The first sample of every plain item, as an array (the item-level sections')."""
        if self.plain_items is None:
            return None
        from amvicc.report.outcomes import collect_outcomes

        with self.clock.timed("outcomes"):
            return collect_outcomes(self.plain_items, self.options.missing)


@dataclass(frozen=True)
class Page:
    """What a section's templates see besides its own view: the report and its part.

    Attributes:
        part: the part the section is shown for.
        html: the page is HTML (else Markdown): figures and thumbnails only in HTML.
        anchor_prefix: prefixed to element ids inside the part (``smoke-`` in the smoke part).
        depth: the heading level of a section's title (2; 3 inside the smoke part).
    """

    part: Part
    html: bool
    anchor_prefix: str = ""
    depth: int = 2

    @property
    def options(self) -> ReportOptions:
        """The report's options."""
        return self.part.options

    @property
    def smoke(self) -> bool:
        """The page shows the smoke-test models' part."""
        return self.part.smoke

    @property
    def level(self) -> int:
        """The intervals' confidence level in percent (95)."""
        return round(100 * self.part.options.confidence)

    @property
    def ci_title(self) -> str:
        """The heading of a column holding the overall interval."""
        return f"{self.level}% CI (all)"

    @property
    def categories(self) -> list[tuple[str, str]]:
        """(code, name) of each category reported."""
        return [(c, CATEGORY_BY_CODE[c].name) for c in self.part.categories]

    @property
    def h(self) -> str:
        """The Markdown heading of a subsection (one level below the section's title)."""
        return "#" * (self.depth + 1)

    def name(self, label: str, smoke: bool) -> str:
        """A model's name as tables show it: smoke-test models marked everywhere."""
        return f"{label} {SMOKE_MARK}" if smoke else label

    def labelled(
        self, table: pd.DataFrame, drop: tuple[str, ...] = ("entry",)
    ) -> list[dict[str, Any]]:
        """The rows of ``table`` with ``name``: their model's label as tables show it."""
        smoke = {e.label for e in self.part.entries if e.smoke}
        return [
            {**row, "name": self.name(row["label"], row["label"] in smoke)}
            for row in records(table, drop)
        ]

    def anchor(self, key: str) -> str:
        """The element id of section ``key`` on this page."""
        return f"{self.anchor_prefix}{key}"
