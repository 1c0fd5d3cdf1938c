"""The images a VLM is asked about: MMVP's own, or images a generation run made.

MMVP's images come from a folder (``<index>.jpg|png``, or the Hugging Face snapshot layout
``MMVP Images/<index>.jpg`` beside ``Questions.csv``) or from the Hugging Face dataset through
``datasets``. Every image is read and checked before any request is sent, so missing and
unreadable ones are listed at once instead of failing one by one in the middle of a run.

An image file is read only when it is a regular file, up to a byte cap
(:func:`amvicc.vlm.base.read_image_file`): a FIFO or a link to a device is unreadable, not a
hang. Only names that are a plain ASCII number (``12.jpg``) are the catalogue's images; other
image files (``².png``: a digit to Python, not an index) are listed as strays.

A model is sent an image as a viewer shows it. Most files are sent byte for byte; a photo whose
EXIF orientation turns it (a phone's portrait JPEG) is turned upright once, when read, and sent
as a PNG of those pixels (:func:`upright`), and its replies record it. Otherwise a model that
reads EXIF (as browsers do) and one that does not (most processors) would see different
images, and a perturbed copy, always written upright, would disagree with the clean run.
"""

from __future__ import annotations

import io
import re
import warnings
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from pathlib import Path

from amvicc.catalogue import PromptKind, format_index_ranges
from amvicc.errors import UserError
from amvicc.extras import require_extra
from amvicc.files import UnreadableFile
from amvicc.store import Store
from amvicc.vlm.base import EncodedImage, read_image_file

MMVP_IMAGE_KEY = "mmvp"
SNAPSHOT_FOLDER = "MMVP Images"
# Preferred first when one index has several files.
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")
_INDEX_NAME = re.compile(r"[0-9]+")
_ORIENTATION = 0x0112  # the EXIF tag


@dataclass(frozen=True)
class SourceImage:
    """One image and the question it belongs to.

    Attributes:
        index: the MMVP question index.
        image_key: ``mmvp`` for the benchmark's image, else the generated image's id.
        image: the encoded bytes.
        origin: where it was read from (for messages).
        image_id: the generated image's id (None for MMVP images).
        input_path: the copy inside the workspace, once stored.
        prompt_kind: for generated images, the prompt they were made from.
        converted: how the file was changed before sending (None: sent byte for byte).
    """

    index: int
    image_key: str
    image: EncodedImage
    origin: str
    image_id: str | None = None
    input_path: str | None = None
    prompt_kind: PromptKind | None = None
    converted: str | None = None


@dataclass(frozen=True)
class ImageSet:
    """The images found for the asked questions, and those that could not be used."""

    images: tuple[SourceImage, ...]
    missing: tuple[int, ...] = ()
    unreadable: dict[int, str] = field(default_factory=dict)
    source: str = ""
    strays: tuple[str, ...] = ()

    def stray_message(self) -> str:
        """One line naming the image files that are no image of the catalogue (or "")."""
        if not self.strays:
            return ""
        shown = ", ".join(repr(name) for name in self.strays[:5])
        more = f" and {len(self.strays) - 5} more" if len(self.strays) > 5 else ""
        return (
            f"{len(self.strays)} file(s) in {self.source} are not images of the catalogue "
            f"(not <index>.jpg|png with a plain number): {shown}{more}; they are left out"
        )

    @property
    def problems(self) -> int:
        """How many questions have no usable image."""
        return len(self.missing) + len(self.unreadable)

    def problem_message(self, asked: int) -> str:
        """One paragraph: how many images are unusable and which indices."""
        parts = []
        if self.missing:
            parts.append(f"missing: {format_index_ranges(self.missing, separator=', ')}")
        if self.unreadable:
            first = next(iter(self.unreadable.values()))
            parts.append(
                f"unreadable: {format_index_ranges(self.unreadable, separator=', ')} (e.g. {first})"
            )
        return f"{self.problems} of {asked} images in {self.source} cannot be used; " + "; ".join(
            parts
        )


