"""Smoke-test models: real diffusers pipelines with tiny random weights, built offline.

``tiny-sd3`` (an MMDiT, :class:`~diffusers.StableDiffusion3Pipeline`) and ``tiny-sdxl`` (a UNet,
:class:`~diffusers.StableDiffusionXLPipeline`) have the same classes, components and call
signature as the real models but a few thousand random weights, so the whole generation path
(tokenizers, text encoders, denoiser, scheduler, VAE, ``from_pretrained``) runs in tests and in
the offline demo in well under a second. Their images are noise: every output is labelled as a
smoke-test result, never a real one.

Each model is built once from configs, with a fixed torch seed so that every machine gets the
same weights (and so the same images), saved under ``cache_dir("smoke", name)`` and from then on
loaded through ``from_pretrained`` like any downloaded model.
"""

from __future__ import annotations

import importlib
import string
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from amvicc.generate.quiet import quiet_libraries
from amvicc.resources import build_folder_once, cache_dir

# Bump when a builder changes: the new weights are built into a new folder and runs made with
# the old ones keep their own configuration key.
RECIPE_VERSION = 1
SEED = 0

SmokeBuilder = Callable[[], Any]
_BUILDERS: dict[str, SmokeBuilder] = {}
_BUILD_LOCK = threading.Lock()


def smoke_builder(name: str) -> Callable[[SmokeBuilder], SmokeBuilder]:
    """Register a function returning a tiny random-weight pipeline as smoke model ``name``."""

    def register(builder: SmokeBuilder) -> SmokeBuilder:
        _BUILDERS[name] = builder
        return builder

    return register


def smoke_model_names() -> tuple[str, ...]:
    """The smoke models that can be built."""
    return tuple(sorted(_BUILDERS))


def smoke_model_id(name: str) -> str:
    """The stable identifier of a smoke model's weights, recorded instead of a cache path."""
    return f"smoke:{name}@{RECIPE_VERSION}"


def smoke_model_path(name: str) -> Path:
    """The folder holding smoke model ``name`` in diffusers' format, built on first use.

    The model is built in a temporary folder and renamed into place, so a process killed while
    building, or several processes building at once, never leave a half-written model.

    Raises:
        KeyError: no smoke model has this name.
    """
    builder = _BUILDERS[name]

    def save(staging: Path) -> None:
        with quiet_libraries(verbose=0):
            builder().save_pretrained(staging)

    with _BUILD_LOCK:  # threads of one process build once; processes race safely
        return build_folder_once(
            cache_dir("smoke", name) / f"v{RECIPE_VERSION}", save, complete="model_index.json"
        )


# --- tokenizers built from vocabularies (no download) ----------------------------------------


def _libraries() -> tuple[Any, Any]:
    """The diffusers and transformers modules, untyped (their constructors are not annotated)."""
    import diffusers
    import transformers

    return diffusers, transformers


def clip_tokenizer(model_max_length: int = 77) -> Any:
    """A byte-level CLIP tokenizer without merges: any text tokenizes, one symbol per byte."""
    _, transformers = _libraries()
    # GPT-2's map of the 256 bytes to printable symbols, as CLIP's BPE uses.
    byte_symbols: Any = importlib.import_module(
        "transformers.convert_slow_tokenizer"
    ).bytes_to_unicode
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for suffix in ("", "</w>"):
        for symbol in byte_symbols().values():
            vocab[symbol + suffix] = len(vocab)
    return transformers.CLIPTokenizer(vocab=vocab, merges=[], model_max_length=model_max_length)


def t5_tokenizer(model_max_length: int = 256) -> Any:
    """A character-level T5 (Unigram) tokenizer; characters outside ASCII map to ``<unk>``."""
    _, transformers = _libraries()
    pieces = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -2.0)]
    pieces += [(c, -3.0) for c in string.ascii_letters + string.digits + string.punctuation]
    return transformers.T5Tokenizer(vocab=pieces, extra_ids=0, model_max_length=model_max_length)


