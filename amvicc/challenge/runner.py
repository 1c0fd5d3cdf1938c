"""A challenge run end to end: first turns, second-turn prompts, run record, engine, summary.

Grading is a stage of its own; ``amvicc challenge`` runs it on the challenge run right after
this one, as ``amvicc answer`` does, so the second turns are graded by the same three stages
as the first.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import replace
from typing import Any

from amvicc.api import DEFAULT_KEY_ENV, ApiSettings
from amvicc.catalogue import Catalogue, OptionLabel, format_index_ranges
from amvicc.challenge.options import ARM_TEMPLATES, ChallengeOptions, ChallengeSummary
from amvicc.errors import UserError
from amvicc.files import UnreadableFile
from amvicc.lifecycle import RunLifecycle
from amvicc.store import ResponseRecord, RunRecord, RunSpec, Store, VerdictRecord
from amvicc.vlm.base import (
    SMOKE_WARNING,
    VLM,
    ChatTurn,
    EncodedImage,
    LocalSettings,
    read_image_file,
)
from amvicc.vlm.engine import AnswerEngine, SamplingParams, WorkItem
from amvicc.vlm.prompting import PromptTemplate, load_template
from amvicc.vlm.providers import open_vlm
from amvicc.vlm.replies import final_verdict

log = logging.getLogger(__name__)

NO_IMAGE = "their image is missing from the workspace"
NO_PEER = "no peer run has a reply to the same question"


def run_challenge(
    options: ChallengeOptions, *, store: Store, catalogue: Catalogue, vlm: VLM | None = None
) -> ChallengeSummary:
    """Send the arm's second turn after every decided first-turn reply of an answer run.

    Each conversation is the first turn exactly as it was sent (the image and the stored
    prompt), the model's stored reply, then the arm's rendered template. Only first-turn
    replies whose option a grader decided (``a`` or ``b``) are challenged: an assertion needs
    the option the model did *not* choose, and GRIP's rates count decided first turns only.
    Rerunning the same options asks only what has no second-turn reply yet.

    Args:
        options: the answer run, the arm, the template and how to reach the model.
        store: the workspace.
        catalogue: the (already selected) questions whose replies are challenged; the answer
            run's catalogue file.
        vlm: an already opened model (default: the answer run's model, opened here).

    Raises:
        UserError: an unknown run or one that is not an answer run, peers that do not fit the
            arm, another catalogue than the run's, or nothing to challenge.
    """
    parent = store.run(options.run_id)
    if parent.stage != "answer":
        raise UserError(
            f"run {parent.run_id!r} is a {parent.stage} run; --run takes an answer run "
            "(list them with `amvicc runs --stage answer`)"
        )
    peers = _peer_runs(options, store, parent)
    if parent.catalogue_sha256 and catalogue.sha256 != parent.catalogue_sha256:
        raise UserError(
            f"run {parent.run_id} was answered with another catalogue than {catalogue.source}; "
            "pass that file with --catalogue"
        )
    template = load_template(options.template, default=ARM_TEMPLATES[options.arm])
    first_turns, undecided = _first_turns(store, parent, catalogue)
    items, skipped = _second_turns(options, store, catalogue, template, first_turns, peers)
    if options.limit:
        items = items[: options.limit]
    if not items:
        raise UserError(
            f"run {parent.run_id} has no first-turn reply to challenge in the selection "
            f"({undecided} undecided, {sum(skipped.values())} left out); grade it first "
            f"(`amvicc grade --run {parent.run_id}`) or widen --index"
        )
    vlm = vlm or open_vlm(parent.model, api=_api(options, parent), local=_local(options, parent))
    if vlm.smoke:
        log.warning("%s %s", vlm.name, SMOKE_WARNING)
    spec = _spec(options, parent, vlm, catalogue, template, items)
    with RunLifecycle(store, spec, progress=options.progress, unit="req") as life:
        run = life.start()
        api = _api(options, parent)
        engine = AnswerEngine(store, run, vlm, _sampling(parent), retries=api.max_retries)
        todo = engine.pending(items)
        log.info("run %s: %d second turns to ask (%d in all)", run.run_id, len(todo), len(items))
        result, failed = engine.ask_and_finish(
            life,
            items,
            todo,
            summary={"first_turn_undecided": undecided, "left_out": dict(skipped)},
        )
    return ChallengeSummary(
        run_id=run.run_id,
        challenged=parent.run_id,
        arm=options.arm,
        store_root=str(store.root),
        items=len(items),
        answered=len(items) - failed,
        asked_now=life.taken,
        answered_now=result.answered,
        elsewhere=life.elsewhere,
        seconds=result.seconds,
        undecided=undecided,
        skipped=skipped,
        error_kinds=result.error_kinds,
    )


def _second_turns(
    options: ChallengeOptions,
    store: Store,
    catalogue: Catalogue,
    template: PromptTemplate,
    first_turns: list[tuple[ResponseRecord, OptionLabel]],
    peers: list[RunRecord],
) -> tuple[list[WorkItem], Counter[str]]:
    """The second turn after each decided first turn, and those left out, by reason."""
    peer_replies = [_replies_by_slot(store, run) for run in peers]
    skipped: Counter[str] = Counter()
    items: list[WorkItem] = []
    for response, chosen in first_turns:
        image = _first_image(store, response)
        if image is None:
            skipped[NO_IMAGE] += 1
            continue
        quoted = [
            {"text": text}
            for replies in peer_replies
            if (text := replies.get(_slot(response))) is not None
        ]
        if options.arm == "peers" and not quoted:
            skipped[NO_PEER] += 1
            continue
        items.append(_item(options, template, catalogue, response, chosen, image, quoted))
    return items, skipped


def _peer_runs(options: ChallengeOptions, store: Store, parent: RunRecord) -> list[RunRecord]:
    """The peer runs the arm needs (``peers``: at least one), checked."""
    if options.arm != "peers":
        if options.peer_runs:
            raise UserError(f"--peer-run is for --arm peers, not --arm {options.arm}")
        return []
    if not options.peer_runs:
        raise UserError("--arm peers needs at least one --peer-run RUN whose replies are quoted")
    peers = []
    for run_id in options.peer_runs:
        peer = store.run(run_id)
        if peer.stage != "answer":
            raise UserError(f"--peer-run {run_id!r} is a {peer.stage} run, not an answer run")
        if peer.run_id == parent.run_id:
            raise UserError(f"--peer-run {run_id!r} is the challenged run itself")
        peers.append(peer)
    return peers


Slot = tuple[int, str, int]


def _slot(response: ResponseRecord) -> Slot:
    return (response.question_index, response.image_key, response.sample)


def _first_turns(
    store: Store, parent: RunRecord, catalogue: Catalogue
) -> tuple[list[tuple[ResponseRecord, OptionLabel]], int]:
    """The run's current replies in the selection whose option is decided, and how many not.

    The replies are the current ones of the run's configuration (as in the report): a rerun
    of the same command under another run name fills the same slots.

    Raises:
        UserError: no reply of the selection was ever graded.
    """
    indices = {q.index for q in catalogue}
    replies = [
        r
        for r in store.responses(config_key=parent.config_key)
        if r.status == "ok" and r.question_index in indices and r.text is not None
    ]
    verdicts: dict[str, list[VerdictRecord]] = {}
    for verdict in store.latest_verdicts_on([r.response_id for r in replies]):
        verdicts.setdefault(str(verdict.response_id), []).append(verdict)
    if replies and not verdicts:
        raise UserError(
            f"run {parent.run_id}'s replies are not graded yet; run "
            f"`amvicc grade --run {parent.run_id}` first"
        )
    decided: list[tuple[ResponseRecord, OptionLabel]] = []
    undecided = 0
    for reply in replies:
        value, _ = final_verdict(verdicts.get(reply.response_id, []))
        if value == "a":
            decided.append((reply, "a"))
        elif value == "b":
            decided.append((reply, "b"))
        else:
            undecided += 1
    return decided, undecided


def _replies_by_slot(store: Store, run: RunRecord) -> dict[Slot, str]:
    """A peer run's current successful replies, verbatim, by slot."""
    return {
        _slot(r): r.text
        for r in store.responses(config_key=run.config_key)
        if r.status == "ok" and r.text is not None
    }


def _first_image(store: Store, response: ResponseRecord) -> EncodedImage | None:
    """The image the first turn was asked about, from its copy in the workspace."""
    if response.input_path is None:
        return None
    try:
        data = read_image_file(store.path(response.input_path))
    except (OSError, UnreadableFile):
        return None
    return EncodedImage.from_bytes(data, filename=response.input_path)


def _item(
    options: ChallengeOptions,
    template: PromptTemplate,
    catalogue: Catalogue,
    response: ResponseRecord,
    chosen: OptionLabel,
    image: EncodedImage,
    peers: list[dict[str, str]],
) -> WorkItem:
    """The second turn after one first-turn reply: the conversation so far and the new prompt."""
    question = catalogue.question(response.question_index)
    other: OptionLabel = "b" if chosen == "a" else "a"
    prompt = template.render(
        question=question,
        chosen=question.option(chosen),
        asserted=question.option(other),
        first_reply=response.text,
        peers=peers,
    )
    extra: dict[str, Any] = {
        "arm": options.arm,
        "first_response_id": response.response_id,
        "first_choice": chosen,
    }
    if options.arm in ("assertion", "consensus"):
        extra["asserted"] = other
    if peers:
        extra["peers_quoted"] = len(peers)
    return WorkItem(
        question=question,
        image_key=response.image_key,
        image=image,
        prompt=prompt,
        sample=response.sample,
        image_id=response.image_id,
        input_path=response.input_path,
        extra=extra,
        history=(ChatTurn.user(response.prompt, image), ChatTurn.assistant(response.text or "")),
        parent_response_id=response.response_id,
    )


def _sampling(parent: RunRecord) -> SamplingParams:
    """The answer run's sampling: the second turn is sampled like the first."""
    config = parent.config
    default = SamplingParams()
    return SamplingParams(
        temperature=float(config.get("temperature", default.temperature)),
        max_tokens=int(config.get("max_tokens", default.max_tokens)),
        seed=int(config.get("seed", default.seed)),
    )


def _api(options: ChallengeOptions, parent: RunRecord) -> ApiSettings:
    """The API settings: the user's, with the answer run's server when no URL is given."""
    api = options.api
    recorded = parent.config.get("base_url")
    if api.base_url is not None or not isinstance(recorded, str):
        return api
    key_env = parent.config.get("api_key_env")
    if api.api_key_env != DEFAULT_KEY_ENV or not isinstance(key_env, str):
        key_env = api.api_key_env
    return replace(api, base_url=recorded, api_key_env=key_env)


def _local(options: ChallengeOptions, parent: RunRecord) -> LocalSettings:
    """The local settings, with the answer run's precision unless another is asked for."""
    dtype = parent.config.get("dtype")
    if options.local.dtype == "auto" and isinstance(dtype, str):
        return replace(options.local, dtype=dtype)
    return options.local


def _spec(
    options: ChallengeOptions,
    parent: RunRecord,
    vlm: VLM,
    catalogue: Catalogue,
    template: PromptTemplate,
    items: list[WorkItem],
) -> RunSpec:
    """The run: the challenged run's configuration, the arm, its template and its peers."""
    outputs: dict[str, Any] = {
        "challenged_run": parent.run_id,
        "challenged_config_key": parent.config_key,
        "arm": options.arm,
        "template_sha256": template.sha256,
        "peer_runs": list(options.peer_runs),
    }
    settings: dict[str, Any] = {
        **vlm.describe(),
        "smoke_test_model": vlm.smoke,
        "template": template.name,
        "catalogue": parent.config.get("catalogue"),
        "images": parent.config.get("images"),
        **{
            k: parent.config[k] for k in ("temperature", "max_tokens", "seed") if k in parent.config
        },
        "categories": [c.code for c in catalogue.categories()],
        "index": format_index_ranges(item.question.index for item in items),
        "limit": options.limit,
        "first_turns": len(items),
    }
    return RunSpec(
        stage="challenge",
        model=parent.model,
        outputs=outputs,
        settings=settings,
        label_policy="original" if parent.label_policy == "original" else "corrected",
        catalogue_sha256=parent.catalogue_sha256,
        smoke=vlm.smoke,
        command=options.command,
        name=options.run_name,
        condition=options.arm,
        parent_run_id=parent.run_id,
    )