def check_image(data: bytes) -> str | None:
    """Why encoded bytes are not a usable image, or None when they are.

    The image is decoded in full, as a model's processor will: a truncated file that Pillow
    cannot finish decoding is unusable even though its header reads. A JPEG is decoded at an
    eighth of its size (libjpeg's scaled decoding): every byte of its compressed data is still
    read and decoded, so a truncated or corrupt file fails just the same, at about half the
    cost of the full-size pixels a local model decodes again anyway. A header claiming more
    pixels than Pillow's decompression-bomb limit (``Image.MAX_IMAGE_PIXELS``, about 89
    megapixels) is refused before any pixel is decoded.
    """
    from PIL import Image, UnidentifiedImageError

    if not data:
        return "empty file"
    try:
        with warnings.catch_warnings():
            # Between one and two times the limit Pillow only warns; a benchmark image is far
            # smaller, so a header that large is a broken or hostile file either way.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image.verify()
            with Image.open(io.BytesIO(data)) as image:
                image.draft(None, (1, 1))  # the smallest scale JPEG has; a no-op for others
                image.load()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        return f"too large to decode safely ({str(err).split('.')[0]})"
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        return str(err).splitlines()[0][:120] or type(err).__name__
    return None


def upright(data: bytes) -> tuple[bytes, str | None]:
    """An image file as a viewer shows it, and what was done (None: the file is unchanged).

    A file whose EXIF orientation turns or mirrors it becomes a PNG of the turned pixels
    (lossless; the EXIF goes with the turn); any other file is returned as it is.
    """
    from PIL import Image, ImageOps

    with Image.open(io.BytesIO(data)) as image:
        orientation = image.getexif().get(_ORIENTATION, 1)
        if orientation not in range(2, 9):
            return data, None
        turned = ImageOps.exif_transpose(image)
    clean = Image.frombytes(turned.mode, turned.size, turned.tobytes())  # no metadata
    buffer = io.BytesIO()
    clean.save(buffer, format="PNG")
    return buffer.getvalue(), f"EXIF orientation {orientation} applied; sent as PNG"


def folder_images(folder: Path, indices: Collection[int]) -> ImageSet:
    """MMVP images in a folder: ``<index>.jpg|jpeg|png|webp``, or ``MMVP Images/`` inside it.

    Raises:
        UserError: the folder does not exist.
    """
    if not folder.is_dir():
        raise UserError(
            f"image folder {folder} does not exist; give the folder holding <index>.jpg "
            f"files or the MMVP snapshot (with '{SNAPSHOT_FOLDER}/')"
        )
    root = folder / SNAPSHOT_FOLDER if (folder / SNAPSHOT_FOLDER).is_dir() else folder
    found: dict[int, Path] = {}
    strays: list[str] = []
    for path in sorted(root.iterdir(), key=lambda p: (_suffix_rank(p.suffix), p.name)):
        if path.suffix.lower() not in IMAGE_SUFFIXES:
            continue
        if _INDEX_NAME.fullmatch(path.stem):
            found.setdefault(int(path.stem), path)
        else:
            strays.append(path.name)
    images: list[SourceImage] = []
    unreadable: dict[int, str] = {}
    for index in sorted(indices):
        file = found.get(index)
        if file is None:
            continue
        try:
            data = read_image_file(file)
        except UnreadableFile as err:
            unreadable[index] = f"{file.name}: {err}"
            continue
        except OSError as err:
            unreadable[index] = f"{file.name}: {err.strerror or err}"
            continue
        problem = check_image(data)
        if problem:
            unreadable[index] = f"{file.name}: {problem}"
            continue
        data, converted = upright(data)
        encoded = EncodedImage.from_bytes(data, filename=file.name)
        images.append(SourceImage(index, MMVP_IMAGE_KEY, encoded, str(file), converted=converted))
    missing = tuple(i for i in sorted(indices) if i not in found)
    return ImageSet(tuple(images), missing, unreadable, str(root), tuple(sorted(strays)))


def _suffix_rank(suffix: str) -> int:
    lowered = suffix.lower()
    return IMAGE_SUFFIXES.index(lowered) if lowered in IMAGE_SUFFIXES else len(IMAGE_SUFFIXES)


