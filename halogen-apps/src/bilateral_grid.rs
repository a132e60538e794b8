//! The bilateral grid (Chen, Paris and Durand 2007) on `f32` gray: an edge-preserving blur.
//!
//! Exactly `halide_bench.py`'s `BilateralGrid`, with `s_sigma` and `r_sigma` compile-time
//! constants (defaults 8 and 0.1): each `s × s` block of the `repeat_edge`, `[0, 1]`-clamped
//! input is splatted into a grid `(x, y, z, {value, weight})` at `z = int(v / r_sigma +
//! 0.5)`; the grid is blurred with `[1 4 6 4 1]` in `z`, `x`, then `y`; the output is the
//! trilinear interpolation of the grid at each pixel, value divided by weight. Halide's
//! float `lerp(a, b, w)` is `a (1 - w) + b w`, and that is what is computed here.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{bilateral_grid::BilateralGrid, App};
//! let app = BilateralGrid::build("hand").unwrap();
//! let inputs = app.make_inputs(32, 24, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The bilateral grid's Funcs and input.
pub struct BilateralGrid {
    /// Gray `f32` input.
    pub input: ImageParam,
    /// The splatted grid `(x, y, z, c)`, `c = 0` value, `c = 1` weight.
    pub histogram: Func,
    /// The grid blurred in `z`.
    pub blurz: Func,
    /// ... then in `x`.
    pub blurx: Func,
    /// ... then in `y`.
    pub blury: Func,
    /// Trilinear interpolation of the grid at every pixel, `(x, y, c)`.
    pub interpolated: Func,
    /// Value / weight: the output.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub z: Var,
    /// Pure variables.
    pub c: Var,
    /// The splat's reduction over an `s × s` block.
    pub r: RDom,
    /// Spatial sigma: the grid cell size in pixels.
    pub s_sigma: i32,
    /// Range sigma: the grid cell size in intensity.
    pub r_sigma: f64,
    /// `1 / r_sigma`, rounded to `f32` (the constant the algorithm uses).
    pub inv_r: f32,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu", "distributed"];
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "s_sigma",
        default: 8.0,
        help: "grid cell size in pixels",
        min: 1.0,
        max: 256.0,
        kind: ParamKind::Integer,
    },
    // Smaller cells make a grid of 1 / r_sigma intensity levels: 100 at most.
    ParamSpec {
        name: "r_sigma",
        default: 0.1,
        help: "grid cell size in intensity",
        min: 0.01,
        max: 1.0,
        kind: ParamKind::Real,
    },
];

/// Halide's float lerp: `a (1 - w) + b w` (Halogen's `lerp` is `a + (b - a) w`).
fn hl_lerp(a: Expr, b: Expr, w: &Expr) -> Expr {
    a * (1.0f32 - w) + b * w
}

fn lerp_f32(a: f32, b: f32, w: f32) -> f32 {
    a * (1.0 - w) + b * w
}

impl Default for BilateralGrid {
    fn default() -> Self {
        BilateralGrid::new()
    }
}

impl BilateralGrid {
    /// Builds the algorithm with `s_sigma = 8`, `r_sigma = 0.1` (no schedule).
    pub fn new() -> BilateralGrid {
        BilateralGrid::with_sigmas(8, 0.1)
    }

    /// Builds the algorithm from `config` (`s_sigma`, `r_sigma`).
    pub fn with_config(config: &Config) -> Result<BilateralGrid> {
        let v = config.resolve("bilateral_grid", PARAMS)?;
        Ok(BilateralGrid::with_sigmas(v[0] as i32, v[1]))
    }

