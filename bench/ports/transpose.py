"""Halide port of Halogen's `transpose` app (halogen-apps/src/transpose.rs).

Matrix transpose of uint16 pixels, out(x, y) = in(y, x): memory traffic only.  `hand` and
`hand_staged` are the Halogen app's two schedules.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_


class Transpose:
    name = "transpose"
    title = "matrix transpose, uint16"

    def __init__(self, W=4096, H=4096):
        # W x H is the output; the input is H x W.
        self.W, self.H = W, H
        self.mp = W * H / 1e6
        self.desc = f"uint16 {W}x{H} out, input {H}x{W}; out(x, y) = in(y, x); no arithmetic"
        self.exact = True

    def make_inputs(self, rng):
        return [rng.integers(0, 65536, size=(self.W, self.H), dtype=np.uint16)]

    def make_output(self):
        return np.empty((self.H, self.W), np.uint16)

    def build(self):
        inp = hl.ImageParam(hl.UInt(16), 2, "input")
        x, y = vars_("x", "y")
        block, out = hl.Func("block"), hl.Func("transpose")
        block[x, y] = inp[x, y]
        out[x, y] = block[y, x]
        inp.set_estimates([(0, self.H), (0, self.W)])
        out.set_estimates([(0, self.W), (0, self.H)])
        return Built([inp], out, dict(block=block, out=out), dict(x=x, y=y))

    def hand(self, b):
        # 16x16 tiles, rows of tiles in parallel, vectorized by 8 along output rows.
        x, y = b.v["x"], b.v["y"]
        xi, yi = vars_("xi", "yi")
        b.f["out"].tile(x, y, xi, yi, 16, 16).vectorize(xi, 8).parallel(y)

    def hand_staged(self, b):
        # As hand, and each 16x16 input block is first copied with dense vector reads.
        self.hand(b)
        x = b.v["x"]
        b.f["block"].compute_at(b.f["out"], x).vectorize(x, 8)

    extra_hand = {"hand_staged": "hand_staged"}

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        np.copyto(out, inputs[0].T)

    opencv_note = "cv2.transpose: the same values"

    def opencv_prep(self, inputs):
        return {"src": inputs[0], "dst": np.empty((self.H, self.W), np.uint16)}

    def opencv(self, st):
        cv2.transpose(st["src"], dst=st["dst"])
        return st["dst"]
