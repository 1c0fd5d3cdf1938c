"""What every API image back end shares: no local-model options, concurrent requests, one key.

An API back end (OpenAI's images endpoint, chat completions with image output, Stability AI's
REST API) asks for one image per request, at most ``--max-connections`` at a time, and stores
each image the moment it arrives. The per-route modules only say how one request is made and
read; the checks, the event loop and the run record's common fields live here so that the
routes cannot drift apart in durability or in what they refuse.
"""

from __future__ import annotations

import asyncio
import base64
import urllib.request
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

from amvicc.api import ApiSettings
from amvicc.errors import UserError
from amvicc.generate.distributed import ProcessLayout
from amvicc.generate.options import GenerationOptions
from amvicc.generate.plan import ImageJob
from amvicc.generate.sink import ImageSink
from amvicc.provenance import package_versions

if TYPE_CHECKING:
    from PIL import Image

#: Recorded with a run whose provider takes no seed (the report's methods section says so).
SEEDS_NOT_CONTROLLABLE = "not controllable: the provider takes no seed"


class RemoteBackend(ABC):
    """The common part of the API image back ends (see the module docstring).

    Subclasses set ``spec`` (with ``name``), ``api``, ``endpoint``, ``outputs`` and
    ``settings`` in their constructor, after calling this one, and implement :meth:`_run`.

    Args:
        name: the model as the user named it (for messages).
        options: the run's options; local-model options are refused here.
        layout: this process's share of the work.
        refused: further options this route cannot take, flag -> value (None: not given),
            with the advice to print when one is given.
    """

    # Most image APIs take no seed: the derived seed is then not recorded as if it were used.
    seeded = False
    smoke = False
    api: ApiSettings
    endpoint: str
    outputs: dict[str, Any]
    settings: dict[str, Any]

    def __init__(
        self,
        name: str,
        options: GenerationOptions,
        layout: ProcessLayout,
        *,
        refused: dict[str, object] | None = None,
        advice: str = "use --option KEY=VALUE for request parameters",
    ) -> None:
        self.options = options
        self.layout = layout
        local_only: dict[str, object] = {
            "--steps": options.steps,
            "--guidance": options.guidance,
            "--dtype": options.dtype,
            "--revision": options.revision,
            "--offload": options.offload,
            "--compile": options.compile or None,
        }
        given = [flag for flag, value in local_only.items() if value is not None]
        if given:
            raise UserError(
                f"{', '.join(given)} only apply to local models; {name} is an API model ({advice})"
            )
        given = [flag for flag, value in (refused or {}).items() if value is not None]
        if given:
            raise UserError(f"{name} does not take {', '.join(given)} ({advice})")
        self.params: dict[str, Any] = {}

    def load(self) -> None:
        """Check that the key is set before any request is sent.

        Raises:
            UserError: the key's environment variable is empty.
        """
        self.api.api_key()
        self.params = {
            **self.outputs,
            "smoke_test": False,
            "process": f"{self.layout.index}/{self.layout.count}",
            "versions": package_versions(),
        }

    def generate(self, jobs: Sequence[ImageJob], sink: ImageSink, *, batch_size: int) -> None:
        """Request every job's image, at most ``max_connections`` at a time (one image each).

        ``batch_size`` is not used: requests are concurrent rather than batched.
        """
        run_coroutine(self._run(jobs, sink))

    def generate_from(self, feed: JobSource, sink: ImageSink) -> None:
        """Request images for the jobs ``feed`` hands out until it has none left.

        ``feed`` is a shared to-do list (:class:`amvicc.store.ClaimFeed`): concurrent processes
        on one workspace each take jobs as they go, so every image is asked for once. Jobs are
        taken ``max_connections`` at a time, one round of concurrent requests each.
        """
        while True:
            jobs: list[ImageJob] = []
            while len(jobs) < self.api.max_connections and (job := feed.take_one()) is not None:
                jobs.append(job)
            if not jobs:
                return
            run_coroutine(self._run(jobs, sink))

    @abstractmethod
    async def _run(self, jobs: Sequence[ImageJob], sink: ImageSink) -> None:
        """Make every job's image (or record why not) into the sink."""


class JobSource(Protocol):
    """Hands out jobs one at a time (None: no more); :class:`amvicc.store.ClaimFeed` is one."""

    def take_one(self) -> ImageJob | None:
        """The next job, or None."""


def run_coroutine(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run requests to completion from synchronous code, even inside a running event loop.

    Called from async code (a notebook, a web app), the requests get their own loop in a
    thread beside the caller's.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(coroutine)
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coroutine).result()


def decode_image(raw: bytes) -> Image.Image:
    """Encoded image bytes as a loaded PIL image.

    Raises:
        OSError: the bytes are not an image PIL can read.
    """
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(raw))
    image.load()
    return image


async def fetch_image_url(url: str, timeout: float) -> bytes:
    """The bytes behind an image URL: a ``data:`` URL's payload, or a download.

    Raises:
        ValueError: a ``data:`` URL that is not base64.
        OSError: the download failed.
    """
    if url.startswith("data:"):
        header, sep, payload = url.partition(",")
        if not sep or ";base64" not in header:
            raise ValueError("a data URL without base64 content")
        return base64.b64decode(payload, validate=False)
    return await asyncio.to_thread(download, url, timeout)


def download(url: str, timeout: float) -> bytes:
    """Download a URL's body (an image an API links to instead of embedding it)."""
    with urllib.request.urlopen(url, timeout=timeout) as reply:
        data: bytes = reply.read()
    return data
