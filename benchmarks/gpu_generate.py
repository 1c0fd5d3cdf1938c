"""SD 3.5 Large and FLUX.1 [dev] on a GPU: seconds per image, peak memory, share of bf16 peak.

Both architectures are built from the configs shipped in ``pipelines/random/`` (transformer,
text encoders, VAE, scheduler: the public configs' shapes) with random weights, in bfloat16, on
the GPU: nothing is downloaded. Each image goes through ``amvicc generate``'s own code path
(``make_backend`` + ``run_generate`` with the pipeline files ``pipelines/random/*.yaml``), at
1024x1024, 28 steps with guidance 3.5 (SD 3.5, classifier-free guidance: two transformer passes
per step) or 50 steps (FLUX.1 [dev], guidance-distilled: one pass), eager and with
``--compile`` (the denoiser's repeated blocks under ``torch.compile``).

It prints, per model and mode, seconds per image (after warm-up, compilation included there),
peak GPU memory, and the share of the device's dense bf16 peak the run reaches. FLOPs are
counted from the configs, not estimated: each component runs once on PyTorch's ``meta`` device
under ``torch.utils.flop_counter`` with the shapes one image needs (text encoders, every
transformer step, the VAE decoder). Targets on an H100-class GPU: SD 3.5 Large <= 3.5 s/img
(about half the bf16 peak), FLUX.1 [dev] <= 4.2 s/img compiled.

Without CUDA it prints the FLOPs per image, says why nothing was timed, and exits 0.
``--tiny`` runs the same path on the CPU with the configs shrunk (a check of the script, no
timing worth reading).

    python benchmarks/gpu_generate.py                        # both models, eager and compiled
    python benchmarks/gpu_generate.py --models flux-dev --modes compile --images 5
    python benchmarks/gpu_generate.py --tiny                 # CPU check of the whole path
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
RANDOM = REPO / "pipelines" / "random"

# Dense (no sparsity) bf16 tensor-core peaks, TFLOP/s, by a fragment of the device's name.
PEAK_BF16_TFLOPS: tuple[tuple[str, float], ...] = (
    ("GB200", 2500.0),
    ("B200", 2250.0),
    ("B100", 1750.0),
    ("H200", 989.4),
    ("GH200", 989.4),
    ("H100 NVL", 835.0),
    ("H100 PCIe", 756.0),
    ("H100", 989.4),  # SXM5 (H100 80GB HBM3)
    ("H800", 989.4),
    ("H20", 148.0),
    ("L40S", 362.1),
    ("L40", 181.0),
    ("L4", 121.0),
    ("A100", 312.0),
    ("A800", 312.0),
    ("A10G", 70.0),
    ("A10", 125.0),
    ("RTX 6000 Ada", 364.2),
    ("RTX 4090", 165.2),
    ("RTX 3090", 71.0),
    ("MI300X", 1307.4),
    ("MI250X", 383.0),
)
TARGETS_S = {
    ("sd35-large", "eager"): 3.5,
    ("sd35-large", "compile"): 3.5,
    ("flux-dev", "compile"): 4.2,
}


@dataclass(frozen=True)
class Bench:
    """One model as the benchmark runs it."""

    name: str
    folder: Path
    pipeline_file: Path
    steps: int
    guidance_passes: int  # transformer passes per step (2 with classifier-free guidance)
    size: int = 1024


MODELS = {
    "sd35-large": Bench("sd35-large", RANDOM / "sd35-large", RANDOM / "sd35-large.yaml", 28, 2),
    "flux-dev": Bench("flux-dev", RANDOM / "flux-dev", RANDOM / "flux-dev.yaml", 50, 1),
}


# --- FLOPs from the configs ---------------------------------------------------------------------


def flops_per_image(bench: Bench) -> dict[str, float]:
    """FLOPs of one image by component, counted on the meta device (no memory, no GPU)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from amvicc.generate.random_weights import build_components

    parts = build_components(bench.folder, dtype=torch.bfloat16, device="meta")
    meta = torch.device("meta")

    def tensor(*shape: int, dtype: Any = torch.bfloat16) -> Any:
        return torch.empty(*shape, device=meta, dtype=dtype)

    def count(call: Any) -> float:
        with FlopCounterMode(display=False) as counter, torch.no_grad():
            call()
        return float(counter.get_total_flops())

    vae = parts["vae"]
    factor = 2 ** (len(vae.config.block_out_channels) - 1)
    latent = bench.size // factor
    channels = vae.config.latent_channels
    out: dict[str, float] = {}
    for name, part in parts.items():
        if not name.startswith("text_encoder"):
            continue
        tokenizer = parts[name.replace("text_encoder", "tokenizer")]
        ids = torch.zeros(1, tokenizer.model_max_length, dtype=torch.long, device=meta)
        # With classifier-free guidance the negative prompt is encoded too.
        out[name] = bench.guidance_passes * count(
            lambda p=part, i=ids: p(i, output_hidden_states=True)
        )
    transformer = parts["transformer"]
    batch = bench.guidance_passes
    if "Flux" in type(transformer).__name__:
        text = parts["tokenizer_2"].model_max_length
        tokens = (latent // 2) ** 2
        step = count(
            lambda: transformer(
                hidden_states=tensor(batch, tokens, transformer.config.in_channels),
                encoder_hidden_states=tensor(batch, text, transformer.config.joint_attention_dim),
                pooled_projections=tensor(batch, transformer.config.pooled_projection_dim),
                timestep=tensor(batch),
                img_ids=tensor(tokens, 3),
                txt_ids=tensor(text, 3),
                guidance=tensor(batch),
            )
        )
    else:
        text = 77 + parts["tokenizer_3"].model_max_length
        step = count(
            lambda: transformer(
                hidden_states=tensor(batch, channels, latent, latent),
                encoder_hidden_states=tensor(batch, text, transformer.config.joint_attention_dim),
                pooled_projections=tensor(batch, transformer.config.pooled_projection_dim),
                timestep=tensor(batch),
            )
        )
    out["transformer"] = bench.steps * step
    out["vae_decode"] = count(lambda: vae.decode(tensor(1, channels, latent, latent)))
    return out


# --- timing through amvicc generate -----------------------------------------------------------


@dataclass(frozen=True)
class Timing:
    seconds_per_image: float
    peak_bytes: int
    images: int


def time_model(bench: Bench, *, compile: bool, images: int, warmup: int, device: str) -> Timing:
    """Seconds per image through ``run_generate``, after ``warmup`` images (and compilation)."""
    import torch

    from amvicc.catalogue import load_catalogue
    from amvicc.generate import GenerationOptions, make_backend, run_generate
    from amvicc.generate.distributed import ProcessLayout
    from amvicc.store import Store

    options = GenerationOptions(
        model=str(bench.pipeline_file),
        steps=bench.steps,
        width=bench.size,
        height=bench.size,
        device=device,
        compile=compile,
        progress=False,
    )
    catalogue = load_catalogue()
    cuda = device.startswith("cuda")
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "ws") as store:
        backend = make_backend(options, ProcessLayout())
        backend.load()
        run_generate(
            replace(options, limit=warmup), store=store, catalogue=catalogue, backend=backend
        )
        if cuda:
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
        summary = run_generate(
            replace(options, limit=warmup + images),
            store=store,
            catalogue=catalogue,
            backend=backend,
        )
        if cuda:
            torch.cuda.synchronize()
        peak = torch.cuda.max_memory_allocated() if cuda else 0
        made = summary.made
        seconds = summary.generation_seconds / max(made, 1)
        del backend
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return Timing(seconds, peak, made)


