//! The local Laplacian filter (Paris, Hasinoff and Kautz 2011; the fast approximation of
//! Aubry et al. 2014): detail enhancement through Laplacian pyramids, `u16` planar RGB.
//!
//! Exactly `halide_bench.py`'s `LocalLaplacian`, with its compile-time constants as
//! parameters (`levels` J = 8 pyramid levels, `intensity_levels` K = 4, `alpha` = 1 (used
//! as `alpha / (K - 1)`), `beta` = 1): the gray image is remapped at K intensity levels
//! with the LUT `alpha f exp(-f²/2)`; Gaussian pyramids (`[1 3 3 1] / 8` down-sampling) of
//! each remapped image and of the gray image; Laplacian pyramids (`[1/4 3/4]`
//! up-sampling); the output pyramid interpolates between the two intensity levels around
//! each pixel's gray value, is collapsed, and scales the input's colour.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{local_laplacian::LocalLaplacian, App};
//! // Three pyramid levels keep the doc test quick; the default is eight.
//! let app = LocalLaplacian::with_levels(3, 4, 1.0, 1.0);
//! app.schedule_hand();
//! let inputs = app.make_inputs(24, 16, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The local Laplacian filter's Funcs and input.
pub struct LocalLaplacian {
    /// Planar RGB `u16` input, `(x, y, c)`.
    pub input: ImageParam,
    /// The remapping LUT, indexed by `256 × intensity offset`.
    pub remap: Func,
    /// The input as floats in `[0, 1]`.
    pub floating: Func,
    /// Luminance of the edge-clamped input.
    pub gray: Func,
    /// Gaussian pyramids of the K remapped images, `(x, y, k)`, one Func per level.
    pub g_pyramid: Vec<Func>,
    /// The `x` pass of each level's down-sampling (`None` at level 0).
    pub g_pyramid_dx: Vec<Option<Func>>,
    /// Laplacian pyramids of the remapped images (the last level is the Gaussian one).
    pub l_pyramid: Vec<Func>,
    /// Gaussian pyramid of the gray input.
    pub in_g_pyramid: Vec<Func>,
    /// The `x` pass of each level's down-sampling (`None` at level 0).
    pub in_g_pyramid_dx: Vec<Option<Func>>,
    /// The output Laplacian pyramid.
    pub out_l_pyramid: Vec<Func>,
    /// The collapsed output pyramid (the last level is the Laplacian one).
    pub out_g_pyramid: Vec<Func>,
    /// The output in floats.
    pub color: Func,
    /// The output.
    pub out: Func,
    /// Every Func of the algorithm except the boundary condition's (for the root schedule).
    pub funcs: Vec<Func>,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// The intensity level.
    pub k: Var,
    /// Number of pyramid levels (J).
    pub levels: usize,
    /// Number of intensity levels (K).
    pub intensity_levels: i32,
    /// Detail amount as given (the algorithm uses `alpha / (K - 1)`).
    pub alpha: f64,
    /// Tone amount.
    pub beta: f64,
}

/// The pyramid levels from which [`LocalLaplacian::schedule_distributed`] computes every
/// stage on every rank instead of distributing it (Distributed Halide's "distribution
/// threshold": three levels from the top of eight).
pub const DISTRIBUTION_THRESHOLD: usize = 5;

const SCHEDULES: &[&str] = &["root", "hand", "gpu", "distributed"];
const PARAMS: &[ParamSpec] = &[
    // Each level doubles the margin the base level is computed over, whatever the picture's
    // size: 10 levels of 32 intensities take 1.7 GB on a 16x16 picture, 12 do not fit.
    ParamSpec { name: "levels", default: 8.0, help: "pyramid levels J", min: 1.0, max: 10.0, kind: ParamKind::Integer },
    ParamSpec {
        name: "intensity_levels",
        default: 4.0,
        help: "intensity levels K",
        min: 2.0,
        max: 32.0,
        kind: ParamKind::Integer,
    },
    ParamSpec {
        name: "alpha",
        default: 1.0,
        help: "detail enhancement (used as alpha / (K - 1))",
        min: 0.0,
        max: 10.0,
        kind: ParamKind::Real,
    },
    ParamSpec {
        name: "beta",
        default: 1.0,
        help: "tone mapping: 1 keeps the tones, < 1 compresses them",
        min: 0.0,
        max: 10.0,
        kind: ParamKind::Real,
    },
];
const EPS: f32 = 0.01;

