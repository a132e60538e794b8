"""Halide port of Halogen's `nl_means` app (halogen-apps/src/nl_means.rs), which is
Halide's apps/nl_means with its run-time parameters made constants and exp for fast_exp.

Non-local means of float32 planar RGB, repeat_edge: for every offset (dx, dy) of a
search_area^2 window, d = sum over channels 0, 1, 2 of (in(x, y) - in(x + dx, y + dy))^2;
blur_d = d box-summed over the patch_size^2 patch (y pass then x pass, each from the first
tap to the last); w = exp(blur_d * k), k = -1 / (((sigma * sigma) * p) * p) in float32;
sums over the window (dy outer, dx inner) of w * (r, g, b, 1); out = clamp(sum_c / sum_3, 0, 1).
Same hand schedule as the Halogen app (Halide's CPU schedule for this app).
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

F32 = hl.Float(32)


def f32(v):
    return hl.f32(float(v))


def weight_scale(sigma, patch_size):
    s, p = np.float32(sigma), np.float32(patch_size)
    return np.float32(-1) / (s * s * p * p)


class NlMeans:
    name = "nl_means"
    title = "non-local means denoising, float32 RGB planar"

    def __init__(self, W=1536, H=1024, patch_size=7, search_area=7, sigma=0.12):
        self.W, self.H = W, H
        self.p, self.s, self.sigma = patch_size, search_area, sigma
        self.mp = W * H / 1e6
        self.desc = (f"float32 RGB planar {W}x{H}x3, patch {patch_size}x{patch_size}, search window "
                     f"{search_area}x{search_area}, sigma {sigma} (compile-time); exp weights "
                     "exp(-patch distance / (sigma^2 p^2)); repeat_edge")
        self.exact = False

    def halogen_params(self):
        return [f"patch_size={self.p}", f"search_area={self.s}", f"sigma={self.sigma}"]

    def make_inputs(self, rng):
        # Smooth colour waves with edges, plus Gaussian noise of 0.05: something to remove.
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        chans = [0.5 + 0.3 * np.sin(xx / 41.0 + k) * np.cos(yy / 29.0) + 0.15 * (((xx // 64) + (yy // 48)) % 2)
                 for k in (0.0, 0.7, 1.4)]
        img = np.stack(chans) + 0.05 * rng.standard_normal((3, H, W))
        return [np.clip(img, 0, 1).astype(np.float32)]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        inp = hl.ImageParam(F32, 3, "input")
        x, y, c, dx, dy = vars_("x", "y", "c", "dx", "dy")
        clamped = hl.BoundaryConditions.repeat_edge(inp)

        def diff(ch):
            v = clamped[x, y, ch] - clamped[x + dx, y + dy, ch]
            return v * v

        d = hl.Func("d")
        d[x, y, dx, dy] = diff(0) + diff(1) + diff(2)
        half = self.p // 2

        def box(tap):
            acc = tap(-half)
            for k in range(1 - half, half + 1):
                acc = acc + tap(k)
            return acc

        blur_d_y = hl.Func("blur_d_y")
        blur_d_y[x, y, dx, dy] = box(lambda k: d[x, y + k, dx, dy])
        blur_d = hl.Func("blur_d")
        blur_d[x, y, dx, dy] = box(lambda k: blur_d_y[x + k, y, dx, dy])
        w = hl.Func("w")
        w[x, y, dx, dy] = hl.exp(blur_d[x, y, dx, dy] * f32(weight_scale(self.sigma, self.p)))
        cwa = hl.Func("clamped_with_alpha")
        cwa[x, y, c] = hl.select(c == 0, clamped[x, y, 0],
                                 hl.select(c == 1, clamped[x, y, 1], hl.select(c == 2, clamped[x, y, 2], f32(1))))
        s = self.s // 2
        s_dom = hl.RDom([(-s, self.s), (-s, self.s)])
        nlm_sum = hl.Func("non_local_means_sum")
        nlm_sum[x, y, c] = f32(0)
        nlm_sum[x, y, c] = nlm_sum[x, y, c] + w[x, y, s_dom.x, s_dom.y] * cwa[x + s_dom.x, y + s_dom.y, c]
        out = hl.Func("nl_means")
        out[x, y, c] = hl.clamp(nlm_sum[x, y, c] / nlm_sum[x, y, 3], f32(0), f32(1))
        inp.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        funcs = dict(d=d, blur_d_y=blur_d_y, blur_d=blur_d, w=w, cwa=cwa, nlm_sum=nlm_sum, out=out)
        return Built([inp], out, funcs, dict(x=x, y=y, c=c, s_dom=s_dom))

    def hand(self, b):
        # Halide's CPU schedule: 16x8 output tiles in parallel over rows of tiles, vectorized
        # by 8 with the channels just outside the vector; d and blur_d_y per tile for every
        # offset; the sums per vector of output pixels (c bound to 4 and unrolled, offsets
        # outermost); blur_d per vector of the sums.  As in the Halogen app, every vector loop
        # is innermost (output order (xi, c, xo, y) instead of (c, x, y) with x vectorized;
        # no reorder(y, x) of blur_d_y) and w is computed per vector of the sums.
        x, y, c, s_dom = b.v["x"], b.v["y"], b.v["c"], b.v["s_dom"]
        tx, ty, xo, xi = vars_("tx", "ty", "xo", "xi")
        f = b.f
        out = f["out"]
        out.compute_root().tile(x, y, tx, ty, x, y, 16, 8).split(x, xo, xi, 8).reorder(xi, c, xo, y, tx, ty) \
            .vectorize(xi).parallel(ty)
        f["blur_d_y"].compute_at(out, tx).vectorize(x, 8)
        f["d"].compute_at(out, tx).vectorize(x, 8)
        f["nlm_sum"].compute_at(out, xo).reorder(c, x, y).bound(c, 0, 4).unroll(c).vectorize(x, 8)
        f["nlm_sum"].update(0).reorder(c, x, y, s_dom.x, s_dom.y).unroll(c).vectorize(x, 8)
        f["blur_d"].compute_at(f["nlm_sum"], x).vectorize(x, 8)
        f["w"].compute_at(f["nlm_sum"], x).vectorize(x, 8)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        H, W, half, s = self.H, self.W, self.p // 2, self.s // 2
        k = weight_scale(self.sigma, self.p)
        m = half + s
        p = np.pad(inputs[0], ((0, 0), (m, m), (m, m)), mode="edge")  # rows/cols -m .. H+m-1
        centre = p[:, s:H + 2 * half + s, s:W + 2 * half + s]  # rows/cols -half .. H+half-1
        sums = np.zeros((4, H, W), np.float32)
        for oy in range(-s, s + 1):
            for ox in range(-s, s + 1):
                shifted = p[:, s + oy:H + 2 * half + s + oy, s + ox:W + 2 * half + s + ox]
                t = centre - shifted
                t *= t
                d = (t[0] + t[1]) + t[2]
                by = d[0:H]
                for j in range(1, 2 * half + 1):
                    by = by + d[j:H + j]
                bd = by[:, 0:W]
                for j in range(1, 2 * half + 1):
                    bd = bd + by[:, j:W + j]
                wt = np.exp(bd * k)
                sums[0:3] += wt * shifted[:, half:H + half, half:W + half]
                sums[3] += wt
        np.copyto(out, np.clip(sums[0:3] / sums[3], 0, 1))

    opencv_note = ("cv2.fastNlMeansDenoisingColored on the uint8 interleaved image (7x7 template, 7x7 search, "
                   "h = hColor = sigma * 255): a different algorithm (Lab colour space, integer distances, "
                   "weights from a table)")

    def opencv_prep(self, inputs):
        img = np.ascontiguousarray((np.clip(inputs[0], 0, 1) * 255 + 0.5).astype(np.uint8).transpose(1, 2, 0))
        return {"src": img, "h": float(self.sigma * 255)}

    def opencv(self, st):
        cv2.fastNlMeansDenoisingColored(st["src"], None, st["h"], st["h"], self.p, self.s)
        return None  # not comparable
