"""Per-image seeds and random generators, independent of batching and sharding.

Each image's seed comes from ``--seed`` and what identifies the image (question index, prompt
kind, sample), and each image gets its own CPU ``torch.Generator``: the starting noise of an
image is then the same whatever the batch it falls in, the process that makes it or the device
it runs on (diffusers draws the noise on the generator's device and moves it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from amvicc.catalogue import PromptKind
from amvicc.provenance import derive_seed

if TYPE_CHECKING:
    import torch


def image_seed(base: int, index: int, kind: PromptKind, sample: int) -> int:
    """The seed of sample ``sample`` of question ``index``'s ``kind`` prompt."""
    return derive_seed(base, index, kind, sample)


def generators(seeds: Sequence[int]) -> list[torch.Generator]:
    """One seeded CPU generator per image, in order."""
    import torch

    return [torch.Generator("cpu").manual_seed(seed) for seed in seeds]