def hf_dataset_images(name: str, indices: Collection[int], *, split: str = "train") -> ImageSet:
    """MMVP images from a Hugging Face dataset (``MMVP/MMVP``) or a local dataset folder.

    The dataset's rows are not in index order, so each image's index is read from its file
    name (``<index>.jpg``), as in the snapshot.

    Raises:
        UserError: ``datasets`` is not installed, the dataset cannot be loaded (offline, wrong
            name), or its images carry no index.
    """
    require_extra(
        "hf-datasets", "--hf-dataset loads images with the datasets package (or pass --images DIR)"
    )
    import datasets

    try:
        table = datasets.load_dataset(name, split=split)
    except Exception as err:  # datasets raises many types (network, hub, builder); all fatal
        first = str(err).strip().splitlines()[0][:200] if str(err).strip() else type(err).__name__
        raise UserError(
            f"cannot load dataset {name!r} ({first}); without network, download the MMVP "
            "snapshot elsewhere and pass --images DIR"
        ) from None
    column = next(
        (c for c, feature in table.features.items() if isinstance(feature, datasets.Image)), None
    )
    if column is None:
        raise UserError(f"dataset {name!r} has no image column")
    table = table.cast_column(column, datasets.Image(decode=False))
    wanted = set(indices)
    images: list[SourceImage] = []
    unreadable: dict[int, str] = {}
    seen: set[int] = set()
    for row in table:
        cell = row[column]
        stem = Path(cell.get("path") or "").stem
        if not stem.isdigit():
            raise UserError(
                f"dataset {name!r} image {cell.get('path')!r} has no index in its file name; "
                "cannot tell which question it belongs to"
            )
        index = int(stem)
        if index not in wanted or index in seen:
            continue
        seen.add(index)
        try:
            data = cell.get("bytes") or read_image_file(Path(cell["path"]))
        except (UnreadableFile, OSError) as err:
            unreadable[index] = f"{cell.get('path')}: {err}"
            continue
        problem = check_image(data)
        if problem:
            unreadable[index] = problem
            continue
        origin = f"{name}:{cell.get('path')}"
        data, converted = upright(data)
        encoded = EncodedImage.from_bytes(data)
        images.append(SourceImage(index, MMVP_IMAGE_KEY, encoded, origin, converted=converted))
    missing = tuple(sorted(wanted - seen))
    images.sort(key=lambda s: s.index)
    return ImageSet(tuple(images), missing, unreadable, source=f"dataset {name}")


def generated_images(
    store: Store, run_id: str, indices: Collection[int], kinds: Collection[PromptKind]
) -> ImageSet:
    """The images a generation run made, for these questions and prompt kinds.

    Refused and failed generations have no image and are skipped; an image whose file is gone
    from the workspace is reported unreadable.

    Raises:
        UserError: no such run, or it has no image for the selection.
    """
    run = store.run(run_id)
    if run.stage != "generate":
        raise UserError(f"run {run_id!r} is an {run.stage} run; --generated takes a generate run")
    images: list[SourceImage] = []
    unreadable: dict[int, str] = {}
    for record in store.images(run_id=run_id):
        if record.question_index not in indices or record.prompt_kind not in kinds:
            continue
        if record.status != "ok" or record.path is None:
            continue
        try:
            data = read_image_file(store.path(record.path))
        except UnreadableFile as err:
            unreadable[record.question_index] = f"{record.path}: {err}"
            continue
        except OSError as err:
            unreadable[record.question_index] = f"{record.path}: {err.strerror or err}"
            continue
        problem = check_image(data)
        if problem:
            unreadable[record.question_index] = f"{record.path}: {problem}"
            continue
        images.append(
            SourceImage(
                index=record.question_index,
                image_key=record.image_id,
                image=EncodedImage.from_bytes(data),
                origin=record.path,
                image_id=record.image_id,
                input_path=record.path,
                prompt_kind=record.prompt_kind,
            )
        )
    if not images and not unreadable:
        raise UserError(
            f"run {run_id!r} has no finished {'/'.join(kinds)} image for the selected questions"
        )
    return ImageSet(tuple(images), (), unreadable, source=f"run {run_id}")


def with_input_path(image: SourceImage) -> SourceImage:
    """Give an image its place in the workspace: ``inputs/<sha256>.<ext>``.

    The scoring UI and the reports show only files inside the workspace; naming the copy by
    its hash stores each distinct image once however often it is asked about. The answering
    engine writes the copy before the first reply that refers to it.
    """
    if image.input_path is not None:
        return image
    return replace(image, input_path=f"inputs/{image.image.sha256}{image.image.extension}")
