"""Halide port of Halogen's `pyramid_blend` app (halogen-apps/src/pyramid_blend.rs and
halogen-apps/src/pyramid.rs).

Burt-Adelson multi-resolution blending of two float32 planar RGB images a and b along a
float32 mask (1 takes a, 0 takes b): the Gaussian pyramid of the mask and the Laplacian
pyramids of both images, blended per level as mask * a + (1 - mask) * b, then collapsed.

Pyramids: [1 4 6 4 1] / 16 down-sampling at even coordinates (x pass, then y pass); level
j + 1 of a w x h level is ceil(w / 2) x ceil(h / 2); expansion by the same kernel on
zero-inserted samples, x 4: (c[i-1] + c[i+1] + 6 c[i]) / 8 at 2i, (c[i] + c[i+1]) / 2 at
2i + 1.  Every stencil clamps the coordinate it moves along to its source level's region
(repeat_edge per level).  Both images go through one pyramid with a fourth dimension k
(0 = a, 1 = b).  Every sum runs in the same order as in the Halogen app.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

F32 = hl.Float(32)


def f32(v):
    return hl.f32(float(v))


def level_extents(w, h, levels):
    """Each level's (width, height): Halide Exprs or ints, ceil-halved level after level."""
    ext = [(w, h)]
    for _ in range(1, levels):
        pw, ph = ext[-1]
        ext.append(((pw + 1) // 2, (ph + 1) // 2) if isinstance(pw, int) else ((pw + 1) / 2, (ph + 1) / 2))
    return ext


def taps5(a, b, c, d, e):
    return ((a + e) + f32(4) * (b + d) + f32(6) * c) * f32(0.0625)


def expand(v, prev, here, nxt):
    return hl.select(v % 2 == 0, (prev + nxt + f32(6) * here) * f32(0.125), (here + nxt) * f32(0.5))


class Sampler:
    """Pyramid Funcs over (x, y, *rest): stencils move along x and y, rest is carried."""

    def __init__(self, x, y, rest, funcs):
        self.x, self.y, self.rest, self.funcs = x, y, list(rest), funcs

    def a(self, u, v):
        return tuple([u, v] + self.rest)

    def func(self, name):
        f = hl.Func(name)
        self.funcs[name] = f
        return f

    def down(self, f, fine, name):
        x, y = self.x, self.y
        dx, dy = self.func(name + "_dx"), self.func(name + "_dy")
        fx = [f[self.a(hl.clamp(2 * x + d, 0, fine[0] - 1), y)] for d in (-2, -1, 0, 1, 2)]
        dx[self.a(x, y)] = taps5(*fx)
        gy = [dx[self.a(x, hl.clamp(2 * y + d, 0, fine[1] - 1))] for d in (-2, -1, 0, 1, 2)]
        dy[self.a(x, y)] = taps5(*gy)
        return dx, dy

    def up(self, f, coarse, name):
        x, y = self.x, self.y
        ux, uy = self.func(name + "_ux"), self.func(name + "_uy")
        fx = [f[self.a(hl.clamp(x / 2 + d, 0, coarse[0] - 1), y)] for d in (-1, 0, 1)]
        ux[self.a(x, y)] = expand(x, *fx)
        gy = [ux[self.a(x, hl.clamp(y / 2 + d, 0, coarse[1] - 1))] for d in (-1, 0, 1)]
        uy[self.a(x, y)] = expand(y, *gy)
        return ux, uy

    def gaussian(self, base, ext, name):
        levels, x_pass = [base], [None]
        for j in range(1, len(ext)):
            dx, dy = self.down(levels[j - 1], ext[j - 1], f"{name}{j}")
            levels.append(dy)
            x_pass.append(dx)
        return levels, x_pass

    def laplacian(self, g, ext, name):
        n = len(g)
        levels, up_x = [], []
        for j in range(n - 1):
            ux, uy = self.up(g[j + 1], ext[j + 1], f"{name}_up{j}")
            lj = self.func(f"{name}{j}")
            v = self.a(self.x, self.y)
            lj[v] = g[j][v] - uy[v]
            levels.append(lj)
            up_x.append(ux)
        return levels + [g[n - 1]], up_x + [None]

    def collapse(self, detail, ext, name):
        n = len(detail)
        levels, up_x = [None] * n, [None] * n
        levels[n - 1] = detail[n - 1]
        v = self.a(self.x, self.y)
        for j in range(n - 2, -1, -1):
            ux, uy = self.up(levels[j + 1], ext[j + 1], f"{name}_up{j}")
            r = self.func(f"{name}{j}")
            r[v] = detail[j][v] + uy[v]
            levels[j], up_x[j] = r, ux
        return levels, up_x


def strips(f, x, y, rows, tail=hl.TailStrategy.Auto):
    f.split(y, y, hl.Var("yi"), rows, tail).parallel(y).vectorize(x, 8, tail)


def root_level(f, x, y, region, rows):
    # Halide's shift-inwards tails cannot stay inside a bound narrower than the split (the
    # coarsest levels of a small image); Halogen guards there by itself, Halide is told to.
    f.compute_root().bound(x, 0, region[0]).bound(y, 0, region[1])
    strips(f, x, y, rows, hl.TailStrategy.GuardWithIf)


def schedule_pyramids(b, gaussians):
    """The Halogen apps' shared pyramid hand schedule (pyramid::schedule_hand)."""
    x, y, ext = b.v["x"], b.v["y"], b.ext
    n = len(ext)
    for j in range(1, n):
        for levels, x_pass in gaussians:
            root_level(x_pass[j], x, y, (ext[j][0], ext[j - 1][1]), 8)
            root_level(levels[j], x, y, ext[j], 8)
    for j in range(n - 1, -1, -1):
        if j == 0:
            strips(b.out, x, y, 16)
            r = b.out
        else:
            r = b.collapse[0][j]
            root_level(r, x, y, ext[j], 8)
        if j + 1 < n:
            for ux in (b.collapse[1][j], b.image_l[1][j]):
                ux.compute_at(r, y).vectorize(x, 8)


# ---- NumPy versions of the pyramid operations (arrays (..., h, w), float32 throughout).

def down_np(a):
    h, w = a.shape[-2:]
    xs, ys = 2 * np.arange((w + 1) // 2), 2 * np.arange((h + 1) // 2)
    t = [a[..., np.clip(xs + d, 0, w - 1)] for d in (-2, -1, 0, 1, 2)]
    dx = ((t[0] + t[4]) + np.float32(4) * (t[1] + t[3]) + np.float32(6) * t[2]) * np.float32(0.0625)
    s = [dx[..., np.clip(ys + d, 0, h - 1), :] for d in (-2, -1, 0, 1, 2)]
    return ((s[0] + s[4]) + np.float32(4) * (s[1] + s[3]) + np.float32(6) * s[2]) * np.float32(0.0625)


def up_np(a, w, h):
    hc, wc = a.shape[-2:]
    xs, ys = np.arange(w), np.arange(h)
    t = [a[..., np.clip(xs // 2 + d, 0, wc - 1)] for d in (-1, 0, 1)]
    ux = np.where(xs % 2 == 0, (t[0] + t[2] + np.float32(6) * t[1]) * np.float32(0.125),
                  (t[1] + t[2]) * np.float32(0.5))
    s = [ux[..., np.clip(ys // 2 + d, 0, hc - 1), :] for d in (-1, 0, 1)]
    return np.where((ys % 2 == 0)[:, None], (s[0] + s[2] + np.float32(6) * s[1]) * np.float32(0.125),
                    (s[1] + s[2]) * np.float32(0.5))


def gaussian_np(a, levels):
    g = [a]
    for _ in range(1, levels):
        g.append(down_np(g[-1]))
    return g


def laplacian_np(g):
    return [g[j] - up_np(g[j + 1], g[j].shape[-1], g[j].shape[-2]) for j in range(len(g) - 1)] + [g[-1]]


def collapse_np(detail):
    acc = detail[-1]
    for d in reversed(detail[:-1]):
        acc = d + up_np(acc, d.shape[-1], d.shape[-2])
    return acc


class PyramidBlend:
    name = "pyramid_blend"
    title = "Laplacian-pyramid blend (Burt-Adelson) of two float32 RGB planar images along a mask"
    # Variants not attempted (as halide_bench.py's INFEASIBLE): the name and why.
    infeasible = {"inline": "every pyramid level inlined into the next: recomputation grows ~25x per level, "
                            "not attempted"}

    def __init__(self, W=3072, H=2048, levels=5):
        self.W, self.H, self.levels = W, H, levels
        self.mp = W * H / 1e6
        self.desc = (f"float32 RGB planar {W}x{H}x3 a and b, float32 {W}x{H} mask; {levels} levels; [1 4 6 4 1]/16 "
                     "down (ceil sizes), x4 zero-insert expand; clamp per level; mask*a + (1-mask)*b per level")
        self.exact = False

    def halogen_params(self):
        return [f"levels={self.levels}"]

    def make_inputs(self, rng):
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float64)
        base = 0.45 + 0.3 * np.sin(xx / 97.0 + yy / 151.0) * np.cos(yy / 71.0)
        a = np.clip(np.stack([base * f + 0.04 * rng.standard_normal((H, W)) for f in (1.0, 0.9, 0.8)]), 0, 1)
        b = np.clip(np.stack([0.5 + 0.35 * f * np.sin(xx / 13.0 + i) * np.cos(yy / 17.0)
                              + 0.03 * rng.standard_normal((H, W)) for i, f in enumerate((0.9, 0.6, 0.3))]), 0, 1)
        mask = np.where(2 * xx < W, 1.0, 0.0)
        return [a.astype(np.float32), b.astype(np.float32), mask.astype(np.float32)]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        a = hl.ImageParam(F32, 3, "a")
        bb = hl.ImageParam(F32, 3, "b")
        mask = hl.ImageParam(F32, 2, "mask")
        x, y, c, k = vars_("x", "y", "c", "k")
        funcs = {}
        ext = level_extents(a.width(), a.height(), self.levels)
        images = hl.Func("images")
        images[x, y, c, k] = hl.select(k == 0, a[x, y, c], bb[x, y, c])
        mask_base = hl.Func("mask_base")
        mask_base[x, y] = mask[x, y]
        four = Sampler(x, y, [c, k], funcs)
        image_g = four.gaussian(images, ext, "image_g")
        image_l = four.laplacian(image_g[0], ext, "image_l")
        mask_g = Sampler(x, y, [], funcs).gaussian(mask_base, ext, "mask_g")
        blended = []
        for j in range(self.levels):
            f = hl.Func(f"blended{j}")
            m, lj = mask_g[0][j][x, y], image_l[0][j]
            f[x, y, c] = m * lj[x, y, c, 0] + (f32(1) - m) * lj[x, y, c, 1]
            blended.append(f)
        collapse = Sampler(x, y, [c], funcs).collapse(blended, ext, "collapse")
        out = hl.Func("pyramid_blend")
        out[x, y, c] = collapse[0][0][x, y, c]
        for p in (a, bb):
            p.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        mask.set_estimates([(0, self.W), (0, self.H)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        funcs.update(images=images, out=out)
        built = Built([a, bb, mask], out, funcs, dict(x=x, y=y, c=c, k=k))
        built.ext, built.image_g, built.image_l, built.mask_g, built.collapse = ext, image_g, image_l, mask_g, collapse
        return built

    def hand(self, b):
        # Every level above the base at root over exactly its region, each down-sampling's
        # x pass its own root stage, parallel strips of 8 rows, vectorized by 8; Laplacian
        # and blended levels inlined into the collapse, whose expansions' x passes are
        # computed per strip; the output in parallel strips of 16 rows.
        schedule_pyramids(b, [b.image_g, b.mask_g])

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        a, b, m = inputs
        la = laplacian_np(gaussian_np(a, self.levels))
        lb = laplacian_np(gaussian_np(b, self.levels))
        gm = gaussian_np(m, self.levels)
        blended = [g[None] * x + (np.float32(1) - g[None]) * y for g, x, y in zip(gm, la, lb)]
        np.copyto(out, collapse_np(blended))

    opencv_note = ("cv2.pyrDown (BORDER_REPLICATE) / cv2.pyrUp (only BORDER_DEFAULT = reflect-101) on interleaved "
                   "HxWx3, blend and collapse with cv2.multiply/add/subtract: the same filters, but pyrUp "
                   "reflects at the borders, so pixels near the edges differ")

    def opencv_prep(self, inputs):
        a, b, m = inputs
        inter = lambda v: np.ascontiguousarray(np.moveaxis(v, 0, -1))  # noqa: E731
        return {"a": inter(a), "b": inter(b), "m": np.ascontiguousarray(np.repeat(m[:, :, None], 3, axis=2)),
                "ones": np.ones((self.H, self.W, 3), np.float32)}

    def opencv(self, st):
        sizes = level_extents(self.W, self.H, self.levels)

        def gauss(img):
            g = [img]
            for j in range(1, self.levels):
                g.append(cv2.pyrDown(g[-1], dstsize=sizes[j], borderType=cv2.BORDER_REPLICATE))
            return g

        def lap(g):
            return [cv2.subtract(g[j], cv2.pyrUp(g[j + 1], dstsize=sizes[j])) for j in range(self.levels - 1)] + [g[-1]]

        la, lb, gm = lap(gauss(st["a"])), lap(gauss(st["b"])), gauss(st["m"])
        blended = []
        for j in range(self.levels):
            inv = cv2.subtract(st["ones"][:sizes[j][1], :sizes[j][0]], gm[j])
            blended.append(cv2.add(cv2.multiply(gm[j], la[j]), cv2.multiply(inv, lb[j])))
        acc = blended[-1]
        for j in range(self.levels - 2, -1, -1):
            acc = cv2.add(blended[j], cv2.pyrUp(acc, dstsize=sizes[j]))
        return np.moveaxis(acc, -1, 0)
