"""A deterministic PNG encoder: the same pixels give the same bytes on any machine.

Pillow and Python both compress PNGs with whatever zlib they were built with (classic zlib,
zlib-ng, ...), and those produce different bytes for the same pixels. Scenes must be
byte-identical wherever they are built, so they are encoded here with a deflate written out in
full: every row is PNG-filtered with ``Up`` (a flat scene becomes long runs of zeros) and the
runs are coded as one literal plus back-references at distance 1, with deflate's fixed Huffman
codes. Only checksums (CRC-32, Adler-32) come from :mod:`zlib`; they are defined exactly.
"""

from __future__ import annotations

import struct
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Deflate's length codes 257..285: their base lengths and how many extra bits follow.
_BASES: tuple[int, ...] = (3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51)
_BASES += (59, 67, 83, 99, 115, 131, 163, 195, 227, 258)
_EXTRA = (0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0)
_LENGTHS: tuple[tuple[int, int, int], ...] = tuple(
    (257 + i, base, extra) for i, (base, extra) in enumerate(zip(_BASES, _EXTRA, strict=True))
)
_LONGEST_MATCH = 258


def _length_code(length: int) -> tuple[int, int, int]:
    """The deflate length code, its extra bits' value and count for a match length."""
    chosen = _LENGTHS[0]
    for entry in _LENGTHS:
        if entry[1] <= length:
            chosen = entry
    code, base, extra = chosen
    if length == _LONGEST_MATCH:
        return 285, 0, 0
    return code, length - base, extra


class _BitWriter:
    """Deflate's bit order: values least significant bit first, Huffman codes reversed."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.buffer = 0
        self.count = 0

    def bits(self, value: int, count: int) -> None:
        self.buffer |= value << self.count
        self.count += count
        while self.count >= 8:
            self.out.append(self.buffer & 0xFF)
            self.buffer >>= 8
            self.count -= 8

    def code(self, code: int, length: int) -> None:
        reversed_code = int(f"{code:0{length}b}"[::-1], 2)
        self.bits(reversed_code, length)

    def flush(self) -> bytes:
        if self.count:
            self.out.append(self.buffer & 0xFF)
            self.buffer = 0
            self.count = 0
        return bytes(self.out)


def _symbol(writer: _BitWriter, symbol: int) -> None:
    """A literal/length symbol in deflate's fixed Huffman code."""
    if symbol < 144:
        writer.code(0x30 + symbol, 8)
    elif symbol < 256:
        writer.code(0x190 + symbol - 144, 9)
    elif symbol < 280:
        writer.code(symbol - 256, 7)
    else:
        writer.code(0xC0 + symbol - 280, 8)


def deflate_runs(data: bytes) -> bytes:
    """A zlib stream of ``data``: one fixed-Huffman block of literals and distance-1 runs."""
    import numpy as np

    writer = _BitWriter()
    writer.bits(1, 1)  # BFINAL
    writer.bits(1, 2)  # BTYPE 01: fixed Huffman codes
    array = np.frombuffer(data, dtype=np.uint8)
    if len(array):
        starts = np.concatenate(([0], np.flatnonzero(np.diff(array)) + 1))
        lengths = np.diff(np.concatenate((starts, [len(array)])))
        for value, run in zip(array[starts].tolist(), lengths.tolist(), strict=True):
            _symbol(writer, value)
            rest = run - 1
            while rest >= 3:
                match = min(rest, _LONGEST_MATCH)
                if 0 < rest - match < 3:  # keep the remainder a valid match or none
                    match = rest - 3
                code, extra_value, extra_bits = _length_code(match)
                _symbol(writer, code)
                if extra_bits:
                    writer.bits(extra_value, extra_bits)
                writer.code(0, 5)  # distance code 0: distance 1
                rest -= match
            for _ in range(rest):
                _symbol(writer, value)
    _symbol(writer, 256)  # end of block
    body = writer.flush()
    return b"\x78\x01" + body + struct.pack(">I", zlib.adler32(data) & 0xFFFFFFFF)


def _chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload) & 0xFFFFFFFF
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def encode_png(pixels: NDArray[np.uint8]) -> bytes:
    """Encode an RGB image (height x width x 3, uint8) as PNG bytes, deterministically."""
    import numpy as np

    height, width, channels = pixels.shape
    if channels != 3:
        raise ValueError(f"expected RGB pixels, got {channels} channels")
    rows = pixels.reshape(height, width * 3).astype(np.uint8)
    above = np.zeros_like(rows)
    above[1:] = rows[:-1]
    filtered = (rows - above).astype(np.uint8)  # PNG filter 2 (Up), modulo 256
    raw = np.concatenate((np.full((height, 1), 2, dtype=np.uint8), filtered), axis=1)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        PNG_SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", deflate_runs(raw.tobytes()))
        + _chunk(b"IEND", b"")
    )
