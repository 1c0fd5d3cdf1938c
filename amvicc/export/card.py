"""The dataset card (``README.md``): its YAML header, what each column means, how it was made.

The header is what the Hugging Face Hub and ``datasets.load_dataset`` read: one configuration
per table (``config_name`` and its Parquet files), the licence and the task categories. The
body says what every column means, how the study was made (catalogue and its SHA-256, label
policies, models and runs, amvicc's version) and whom to cite.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from amvicc import __version__
from amvicc.catalogue import Catalogue

if TYPE_CHECKING:
    import pandas as pd

COLUMNS: dict[str, dict[str, str]] = {
    "images": {
        "image_id": "the image's id in the workspace",
        "run_id": "the generation run that made it",
        "model": "the image model, as named to amvicc",
        "question": "MMVP's question index (1-300)",
        "category": "the question's visual category (AMVICC's two-letter code)",
        "kind": "`implicit` (the scene) or `explicit` (the scene and the feature of the answer)",
        "prompt": "the prompt the image was made from",
        "sample": "the k-th image of this prompt (0-based)",
        "seed": "its seed (empty where the provider takes none)",
        "smoke": "made by a random-weight smoke-test model: meaningless, never pool it",
        "image": "the image itself",
    },
    "answers": {
        "response_id": "the reply's id in the workspace",
        "run_id": "the answer run",
        "model": "the VLM, as named to amvicc",
        "condition": "a perturbation (`grain=0.1`) or challenge arm; empty for a plain run",
        "question": "MMVP's question index (1-300)",
        "category": "the question's visual category",
        "image": "`mmvp` (MMVP's own image) or the generated image's id",
        "sample": "the k-th reply to this question (0-based)",
        "prompt": "the prompt sent, verbatim",
        "reply": "the reply, verbatim (empty for a failed request)",
        "status": "`ok`, or `error` for a failed request",
        "error": "why the request failed",
        "decision": "the option the reply chose (`a`, `b`), `no_answer`, `undecided`, or `failed`",
        "decided_by": "who decided: `human` (raters, adjudication), `extractor`, or an LLM judge",
        "answer": "the correct option under the run's label policy",
        "correct": "whether the decision is the answer (empty when undecided or failed)",
        "prompt_tokens": "the prompt's tokens, as the provider counted them",
        "completion_tokens": "the reply's tokens",
        "smoke": "a random-weight smoke-test model: meaningless, never pool it",
    },
    "verdicts": {
        "verdict_id": "the verdict's id (later ids supersede earlier ones of the same source)",
        "subject": "`image` or `response`",
        "image_id": "the image judged",
        "response_id": "the reply judged",
        "run_id": "the run of the image or reply",
        "model": "the model that made it",
        "question": "MMVP's question index",
        "category": "the question's visual category",
        "kind": "for an image: its prompt kind",
        "sample": "the image's or reply's sample",
        "decided_by": "`rater`, `adjudication`, `judge` (an image judge), `llm-judge`, "
        "`procedure` (a published grading procedure) or `extractor`",
        "decider": "the rater's pseudonym (`rater-<n>`), or the judge's model",
        "source": "the verdict's source, raters pseudonymised and sheet files left out",
        "value": "an image: `correct` / `incorrect` / `cant_tell`; a reply: the option "
        "(`a`, `b`), `not_a` / `not_b`, `no_answer` or `undecided`",
        "comment": "the rater's comment",
        "rubric_version": "the rubric the rater or judge read",
        "created_at": "when it was given (UTC)",
        "current": "whether it is its source's latest on this subject",
    },
    "results": {
        "model": "the model",
        "modality": "`igm` (image model) or `vlm`",
        "category": "a category code, or `all`",
        "metric": "`individual_implicit`, `individual_explicit`, `pair_implicit`, "
        "`pair_explicit` (image models), `individual`, `pair` (VLMs), and more",
        "value": "the metric's value",
        "correct": "items (or pairs) correct",
        "total": "items (or pairs) counted",
        "...": "the other columns of `amvicc report --format csv` (docs/report.md)",
    },
}

CITATIONS = """\
```bibtex
@inproceedings{basappa2025amvicc,
  title     = {{AMVICC}: A Novel Benchmark for Cross-Modal Failure Mode Profiling for {VLMs} and {IGMs}},
  author    = {Basappa and others},
  booktitle = {VLM4RWD Workshop at NeurIPS},
  year      = {2025}
}

@inproceedings{tong2024eyes,
  title     = {Eyes Wide Shut? Exploring the Visual Shortcomings of Multimodal {LLMs}},
  author    = {Tong, Shengbang and Liu, Zhuang and Zhai, Yuexiang and Ma, Yi and LeCun, Yann and Xie, Saining},
  booktitle = {CVPR},
  year      = {2024}
}
```
"""

_TASKS = {"images": "text-to-image", "answers": "visual-question-answering"}


def dataset_card(
    *,
    rows: Mapping[str, int],
    files: Mapping[str, str],
    license: str,
    catalogue: Catalogue,
    runs: pd.DataFrame,
    raters_named: bool,
) -> str:
    """The card's text: the YAML header, then the tables, the method and the citations.

    Args:
        rows: rows per table written.
        files: each written table's Parquet path pattern, relative to the folder.
        license: the licence identifier.
        catalogue: the catalogue the study used.
        runs: the exported runs.
        raters_named: raters appear under their stored names (else pseudonyms).
    """
    import yaml

    header = {
        "license": license,
        "pretty_name": "AMVICC study",
        "task_categories": [task for table, task in _TASKS.items() if rows.get(table)]
        or ["visual-question-answering"],
        "tags": ["amvicc", "mmvp", "benchmark", "failure-modes"],
        "configs": [
            {"config_name": table, "data_files": [{"split": "train", "path": files[table]}]}
            for table in files
        ],
    }
    lines = ["---", yaml.safe_dump(header, sort_keys=False).rstrip(), "---", ""]
    lines += [
        "# AMVICC study",
        "",
        "Where vision-language models (VLMs) and image generators fail on the same visual "
        "concepts: MMVP's 300 questions in 150 pairs and 9 categories, with AMVICC's implicit "
        "and explicit image prompts, exported by amvicc (`amvicc export --format hf`).",
        "",
        "```python",
        "from datasets import load_dataset",
        "",
        *[f'{table} = load_dataset("<this repository>", "{table}")' for table in files],
        "```",
        "",
    ]
    lines += _tables(rows, files, raters_named)
    lines += _method(catalogue, runs, license)
    lines += ["## Citation", "", "Cite AMVICC and MMVP:", "", CITATIONS]
    return "\n".join(lines)


def _tables(rows: Mapping[str, int], files: Mapping[str, str], raters_named: bool) -> list[str]:
    lines = ["## Configurations", ""]
    for table, columns in COLUMNS.items():
        if table not in files:
            lines += [f"`{table}`: none in this study (no rows).", ""]
            continue
        lines += [
            f"### `{table}` ({rows[table]} rows)",
            "",
            "| column | meaning |",
            "| --- | --- |",
        ]
        lines += [f"| `{name}` | {meaning} |" for name, meaning in columns.items()]
        lines.append("")
    who = (
        "Raters appear under the names stored in the workspace."
        if raters_named
        else "Raters appear under stable pseudonyms (`rater-<n>`, in the order they first "
        "gave a verdict in the workspace); their names are not in this dataset."
    )
    return [*lines, who, ""]


def _method(catalogue: Catalogue, runs: pd.DataFrame, license: str) -> list[str]:
    policies = sorted({str(p) for p in runs["label_policy"].dropna()}) or [catalogue.label_policy]
    lines = [
        "## How the study was made",
        "",
        f"- Catalogue: `{catalogue.source}` (SHA-256 `{catalogue.sha256}`), "
        f"{len(catalogue)} questions.",
        f"- Label policy: {', '.join(policies)} (`corrected` fixes MMVP's four known wrong "
        "labels, 99, 100, 279, 280; `original` keeps them).",
        f"- amvicc {__version__}; exported {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}.",
        "- Grading of replies: GRIP's three stages — a deterministic extractor (it decides "
        "less rather than wrong), an LLM judge for what it left undecided, human audit.",
        f"- Licence: `{license}`. Generated images and model replies are also subject to "
        "the terms of the models that made them.",
        "",
        "| run | stage | model | condition | status | smoke |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for run in runs.to_dict(orient="records"):
        lines.append(
            f"| `{run['run_id']}` | {run['stage']} | `{run['model']}` | "
            f"{run['condition'] or ''} | {run['status']} | {'yes' if run['smoke'] else ''} |"
        )
    return [*lines, ""]
