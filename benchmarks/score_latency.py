"""How long a rater waits between a verdict and the next image, with 10,000 images stored.

Builds a workspace mid-study (10,000 images, half of them already rated by three raters),
starts the scoring app in-process, signs in with a real Chromium and presses the verdict key
again and again. ``next_item_ms`` is the median time from the key press to the next image
being shown and decoded, measured in the page (what the rater waits for). Side by side:

- ``handler_ms``: the server's share, in-process (commit the verdict, find the next image,
  render the page parts);
- the same two numbers with 100 images, and their ratio: the cost of a click does not grow
  with the number of images.

Target: ``next_item_ms`` <= 200. Needs Debian's ``chromium`` (and the pip ``playwright``).

    python benchmarks/score_latency.py [--items 10000] [--verdicts 40]
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("NO_PROXY", "127.0.0.1,localhost")
os.environ.setdefault("no_proxy", "127.0.0.1,localhost")

import numpy as np
from PIL import Image
from playwright.sync_api import sync_playwright

from amvicc.catalogue import load_catalogue
from amvicc.score.app import ScoringApp
from amvicc.score.desk import ScoringDesk
from amvicc.score.server import serve
from amvicc.store import ImageRecord, RunSpec, Store, VerdictRecord, human_source, new_id

TARGET_MS = 200.0
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Runs in the page: press a key, resolve when the next image is in place and decoded.
PRESS_AND_TIME = """async (key) => {
  const shown = () => document.querySelector('#rate-details [data-item]').dataset.item;
  const before = shown();
  const start = performance.now();
  document.dispatchEvent(new KeyboardEvent('keydown', {key: key, bubbles: true}));
  const image = await new Promise((resolve) => {
    const check = () => {
      const now = shown();
      const img = document.querySelector('#rate-image [data-item="' + now + '"] img');
      if (now !== before && img) resolve(img); else requestAnimationFrame(check);
    };
    check();
  });
  await image.decode();
  return performance.now() - start;
}"""


def realistic_png(seed: int, size: int = 1024) -> bytes:
    """A photo-like PNG (smooth gradients plus sensor-like noise), about as large as a
    generated 1024x1024 image."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size] / size
    base = np.stack([x * 200, y * 180, (x + y) * 90], axis=-1)
    noise = rng.normal(0, 6, (size, size, 3))
    pixels = np.clip(base + noise + 30, 0, 255).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def build_workspace(root: Path, items: int, files: list[bytes]) -> Store:
    """A workspace with ``items`` image rows (cycling over a few real files), half rated."""
    store = Store(root)
    catalogue = load_catalogue()
    prompts = catalogue.prompts()
    run = store.start_run(
        RunSpec(
            stage="generate",
            model="bench-model",
            outputs={"items": items},
            catalogue_sha256=catalogue.sha256,
        )
    )
    paths = []
    for number, data in enumerate(files):
        paths.append(f"images/bench/{number}.png")
        store.write_file(paths[-1], data)
    records = [
        ImageRecord(
            image_id=new_id(),
            run_id=run.run_id,
            config_key=run.config_key,
            question_index=prompts[n % len(prompts)].question.index,
            prompt_kind=prompts[n % len(prompts)].kind,
            sample=n // len(prompts),
            prompt=prompts[n % len(prompts)].text,
            seed=n,
            status="ok",
            path=paths[n % len(paths)],
        )
        for n in range(items)
    ]
    store.add_images(records)
    values = ("correct", "incorrect", "cant_tell")
    store.add_verdicts(
        VerdictRecord(human_source(f"earlier{n % 3}"), values[n % 3], image_id=record.image_id)
        for n, record in enumerate(records[: items // 2])
    )
    store.finish_run(run.run_id, "finished")
    return store


def measure(browser: object, items: int, verdicts: int, files: list[bytes]) -> tuple[float, float]:
    """Median in-process handler and in-browser key-to-next-image milliseconds."""
    with tempfile.TemporaryDirectory() as folder:
        store = build_workspace(Path(folder) / "ws", items, files)
        desk = ScoringDesk(store, load_catalogue(), raters_per_item=2)
        app = ScoringApp(desk, login=False)
        subject = desk.resume("rate", "local")
        handler = []
        for _ in range(verdicts):
            started = time.perf_counter()
            subject = app.decide("rate", "correct", "local", subject, None, None)[0]
            handler.append((time.perf_counter() - started) * 1000)

        server = serve(desk, port=None, quiet=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})  # type: ignore[attr-defined]
            page.goto(server.url)
            page.fill("#rater-name textarea, #rater-name input", "bench")
            page.click("#start")
            page.wait_for_selector("#rate-details [data-item]")
            page.evaluate(PRESS_AND_TIME, "1")  # warm-up
            waits = [page.evaluate(PRESS_AND_TIME, "1") for _ in range(verdicts)]
            page.close()
        finally:
            server.close()
            store.close()
    return statistics.median(handler), statistics.median(waits)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--verdicts", type=int, default=40)
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("needs Debian's chromium: apt-get install chromium", file=sys.stderr)
        return 2
    files = [realistic_png(seed) for seed in range(4)]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            small_handler, small_wait = measure(browser, 100, args.verdicts, files)
            handler, wait = measure(browser, args.items, args.verdicts, files)
        finally:
            browser.close()
    print(f"items: {args.items}")
    print(f"image_bytes: {statistics.mean(len(f) for f in files):.0f}")
    print(f"handler_ms: {handler:.1f}")
    print(f"next_item_ms: {wait:.1f}")
    print(f"handler_ms_100_items: {small_handler:.1f}")
    print(f"next_item_ms_100_items: {small_wait:.1f}")
    print(f"ratio_{args.items}_vs_100: {wait / small_wait:.2f}")
    print(f"target_ms: {TARGET_MS:.0f} ({'met' if wait <= TARGET_MS else 'MISSED'})")
    return 0 if wait <= TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
