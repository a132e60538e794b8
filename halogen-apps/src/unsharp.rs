//! Unsharp masking in its luminance-ratio form, `f32` planar RGB.
//!
//! Exactly `halide_bench.py`'s `Unsharp`: `gray = .299 R + .587 G + .114 B` of the input
//! with `repeat_edge`; a normalised 7-tap Gaussian (sigma 1.5) in `y`, then in `x`;
//! `sharpen = 2 gray - blur`; every channel multiplied by `sharpen / gray`.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{unsharp::Unsharp, App, Tolerance};
//! let app = Unsharp::build("hand").unwrap();
//! let inputs = app.make_inputs(24, 16, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), Tolerance::Relative(1e-5)).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The unsharp mask's Funcs and input.
pub struct Unsharp {
    /// Planar RGB `f32` input, `(x, y, c)`.
    pub input: ImageParam,
    /// Luminance of the edge-clamped input.
    pub gray: Func,
    /// Gaussian in `y`.
    pub blur_y: Func,
    /// Gaussian in `x` (of `blur_y`).
    pub blur_x: Func,
    /// `2 gray - blur`.
    pub sharpen: Func,
    /// `sharpen / gray`.
    pub ratio: Func,
    /// The output, `ratio × input`.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu"];

/// The 4 distinct taps of the normalised 7-tap Gaussian with sigma 1.5, computed in `f64`
/// and rounded to `f32` as `halide_bench.py` does.
pub fn kernel() -> [f32; 4] {
    let s = 1.5f64;
    let k: Vec<f64> = (0..4).map(|i| (-((i * i) as f64) / (2.0 * s * s)).exp()).collect();
    let tot = k[0] + 2.0 * (k[1] + k[2] + k[3]);
    [(k[0] / tot) as f32, (k[1] / tot) as f32, (k[2] / tot) as f32, (k[3] / tot) as f32]
}

impl Default for Unsharp {
    fn default() -> Self {
        Unsharp::new()
    }
}

impl Unsharp {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Unsharp {
        let input = ImageParam::new(Type::f32(), 3, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let k = kernel();
        let cl = boundary::repeat_edge(&input, &input.bounds());
        let gray = Func::new("gray");
        let blur_y = Func::new("blur_y");
        let blur_x = Func::new("blur_x");
        let sharpen = Func::new("sharpen");
        let ratio = Func::new("ratio");
        let out = Func::new("unsharp");
        gray.def((x, y), 0.299f32 * cl.at((x, y, 0)) + 0.587f32 * cl.at((x, y, 1)) + 0.114f32 * cl.at((x, y, 2)));
        let g = |dy: i32| gray.at((x, y + dy));
        blur_y.def((x, y), k[0] * g(0) + k[1] * (g(-1) + g(1)) + k[2] * (g(-2) + g(2)) + k[3] * (g(-3) + g(3)));
        let b = |dx: i32| blur_y.at((x + dx, y));
        blur_x.def((x, y), k[0] * b(0) + k[1] * (b(-1) + b(1)) + k[2] * (b(-2) + b(2)) + k[3] * (b(-3) + b(3)));
        sharpen.def((x, y), 2.0f32 * gray.at((x, y)) - blur_x.at((x, y)));
        ratio.def((x, y), sharpen.at((x, y)) / gray.at((x, y)));
        out.def((x, y, c), ratio.at((x, y)) * input.at((x, y, c)));
        input.set_estimates(&[(0, 4256), (0, 2832), (0, 3)]);
        out.set_estimates(&[(0, 4256), (0, 2832), (0, 3)]);
        Unsharp { input, gray, blur_y, blur_x, sharpen, ratio, out, x, y, c }
    }

    /// Builds the algorithm; unsharp has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Unsharp> {
        config.resolve("unsharp", &[])?;
        Ok(Unsharp::new())
    }

