"""The HTML report in a real Chromium (Debian's chromium, pip playwright): what a reader sees.

A demo-sized workspace — three image models with images on one pair of every category, a
VLM that saw MMVP's images, a smoke-test image model — opened at 1400 × 900: the first screen
shows both modalities' model × category matrices and the cross-modal line without scrolling;
the pair explorer filters by category. Each test keeps a screenshot of what it checked (the
path is printed; ``AMVICC_SCREENSHOTS=DIR`` keeps them there instead of the test's folder).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from amvicc.catalogue import load_catalogue
from amvicc.report import build_report, render_report

if TYPE_CHECKING:
    from conftest import Workspace

CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
IMAGE_MODELS = ("DALL·E 3", "Gemini 2.5 Flash Image", "SD 3.5 Large")
VIEWPORT = {"width": 1400, "height": 900}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="needs Debian's chromium (apt-get install chromium)"
    ),
]


def _pair_indices() -> list[int]:
    """The first pair of every category: 18 questions."""
    catalogue = load_catalogue()
    chosen = []
    for category in catalogue.categories():
        members = next(iter(catalogue.select(categories=[category]).pairs().values()))
        chosen += [q.index for q in members]
    return sorted(chosen)


@pytest.fixture
def report_file(workspace: Workspace, tmp_path: Path) -> Path:
    catalogue = load_catalogue()
    indices = _pair_indices()
    for number, model in enumerate(IMAGE_MODELS):
        run = workspace.igm(model)
        for position, index in enumerate(indices):
            for kind in ("implicit", "explicit"):
                right = (position + number) % 3 != 0 or kind == "implicit"
                colour = (40 * number, 120 if right else 30, 20 * (position % 10))
                image = workspace.image(run, index, kind, data=workspace.png(colour))
                workspace.rate(image, ("human:ann", "correct" if right else "incorrect"))
    vlm = workspace.vlm("openai:gpt-4o")
    for position, index in enumerate(indices):
        copy = f"inputs/{index}.png"  # the MMVP image the VLM was shown, as answer stores it
        workspace.store.write_file(copy, workspace.png((9, 9, 9 * index % 255)))
        answer = catalogue.question(index).answer
        chosen = answer if position % 4 else ("b" if answer == "a" else "a")
        response = workspace.response(vlm, index, text=f"I would say ({chosen}).", input_path=copy)
        workspace.decide(response, ("extractor", chosen))
    smoke = workspace.igm("tiny-sd3", smoke=True)
    for index in indices[:4]:
        workspace.graded_image(smoke, index, "explicit", ("human:ann", "incorrect"))
    html = render_report(build_report(workspace.store, indices=frozenset(indices)), "html")
    path = tmp_path / "report.html"
    path.write_text(html, encoding="utf-8")
    return path


def _screenshots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("AMVICC_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _open(playwright: Any, report: Path) -> tuple[Any, Any]:
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    page = browser.new_context(viewport=VIEWPORT).new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    page.goto(report.as_uri())
    return browser, page


def test_the_first_screen_shows_both_matrices_and_the_cross_modal_line(
    report_file: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    shot = _screenshots(tmp_path) / "first-screen.png"
    with sync_playwright() as playwright:
        browser, page = _open(playwright, report_file)
        try:
            matrices = page.locator("#glance table.glance")
            assert matrices.count() == 2  # image models, then VLMs
            for position in range(2):
                box = matrices.nth(position).bounding_box()
                assert box is not None
                assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORT["height"], box
                assert box["x"] + box["width"] <= VIEWPORT["width"], box  # all categories
            line = page.locator("#glance .crossline")
            line_box = line.bounding_box()
            assert line_box is not None and line_box["y"] + line_box["height"] <= VIEWPORT["height"]
            assert "Item level" in line.inner_text()
            first = matrices.nth(0).inner_text()
            assert all(model in first for model in IMAGE_MODELS) and "tiny-sd3" not in first
            # failure modes are marked by a symbol as well as by colour
            failing = page.locator("#glance .v.fail").first
            assert failing.inner_text().startswith("▼")
            # the table of contents stays in view, and a folded section opens from it
            page.mouse.wheel(0, 3000)
            toc = page.locator("#toc").bounding_box()
            assert toc is not None and toc["y"] <= 1
            page.click("#toc a[href='#explorer']")
            assert page.locator("#explorer > details").get_attribute("open") is not None
            page.goto(report_file.as_uri())
            page.screenshot(path=str(shot))
            assert page.errors == []
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def test_the_explorer_filters_pairs_by_category_model_and_outcome(
    report_file: Path, tmp_path: Path
) -> None:
    from playwright.sync_api import sync_playwright

    shot = _screenshots(tmp_path) / "explorer-text.png"
    with sync_playwright() as playwright:
        browser, page = _open(playwright, report_file)
        try:
            page.goto(report_file.as_uri() + "#explorer")
            items = page.locator("#explorer [data-category]")
            assert items.count() == 9  # one pair per category, all shown
            options = page.locator("#explorer-category option").all_inner_texts()
            assert "tx · Text" in options and "qc · Quantity and Count" in options
            page.select_option("#explorer-category", "tx")
            assert items.count() >= 1
            assert set(items.evaluate_all("els => els.map(e => e.dataset.category)")) == {"tx"}
            text = items.first.inner_text()
            assert "openai:gpt-4o" in text and "I would say" in text  # the VLM's reply
            assert "human:ann: correct" in text or "human:ann: incorrect" in text
            images = items.first.locator("img")
            assert images.count() == 2 + 2 * 2 * len(IMAGE_MODELS)  # MMVP's two, then each model's
            assert "tiny-sd3" not in page.locator("#explorer").inner_text()
            page.locator("#explorer .filters").scroll_into_view_if_needed()
            page.screenshot(path=str(shot))
            # the model and outcome filters
            page.select_option("#explorer-category", "")
            page.select_option("#explorer-outcome", "igm-only")
            for pair in items.all():
                assert "image models pass" in pair.inner_text() and "VLMs fail" in pair.inner_text()
            page.select_option("#explorer-outcome", "")
            page.select_option("#explorer-model", label="openai:gpt-4o (vlm)")
            assert "DALL·E 3" not in page.locator("#explorer-pairs").inner_text()
            assert page.errors == []
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