    /// Builds the algorithm with the given sigmas (no schedule).
    pub fn with_sigmas(s_sigma: i32, r_sigma: f64) -> BilateralGrid {
        let s = s_sigma;
        let inv_r = (1.0 / r_sigma) as f32;
        let input = ImageParam::new(Type::f32(), 2, "input");
        let (x, y, z, c) = (Var::new("x"), Var::new("y"), Var::new("z"), Var::new("c"));
        let cl = boundary::repeat_edge(&input, &input.bounds());
        let r = RDom::new(&[(Expr::from(0), Expr::from(s)), (Expr::from(0), Expr::from(s))]);
        let val = clamp(cl.at((x * s + r.x() - s / 2, y * s + r.y() - s / 2)), 0.0f32, 1.0f32);
        let zi = (val.clone() * inv_r + 0.5f32).cast::<i32>();
        let histogram = Func::new("histogram");
        histogram.def((x, y, z, c), 0.0f32);
        histogram.update((x, y, zi.clone(), c), histogram.at((x, y, zi, c)) + select(c.eq(0), val, 1.0f32));
        let blur5 = |src: &Func, name: &str, axis: usize| {
            let g = Func::new(name);
            let at = |d: i32| {
                let mut a: Vec<Expr> = vec![x.into(), y.into(), z.into(), c.into()];
                a[axis] = a[axis].clone() + d;
                src.at(a)
            };
            g.def((x, y, z, c), at(-2) + 4.0f32 * at(-1) + 6.0f32 * at(0) + 4.0f32 * at(1) + at(2));
            g
        };
        let blurz = blur5(&histogram, "blurz", 2);
        let blurx = blur5(&blurz, "blurx", 0);
        let blury = blur5(&blurx, "blury", 1);
        let v = clamp(input.at((x, y)), 0.0f32, 1.0f32);
        let zv = v * inv_r;
        let zi2 = zv.clone().cast::<i32>();
        let zf = zv - zi2.clone().cast::<f32>();
        let xf = (x % s).cast::<f32>() / s as f32;
        let yf = (y % s).cast::<f32>() / s as f32;
        let (xi, yi) = (x / s, y / s);
        let bl = |dx: i32, dy: i32, dz: i32| blury.at((xi.clone() + dx, yi.clone() + dy, zi2.clone() + dz, c));
        let interpolated = Func::new("interpolated");
        interpolated.def(
            (x, y, c),
            hl_lerp(
                hl_lerp(hl_lerp(bl(0, 0, 0), bl(1, 0, 0), &xf), hl_lerp(bl(0, 1, 0), bl(1, 1, 0), &xf), &yf),
                hl_lerp(hl_lerp(bl(0, 0, 1), bl(1, 0, 1), &xf), hl_lerp(bl(0, 1, 1), bl(1, 1, 1), &xf), &yf),
                &zf,
            ),
        );
        let out = Func::new("bilateral_grid");
        out.def((x, y), interpolated.at((x, y, 0)) / interpolated.at((x, y, 1)));
        input.set_estimates(&[(0, 2560), (0, 1536)]);
        out.set_estimates(&[(0, 2560), (0, 1536)]);
        BilateralGrid {
            input,
            histogram,
            blurz,
            blurx,
            blury,
            interpolated,
            out,
            x,
            y,
            z,
            c,
            r,
            s_sigma,
            r_sigma,
            inv_r,
        }
    }

    /// The splat (the histogram and its update) computed per row of `blurz`, walking each
    /// cell's pixels with the two channels unrolled.
    fn splat_per_row_of_blurz(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let r = &self.r;
        self.histogram.compute_at(&self.blurz, y);
        self.histogram
            .update_stage(0)
            .reorder(&[VarOrRVar::from(c), r.x().into(), r.y().into(), x.into(), y.into()])
            .unroll_full(c);
    }

    /// `halide_bench.py`'s hand schedule: the grid stages at root, each parallel over its
    /// outermost dimension, vectorized in `x` and unrolled over the two channels; the
    /// splat computed per row of `blurz`.
    pub fn schedule_hand(&self) {
        let (x, y, z, c) = (self.x, self.y, self.z, self.c);
        self.splat_per_row_of_blurz();
        self.blurz.compute_root().reorder(&[c, z, x, y]).parallel(y).vectorize(x, 8).unroll_full(c);
        for f in [&self.blurx, &self.blury] {
            f.compute_root().reorder(&[c, x, y, z]).parallel(z).vectorize(x, 8).unroll_full(c);
        }
        self.out.compute_root().parallel(y).vectorize(x, 8);
    }

