"""Halide port of Halogen's `conv_layer` app (halogen-apps/src/conv_layer.rs), after
Halide's apps/conv_layer.

One 3x3 convolution layer with bias and ReLU (a VDSR layer), float32, Halide's layouts with
channels innermost: input (ci, x, y, n) of (W + 2) x (H + 2) pixels (no boundary condition),
filter (co, kx, ky, ci), bias (co); conv = bias(co) + sum over ky, kx, ci (ci innermost) of
filter(co, kx, ky, ci) * input(ci, x + kx, y + ky, n); out = max(0, conv), (co, x, y, n).
NumPy shapes are the reverse: input (N, H + 2, W + 2, CI), filter (CI, 3, 3, CO), bias (CO,),
output (N, H, W, CO).  Same hand schedule as the Halogen app: Halide's AVX2 schedule with
blocks of 32 channels x 3 columns (Halide's app: 24 x 4 for 128 channels), the block's
columns a loop in conv rather than unrolled, without Halide's .in() staging of filter and
input.
"""
import numpy as np
import halide as hl

from halide_bench import Built, vars_

F32 = hl.Float(32)
VEC, TILE_C, TILE_X = 8, 32, 3


class ConvLayer:
    name = "conv_layer"
    title = "3x3 convolution layer + bias + ReLU (VDSR), float32, 32 -> 32 channels"

    def __init__(self, W=256, H=192, channels_in=32, channels_out=32, batch=4):
        self.W, self.H, self.ci, self.co, self.n = W, H, channels_in, channels_out, batch
        self.mp = W * H / 1e6
        gflop = 2 * 9 * channels_in * channels_out * W * H * batch / 1e9
        self.desc = (f"float32 (c, x, y, n): input {channels_in}x{W + 2}x{H + 2}x{batch}, filter "
                     f"{channels_out}x3x3x{channels_in}, bias {channels_out}; out {channels_out}x{W}x{H}x{batch} "
                     f"= max(0, bias + 3x3xci convolution); {gflop:.1f} GFLOP")
        self.exact = False

    def halogen_params(self):
        return [f"channels_in={self.ci}", f"channels_out={self.co}", f"batch={self.n}"]

    def make_inputs(self, rng):
        a = np.sqrt(6.0 / (9.0 * self.ci))
        inp = rng.random((self.n, self.H + 2, self.W + 2, self.ci), dtype=np.float32)
        filt = rng.uniform(-a, a, (self.ci, 3, 3, self.co)).astype(np.float32)
        bias = rng.uniform(-0.1, 0.1, (self.co,)).astype(np.float32)
        return [inp, filt, bias]

    def make_output(self):
        return np.empty((self.n, self.H, self.W, self.co), np.float32)

    def build(self):
        inp = hl.ImageParam(F32, 4, "input")
        filt = hl.ImageParam(F32, 4, "filter")
        bias = hl.ImageParam(F32, 1, "bias")
        c, x, y, n = vars_("c", "x", "y", "n")
        r = hl.RDom([(0, self.ci), (0, 3), (0, 3)])
        conv = hl.Func("conv")
        conv[c, x, y, n] = bias[c]
        conv[c, x, y, n] = conv[c, x, y, n] + filt[c, r.y, r.z, r.x] * inp[r.x, x + r.y, y + r.z, n]
        out = hl.Func("relu")
        out[c, x, y, n] = hl.max(hl.f32(0.0), conv[c, x, y, n])
        inp.set_estimates([(0, self.ci), (0, self.W + 2), (0, self.H + 2), (0, self.n)])
        filt.set_estimates([(0, self.co), (0, 3), (0, 3), (0, self.ci)])
        bias.set_estimates([(0, self.co)])
        out.set_estimates([(0, self.co), (0, self.W), (0, self.H), (0, self.n)])
        return Built([inp, filt, bias], out, dict(conv=conv, out=out), dict(c=c, x=x, y=y, n=n, r=r))

    def hand(self, b):
        c, x, y, n, r = (b.v[k] for k in ("c", "x", "y", "n", "r"))
        co, ci, xo, xi = vars_("co", "ci", "xo", "xi")
        out, conv = b.f["out"], b.f["conv"]
        out.bound(c, 0, self.co).split(c, co, ci, TILE_C).split(x, xo, xi, TILE_X) \
            .reorder(ci, xi, xo, y, n, co).vectorize(ci, VEC).unroll(ci).unroll(xi) \
            .parallel(y).parallel(n).parallel(co)
        # As in the Halogen app, the block's 3 columns stay a loop in conv (Halide's app
        # unrolls them).
        conv.compute_at(out, xo).vectorize(c, VEC).unroll(c)
        conv.update(0).reorder(c, x, y, r.x, r.y, r.z, n).vectorize(c, VEC).unroll(c).unroll(r.x, 2)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        inp, filt, bias = inputs
        H, W = self.H, self.W
        acc = np.broadcast_to(bias, out.shape).copy()
        for ky in range(3):
            for kx in range(3):
                # (N, H, W, CI) @ (CI, CO): a different order of summation than the pipeline's.
                acc += inp[:, ky:ky + H, kx:kx + W, :] @ filt[:, ky, kx, :]
        np.maximum(acc, 0, out=out)
