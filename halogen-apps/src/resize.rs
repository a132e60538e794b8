//! Bicubic resampling of `f32` planar RGB by a constant factor (Halide's `resize` app):
//! the Keys cubic (`a = -0.5`), widened by `1 / scale` when shrinking so it also
//! anti-aliases; per-output-coordinate kernel weights normalised to sum to 1, computed once
//! per row and per column; separable, `x` first; `repeat_edge` at the borders.
//!
//! The two resampling passes are explicit reduction Funcs rather than inline `sum(..)`s:
//! an inline reduction's Func is anonymous and, having an update, computed at root, so a
//! schedule could not place the `x` pass inside the output's loops.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{resize::Resize, App};
//! let app = Resize::with_scale(1.5);
//! app.schedule_hand();
//! let inputs = app.make_inputs(24, 18, 3); // a 16x12 input
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert_eq!(out.extents(), vec![24, 18, 3]);
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The resampler's Funcs and input.
pub struct Resize {
    /// Planar RGB `f32` input.
    pub input: ImageParam,
    /// Unnormalised weight of tap `k` for output column `x`.
    pub kernel_x_raw: Func,
    /// Their sums.
    pub kernel_sum_x: Func,
    /// Normalised weights for columns.
    pub kernel_x: Func,
    /// Unnormalised weight of tap `k` for output row `y`.
    pub kernel_y_raw: Func,
    /// Their sums.
    pub kernel_sum_y: Func,
    /// Normalised weights for rows.
    pub kernel_y: Func,
    /// Resampled along `x` (a reduction over the taps).
    pub resized_x: Func,
    /// Resampled along `y` too (a reduction over the taps).
    pub resized_y: Func,
    /// The output (`resized_y`).
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// The tap index.
    pub k: Var,
    /// Output size / input size.
    pub scale: f32,
    /// Taps per output sample.
    pub taps: i32,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu"];
const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "scale",
    default: 2.0,
    help: "output size / input size",
    min: 0.125,
    max: 8.0,
    kind: ParamKind::Real,
}];

/// The Keys cubic convolution kernel with `a = -0.5`, as an expression of `|t|`.
fn cubic(t: Expr) -> Expr {
    let t = abs(t);
    let t2 = t.clone() * t.clone();
    let t3 = t2.clone() * t.clone();
    let near = 1.5f32 * t3.clone() - 2.5f32 * t2.clone() + 1.0f32;
    let far = -0.5f32 * t3 + 2.5f32 * t2 - 4.0f32 * t.clone() + 2.0f32;
    select(t.lt(1.0f32), near, select(t.lt(2.0f32), far, 0.0f32))
}

fn cubic_f32(t: f32) -> f32 {
    let t = t.abs();
    let t2 = t * t;
    let t3 = t2 * t;
    if t < 1.0 {
        1.5f32 * t3 - 2.5f32 * t2 + 1.0f32
    } else if t < 2.0 {
        -0.5f32 * t3 + 2.5f32 * t2 - 4.0f32 * t + 2.0f32
    } else {
        0.0
    }
}

/// The constants of the resampler for a scale factor.
#[derive(Clone, Copy)]
struct Geometry {
    scale: f32,
    /// Kernel stretch: 1 when enlarging, `scale` when shrinking.
    shrink: f32,
    /// Support radius in input pixels.
    support: f32,
    taps: i32,
}

impl Geometry {
    fn new(scale: f32) -> Geometry {
        let shrink = scale.min(1.0);
        let support = 2.0 / shrink;
        Geometry { scale, shrink, support, taps: 2 * support.ceil() as i32 + 1 }
    }
    /// Centre of output sample `o` in input coordinates, and the first input tap.
    fn centre_begin(&self, o: i32) -> (f32, i32) {
        let centre = (o as f32 + 0.5f32) / self.scale - 0.5f32;
        (centre, (centre - self.support).floor() as i32 + 1)
    }
}

impl Default for Resize {
    fn default() -> Self {
        Resize::with_scale(2.0)
    }
}

