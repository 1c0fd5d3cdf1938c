"""What a challenge is asked to do, and what it reports back."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, get_args

from amvicc.vlm.options import ModelRunOptions

Arm = Literal["assertion", "consensus", "peers", "control"]
ARMS: tuple[Arm, ...] = get_args(Arm)
#: The shipped second-turn template of each arm, in ``prompts/`` (replace with ``template``).
ARM_TEMPLATES: dict[Arm, str] = {arm: f"challenge_{arm}.jinja" for arm in ARMS}


@dataclass(frozen=True)
class ChallengeOptions(ModelRunOptions):
    """Everything ``amvicc challenge`` takes besides the catalogue and the store.

    The model, its sampling (temperature, reply length, seed) and the images are the answer
    run's: a challenge continues that run's conversations, it does not start new ones. Of the
    shared :class:`~amvicc.vlm.options.ModelRunOptions`, ``api`` without a base URL means the
    server the answer run recorded, ``local.dtype`` ``auto`` the answer run's precision, and
    ``limit`` challenges the first ``limit`` first-turn replies only.

    Attributes:
        run_id: the answer run whose first-turn replies are challenged.
        arm: ``assertion`` (the user asserts the other option), ``consensus`` (three
            constructed peers give the other option), ``peers`` (other runs' replies, quoted)
            or ``control`` (only "Please state your final answer.").
        peer_runs: for ``peers``: the answer runs whose replies to the same questions are
            quoted, in this order (at least one).
        template: a jinja2 template for the arm's second turn (None: the shipped
            ``prompts/challenge_<arm>.jinja``).
    """

    run_id: str
    arm: Arm
    peer_runs: tuple[str, ...] = ()
    template: Path | None = None


@dataclass(frozen=True)
class ChallengeSummary:
    """What a challenge run did.

    Attributes:
        run_id: the stored challenge run.
        challenged: the answer run it continues.
        arm: the arm (the run's condition).
        store_root: the workspace.
        items: first-turn replies challenged (decided, with their image and, for ``peers``,
            a peer's reply).
        answered: of which have a second-turn reply now.
        asked_now: requests sent by this call (the rest were answered before).
        answered_now: of which got a reply.
        seconds: time spent asking.
        undecided: first-turn replies left out because no grader decided which option they
            chose (there is no other option to assert; grade or audit them first).
        skipped: other first-turn replies left out, by reason (``image missing``, ``no peer
            reply``).
        error_kinds: the commonest failure messages with their counts.
        elsewhere: second turns another process challenging the same run asked, or held,
            meanwhile.
    """

    run_id: str
    challenged: str
    arm: Arm
    store_root: str
    items: int
    answered: int
    asked_now: int
    answered_now: int
    seconds: float
    undecided: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    error_kinds: Counter[str] = field(default_factory=Counter)
    elsewhere: int = 0

    @property
    def failed(self) -> int:
        """Second turns whose request failed (stored as errors; rerunning retries them)."""
        return self.items - self.answered

    def lines(self) -> list[str]:
        """What was challenged and what was left out, one fact a line."""
        rate = ""
        if self.seconds > 0 and self.asked_now:
            rate = f", {self.answered_now / self.seconds:.1f}/s"
        shared = f", {self.elsewhere} by another process" if self.elsewhere else ""
        lines = [
            f"challenged {self.answered}/{self.items} first-turn replies of {self.challenged} "
            f"[{self.arm}] ({self.asked_now} asked now{rate}{shared}); run {self.run_id} in "
            f"{self.store_root}"
        ]
        if self.undecided:
            lines.append(
                f"  left out {self.undecided} first-turn replies no grader decided "
                "(audit them in `amvicc score`, then rerun to challenge them)"
            )
        for reason, count in sorted(self.skipped.items()):
            lines.append(f"  left out {count} first-turn replies: {reason}")
        return lines

    def error_lines(self) -> list[str]:
        """What failed and how to retry it; empty when nothing failed."""
        if not self.failed:
            return []
        lines = [f"  {count} x {message}" for message, count in self.error_kinds.most_common(3)]
        lines.append(
            f"{self.failed} request(s) failed and are stored as errors; rerun the same command "
            "to retry them"
        )
        return lines