/// The constants of the algorithm, as `f32`s rounded from `f64` as Halide's `f32(v)` does.
#[derive(Clone, Copy)]
struct Consts {
    k: i32,
    alpha: f32,
    beta: f32,
    inv_k1: f32,
    k1_256: f32,
    k1: f32,
}

impl Consts {
    fn new(k: i32, alpha: f64, beta: f64) -> Consts {
        Consts {
            k,
            alpha: (alpha / (k - 1) as f64) as f32,
            beta: beta as f32,
            inv_k1: (1.0 / (k - 1) as f64) as f32,
            k1_256: ((k - 1) * 256) as f32,
            k1: (k - 1) as f32,
        }
    }
}

impl Default for LocalLaplacian {
    fn default() -> Self {
        LocalLaplacian::new()
    }
}

impl LocalLaplacian {
    /// Builds the algorithm with `halide_bench.py`'s constants: J = 8, K = 4, alpha = 1,
    /// beta = 1 (no schedule).
    pub fn new() -> LocalLaplacian {
        LocalLaplacian::with_levels(8, 4, 1.0, 1.0)
    }

    /// Builds the algorithm from `config` (`levels`, `intensity_levels`, `alpha`, `beta`).
    pub fn with_config(config: &Config) -> Result<LocalLaplacian> {
        let v = config.resolve("local_laplacian", PARAMS)?;
        Ok(LocalLaplacian::with_levels(v[0] as usize, v[1] as i32, v[2], v[3]))
    }

