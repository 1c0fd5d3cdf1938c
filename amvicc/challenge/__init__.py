"""GRIP's open loop for VLMs: re-elicit stored answers under a controlled second turn.

``amvicc challenge --run ANSWER_RUN --arm ARM`` sends, after each decided first-turn reply of
an answer run, a second turn in the same conversation (the image and question as the first
time, then the model's own reply): an unsupported assertion of the other option, a constructed
consensus of three peers, natural peers (other runs' replies) or a control that asserts
nothing. Each arm is a run of its own whose condition is the arm; its replies are stored
verbatim and graded like any others, and the report signs every change against the truth
(capitulation, correction, each adjusted by the control arm).

From Python::

    from amvicc import Store
    from amvicc.challenge import ChallengeOptions, run_challenge
    from amvicc.vlm.replies import run_catalogue

    store = Store("runs")
    answered = store.run("answer-gpt-4o-1a2b3c4d")
    summary = run_challenge(
        ChallengeOptions(run_id=answered.run_id, arm="assertion"),
        store=store,
        catalogue=run_catalogue(answered),
    )
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from amvicc.lazy import lazy_attributes

if TYPE_CHECKING:
    from amvicc.challenge.options import ARMS, Arm, ChallengeOptions, ChallengeSummary
    from amvicc.challenge.runner import run_challenge

_EXPORTS = {
    "ARMS": "amvicc.challenge.options",
    "Arm": "amvicc.challenge.options",
    "ChallengeOptions": "amvicc.challenge.options",
    "ChallengeSummary": "amvicc.challenge.options",
    "run_challenge": "amvicc.challenge.runner",
}
__all__ = ["ARMS", "Arm", "ChallengeOptions", "ChallengeSummary", "run_challenge"]
__getattr__ = lazy_attributes(__name__, _EXPORTS)
