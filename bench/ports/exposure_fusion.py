"""Halide port of Halogen's `exposure_fusion` app (halogen-apps/src/exposure_fusion.rs and
halogen-apps/src/pyramid.rs).

Exposure fusion (Mertens, Kautz and Van Reeth 2007) as Forma's section 4.4 builds it: N
float32 planar RGB exposures in [0, 1].  Per exposure and pixel: contrast = |4-neighbour
Laplacian| of gray (0.299 R + 0.587 G + 0.114 B, edges clamped); saturation = standard
deviation of R, G, B; well-exposedness = exp(-12.5 ((R-.5)^2 + (G-.5)^2 + (B-.5)^2)), i.e.
the product of the three per-channel Gaussians of sigma 0.2.  Weight = contrast *
saturation * well-exposedness + 1e-12, normalised across the exposures.  The Gaussian
pyramid of each weight times the Laplacian pyramid of its exposure, summed per level and
collapsed; the result is not clamped.  Pyramids exactly as in pyramid_blend.py ([1 4 6 4
1] / 16, ceil-halved levels, clamp per level).  Every sum runs in the same order as in the
Halogen app.
"""
import os
import sys

import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

# The pyramids are pyramid_blend.py's: make this folder importable however this file was loaded.
_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.append(_HERE)
from pyramid_blend import (Sampler, collapse_np, gaussian_np, laplacian_np, level_extents, root_level,  # noqa: E402
                           schedule_pyramids)

F32 = hl.Float(32)
WELL_EXPOSED_SCALE = 12.5  # 1 / (2 sigma^2), sigma = 0.2
WEIGHT_FLOOR = 1e-12
STOPS = 2.0  # the exposures span +-STOPS around the scene's own


def f32(v):
    return hl.f32(float(v))


def colour_weight(r, g, b):
    mu = (r + g + b) / f32(3)
    dr, dg, db = r - mu, g - mu, b - mu
    saturation = hl.sqrt((dr * dr + dg * dg + db * db) / f32(3))
    er, eg, eb = r - f32(0.5), g - f32(0.5), b - f32(0.5)
    return saturation * hl.exp(f32(-WELL_EXPOSED_SCALE) * (er * er + eg * eg + eb * eb))


def colour_weight_np(r, g, b):
    t = np.float32
    mu = (r + g + b) / t(3)
    dr, dg, db = r - mu, g - mu, b - mu
    saturation = np.sqrt((dr * dr + dg * dg + db * db) / t(3))
    er, eg, eb = r - t(0.5), g - t(0.5), b - t(0.5)
    return saturation * np.exp(t(-WELL_EXPOSED_SCALE) * (er * er + eg * eg + eb * eb))


def exposures_of(scene, n, noise, rng):
    """n exposures of a display-referred scene (3, H, W) in [0, 1]: linear light scaled by
    2^s, s evenly spaced over [-STOPS, STOPS], clipped, gamma 2.2, plus sensor noise."""
    lin = np.clip(scene, 0, 1) ** 2.2
    out = []
    for i in range(n):
        stops = -STOPS + 2 * STOPS * i / (n - 1) if n > 1 else 0.0
        e = np.clip(lin * 2.0 ** stops, 0, 1) ** (1 / 2.2)
        if noise:
            e = e + noise * rng.standard_normal(e.shape)
        out.append(np.clip(e, 0, 1).astype(np.float32))
    return out