def _clip_config(tokenizer: Any) -> Any:
    _, transformers = _libraries()
    return transformers.CLIPTextConfig(
        vocab_size=len(tokenizer),
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        hidden_size=32,
        intermediate_size=37,
        num_attention_heads=4,
        num_hidden_layers=2,
        projection_dim=32,
        max_position_embeddings=77,
    )


def _tiny_vae(**extra: Any) -> Any:
    diffusers, _ = _libraries()
    return diffusers.AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        block_out_channels=(8, 8),
        layers_per_block=1,
        latent_channels=4,
        norm_num_groups=4,
        sample_size=64,
        **extra,
    ).eval()


# --- the models ------------------------------------------------------------------------------


@smoke_builder("tiny-sd3")
def build_tiny_sd3() -> Any:
    """Stable Diffusion 3's pipeline (three text encoders, MMDiT, flow matching), tiny."""
    import torch

    diffusers, transformers = _libraries()
    clip, t5 = clip_tokenizer(), t5_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        clip_config = _clip_config(clip)
        text_encoder = transformers.CLIPTextModelWithProjection(clip_config).eval()
        text_encoder_2 = transformers.CLIPTextModelWithProjection(clip_config).eval()
        t5_config = transformers.T5Config(
            vocab_size=len(t5),
            d_model=64,
            d_ff=64,
            d_kv=16,
            num_layers=1,
            num_heads=4,
            pad_token_id=t5.pad_token_id,
            eos_token_id=t5.eos_token_id,
        )
        text_encoder_3 = transformers.T5EncoderModel(t5_config).eval()
        # As in SD3: the two CLIP embeddings (2 x 32) are padded to the T5 width (64).
        transformer = diffusers.SD3Transformer2DModel(
            sample_size=32,
            patch_size=2,
            in_channels=4,
            num_layers=2,
            attention_head_dim=8,
            num_attention_heads=4,
            joint_attention_dim=64,
            caption_projection_dim=32,
            pooled_projection_dim=64,
            out_channels=4,
            pos_embed_max_size=64,
        ).eval()
        vae = _tiny_vae(
            use_quant_conv=False,
            use_post_quant_conv=False,
            shift_factor=0.0609,
            scaling_factor=1.5035,
        )
    return diffusers.StableDiffusion3Pipeline(
        transformer=transformer,
        scheduler=diffusers.FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=text_encoder,
        tokenizer=clip,
        text_encoder_2=text_encoder_2,
        tokenizer_2=clip,
        text_encoder_3=text_encoder_3,
        tokenizer_3=t5,
    )


@smoke_builder("tiny-sdxl")
def build_tiny_sdxl() -> Any:
    """Stable Diffusion XL's pipeline (two CLIP encoders, UNet with micro-conditioning), tiny."""
    import torch

    diffusers, transformers = _libraries()
    tokenizer = clip_tokenizer()
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(SEED)
        config = _clip_config(tokenizer)
        text_encoder = transformers.CLIPTextModel(config).eval()
        text_encoder_2 = transformers.CLIPTextModelWithProjection(config).eval()
        # SDXL conditions on 6 size numbers (8 dims each) plus the pooled text embedding (32).
        unet = diffusers.UNet2DConditionModel(
            sample_size=32,
            in_channels=4,
            out_channels=4,
            block_out_channels=(8, 16),
            layers_per_block=1,
            down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
            up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
            attention_head_dim=(2, 4),
            use_linear_projection=True,
            addition_embed_type="text_time",
            addition_time_embed_dim=8,
            transformer_layers_per_block=(1, 1),
            projection_class_embeddings_input_dim=6 * 8 + 32,
            cross_attention_dim=64,
            norm_num_groups=4,
        ).eval()
        vae = _tiny_vae()
    scheduler = diffusers.EulerDiscreteScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        steps_offset=1,
        timestep_spacing="leading",
    )
    return diffusers.StableDiffusionXLPipeline(
        vae=vae,
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        tokenizer=tokenizer,
        tokenizer_2=tokenizer,
        unet=unet,
        scheduler=scheduler,
    )
