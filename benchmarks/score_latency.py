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

Many raters at once: ``--raters 8`` raters each sign in through ``gradio_client`` (the app's
API, as the browser's requests) and give verdicts as fast as the app answers, all at once, on
a workspace of ``--items`` images rated by two raters each. ``p95_verdict_ms_8_raters`` is the
95th percentile of the verdict round trip (request to the next image's page parts); target
<= 300 ms. It runs without Chromium. gradio_client builds a TLS context for every request
(about 40 ms of CPU each, even for http://); that is the client's cost, not the app's, and is
off unless ``--client-tls``.

    python benchmarks/score_latency.py [--items 10000] [--verdicts 40] [--raters 8]
    python benchmarks/score_latency.py --only-raters    # only the many-raters case
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import statistics
import sys
import tempfile
import threading
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
RATERS_TARGET_MS = 300.0
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


def measure_raters(
    items: int, raters: int, verdicts: int, files: list[bytes], *, client_tls: bool = False
) -> list[float]:
    """Verdict round trips (ms) of ``raters`` gradio_client sessions rating at once."""
    from gradio_client import Client

    with tempfile.TemporaryDirectory() as folder:
        store = build_workspace(Path(folder) / "ws", items, files)
        desk = ScoringDesk(store, load_catalogue(), raters_per_item=2)
        server = serve(desk, port=None, quiet=True)
        times: list[float] = []
        errors: list[BaseException] = []
        lock = threading.Lock()
        ready = threading.Barrier(raters)

        def rate(number: int) -> None:
            try:
                # gradio_client makes a new HTTP client, with a fresh TLS context that loads
                # the CA bundle (~40 ms of CPU), for every request, even to an http:// URL; a
                # browser does not. TLS plays no part on this loopback http URL, so it is
                # turned off to time the app (--client-tls times the client's default).
                client = Client(server.url, verbose=False, ssl_verify=client_tls)
                client.predict(f"rater{number}", api_name="/sign_in")
                client.predict("", api_name="/rate_correct")  # warm-up, not timed
                ready.wait(timeout=120)
                mine = []
                for _ in range(verdicts):
                    started = time.perf_counter()
                    client.predict("", api_name="/rate_correct")
                    mine.append((time.perf_counter() - started) * 1000)
                with lock:
                    times.extend(mine)
            except BaseException as err:  # reported below
                errors.append(err)

        threads = [threading.Thread(target=rate, args=(n,)) for n in range(raters)]
        try:
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            server.close()
            store.close()
        if errors:
            raise errors[0]
    return times


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--verdicts", type=int, default=40)
    parser.add_argument("--raters", type=int, default=8)
    parser.add_argument("--only-raters", action="store_true", help="only the many-raters case")
    parser.add_argument(
        "--client-tls",
        action="store_true",
        help="keep gradio_client's default TLS setup per request (client cost, not the app's)",
    )
    args = parser.parse_args()
    files = [realistic_png(seed) for seed in range(4)]
    times = measure_raters(
        args.items, args.raters, args.verdicts, files, client_tls=args.client_tls
    )
    p95 = percentile(times, 0.95)
    print(
        f"raters: {args.raters} x {args.verdicts} verdicts on {args.items} images "
        f"(gradio_client, TLS context per request: {'yes' if args.client_tls else 'no'})"
    )
    print(f"median_verdict_ms_{args.raters}_raters: {statistics.median(times):.1f}")
    print(f"p95_verdict_ms_{args.raters}_raters: {p95:.1f}")
    print(
        f"target_p95_ms: {RATERS_TARGET_MS:.0f} ({'met' if p95 <= RATERS_TARGET_MS else 'MISSED'})"
    )
    raters_met = p95 <= RATERS_TARGET_MS
    if args.only_raters:
        return 0 if raters_met else 1
    chromium = shutil.which("chromium")
    if chromium is None:
        print("the browser case needs Debian's chromium: apt-get install chromium", file=sys.stderr)
        return 2
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
    return 0 if wait <= TARGET_MS and raters_met else 1


if __name__ == "__main__":
    sys.exit(main())
