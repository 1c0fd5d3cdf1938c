"""Files written the way other harnesses' own code writes them (read in their sources).

Each writer follows the harness's writing code step by step, so the importer is tested on what
real runs produce, not on what their documentation suggests:

- MMVP's ``scripts/evaluate_mllm.py`` (tsb0601/MMVP): one ``json.dumps`` line per question.
- lmms-eval's ``--log_samples`` (EvolvingLMMs-Lab/lmms-eval): ``evaluator.py`` builds each
  ``example`` from the task's ``doc_to_text`` / ``doc_to_target`` / ``process_results``;
  ``loggers/evaluation_tracker.py::save_results_samples`` sets ``input``, sanitises and
  flattens ``resps`` / ``filtered_resps``, pops ``arguments`` and ``doc`` and appends one
  ``json.dumps(..., ensure_ascii=False)`` line per sample, in v0.4-v0.6 and in v0.7+.
- VLMEvalKit's prediction files (open-compass/VLMEvalKit ``vlmeval/inference.py`` and
  ``smp/file.py::dump``): the dataset's rows without the image, plus ``prediction``.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from amvicc.catalogue import Catalogue, Question

# --- MMVP's own answer file ------------------------------------------------------------------


def write_mmvp_answers(path: Path, catalogue: Catalogue, reply: Callable[[Question], str]) -> Path:
    """As ``scripts/evaluate_mllm.py`` writes it: Questions.csv's rows in order, prompt =
    Question + " " + Options, answer = MMVP's (uncorrected) label, no category."""
    with path.open("w") as out:
        for q in catalogue:
            out.write(
                json.dumps(
                    {
                        "question_id": q.index,
                        "prompt": f"{q.text} {q.options_text}",
                        "answer": f"({q.mmvp_answer})",
                        "response": reply(q),
                        "answer_id": hashlib.sha1(str(q.index).encode()).hexdigest()[:22],
                        "model_id": "llava-v1.5-13b",
                    }
                )
                + "\n"
            )
    return path


# --- lmms-eval --------------------------------------------------------------------------------

MMVP_POST_PROMPT = "\nAnswer with the option's letter from the given choices directly."
MMVP_GEN_KWARGS = {"max_new_tokens": 16, "temperature": 0, "do_sample": False}
POPE_POST_PROMPT = "\nAnswer the question using a single word or phrase."
# A PIL image's str(), which is what lmms-eval's doc_hash serialises for the image.
PIL_REPR = "<PIL.JpegImagePlugin.JpegImageFile image mode=RGB size=224x224 at 0x7F3A2C1B5E10>"


def mmvp_doc(q: Question) -> dict[str, Any]:
    """A row of lmms-lab-eval/MMVP (MMVP's columns; the label corrections applied)."""
    return {
        "Index": q.index,
        "Question": q.text,
        "Options": q.options_text,
        "Correct Answer": f"({q.answer})",
        "image": PIL_REPR,
    }


def mmvp_doc_to_text(doc: dict[str, Any]) -> str:
    """lmms-eval's mmvp prompt: question, ``A. opt`` / ``B. opt`` lines, the post prompt."""
    options = re.findall(r"\([a-z]\)\s*([^(]+?)(?=\s*\([a-z]\)|$)", doc["Options"], re.I)
    lines = "\n".join(f"{chr(65 + i)}. {option.strip()}" for i, option in enumerate(options))
    return f"{doc['Question']}\n{lines}{MMVP_POST_PROMPT}"


def mmvp_doc_to_target(doc: dict[str, Any]) -> str:
    answer = doc["Correct Answer"].strip().lower()
    return "A" if "(a)" in answer or answer == "a" else "B" if "(b)" in answer else answer.upper()


def mmvp_letter(text: str) -> str:
    """lmms-eval's mmvp answer-letter extraction (what its metrics record as pred_letter)."""
    text = text.strip()
    for pattern in (
        r"^\s*\(?([AB])\)?\.?\s*$",
        r"^\s*\(?([AB])\)?[\.\s]",
        r"answer\s+is\s+\(?([AB])\)?",
        r"option\s+\(?([AB])\)?",
        r"\(?([AB])\)?(?:\s|$)",
    ):
        match = re.search(pattern, text, flags=re.IGNORECASE)
        if match:
            return match.group(1).upper()
    return text[0].upper() if text and text[0].upper() in "AB" else ""


