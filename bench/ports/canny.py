"""Halide port of Halogen's `canny` app (halogen-apps/src/canny.rs).

Canny-style edge detection of uint8 gray, integer throughout: a 5x5 binomial Gaussian
(separable [1 4 6 4 1] in uint16, (sum + 128) / 256), Sobel gradients gx, gy (int16) of the
smoothed image, L1 magnitude |gx| + |gy|, non-maximum suppression along the gradient
direction quantised to 4 directions by integer comparisons (horizontal where
128 |gy| <= 53 |gx|, vertical where 128 |gx| <= 53 |gy|, else the diagonal given by the
signs; kept when >= the minus-side neighbour and > the plus-side one), double threshold
(low, high) and hysteresis approximated by one step: a weak pixel survives when a strong
pixel is in its 3x3 neighbourhood.  Output 255 on edges, 0 elsewhere; repeat_edge.
Same hand schedule as the Halogen app.
"""
import numpy as np
import halide as hl
import cv2

from halide_bench import Built, vars_

TAN_NUM, TAN_DEN = 53, 128


class Canny:
    name = "canny"
    title = "Canny-style edge detection, uint8 gray"

    def __init__(self, W=4000, H=3000, low=50, high=150):
        self.W, self.H, self.low, self.high = W, H, low, high
        self.mp = W * H / 1e6
        self.desc = (f"uint8 gray {W}x{H}; 5x5 binomial blur (uint16, rounded), Sobel (int16), L1 magnitude, "
                     f"4-direction NMS (tan 22.5 = 53/128), thresholds low={low} high={high}, 3x3 one-step "
                     "hysteresis; out 0/255; repeat_edge")
        self.exact = True

    def halogen_params(self):
        return [f"low={self.low}", f"high={self.high}"]

    def make_inputs(self, rng):
        # Shapes with sharp edges over smooth shading, plus noise: strong edges, weak ones
        # next to them and weak ones alone.
        H, W = self.H, self.W
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        img = 0.4 + 0.15 * np.sin(xx / 53.0) * np.cos(yy / 41.0)
        img += 0.3 * (((xx // 97) + (yy // 89)) % 2)
        r = np.hypot(xx - 0.6 * W, yy - 0.5 * H)
        img -= 0.25 * (r < 0.2 * min(W, H))
        img += 0.03 * rng.standard_normal((H, W))
        return [np.round(np.clip(img, 0, 1) * 255).astype(np.uint8)]

    def make_output(self):
        return np.empty((self.H, self.W), np.uint8)

    def build(self):
        inp = hl.ImageParam(hl.UInt(8), 2, "input")
        x, y = vars_("x", "y")
        u8, u16, i16, i32 = hl.UInt(8), hl.UInt(16), hl.Int(16), hl.Int(32)
        cl = hl.BoundaryConditions.repeat_edge(inp)

        def i(dx):
            return hl.cast(u16, cl[x + dx, y])

        blur_x = hl.Func("blur_x")
        blur_x[x, y] = i(-2) + 4 * i(-1) + 6 * i(0) + 4 * i(1) + i(2)

        def b(dy):
            return blur_x[x, y + dy]

        gauss = hl.Func("gauss")
        gauss[x, y] = hl.cast(i16, (b(-2) + 4 * b(-1) + 6 * b(0) + 4 * b(1) + b(2) + 128) / 256)

        def g(dx, dy):
            return gauss[x + dx, y + dy]

        gx, gy = hl.Func("gx"), hl.Func("gy")
        gx[x, y] = (g(1, -1) + 2 * g(1, 0) + g(1, 1)) - (g(-1, -1) + 2 * g(-1, 0) + g(-1, 1))
        gy[x, y] = (g(-1, 1) + 2 * g(0, 1) + g(1, 1)) - (g(-1, -1) + 2 * g(0, -1) + g(1, -1))
        mag = hl.Func("mag")
        mag[x, y] = hl.cast(i16, hl.abs(gx[x, y]) + hl.abs(gy[x, y]))

        ax = hl.cast(i32, hl.abs(gx[x, y]))
        ay = hl.cast(i32, hl.abs(gy[x, y]))
        horizontal = ay * TAN_DEN <= ax * TAN_NUM
        vertical = ax * TAN_DEN <= ay * TAN_NUM
        same_sign = hl.cast(i32, gx[x, y]) * hl.cast(i32, gy[x, y]) > 0

        def m(dx, dy):
            return hl.Expr(mag[x + dx, y + dy])  # an Expr, so that select does not take the Tuple overload

        minus = hl.select(horizontal, m(-1, 0),
                          hl.select(vertical, m(0, -1), hl.select(same_sign, m(-1, -1), m(-1, 1))))
        plus = hl.select(horizontal, m(1, 0), hl.select(vertical, m(0, 1), hl.select(same_sign, m(1, 1), m(1, -1))))
        here = m(0, 0)
        nms = hl.Func("nms")
        nms[x, y] = hl.select((here >= minus) & (here > plus), here, hl.i16(0))
        cls = hl.Func("class")
        v = hl.Expr(nms[x, y])
        cls[x, y] = hl.select(v >= self.high, hl.u8(2), hl.select(v >= self.low, hl.u8(1), hl.u8(0)))

        def c(dx, dy):
            return hl.Expr(cls[x + dx, y + dy])

        around = hl.max(hl.max(hl.max(c(-1, -1), c(0, -1)), hl.max(c(1, -1), c(-1, 0))),
                        hl.max(hl.max(c(1, 0), c(-1, 1)), hl.max(c(0, 1), c(1, 1))))
        out = hl.Func("canny")
        keep = (c(0, 0) == 2) | ((c(0, 0) == 1) & (around == 2))
        out[x, y] = hl.select(keep, hl.u8(255), hl.u8(0))
        inp.set_estimates([(0, self.W), (0, self.H)])
        out.set_estimates([(0, self.W), (0, self.H)])
        funcs = dict(blur_x=blur_x, gauss=gauss, gx=gx, gy=gy, mag=mag, nms=nms, cls=cls, out=out)
        return Built([inp], out, funcs, dict(x=x, y=y))

    def hand(self, b):
        # Tiles of 256x32 in parallel over rows of tiles, vectorized by 16; every stage
        # computed per tile on the tile plus its halo; mag and nms inlined.
        x, y = b.v["x"], b.v["y"]
        xi, yi = vars_("xi", "yi")
        f = b.f
        f["out"].tile(x, y, xi, yi, 256, 32).parallel(y).vectorize(xi, 16)
        for name in ("cls", "gx", "gy", "gauss", "blur_x"):
            f[name].compute_at(f["out"], x).vectorize(x, 16)

    def numpy_prep(self, inputs):
        return {}

    def numpy(self, inputs, out, st):
        H, W = self.H, self.W
        p = np.pad(inputs[0], 5, mode="edge").astype(np.uint16)  # rows/cols -5 .. H+4 / W+4
        # blur_x on rows -5..H+4, cols -3..W+2 (the 5 taps need 2 more on each side).
        bx = p[:, 0:W + 6] + 4 * p[:, 1:W + 7] + 6 * p[:, 2:W + 8] + 4 * p[:, 3:W + 9] + p[:, 4:W + 10]
        # gauss on rows -3..H+2, cols -3..W+2.
        by = bx[0:H + 6] + 4 * bx[1:H + 7] + 6 * bx[2:H + 8] + 4 * bx[3:H + 9] + bx[4:H + 10]
        g = ((by + 128) // 256).astype(np.int16)

        def gs(dx, dy):  # g at offset (dx, dy) over rows/cols -2 .. H+1 / W+1
            return g[1 + dy:H + 5 + dy, 1 + dx:W + 5 + dx]

        gx = (gs(1, -1) + 2 * gs(1, 0) + gs(1, 1)) - (gs(-1, -1) + 2 * gs(-1, 0) + gs(-1, 1))
        gy = (gs(-1, 1) + 2 * gs(0, 1) + gs(1, 1)) - (gs(-1, -1) + 2 * gs(0, -1) + gs(1, -1))
        mag = (np.abs(gx).astype(np.int32) + np.abs(gy)).astype(np.int16)  # rows/cols -2 ..

        def ms(dx, dy):  # mag at offset (dx, dy) over rows/cols -1 .. H / W
            return mag[1 + dy:H + 3 + dy, 1 + dx:W + 3 + dx]

        cx, cy = gx[1:H + 3, 1:W + 3].astype(np.int32), gy[1:H + 3, 1:W + 3].astype(np.int32)
        ax, ay = np.abs(cx), np.abs(cy)
        hor = ay * TAN_DEN <= ax * TAN_NUM
        ver = ax * TAN_DEN <= ay * TAN_NUM
        same = cx * cy > 0
        minus = np.where(hor, ms(-1, 0), np.where(ver, ms(0, -1), np.where(same, ms(-1, -1), ms(-1, 1))))
        plus = np.where(hor, ms(1, 0), np.where(ver, ms(0, 1), np.where(same, ms(1, 1), ms(1, -1))))
        here = ms(0, 0)
        v = np.where((here >= minus) & (here > plus), here, 0)
        cls = np.where(v >= self.high, 2, np.where(v >= self.low, 1, 0)).astype(np.uint8)  # rows/cols -1 ..
        around = np.zeros((H, W), np.uint8)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                if (dx, dy) != (0, 0):
                    np.maximum(around, cls[1 + dy:H + 1 + dy, 1 + dx:W + 1 + dx], out=around)
        c0 = cls[1:H + 1, 1:W + 1]
        np.copyto(out, np.where((c0 == 2) | ((c0 == 1) & (around == 2)), 255, 0).astype(np.uint8))

    opencv_note = ("cv2.GaussianBlur 5x5 (sigma 0: the same [1 4 6 4 1]/16 kernel, BORDER_REPLICATE) then cv2.Canny "
                   "(Sobel 3x3, L1 magnitude, same thresholds) with full hysteresis along edge chains: "
                   "not bit-comparable")

    def opencv_prep(self, inputs):
        return {"src": inputs[0], "blur": np.empty_like(inputs[0]), "dst": np.empty_like(inputs[0])}

    def opencv(self, st):
        cv2.GaussianBlur(st["src"], (5, 5), 0, dst=st["blur"], borderType=cv2.BORDER_REPLICATE)
        cv2.Canny(st["blur"], self.low, self.high, edges=st["dst"], apertureSize=3, L2gradient=False)
        return None  # not comparable