    /// `halide_bench.py`'s hand schedule: strips of 32 rows in parallel, channels inside
    /// rows; `gray` slides down the strip, `blur_y` and `ratio` are computed per row.
    pub fn schedule_hand(&self) {
        let (x, y, c) = (self.x, self.y, self.c);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out.split(y, yo, yi, 32).reorder(&[x, c, yi, yo]).parallel(yo).vectorize(x, 8);
        self.gray.store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, 8);
        self.blur_y.compute_at(&self.out, yi).vectorize(x, 8);
        self.ratio.compute_at(&self.out, yi).vectorize(x, 8);
    }

    /// For a GPU: the gray image, both blurs and the ratio at root as 16×16 tiles, the
    /// sharpening inlined into the ratio, and the output's tiles one kernel per channel.
    pub fn schedule_gpu(&self) {
        common::gpu_root_all(&[&self.gray, &self.blur_y, &self.blur_x, &self.ratio, &self.out], self.x, self.y, 16, 16);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.gray, &self.blur_y, &self.blur_x, &self.sharpen, &self.ratio, &self.out]);
    }

    /// Unsharp masking in plain Rust, the same operations in the same order (`input` has
    /// mins 0, as the pipeline's output region is the input's).
    pub fn reference(input: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (input.width(), input.height());
        let k = kernel();
        let px = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]];
        // gray on [-3, w + 3) x [-3, h + 3)
        let (gw, gh) = (w + 6, h + 6);
        let gray: Vec<f32> = (0..gw * gh)
            .map(|i| {
                let (x, y) = (i % gw - 3, i / gw - 3);
                0.299f32 * px(x, y, 0) + 0.587f32 * px(x, y, 1) + 0.114f32 * px(x, y, 2)
            })
            .collect();
        let g = |x: i32, y: i32| gray[((y + 3) * gw + x + 3) as usize];
        // blur_y on [-3, w + 3) x [0, h)
        let by: Vec<f32> = (0..gw * h)
            .map(|i| {
                let (x, y) = (i % gw - 3, i / gw);
                k[0] * g(x, y)
                    + k[1] * (g(x, y - 1) + g(x, y + 1))
                    + k[2] * (g(x, y - 2) + g(x, y + 2))
                    + k[3] * (g(x, y - 3) + g(x, y + 3))
            })
            .collect();
        let b = |x: i32, y: i32| by[(y * gw + x + 3) as usize];
        let mut out = Buffer::<f32>::new(&[w, h, input.extent(2)]);
        for y in 0..h {
            for x in 0..w {
                let bx = k[0] * b(x, y)
                    + k[1] * (b(x - 1, y) + b(x + 1, y))
                    + k[2] * (b(x - 2, y) + b(x + 2, y))
                    + k[3] * (b(x - 3, y) + b(x + 3, y));
                let sharpen = 2.0f32 * g(x, y) - bx;
                let ratio = sharpen / g(x, y);
                for c in 0..input.extent(2) {
                    out[[x, y, c]] = ratio * input[[x, y, c]];
                }
            }
        }
        out
    }
}

impl App for Unsharp {
    fn name(&self) -> &'static str {
        "unsharp"
    }
    fn description(&self) -> &'static str {
        "unsharp mask (luminance-ratio form), float32 planar RGB, 7-tap Gaussian sigma 1.5, repeat_edge"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "gpu" => self.schedule_gpu(),
            _ => return Err(common::unknown_schedule("unsharp", name, SCHEDULES)),
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
            channels: 3,
            values: "planar RGB in (0, 1] (gray must not be 0: the output divides by it)",
        }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("unsharp", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("unsharp", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<f32>("unsharp", inputs, 0, 3)?;
        if i.extent(2) < 3 {
            return Err(common::too_small("unsharp", format!("the input needs 3 channels, got {:?}", i.extents())));
        }
        Ok(i.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![crate::synth::random_f32(&[width, height, 3], 0.05, 1.0, seed).into()]
    }
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        // Keep gray away from 0: the ratio form divides by it.
        let mut b = rgb.clone();
        for v in b.as_mut_slice() {
            *v = v.max(1.0 / 256.0);
        }
        Ok(vec![b.into()])
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(Unsharp::reference(common::input::<f32>("unsharp", inputs, 0, 3)?).into())
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
        let a = Unsharp::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
