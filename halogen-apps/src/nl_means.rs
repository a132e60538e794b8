//! Non-local means denoising (Buades, Coll and Morel 2005; Halide's `nl_means` app) of
//! `f32` planar RGB: each output pixel is the average of the pixels in a `search_area ×
//! search_area` window around it, each weighted by how alike the `patch_size × patch_size`
//! patches around the two pixels are.
//!
//! With `clamped` the `repeat_edge` input, for every offset `(dx, dy)` of the search window:
//!
//! - `d(x, y, dx, dy) = Σ_c (clamped(x, y, c) - clamped(x + dx, y + dy, c))²` (channels
//!   summed in order 0, 1, 2);
//! - `blur_d` is `d` box-summed over the patch, first along `y` (`blur_d_y`) then along `x`,
//!   each sum from the patch's first tap to its last;
//! - `w = exp(blur_d · k)` with `k = -1 / (sigma² · patch_size²)`, computed in `f32` as
//!   Halide does, `((sigma · sigma) · p) · p`;
//! - `non_local_means_sum(x, y, c) = Σ_{dy, dx} w · clamped_with_alpha(x + dx, y + dy, c)`,
//!   with a fourth channel of ones that sums the weights (offsets in row-major order: `dy`
//!   outer, `dx` inner);
//! - the output is `clamp(sum_c / sum_3, 0, 1)` for the three colour channels.
//!
//! The parameters are construction-time constants: `patch_size` 7, `search_area` 7 (both
//! odd: the windows are centred, from `-size / 2` to `size / 2`) and `sigma` 0.12, Halide's
//! values. Halide's app takes them at run time and uses `fast_exp`; this one uses `exp`.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{nl_means::NlMeans, App};
//! let app = NlMeans::build("hand").unwrap();
//! let inputs = app.make_inputs(24, 16, 2);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The denoiser's Funcs and input.
pub struct NlMeans {
    /// Planar RGB `f32` input, `(x, y, c)`.
    pub input: ImageParam,
    /// Squared colour difference to the pixel at offset `(dx, dy)`, `(x, y, dx, dy)`.
    pub d: Func,
    /// `d` summed over the patch along `y`.
    pub blur_d_y: Func,
    /// ... and then along `x`: the patch distance.
    pub blur_d: Func,
    /// The weight of offset `(dx, dy)` at `(x, y)`.
    pub w: Func,
    /// The edge-clamped input with a fourth channel of ones.
    pub clamped_with_alpha: Func,
    /// Weighted sums of colour (`c < 3`) and of the weights (`c = 3`): a reduction over
    /// the search window.
    pub non_local_means_sum: Func,
    /// The output.
    pub out: Func,
    /// The search window's offsets.
    pub s_dom: RDom,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// Side of the patches compared (odd).
    pub patch_size: i32,
    /// Side of the search window (odd).
    pub search_area: i32,
    /// The filtering strength.
    pub sigma: f32,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu"];
const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "patch_size",
        default: 7.0,
        help: "side of the patches compared",
        min: 1.0,
        max: 15.0,
        kind: ParamKind::OddInteger,
    },
    ParamSpec {
        name: "search_area",
        default: 7.0,
        help: "side of the search window",
        min: 1.0,
        max: 21.0,
        kind: ParamKind::OddInteger,
    },
    ParamSpec {
        name: "sigma",
        default: 0.12,
        help: "filtering strength",
        min: 0.001,
        max: 100.0,
        kind: ParamKind::Real,
    },
];

/// The vector width for `f32` on AVX2.
const VEC: i32 = 8;

/// `-1 / (sigma² · patch_size²)` in `f32`, in Halide's order of operations.
fn weight_scale(sigma: f32, patch_size: i32) -> f32 {
    let p = patch_size as f32;
    -1.0f32 / (sigma * sigma * p * p)
}

impl Default for NlMeans {
    fn default() -> Self {
        NlMeans::new()
    }
}

impl NlMeans {
    /// Builds the algorithm with Halide's parameters: patches of 7, search window of 7,
    /// sigma 0.12 (no schedule).
    pub fn new() -> NlMeans {
        NlMeans::with_params(7, 7, 0.12)
    }

