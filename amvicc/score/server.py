"""Serving the scoring page: Gradio's server, bound to this machine unless told otherwise."""

from __future__ import annotations

import ipaddress
import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import gradio as gr
from starlette.middleware import Middleware
from starlette.routing import Route

from amvicc.errors import UserError
from amvicc.score.app import CSS, ScoringApp, keyboard_script
from amvicc.score.desk import ScoringDesk
from amvicc.score.guard import LoginThrottle, RequestGuard
from amvicc.score.links import ImageLinks

log = logging.getLogger(__name__)


@dataclass
class ScoringServer:
    """A running scoring app."""

    blocks: gr.Blocks
    url: str

    def close(self) -> None:
        """Stop the server."""
        self.blocks.close()

    def wait(self) -> None:
        """Serve until interrupted (Ctrl-C), then stop."""
        try:
            while self.blocks.is_running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            pass
        finally:
            self.close()


def serve(
    desk: ScoringDesk,
    *,
    host: str = "127.0.0.1",
    port: int | None = 7860,
    auth: Sequence[tuple[str, str]] | None = None,
    open_browser: bool = False,
    quiet: bool = False,
    throttle: LoginThrottle | None = None,
) -> ScoringServer:
    """Start the scoring app in the background and return it.

    Never opens a share link. Images are served only through :class:`ImageLinks`, behind the
    login when there is one, as pixels only; with a login every route but the login page's
    answers 401 to anyone not signed in; oversized requests, uploads are refused and failed
    logins slowed down (:mod:`amvicc.score.guard`; ``throttle`` sets how).

    Raises:
        UserError: the port is taken.
    """
    if not _is_loopback(host) and not auth:
        log.warning(
            "serving on %s without --auth: anyone who can reach this address can rate; "
            "add --auth USER:PASSWORD or --auth-file FILE",
            host,
        )
    app = ScoringApp(desk, login=bool(auth))
    throttle = throttle or LoginThrottle()
    blocks = app.build()
    with _environment(GRADIO_ANALYTICS_CACHE_FREQUENCY=str(2**31)):
        # Gradio recomputes a summary of every recorded event (a pandas group-by over up to
        # 10,000 rows) after each event, for a monitoring page this app does not serve; with
        # eight raters at once that was most of a verdict's server time.
        blocks.queue(default_concurrency_limit=16)
    try:
        _, url, _ = blocks.launch(
            server_name=host,
            server_port=port,
            share=False,
            auth=list(auth) if auth else None,
            auth_message="Sign in with the name and password the study lead gave you.",
            prevent_thread_lock=True,
            inbrowser=open_browser,
            quiet=quiet,
            show_error=True,
            allowed_paths=[],
            blocked_paths=[str(desk.store.root.resolve())],
            app_kwargs={
                "routes": [Route(ImageLinks.route, app.image_response)],
                "middleware": [Middleware(RequestGuard, throttle=throttle, login=bool(auth))],
                # No route listing: FastAPI's /openapi.json and its pages are switched off.
                "openapi_url": None,
                "docs_url": None,
                "redoc_url": None,
            },
            # The app takes no file from anyone (the guard refuses upload routes too).
            max_file_size=1,
            js=keyboard_script(),
            css=CSS,
            footer_links=[],
            run_history=False,
            enable_monitoring=False,
            mcp_server=False,
            ssr_mode=False,
        )
    except OSError as err:
        raise UserError(f"cannot listen on {host}:{port} ({err}); choose another --port") from None
    return ScoringServer(blocks, url)


@contextmanager
def _environment(**values: str) -> Iterator[None]:
    """Environment variables set for the block (unless the user set them), then restored."""
    saved = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        for name, before in saved.items():
            if before is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = before


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