    /// Builds the algorithm with `levels` (J) pyramid levels, `intensity_levels` (K),
    /// `alpha` and `beta` (no schedule).
    ///
    /// # Panics
    /// If `levels` is 0 or `intensity_levels` is below 2.
    pub fn with_levels(levels: usize, intensity_levels: i32, alpha: f64, beta: f64) -> LocalLaplacian {
        assert!(levels >= 1 && intensity_levels >= 2, "local_laplacian needs J >= 1 and K >= 2");
        let (j_levels, kk) = (levels, intensity_levels);
        let cs = Consts::new(kk, alpha, beta);
        let input = ImageParam::new(Type::u16(), 3, "input");
        let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
        // Every Func made by the pyramid helpers, for the root schedule.
        let funcs: std::cell::RefCell<Vec<Func>> = Default::default();
        let func = |name: String| {
            let f = Func::new(&name);
            funcs.borrow_mut().push(f.clone());
            f
        };
        // The down- and up-sampling stencils, over (x, y) plus k for the 3-D pyramids.
        let args = |a: Expr, b: Expr, three: bool| -> Vec<Expr> {
            if three {
                vec![a, b, k.into()]
            } else {
                vec![a, b]
            }
        };
        let downsample = |f: &Func, name: String, three: bool| -> (Func, Func) {
            let dx = func(format!("{name}_dx"));
            let dy = func(format!("{name}_dy"));
            let (xe, ye): (Expr, Expr) = (x.into(), y.into());
            let vars = || args(xe.clone(), ye.clone(), three);
            dx.def(
                vars(),
                (f.at(args(2 * x - 1, ye.clone(), three))
                    + 3.0f32 * (f.at(args(2 * x, ye.clone(), three)) + f.at(args(2 * x + 1, ye.clone(), three)))
                    + f.at(args(2 * x + 2, ye.clone(), three)))
                    / 8.0f32,
            );
            dy.def(
                vars(),
                (dx.at(args(xe.clone(), 2 * y - 1, three))
                    + 3.0f32 * (dx.at(args(xe.clone(), 2 * y, three)) + dx.at(args(xe.clone(), 2 * y + 1, three)))
                    + dx.at(args(xe.clone(), 2 * y + 2, three)))
                    / 8.0f32,
            );
            (dy, dx)
        };
        let upsample = |f: &Func, ux: Func, uy: Func, three: bool| -> Func {
            let (xe, ye): (Expr, Expr) = (x.into(), y.into());
            ux.def(
                args(xe.clone(), ye.clone(), three),
                0.25f32 * f.at(args((x / 2) - 1 + 2 * (x % 2), ye.clone(), three))
                    + 0.75f32 * f.at(args(x / 2, ye.clone(), three)),
            );
            uy.def(
                args(xe.clone(), ye.clone(), three),
                0.25f32 * ux.at(args(xe.clone(), (y / 2) - 1 + 2 * (y % 2), three))
                    + 0.75f32 * ux.at(args(xe.clone(), y / 2, three)),
            );
            uy
        };

        let remap = Func::new("remap");
        let fx = x.cast::<f32>() / 256.0f32;
        remap.def(x, cs.alpha * fx.clone() * exp(-fx.clone() * fx / 2.0f32));
        let floating = Func::new("floating");
        floating.def((x, y, c), input.at((x, y, c)).cast::<f32>() / 65535.0f32);
        let clamped =
            boundary::repeat_edge(&floating, &[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
        let gray = Func::new("gray");
        gray.def(
            (x, y),
            0.299f32 * clamped.at((x, y, 0)) + 0.587f32 * clamped.at((x, y, 1)) + 0.114f32 * clamped.at((x, y, 2)),
        );

        let level = k.cast::<f32>() * cs.inv_k1;
        let idx = clamp((gray.at((x, y)) * cs.k1_256).cast::<i32>(), 0, (kk - 1) * 256);
        let g0 = Func::new("gPyramid0");
        g0.def((x, y, k), cs.beta * (gray.at((x, y)) - level.clone()) + level + remap.at(idx - 256 * k));
        let mut g_pyramid = vec![g0];
        let mut g_pyramid_dx = vec![None];
        for j in 1..j_levels {
            let (dy, dx) = downsample(&g_pyramid[j - 1], format!("gPyramid{j}"), true);
            g_pyramid.push(dy);
            g_pyramid_dx.push(Some(dx));
        }
        let mut l_pyramid: Vec<Option<Func>> = vec![None; j_levels];
        l_pyramid[j_levels - 1] = Some(g_pyramid[j_levels - 1].clone());
        for j in (0..j_levels - 1).rev() {
            let up = upsample(&g_pyramid[j + 1], func(format!("gUp{j}_ux")), func(format!("gUp{j}_uy")), true);
            let lp = func(format!("lPyramid{j}"));
            lp.def((x, y, k), g_pyramid[j].at((x, y, k)) - up.at((x, y, k)));
            l_pyramid[j] = Some(lp);
        }
        let l_pyramid: Vec<Func> = l_pyramid.into_iter().map(|f| f.expect("every level defined")).collect();
        let mut in_g_pyramid = vec![gray.clone()];
        let mut in_g_pyramid_dx = vec![None];
        for j in 1..j_levels {
            let (dy, dx) = downsample(&in_g_pyramid[j - 1], format!("inGPyramid{j}"), false);
            in_g_pyramid.push(dy);
            in_g_pyramid_dx.push(Some(dx));
        }
        let mut out_l_pyramid = Vec::new();
        for j in 0..j_levels {
            let o = func(format!("outLPyramid{j}"));
            let lv = in_g_pyramid[j].at((x, y)) * cs.k1;
            let li = clamp(lv.clone().cast::<i32>(), 0, kk - 2);
            let lf = lv - li.clone().cast::<f32>();
            o.def(
                (x, y),
                (1.0f32 - lf.clone()) * l_pyramid[j].at((x, y, li.clone())) + lf * l_pyramid[j].at((x, y, li + 1)),
            );
            out_l_pyramid.push(o);
        }
        let mut out_g_pyramid: Vec<Option<Func>> = vec![None; j_levels];
        out_g_pyramid[j_levels - 1] = Some(out_l_pyramid[j_levels - 1].clone());
        for j in (0..j_levels - 1).rev() {
            let next = out_g_pyramid[j + 1].clone().expect("built above");
            let up = upsample(&next, func(format!("outUp{j}_ux")), func(format!("outUp{j}_uy")), false);
            let o = func(format!("outGPyramid{j}"));
            o.def((x, y), up.at((x, y)) + out_l_pyramid[j].at((x, y)));
            out_g_pyramid[j] = Some(o);
        }
        let out_g_pyramid: Vec<Func> = out_g_pyramid.into_iter().map(|f| f.expect("every level defined")).collect();
        let color = Func::new("color");
        color.def((x, y, c), out_g_pyramid[0].at((x, y)) * (clamped.at((x, y, c)) + EPS) / (gray.at((x, y)) + EPS));
        let out = Func::new("local_laplacian");
        out.def((x, y, c), (clamp(color.at((x, y, c)), 0.0f32, 1.0f32) * 65535.0f32).cast::<u16>());
        input.set_estimates(&[(0, 2560), (0, 1536), (0, 3)]);
        out.set_estimates(&[(0, 2560), (0, 1536), (0, 3)]);
        let mut all = vec![remap.clone(), floating.clone(), gray.clone(), g_pyramid[0].clone()];
        all.extend(funcs.into_inner());
        all.extend([color.clone(), out.clone()]);
        LocalLaplacian {
            input,
            remap,
            floating,
            gray,
            g_pyramid,
            g_pyramid_dx,
            l_pyramid,
            in_g_pyramid,
            in_g_pyramid_dx,
            out_l_pyramid,
            out_g_pyramid,
            color,
            out,
            funcs: all,
            x,
            y,
            c,
            k,
            levels: j_levels,
            intensity_levels: kk,
            alpha,
            beta,
        }
    }

    /// `halide_bench.py`'s hand schedule: every pyramid level above the base at root,
    /// parallel over strips of 8 rows and vectorized, with each down-sampling's `x` pass
    /// its own root stage; the remapped base level stays inlined (a LUT lookup), as does
    /// `lPyramid0`; the collapsed base level `outGPyramid0` is computed per 16-row strip of
    /// the output.
    ///
    /// Halide's `f.parallel(y, 8)` is `f.split(y, y, y_par, 8).parallel(y)`, written out.
    pub fn schedule_hand(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let par = |f: &Func, task: i32| {
            let inner = Var::new("y_par");
            f.split(y, y, inner, task).parallel(y);
        };
        let yo = Var::new("yo");
        self.remap.compute_root();
        self.out.reorder(&[c, x, y]).split(y, yo, y, 16).parallel(yo).vectorize(x, 8);
        self.gray.compute_root();
        par(&self.gray, 32);
        self.gray.vectorize(x, 8);
        for j in 1..self.levels {
            let stages = [
                &self.g_pyramid[j],
                self.g_pyramid_dx[j].as_ref().expect("levels above 0 have an x pass"),
                &self.in_g_pyramid[j],
                self.in_g_pyramid_dx[j].as_ref().expect("levels above 0 have an x pass"),
                &self.out_g_pyramid[j],
            ];
            for f in stages {
                f.compute_root();
                par(f, 8);
                f.vectorize(x, 8);
            }
            if j < self.levels - 1 {
                let lp = &self.l_pyramid[j];
                lp.compute_root();
                par(lp, 8);
                lp.vectorize(x, 8);
            }
        }
        self.out_g_pyramid[0].compute_at(&self.out, yo).vectorize(x, 8);
    }

    /// Over the ranks of a distributed run (Distributed Halide's schedule of this app):
    /// the hand schedule, with the output's strips of 16 rows and every root stage of the
    /// pyramid levels below [`DISTRIBUTION_THRESHOLD`] distributed by their strips of rows
    /// (each exchanging the borders its consumers read); the coarser levels, small, are
    /// computed whole on every rank, which costs less than communicating them.
    pub fn schedule_distributed(&self) {
        self.schedule_hand();
        let y = self.y;
        self.gray.distribute(y);
        self.out.distribute(Var::new("yo"));
        for j in 1..self.levels.min(DISTRIBUTION_THRESHOLD) {
            let mut stages = vec![&self.g_pyramid[j], &self.in_g_pyramid[j], &self.out_g_pyramid[j]];
            stages.extend(self.g_pyramid_dx[j].as_ref());
            stages.extend(self.in_g_pyramid_dx[j].as_ref());
            if j < self.levels - 1 {
                stages.push(&self.l_pyramid[j]);
            }
            for f in stages {
                f.distribute(y);
            }
        }
    }

    /// For a GPU (Halide's GPU schedule of this app): the remapping table, every level
    /// above the base of the input's and the remapped Gaussian pyramids, every level of the
    /// collapsed output pyramid and the output each a kernel of 16×8 tiles (2×2 from level
    /// 4 up, where the levels are small), the intensities `k` and the channels looped in
    /// each thread; the separable down-sampling passes, the Laplacian levels and the base
    /// level's remapping are inlined.
    pub fn schedule_gpu(&self) {
        let (x, y, c, k) = (self.x, self.y, self.c, self.k);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.remap.compute_root().gpu_tile_1d(x, xo, xi, 64);
        self.out.compute_root().reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        for j in 0..self.levels {
            let (w, h) = if j > 3 { (2, 2) } else { (16, 8) };
            if j > 0 {
                self.in_g_pyramid[j].compute_root().gpu_tile(x, y, xo, yo, xi, yi, w, h);
                self.g_pyramid[j].compute_root().reorder(&[k, x, y]).gpu_tile(x, y, xo, yo, xi, yi, w, h);
            }
            self.out_g_pyramid[j].compute_root().gpu_tile(x, y, xo, yo, xi, yi, w, h);
        }
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        for f in &self.funcs {
            f.compute_root();
        }
    }

    /// The local Laplacian filter in plain Rust (`input` has mins 0): every level computed
    /// on the region the output needs (what bounds inference finds), the same operations
    /// in the same order as the pipeline.
    pub fn reference_on(&self, input: &Buffer<u16>) -> Buffer<u16> {
        reference_impl(input, self.levels, Consts::new(self.intensity_levels, self.alpha, self.beta))
    }
}

/// A box `[x0, x1) × [y0, y1)`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Region {
    x0: i32,
    x1: i32,
    y0: i32,
    y1: i32,
}

impl Region {
    fn up_req(self) -> Region {
        Region {
            x0: self.x0.div_euclid(2) - 1,
            x1: (self.x1 - 1).div_euclid(2) + 2,
            y0: self.y0.div_euclid(2) - 1,
            y1: (self.y1 - 1).div_euclid(2) + 2,
        }
    }
    fn down_req(self) -> Region {
        Region { x0: 2 * self.x0 - 1, x1: 2 * self.x1 + 1, y0: 2 * self.y0 - 1, y1: 2 * self.y1 + 1 }
    }
    fn union(self, o: Region) -> Region {
        Region { x0: self.x0.min(o.x0), x1: self.x1.max(o.x1), y0: self.y0.min(o.y0), y1: self.y1.max(o.y1) }
    }
}

/// `nk` planes of `f32` over a region.
#[derive(Clone)]
struct Planes {
    r: Region,
    nk: i32,
    data: Vec<f32>,
}

impl Planes {
    fn new(r: Region, nk: i32) -> Planes {
        Planes { r, nk, data: vec![0.0; ((r.x1 - r.x0) * (r.y1 - r.y0) * nk) as usize] }
    }
    fn idx(&self, x: i32, y: i32, k: i32) -> usize {
        let (w, h) = (self.r.x1 - self.r.x0, self.r.y1 - self.r.y0);
        debug_assert!(
            x >= self.r.x0 && x < self.r.x1 && y >= self.r.y0 && y < self.r.y1,
            "{x},{y} outside {:?}",
            self.r
        );
        ((k * h + (y - self.r.y0)) * w + (x - self.r.x0)) as usize
    }
    fn at(&self, x: i32, y: i32, k: i32) -> f32 {
        self.data[self.idx(x, y, k)]
    }
    fn set(&mut self, x: i32, y: i32, k: i32, v: f32) {
        let i = self.idx(x, y, k);
        self.data[i] = v;
    }
    fn from_fn(r: Region, nk: i32, mut f: impl FnMut(i32, i32, i32) -> f32) -> Planes {
        let mut p = Planes::new(r, nk);
        for k in 0..nk {
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    p.set(x, y, k, f(x, y, k));
                }
            }
        }
        p
    }
    /// `[1 3 3 1] / 8` down-sampling onto region `r`: the `x` pass, then the `y` pass.
    fn down(&self, r: Region) -> Planes {
        let rows = Region { y0: 2 * r.y0 - 1, y1: 2 * r.y1 + 1, ..r };
        let dx = Planes::from_fn(rows, self.nk, |x, y, k| {
            (self.at(2 * x - 1, y, k)
                + 3.0f32 * (self.at(2 * x, y, k) + self.at(2 * x + 1, y, k))
                + self.at(2 * x + 2, y, k))
                / 8.0f32
        });
        Planes::from_fn(r, self.nk, |x, y, k| {
            (dx.at(x, 2 * y - 1, k) + 3.0f32 * (dx.at(x, 2 * y, k) + dx.at(x, 2 * y + 1, k)) + dx.at(x, 2 * y + 2, k))
                / 8.0f32
        })
    }
    /// `[1/4 3/4]` up-sampling onto region `r`.
    fn up(&self, r: Region) -> Planes {
        let rows = Region { y0: r.y0.div_euclid(2) - 1, y1: (r.y1 - 1).div_euclid(2) + 2, ..r };
        let ux = Planes::from_fn(rows, self.nk, |x, y, k| {
            0.25f32 * self.at(x.div_euclid(2) - 1 + 2 * x.rem_euclid(2), y, k)
                + 0.75f32 * self.at(x.div_euclid(2), y, k)
        });
        Planes::from_fn(r, self.nk, |x, y, k| {
            0.25f32 * ux.at(x, y.div_euclid(2) - 1 + 2 * y.rem_euclid(2), k) + 0.75f32 * ux.at(x, y.div_euclid(2), k)
        })
    }
}