def device_peak(name: str, override: float | None) -> float | None:
    """The device's dense bf16 peak in FLOP/s (None when unknown)."""
    if override:
        return override * 1e12
    for fragment, tflops in PEAK_BF16_TFLOPS:
        if fragment.lower() in name.lower():
            return tflops * 1e12
    return None


# --- --tiny: the same path on the CPU with shrunk configs --------------------------------------

TINY: dict[str, dict[str, Any]] = {
    "SD3Transformer2DModel": {
        "num_layers": 2, "num_attention_heads": 2, "attention_head_dim": 16,
        "caption_projection_dim": 32, "joint_attention_dim": 64, "pooled_projection_dim": 64,
        "pos_embed_max_size": 32, "sample_size": 32,
    },
    "FluxTransformer2DModel": {
        "num_layers": 1, "num_single_layers": 1, "num_attention_heads": 2,
        "attention_head_dim": 16, "axes_dims_rope": [4, 6, 6], "joint_attention_dim": 64,
        "pooled_projection_dim": 32,
    },
    "clip_text_model": {
        "hidden_size": 32, "intermediate_size": 37, "num_attention_heads": 4,
        "num_hidden_layers": 2, "projection_dim": 32,
    },
    "t5": {"d_model": 64, "d_ff": 64, "d_kv": 16, "num_heads": 4, "num_layers": 1},
    "AutoencoderKL": {"block_out_channels": [8, 8, 8, 8], "layers_per_block": 1, "norm_num_groups": 4},
}  # fmt: skip