impl Resize {
    /// Builds the algorithm for a scale factor (no schedule).
    pub fn with_scale(scale: f32) -> Resize {
        let g = Geometry::new(scale);
        let input = ImageParam::new(Type::f32(), 3, "input");
        let (x, y, c, k) = (Var::new("x"), Var::new("y"), Var::new("c"), Var::new("k"));
        let cl = boundary::repeat_edge(&input, &input.bounds()[..2]);
        let centre = |v: Var| (v.cast::<f32>() + 0.5f32) / g.scale - 0.5f32;
        let begin = |v: Var| floor(centre(v) - g.support).cast::<i32>() + 1;
        let kernels = |v: Var, axis: &str| {
            let raw = Func::new(&format!("kernel_{axis}_raw"));
            raw.def((v, k), cubic(((begin(v) + k).cast::<f32>() - centre(v)) * g.shrink));
            let r = RDom::new(&[(Expr::from(0), Expr::from(g.taps))]);
            let total = Func::new(&format!("kernel_sum_{axis}"));
            total.def(v, sum(raw.at((v, r.x()))));
            let norm = Func::new(&format!("kernel_{axis}"));
            norm.def((v, k), raw.at((v, k)) / total.at(v));
            (raw, total, norm)
        };
        let (kernel_x_raw, kernel_sum_x, kernel_x) = kernels(x, "x");
        let (kernel_y_raw, kernel_sum_y, kernel_y) = kernels(y, "y");
        let rx = RDom::new(&[(Expr::from(0), Expr::from(g.taps))]);
        let resized_x = Func::new("resized_x");
        resized_x.def((x, y, c), 0.0f32);
        resized_x
            .update((x, y, c), resized_x.at((x, y, c)) + kernel_x.at((x, rx.x())) * cl.at((begin(x) + rx.x(), y, c)));
        let ry = RDom::new(&[(Expr::from(0), Expr::from(g.taps))]);
        let resized_y = Func::new("resized_y");
        resized_y.def((x, y, c), 0.0f32);
        resized_y.update(
            (x, y, c),
            resized_y.at((x, y, c)) + kernel_y.at((y, ry.x())) * resized_x.at((x, begin(y) + ry.x(), c)),
        );
        let out = Func::new("resize");
        out.def((x, y, c), resized_y.at((x, y, c)));
        input.set_estimates(&[(0, 1920), (0, 1080), (0, 3)]);
        out.set_estimates(&[(0, 3840), (0, 2160), (0, 3)]);
        Resize {
            input,
            kernel_x_raw,
            kernel_sum_x,
            kernel_x,
            kernel_y_raw,
            kernel_sum_y,
            kernel_y,
            resized_x,
            resized_y,
            out,
            x,
            y,
            c,
            k,
            scale,
            taps: g.taps,
        }
    }

    /// Builds the algorithm from `config` (`scale`).
    pub fn with_config(config: &Config) -> Result<Resize> {
        let v = config.resolve("resize", PARAMS)?;
        Ok(Resize::with_scale(v[0] as f32))
    }