fn reference_impl(input: &Buffer<u16>, levels: usize, cs: Consts) -> Buffer<u16> {
    let (w, h) = (input.width(), input.height());
    let j_levels = levels;
    let mut r = vec![Region { x0: 0, x1: w, y0: 0, y1: h }];
    for j in 1..j_levels {
        r.push(r[j - 1].up_req());
    }
    let mut g = r.clone();
    let mut ig = r.clone();
    for j in (0..j_levels - 1).rev() {
        g[j] = r[j].union(g[j + 1].down_req());
        ig[j] = r[j].union(ig[j + 1].down_req());
    }
    let gr = g[0].union(ig[0]);
    let clamped = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]] as f32 / 65535.0f32;
    let gray = Planes::from_fn(gr, 1, |x, y, _| {
        0.299f32 * clamped(x, y, 0) + 0.587f32 * clamped(x, y, 1) + 0.114f32 * clamped(x, y, 2)
    });
    let kk = cs.k;
    let remap = |i: i32| {
        let fx = i as f32 / 256.0f32;
        cs.alpha * fx * (-fx * fx / 2.0f32).exp()
    };
    let g0 = Planes::from_fn(g[0], kk, |x, y, k| {
        let gv = gray.at(x, y, 0);
        let level = k as f32 * cs.inv_k1;
        let idx = ((gv * cs.k1_256) as i32).clamp(0, (kk - 1) * 256);
        cs.beta * (gv - level) + level + remap(idx - 256 * k)
    });
    let mut gp = vec![g0];
    for j in 1..j_levels {
        let next = gp[j - 1].down(g[j]);
        gp.push(next);
    }
    let mut ing = vec![gray.clone()];
    for j in 1..j_levels {
        let next = ing[j - 1].down(ig[j]);
        ing.push(next);
    }
    let mut out_g: Option<Planes> = None;
    for j in (0..j_levels).rev() {
        let lp = if j == j_levels - 1 {
            Planes::from_fn(r[j], kk, |x, y, k| gp[j].at(x, y, k))
        } else {
            let up = gp[j + 1].up(r[j]);
            Planes::from_fn(r[j], kk, |x, y, k| gp[j].at(x, y, k) - up.at(x, y, k))
        };
        let ol = Planes::from_fn(r[j], 1, |x, y, _| {
            let lv = ing[j].at(x, y, 0) * cs.k1;
            let li = (lv as i32).clamp(0, kk - 2);
            let lf = lv - li as f32;
            (1.0f32 - lf) * lp.at(x, y, li) + lf * lp.at(x, y, li + 1)
        });
        out_g = Some(match out_g {
            None => ol,
            Some(prev) => {
                let up = prev.up(r[j]);
                Planes::from_fn(r[j], 1, |x, y, _| up.at(x, y, 0) + ol.at(x, y, 0))
            }
        });
    }
    let og = out_g.expect("at least one level");
    Buffer::from_fn(&[w, h, input.extent(2)], |p| {
        let (x, y, c) = (p[0], p[1], p[2]);
        let color = og.at(x, y, 0) * (clamped(x, y, c) + EPS) / (gray.at(x, y, 0) + EPS);
        (color.clamp(0.0, 1.0) * 65535.0f32) as u16
    })
}

