#!/usr/bin/python3
"""Turn a PNG image into a BlazeFace input tensor saved as .npy.

Usage:
    scripts/preprocess-image.py IMAGE.png OUTPUT.npy [--size 128|256]

Output: float32 [1, S, S, 3], NHWC, RGB, values (x - 127.5) / 127.5 in [-1, 1],
where S is --size (128 for the front model, 256 for the back model).

Needs only the Python standard library (zlib, struct) and NumPy, so it runs
with Debian's /usr/bin/python3 + python3-numpy; no Pillow or OpenCV.

PNG support: bit depth 8, colour types 0 (grey), 2 (RGB), 3 (palette),
4 (grey + alpha) and 6 (RGBA), non-interlaced, all five scanline filters.
Alpha is dropped (not composited); grey is replicated to R, G and B.

Resize (exactly): the image is stretched to S x S (aspect ratio not kept)
with separable bilinear interpolation using half-pixel centres
(align_corners=False, the ONNX Resize "half_pixel" / OpenCV INTER_LINEAR
convention, without antialiasing):
    src = (dst + 0.5) * in_size / out_size - 0.5, clamped to [0, in_size - 1]
    out = (1 - f) * in[floor(src)] + f * in[floor(src) + 1],  f = src - floor(src)
computed in float64 on the 0..255 values, then scaled and cast to float32.
"""

import argparse
import struct
import sys
import zlib

import numpy as np

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


class PngError(Exception):
    pass


def read_chunks(data):
    if data[:8] != PNG_SIGNATURE:
        raise PngError("not a PNG file (bad signature)")
    pos = 8
    while pos + 8 <= len(data):
        length, ctype = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise PngError("truncated %s chunk" % ctype.decode("latin-1"))
        crc = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]
        if zlib.crc32(ctype + body) & 0xFFFFFFFF != crc:
            raise PngError("CRC mismatch in %s chunk" % ctype.decode("latin-1"))
        yield ctype, body
        if ctype == b"IEND":
            return
        pos += 12 + length
    raise PngError("missing IEND chunk")


def paeth_row(line, prior, bpp):
    """Undo the Paeth filter in place (sequential: each byte needs its left)."""
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prior[i]
        c = prior[i - bpp] if i >= bpp else 0
        p = a + b - c
        pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
        if pa <= pb and pa <= pc:
            pred = a
        elif pb <= pc:
            pred = b
        else:
            pred = c
        line[i] = (line[i] + pred) & 0xFF


def unfilter(raw, height, stride, bpp):
    out = np.zeros((height, stride), dtype=np.uint8)
    prior = np.zeros(stride, dtype=np.uint8)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        line = np.frombuffer(raw, dtype=np.uint8, count=stride, offset=pos + 1).copy()
        pos += 1 + stride
        if ftype == 0:  # None
            pass
        elif ftype == 1:  # Sub: running sum per byte lane, modulo 256
            lanes = line.reshape(-1, bpp).astype(np.uint64)
            line = (np.cumsum(lanes, axis=0) & 0xFF).astype(np.uint8).reshape(-1)
        elif ftype == 2:  # Up
            line = line + prior  # uint8 arithmetic wraps modulo 256
        elif ftype == 3:  # Average
            buf = bytearray(line.tobytes())
            pr = prior.tobytes()
            for i in range(stride):
                a = buf[i - bpp] if i >= bpp else 0
                buf[i] = (buf[i] + ((a + pr[i]) >> 1)) & 0xFF
            line = np.frombuffer(bytes(buf), dtype=np.uint8)
        elif ftype == 4:  # Paeth
            buf = bytearray(line.tobytes())
            paeth_row(buf, prior.tobytes(), bpp)
            line = np.frombuffer(bytes(buf), dtype=np.uint8)
        else:
            raise PngError("row %d: unknown filter type %d" % (y, ftype))
        out[y] = line
        prior = out[y]
    return out


def decode_png(path):
    """Return an H x W x 3 uint8 RGB array."""
    with open(path, "rb") as f:
        data = f.read()
    header = None
    palette = None
    idat = []
    for ctype, body in read_chunks(data):
        if ctype == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif ctype == b"PLTE":
            palette = np.frombuffer(body, dtype=np.uint8).reshape(-1, 3)
        elif ctype == b"IDAT":
            idat.append(body)
    if header is None:
        raise PngError("missing IHDR chunk")
    width, height, depth, color, compression, filt, interlace = header
    if depth != 8:
        raise PngError("bit depth %d not supported (only 8)" % depth)
    if color not in CHANNELS:
        raise PngError("colour type %d not supported" % color)
    if compression != 0 or filt != 0:
        raise PngError("unknown compression/filter method")
    if interlace != 0:
        raise PngError("interlaced (Adam7) PNG not supported")
    if color == 3 and palette is None:
        raise PngError("palette image without PLTE chunk")
    channels = CHANNELS[color]
    stride = width * channels
    raw = zlib.decompress(b"".join(idat))
    if len(raw) < height * (stride + 1):
        raise PngError("image data too short: %d bytes for %dx%d" % (len(raw), width, height))
    pixels = unfilter(raw, height, stride, channels).reshape(height, width, channels)
    if color == 3:
        return palette[pixels[:, :, 0]]
    if color in (0, 4):
        return np.repeat(pixels[:, :, :1], 3, axis=2)
    return pixels[:, :, :3]


def resize_axis(img, out_size, axis):
    """Half-pixel bilinear interpolation along one axis (see module doc)."""
    in_size = img.shape[axis]
    dst = np.arange(out_size, dtype=np.float64)
    src = (dst + 0.5) * (in_size / out_size) - 0.5
    src = np.clip(src, 0.0, in_size - 1)
    i0 = np.floor(src).astype(np.int64)
    i1 = np.minimum(i0 + 1, in_size - 1)
    frac = src - i0
    shape = [1] * img.ndim
    shape[axis] = out_size
    frac = frac.reshape(shape)
    return (1.0 - frac) * np.take(img, i0, axis=axis) + frac * np.take(img, i1, axis=axis)


def preprocess(rgb, size):
    img = rgb.astype(np.float64)
    img = resize_axis(img, size, 0)
    img = resize_axis(img, size, 1)
    img = (img - 127.5) / 127.5
    return img.astype(np.float32)[np.newaxis]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("image", help="input PNG")
    parser.add_argument("output", help="output .npy")
    parser.add_argument("--size", type=int, default=128, choices=(128, 256),
                        help="square side of the model input (default 128)")
    args = parser.parse_args()
    try:
        rgb = decode_png(args.image)
    except (OSError, PngError, zlib.error) as exc:
        print("preprocess-image: %s: %s" % (args.image, exc), file=sys.stderr)
        return 1
    tensor = preprocess(rgb, args.size)
    np.save(args.output, tensor)
    print("%s: %dx%d -> %s float32 %s min=%.4f max=%.4f mean=%.4f" % (
        args.image, rgb.shape[1], rgb.shape[0], args.output,
        "x".join(str(d) for d in tensor.shape), tensor.min(), tensor.max(), tensor.mean()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