def mmvp_process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    index = doc["Index"] - 1
    gt = mmvp_doc_to_target(doc)
    letter = mmvp_letter(results[0])
    result = {
        "index": index,
        "pair_index": index // 2,
        "pred": results[0],
        "pred_letter": letter,
        "gt": gt,
        "is_correct": letter == gt,
    }
    return {"mmvp_accuracy": result, "mmvp_pair_accuracy": result}


def pope_doc(number: int) -> dict[str, Any]:
    """A row of lmms-lab/POPE."""
    objects = ("snowboard", "dining table", "car", "person", "bottle", "chair")
    return {
        "id": str(number),
        "question_id": str(number + 1),
        "question": f"Is there a {objects[number % len(objects)]} in the image?",
        "answer": "yes" if number % 2 == 0 else "no",
        "image_source": f"COCO_val2014_{number:012d}",
        "category": "adversarial",
        "image": PIL_REPR,
    }


def pope_process_results(doc: dict[str, Any], results: list[str]) -> dict[str, Any]:
    pred = results[0].lower().strip()
    truth = doc["answer"].lower().strip()
    score = 1.0 if pred == truth else 0.0
    entry = {
        "question_id": doc["question_id"],
        "score": score,
        "prediction": pred,
        "ground_truth": truth,
    }
    names = ("accuracy", "precision", "recall", "f1_score", "yes_ratio")
    return {f"pope_{name}": dict(entry) for name in names}


def _sanitize(value: Any) -> Any:
    if isinstance(value, list):
        return [_sanitize(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_sanitize(item) for item in value)
    return str(value)


def write_lmms_eval_samples(
    folder: Path,
    docs: list[dict[str, Any]],
    *,
    task: str,
    version: tuple[int, int],
    doc_to_text: Callable[[dict[str, Any]], str],
    doc_to_target: Callable[[dict[str, Any]], str],
    process_results: Callable[[dict[str, Any], list[str]], dict[str, Any]],
    generate: Callable[[int, dict[str, Any], str], list[str]],
    gen_kwargs: dict[str, Any],
    token_counts: Callable[[int], dict[str, int] | None] = lambda doc_id: None,
    model_dir: str = "llava-hf__llava-1.5-7b-hf",
    date_id: str = "20250612_101530",
    split: str = "train",
) -> Path:
    """``--log_samples --output_path folder`` of one task, as lmms-eval ``version`` writes it.

    ``generate`` gives a doc's raw generations (more than one with ``repeats``); the
    ``take_first`` filter keeps the first as ``filtered_resps``.
    """
    out = folder / model_dir
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{date_id}_samples_{task}.jsonl"
    for doc_id, doc in enumerate(docs):
        context = doc_to_text(doc)
        raws = generate(doc_id, doc, context)
        filtered = raws[0]
        metrics = process_results(doc, [filtered])
        saved_doc = {k: v for k, v in doc.items() if k != "image"}
        example: dict[str, Any] = {
            "doc_id": doc_id,
            "doc": saved_doc,
            "target": doc_to_target(doc),
            # req.args without doc_to_visual (a function, not serialisable)
            "arguments": [context, dict(gen_kwargs), doc_id, task, split],
            "resps": [list(raws)],
            "filtered_resps": [filtered],
        }
        if version >= (0, 7):
            counts = token_counts(doc_id)
            example["token_counts"] = [counts]
        example["doc_hash"] = hashlib.sha256(
            json.dumps(doc, indent=2, default=str, ensure_ascii=False).encode()
        ).hexdigest()
        example.update(metrics)
        _save_sample(path, example, version)
    return path


def _save_sample(path: Path, sample: dict[str, Any], version: tuple[int, int]) -> None:
    """evaluation_tracker.save_results_samples, for one sample."""
    sample["input"] = sample["arguments"][0]
    sample["resps"] = _sanitize(sample["resps"])
    sample["filtered_resps"] = _sanitize(sample["filtered_resps"])
    if version >= (0, 7):
        if isinstance(sample["resps"], list) and len(sample["resps"]) == 1:
            sample["resps"] = sample["resps"][0]
        if isinstance(sample["filtered_resps"], list) and len(sample["filtered_resps"]) == 1:
            sample["filtered_resps"] = sample["filtered_resps"][0]
        if sample["resps"] == sample["filtered_resps"] or (
            isinstance(sample["resps"], list)
            and len(sample["resps"]) == 1
            and sample["resps"][0] == sample["filtered_resps"]
        ):
            sample.pop("resps")
    elif (
        sample["filtered_resps"] == sample["resps"][0]
        or sample["filtered_resps"] == sample["resps"]
    ):
        sample.pop("resps")
    sample["target"] = str(sample["target"])
    sample.pop("arguments")
    sample.pop("doc")
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(sample, default=str, ensure_ascii=False) + "\n")


