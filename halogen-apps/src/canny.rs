//! Canny-style edge detection of `u8` gray (Forma's Canny benchmark), in integer arithmetic
//! throughout so every schedule gives exactly the reference's pixels:
//!
//! 1. a 5×5 binomial Gaussian, separable `[1 4 6 4 1]` twice in `u16`, rounded back to
//!    `0..=255` as `(sum + 128) / 256`;
//! 2. Sobel gradients `gx`, `gy` of the smoothed image (the 3×3 kernels `[1 2 1] ⊗ [-1 0 1]`),
//!    `i16`, and the L1 magnitude `|gx| + |gy|` (at most 2040);
//! 3. non-maximum suppression along the gradient direction quantised to 4 directions without
//!    `atan`: horizontal where `128 |gy| <= 53 |gx|` (53/128 ≈ tan 22.5°), vertical where
//!    `128 |gx| <= 53 |gy|`, otherwise the diagonal `(1, 1)` when `gx` and `gy` have the same
//!    sign and `(1, -1)` when not; a pixel is kept when its magnitude is `>=` the neighbour on
//!    the minus side and `>` the one on the plus side (of a plateau two pixels wide, one
//!    survives);
//! 4. double threshold (parameters `low` = 50 and `high` = 150, on the L1 magnitude): strong
//!    pixels are kept magnitudes `>= high`, weak ones `>= low`;
//! 5. hysteresis approximated by pure functions: a weak pixel survives when a strong pixel
//!    is in its 3×3 neighbourhood. True hysteresis follows chains of weak pixels any distance
//!    from a strong one, a data-dependent flood fill that no stencil expresses; one step of it
//!    keeps most of the edges that matter.
//!
//! The output is `255` on edges and `0` elsewhere. The borders use `repeat_edge` on the
//! input; every later stage is defined everywhere, so no other boundary condition is needed.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{canny::Canny, App};
//! let app = Canny::build("hand").unwrap();
//! let inputs = app.make_inputs(40, 24, 3);
//! assert_eq!(app.run(&Target::host(), &inputs).unwrap(), app.reference(&inputs).unwrap());
//! ```

use crate::common;
use crate::{App, AppError, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The edge detector's Funcs and input.
pub struct Canny {
    /// Gray `u8` input.
    pub input: ImageParam,
    /// `[1 4 6 4 1]` along `x`, `u16`.
    pub blur_x: Func,
    /// `[1 4 6 4 1]` along `y` of `blur_x`, rounded back to `0..=255`, `i16`.
    pub gauss: Func,
    /// Horizontal Sobel gradient, `i16`.
    pub gx: Func,
    /// Vertical Sobel gradient, `i16`.
    pub gy: Func,
    /// `|gx| + |gy|`, `i16`.
    pub mag: Func,
    /// The magnitude where it is a local maximum along the gradient, else 0, `i16`.
    pub nms: Func,
    /// 2 for strong pixels, 1 for weak ones, 0 for the rest, `u8`.
    pub class: Func,
    /// The output: 255 on edges, 0 elsewhere.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// The weak threshold on the L1 magnitude.
    pub low: i32,
    /// The strong threshold on the L1 magnitude.
    pub high: i32,
}

// No `naive`: with every stage inlined, each output pixel is an expression of thousands
// of nodes (9 classifications × 3 magnitudes × 12 smoothed pixels × 25 input reads) and
// lowering it takes minutes.
const SCHEDULES: &[&str] = &["root", "hand"];
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "low",
        default: 50.0,
        help: "weak-edge threshold on |gx| + |gy| (at most high)",
        min: 1.0,
        max: MAX_MAG,
        kind: ParamKind::Integer,
    },
    ParamSpec {
        name: "high",
        default: 150.0,
        help: "strong-edge threshold on |gx| + |gy|",
        min: 1.0,
        max: MAX_MAG,
        kind: ParamKind::Integer,
    },
];

/// `tan(22.5°) ≈ TAN_NUM / TAN_DEN`: the boundary between the axis directions and the
/// diagonals in the direction quantisation.
const TAN_NUM: i32 = 53;
const TAN_DEN: i32 = 128;

/// The largest L1 Sobel magnitude of a `0..=255` image.
const MAX_MAG: f64 = 2040.0;