    /// The weights at root (they depend on one coordinate only), the output in parallel
    /// strips of 16 rows vectorized by 8: each strip's horizontal pass computed for it,
    /// the vertical pass per vector of output pixels, both vectorized in both stages.
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        for f in [&self.kernel_x, &self.kernel_y] {
            f.compute_root();
        }
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out.split(y, yo, yi, 16).parallel(yo).vectorize(x, 8);
        self.resized_y.compute_at(&self.out, x).vectorize(x, 8);
        self.resized_y.update_stage(0).vectorize(x, 8);
        self.resized_x.compute_at(&self.out, yo).vectorize(x, 8);
        self.resized_x.update_stage(0).vectorize(x, 8);
    }

    /// For a GPU: each axis's weights a kernel, one thread per output coordinate looping
    /// over its taps; the horizontal pass a kernel of 32×8 tiles over the output's columns
    /// and the input's rows (its initial value and its sum over the taps each), the
    /// channels looped in each thread; the output in 32×8 tiles, each thread summing the
    /// vertical pass of its own pixel in a register, channel by channel.
    pub fn schedule_gpu(&self) {
        let (x, y, c, k) = (self.x, self.y, self.c, self.k);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.kernel_x.compute_root().reorder(&[k, x]).gpu_tile_1d(x, xo, xi, 64);
        self.kernel_y.compute_root().reorder(&[k, y]).gpu_tile_1d(y, yo, yi, 64);
        self.resized_x.compute_root().reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.resized_x.update_stage(0).reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.out.compute_root().reorder(&[c, x, y]).gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.resized_y.compute_at(&self.out, c);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[
            &self.kernel_x_raw,
            &self.kernel_sum_x,
            &self.kernel_x,
            &self.kernel_y_raw,
            &self.kernel_sum_y,
            &self.kernel_y,
            &self.resized_x,
            &self.resized_y,
            &self.out,
        ]);
    }

    /// The output size for an input size.
    pub fn output_size(&self, width: i32, height: i32) -> (i32, i32) {
        let f = |n: i32| ((n as f64 * self.scale as f64).round() as i32).max(1);
        (f(width), f(height))
    }

    /// The resampler in plain Rust (`input` has mins 0), the same operations in the same
    /// order as the pipeline.
    pub fn reference_on(&self, input: &Buffer<f32>) -> Buffer<f32> {
        let g = Geometry::new(self.scale);
        let (w, h) = (input.width(), input.height());
        let (ow, oh) = self.output_size(w, h);
        let weights = |o: i32| -> (i32, Vec<f32>) {
            let (centre, begin) = g.centre_begin(o);
            let raw: Vec<f32> = (0..g.taps).map(|k| cubic_f32(((begin + k) as f32 - centre) * g.shrink)).collect();
            let total = raw.iter().fold(0.0f32, |a, &v| a + v);
            (begin, raw.iter().map(|v| v / total).collect())
        };
        let wx: Vec<(i32, Vec<f32>)> = (0..ow).map(weights).collect();
        let wy: Vec<(i32, Vec<f32>)> = (0..oh).map(weights).collect();
        let px = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]];
        let channels = input.extent(2);
        // resized_x on every row the output reads.
        let (ylo, yhi) =
            (wy.iter().map(|v| v.0).min().unwrap_or(0), wy.iter().map(|v| v.0 + g.taps).max().unwrap_or(0));
        let rows = (yhi - ylo).max(0);
        let mut rx = vec![0f32; (ow * rows * channels) as usize];
        let ridx = |x: i32, y: i32, c: i32| ((c * rows + (y - ylo)) * ow + x) as usize;
        for c in 0..channels {
            for y in ylo..yhi {
                for (x, (b, k)) in wx.iter().enumerate() {
                    let mut acc = 0.0f32;
                    for (t, kv) in k.iter().enumerate() {
                        acc += kv * px(b + t as i32, y, c);
                    }
                    rx[ridx(x as i32, y, c)] = acc;
                }
            }
        }
        Buffer::from_fn(&[ow, oh, channels], |p| {
            let (x, y, c) = (p[0], p[1], p[2]);
            let (b, k) = &wy[y as usize];
            let mut acc = 0.0f32;
            for (t, kv) in k.iter().enumerate() {
                acc += kv * rx[ridx(x, b + t as i32, c)];
            }
            acc
        })
    }
}

impl App for Resize {
    fn name(&self) -> &'static str {
        "resize"
    }
    fn description(&self) -> &'static str {
        "bicubic resampling (Keys, a = -0.5, anti-aliased when shrinking), float32 planar RGB"
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
            _ => return Err(common::unknown_schedule("resize", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::f32(), channels: 3, values: "planar RGB" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("resize", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("resize", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<f32>("resize", inputs, 0, 3)?;
        let (w, h) = self.output_size(i.width(), i.height());
        Ok(vec![w, h, i.extent(2)])
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // An input that resizes to about width x height.
        let f = |n: i32| ((n as f64 / self.scale as f64).round() as i32).max(1);
        vec![crate::synth::random_f32(&[f(width), f(height), 3], 0.0, 1.0, seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(common::input::<f32>("resize", inputs, 0, 3)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Relative(1e-5)
    }
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        match output.typed::<f32>() {
            Some(b) => common::normalize(b, 0.0, 1.0).into(),
            None => output.clone(),
        }
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Resize::default();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
