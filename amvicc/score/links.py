"""Signed image links: the only way the scoring page fetches an image.

A link names the image by its opaque id and carries an HMAC made with a key born with the
server, so a rater can fetch only what the app showed them, and nothing of the workspace
(least of all the database, which names the models) is reachable by guessing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets


class ImageLinks:
    """Signed links to the queues' images: ``amvicc/image/<id>?sig=<hmac>``.

    The key is made when the server starts, so a link only works with the server that handed
    it out (a reloaded page gets fresh ones).
    """

    route = "/amvicc/image/{subject}"

    def __init__(self, key: bytes | None = None) -> None:
        self._key = key or secrets.token_bytes(32)

    def url(self, subject: str) -> str:
        """The page-relative link to a subject's image."""
        return f"amvicc/image/{subject}?sig={self._signature(subject)}"

    def valid(self, subject: str, signature: str) -> bool:
        """Whether a link's signature is one this server made."""
        return hmac.compare_digest(self._signature(subject), signature)

    def _signature(self, subject: str) -> str:
        return hmac.new(self._key, subject.encode(), hashlib.sha256).hexdigest()[:32]
