"""How much does amvicc's answering path cost beside the network work?

A local OpenAI-compatible server (threaded, HTTP/1.1 keep-alive, listen backlog 512) answers
every chat request after L = 50 ms. The same N = 300 image questions (224x224 JPEGs) are sent
with concurrency C = 32, as whole processes, alternating over 3 rounds:

  (a) ``python -m amvicc.answer`` exactly as a user runs it: fresh workspace, image checks and
      copies, every reply stored verbatim, grading, progress bar;
  (b) a minimal reference client: ``AsyncOpenAI`` + ``asyncio.Semaphore(32)``, the same
      messages, nothing stored.

Prints both medians, the ideal N*L/C, and last ``vs_minimal_client: X`` (median a / median b;
target <= 1.3).

    python benchmarks/answer_throughput.py
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

N = 300
LATENCY = 0.05
CONCURRENCY = 32
ROUNDS = 3
IMAGE_SIZE = 224

MINIMAL_CLIENT = r"""
import asyncio, base64, json, sys
from openai import AsyncOpenAI

async def main(manifest, url):
    client = AsyncOpenAI(base_url=url, api_key="EMPTY")
    semaphore = asyncio.Semaphore(32)
    items = json.load(open(manifest))

    async def ask(item):
        async with semaphore:
            data = open(item["image"], "rb").read()
            url = "data:image/jpeg;base64," + base64.b64encode(data).decode()
            content = [
                {"type": "image_url", "image_url": {"url": url}},
                {"type": "text", "text": item["prompt"]},
            ]
            reply = await client.chat.completions.create(
                model="fake-vlm",
                messages=[{"role": "user", "content": content}],
                temperature=0.0,
                max_tokens=512,
                seed=item["seed"],
            )
            return reply.choices[0].message.content

    replies = await asyncio.gather(*(ask(item) for item in items))
    assert len(replies) == len(items)
    await client.close()

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def make_images(folder: Path) -> None:
    """N photo-like 224x224 JPEGs (smooth gradients plus noise, ~20 KB each)."""
    import numpy as np
    from PIL import Image

    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    ramp = np.linspace(0, 255, IMAGE_SIZE)
    for index in range(1, N + 1):
        base = np.stack(
            [
                np.add.outer(ramp, ramp) / 2,
                np.tile(ramp, (IMAGE_SIZE, 1)),
                np.full((IMAGE_SIZE,) * 2, index % 256),
            ],
            axis=-1,
        )
        noisy = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype("uint8")
        Image.fromarray(noisy).save(folder / f"{index}.jpg", quality=85)


def write_manifest(images: Path, path: Path) -> None:
    """The minimal client's work: the same images, prompts and seeds amvicc sends."""
    from amvicc.catalogue import load_catalogue
    from amvicc.provenance import derive_seed
    from amvicc.vlm.prompting import ANSWER_TEMPLATE, load_template

    template = load_template(None, default=ANSWER_TEMPLATE)
    items = [
        {
            "image": str(images / f"{q.index}.jpg"),
            "prompt": template.render(question=q),
            "seed": derive_seed(0, q.index, "mmvp", 0) % 2**31,
        }
        for q in load_catalogue().questions[:N]
    ]
    path.write_text(json.dumps(items))


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system) of one whole process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    stderr = process.stderr.read()  # drained while it runs: a full pipe would block the child
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(command[:3])} failed: {stderr.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    from amvicc.store import Store
    from amvicc.testing.fake_openai import FakeOpenAIServer, last_user_text

    replies = ["(a)", "The answer is (b).", "B. Closed", "I can't tell from this image."]

    def chat(request: dict[str, object]) -> str:
        return replies[len(last_user_text(request)) % len(replies)]

    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeOpenAIServer(chat=chat, latency=LATENCY) as server,
    ):
        root = Path(tmp)
        images = root / "images"
        make_images(images)
        manifest = root / "manifest.json"
        write_manifest(images, manifest)
        client = root / "minimal_client.py"
        client.write_text(MINIMAL_CLIENT)

        amvicc: list[tuple[float, float]] = []
        minimal: list[tuple[float, float]] = []
        for round_ in range(ROUNDS):
            store = root / f"ws{round_}"
            before = len(server.requests)
            amvicc.append(
                timed(
                    [
                        sys.executable, "-m", "amvicc.answer", "--model", "fake-vlm",
                        "--base-url", server.url, "--images", str(images), "--store", str(store),
                        "--max-connections", str(CONCURRENCY),
                    ],
                    env,
                )
            )  # fmt: skip
            assert len(server.requests) - before == N, "amvicc did not send every request"
            with Store(store, create=False) as opened:
                assert len(opened.done_response_slots(opened.runs()[0].config_key)) == N
            before = len(server.requests)
            minimal.append(timed([sys.executable, str(client), str(manifest), server.url], env))
            assert len(server.requests) - before == N
            print(
                f"round {round_ + 1}: amvicc {amvicc[-1][0]:.2f} s (cpu {amvicc[-1][1]:.2f} s), "
                f"minimal client {minimal[-1][0]:.2f} s (cpu {minimal[-1][1]:.2f} s)",
                flush=True,
            )

    amvicc_median = statistics.median(wall for wall, _ in amvicc)
    minimal_median = statistics.median(wall for wall, _ in minimal)
    amvicc_cpu = statistics.median(cpu for _, cpu in amvicc)
    minimal_cpu = statistics.median(cpu for _, cpu in minimal)
    print(f"N={N} L={LATENCY * 1000:.0f}ms C={CONCURRENCY}, {ROUNDS} rounds, whole processes")
    print(
        f"amvicc answer (store, grading, progress bar): median {amvicc_median:.2f} s "
        f"(cpu {amvicc_cpu:.2f} s)"
    )
    print(
        f"minimal AsyncOpenAI client:                   median {minimal_median:.2f} s "
        f"(cpu {minimal_cpu:.2f} s)"
    )
    print(f"ideal N*L/C:                                  {N * LATENCY / CONCURRENCY:.2f} s")
    print(f"vs_minimal_client: {amvicc_median / minimal_median:.2f}")


if __name__ == "__main__":
    main()
