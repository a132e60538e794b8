//! One level of the forward Daubechies D4 wavelet transform of a `f32` gray image, in `x`
//! then in `y` (Halide's `apps/wavelet`, whose generators transform along `x` only, made
//! two-dimensional).
//!
//! The D4 analysis filters, with Halide's constants `D0..D3` =
//! `(1 + √3, 3 + √3, 3 - √3, 1 - √3) / (4√2)`, applied at even positions:
//!
//! ```text
//! low(2i)  = D0 f(2i-1) + D1 f(2i) + D2 f(2i+1) + D3 f(2i+2)
//! high(2i) = D3 f(2i-1) - D2 f(2i) + D1 f(2i+1) - D0 f(2i+2)
//! ```
//!
//! The `x` pass makes a low and a high half-width image (`wavelet_x(x, y, 0 | 1)`); the
//! `y` pass filters each of them along `y`. The output is `W/2 × H/2 × 4` (sizes rounded
//! down), the four sub-bands along the third dimension, named by the filter along `x`
//! then along `y`: 0 = LL (the half-size image, gain 2), 1 = LH (low in `x`, high in `y`:
//! horizontal edges), 2 = HL (vertical edges), 3 = HH. The input is read through
//! `repeat_edge`, as in Halide's app; along `y` the `x` pass inherits that clamp, so the
//! `y` pass needs no boundary of its own.
//!
//! Only the forward transform: a pipeline has one output Func, and the inverse would be a
//! second pipeline on this one's output.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{wavelet::Wavelet, App};
//! let app = Wavelet::build("hand").unwrap();
//! let inputs = app.make_inputs(20, 12, 3); // a 40x24 input
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert_eq!(out.extents(), vec![20, 12, 4]);
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// `(1 + √3) / (4√2)`.
pub const D0: f32 = 0.482_962_913_144_534_1_f64 as f32;
/// `(3 + √3) / (4√2)`.
pub const D1: f32 = 0.836_516_303_737_807_7_f64 as f32;
/// `(3 - √3) / (4√2)`.
pub const D2: f32 = 0.224_143_868_042_013_4_f64 as f32;
/// `(1 - √3) / (4√2)`.
pub const D3: f32 = -0.129_409_522_551_260_3_f64 as f32;

/// The wavelet transform's Funcs and input.
pub struct Wavelet {
    /// The `f32` gray input, `W × H`.
    pub input: ImageParam,
    /// The `x` pass: `(x, y, 0)` low, `(x, y, 1)` high, `W/2 × H`.
    pub wavelet_x: Func,
    /// The output: `(x, y, band)`, `W/2 × H/2 × 4`.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// The band (of the output) or the `x` filter (of `wavelet_x`).
    pub c: Var,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "distributed"];

/// The output rows of one strip of [`Wavelet::schedule_hand`] (and of the unit that
/// [`Wavelet::schedule_distributed`] deals out to the ranks).
const STRIP: i32 = 16;

/// The low-pass filter on the samples at `2i-1, 2i, 2i+1, 2i+2`.
fn low(a: Expr, b: Expr, c: Expr, d: Expr) -> Expr {
    D0 * a + D1 * b + D2 * c + D3 * d
}

/// The high-pass filter on the same samples.
fn high(a: Expr, b: Expr, c: Expr, d: Expr) -> Expr {
    D3 * a - D2 * b + D1 * c - D0 * d
}

fn low_f32(a: f32, b: f32, c: f32, d: f32) -> f32 {
    D0 * a + D1 * b + D2 * c + D3 * d
}

fn high_f32(a: f32, b: f32, c: f32, d: f32) -> f32 {
    D3 * a - D2 * b + D1 * c - D0 * d
}

impl Default for Wavelet {
    fn default() -> Self {
        Wavelet::new()
    }
}

impl Wavelet {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Wavelet {
        let input = ImageParam::new(Type::f32(), 2, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let clamped = boundary::repeat_edge(&input, &input.bounds());
        let wavelet_x = Func::new("wavelet_x");
        let ix = |d: i32| clamped.at((2 * x + d, y));
        wavelet_x.def((x, y, c), select(c.eq(0), low(ix(-1), ix(0), ix(1), ix(2)), high(ix(-1), ix(0), ix(1), ix(2))));
        // Band c filters along x with c / 2 and along y with c % 2.
        let out = Func::new("wavelet");
        let wy = |d: i32| wavelet_x.at((x, 2 * y + d, c / 2));
        out.def((x, y, c), select((c % 2).eq(0), low(wy(-1), wy(0), wy(1), wy(2)), high(wy(-1), wy(0), wy(1), wy(2))));
        input.set_estimates(&[(0, 4096), (0, 3072)]);
        out.set_estimates(&[(0, 2048), (0, 1536), (0, 4)]);
        Wavelet { input, wavelet_x, out, x, y, c }
    }

    /// Builds the algorithm; it has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Wavelet> {
        config.resolve("wavelet", &[])?;
        Ok(Wavelet::new())
    }

    /// Halide's app unrolls the filter dimension (`unroll(c, 2)`), so each pair of outputs
    /// shares its four loads. Here, two-dimensional: the output in parallel strips of 16
    /// rows, the four bands unrolled inside each row, vectorized by 8 (AVX2 `f32`); the
    /// `x` pass slides down each strip (stored per strip, computed per output row: two new
    /// rows of it per output row), its two filters unrolled, vectorized by 8.
    pub fn schedule_hand(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out
            .bound(c, 0, 4)
            .split(y, yo, yi, STRIP)
            .reorder(&[x, c, yi, yo])
            .parallel(yo)
            .vectorize(x, 8)
            .unroll_full(c);
        self.wavelet_x
            .store_at(&self.out, yo)
            .compute_at(&self.out, yi)
            .bound(c, 0, 2)
            .reorder(&[x, c, y])
            .vectorize(x, 8)
            .unroll_full(c);
    }

