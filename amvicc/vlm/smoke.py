"""``tiny-llava``: a LLaVA-style smoke-test VLM with random weights, built offline.

A CLIP vision tower and a tiny Llama language model joined by LLaVA's projector, with a
word-level tokenizer and a CLIP image processor made from fixed settings — nothing comes from
the Hugging Face hub. It is built once into ``cache_dir("smoke", "tiny-llava")`` and then
loaded like any downloaded model (``from_pretrained``), so tests and the offline demo exercise
the real local path: processor, chat template, ``generate()``. Its answers are noise: every run
of it is stored with ``smoke=True`` and labelled a smoke-test model.

The build is deterministic (fixed seed, fixed vocabulary), so two machines build the same
weights and give the same answers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from amvicc.api import ApiSettings
from amvicc.resources import build_folder_once, cache_dir
from amvicc.vlm.base import VLM, LocalSettings

# Bump when the recipe changes: a new version builds into a new folder.
TINY_LLAVA_VERSION = "1"
_DONE = "BUILD_COMPLETE"

IMAGE_SIZE = 32
PATCH_SIZE = 8
_SPECIAL = ["<pad>", "<s>", "</s>", "<unk>", "<image>"]
# Words of MMVP-style answers, so the random model writes answer-like noise.
_WORDS = [
    "a",
    "b",
    "(",
    ")",
    ".",
    ",",
    ":",
    "!",
    "?",
    "yes",
    "no",
    "the",
    "answer",
    "is",
    "option",
    "image",
    "it",
    "this",
    "that",
    "of",
    "in",
    "on",
    "to",
    "and",
    "or",
    "open",
    "closed",
    "left",
    "right",
    "up",
    "down",
    "front",
    "back",
    "side",
    "top",
    "bottom",
    "towards",
    "away",
    "from",
    "camera",
    "facing",
    "one",
    "two",
    "three",
    "more",
    "than",
    "single",
    "multiple",
    "red",
    "blue",
    "white",
    "black",
    "green",
    "yellow",
    "dark",
    "light",
    "visible",
    "not",
    "i",
    "think",
    "see",
    "can",
    "there",
    "are",
    "which",
    "correct",
    "incorrect",
    "upward",
    "downward",
    "standing",
    "sitting",
    "raised",
    "lowered",
    "flat",
    "round",
    "thin",
    "long",
    "short",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "12",
]
_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if message['role'] == 'user' %}USER: "
    "{% for part in message['content'] %}"
    "{% if part['type'] == 'image' %}<image>\n{% elif part['type'] == 'text' %}{{ part['text'] }}"
    "{% endif %}{% endfor %}"
    "{% else %} {% for part in message['content'] %}{{ part['text'] }}{% endfor %}</s>"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %} ASSISTANT:{% endif %}"
)


def tiny_llava_path() -> Path:
    """The folder of the built model, building it first if needed (a few seconds, offline)."""
    folder = cache_dir("smoke", "tiny-llava") / f"v{TINY_LLAVA_VERSION}"
    return build_folder_once(folder, build_tiny_llava, complete=_DONE)


def build_tiny_llava(folder: Path) -> None:
    """Save the model, processor and tokenizer into ``folder``, the marker file last."""
    import torch
    import transformers
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    hf: Any = transformers  # its stubs type only part of the API used here
    hf.utils.logging.disable_progress_bar()
    vocab: dict[str, int] = {}
    for token in [*_SPECIAL, *_WORDS]:
        vocab.setdefault(token, len(vocab))
    word_level = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    word_level.pre_tokenizer = pre_tokenizers.Whitespace()
    word_level.decoder = decoders.WordPiece()
    tokenizer = hf.PreTrainedTokenizerFast(
        tokenizer_object=word_level,
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        unk_token="<unk>",
        extra_special_tokens={"image_token": "<image>"},
        model_max_length=512,
    )
    image_processor = hf.CLIPImageProcessorPil(
        size={"shortest_edge": IMAGE_SIZE},
        crop_size={"height": IMAGE_SIZE, "width": IMAGE_SIZE},
    )
    processor = hf.LlavaProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=PATCH_SIZE,
        vision_feature_select_strategy="default",
        chat_template=_CHAT_TEMPLATE,
        num_additional_image_tokens=1,  # CLIP's class token, dropped by the "default" strategy
    )
    vision = hf.CLIPVisionConfig(
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        image_size=IMAGE_SIZE,
        patch_size=PATCH_SIZE,
        projection_dim=32,
    )
    text = hf.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=512,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    config = hf.LlavaConfig(
        vision_config=vision,
        text_config=text,
        image_token_index=vocab["<image>"],
        image_seq_length=(IMAGE_SIZE // PATCH_SIZE) ** 2,
        vision_feature_layer=-1,
    )
    with torch.random.fork_rng(devices=[]):  # fixed weights, the caller's RNG untouched
        torch.manual_seed(0)
        model = hf.LlavaForConditionalGeneration(config).eval()
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    (folder / _DONE).write_text("tiny-llava smoke-test model: random weights\n")


def open_tiny_llava(target: str, name: str, api: ApiSettings, local: LocalSettings) -> VLM:
    """The registry's opener for ``tiny-llava``, built offline on first use."""
    from amvicc.vlm.transformers_vlm import TransformersVLM

    return TransformersVLM.load(str(tiny_llava_path()), local, name=name, smoke=True)
