//! Multi-scale interpolation (Halide's `interpolate` app, after the healing brush of
//! Photoshop): fills in an `f32` planar RGBA image from the pixels whose alpha is non-zero,
//! through an image pyramid of `levels` levels (default 10).
//!
//! With `clamped` the `repeat_edge` input:
//!
//! - `downsampled[0] = (r·a, g·a, b·a, a)`, the premultiplied colour;
//! - `downsampled[l]` is `downsampled[l - 1]` filtered by `[1 2 1] / 4` at stride 2, along `x`
//!   (`downx[l]`) then along `y`, written `(p(2x - 1) + 2 p(2x) + p(2x + 1)) · 0.25`; level 4
//!   reads level 3 through a clamp of its coordinates to `[0, width / 8] × [0, height / 8]`
//!   (as Halide does, so that the deep levels' footprint stops near the image instead of
//!   reaching 512 pixels past each edge);
//! - `interpolated[levels - 1] = downsampled[levels - 1]`, and going back up,
//!   `interpolated[l] = downsampled[l] + (1 - alpha_l) · upsampled[l]`, where `alpha_l` is
//!   `downsampled[l]`'s alpha and `upsampled[l]` is `interpolated[l + 1]` up-sampled
//!   linearly: `(f(x / 2) + f((x + 1) / 2)) / 2` along `x` (`upsampledx[l]`), then along `y`;
//! - the output is `interpolated[0]`'s colour divided by its alpha, 3 channels.
//!
//! A pixel that no sample reaches through the pyramid comes out as NaN (0 / 0); with the
//! inputs [`App::make_inputs`] draws (a sample in every 4×4 block and along the borders)
//! that cannot happen from 3 levels up.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{interpolate::Interpolate, App};
//! // Four levels compile quickly; the default ten are for benchmarks.
//! let app = Interpolate::with_levels(4);
//! app.schedule_hand();
//! let inputs = app.make_inputs(40, 24, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert_eq!(out.extents(), vec![40, 24, 3]);
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, AppError, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The interpolation's Funcs and input.
pub struct Interpolate {
    /// Planar RGBA `f32` input, `(x, y, c)`, `c` in `0..4`.
    pub input: ImageParam,
    /// The pyramid of premultiplied colour and alpha, one Func per level, `(x, y, c)`.
    pub downsampled: Vec<Func>,
    /// The `x` pass of each level's down-sampling (`None` at level 0).
    pub downx: Vec<Option<Func>>,
    /// The copy of `downsampled[0]` that `downx[1]` reads (Halide's `clone_in`), so that the
    /// hand schedule can compute the base level inside the first down-sampling while the
    /// output recomputes it inline (`None` with a single level).
    pub downsampled0_in_downx1: Option<Func>,
    /// Level 3 with its coordinates clamped, what level 4 reads (`None` below 5 levels).
    pub clamped_level3: Option<Func>,
    /// The filled-in pyramid, one Func per level.
    pub interpolated: Vec<Func>,
    /// `interpolated[l + 1]` up-sampled along `x` (`None` at the top level).
    pub upsampledx: Vec<Option<Func>>,
    /// ... and then along `y`.
    pub upsampled: Vec<Option<Func>>,
    /// Colour / alpha of the base level: the output.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// The number of pyramid levels.
    pub levels: usize,
}

// No `naive`: every level inlined into the next reads the level above four times over, so
// the work grows as 4^levels.
// Halide's schedule verbatim (`Interpolate::schedule_hand_halide`) is not offered by name:
// at the default ten levels it takes over ten minutes to lower today, which would stall
// `halogen bench`.
const SCHEDULES: &[&str] = &["root", "hand", "gpu", "distributed"];
const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "levels",
    default: 10.0,
    help: "pyramid levels",
    min: 1.0,
    max: 16.0,
    kind: ParamKind::Integer,
}];

/// The level whose consumer reads it through a clamp (Halide's choice), as `l - 1` of the
/// consumer `l == 4`.
const CLAMP_LEVEL: usize = 4;

/// The first level of the filled-in pyramid that [`Interpolate::schedule_hand`] computes at
/// root rather than per output row (1/64 of the pixels at level 3).
pub const ROOT_FROM: usize = 3;