impl App for LocalLaplacian {
    fn name(&self) -> &'static str {
        "local_laplacian"
    }
    fn description(&self) -> &'static str {
        "local Laplacian filter (fast approximation), uint16 planar RGB, J pyramid levels x K intensity levels"
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
            "gpu" => self.schedule_gpu(),
            "distributed" => self.schedule_distributed(),
            _ => return Err(common::unknown_schedule("local_laplacian", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::u16(), channels: 3, values: "planar RGB u16" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("local_laplacian", inputs, 1)?;
        args.image(&self.input, common::input::<u16>("local_laplacian", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<u16>("local_laplacian", inputs, 0, 3)?;
        if i.extent(2) < 3 {
            return Err(common::too_small(
                "local_laplacian",
                format!("the input needs 3 channels, got {:?}", i.extents()),
            ));
        }
        Ok(i.extents())
    }
    fn output_type(&self) -> Type {
        Type::u16()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // Smooth colour waves plus noise, as halide_bench.py makes.
        let mut r = crate::synth::Rng::new(seed);
        let mut b = Buffer::<u16>::new(&[width, height, 3]);
        for (ci, f) in [1.0, 0.9, 0.8].into_iter().enumerate() {
            for yy in 0..height {
                for xx in 0..width {
                    let (xf, yf) = (xx as f64, yy as f64);
                    let base = 0.45 + 0.3 * (xf / 97.0 + yf / 151.0).sin() * (yf / 71.0).cos();
                    let v = (base * f + 0.04 * r.normal()).clamp(0.0, 1.0) * 65535.0;
                    b[[xx, yy, ci as i32]] = v as u16;
                }
            }
        }
        vec![b.into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(common::input::<u16>("local_laplacian", inputs, 0, 3)?).into())
    }
    fn distributed_slices(&self) -> (usize, i32) {
        // The distributed loop is the outer loop of strips of 16 rows.
        (1, 16)
    }
    fn tolerance(&self) -> Tolerance {
        // One remap-LUT step where a 1-ulp difference in gray crosses an integer index
        // (see the fixture notes); the pipeline and reference use the same operations, so in
        // practice they agree exactly.
        Tolerance::Relative(4e-3)
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = LocalLaplacian::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