class ExposureFusion:
    name = "exposure_fusion"
    title = "exposure fusion (Mertens et al.), N float32 RGB planar exposures through Laplacian pyramids"
    # Variants not attempted (as halide_bench.py's INFEASIBLE): the name and why.
    infeasible = {"inline": "every pyramid level inlined into the next: recomputation grows ~25x per level, "
                            "not attempted"}

    def __init__(self, W=2560, H=1536, levels=5, exposures=3):
        self.W, self.H, self.levels, self.n = W, H, levels, exposures
        self.mp = W * H / 1e6
        self.desc = (f"{exposures} float32 RGB planar {W}x{H}x3 exposures ({STOPS:g} stops each side); "
                     f"{levels} levels; "
                     "weights contrast * saturation * well-exposedness (sigma 0.2) + 1e-12, normalised; "
                     "[1 4 6 4 1]/16 pyramids clamped per level")
        self.exact = False

    def halogen_params(self):
        return [f"levels={self.levels}", f"exposures={self.n}"]

    def make_inputs(self, rng):
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
        base = 0.45 + 0.35 * np.sin(xx / 97.0 + yy / 151.0) * np.cos(yy / 71.0) + np.where(xx > W / 2, 0.15, -0.15)
        scene = np.stack([base * f + 0.02 * rng.standard_normal((H, W)) for f in (1.0, 0.85, 0.7)])
        return exposures_of(scene, self.n, 0.005, rng)

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        n = self.n
        inputs = [hl.ImageParam(F32, 3, f"exposure{i}") for i in range(n)]
        x, y, c, k = vars_("x", "y", "c", "k")
        funcs = {}
        w, h = inputs[0].width(), inputs[0].height()
        ext = level_extents(w, h, self.levels)
        images = hl.Func("images")
        stacked = inputs[n - 1][x, y, c]
        for i in range(n - 2, -1, -1):
            stacked = hl.select(k == i, inputs[i][x, y, c], stacked)
        images[x, y, c, k] = stacked
        px = [images[x, y, ch, k] for ch in range(3)]
        gray = hl.Func("gray")
        gray[x, y, k] = f32(0.299) * px[0] + f32(0.587) * px[1] + f32(0.114) * px[2]

        def g(dx, dy):
            return gray[hl.clamp(x + dx, 0, w - 1), hl.clamp(y + dy, 0, h - 1), k]

        contrast = hl.abs(g(-1, 0) + g(1, 0) + g(0, -1) + g(0, 1) - f32(4) * gray[x, y, k])
        weight = hl.Func("weight")
        weight[x, y, k] = contrast * colour_weight(*px) + f32(WEIGHT_FLOOR)
        weight_sum = hl.Func("weight_sum")
        total = weight[x, y, 0]
        for i in range(1, n):
            total = total + weight[x, y, i]
        weight_sum[x, y] = total
        norm_weight = hl.Func("norm_weight")
        norm_weight[x, y, k] = weight[x, y, k] / weight_sum[x, y]
        weight_g = Sampler(x, y, [k], funcs).gaussian(norm_weight, ext, "weight_g")
        four = Sampler(x, y, [c, k], funcs)
        image_g = four.gaussian(images, ext, "image_g")
        image_l = four.laplacian(image_g[0], ext, "image_l")
        fused = []
        for j in range(self.levels):
            f = hl.Func(f"fused{j}")
            acc = weight_g[0][j][x, y, 0] * image_l[0][j][x, y, c, 0]
            for i in range(1, n):
                acc = acc + weight_g[0][j][x, y, i] * image_l[0][j][x, y, c, i]
            f[x, y, c] = acc
            fused.append(f)
        collapse = Sampler(x, y, [c], funcs).collapse(fused, ext, "collapse")
        out = hl.Func("exposure_fusion")
        out[x, y, c] = collapse[0][0][x, y, c]
        for p in inputs:
            p.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        funcs.update(images=images, gray=gray, weight=weight, weight_sum=weight_sum, norm_weight=norm_weight, out=out)
        built = Built(inputs, out, funcs, dict(x=x, y=y, c=c, k=k))
        built.ext, built.image_g, built.image_l = ext, image_g, image_l
        built.weight_g, built.collapse = weight_g, collapse
        return built

    def hand(self, b):
        # Gray (read by the contrast stencil), the weights (saturation, well-exposedness and
        # contrast fused in, as Forma fuses them) and the normalised weights at root; then
        # the pyramids as in pyramid_blend: every level above the base at root over exactly
        # its region, x passes their own root stages, strips of 8 rows, vectorized by 8.
        x, y = b.v["x"], b.v["y"]
        for name in ("gray", "weight", "norm_weight"):
            root_level(b.f[name], x, y, b.ext[0], 8)
        schedule_pyramids(b, [b.image_g, b.weight_g])

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        t = np.float32
        H, W = self.H, self.W
        weights = []
        for e in inputs:
            gray = t(0.299) * e[0] + t(0.587) * e[1] + t(0.114) * e[2]
            xs, ys = np.arange(W), np.arange(H)
            left, right = gray[:, np.clip(xs - 1, 0, W - 1)], gray[:, np.clip(xs + 1, 0, W - 1)]
            up, down = gray[np.clip(ys - 1, 0, H - 1)], gray[np.clip(ys + 1, 0, H - 1)]
            contrast = np.abs(left + right + up + down - t(4) * gray)
            weights.append(contrast * colour_weight_np(e[0], e[1], e[2]) + t(WEIGHT_FLOOR))
        total = weights[0]
        for wk in weights[1:]:
            total = total + wk
        fused = None
        for e, wk in zip(inputs, weights):
            gw = gaussian_np(wk / total, self.levels)
            le = laplacian_np(gaussian_np(e, self.levels))
            terms = [g[None] * lv for g, lv in zip(gw, le)]
            fused = terms if fused is None else [a + b for a, b in zip(fused, terms)]
        np.copyto(out, collapse_np(fused))

    opencv_note = ("cv2.createMergeMertens(1, 1, 1).process on the exposures as 8-bit BGR (it scales float inputs by "
                   "1/255): a different implementation (per-channel exp, BGR2GRAY weights, log2(min side) levels, "
                   "OpenCV's own borders), not compared")

    def opencv_prep(self, inputs):
        imgs = [np.ascontiguousarray((np.moveaxis(e[::-1], 0, -1) * 255 + 0.5).astype(np.uint8)) for e in inputs]
        return {"imgs": imgs, "merge": cv2.createMergeMertens(1.0, 1.0, 1.0)}

    def opencv(self, st):
        st["merge"].process(st["imgs"])
        return None