/// The pyramid levels from which [`Interpolate::schedule_distributed`] computes every
/// stage on every rank instead of distributing it (Distributed Halide's "distribution
/// threshold"): the levels above hold less than 1/256 of the pixels.
pub const DISTRIBUTION_THRESHOLD: usize = 5;

/// The output rows of one strip of the hand schedule (and of the unit that
/// [`Interpolate::schedule_distributed`] deals out to the ranks).
const STRIP: i32 = 32;

/// The vector width for `f32` on AVX2.
const VEC: i32 = 8;

impl Default for Interpolate {
    fn default() -> Self {
        Interpolate::new()
    }
}

impl Interpolate {
    /// Builds the algorithm with Halide's 10 levels (no schedule).
    pub fn new() -> Interpolate {
        Interpolate::with_levels(10)
    }

    /// Builds the algorithm from `config` (`levels`).
    pub fn with_config(config: &Config) -> Result<Interpolate> {
        let v = config.resolve("interpolate", PARAMS)?;
        Ok(Interpolate::with_levels(v[0] as usize))
    }

    /// Builds the algorithm with `levels` pyramid levels (no schedule); 0 is taken as 1.
    pub fn with_levels(levels: usize) -> Interpolate {
        let levels = levels.max(1);
        let input = ImageParam::new(Type::f32(), 3, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let clamped = boundary::repeat_edge(&input, &input.bounds());
        let ds0 = Func::new("downsampled_0");
        ds0.def((x, y, c), select(c.lt(3), clamped.at((x, y, c)) * clamped.at((x, y, 3)), clamped.at((x, y, 3))));
        let mut downsampled = vec![ds0.clone()];
        let mut downx = vec![None];
        let mut downsampled0_in_downx1 = None;
        let mut clamped_level3 = None;
        for l in 1..levels {
            let prev = if l == 1 {
                let copy = Func::new("downsampled_0_in_downx_1");
                copy.def((x, y, c), ds0.at((x, y, c)));
                downsampled0_in_downx1 = Some(copy.clone());
                copy
            } else if l == CLAMP_LEVEL {
                let w = input.width() / (1 << (l - 1));
                let h = input.height() / (1 << (l - 1));
                let cl = Func::new(&format!("downsampled_{}_clamped", l - 1));
                cl.def((x, y, c), downsampled[l - 1].at((clamp(x, 0, w), clamp(y, 0, h), c)));
                clamped_level3 = Some(cl.clone());
                cl
            } else {
                downsampled[l - 1].clone()
            };
            let dx = Func::new(&format!("downx_{l}"));
            dx.def(
                (x, y, c),
                (prev.at((2 * x - 1, y, c)) + 2.0f32 * prev.at((2 * x, y, c)) + prev.at((2 * x + 1, y, c))) * 0.25f32,
            );
            let ds = Func::new(&format!("downsampled_{l}"));
            ds.def(
                (x, y, c),
                (dx.at((x, 2 * y - 1, c)) + 2.0f32 * dx.at((x, 2 * y, c)) + dx.at((x, 2 * y + 1, c))) * 0.25f32,
            );
            downsampled.push(ds);
            downx.push(Some(dx));
        }
        let mut interpolated: Vec<Option<Func>> = vec![None; levels];
        let mut upsampledx: Vec<Option<Func>> = vec![None; levels];
        let mut upsampled: Vec<Option<Func>> = vec![None; levels];
        let top = Func::new(&format!("interpolated_{}", levels - 1));
        top.def((x, y, c), downsampled[levels - 1].at((x, y, c)));
        interpolated[levels - 1] = Some(top);
        for l in (0..levels - 1).rev() {
            let next = interpolated[l + 1].clone().expect("built on the way down");
            let ux = Func::new(&format!("upsampledx_{l}"));
            ux.def((x, y, c), (next.at((x / 2, y, c)) + next.at(((x + 1) / 2, y, c))) / 2.0f32);
            let uy = Func::new(&format!("upsampled_{l}"));
            uy.def((x, y, c), (ux.at((x, y / 2, c)) + ux.at((x, (y + 1) / 2, c))) / 2.0f32);
            let alpha = 1.0f32 - downsampled[l].at((x, y, 3));
            let f = Func::new(&format!("interpolated_{l}"));
            f.def((x, y, c), downsampled[l].at((x, y, c)) + alpha * uy.at((x, y, c)));
            interpolated[l] = Some(f);
            upsampledx[l] = Some(ux);
            upsampled[l] = Some(uy);
        }
        let interpolated: Vec<Func> = interpolated.into_iter().map(|f| f.expect("every level defined")).collect();
        let out = Func::new("interpolate");
        out.def((x, y, c), interpolated[0].at((x, y, c)) / interpolated[0].at((x, y, 3)));
        input.set_estimates(&[(0, 3072), (0, 2048), (0, 4)]);
        out.set_estimates(&[(0, 3072), (0, 2048), (0, 3)]);
        Interpolate {
            input,
            downsampled,
            downx,
            downsampled0_in_downx1,
            clamped_level3,
            interpolated,
            upsampledx,
            upsampled,
            out,
            x,
            y,
            c,
            levels,
        }
    }

    /// Halide's CPU schedule for this app ([`Interpolate::schedule_hand_halide`]) with one
    /// change: the levels of the filled-in pyramid from [`ROOT_FROM`] up are computed at
    /// root (in parallel strips of 8 rows, vectorized by 8), and only the finer ones per
    /// output row. Computing all of them per output row nests their bounds as deep as the
    /// pyramid, and lowering that takes time growing about fourfold per level today (1.4 s
    /// at 6 levels, 6 s at 7, over ten minutes at 10); the coarse levels hold about 2% of
    /// the pixels, so computing them whole costs little.
    pub fn schedule_hand(&self) {
        self.schedule_halide_like(Some(ROOT_FROM));
    }

    /// Halide's CPU schedule for this app: the pyramid levels between the base and the top
    /// at root, each in parallel strips of 8 rows, channels outside `x`, vectorized by 8;
    /// the base level computed per row inside the first down-sampling (and recomputed
    /// inline by the output); the output in parallel strips of 32 rows, `x` split into
    /// vectors with the channels (fixed to 3) unrolled between the vector and the rest of
    /// the row; every level of the filled-in pyramid computed per output row, stored for
    /// the strip. Lowering it takes seconds up to 6 levels and grows about fourfold per level
    /// beyond (see [`Interpolate::schedule_hand`]).
    pub fn schedule_hand_halide(&self) {
        self.schedule_halide_like(None);
    }

    /// Halide's CPU schedule, with the filled-in levels from `root_from` up at root.
    fn schedule_halide_like(&self, root_from: Option<usize>) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (yo, yi, xo, xi) = (Var::new("yo"), Var::new("yi"), Var::new("xo"), Var::new("xi"));
        let levels = self.levels;
        let strips = |f: &Func| {
            f.compute_root().reorder(&[x, c, y]).split(y, yo, yi, 8).parallel(yo).vectorize(x, VEC);
        };
        for l in 1..levels.saturating_sub(1) {
            strips(&self.downsampled[l]);
        }
        // Below 3 levels `downsampled[1]` is the top level, inlined: the copy stays inlined too.
        if let (Some(copy), true) = (&self.downsampled0_in_downx1, levels >= 3) {
            copy.store_at(&self.downsampled[1], yo)
                .compute_at(&self.downsampled[1], yi)
                .reorder(&[c, x, y])
                .unroll_full(c)
                .vectorize(x, VEC);
        }
        self.out
            .bound(c, 0, 3)
            .split(x, xo, xi, VEC)
            .split(y, yo, yi, STRIP)
            .reorder(&[xi, c, xo, yi, yo])
            .unroll_full(c)
            .vectorize(xi, VEC)
            .parallel(yo);
        for l in 1..levels {
            if root_from.is_some_and(|r| l >= r) {
                strips(&self.interpolated[l]);
            } else {
                self.interpolated[l].store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, VEC);
            }
        }
    }

    /// Over the ranks of a distributed run: the hand schedule, with the output's strips of
    /// rows and the root strips of every pyramid level below [`DISTRIBUTION_THRESHOLD`]
    /// dealt out to the ranks (each exchanging the border rows its consumers read); the
    /// coarser levels, small, are computed whole on every rank.
    pub fn schedule_distributed(&self) {
        self.schedule_hand();
        let yo = Var::new("yo");
        self.out.distribute(yo);
        let below = |l: usize| l < DISTRIBUTION_THRESHOLD;
        for l in (1..self.levels.saturating_sub(1)).filter(|&l| below(l)) {
            self.downsampled[l].distribute(yo);
        }
        for l in (ROOT_FROM..self.levels).filter(|&l| below(l)) {
            self.interpolated[l].distribute(yo);
        }
    }

    /// For a GPU (after Halide's GPU schedule of this app): every level above the base of
    /// both pyramids a kernel of 16×16 tiles, the channels looped in each thread; the
    /// output 32×8 tiles with its three channels unrolled; the separable passes and the
    /// base level inlined.
    pub fn schedule_gpu(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        for l in 1..self.levels {
            for f in [&self.downsampled[l], &self.interpolated[l]] {
                f.compute_root().reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 16, 16);
            }
        }
        self.out.bound(c, 0, 3).reorder(&[c, x, y]).unroll_full(c).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        let mut all: Vec<&Func> = self.downsampled.iter().chain(self.interpolated.iter()).collect();
        for f in self.downx.iter().chain(&self.upsampledx).chain(&self.upsampled).flatten() {
            all.push(f);
        }
        all.extend(self.downsampled0_in_downx1.iter().chain(self.clamped_level3.iter()));
        all.push(&self.out);
        common::root_all(&all);
    }

    /// The interpolation in plain Rust (`input` has mins 0 and 4 channels).
    pub fn reference_on(&self, input: &Buffer<f32>) -> Buffer<f32> {
        reference(input, self.levels)
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
    /// What up-sampling onto `self` reads of the level above: `x / 2` to `(x + 1) / 2`.
    fn up_req(self) -> Region {
        Region {
            x0: self.x0.div_euclid(2),
            x1: self.x1.div_euclid(2) + 1,
            y0: self.y0.div_euclid(2),
            y1: self.y1.div_euclid(2) + 1,
        }
    }
    /// What down-sampling onto `self` reads of the level below: `2x - 1` to `2x + 1`.
    fn down_req(self) -> Region {
        Region { x0: 2 * self.x0 - 1, x1: 2 * self.x1, y0: 2 * self.y0 - 1, y1: 2 * self.y1 }
    }
    /// The coordinates of `self` clamped to `[0, w] × [0, h]`.
    fn clamped(self, w: i32, h: i32) -> Region {
        Region {
            x0: self.x0.clamp(0, w),
            x1: (self.x1 - 1).clamp(0, w) + 1,
            y0: self.y0.clamp(0, h),
            y1: (self.y1 - 1).clamp(0, h) + 1,
        }
    }
    fn union(self, o: Region) -> Region {
        Region { x0: self.x0.min(o.x0), x1: self.x1.max(o.x1), y0: self.y0.min(o.y0), y1: self.y1.max(o.y1) }
    }
}

