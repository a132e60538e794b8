"""Halide port of Halogen's `interpolate` app (halogen-apps/src/interpolate.rs), which is
Halide's apps/interpolate.

Multi-scale interpolation of float32 planar RGBA (alpha 1 at sparse samples, 0 elsewhere):
downsampled[0] = (r a, g a, b a, a) of the repeat_edge input; downsampled[l] = [1 2 1] / 4 at
stride 2 of level l - 1, x pass (downx) then y pass, (p(2x-1) + 2 p(2x) + p(2x+1)) * 0.25;
level 4 reads level 3 through clamp(x, 0, width / 8), clamp(y, 0, height / 8);
interpolated[L-1] = downsampled[L-1], interpolated[l] = downsampled[l] + (1 - alpha_l) *
upsampled(interpolated[l+1]) with linear up-sampling (f(x/2) + f((x+1)/2)) / 2 in x then y;
output = rgb / alpha of interpolated[0], 3 channels.  The base level is read by downx[1]
through a copy (Halide's clone_in), which the hand schedule places inside downsampled[1].
Same hand schedule as the Halogen app: Halide's CPU schedule for this app (hand_halide) with
the filled-in levels from 3 up computed at root.
"""
import numpy as np
import halide as hl

from halide_bench import Built, vars_

F32 = hl.Float(32)
CLAMP_LEVEL = 4
ROOT_FROM = 3  # the first filled-in level `hand` computes at root


def f32(v):
    return hl.f32(float(v))


def sparse_alpha(rng, H, W):
    """Alpha 1 at one random pixel of every 4x4 block, one in every 4 pixels along each
    border and the four corners; 0 elsewhere (Halogen's interpolate::sparse_rgba rule)."""
    a = np.zeros((H, W), np.float32)
    for by in range(0, H, 4):
        bh = min(4, H - by)
        for bx in range(0, W, 4):
            bw = min(4, W - bx)
            a[by + rng.integers(bh), bx + rng.integers(bw)] = 1
    for b in range(0, H, 4):
        n = min(4, H - b)
        a[b + rng.integers(n), 0] = 1
        a[b + rng.integers(n), W - 1] = 1
    for b in range(0, W, 4):
        n = min(4, W - b)
        a[0, b + rng.integers(n)] = 1
        a[H - 1, b + rng.integers(n)] = 1
    a[0, 0] = a[0, W - 1] = a[H - 1, 0] = a[H - 1, W - 1] = 1
    return a


