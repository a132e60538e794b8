"""Halide port of Halogen's `resize` app (halogen-apps/src/resize.rs).

Bicubic resampling of float32 planar RGB by a constant factor: the Keys cubic (a = -0.5),
widened by 1/scale when shrinking; per-output-coordinate weights normalised to sum to 1;
separable, x first; repeat_edge in x and y.  Every constant is float32 and every sum runs
in the same order as in the Halogen app, so the results agree to the last bit or nearly.
"""
import math

import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

F32 = hl.Float(32)
I32 = hl.Int(32)


def f32(v):
    return hl.f32(float(v))


def round_half_away(v):
    """Rust's f64::round for the positive sizes used here (Python's round() is half-even)."""
    return int(math.floor(v + 0.5))


class Geometry:
    """The resampler's constants for a scale factor, computed in float32 like the app."""

    def __init__(self, scale):
        self.scale = np.float32(scale)
        self.shrink = min(self.scale, np.float32(1.0))
        self.support = np.float32(2.0) / self.shrink
        self.taps = 2 * int(math.ceil(float(self.support))) + 1


def cubic(t):
    """The Keys kernel (a = -0.5) of |t|, as a Halide expression."""
    t = hl.abs(t)
    t2 = t * t
    t3 = t2 * t
    near = f32(1.5) * t3 - f32(2.5) * t2 + f32(1.0)
    far = f32(-0.5) * t3 + f32(2.5) * t2 - f32(4.0) * t + f32(2.0)
    return hl.select(t < f32(1.0), near, hl.select(t < f32(2.0), far, f32(0.0)))


def cubic_np(t):
    t = np.abs(t).astype(np.float32)
    t2 = t * t
    t3 = t2 * t
    near = np.float32(1.5) * t3 - np.float32(2.5) * t2 + np.float32(1.0)
    far = np.float32(-0.5) * t3 + np.float32(2.5) * t2 - np.float32(4.0) * t + np.float32(2.0)
    return np.where(t < 1, near, np.where(t < 2, far, np.float32(0))).astype(np.float32)