    /// For a GPU (after Halide's GPU schedule of this app): `blurz` in 8×8 blocks of grid
    /// cells, each block first splatting its cells' histograms into shared memory, one
    /// thread per cell walking its `s_sigma × s_sigma` pixels (the update scatters only in
    /// `z`, so threads over `x, y` never write the same cell); `blurx` and `blury` as
    /// 32×8×1 tiles of `x, y, z`; the output as 32×8 tiles with the trilinear sample inlined.
    pub fn schedule_gpu(&self) {
        let (x, y, z, c) = (self.x, self.y, self.z, self.c);
        let r = &self.r;
        let (xo, yo, zo, xi, yi, zi) =
            (Var::new("xo"), Var::new("yo"), Var::new("zo"), Var::new("xi"), Var::new("yi"), Var::new("zi"));
        self.blurz.compute_root().reorder(&[c, z, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 8, 8);
        self.histogram.compute_at(&self.blurz, xo).reorder(&[c, z, x, y]).gpu_threads(x).gpu_threads(y);
        self.histogram
            .update_stage(0)
            .reorder(&[VarOrRVar::from(c), r.x().into(), r.y().into(), x.into(), y.into()])
            .gpu_threads(x)
            .gpu_threads(y)
            .unroll_full(c);
        for f in [&self.blurx, &self.blury] {
            f.compute_root().reorder(&[c, x, y, z]).unroll_full(c).gpu_tile_3d(
                [x.into(), y.into(), z.into()],
                [xo.into(), yo.into(), zo.into()],
                [xi.into(), yi.into(), zi.into()],
                [32, 8, 1],
            );
        }
        self.out.compute_root().gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    /// Over the ranks of a distributed run, after the seed's schedule of this app: every
    /// stage of the grid and the output distributed by rows (grid rows for the grid, image
    /// rows for the output), each rank's rows in parallel as in the hand schedule. The
    /// splat is computed per row of `blurz`, from the rank's own input rows; `blury`
    /// receives the two grid rows above and below its slice from its neighbours, and the
    /// output the grid rows its pixels interpolate from.
    pub fn schedule_distributed(&self) {
        let (x, y, z, c) = (self.x, self.y, self.z, self.c);
        self.splat_per_row_of_blurz();
        self.blurz.compute_root().reorder(&[c, z, x, y]).parallel(y).distribute(y).vectorize(x, 8).unroll_full(c);
        for f in [&self.blurx, &self.blury] {
            f.compute_root().reorder(&[c, x, z, y]).parallel(y).distribute(y).vectorize(x, 8).unroll_full(c);
        }
        self.out.compute_root().parallel(y).distribute(y).vectorize(x, 8);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.histogram, &self.blurz, &self.blurx, &self.blury, &self.interpolated, &self.out]);
    }

