"""Finding MMVP images: folders, the snapshot layout, Hugging Face datasets, and what is wrong."""

from __future__ import annotations

import io
import random
import sys
from pathlib import Path

import pytest
from PIL import Image

from amvicc.catalogue import format_index_ranges, parse_index_ranges
from amvicc.errors import UserError
from amvicc.testing.mmvp_images import image_bytes, index_in_image, write_mmvp_images
from amvicc.vlm.images import (
    MMVP_IMAGE_KEY,
    folder_images,
    hf_dataset_images,
    with_input_path,
)


def test_format_index_ranges_inverts_parsing() -> None:
    assert format_index_ranges([5, 1, 2, 3, 9, 10, 20], separator=", ") == "1-3, 5, 9-10, 20"
    assert format_index_ranges([]) == ""
    assert parse_index_ranges(format_index_ranges([5, 1, 2, 3, 9, 10, 20])) == {
        1,
        2,
        3,
        5,
        9,
        10,
        20,
    }


def test_folder_with_mixed_suffixes_prefers_jpg(tmp_path: Path) -> None:
    write_mmvp_images(tmp_path, [1, 2], suffix=".jpg")
    write_mmvp_images(tmp_path, [2, 3], suffix=".png")
    (tmp_path / "notes.txt").write_text("not an image")
    (tmp_path / "cover.png").write_bytes(image_bytes(9))
    found = folder_images(tmp_path, [1, 2, 3, 4])
    assert [(i.index, Path(i.origin).name) for i in found.images] == [
        (1, "1.jpg"),
        (2, "2.jpg"),
        (3, "3.png"),
    ]
    assert found.missing == (4,)
    assert all(i.image_key == MMVP_IMAGE_KEY and i.image_id is None for i in found.images)
    assert found.images[0].image.mime == "image/jpeg" and found.images[2].image.mime == "image/png"


def test_unreadable_images_are_reported(tmp_path: Path) -> None:
    write_mmvp_images(tmp_path, [1, 2, 3])
    (tmp_path / "2.png").write_bytes(b"")
    (tmp_path / "3.png").write_bytes(image_bytes(3)[:20])  # truncated
    found = folder_images(tmp_path, [1, 2, 3])
    assert [i.index for i in found.images] == [1]
    assert set(found.unreadable) == {2, 3}
    message = found.problem_message(3)
    assert message.startswith("2 of 3 images") and "unreadable: 2-3" in message


def test_missing_folder_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="does not exist"):
        folder_images(tmp_path / "nope", [1])


def test_input_path_is_content_addressed(tmp_path: Path) -> None:
    write_mmvp_images(tmp_path, [1, 2])
    (tmp_path / "3.png").write_bytes(image_bytes(1))  # the same picture twice
    images = [with_input_path(i) for i in folder_images(tmp_path, [1, 2, 3]).images]
    paths = [i.input_path for i in images]
    assert paths[0] == paths[2] != paths[1]
    assert paths[0] == f"inputs/{images[0].image.sha256}.png"


def hf_imagefolder(folder: Path, indices: list[int]) -> Path:
    """A local dataset in the Hub's MMVP layout; rows come back in file-name order, not index."""
    write_mmvp_images(folder / "MMVP Images", indices, suffix=".png")
    return folder


def test_hf_dataset_reads_the_index_from_file_names(tmp_path: Path) -> None:
    pytest.importorskip("datasets")
    indices = list(range(1, 13))
    random.Random(0).shuffle(indices)
    dataset = hf_imagefolder(tmp_path / "MMVP", indices[:-1])  # one image absent
    found = hf_dataset_images(str(dataset), range(1, 13))
    assert found.missing == (indices[-1],)
    assert [i.index for i in found.images] == sorted(indices[:-1])
    # the image is the one for its index (not the row order, which sorts 1, 10, 11, 2, ...)
    assert all(index_in_image(i.image.data) == i.index for i in found.images)


def test_hf_dataset_offline_is_one_line() -> None:
    pytest.importorskip("datasets")
    with pytest.raises(UserError, match=r"cannot load dataset 'MMVP/MMVP'.*--images DIR"):
        hf_dataset_images("MMVP/MMVP", [1])


def test_hf_dataset_without_datasets_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "datasets", None)  # what an install without it looks like
    with pytest.raises(UserError, match=r"amvicc\[hf-datasets\]"):
        hf_dataset_images("MMVP/MMVP", [1])


def _full_decode_refuses(data: bytes) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except OSError:
        return True
    return False


def test_a_truncated_or_corrupt_jpeg_is_unreadable_though_it_is_checked_at_a_small_scale(
    tmp_path: Path,
) -> None:
    """The 1/8-scale check refuses exactly what decoding the whole image refuses.

    Seeded pixels: libjpeg reads some corrupt scans without complaint (a run of 0xFF can be
    marker fill), so random noise made this test refuse one image in eight at either scale.
    """
    import numpy as np

    corrupt_files = {}
    for seed in range(6):
        pixels = np.random.default_rng(seed).integers(0, 256, (256, 256, 3), dtype=np.uint8)
        buffer = io.BytesIO()
        Image.fromarray(pixels).save(buffer, format="JPEG")
        whole = buffer.getvalue()
        corrupt = bytearray(whole)
        corrupt[len(whole) // 2 : len(whole) // 2 + 200] = b"\xff" * 200
        corrupt_files[10 + seed] = bytes(corrupt)
        (tmp_path / f"{10 + seed}.jpg").write_bytes(bytes(corrupt))
        if seed == 0:
            (tmp_path / "1.jpg").write_bytes(whole)
            (tmp_path / "2.jpg").write_bytes(whole[: len(whole) // 2])
            (tmp_path / "3.jpg").write_bytes(whole[:-10])  # only the scan's last bytes missing
    found = folder_images(tmp_path, [1, 2, 3, *corrupt_files])
    assert 1 in [i.index for i in found.images]
    assert "truncated" in found.unreadable[2] and "truncated" in found.unreadable[3]
    refused = {index for index, data in corrupt_files.items() if _full_decode_refuses(data)}
    assert refused, "some corrupt scan is refused by a full decode"
    assert set(found.unreadable) - {2, 3} == refused
