"""The Julia set of metalcompute's demo, rendered by Shaders/julia.metal into a PNG."""
import pathlib
import struct
import zlib

import numpy as np
import pymetal as pm

SHADER = pathlib.Path(__file__).resolve().parent.parent / "Shaders" / "julia.metal"
PARAMS = np.dtype([("c", np.float32, 2), ("scale", np.float32), ("width", np.uint32),
                   ("height", np.uint32), ("iterations", np.uint32)], align=True)


def write_png(path: str, rgba: np.ndarray) -> None:
    height, width, _ = rgba.shape
    raw = b"".join(b"\x00" + rgba[y].tobytes() for y in range(height))
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")
    pathlib.Path(path).write_bytes(png)


def main(width: int = 768, height: int = 512, path: str = "output/julia.png") -> str:
    julia = pm.load(str(SHADER)).julia
    params = np.zeros((), PARAMS)
    params["c"] = (-0.8, 0.156)
    params["scale"] = 1.6
    params["width"], params["height"], params["iterations"] = width, height, 200
    image = pm.empty((height, width, 4), np.uint8)
    julia(params[()], image, grid=(width, height))  # a structured scalar is passed by value
    pixels = image.numpy()
    assert pixels[..., 3].min() == 255 and len(np.unique(pixels[..., :3].reshape(-1, 3), axis=0)) > 50
    pathlib.Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_png(path, pixels)
    return f"julia: {width}x{height} image written to {path}"


if __name__ == "__main__":
    print(main())
