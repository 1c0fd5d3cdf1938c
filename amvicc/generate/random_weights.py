"""Real architectures with random weights, built in memory from their published configs.

A folder in diffusers' layout without weights (``model_index.json``, each component's
``config.json``, the scheduler's config) is enough to build the pipeline: every model is
constructed on the device it will run on, in its dtype, with its own random initialisation, so
SD 3.5 Large or FLUX.1 [dev] run at their real size and cost with nothing downloaded or written
to disk (their weights would be 30 GB and more). What it is for: timing the generation path on
a GPU (``benchmarks/gpu_generate.py``), and counting a model's FLOPs on PyTorch's ``meta``
device (:func:`build_components` with ``device="meta"``). The images are noise.

The tokenizers are stand-ins (byte-level CLIP, character-level T5, as the smoke models use):
prompts are padded to the tokenizers' real lengths, so the text encoders do the same work.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amvicc.errors import UserError
from amvicc.generate.smoke import clip_tokenizer, t5_tokenizer

if TYPE_CHECKING:
    import torch

SEED = 0


def configs_digest(folder: Path) -> str:
    """A short hash of every config in the folder: the identity of its random weights."""
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*.json")):
        digest.update(path.relative_to(folder).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def read_index(folder: Path) -> dict[str, Any]:
    """The folder's ``model_index.json``.

    Raises:
        UserError: the folder or the file is missing or not JSON.
    """
    path = folder / "model_index.json"
    try:
        index: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(
            f"{path} cannot be read ({err}); a random-weights folder holds model_index.json "
            "and each component's config.json"
        ) from None
    return index


def build_components(
    folder: Path, *, dtype: torch.dtype, device: torch.device | str, seed: int = SEED
) -> dict[str, Any]:
    """Every component of the pipeline the folder describes, with random weights.

    Args:
        folder: the configs, in diffusers' layout.
        dtype: the weights' dtype.
        device: where the weights are created (``meta`` makes none: shapes only).
        seed: the random initialisation's seed.

    Raises:
        UserError: a config is missing or names a class diffusers or transformers lacks.
    """
    import diffusers
    import transformers

    components: dict[str, Any] = {}
    index = read_index(folder)
    for name, entry in sorted(index.items()):
        if name.startswith("_") or not isinstance(entry, list) or entry[0] is None:
            continue
        library, class_name = entry
        module = diffusers if library == "diffusers" else transformers
        cls = getattr(module, class_name, None)
        if cls is None:
            raise UserError(f"{folder / 'model_index.json'}: {library} has no class {class_name}")
        if "Tokenizer" in class_name:
            components[name] = _tokenizer(folder / name, class_name)
        elif "Scheduler" in class_name:
            components[name] = cls.from_config(_json(folder / name / "scheduler_config.json"))
        else:
            config = _json(folder / name / "config.json")
            with _creating(dtype, device, seed):
                if library == "diffusers":
                    model = cls.from_config(config)
                else:
                    model = cls(cls.config_class.from_dict(_for_stand_in_tokenizers(config)))
            components[name] = model.eval().requires_grad_(False)
    return components


def build_random_pipeline(
    folder: Path, *, dtype: torch.dtype, device: torch.device | str, seed: int = SEED
) -> Any:
    """The pipeline the folder describes, with random weights, on ``device``."""
    import diffusers

    index = read_index(folder)
    pipeline_class = getattr(diffusers, str(index.get("_class_name")), None)
    if pipeline_class is None:
        raise UserError(f"{folder / 'model_index.json'}: no diffusers pipeline class named")
    components = build_components(folder, dtype=dtype, device=device, seed=seed)
    return pipeline_class(**components)


@contextmanager
def _creating(dtype: torch.dtype, device: torch.device | str, seed: int) -> Iterator[None]:
    """Create tensors on ``device`` in ``dtype`` (a large model never exists in float32)."""
    import torch

    previous = torch.get_default_dtype()
    with torch.random.fork_rng(devices=[]), torch.device(device):
        torch.manual_seed(seed)
        torch.set_default_dtype(dtype)
        try:
            yield
        finally:
            torch.set_default_dtype(previous)


def _tokenizer(folder: Path, class_name: str) -> Any:
    length = int(_json(folder / "tokenizer_config.json").get("model_max_length", 77))
    return t5_tokenizer(length) if "T5" in class_name else clip_tokenizer(length)


def _for_stand_in_tokenizers(config: dict[str, Any]) -> dict[str, Any]:
    """A text encoder's config with the stand-in tokenizers' special token ids.

    CLIP's pooled output is read at the end-of-text token; the stand-in's id differs from the
    real vocabulary's (the amount of work does not).
    """
    if config.get("model_type") == "clip_text_model":
        reference = clip_tokenizer()
        return {
            **config,
            "bos_token_id": reference.bos_token_id,
            "eos_token_id": reference.eos_token_id,
            "pad_token_id": reference.pad_token_id,
        }
    return config


def _json(path: Path) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"{path} cannot be read ({err})") from None
    data.pop("_class_name", None)
    data.pop("_diffusers_version", None)
    data.pop("architectures", None)
    return data
