"""Procedural scenes: determinism, pairs, the manifest against the pixels, OCR, the pipeline."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from amvicc.catalogue import CATEGORIES, check_catalogue
from amvicc.cli import main
from amvicc.errors import UserError
from amvicc.scenes import ScenesOptions, run_scenes
from amvicc.scenes.png import deflate_runs, encode_png
from amvicc.scenes.render import FONT_FILE

MANIFEST_KEYS = {"index", "category", "family", "seed", "answer", "objects", "level", "size"}


def _manifest(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "scenes.jsonl").read_text().splitlines()]


def _pixels(folder: Path, index: int) -> np.ndarray:
    return np.asarray(Image.open(folder / "images" / f"{index}.png").convert("RGB"))


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="module", params=[1, 3], ids=["level1", "level3"])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp(f"scenes-level{request.param}")
    run_scenes(ScenesOptions(out=out, per_category=4, seed=1, level=request.param))
    return out


def test_a_build_writes_a_catalogue_every_verb_accepts_images_and_a_manifest(built: Path) -> None:
    result = check_catalogue(built / "catalogue.csv")
    assert result.problems == ()
    catalogue = result.catalogue
    assert catalogue is not None and catalogue.has_prompts
    assert len(catalogue) == 72 and len(catalogue.pairs()) == 36
    assert catalogue.categories() == CATEGORIES
    assert sorted(p.name for p in (built / "images").iterdir()) == sorted(
        f"{i}.png" for i in range(1, 73)
    )
    manifest = _manifest(built)
    assert [entry["index"] for entry in manifest] == list(range(1, 73))
    for entry in manifest:
        assert set(entry) == MANIFEST_KEYS
        question = catalogue.question(entry["index"])
        assert entry["category"] == question.category.code
        assert entry["answer"] == f"({question.answer})"
        assert entry["objects"], entry
        for item in entry["objects"]:
            assert set(item) - {"text"} == {"kind", "color", "bbox"}
            assert len(item["color"]) == 3 and len(item["bbox"]) == 4
        # The explicit prompt names the feature of the answer; the implicit one is shared.
        assert question.explicit_answer == question.answer


def test_the_same_seed_gives_the_same_bytes_and_another_seed_other_scenes(tmp_path: Path) -> None:
    options = {"per_category": 2, "categories": ("tx", "qc", "sc"), "level": 2}
    run_scenes(ScenesOptions(out=tmp_path / "a", seed=7, **options))  # type: ignore[arg-type]
    run_scenes(ScenesOptions(out=tmp_path / "b", seed=7, **options))  # type: ignore[arg-type]
    run_scenes(ScenesOptions(out=tmp_path / "c", seed=8, **options))  # type: ignore[arg-type]
    first, again, other = (_files(tmp_path / name) for name in "abc")
    assert len(first) == 3 + 12  # catalogue, manifest, ladder, 12 images
    assert first == again
    images = [name for name in first if name.startswith("images/")]
    assert all(first[name] != other[name] for name in images)
    assert first["scenes.jsonl"] != other["scenes.jsonl"]


def test_a_pair_is_the_same_whichever_categories_are_built_with_it(tmp_path: Path) -> None:
    run_scenes(ScenesOptions(out=tmp_path / "all", per_category=1, seed=3))
    run_scenes(ScenesOptions(out=tmp_path / "tx", per_category=1, seed=3, categories=("tx",)))
    tx_index = 2 * [c.code for c in CATEGORIES].index("tx") + 1
    for offset in (0, 1):
        alone = (tmp_path / "tx" / "images" / f"{1 + offset}.png").read_bytes()
        among = (tmp_path / "all" / "images" / f"{tx_index + offset}.png").read_bytes()
        assert alone == among


def test_the_two_images_of_a_pair_differ_only_where_the_probed_objects_are(built: Path) -> None:
    catalogue = check_catalogue(built / "catalogue.csv").catalogue
    assert catalogue is not None
    manifest = {entry["index"]: entry for entry in _manifest(built)}
    for first, second in catalogue.pairs().values():
        assert first.text == second.text and first.options == second.options
        assert first.answer != second.answer
        assert first.implicit_prompt == second.implicit_prompt
        assert first.explicit_prompt != second.explicit_prompt
        a, b = manifest[first.index], manifest[second.index]
        assert a["seed"] == b["seed"] and a["family"] == b["family"]
        pixels_a, pixels_b = _pixels(built, first.index), _pixels(built, second.index)
        changed = np.any(pixels_a != pixels_b, axis=2)
        assert changed.any(), f"pair {first.pair} shows two identical images"
        # Every changed pixel lies inside an object one image has and the other lacks.
        only = [o for o in a["objects"] if o not in b["objects"]]
        only += [o for o in b["objects"] if o not in a["objects"]]
        assert only, f"pair {first.pair}: the manifests do not differ"
        allowed = np.zeros_like(changed)
        for item in only:
            x0, y0, x1, y1 = item["bbox"]
            allowed[y0 : y1 + 1, x0 : x1 + 1] = True
        assert not (changed & ~allowed).any(), f"pair {first.pair} differs outside its probe"
        # The distractors (objects both images share) are the same.
        shared = [o for o in a["objects"] if o in b["objects"]]
        assert len(shared) == len(a["objects"]) - len([o for o in only if o in a["objects"]])


def test_the_manifest_agrees_with_the_pixels(built: Path) -> None:
    size = Image.open(built / "images" / "1.png").size[0]
    for entry in _manifest(built):
        pixels = _pixels(built, entry["index"])
        assert pixels.shape == (size, size, 3)
        for item in entry["objects"]:
            x0, y0, x1, y1 = item["bbox"]
            assert 0 <= x0 <= x1 < size and 0 <= y0 <= y1 < size, item
            if item["kind"] == "text":
                # Glyphs do not cover their box's centre; the declared ink is inside the box.
                box = pixels[y0 : y1 + 1, x0 : x1 + 1]
                ink = np.all(box == item["color"], axis=2)
                assert ink.mean() > 0.1, item
                continue
            centre = pixels[(y0 + y1) // 2, (x0 + x1) // 2]
            assert list(centre) == item["color"], (entry["index"], item)


def test_quantity_pairs_differ_by_exactly_one_counted_shape(built: Path) -> None:
    catalogue = check_catalogue(built / "catalogue.csv").catalogue
    assert catalogue is not None
    manifest = {entry["index"]: entry for entry in _manifest(built)}
    for question in catalogue:
        if question.category.code != "qc":
            continue
        counted = int(question.option(question.answer).text)
        # "How many <colour> <shape>s are in the image?": no distractor has that shape.
        plural = question.text.split()[3]
        objects = manifest[question.index]["objects"]
        same = [o for o in objects if plural in (o["kind"] + "s", o["kind"] + "es")]
        assert len(same) == counted, (question.text, objects)
        assert len({tuple(o["color"]) for o in same}) == 1


def test_ocr_reads_every_text_scenes_word(built: Path) -> None:
    from amvicc.judge.ocr import TextExpectation, judge_reading, read_text, text_expectation

    manifest = _manifest(built)
    text_scenes = [e for e in manifest if e["category"] == "tx"]
    assert len(text_scenes) == 8
    catalogue = check_catalogue(built / "catalogue.csv").catalogue
    assert catalogue is not None
    prompts = {(p.question.index, p.kind): p for p in catalogue.prompts()}
    for entry in text_scenes:
        (word,) = [o["text"] for o in entry["objects"] if o["kind"] == "text"]
        question = catalogue.question(entry["index"])
        other = question.option("b" if question.answer == "a" else "a").text
        assert question.option(question.answer).text == word
        reading = read_text((built / "images" / f"{entry['index']}.png").read_bytes())
        assert reading.contains(word), (word, reading.texts)
        assert not reading.contains(other), (other, reading.texts)
        # The OCR judge's own rule, from the explicit prompts, passes the scene's image.
        partner_index = next(q.index for q in catalogue.pairs()[question.pair] if q != question)
        expectation = text_expectation(
            prompts[(question.index, "explicit")], prompts[(partner_index, "explicit")]
        )
        assert expectation == TextExpectation(word, present=True)
        assert judge_reading(reading, expectation)


def test_the_png_encoder_round_trips_any_pixels() -> None:
    rng = np.random.default_rng(0)
    flat = np.full((40, 30, 3), 200, dtype=np.uint8)
    noise = rng.integers(0, 256, (17, 23, 3), dtype=np.uint8)
    blocks = np.repeat(rng.integers(0, 3, (9, 1, 3), dtype=np.uint8) * 90, 300, axis=1)
    for pixels in (flat, noise, blocks, np.zeros((1, 1, 3), dtype=np.uint8)):
        decoded = np.asarray(Image.open(io.BytesIO(encode_png(pixels))).convert("RGB"))
        assert np.array_equal(decoded, pixels)
    for n in (0, 1, 2, 3, 4, 258, 259, 260, 261, 1000):
        data = b"\x07" * n + bytes(range(256))
        assert zlib.decompress(deflate_runs(data)) == data


def test_the_font_and_its_licence_ship_inside_the_package() -> None:
    assert FONT_FILE.is_file() and FONT_FILE.read_bytes()[:4] == b"\x00\x01\x00\x00"
    licence = (FONT_FILE.parent / "LICENSE-DejaVu.txt").read_text()
    assert "Bitstream" in licence and "Permission is hereby granted" in licence


def test_the_verb_writes_nothing_where_it_was_not_asked_and_refuses_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    assert main(["scenes", "build", "--out", str(out), "--per-category", "1"]) == 2
    assert "not a scene set" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]

    file = tmp_path / "file"
    file.write_text("x")
    assert main(["scenes", "build", "--out", str(file)]) == 2
    assert file.read_text() == "x"
    with pytest.raises(UserError, match="categor"):
        run_scenes(ScenesOptions(out=tmp_path / "x", categories=("zz",)))
    assert not (tmp_path / "x").exists()
    for argv in (["--level", "4"], ["--size", "64"], ["--per-category", "0"]):
        proc = subprocess.run(
            [sys.executable, "-m", "amvicc.scenes", "build", "--out", str(tmp_path / "y"), *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "y").exists()


def test_rebuilding_a_smaller_set_replaces_the_earlier_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "scenes"
    assert main(["scenes", "build", "--out", str(out), "--per-category", "2"]) == 0
    assert "wrote 36 images" in capsys.readouterr().out
    assert main(["scenes", "build", "--out", str(out), "--per-category", "1"]) == 0
    assert len(list((out / "images").iterdir())) == 18
    assert len(_manifest(out)) == 18


@pytest.mark.slow
def test_answer_and_report_run_on_a_scene_set_unchanged(
    tmp_path: Path, isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = tmp_path / "scenes"
    store = tmp_path / "ws"
    assert main(["scenes", "build", "--out", str(scenes), "--per-category", "1"]) == 0
    catalogue = str(scenes / "catalogue.csv")
    answer = ["answer", "--model", "tiny-llava", "--catalogue", catalogue]
    answer += ["--images", str(scenes / "images"), "--store", str(store), "-q"]
    assert main(answer) == 0
    capsys.readouterr()
    report = ["report", "--store", str(store), "--catalogue", catalogue]
    assert main([*report, "--format", "csv", "--bootstrap", "0", "-q"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].startswith("model,modality,category,metric,value,correct,total")
    vlm_rows = [r.split(",") for r in rows[1:] if r.startswith("tiny-llava,vlm,")]
    categories = {r[2] for r in vlm_rows}
    assert {c.code for c in CATEGORIES} <= categories
    individual = [r for r in vlm_rows if r[3] == "individual" and r[2] == "qc"]
    assert individual and individual[0][6] == "2"  # the pair's two scenes, nothing from MMVP
    assert main([*report, "-o", str(tmp_path / "report.html"), "--bootstrap", "0", "-q"]) == 0
    assert "catalogue.csv" in (tmp_path / "report.html").read_text()


@pytest.mark.slow
def test_image_models_are_asked_for_the_same_scenes_and_judged_by_ocr(
    tmp_path: Path, isolated_environment: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenes = tmp_path / "scenes"
    store = str(tmp_path / "ws")
    assert main(["scenes", "build", "--out", str(scenes), "--per-category", "1"]) == 0
    catalogue = ["--catalogue", str(scenes / "catalogue.csv"), "--store", store]
    generate = ["generate", "--model", "tiny-sd3", "--run", "sd", "--categories", "tx"]
    assert main([*generate, "--limit", "2", *catalogue, "-q"]) == 0
    capsys.readouterr()
    assert main(["judge", "--run", "sd", "--method", "ocr", *catalogue]) == 0
    out = capsys.readouterr().out
    # The Text pair's explicit prompt quotes its word, so the OCR judge can judge the image.
    assert "1 image(s) judged" in out, out