    /// Builds the algorithm from `config` (`patch_size`, `search_area`, `sigma`).
    pub fn with_config(config: &Config) -> Result<NlMeans> {
        let v = config.resolve("nl_means", PARAMS)?;
        Ok(NlMeans::with_params(v[0] as i32, v[1] as i32, v[2] as f32))
    }

    /// Builds the algorithm with the given patch size, search area (odd) and sigma (no
    /// schedule).
    pub fn with_params(patch_size: i32, search_area: i32, sigma: f32) -> NlMeans {
        let input = ImageParam::new(Type::f32(), 3, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let (dx, dy) = (Var::new("dx"), Var::new("dy"));
        let clamped = boundary::repeat_edge(&input, &input.bounds());
        let diff = |ch: i32| {
            let v = clamped.at((x, y, ch)) - clamped.at((x + dx, y + dy, ch));
            v.clone() * v
        };
        let d = Func::new("d");
        d.def((x, y, dx, dy), diff(0) + diff(1) + diff(2));
        // The box sums written out tap by tap (the patch size is a constant), in the order
        // of Halide's inline `sum` over the patch; as pure Funcs they can be scheduled.
        let half = patch_size / 2;
        let box_sum = |tap: &dyn Fn(i32) -> Expr| (1 - half..=half).fold(tap(-half), |acc, k| acc + tap(k));
        let blur_d_y = Func::new("blur_d_y");
        blur_d_y.def((x, y, dx, dy), box_sum(&|k| d.at((x, y + k, dx, dy))));
        let blur_d = Func::new("blur_d");
        blur_d.def((x, y, dx, dy), box_sum(&|k| blur_d_y.at((x + k, y, dx, dy))));
        let w = Func::new("w");
        w.def((x, y, dx, dy), exp(blur_d.at((x, y, dx, dy)) * weight_scale(sigma, patch_size)));
        let clamped_with_alpha = Func::new("clamped_with_alpha");
        clamped_with_alpha.def(
            (x, y, c),
            select(
                c.eq(0),
                clamped.at((x, y, 0)),
                select(c.eq(1), clamped.at((x, y, 1)), select(c.eq(2), clamped.at((x, y, 2)), 1.0f32)),
            ),
        );
        let s = search_area / 2;
        let s_dom = RDom::new(&[(Expr::from(-s), Expr::from(search_area)), (Expr::from(-s), Expr::from(search_area))]);
        let (sx, sy) = (s_dom.x(), s_dom.y());
        let nlm_sum = Func::new("non_local_means_sum");
        nlm_sum.def((x, y, c), 0.0f32);
        nlm_sum.update(
            (x, y, c),
            nlm_sum.at((x, y, c)) + w.at((x, y, sx, sy)) * clamped_with_alpha.at((x + sx, y + sy, c)),
        );
        let out = Func::new("nl_means");
        out.def((x, y, c), clamp(nlm_sum.at((x, y, c)) / nlm_sum.at((x, y, 3)), 0.0f32, 1.0f32));
        input.set_estimates(&[(0, 1536), (0, 1024), (0, 3)]);
        out.set_estimates(&[(0, 1536), (0, 1024), (0, 3)]);
        NlMeans {
            input,
            d,
            blur_d_y,
            blur_d,
            w,
            clamped_with_alpha,
            non_local_means_sum: nlm_sum,
            out,
            s_dom,
            x,
            y,
            c,
            patch_size,
            search_area,
            sigma,
        }
    }

    /// Halide's CPU schedule for this app: the output in 16×8 tiles, parallel over rows of
    /// tiles, vectorized by 8 with the channels just outside the vector; the squared
    /// differences and their vertical box sums computed per tile for every offset; the
    /// weighted sums per vector of output pixels (channels fixed to 4 and unrolled, offsets
    /// outermost); the patch distances of one offset per vector of the sums.
    ///
    /// Two changes keep every vector loop innermost, which is what Halogen vectorizes (a
    /// vectorized loop around another loop runs lane by lane): Halide's output order
    /// `(c, x, y)` with `x` vectorized becomes `(x_vector, c, x, y)` (Halide's interpolate
    /// app orders its output so), and `blur_d_y` keeps `x` inside `y` rather than Halide's
    /// `reorder(y, x)`; and the weights are computed once per vector of the sums rather
    /// than inlined into each of the four unrolled channels (Halide's code generator merges
    /// the four `exp` calls; the C compiler does not).
    pub fn schedule_hand(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (tx, ty, xo, xi) = (Var::new("tx"), Var::new("ty"), Var::new("xo"), Var::new("xi"));
        let (sx, sy) = (self.s_dom.x(), self.s_dom.y());
        let out = &self.out;
        out.compute_root()
            .tile_named(x, y, tx, ty, x, y, 16, 8)
            .split(x, xo, xi, VEC)
            .reorder(&[xi, c, xo, y, tx, ty])
            .vectorize(xi, VEC)
            .parallel(ty);
        self.blur_d_y.compute_at(out, tx).vectorize(x, VEC);
        self.d.compute_at(out, tx).vectorize(x, VEC);
        let sum = &self.non_local_means_sum;
        sum.compute_at(out, xo).reorder(&[c, x, y]).bound(c, 0, 4).unroll_full(c).vectorize(x, VEC);
        sum.update_stage(0)
            .reorder(&[VarOrRVar::from(c), x.into(), y.into(), sx.into(), sy.into()])
            .unroll_full(c)
            .vectorize(x, VEC);
        self.blur_d.compute_at(sum, x).vectorize(x, VEC);
        self.w.compute_at(sum, x).vectorize(x, VEC);
    }

    /// For a GPU (Halide's GPU schedule of this app): the output in 16×8 tiles; each block
    /// keeps its tile's weighted sums (four channels) in shared memory and walks the search
    /// offsets, and for each offset its threads compute that offset's squared differences,
    /// vertical box sums and patch distances over the tile and its margins in shared memory,
    /// then add their own pixel's weighted neighbour.
    pub fn schedule_gpu(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        let (sx, sy) = (self.s_dom.x(), self.s_dom.y());
        let sum = &self.non_local_means_sum;
        self.out.compute_root().reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 16, 8);
        sum.compute_at(&self.out, xo).bound(c, 0, 4).reorder(&[c, x, y]).gpu_threads(x).gpu_threads(y);
        sum.update_stage(0)
            .reorder(&[VarOrRVar::from(c), x.into(), y.into(), sx.into(), sy.into()])
            .gpu_threads(x)
            .gpu_threads(y);
        for f in [&self.d, &self.blur_d_y, &self.blur_d] {
            f.compute_at(sum, sx).gpu_threads(x).gpu_threads(y);
        }
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[
            &self.d,
            &self.blur_d_y,
            &self.blur_d,
            &self.w,
            &self.clamped_with_alpha,
            &self.non_local_means_sum,
            &self.out,
        ]);
    }

    /// The denoiser in plain Rust (`input` has mins 0 and 3 channels).
    pub fn reference_on(&self, input: &Buffer<f32>) -> Buffer<f32> {
        reference(input, self.patch_size, self.search_area, self.sigma)
    }
}

