"""Keep diffusers' and transformers' chatter out of amvicc's output unless asked for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def quiet_libraries(verbose: int) -> Iterator[None]:
    """Silence diffusers' and transformers' warnings and progress bars unless ``verbose``.

    Their warnings (prompt truncation, optional torchvision) repeat for every batch and their
    bars (one per component loaded or saved) bury amvicc's own; ``-v`` shows them. Hugging Face
    download bars are left alone: a first download takes minutes.
    """
    if verbose:
        yield
        return
    from diffusers.utils import logging as diffusers_logging
    from transformers.utils import logging as transformers_logging

    libraries = (diffusers_logging, transformers_logging)
    saved = [(lib.get_verbosity(), lib.is_progress_bar_enabled()) for lib in libraries]
    for lib in libraries:
        lib.set_verbosity_error()
        lib.disable_progress_bar()
    try:
        yield
    finally:
        for lib, (verbosity, bars) in zip(libraries, saved, strict=True):
            lib.set_verbosity(verbosity)
            if bars:
                lib.enable_progress_bar()