impl Default for Canny {
    fn default() -> Self {
        Canny::new()
    }
}

impl Canny {
    /// Builds the algorithm with `low = 50`, `high = 150` (no schedule).
    pub fn new() -> Canny {
        Canny::with_thresholds(50, 150)
    }

    /// Builds the algorithm from `config` (`low`, `high`).
    pub fn with_config(config: &Config) -> Result<Canny> {
        let v = config.resolve("canny", PARAMS)?;
        if v[0] > v[1] {
            return Err(AppError::Param {
                app: "canny",
                message: format!("low must not exceed high, got low = {} and high = {}", v[0], v[1]),
            });
        }
        Ok(Canny::with_thresholds(v[0] as i32, v[1] as i32))
    }

    /// Builds the algorithm with the given thresholds (no schedule).
    pub fn with_thresholds(low: i32, high: i32) -> Canny {
        let input = ImageParam::new(Type::u8(), 2, "input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let cl = boundary::repeat_edge(&input, &input.bounds());
        let i = |dx: i32| cl.at((x + dx, y)).cast::<u16>();
        let blur_x = Func::new("blur_x");
        blur_x.def((x, y), i(-2) + 4 * i(-1) + 6 * i(0) + 4 * i(1) + i(2));
        let b = |dy: i32| blur_x.at((x, y + dy));
        let gauss = Func::new("gauss");
        // At most 256 * 255 + 128: no u16 overflow.
        gauss.def((x, y), ((b(-2) + 4 * b(-1) + 6 * b(0) + 4 * b(1) + b(2) + 128) / 256).cast::<i16>());
        let g = |dx: i32, dy: i32| gauss.at((x + dx, y + dy));
        let gx = Func::new("gx");
        gx.def((x, y), (g(1, -1) + 2 * g(1, 0) + g(1, 1)) - (g(-1, -1) + 2 * g(-1, 0) + g(-1, 1)));
        let gy = Func::new("gy");
        gy.def((x, y), (g(-1, 1) + 2 * g(0, 1) + g(1, 1)) - (g(-1, -1) + 2 * g(0, -1) + g(1, -1)));
        let mag = Func::new("mag");
        // abs of an i16 is a u16; the sum (at most 2040) goes back to i16.
        mag.def((x, y), (abs(gx.at((x, y))) + abs(gy.at((x, y)))).cast::<i16>());

        // Direction tests in i32: 128 * 1020 does not fit an i16.
        let ax = abs(gx.at((x, y))).cast::<i32>();
        let ay = abs(gy.at((x, y))).cast::<i32>();
        let horizontal = (ay.clone() * TAN_DEN).le(ax.clone() * TAN_NUM);
        let vertical = (ax * TAN_DEN).le(ay * TAN_NUM);
        let same_sign = (gx.at((x, y)).cast::<i32>() * gy.at((x, y)).cast::<i32>()).gt(0);
        let m = |dx: i32, dy: i32| mag.at((x + dx, y + dy));
        // The neighbours on the minus and plus sides of the gradient direction.
        let minus = select(
            horizontal.clone(),
            m(-1, 0),
            select(vertical.clone(), m(0, -1), select(same_sign.clone(), m(-1, -1), m(-1, 1))),
        );
        let plus = select(horizontal, m(1, 0), select(vertical, m(0, 1), select(same_sign, m(1, 1), m(1, -1))));
        let here = m(0, 0);
        let nms = Func::new("nms");
        nms.def((x, y), select(here.clone().ge(minus) & here.clone().gt(plus), here, Expr::from(0i16)));
        let class = Func::new("class");
        let v = nms.at((x, y));
        class.def(
            (x, y),
            select(v.clone().ge(high), Expr::from(2u8), select(v.ge(low), Expr::from(1u8), Expr::from(0u8))),
        );
        let c = |dx: i32, dy: i32| class.at((x + dx, y + dy));
        let around = max(
            max(max(c(-1, -1), c(0, -1)), max(c(1, -1), c(-1, 0))),
            max(max(c(1, 0), c(-1, 1)), max(c(0, 1), c(1, 1))),
        );
        let out = Func::new("canny");
        // A strong pixel always stays; a weak one needs a strong neighbour.
        let keep = c(0, 0).eq(2) | (c(0, 0).eq(1) & around.eq(2));
        out.def((x, y), select(keep, Expr::from(255u8), Expr::from(0u8)));
        input.set_estimates(&[(0, 4000), (0, 3000)]);
        out.set_estimates(&[(0, 4000), (0, 3000)]);
        Canny { input, blur_x, gauss, gx, gy, mag, nms, class, out, x, y, low, high }
    }

    /// Tiles of 256×32 in parallel over rows of tiles, vectorized by 16 (`i16` lanes of an
    /// AVX2 register), every stage computed per tile on the tile plus its halo (Halide's
    /// blur schedule carried down the whole pipeline): the halos cost about 15% of
    /// recomputation, and each tile's intermediates stay in the L2 cache. The magnitude is
    /// recomputed from the stored gradients where it is read (two loads and an add), and
    /// the suppression is folded into the classification.
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        self.out.tile(x, y, xi, yi, 256, 32).parallel(y).vectorize(xi, 16);
        for f in [&self.class, &self.gx, &self.gy, &self.gauss, &self.blur_x] {
            f.compute_at(&self.out, x).vectorize(x, 16);
        }
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[
            &self.blur_x,
            &self.gauss,
            &self.gx,
            &self.gy,
            &self.mag,
            &self.nms,
            &self.class,
            &self.out,
        ]);
    }

    /// The edge detector in plain Rust (`input` has mins 0).
    pub fn reference_on(&self, input: &Buffer<u8>) -> Buffer<u8> {
        reference(input, self.low, self.high)
    }
}