class Resize:
    name = "resize"
    title = "bicubic resampling, float32 RGB planar"

    def __init__(self, W=3840, H=2160, scale=2.0):
        # W x H is about the output size: the input is round(W / scale) x round(H / scale)
        # (as the Halogen app's make_inputs), and the output round(input * scale).
        self.scale = scale
        self.g = Geometry(scale)
        self.IW = max(1, round_half_away(W / float(np.float32(scale))))
        self.IH = max(1, round_half_away(H / float(np.float32(scale))))
        self.W = max(1, round_half_away(self.IW * float(np.float32(scale))))
        self.H = max(1, round_half_away(self.IH * float(np.float32(scale))))
        self.mp = self.W * self.H / 1e6
        self.desc = (f"float32 RGB planar {self.IW}x{self.IH}x3 -> {self.W}x{self.H}x3 (scale {scale}); Keys cubic "
                     f"a=-0.5, {self.g.taps} taps, weights normalised per row/column, x then y; repeat_edge")
        self.exact = False

    def halogen_params(self):
        return [f"scale={self.scale}"]

    def make_inputs(self, rng):
        return [rng.random((3, self.IH, self.IW), dtype=np.float32)]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        g = self.g
        inp = hl.ImageParam(F32, 3, "input")
        x, y, c, k = vars_("x", "y", "c", "k")
        cl = hl.BoundaryConditions.repeat_edge(inp, [(0, inp.width()), (0, inp.height())])

        def centre(v):
            return (hl.cast(F32, v) + f32(0.5)) / f32(g.scale) - f32(0.5)

        def begin(v):
            return hl.cast(I32, hl.floor(centre(v) - f32(g.support))) + 1

        funcs = {}

        def kernels(v, axis):
            raw = hl.Func(f"kernel_{axis}_raw")
            raw[v, k] = cubic((hl.cast(F32, begin(v) + k) - centre(v)) * f32(g.shrink))
            r = hl.RDom([(0, g.taps)])
            total = hl.Func(f"kernel_sum_{axis}")
            total[v] = f32(0.0)
            total[v] = total[v] + raw[v, r.x]
            norm = hl.Func(f"kernel_{axis}")
            norm[v, k] = raw[v, k] / total[v]
            funcs[f"kernel_sum_{axis}"] = total
            funcs[f"kernel_{axis}"] = norm
            return norm

        kernel_x = kernels(x, "x")
        kernel_y = kernels(y, "y")
        rx = hl.RDom([(0, g.taps)])
        resized_x = hl.Func("resized_x")
        resized_x[x, y, c] = f32(0.0)
        resized_x[x, y, c] = resized_x[x, y, c] + kernel_x[x, rx.x] * cl[begin(x) + rx.x, y, c]
        ry = hl.RDom([(0, g.taps)])
        resized_y = hl.Func("resized_y")
        resized_y[x, y, c] = f32(0.0)
        resized_y[x, y, c] = resized_y[x, y, c] + kernel_y[y, ry.x] * resized_x[x, begin(y) + ry.x, c]
        out = hl.Func("resize")
        out[x, y, c] = resized_y[x, y, c]
        inp.set_estimates([(0, self.IW), (0, self.IH), (0, 3)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        funcs.update(resized_x=resized_x, resized_y=resized_y, out=out)
        return Built([inp], out, funcs, dict(x=x, y=y, c=c, k=k))

    def hand(self, b):
        # Weights at root; parallel strips of 16 output rows vectorized by 8: resized_x per
        # strip, resized_y per vector of output pixels, both vectorized in both stages.
        # The weight sums are reductions: Halogen computes an unscheduled reduction at root,
        # Halide would recompute it per use, so they go to root here explicitly.
        x, y = b.v["x"], b.v["y"]
        f = b.f
        for name in ("kernel_sum_x", "kernel_sum_y", "kernel_x", "kernel_y"):
            f[name].compute_root()
        yo, yi = vars_("yo", "yi")
        f["out"].split(y, yo, yi, 16).parallel(yo).vectorize(x, 8)
        f["resized_y"].compute_at(f["out"], x).vectorize(x, 8)
        f["resized_y"].update(0).vectorize(x, 8)
        f["resized_x"].compute_at(f["out"], yo).vectorize(x, 8)
        f["resized_x"].update(0).vectorize(x, 8)

    def _weights(self, n_out):
        g = self.g
        o = np.arange(n_out, dtype=np.float32)
        centre = (o + np.float32(0.5)) / g.scale - np.float32(0.5)
        begin = np.floor(centre - g.support).astype(np.int32) + 1
        raw = [cubic_np(((begin + t).astype(np.float32) - centre) * g.shrink) for t in range(g.taps)]
        total = np.zeros(n_out, np.float32)
        for r in raw:
            total = total + r
        return begin, [r / total for r in raw]

    def numpy_prep(self, inputs):
        return {"wx": self._weights(self.W), "wy": self._weights(self.H)}

    def numpy(self, inputs, out, st):
        a = inputs[0]
        (bx, kx), (by, ky) = st["wx"], st["wy"]
        rows = np.arange(by.min(), by.max() + self.g.taps)
        src = a[:, np.clip(rows, 0, self.IH - 1)]  # every row the output reads
        rx = np.zeros((3, len(rows), self.W), np.float32)
        for t, w in enumerate(kx):
            rx = rx + w[None, None, :] * src[:, :, np.clip(bx + t, 0, self.IW - 1)]
        acc = np.zeros((3, self.H, self.W), np.float32)
        for t, w in enumerate(ky):
            acc = acc + w[None, :, None] * rx[:, by + t - rows[0], :]
        np.copyto(out, acc)

    opencv_note = ("cv2.resize INTER_CUBIC on interleaved HxWx3 (Keys a = -0.75, no anti-aliasing): "
                   "a different kernel, not compared")

    def opencv_prep(self, inputs):
        return {"src": np.ascontiguousarray(np.moveaxis(inputs[0], 0, -1)),
                "dst": np.empty((self.H, self.W, 3), np.float32)}

    def opencv(self, st):
        cv2.resize(st["src"], (self.W, self.H), dst=st["dst"], interpolation=cv2.INTER_CUBIC)
        return None