/// Non-local means in plain Rust (`input` has mins 0 and 3 channels), the same operations
/// in the same order as the pipeline.
pub fn reference(input: &Buffer<f32>, patch_size: i32, search_area: i32, sigma: f32) -> Buffer<f32> {
    let (w, h) = (input.width(), input.height());
    let px = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]];
    let (half, s) = (patch_size / 2, search_area / 2);
    let k = weight_scale(sigma, patch_size);
    // d and its vertical sums for one offset, on the image grown by the patch radius in x.
    let (gw, n) = (w + 2 * half, (w * h) as usize);
    let mut sums = vec![[0.0f32; 4]; n];
    let mut d = vec![0.0f32; (gw * (h + 2 * half)) as usize];
    let mut dy_sum = vec![0.0f32; (gw * h) as usize];
    for oy in -s..=s {
        for ox in -s..=s {
            for (i, v) in d.iter_mut().enumerate() {
                let (x, y) = (i as i32 % gw - half, i as i32 / gw - half);
                let diff = |c: i32| {
                    let t = px(x, y, c) - px(x + ox, y + oy, c);
                    t * t
                };
                *v = diff(0) + diff(1) + diff(2);
            }
            for (i, v) in dy_sum.iter_mut().enumerate() {
                let (gx, y) = (i as i32 % gw, i as i32 / gw);
                let at = |k: i32| d[((y + half + k) * gw + gx) as usize];
                *v = (1 - half..=half).fold(at(-half), |acc, k| acc + at(k));
            }
            for (i, acc) in sums.iter_mut().enumerate() {
                let (x, y) = (i as i32 % w, i as i32 / w);
                let at = |k: i32| dy_sum[(y * gw + x + half + k) as usize];
                let dist = (1 - half..=half).fold(at(-half), |a, k| a + at(k));
                let wt = (dist * k).exp();
                for (c, a) in acc.iter_mut().enumerate() {
                    let v = if c < 3 { px(x + ox, y + oy, c as i32) } else { 1.0 };
                    *a += wt * v;
                }
            }
        }
    }
    Buffer::from_fn(&[w, h, 3], |p| {
        let a = sums[(p[1] * w + p[0]) as usize];
        (a[p[2] as usize] / a[3]).clamp(0.0, 1.0)
    })
}