/// Values of one stage over the box `[x0, x0 + w) × [y0, y0 + h)`.
struct Plane<T> {
    x0: i32,
    y0: i32,
    w: i32,
    h: i32,
    data: Vec<T>,
}

impl<T: Copy> Plane<T> {
    /// The stage over the image grown by `margin` on every side.
    fn new(iw: i32, ih: i32, margin: i32, mut f: impl FnMut(i32, i32) -> T) -> Plane<T> {
        let (x0, y0, w, h) = (-margin, -margin, iw + 2 * margin, ih + 2 * margin);
        let mut data = Vec::with_capacity((w * h) as usize);
        for y in y0..y0 + h {
            for x in x0..x0 + w {
                data.push(f(x, y));
            }
        }
        Plane { x0, y0, w, h, data }
    }
    fn at(&self, x: i32, y: i32) -> T {
        debug_assert!(x >= self.x0 && x < self.x0 + self.w && y >= self.y0 && y < self.y0 + self.h);
        self.data[((y - self.y0) * self.w + (x - self.x0)) as usize]
    }
}

/// The edge detector in plain Rust (`input` has mins 0): each stage computed on the image
/// grown by the footprint of the stages after it.
pub fn reference(input: &Buffer<u8>, low: i32, high: i32) -> Buffer<u8> {
    let (w, h) = (input.width(), input.height());
    let px = |x: i32, y: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1)]] as u16;
    // Footprints: output 1, suppression 1, Sobel 1, Gaussian 2.
    let blur_x =
        Plane::new(w, h, 5, |x, y| px(x - 2, y) + 4 * px(x - 1, y) + 6 * px(x, y) + 4 * px(x + 1, y) + px(x + 2, y));
    let gauss = Plane::new(w, h, 3, |x, y| {
        let b = |dy: i32| blur_x.at(x, y + dy);
        ((b(-2) + 4 * b(-1) + 6 * b(0) + 4 * b(1) + b(2) + 128) / 256) as i16
    });
    let g = |x: i32, y: i32| gauss.at(x, y);
    let gx = Plane::new(w, h, 2, |x, y| {
        (g(x + 1, y - 1) + 2 * g(x + 1, y) + g(x + 1, y + 1)) - (g(x - 1, y - 1) + 2 * g(x - 1, y) + g(x - 1, y + 1))
    });
    let gy = Plane::new(w, h, 2, |x, y| {
        (g(x - 1, y + 1) + 2 * g(x, y + 1) + g(x + 1, y + 1)) - (g(x - 1, y - 1) + 2 * g(x, y - 1) + g(x + 1, y - 1))
    });
    let mag = Plane::new(w, h, 2, |x, y| (gx.at(x, y).unsigned_abs() + gy.at(x, y).unsigned_abs()) as i16);
    let class = Plane::new(w, h, 1, |x, y| {
        let (gxv, gyv) = (gx.at(x, y) as i32, gy.at(x, y) as i32);
        let (ax, ay) = (gxv.abs(), gyv.abs());
        let m = |dx: i32, dy: i32| mag.at(x + dx, y + dy);
        let (minus, plus) = if ay * TAN_DEN <= ax * TAN_NUM {
            (m(-1, 0), m(1, 0))
        } else if ax * TAN_DEN <= ay * TAN_NUM {
            (m(0, -1), m(0, 1))
        } else if gxv * gyv > 0 {
            (m(-1, -1), m(1, 1))
        } else {
            (m(-1, 1), m(1, -1))
        };
        let here = m(0, 0);
        let v = if here >= minus && here > plus { here as i32 } else { 0 };
        if v >= high {
            2u8
        } else if v >= low {
            1
        } else {
            0
        }
    });
    Buffer::from_fn(&[w, h], |p| {
        let (x, y) = (p[0], p[1]);
        let here = class.at(x, y);
        let mut around = 0u8;
        for dy in -1..=1 {
            for dx in -1..=1 {
                if (dx, dy) != (0, 0) {
                    around = around.max(class.at(x + dx, y + dy));
                }
            }
        }
        if here == 2 || (here == 1 && around == 2) {
            255
        } else {
            0
        }
    })
}

