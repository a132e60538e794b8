#!/usr/bin/env python3
"""Writes the photographs bundled in data/photos/ from scikit-image's sample data.

The photographs come from the scikit-image wheel (PyPI `scikit-image`), which ships them
under skimage/data/ with licences that allow redistribution: no network access beyond the
package index is needed.  For each photograph the script writes

  <name>.png / <name>.jpg     the full-size photograph (PNG, or JPEG where noted, to keep
                              the repository small)
  <name>_small.png            256 pixels wide, 8-bit RGB (averaged over each output pixel's
                              footprint, in linear light)
and for the demo photograph also
  <name>_small_16bit.tif      the small version in 16 bits per channel (the averaging gives
                              more than 8 bits of real precision)
  <name>_small_bayer.png      a synthetic raw GRBG Bayer mosaic of the small version for
                              camera_pipe: 16-bit gray PNG holding 12-bit sensor values
                              shifted left by 4, linear light, camera colour space
                              (the inverse of camera_pipe's colour matrix), with shot and
                              read noise and a few hot pixels

plus LICENSES.md stating the source and licence of every file.

Usage:
  python scripts/fetch_photos.py                  # writes data/photos/ in the repository
  python scripts/fetch_photos.py --out /tmp/p     # somewhere else
  python scripts/fetch_photos.py --check          # only list what would be written and the total size

Needs scikit-image, numpy, pillow and opencv-python-headless (all in the benchmark venv).
"""
import argparse
import os
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, file in skimage/data, full-size format, licence note (from scikit-image's docstrings)
PHOTOS = [
    ("coffee", "coffee.png", "png",
     "Coffee cup, courtesy of Pikolo Espresso Bar. No copyright restrictions: CC0 by the photographer "
     "(Rachel Michetti)."),
    ("chelsea", "chelsea.png", "jpg",
     "Chelsea the cat. No copyright restrictions: CC0 by the photographer (Stefan van der Walt)."),
    ("astronaut", "astronaut.png", "jpg",
     "The astronaut Eileen Collins, from the NASA Great Images database (https://flic.kr/p/r9qvLn). "
     "No known copyright restrictions, released into the public domain."),
]
DEMO = "coffee"  # the photograph `halogen demo` shows (and the only one with 16-bit and raw versions)
SMALL_WIDTH = 256

# camera_pipe's colour matrix (halogen-apps/src/camera_pipe.rs, MATRIX): camera RGB -> output RGB.
CAMERA_MATRIX = np.array([[1.6, -0.45, -0.15], [-0.25, 1.45, -0.2], [0.0, -0.5, 1.5]])
GAMMA = 2.2  # camera_pipe's curve is v ** (1 / 2.2)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, "data", "photos"),
                    help="folder to write (default: %(default)s)")
    ap.add_argument("--small-width", type=int, default=SMALL_WIDTH,
                    help="width of the small versions (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=2012, help="seed of the raw mosaic's noise (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="write into a temporary folder and only report sizes")
    return ap.parse_args()


def skimage_data_dir():
    try:
        import skimage
    except ImportError:
        sys.exit("fetch_photos.py: scikit-image is not installed (pip install scikit-image)")
    return os.path.join(os.path.dirname(skimage.__file__), "data"), skimage.__version__


def to_linear(rgb8):
    return (rgb8.astype(np.float64) / 255.0) ** GAMMA


def to_display(lin):
    return np.clip(lin, 0, 1) ** (1 / GAMMA)


def area_resize(img, w, h):
    """Averages each output pixel's footprint (img is (H, W, C) float, linear light)."""
    H, W = img.shape[:2]
    # Fractional overlap of input rows/columns with output rows/columns, as matrices.
    def weights(n_in, n_out):
        edges_out = np.linspace(0, n_in, n_out + 1)
        lo, hi = edges_out[:-1, None], edges_out[1:, None]
        pix = np.arange(n_in)[None, :]
        m = np.clip(np.minimum(hi, pix + 1) - np.maximum(lo, pix), 0, None)
        return m / m.sum(axis=1, keepdims=True)

    wy, wx = weights(H, h), weights(W, w)
    # Rows first, then columns: two small matrix products per channel.
    return np.stack([wy @ img[..., c] @ wx.T for c in range(img.shape[2])], axis=-1)


def small_size(W, H, width):
    h = int(round(H * width / W))
    return width, h + (h % 2)  # even height: whole Bayer quads


def bayer_mosaic(lin_rgb, rng):
    """A GRBG raw mosaic of linear RGB (H, W, 3): 12-bit values in the high bits of uint16."""
    H, W, _ = lin_rgb.shape
    camera = np.clip(lin_rgb @ np.linalg.inv(CAMERA_MATRIX).T, 0, None)
    camera *= 0.92 / max(float(camera.max()), 1e-6)  # expose just below clipping
    colour = np.ones((H, W), np.int64)  # GRBG: green, except
    colour[0::2, 1::2] = 0  # red at odd x of even rows
    colour[1::2, 0::2] = 2  # blue at even x of odd rows
    signal = np.take_along_axis(camera, colour[..., None], 2)[..., 0] * 4095.0
    # Shot noise (4 electrons per 12-bit step) and read noise of 2 steps.
    electrons = rng.poisson(signal * 4.0) / 4.0
    raw = np.clip(np.round(electrons + rng.normal(0, 2.0, size=signal.shape)), 0, 4095)
    hot = rng.random(signal.shape) < 5e-4
    raw[hot] = 4095
    return (raw.astype(np.uint16) << 4), int(hot.sum())


def main():
    args = parse_args()
    from PIL import Image
    import cv2

    src_dir, sk_version = skimage_data_dir()
    out = args.out
    if args.check:
        import tempfile
        out = tempfile.mkdtemp(prefix="photos-")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    entries = []
    for name, fname, full_fmt, licence in PHOTOS:
        path = os.path.join(src_dir, fname)
        if not os.path.isfile(path):
            sys.exit(f"fetch_photos.py: {path} is missing from the scikit-image wheel")
        rgb8 = np.asarray(Image.open(path).convert("RGB"))
        H, W = rgb8.shape[:2]
        origin = f"scikit-image {sk_version} wheel, `skimage/data/{fname}` ({W}x{H})"
        files = []
        full = f"{name}.{full_fmt}"
        if full_fmt == "png":
            Image.fromarray(rgb8).save(os.path.join(out, full), optimize=True)
            files.append((full, f"the photograph (its pixels as shipped), {W}x{H}, 8-bit RGB PNG"))
        else:
            Image.fromarray(rgb8).save(os.path.join(out, full), quality=90)
            files.append((full, f"the photograph, {W}x{H}, re-encoded as JPEG (quality 90)"))
        sw, sh = small_size(W, H, args.small_width)
        lin_small = area_resize(to_linear(rgb8), sw, sh)
        small8 = np.round(to_display(lin_small) * 255).astype(np.uint8)
        Image.fromarray(small8).save(os.path.join(out, f"{name}_small.png"), optimize=True)
        files.append((f"{name}_small.png", f"{sw}x{sh}, 8-bit RGB PNG, area-averaged in linear light"))
        if name == DEMO:
            small16 = np.round(to_display(lin_small) * 65535).astype(np.uint16)
            tif = f"{name}_small_16bit.tif"
            # OpenCV writes BGR order; its 16-bit TIFFs are LZW-compressed.
            if not cv2.imwrite(os.path.join(out, tif), cv2.cvtColor(small16, cv2.COLOR_RGB2BGR)):
                sys.exit(f"fetch_photos.py: cannot write {tif}")
            files.append((tif, f"{sw}x{sh}, 16-bit RGB TIFF (LZW) of the same averaging"))
            raw, hot = bayer_mosaic(lin_small, rng)
            bay = f"{name}_small_bayer.png"
            if not cv2.imwrite(os.path.join(out, bay), raw):
                sys.exit(f"fetch_photos.py: cannot write {bay}")
            files.append((bay, f"{sw}x{sh} synthetic raw GRBG Bayer mosaic for camera_pipe: 16-bit gray PNG, "
                               f"12-bit values << 4, linear light in camera colours (inverse of camera_pipe's "
                               f"matrix), shot and read noise, {hot} hot pixels (seed {args.seed})"))
        entries.append((name, origin, licence, files))

    total = 0
    lines = ["# Photographs", "",
             "Real photographs for `halogen demo`, `halogen run` and the tests, written by",
             "`scripts/fetch_photos.py` from scikit-image's sample data (the licences below are the ones",
             "scikit-image states for each picture). Every file here may be redistributed.", ""]
    for name, origin, licence, files in entries:
        lines += [f"## {name}", "", f"Source: {origin}.", "", f"Licence: {licence}", ""]
        for f, what in files:
            size = os.path.getsize(os.path.join(out, f))
            total += size
            lines.append(f"- `{f}` ({size // 1024} KiB): {what}")
        lines.append("")
    with open(os.path.join(out, "LICENSES.md"), "w") as fh:
        fh.write("\n".join(lines))
    total += os.path.getsize(os.path.join(out, "LICENSES.md"))
    for name, _, _, files in entries:
        for f, _ in files:
            print(f"{os.path.join(out, f)}  {os.path.getsize(os.path.join(out, f)) // 1024} KiB")
    print(f"total {total / 1e6:.2f} MB in {out}")


if __name__ == "__main__":
    main()