    /// Over the ranks of a distributed run: the hand schedule, with its strips of output
    /// rows dealt out in blocks to the ranks (each rank runs its strips in parallel). Each
    /// strip computes the rows of the `x` pass it reads, so the ranks exchange nothing: the
    /// seed's third choice (section 3.4), recomputing a strip's border rows instead of
    /// sending them.
    pub fn schedule_distributed(&self) {
        self.schedule_hand();
        self.out.distribute(Var::new("yo"));
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.wavelet_x, &self.out]);
    }

    /// The transform in plain Rust (`input` has mins 0 and is at least 2×2).
    pub fn reference(input: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (input.width(), input.height());
        let px = |x: i32, y: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1)]];
        let (ow, oh) = (w / 2, h / 2);
        // The x pass on every row the y pass reads: -1 ..= 2 * oh.
        let (y0, rows) = (-1, 2 * oh + 2);
        let mut wx = vec![[0f32; 2]; (ow * rows).max(0) as usize];
        for r in 0..rows {
            for xx in 0..ow {
                let f = |d: i32| px(2 * xx + d, r + y0);
                wx[(r * ow + xx) as usize] = [low_f32(f(-1), f(0), f(1), f(2)), high_f32(f(-1), f(0), f(1), f(2))];
            }
        }
        Buffer::from_fn(&[ow, oh, 4], |p| {
            let (xx, yy, band) = (p[0], p[1], p[2]);
            let f = |d: i32| wx[((2 * yy + d - y0) * ow + xx) as usize][(band / 2) as usize];
            if band % 2 == 0 {
                low_f32(f(-1), f(0), f(1), f(2))
            } else {
                high_f32(f(-1), f(0), f(1), f(2))
            }
        })
    }

    /// The four bands side by side as one `W × H` gray picture (LL top left, LH bottom
    /// left, HL top right, HH bottom right), LL scaled by 1/2 and the details by 4 around
    /// 0.5, as Halide's app shows them.
    pub fn mosaic(bands: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (bands.width(), bands.height());
        Buffer::from_fn(&[2 * w, 2 * h], |p| {
            let (bx, by) = (p[0] / w.max(1), p[1] / h.max(1));
            let band = 2 * bx + by;
            let v = bands[[p[0] - bx * w, p[1] - by * h, band]];
            let shown = if band == 0 { v * 0.5 } else { v * 4.0 + 0.5 };
            shown.clamp(0.0, 1.0)
        })
    }
}

impl App for Wavelet {
    fn name(&self) -> &'static str {
        "wavelet"
    }
    fn description(&self) -> &'static str {
        "Daubechies D4 forward wavelet transform in x then y, float32 gray, 4 sub-bands (Halide's apps/wavelet, 2-D)"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn distributed_slices(&self) -> (usize, i32) {
        (1, STRIP)
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "distributed" => self.schedule_distributed(),
            _ => return Err(common::unknown_schedule("wavelet", name, SCHEDULES)),
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
            channels: 1,
            values: "gray, any finite value (typically [0, 1]); at least 2x2",
        }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("wavelet", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("wavelet", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<f32>("wavelet", inputs, 0, 2)?;
        if i.width() < 2 || i.height() < 2 {
            return Err(common::too_small("wavelet", format!("the input must be at least 2x2, got {:?}", i.extents())));
        }
        Ok(vec![i.width() / 2, i.height() / 2, 4])
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // `width × height` is the output size of each band: the input is twice as large.
        vec![crate::synth::smooth_gray(2 * width, 2 * height, seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        common::count("wavelet", inputs, 1)?;
        self.output_extents(inputs)?;
        Ok(Wavelet::reference(common::input::<f32>("wavelet", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Relative(1e-6)
    }
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        match output.typed::<f32>() {
            Some(b) if b.dimensions() == 3 && b.extent(2) == 4 => Wavelet::mosaic(b).into(),
            _ => output.clone(),
        }
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Wavelet::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_input_sizes_drop_the_last_column_and_row() {
        let app = Wavelet::build("hand").unwrap();
        let inputs = vec![DynBuffer::from(crate::synth::smooth_gray(41, 25, 9))];
        assert_eq!(app.output_extents(&inputs).unwrap(), vec![20, 12, 4]);
        let expected = app.reference(&inputs).unwrap();
        for target in [Target::interp(), Target::host()] {
            let got = app.run(&target, &inputs).unwrap();
            got.compare(&expected, app.tolerance()).unwrap();
        }
    }

    #[test]
    fn a_constant_image_has_no_detail() {
        let input = Buffer::from_fn(&[8, 6], |_| 0.25f32);
        let out = Wavelet::reference(&input);
        for y in 0..3 {
            for x in 0..4 {
                // D0 + D1 + D2 + D3 = √2 per axis.
                assert!((out[[x, y, 0]] - 0.5).abs() < 1e-6);
                for band in 1..4 {
                    assert!(out[[x, y, band]].abs() < 1e-6);
                }
            }
        }
    }

    #[test]
    fn too_small_inputs_are_errors() {
        let app = Wavelet::new();
        let inputs = vec![DynBuffer::from(Buffer::<f32>::new(&[1, 5]))];
        let e = app.output_extents(&inputs).unwrap_err().to_string();
        assert!(e.contains("wavelet") && e.contains("2x2") && e.contains("[1, 5]"), "{e}");
        assert!(app.reference(&inputs).is_err());
    }
}