def write_mmvp_log(
    folder: Path,
    catalogue: Catalogue,
    reply: Callable[[Question], str],
    *,
    version: tuple[int, int] = (0, 7),
    repeats: Callable[[Question], list[str]] | None = None,
) -> Path:
    """An lmms-eval ``mmvp`` log: ``reply`` gives each question's generation."""
    questions = list(catalogue)
    return write_lmms_eval_samples(
        folder,
        [mmvp_doc(q) for q in questions],
        task="mmvp",
        version=version,
        doc_to_text=mmvp_doc_to_text,
        doc_to_target=mmvp_doc_to_target,
        process_results=mmvp_process_results,
        generate=lambda doc_id, doc, ctx: (repeats or (lambda q: [reply(q)]))(questions[doc_id]),
        gen_kwargs=MMVP_GEN_KWARGS,
        token_counts=lambda doc_id: {"input_tokens": 600 + doc_id, "output_tokens": 1},
    )


def write_pope_log(folder: Path, records: int = 300) -> Path:
    """An lmms-eval ``pope`` log of ``records`` samples (``--limit``)."""
    return write_lmms_eval_samples(
        folder,
        [pope_doc(n) for n in range(records)],
        task="pope",
        version=(0, 7),
        doc_to_text=lambda doc: f"{doc['question'].strip()}{POPE_POST_PROMPT}",
        doc_to_target=lambda doc: doc["answer"],
        process_results=pope_process_results,
        generate=lambda doc_id, doc, ctx: ["Yes" if doc_id % 3 else "No"],
        gen_kwargs={"max_new_tokens": 128, "temperature": 0, "top_p": 1.0, "num_beams": 1},
        token_counts=lambda doc_id: None,
    )


# --- VLMEvalKit -------------------------------------------------------------------------------


def vlmevalkit_rows(catalogue: Catalogue) -> pd.DataFrame:
    """VLMEvalKit's MMVP rows (MMVP.tsv without its base64 image; index from 0)."""
    return pd.DataFrame(
        {
            "index": [q.index - 1 for q in catalogue],
            "question": [q.text for q in catalogue],
            "A": [q.options[0].text for q in catalogue],
            "B": [q.options[1].text for q in catalogue],
            "answer": [q.mmvp_answer.upper() for q in catalogue],
        }
    )


def write_vlmevalkit_predictions(
    path: Path, catalogue: Catalogue, prediction: Callable[[Question], str]
) -> Path:
    """``<model>_MMVP.<xlsx|tsv|json>`` as ``infer_data_job`` dumps it."""
    data = vlmevalkit_rows(catalogue)
    data["prediction"] = [str(prediction(q)) for q in catalogue]
    suffix = path.suffix
    if suffix == ".xlsx":
        # VLMEvalKit writes through xlsxwriter (strings_to_formulas off); openpyxl writes the
        # same cells (xlsxwriter is not installed here).
        with pd.ExcelWriter(path, engine="openpyxl") as writer:
            data.to_excel(writer, index=False)
    elif suffix == ".tsv":
        data.to_csv(path, sep="\t", index=False, encoding="utf-8", quoting=csv.QUOTE_ALL)
    else:
        with path.open("w") as out:
            json.dump(data.to_dict("records"), out, indent=4, ensure_ascii=False)
    return path
