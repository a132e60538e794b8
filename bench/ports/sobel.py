"""Halide port of Halogen's `sobel` app (halogen-apps/src/sobel.rs).

Sobel edge magnitude of uint8 gray: min(|Gx| + |Gy|, 255), the 3x3 kernels written
separably ([1 2 1] smoothing across, [-1 0 1] difference along), repeat_edge at the
borders, int16 arithmetic.  Same hand schedule as the Halogen app.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_


class Sobel:
    name = "sobel"
    title = "Sobel edge magnitude, uint8 gray"

    def __init__(self, W=4000, H=3000):
        self.W, self.H = W, H
        self.mp = W * H / 1e6
        self.desc = (f"uint8 gray {W}x{H}; smooth_y = [1 2 1] in y, smooth_x = [1 2 1] in x (int16), "
                     "gx/gy = central differences, out = min(|gx| + |gy|, 255); repeat_edge")
        self.exact = True

    def make_inputs(self, rng):
        # Smooth waves, a step edge and noise (Halogen's synth::smooth_gray), as uint8.
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        base = 0.5 + 0.25 * np.sin(xx / 37.0) * np.cos(yy / 23.0) + 0.2 * (xx > W / 2)
        img = np.clip(base + 0.05 * rng.standard_normal((H, W)), 0, 1)
        return [np.round(img * 255).astype(np.uint8)]

    def make_output(self):
        return np.empty((self.H, self.W), np.uint8)

    def build(self):
        inp = hl.ImageParam(hl.UInt(8), 2, "input")
        x, y = vars_("x", "y")
        cl = hl.BoundaryConditions.repeat_edge(inp)
        i16 = hl.Int(16)

        def i(dx, dy):
            return hl.cast(i16, cl[x + dx, y + dy])

        smooth_y, smooth_x = hl.Func("smooth_y"), hl.Func("smooth_x")
        smooth_y[x, y] = i(0, -1) + 2 * i(0, 0) + i(0, 1)
        smooth_x[x, y] = i(-1, 0) + 2 * i(0, 0) + i(1, 0)
        gx, gy = hl.Func("gx"), hl.Func("gy")
        gx[x, y] = smooth_y[x + 1, y] - smooth_y[x - 1, y]
        gy[x, y] = smooth_x[x, y + 1] - smooth_x[x, y - 1]
        out = hl.Func("sobel")
        # abs of int16 is uint16 in Halide; the sum (at most 2040) cannot wrap.
        out[x, y] = hl.cast(hl.UInt(8), hl.min(hl.abs(gx[x, y]) + hl.abs(gy[x, y]), 255))
        inp.set_estimates([(0, self.W), (0, self.H)])
        out.set_estimates([(0, self.W), (0, self.H)])
        return Built([inp], out, dict(smooth_y=smooth_y, smooth_x=smooth_x, gx=gx, gy=gy, out=out),
                     dict(x=x, y=y))

    def hand(self, b):
        # Strips of 32 rows in parallel, vectorized by 16; smooth_x slides down each strip,
        # smooth_y is computed per row.
        x, y = b.v["x"], b.v["y"]
        yo, yi = vars_("yo", "yi")
        f = b.f
        f["out"].split(y, yo, yi, 32).parallel(yo).vectorize(x, 16)
        f["smooth_x"].store_at(f["out"], yo).compute_at(f["out"], yi).vectorize(x, 16)
        f["smooth_y"].compute_at(f["out"], yi).vectorize(x, 16)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        H, W = self.H, self.W
        p = np.pad(inputs[0], 2, mode="edge").astype(np.int16)  # rows/cols -2 .. H+1 / W+1
        sy = p[1:H + 1] + 2 * p[2:H + 2] + p[3:H + 3]  # smooth_y: rows 0..H-1, cols -2..W+1
        gx = sy[:, 3:W + 3] - sy[:, 1:W + 1]
        sx = p[:, 1:W + 1] + 2 * p[:, 2:W + 2] + p[:, 3:W + 3]  # smooth_x: rows -2..H+1, cols 0..W-1
        gy = sx[3:H + 3] - sx[1:H + 1]
        np.copyto(out, np.minimum(np.abs(gx).astype(np.int32) + np.abs(gy), 255).astype(np.uint8))

    opencv_note = ("cv2.Sobel dx and dy (CV_16S, ksize 3, BORDER_REPLICATE), convertScaleAbs, saturating add: "
                   "the same values")

    def opencv_prep(self, inputs):
        H, W = self.H, self.W
        return {"src": inputs[0], "gx": np.empty((H, W), np.int16), "gy": np.empty((H, W), np.int16),
                "ax": np.empty((H, W), np.uint8), "ay": np.empty((H, W), np.uint8),
                "dst": np.empty((H, W), np.uint8)}

    def opencv(self, st):
        cv2.Sobel(st["src"], cv2.CV_16S, 1, 0, dst=st["gx"], ksize=3, borderType=cv2.BORDER_REPLICATE)
        cv2.Sobel(st["src"], cv2.CV_16S, 0, 1, dst=st["gy"], ksize=3, borderType=cv2.BORDER_REPLICATE)
        cv2.convertScaleAbs(st["gx"], dst=st["ax"])
        cv2.convertScaleAbs(st["gy"], dst=st["ay"])
        # min(|gx|, 255) + min(|gy|, 255), saturated, equals min(|gx| + |gy|, 255).
        cv2.add(st["ax"], st["ay"], dst=st["dst"])
        return st["dst"]
