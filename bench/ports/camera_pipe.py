"""Halide port of Halogen's `camera_pipe` app (halogen-apps/src/camera_pipe.rs).

Raw GRBG Bayer mosaic (16-bit linear) to 8-bit planar RGB: hot-pixel suppression (clamp to
the range of the four same-colour neighbours at distance 2), bilinear demosaicking with
integer rounding in uint32, a 3x3 colour matrix in float32, and a 1024-entry gamma (1/2.2)
lookup table; mirror_interior borders (keeps the Bayer parity).  Same hand schedule as the
Halogen app.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

F32 = hl.Float(32)
I32 = hl.Int(32)
U32 = hl.UInt(32)
U16 = hl.UInt(16)

# Camera RGB to output RGB (rows sum to 1), as float32 constants.
MATRIX = [[1.6, -0.45, -0.15], [-0.25, 1.45, -0.2], [0.0, -0.5, 1.5]]
# The curve's exponent, computed in float32 as the app's `1.0 / 2.2` is.
GAMMA = float(np.float32(1.0) / np.float32(2.2))


def f32(v):
    return hl.f32(float(v))


class CameraPipe:
    name = "camera_pipe"
    title = "camera pipeline: raw GRBG Bayer to RGB"
    # Its float stages are strict (see build()): compare.py runs Halogen without FMA
    # contraction for it.
    strict_float = True

    def __init__(self, W=2592, H=1968):
        self.W, self.H = W, H
        self.mp = W * H / 1e6
        self.desc = (f"uint16 GRBG mosaic {W}x{H} -> uint8 RGB planar {W}x{H}x3; hot pixels clamped to the 4 "
                     "same-colour neighbours, bilinear demosaic (uint32, rounded), 3x3 colour matrix (float32), "
                     "gamma 1/2.2 LUT of 1024; mirror_interior")
        self.exact = True

    def make_inputs(self, rng):
        # Smooth colour fields through the mosaic, with sensor noise and a few hot pixels.
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        u, v = xx / max(W, 1), yy / max(W, 1)
        rgb = np.stack([0.5 + 0.4 * np.sin(7 * u + 2 * v), 0.5 + 0.4 * np.cos(5 * v - 3 * u),
                        0.5 + 0.4 * np.sin(4 * u * v + 11 * v)])
        colour = np.ones((H, W), np.int64)
        colour[0::2, 1::2] = 0  # red at odd x of even rows
        colour[1::2, 0::2] = 2  # blue at even x of odd rows
        lin = np.take_along_axis(rgb, colour[None], 0)[0] ** 2.2 * 65535
        noisy = lin + 300 * rng.standard_normal((H, W))
        raw = np.clip(noisy, 0, 65535).astype(np.uint16)
        raw[rng.random((H, W)) < 0.002] = 65535
        return [raw]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.uint8)

    def build(self):
        inp = hl.ImageParam(U16, 2, "input")
        x, y, c, i = vars_("x", "y", "c", "i")
        raw = hl.BoundaryConditions.mirror_interior(inp)

        def r(dx, dy):
            return raw[x + dx, y + dy]

        denoised = hl.Func("denoised")
        hi = hl.max(hl.max(r(-2, 0), r(2, 0)), hl.max(r(0, -2), r(0, 2)))
        lo = hl.min(hl.min(r(-2, 0), r(2, 0)), hl.min(r(0, -2), r(0, 2)))
        denoised[x, y] = hl.clamp(r(0, 0), lo, hi)

        def d(dx, dy):
            return hl.cast(U32, denoised[x + dx, y + dy])

        def avg2(a, b):
            return hl.cast(U16, (a + b + 1) / 2)

        def avg4(a, b, c2, e):
            return hl.cast(U16, (a + b + c2 + e + 2) / 4)

        here = denoised[x, y]
        cross = avg4(d(-1, 0), d(1, 0), d(0, -1), d(0, 1))
        diag = avg4(d(-1, -1), d(1, -1), d(-1, 1), d(1, 1))
        horiz = avg2(d(-1, 0), d(1, 0))
        vert = avg2(d(0, -1), d(0, 1))
        xo, yo = (x % 2) == 1, (y % 2) == 1
        # GRBG: G at (even, even) and (odd, odd), R at (odd, even), B at (even, odd).
        is_r = xo & ~yo
        is_b = ~xo & yo
        is_g_red_row = ~xo & ~yo
        red = hl.select(is_r, here, hl.select(is_b, diag, hl.select(is_g_red_row, horiz, vert)))
        green = hl.select(is_r | is_b, cross, here)
        blue = hl.select(is_b, here, hl.select(is_r, diag, hl.select(is_g_red_row, vert, horiz)))
        demosaiced = hl.Func("demosaiced")
        demosaiced[x, y, c] = hl.select(c == 0, red, hl.select(c == 1, green, blue))

        def lin(ch):
            return hl.cast(F32, demosaiced[x, y, ch]) / f32(65535.0)

        def row(m):
            return f32(m[0]) * lin(0) + f32(m[1]) * lin(1) + f32(m[2]) * lin(2)

        # strict_float: Halide would otherwise fuse the multiply-adds below into FMAs, whose
        # different rounding moves a rare value across a LUT index boundary (the output is
        # integer and must match exactly); Halogen's C is compiled without contraction.
        corrected = hl.Func("corrected")
        corrected[x, y, c] = hl.strict_float(hl.clamp(
            hl.select(c == 0, row(MATRIX[0]), hl.select(c == 1, row(MATRIX[1]), row(MATRIX[2]))), f32(0.0), f32(1.0)))
        curve = hl.Func("curve")
        curve[i] = hl.cast(hl.UInt(8), hl.strict_float(hl.clamp(
            hl.pow(hl.cast(F32, i) / f32(1023.0), f32(GAMMA)) * f32(255.0) + f32(0.5), f32(0.0), f32(255.0))))
        out = hl.Func("camera_pipe")
        idx = hl.clamp(hl.cast(I32, hl.strict_float(corrected[x, y, c] * f32(1023.0) + f32(0.5))), 0, 1023)
        out[x, y, c] = curve[idx]
        inp.set_estimates([(0, self.W), (0, self.H)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        return Built([inp], out, dict(denoised=denoised, demosaiced=demosaiced, corrected=corrected, curve=curve,
                                      out=out), dict(x=x, y=y, c=c, i=i))

    def hand(self, b):
        # The curve at root; parallel strips of 32 rows, channels inside rows, vectorized by
        # 8; the denoised mosaic slides down each strip, demosaicking and colour correction
        # per row.
        x, y, c = b.v["x"], b.v["y"], b.v["c"]
        yo, yi = vars_("yo", "yi")
        f = b.f
        f["curve"].compute_root()
        f["out"].split(y, yo, yi, 32).reorder(x, c, yi, yo).parallel(yo).vectorize(x, 8)
        f["corrected"].compute_at(f["out"], yi).vectorize(x, 8)
        f["demosaiced"].compute_at(f["out"], yi).vectorize(x, 8)
        f["denoised"].store_at(f["out"], yo).compute_at(f["out"], yi).vectorize(x, 8)

    def numpy_prep(self, inputs):
        i = np.arange(1024, dtype=np.float32)
        curve = np.clip(np.power(i / np.float32(1023.0), np.float32(GAMMA)) * np.float32(255.0) + np.float32(0.5),
                        np.float32(0), np.float32(255)).astype(np.uint8)
        return {"curve": curve}

    def numpy(self, inputs, out, st):
        H, W = self.H, self.W
        a = inputs[0]
        p = np.pad(a, 3, mode="reflect")  # numpy's "reflect" is mirror_interior; rows/cols -3 .. H+2 / W+2

        def at(arr, pad, dy, dx, h, w):
            return arr[pad + dy:pad + dy + h, pad + dx:pad + dx + w]

        # denoised on rows/cols -1 .. H / W (demosaicking reads one pixel around).
        h1, w1 = H + 2, W + 2
        n = [at(p, 2, 0, -2, h1, w1), at(p, 2, 0, 2, h1, w1), at(p, 2, -2, 0, h1, w1), at(p, 2, 2, 0, h1, w1)]
        hi = np.maximum(np.maximum(n[0], n[1]), np.maximum(n[2], n[3]))
        lo = np.minimum(np.minimum(n[0], n[1]), np.minimum(n[2], n[3]))
        den = np.clip(at(p, 2, 0, 0, h1, w1), lo, hi).astype(np.uint32)

        def dd(dy, dx):
            return at(den, 1, dy, dx, H, W)

        here = dd(0, 0)
        cross = (dd(0, -1) + dd(0, 1) + dd(-1, 0) + dd(1, 0) + 2) // 4
        diag = (dd(-1, -1) + dd(-1, 1) + dd(1, -1) + dd(1, 1) + 2) // 4
        horiz = (dd(0, -1) + dd(0, 1) + 1) // 2
        vert = (dd(-1, 0) + dd(1, 0) + 1) // 2
        xo = (np.arange(W) % 2 == 1)[None, :]
        yo = (np.arange(H) % 2 == 1)[:, None]
        is_r, is_b, is_gr = xo & ~yo, ~xo & yo, ~xo & ~yo
        red = np.where(is_r, here, np.where(is_b, diag, np.where(is_gr, horiz, vert)))
        green = np.where(is_r | is_b, cross, here)
        blue = np.where(is_b, here, np.where(is_r, diag, np.where(is_gr, vert, horiz)))
        lin = [ch.astype(np.float32) / np.float32(65535.0) for ch in (red, green, blue)]
        for ch, m in enumerate(MATRIX):
            v = np.float32(m[0]) * lin[0] + np.float32(m[1]) * lin[1] + np.float32(m[2]) * lin[2]
            v = np.clip(v, np.float32(0), np.float32(1))
            idx = np.clip((v * np.float32(1023.0) + np.float32(0.5)).astype(np.int32), 0, 1023)
            out[ch] = st["curve"][idx]

    opencv_note = ("cv2.cvtColor BayerGB2RGB (bilinear, 16-bit) + cv2.transform (the matrix scaled to LUT "
                   "indices) + cv2.min + a NumPy take through the curve: no hot-pixel step, different rounding; "
                   "not compared")

    def opencv_prep(self, inputs):
        H, W = self.H, self.W
        curve = self.numpy_prep(inputs)["curve"]
        return {"src": inputs[0], "rgb": np.empty((H, W, 3), np.uint16), "idx": np.empty((H, W, 3), np.uint16),
                "m": np.array(MATRIX, np.float32) * np.float32(1023.0 / 65535.0), "curve": curve,
                "dst": np.empty((H, W, 3), np.uint8)}

    def opencv(self, st):
        # OpenCV names a Bayer pattern by the second row's second and third pixels: the GRBG
        # mosaic (G R / B G) is COLOR_BayerGB2RGB in its naming.
        cv2.cvtColor(st["src"], cv2.COLOR_BayerGB2RGB, dst=st["rgb"])
        cv2.transform(st["rgb"], st["m"], dst=st["idx"])  # rounds and saturates at 0
        cv2.min(st["idx"], 1023, dst=st["idx"])
        np.take(st["curve"], st["idx"], out=st["dst"])
        return None