    /// The bilateral grid in plain Rust, the same operations in the same order (`input` has
    /// mins 0).
    pub fn reference_on(&self, input: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (input.width(), input.height());
        let s = self.s_sigma;
        let inv_r = self.inv_r;
        let px = |x: i32, y: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1)]];
        // The grid regions the output needs (as bounds inference finds them).
        let (gx1, gy1) = ((w - 1) / s + 1, (h - 1) / s + 1); // blury: x in [0, gx1], y in [0, gy1]
        let zmax = (inv_r as i32) + 1; // blury: z in [0, zmax]
        let zsplat = (inv_r + 0.5f32) as i32; // the splat writes z in [0, zsplat]
                                              // hist on x in [-2, gx1 + 2], y in [-2, gy1 + 2], z in [-2, max(zmax, zsplat) + 2].
        let (hx0, hy0, hz0) = (-2, -2, -2);
        let (hw, hh, hd) = (gx1 + 5, gy1 + 5, zmax.max(zsplat) + 5);
        let hidx = |x: i32, y: i32, z: i32, c: i32| ((((c * hd + z - hz0) * hh) + y - hy0) * hw + x - hx0) as usize;
        let mut hist = vec![0f32; (2 * hw * hh * hd) as usize];
        for gy in hy0..hy0 + hh {
            for gx in hx0..hx0 + hw {
                for ry in 0..s {
                    for rx in 0..s {
                        let val = px(gx * s + rx - s / 2, gy * s + ry - s / 2).clamp(0.0, 1.0);
                        let zi = (val * inv_r + 0.5f32) as i32;
                        hist[hidx(gx, gy, zi, 0)] += val;
                        hist[hidx(gx, gy, zi, 1)] += 1.0;
                    }
                }
            }
        }
        let h5 = |a: f32, b: f32, c: f32, d: f32, e: f32| a + 4.0f32 * b + 6.0f32 * c + 4.0f32 * d + e;
        // Each stage on the same box as hist (values near its edges are never read).
        let blur_axis = |src: &Vec<f32>, axis: usize| -> Vec<f32> {
            let mut dst = vec![0f32; src.len()];
            for c in 0..2 {
                for z in hz0..hz0 + hd {
                    for y in hy0..hy0 + hh {
                        for x in hx0..hx0 + hw {
                            let get = |d: i32| {
                                let (mut p, lo, hi) = match axis {
                                    0 => ([x, y, z], hx0, hx0 + hw),
                                    1 => ([x, y, z], hy0, hy0 + hh),
                                    _ => ([x, y, z], hz0, hz0 + hd),
                                };
                                p[axis] += d;
                                if p[axis] < lo || p[axis] >= hi {
                                    0.0 // outside the box: never needed by the output
                                } else {
                                    src[hidx(p[0], p[1], p[2], c)]
                                }
                            };
                            dst[hidx(x, y, z, c)] = h5(get(-2), get(-1), get(0), get(1), get(2));
                        }
                    }
                }
            }
            dst
        };
        let bz = blur_axis(&hist, 2);
        let bx = blur_axis(&bz, 0);
        let by = blur_axis(&bx, 1);
        Buffer::from_fn(&[w, h], |p| {
            let (x, y) = (p[0], p[1]);
            let v = input[[x, y]].clamp(0.0, 1.0);
            let zv = v * inv_r;
            let zi2 = zv as i32;
            let zf = zv - zi2 as f32;
            let xf = (x % s) as f32 / s as f32;
            let yf = (y % s) as f32 / s as f32;
            let (xi, yi) = (x / s, y / s);
            let interp = |c: i32| {
                let bl = |dx: i32, dy: i32, dz: i32| by[hidx(xi + dx, yi + dy, zi2 + dz, c)];
                lerp_f32(
                    lerp_f32(lerp_f32(bl(0, 0, 0), bl(1, 0, 0), xf), lerp_f32(bl(0, 1, 0), bl(1, 1, 0), xf), yf),
                    lerp_f32(lerp_f32(bl(0, 0, 1), bl(1, 0, 1), xf), lerp_f32(bl(0, 1, 1), bl(1, 1, 1), xf), yf),
                    zf,
                )
            };
            interp(0) / interp(1)
        })
    }
}

impl App for BilateralGrid {
    fn name(&self) -> &'static str {
        "bilateral_grid"
    }
    fn description(&self) -> &'static str {
        "bilateral grid (Chen et al. 2007), float32 gray: splat, [1 4 6 4 1] blur in z, x, y, trilinear slice"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "gpu" => self.schedule_gpu(),
            "distributed" => self.schedule_distributed(),
            _ => return Err(common::unknown_schedule("bilateral_grid", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::f32(), channels: 1, values: "gray in [0, 1]" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("bilateral_grid", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("bilateral_grid", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(common::input::<f32>("bilateral_grid", inputs, 0, 2)?.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![crate::synth::smooth_gray(width, height, seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(common::input::<f32>("bilateral_grid", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Relative(1e-5)
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = BilateralGrid::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