class Interpolate:
    name = "interpolate"
    title = "multi-scale interpolation through a 10-level pyramid, float32 RGBA planar"

    def __init__(self, W=3072, H=2048, levels=10):
        self.W, self.H, self.levels = W, H, levels
        self.mp = W * H / 1e6
        self.desc = (f"float32 RGBA planar {W}x{H}x4 in (alpha 1 at ~1/16 of the pixels), RGB out; {levels} levels, "
                     "[1 2 1]/4 stride-2 down, linear up, interpolated = down + (1 - alpha) * up, rgb / alpha; "
                     "repeat_edge, level 4 reads level 3 clamped")
        self.exact = False

    def halogen_params(self):
        return [f"levels={self.levels}"]

    def make_inputs(self, rng):
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        rgb = [0.5 + 0.4 * np.sin(xx / 71.0 + k) * np.cos(yy / 53.0 - k) for k in (0.0, 1.0, 2.0)]
        rgb = np.clip(np.stack(rgb) + 0.02 * rng.standard_normal((3, H, W)), 0, 1)
        alpha = sparse_alpha(rng, H, W)[None]
        return [np.ascontiguousarray(np.concatenate([rgb, alpha]).astype(np.float32))]

    def make_output(self):
        return np.empty((3, self.H, self.W), np.float32)

    def build(self):
        L = self.levels
        inp = hl.ImageParam(F32, 3, "input")
        x, y, c = vars_("x", "y", "c")
        funcs = {}

        def F(name):
            f = hl.Func(name)
            funcs[name] = f
            return f

        clamped = hl.BoundaryConditions.repeat_edge(inp)
        ds = [F("downsampled_0")]
        ds[0][x, y, c] = hl.select(c < 3, clamped[x, y, c] * clamped[x, y, 3], clamped[x, y, 3])
        for l in range(1, L):
            if l == 1:
                prev = F("downsampled_0_in_downx_1")
                prev[x, y, c] = ds[0][x, y, c]
            elif l == CLAMP_LEVEL:
                w = inp.width() / (1 << (l - 1))
                h = inp.height() / (1 << (l - 1))
                prev = F(f"downsampled_{l - 1}_clamped")
                prev[x, y, c] = ds[l - 1][hl.clamp(x, 0, w), hl.clamp(y, 0, h), c]
            else:
                prev = ds[l - 1]
            dx = F(f"downx_{l}")
            dx[x, y, c] = (prev[2 * x - 1, y, c] + f32(2) * prev[2 * x, y, c] + prev[2 * x + 1, y, c]) * f32(0.25)
            d = F(f"downsampled_{l}")
            d[x, y, c] = (dx[x, 2 * y - 1, c] + f32(2) * dx[x, 2 * y, c] + dx[x, 2 * y + 1, c]) * f32(0.25)
            ds.append(d)
        interp = [None] * L
        interp[L - 1] = F(f"interpolated_{L - 1}")
        interp[L - 1][x, y, c] = ds[L - 1][x, y, c]
        for l in range(L - 2, -1, -1):
            ux = F(f"upsampledx_{l}")
            ux[x, y, c] = (interp[l + 1][x / 2, y, c] + interp[l + 1][(x + 1) / 2, y, c]) / f32(2)
            uy = F(f"upsampled_{l}")
            uy[x, y, c] = (ux[x, y / 2, c] + ux[x, (y + 1) / 2, c]) / f32(2)
            alpha = f32(1) - ds[l][x, y, 3]
            interp[l] = F(f"interpolated_{l}")
            interp[l][x, y, c] = ds[l][x, y, c] + alpha * uy[x, y, c]
        out = F("interpolate")
        out[x, y, c] = interp[0][x, y, c] / interp[0][x, y, 3]
        inp.set_estimates([(0, self.W), (0, self.H), (0, 4)])
        out.set_estimates([(0, self.W), (0, self.H), (0, 3)])
        b = Built([inp], out, funcs, dict(x=x, y=y, c=c))
        b.ds, b.interp = ds, interp
        return b

    def hand(self, b):
        # Halide's CPU schedule (hand_halide) with the filled-in levels from ROOT_FROM up at
        # root, as in the Halogen app (its lowering of all levels per output row is slow today).
        self._halide_like(b, ROOT_FROM)

    def hand_halide(self, b):
        # Halide's CPU schedule: levels 1 .. L-2 at root (parallel strips of 8 rows, channels
        # outside x, vectorized by 8); the base level's copy per row inside downsampled_1; the
        # output in parallel strips of 32 rows, channels (3) unrolled between the vector and
        # the rest of the row; every interpolated level per output row, stored per strip.
        self._halide_like(b, None)

    # hand_halide is not in extra_hand: Halogen takes over ten minutes to lower it at ten
    # levels today (bounds inference nests the per-row levels' bounds), so the Halogen app
    # offers it only as a method (Interpolate::schedule_hand_halide).

    def _halide_like(self, b, root_from):
        x, y, c = b.v["x"], b.v["y"], b.v["c"]
        yo, yi, xo, xi = vars_("yo", "yi", "xo", "xi")
        L = self.levels

        def strips(f):
            f.compute_root().reorder(x, c, y).split(y, yo, yi, 8).parallel(yo).vectorize(x, 8)

        for l in range(1, L - 1):
            strips(b.ds[l])
        if L >= 3:  # below 3 levels downsampled_1 is the top level, inlined
            b.f["downsampled_0_in_downx_1"].store_at(b.ds[1], yo).compute_at(b.ds[1], yi) \
                .reorder(c, x, y).unroll(c).vectorize(x, 8)
        b.out.bound(c, 0, 3).split(x, xo, xi, 8).split(y, yo, yi, 32).reorder(xi, c, xo, yi, yo) \
            .unroll(c).vectorize(xi).parallel(yo)
        for l in range(1, L):
            if root_from is not None and l >= root_from:
                strips(b.interp[l])
            else:
                b.interp[l].store_at(b.out, yo).compute_at(b.out, yi).vectorize(x, 8)