impl App for Canny {
    fn name(&self) -> &'static str {
        "canny"
    }
    fn description(&self) -> &'static str {
        "Canny-style edges of uint8 gray: 5x5 binomial blur, Sobel, 4-direction NMS, double threshold, 3x3 hysteresis"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            _ => return Err(common::unknown_schedule("canny", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::u8(), channels: 1, values: "gray u8" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("canny", inputs, 1)?;
        args.image(&self.input, common::input::<u8>("canny", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(common::input::<u8>("canny", inputs, 0, 2)?.extents())
    }
    fn output_type(&self) -> Type {
        Type::u8()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // The test picture's luma (edges, corners, texture) with a little noise, so that
        // there are strong edges, weak ones next to them and weak ones alone.
        let p = crate::synth::test_picture(width, height);
        let mut r = crate::synth::Rng::new(seed);
        let g = Buffer::from_fn(&[width, height], |c| {
            let (x, y) = (c[0], c[1]);
            let l = common::luma(p[[x, y, 0]], p[[x, y, 1]], p[[x, y, 2]]);
            l + 0.03 * r.normal() as f32
        });
        vec![common::from_unit(&g, Type::u8())]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(common::input::<u8>("canny", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Canny::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_a_step_edge() {
        // A vertical step: edges in the columns next to it, nothing far away.
        let input = Buffer::<u8>::from_fn(&[24, 8], |c| if c[0] < 12 { 20 } else { 220 });
        let out = reference(&input, 50, 150);
        for y in 0..8 {
            let on: Vec<i32> = (0..24).filter(|&x| out[[x, y]] == 255).collect();
            assert_eq!(on, vec![12], "row {y}");
        }
    }

    #[test]
    fn weak_pixels_need_a_strong_neighbour() {
        // A faint step (weak everywhere) gives nothing.
        let faint = Buffer::<u8>::from_fn(&[16, 8], |c| if c[0] < 8 { 100 } else { 120 });
        let out = reference(&faint, 20, 200);
        assert!(out.as_slice().iter().all(|&v| v == 0));
        let out = reference(&faint, 20, 40);
        assert!(out.as_slice().contains(&255));
    }

    #[test]
    fn pipeline_matches_reference_with_other_thresholds() {
        let app = Canny::with_thresholds(10, 60);
        app.schedule_hand();
        let inputs = app.make_inputs(37, 29, 9);
        let got = app.run(&Target::interp(), &inputs).unwrap();
        assert_eq!(got, app.reference(&inputs).unwrap());
    }

    #[test]
    fn rejects_bad_thresholds() {
        let c = Config::parse(&["low=200", "high=100"]).unwrap();
        let e = Canny::with_config(&c).err().unwrap().to_string();
        assert!(e.contains("low") && e.contains("200") && e.contains("100"), "{e}");
        let c = Config::parse(&["high=5000"]).unwrap();
        assert!(Canny::with_config(&c).err().unwrap().to_string().contains("5000"));
    }
}