/// Four planes of `f32` over a region.
struct Rgba {
    r: Region,
    data: Vec<f32>,
}

impl Rgba {
    fn from_fn(r: Region, mut f: impl FnMut(i32, i32, i32) -> f32) -> Rgba {
        let mut data = Vec::with_capacity(((r.x1 - r.x0) * (r.y1 - r.y0) * 4) as usize);
        for c in 0..4 {
            for y in r.y0..r.y1 {
                for x in r.x0..r.x1 {
                    data.push(f(x, y, c));
                }
            }
        }
        Rgba { r, data }
    }
    fn at(&self, x: i32, y: i32, c: i32) -> f32 {
        let r = self.r;
        debug_assert!(x >= r.x0 && x < r.x1 && y >= r.y0 && y < r.y1, "{x},{y} outside {r:?}");
        let (w, h) = (r.x1 - r.x0, r.y1 - r.y0);
        self.data[((c * h + (y - r.y0)) * w + (x - r.x0)) as usize]
    }
}

/// The interpolation in plain Rust (`input` has mins 0 and 4 channels): every level
/// computed on the region its consumers read, the same operations in the same order as the
/// pipeline.
pub fn reference(input: &Buffer<f32>, levels: usize) -> Buffer<f32> {
    let levels = levels.max(1);
    let (w, h) = (input.width(), input.height());
    let px = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]];
    // Regions of the filled-in pyramid, from the output up.
    let mut interp_r = vec![Region { x0: 0, x1: w, y0: 0, y1: h }];
    for l in 1..levels {
        interp_r.push(interp_r[l - 1].up_req());
    }
    // Regions of the pyramid, from the top down: what the filled-in level reads, and what
    // the next level's down-sampling reads (through the clamp at level 3).
    let mut down_r = interp_r.clone();
    for l in (0..levels - 1).rev() {
        let mut need = down_r[l + 1].down_req();
        if l + 1 == CLAMP_LEVEL {
            need = need.clamped(w / (1 << l), h / (1 << l));
        }
        down_r[l] = down_r[l].union(need);
    }
    let mut down =
        vec![Rgba::from_fn(down_r[0], |x, y, c| if c < 3 { px(x, y, c) * px(x, y, 3) } else { px(x, y, 3) })];
    for l in 1..levels {
        let prev = &down[l - 1];
        let (cw, ch) = (w / (1 << (l - 1)), h / (1 << (l - 1)));
        let p = |x: i32, y: i32, c: i32| {
            if l == CLAMP_LEVEL {
                prev.at(x.clamp(0, cw), y.clamp(0, ch), c)
            } else {
                prev.at(x, y, c)
            }
        };
        let r = down_r[l];
        let rows = Region { y0: 2 * r.y0 - 1, y1: 2 * r.y1, ..r };
        let dx = Rgba::from_fn(rows, |x, y, c| {
            (p(2 * x - 1, y, c) + 2.0f32 * p(2 * x, y, c) + p(2 * x + 1, y, c)) * 0.25f32
        });
        let next = Rgba::from_fn(r, |x, y, c| {
            (dx.at(x, 2 * y - 1, c) + 2.0f32 * dx.at(x, 2 * y, c) + dx.at(x, 2 * y + 1, c)) * 0.25f32
        });
        down.push(next);
    }
    let top = levels - 1;
    let mut interp = Rgba::from_fn(interp_r[top], |x, y, c| down[top].at(x, y, c));
    for l in (0..levels - 1).rev() {
        let r = interp_r[l];
        let rows = Region { y0: r.y0.div_euclid(2), y1: r.y1.div_euclid(2) + 1, ..r };
        let ux = Rgba::from_fn(rows, |x, y, c| {
            (interp.at(x.div_euclid(2), y, c) + interp.at((x + 1).div_euclid(2), y, c)) / 2.0f32
        });
        let d = &down[l];
        interp = Rgba::from_fn(r, |x, y, c| {
            let up = (ux.at(x, y.div_euclid(2), c) + ux.at(x, (y + 1).div_euclid(2), c)) / 2.0f32;
            let alpha = 1.0f32 - d.at(x, y, 3);
            d.at(x, y, c) + alpha * up
        });
    }
    Buffer::from_fn(&[w, h, 3], |p| interp.at(p[0], p[1], p[2]) / interp.at(p[0], p[1], 3))
}

