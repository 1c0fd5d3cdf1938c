"""What the scoring app and the verdict export are asked to do, and what they report back."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from amvicc.score.server import ScoringServer

ExportFormat = Literal["csv", "jsonl"]


@dataclass(frozen=True)
class ScoreOptions:
    """How to serve the scoring app (``amvicc score``).

    Attributes:
        run_ids: the generation runs to rate (None: every generation run).
        host: the address to listen on; anything but loopback wants ``logins``.
        port: the port (None: a free one).
        raters_per_item: how many people rate each image; disagreements go to adjudication.
        seed: base of each rater's random order.
        logins: ``(user, password)`` pairs; the user is the rater's name (empty: no login).
        open_browser: open the app in this machine's web browser.
        quiet: keep the web server's own logging quiet.
    """

    run_ids: tuple[str, ...] | None = None
    host: str = "127.0.0.1"
    port: int | None = 7860
    raters_per_item: int = 2
    seed: int = 0
    logins: tuple[tuple[str, str], ...] = ()
    open_browser: bool = False
    quiet: bool = False


@dataclass(frozen=True, eq=False)
class ScoreSummary:
    """A running scoring app.

    Attributes:
        server: the app, serving in the background (``wait()`` blocks, ``close()`` stops).
        images: generated images to rate.
        answers: undecided answers to audit.
        raters_per_item: raters wanted per image.
        logins: how many logins the app accepts (0: no login).
    """

    server: ScoringServer
    images: int
    answers: int
    raters_per_item: int
    logins: int

    def lines(self) -> list[str]:
        """Where the app is and what it serves."""
        return [
            f"Scoring {self.images} images ({self.raters_per_item} raters each) and "
            f"{self.answers} undecided answers at {self.server.url}"
            + (f" for {self.logins} login(s)" if self.logins else "")
            + "; Ctrl-C stops (every verdict is already saved)"
        ]


@dataclass(frozen=True)
class ExportOptions:
    """What ``amvicc score export`` writes.

    Attributes:
        format: ``csv`` or ``jsonl``.
        output: the file (None: standard output).
        people_only: only verdicts of raters, grade sheets and adjudicators.
        excel_safe: in CSV, prefix text cells a spreadsheet would run as a formula (``=``,
            ``+``, ``-``, ``@``) with ``'``; off by default to keep the data exact.
    """

    format: ExportFormat = "csv"
    output: Path | None = None
    people_only: bool = False
    excel_safe: bool = False


@dataclass(frozen=True)
class ExportSummary:
    """What was exported."""

    rows: int
    output: Path | None

    def lines(self) -> list[str]:
        """Where the verdicts went (nothing to say when they went to standard output)."""
        return [f"wrote {self.rows} verdicts to {self.output}"] if self.output is not None else []
