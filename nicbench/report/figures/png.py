"""PNG files written from matplotlib's Agg pixels without Pillow's row filters.

At 300 dpi a ranking of 50 cards is 2100 x 2800 pixels. Pillow's PNG encoder tries every
row filter on every row and keeps the best: 130 ms a chart, as long as drawing it. A
chart is mostly flat colour, which zlib packs as well unfiltered, so each row is stored
as it is (filter 0) and deflated at level 1: half the time and a smaller file. The pixels
are matplotlib's own (``savefig(format="rgba")``); RGB when every pixel is opaque (the
house style's white page), RGBA when a style leaves the page transparent.
"""

from __future__ import annotations

import struct
import zlib

import numpy as np

from nicbench.textfile import replacing

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def save_png(mfig, path: str, dpi: float | None, title: str) -> None:
    """``mfig`` rendered at ``dpi`` (None: the style's savefig.dpi) into ``path``."""
    from matplotlib import __version__, rcParams

    if dpi is None:
        dpi = mfig.dpi if rcParams["savefig.dpi"] == "figure" else rcParams["savefig.dpi"]
    raw = _Pixels()
    mfig.savefig(raw, format="rgba", dpi=dpi)
    width = int(mfig.get_figwidth() * dpi)      # as Agg sizes its canvas: int(inches * dpi)
    data = raw.data
    if data.nbytes % (width * 4):
        raise ValueError(f"{path}: {data.nbytes} bytes of pixels are not rows of {width}")
    pixels = np.frombuffer(data, np.uint8).reshape(-1, width, 4)
    png = encode(pixels, dpi, {"Title": title,
                               "Software": f"Matplotlib version{__version__}, "
                                           "https://matplotlib.org/ (nicbench)"})
    with replacing(path, binary=True) as fh:       # complete or not there at all
        fh.write(png)


class _Pixels:
    """Where ``savefig(format="rgba")`` writes: it keeps the renderer's own buffer (a
    memoryview) instead of copying its 23 MB into a BytesIO."""

    data: memoryview

    def write(self, data) -> int:
        self.data = memoryview(data)
        return self.data.nbytes

    def seek(self, offset: int, whence: int = 0) -> int:   # what makes it a file to matplotlib
        return 0


def encode(pixels: np.ndarray, dpi: float, text: dict[str, str]) -> bytes:
    """A PNG of ``pixels`` (height x width x RGBA, uint8)."""
    height, width = pixels.shape[:2]
    # every alpha byte 255: each RGBA pixel read as one little-endian word is >= 0xff000000
    # (the smallest word: a tenth of the time of comparing every word)
    opaque = int(np.ascontiguousarray(pixels).view("<u4").min()) >= 0xFF000000
    channels = 3 if opaque else 4
    rows = np.empty((height, width * channels + 1), np.uint8)
    rows[:, 0] = 0                                  # filter type 0: the row as it is
    rows[:, 1:] = _rgb(pixels).reshape(height, -1) if opaque else pixels.reshape(height, -1)
    per_metre = round(dpi / 0.0254)
    out = [SIGNATURE,
           _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8,
                                       2 if opaque else 6, 0, 0, 0)),
           _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1))]
    out += [_chunk(b"tEXt", k.encode("latin-1", "replace") + b"\0"
                   + v.encode("latin-1", "replace")) for k, v in text.items() if v]
    out += [_chunk(b"IDAT", zlib.compress(rows.data, 1)), _chunk(b"IEND", b"")]
    return b"".join(out)


def _rgb(pixels: np.ndarray) -> np.ndarray:
    """The RGB bytes of RGBA ``pixels``: Pillow's conversion, a third of the time of numpy's
    strided copy of three bytes in four."""
    from PIL import Image

    height, width = pixels.shape[:2]
    rgba = Image.frombuffer("RGBA", (width, height), np.ascontiguousarray(pixels), "raw",
                            "RGBA", 0, 1)
    return np.frombuffer(rgba.convert("RGB").tobytes(), np.uint8)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