/// Planar RGBA from planar RGB: the colour kept, alpha 1 at a sparse set of samples (one
/// random pixel in every 4×4 block, one in every 4 pixels along each border, the four
/// corners) and 0 elsewhere.
pub fn sparse_rgba(rgb: &Buffer<f32>, seed: u64) -> Buffer<f32> {
    let (w, h) = (rgb.width(), rgb.height());
    let mut r = crate::synth::Rng::new(seed);
    let mut pick = |lo: i32, hi: i32| lo + (r.next_u64() % (hi - lo) as u64) as i32;
    let mut alpha = vec![0.0f32; (w * h) as usize];
    let mut set = |x: i32, y: i32| alpha[(y * w + x) as usize] = 1.0;
    for by in (0..h).step_by(4) {
        for bx in (0..w).step_by(4) {
            let (sx, sy) = (pick(bx, (bx + 4).min(w)), pick(by, (by + 4).min(h)));
            set(sx, sy);
        }
    }
    for b in (0..h).step_by(4) {
        let sy = pick(b, (b + 4).min(h));
        set(0, sy);
        let sy = pick(b, (b + 4).min(h));
        set(w - 1, sy);
    }
    for b in (0..w).step_by(4) {
        let sx = pick(b, (b + 4).min(w));
        set(sx, 0);
        let sx = pick(b, (b + 4).min(w));
        set(sx, h - 1);
    }
    for (x, y) in [(0, 0), (w - 1, 0), (0, h - 1), (w - 1, h - 1)] {
        set(x, y);
    }
    Buffer::from_fn(&[w, h, 4], |p| {
        if p[2] < 3 {
            rgb[[p[0], p[1], p[2].min(rgb.extent(2) - 1)]]
        } else {
            alpha[(p[1] * w + p[0]) as usize]
        }
    })
}