impl App for NlMeans {
    fn name(&self) -> &'static str {
        "nl_means"
    }
    fn description(&self) -> &'static str {
        "non-local means denoising, float32 planar RGB, 7x7 patches over a 7x7 search window"
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
            _ => return Err(common::unknown_schedule("nl_means", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::f32(), channels: 3, values: "planar RGB f32 in [0, 1]" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("nl_means", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("nl_means", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<f32>("nl_means", inputs, 0, 3)?;
        if i.extent(2) != 3 {
            return Err(common::too_small(
                "nl_means",
                format!("the input must have 3 channels (RGB), got extents {:?}", i.extents()),
            ));
        }
        Ok(i.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // The test picture with Gaussian noise of standard deviation 0.05: something to remove.
        let mut p = crate::synth::test_picture(width, height);
        let mut r = crate::synth::Rng::new(seed);
        for v in p.as_mut_slice() {
            *v = (*v + 0.05 * r.normal() as f32).clamp(0.0, 1.0);
        }
        vec![p.into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        self.output_extents(inputs)?;
        Ok(self.reference_on(common::input::<f32>("nl_means", inputs, 0, 3)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        // `exp` may differ in the last bit between the C library and Rust's.
        Tolerance::Relative(1e-5)
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = NlMeans::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_image_stays_flat() {
        let flat = Buffer::<f32>::from_fn(&[12, 9, 3], |p| [0.2, 0.5, 0.7][p[2] as usize]);
        let out = reference(&flat, 7, 7, 0.12);
        for (i, v) in out.as_slice().iter().enumerate() {
            assert!((v - [0.2, 0.5, 0.7][i / (12 * 9)]).abs() < 1e-6);
        }
    }

    #[test]
    fn denoises() {
        let app = NlMeans::new();
        let clean = crate::synth::test_picture(48, 32);
        let noisy = app.make_inputs(48, 32, 3);
        let out = app.reference(&noisy).unwrap();
        let err = |a: &[f64]| a.iter().zip(clean.as_slice()).map(|(a, b)| (a - *b as f64).powi(2)).sum::<f64>();
        assert!(err(&out.to_f64_vec()) < 0.7 * err(&noisy[0].to_f64_vec()));
    }

    #[test]
    fn other_sizes_match() {
        let app = NlMeans::with_params(3, 5, 0.2);
        app.schedule_hand();
        let inputs = app.make_inputs(21, 13, 5);
        let got = app.run(&Target::interp(), &inputs).unwrap();
        got.compare(&app.reference(&inputs).unwrap(), app.tolerance()).unwrap();
    }

    #[test]
    fn rejects_even_sizes() {
        let c = Config::parse(&["patch_size=6"]).unwrap();
        let e = NlMeans::with_config(&c).err().unwrap().to_string();
        assert!(e.contains("patch_size") && e.contains('6'), "{e}");
    }
}
