"""Halide port of Halogen's `max_filter` app (halogen-apps/src/max_filter.rs).

Max filter (grayscale dilation) over a (2r+1)^2 square of float32 planar RGB, written
separably as two reductions over an RDom that start from their first tap (no infinities),
repeat_edge in x and y.  Same hand schedule as the Halogen app.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_


class MaxFilter:
    name = "max_filter"
    title = "max filter (dilation), float32 RGB planar"

    def __init__(self, W=1920, H=1080, radius=4):
        self.W, self.H, self.r = W, H, radius
        self.mp = W * H / 1e6
        self.desc = (f"float32 RGB planar {W}x{H}x3, radius {radius} ({2 * radius + 1}x{2 * radius + 1} square); "
                     "max_x = reduction over x taps, max_y = reduction of max_x over y taps; repeat_edge")
        self.exact = True

    def halogen_params(self):
        return [f"radius={self.r}"]

    def make_inputs(self, rng):
        return [rng.random((3, self.H, self.W), dtype=np.float32)]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        r = self.r
        inp = hl.ImageParam(hl.Float(32), 3, "input")
        x, y, c = vars_("x", "y", "c")
        cl = hl.BoundaryConditions.repeat_edge(inp, [(0, inp.width()), (0, inp.height())])
        # Taps -r+1 ..= r; tap -r is the initial value.
        rx = hl.RDom([(1 - r, 2 * r)])
        max_x = hl.Func("max_x")
        max_x[x, y, c] = cl[x - r, y, c]
        max_x[x, y, c] = hl.max(max_x[x, y, c], cl[x + rx.x, y, c])
        ry = hl.RDom([(1 - r, 2 * r)])
        max_y = hl.Func("max_y")
        max_y[x, y, c] = max_x[x, y - r, c]
        max_y[x, y, c] = hl.max(max_y[x, y, c], max_x[x, y + ry.x, c])
        out = hl.Func("max_filter")
        out[x, y, c] = max_y[x, y, c]
        inp.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        return Built([inp], out, dict(max_x=max_x, max_y=max_y, out=out), dict(x=x, y=y, c=c))

    def hand(self, b):
        # Strips of 32 rows in parallel, vectorized by 8: max_x per strip, max_y per vector of
        # output pixels, both vectorized in both of their stages.
        x, y = b.v["x"], b.v["y"]
        yo, yi = vars_("yo", "yi")
        f = b.f
        f["out"].split(y, yo, yi, 32).parallel(yo).vectorize(x, 8)
        f["max_y"].compute_at(f["out"], x).vectorize(x, 8)
        f["max_y"].update(0).vectorize(x, 8)
        f["max_x"].compute_at(f["out"], yo).vectorize(x, 8)
        f["max_x"].update(0).vectorize(x, 8)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        H, W, r = self.H, self.W, self.r
        p = np.pad(inputs[0], ((0, 0), (r, r), (r, r)), mode="edge")
        mx = p[:, :, 0:W].copy()
        for d in range(1, 2 * r + 1):
            np.maximum(mx, p[:, :, d:d + W], out=mx)
        np.copyto(out, mx[:, 0:H])
        for d in range(1, 2 * r + 1):
            np.maximum(out, mx[:, d:d + H], out=out)

    opencv_note = "cv2.dilate with a (2r+1)^2 rectangle, BORDER_REPLICATE, on interleaved HxWx3: the same values"

    def opencv_prep(self, inputs):
        k = 2 * self.r + 1
        return {"src": np.ascontiguousarray(np.moveaxis(inputs[0], 0, -1)),
                "kernel": np.ones((k, k), np.uint8), "dst": np.empty((self.H, self.W, 3), np.float32)}

    def opencv(self, st):
        cv2.dilate(st["src"], st["kernel"], dst=st["dst"], borderType=cv2.BORDER_REPLICATE)
        return np.moveaxis(st["dst"], -1, 0)
