"""Halide port of Halogen's `wavelet` app (halogen-apps/src/wavelet.rs).

One level of the forward Daubechies D4 transform of a float32 gray image, along x then y
(Halide's apps/wavelet transforms along x only; this is its two-dimensional version): the
input read through repeat_edge; the x pass gives a low and a high half-width image, the y
pass filters each along y.  The output is W x H x 4 for a 2W x 2H input, the sub-bands
along the third dimension named by the filter in x then in y: 0 LL, 1 LH, 2 HL, 3 HH.
The filter sums run in the same order as in the Halogen app.
"""
import numpy as np
import halide as hl

from halide_bench import Built, vars_

F32 = hl.Float(32)

# (1 + sqrt 3, 3 + sqrt 3, 3 - sqrt 3, 1 - sqrt 3) / (4 sqrt 2), rounded to float32 as
# Halide's apps/wavelet and the Halogen app round them.
D = [np.float32(v) for v in (0.4829629131445341, 0.8365163037378077, 0.2241438680420134, -0.1294095225512603)]


def f32(v):
    return hl.f32(float(v))


def low(a, b, c, d):
    return f32(D[0]) * a + f32(D[1]) * b + f32(D[2]) * c + f32(D[3]) * d


def high(a, b, c, d):
    return f32(D[3]) * a - f32(D[2]) * b + f32(D[1]) * c - f32(D[0]) * d


def low_np(a, b, c, d):
    return D[0] * a + D[1] * b + D[2] * c + D[3] * d


def high_np(a, b, c, d):
    return D[3] * a - D[2] * b + D[1] * c - D[0] * d


class Wavelet:
    name = "wavelet"
    title = "Daubechies D4 forward wavelet transform (x then y), float32 gray, 4 sub-bands"

    def __init__(self, W=2048, H=1536):
        # W x H is the size of each sub-band (the output's x and y extents, the size the
        # Halogen app's make_inputs is given); the input is 2W x 2H.
        self.W, self.H = W, H
        self.mp = W * H / 1e6
        self.desc = (f"float32 gray {2 * W}x{2 * H} in, {W}x{H}x4 out (LL, LH, HL, HH); D4 filters at even "
                     "positions, x pass then y pass; repeat_edge")
        self.exact = False

    def make_inputs(self, rng):
        # Smooth waves, a step and noise (Halogen's synth::smooth_gray, drawn with numpy).
        H2, W2 = 2 * self.H, 2 * self.W
        yy, xx = np.mgrid[0:H2, 0:W2].astype(np.float64)
        base = 0.5 + 0.25 * np.sin(xx / 37.0) * np.cos(yy / 23.0) + np.where(xx > W2 / 2, 0.2, 0.0)
        return [np.clip(base + 0.05 * rng.standard_normal((H2, W2)), 0, 1).astype(np.float32)]

    def make_output(self):
        return np.empty((4, self.H, self.W), np.float32)

    def build(self):
        inp = hl.ImageParam(F32, 2, "input")
        x, y, c = vars_("x", "y", "c")
        clamped = hl.BoundaryConditions.repeat_edge(inp)
        wavelet_x = hl.Func("wavelet_x")
        ix = [clamped[2 * x + d, y] for d in (-1, 0, 1, 2)]
        wavelet_x[x, y, c] = hl.select(c == 0, low(*ix), high(*ix))
        # Band c filters along x with c / 2 and along y with c % 2.
        out = hl.Func("wavelet")
        wy = [wavelet_x[x, 2 * y + d, c / 2] for d in (-1, 0, 1, 2)]
        out[x, y, c] = hl.select(c % 2 == 0, low(*wy), high(*wy))
        inp.set_estimates([(0, 2 * self.W), (0, 2 * self.H)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 4)])
        return Built([inp], out, dict(wavelet_x=wavelet_x, out=out), dict(x=x, y=y, c=c))

    def hand(self, b):
        # Halide's app unrolls the filter dimension; here the output goes in parallel strips
        # of 16 rows, the four bands unrolled in each row, vectorized by 8; the x pass slides
        # down each strip (stored per strip, computed per output row), its two filters
        # unrolled, vectorized by 8.
        x, y, c = b.v["x"], b.v["y"], b.v["c"]
        yo, yi = vars_("yo", "yi")
        out, wx = b.f["out"], b.f["wavelet_x"]
        out.bound(c, 0, 4).split(y, yo, yi, 16).reorder(x, c, yi, yo).parallel(yo).vectorize(x, 8).unroll(c)
        wx.store_at(out, yo).compute_at(out, yi).bound(c, 0, 2).reorder(x, c, y).vectorize(x, 8).unroll(c)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        a = inputs[0]
        H2, W2 = a.shape
        xs, ys = 2 * np.arange(self.W), 2 * np.arange(self.H)
        tx = [a[:, np.clip(xs + d, 0, W2 - 1)] for d in (-1, 0, 1, 2)]
        for cx, half in enumerate((low_np(*tx), high_np(*tx))):
            ty = [half[np.clip(ys + d, 0, H2 - 1)] for d in (-1, 0, 1, 2)]
            out[2 * cx] = low_np(*ty)
            out[2 * cx + 1] = high_np(*ty)

    # No OpenCV equivalent (OpenCV has no wavelet transform).
    opencv_note = None