impl App for Interpolate {
    fn name(&self) -> &'static str {
        "interpolate"
    }
    fn description(&self) -> &'static str {
        "multi-scale interpolation of sparse RGBA samples through a pyramid ([1 2 1]/4 down, linear up), float32"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn distributed_slices(&self) -> (usize, i32) {
        (1, STRIP)
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "distributed" => self.schedule_distributed(),
            "gpu" => self.schedule_gpu(),
            _ => return Err(common::unknown_schedule("interpolate", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec {
            name: "input".into(),
            ty: Type::f32(),
            channels: 4,
            values: "planar RGBA f32: colour in [0, 1], alpha 1 at the samples and 0 elsewhere",
        }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("interpolate", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("interpolate", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<f32>("interpolate", inputs, 0, 3)?;
        if i.extent(2) != 4 {
            return Err(common::too_small(
                "interpolate",
                format!("the input must have 4 channels (RGBA), got extents {:?}", i.extents()),
            ));
        }
        Ok(vec![i.width(), i.height(), 3])
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![sparse_rgba(&crate::synth::test_picture(width, height), seed).into()]
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        if rgb.dimensions() != 3 || rgb.extent(2) != 3 {
            return Err(AppError::Input {
                app: "interpolate",
                message: format!("a picture must be planar RGB (x, y, 3), got extents {:?}", rgb.extents()),
            });
        }
        Ok(vec![sparse_rgba(rgb, 1).into()])
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        self.output_extents(inputs)?;
        Ok(self.reference_on(common::input::<f32>("interpolate", inputs, 0, 3)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        // The same operations in the same order: equal in practice.
        Tolerance::Relative(1e-6)
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Interpolate::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_every_pixel() {
        let app = Interpolate::with_levels(5);
        let inputs = app.make_inputs(37, 23, 4);
        let out = app.reference(&inputs).unwrap();
        let v = out.to_f64_vec();
        assert!(v.iter().all(|p| p.is_finite() && (-1e-6..=1.0 + 1e-6).contains(p)));
    }

    #[test]
    fn samples_keep_their_colour_where_dense() {
        // Every pixel a sample: the output is the input's colour.
        let rgb = crate::synth::test_picture(16, 12);
        let rgba = Buffer::from_fn(&[16, 12, 4], |p| if p[2] < 3 { rgb[[p[0], p[1], p[2]]] } else { 1.0 });
        let out = reference(&rgba, 3);
        for (a, b) in out.as_slice().iter().zip(rgb.as_slice()) {
            assert!((a - b).abs() < 1e-6);
        }
    }

    #[test]
    fn clamped_level_with_five_levels() {
        let app = Interpolate::with_levels(5);
        app.schedule_hand();
        let inputs = app.make_inputs(45, 33, 2);
        let got = app.run(&Target::interp(), &inputs).unwrap();
        got.compare(&app.reference(&inputs).unwrap(), app.tolerance()).unwrap();
    }

    #[test]
    fn halide_schedule_verbatim_with_five_levels() {
        for target in [Target::interp(), Target::host()] {
            let app = Interpolate::with_levels(5);
            app.schedule_hand_halide();
            let inputs = app.make_inputs(41, 27, 3);
            let got = app.run(&target, &inputs).unwrap();
            got.compare(&app.reference(&inputs).unwrap(), app.tolerance()).unwrap();
        }
    }

    #[test]
    fn rejects_bad_levels_and_inputs() {
        let c = Config::parse(&["levels=0"]).unwrap();
        assert!(Interpolate::with_config(&c).err().unwrap().to_string().contains("levels"));
        let app = Interpolate::with_levels(3);
        let three = vec![DynBuffer::from(Buffer::<f32>::new(&[8, 8, 3]))];
        assert!(app.output_extents(&three).unwrap_err().to_string().contains("4 channels"));
    }
}