def tiny_copy(bench: Bench, into: Path) -> Bench:
    """The model's configs and pipeline file, shrunk to a few thousand weights, in ``into``."""
    folder = into / bench.name
    shutil.copytree(bench.folder, folder)
    for config in folder.rglob("config.json"):
        data = json.loads(config.read_text())
        key = data.get("_class_name") if data.get("_class_name") in TINY else data.get("model_type")
        data.update(TINY.get(str(key), {}))
        config.write_text(json.dumps(data))
    pipeline = (bench.pipeline_file.read_text()).replace(
        f"random: {bench.name}", f"random: {folder}"
    )
    pipeline_file = into / f"{bench.name}.yaml"
    pipeline_file.write_text(pipeline)
    return replace(bench, folder=folder, pipeline_file=pipeline_file, steps=2, size=64)


# --- main -----------------------------------------------------------------------------------


@contextmanager
def _quiet() -> Iterator[None]:
    import logging
    import warnings

    logging.getLogger("amvicc").setLevel(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="sd35-large,flux-dev", help="comma-separated")
    parser.add_argument("--modes", default="eager,compile", help="eager and/or compile")
    parser.add_argument("--images", type=int, default=3, help="timed images per run")
    parser.add_argument("--warmup", type=int, default=1, help="images before timing")
    parser.add_argument("--device", default="cuda", help="default: cuda")
    parser.add_argument("--peak-tflops", type=float, help="the device's dense bf16 peak")
    parser.add_argument("--tiny", action="store_true", help="shrunk configs on the CPU")
    args = parser.parse_args()
    import torch

    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        print(f"unknown model(s) {', '.join(unknown)}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    with _quiet(), tempfile.TemporaryDirectory() as scratch:
        benches = [MODELS[n] for n in names]
        device = "cpu" if args.tiny else args.device
        if args.tiny:
            benches = [tiny_copy(b, Path(scratch)) for b in benches]
        flops = {b.name: flops_per_image(b) for b in benches}
        for bench in benches:
            total = sum(flops[bench.name].values())
            parts = ", ".join(f"{k} {v / 1e12:.2f}" for k, v in flops[bench.name].items())
            print(
                f"{bench.name}: {total / 1e12:.1f} TFLOP per {bench.size}x{bench.size} image, "
                f"{bench.steps} steps ({parts})"
            )
        if device.startswith("cuda") and not torch.cuda.is_available():
            print(
                f"no CUDA device: torch {torch.__version__} sees no GPU here, so nothing was "
                "timed; run this on a CUDA machine (or --tiny to check the path on the CPU)"
            )
            return 0
        name = torch.cuda.get_device_name() if device.startswith("cuda") else "CPU (--tiny)"
        peak = device_peak(name, args.peak_tflops) if not args.tiny else None
        shown = f"{peak / 1e12:.0f} TFLOP/s bf16 dense" if peak else "bf16 peak unknown"
        print(f"device: {name} ({shown})")
        print(
            f"{'model':<11} {'mode':<8} {'s/img':>7} {'peak GiB':>9} {'TFLOP/s':>8} {'of peak':>8}"
        )
        for bench in benches:
            for mode in modes:
                started = time.perf_counter()
                timing = time_model(
                    bench,
                    compile=mode == "compile",
                    images=args.images,
                    warmup=args.warmup,
                    device=device,
                )
                rate = sum(flops[bench.name].values()) / timing.seconds_per_image
                share = f"{rate / peak:.1%}" if peak else "–"
                print(
                    f"{bench.name:<11} {mode:<8} {timing.seconds_per_image:>7.2f} "
                    f"{timing.peak_bytes / 2**30:>9.1f} {rate / 1e12:>8.1f} {share:>8}"
                    f"   ({timing.images} images, {time.perf_counter() - started:.0f} s with "
                    "loading and warm-up)"
                )
                target = TARGETS_S.get((bench.name, mode))
                key = f"{bench.name}_{mode}"
                print(f"{key}_s_per_img: {timing.seconds_per_image:.3f}")
                if target and not args.tiny:
                    verdict = "met" if timing.seconds_per_image <= target else "MISSED"
                    print(f"{key}_target_s: {target} ({verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
