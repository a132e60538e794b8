//! Harris corner response, `f32` gray.
//!
//! Exactly `halide_bench.py`'s `Harris`: Sobel 3×3 gradients scaled by 1/12 of the
//! `repeat_edge` input, their products, unnormalised 3×3 box sums, and
//! `det - 0.04 trace²` (what `cv2.cornerHarris(blockSize=3, ksize=3, k=0.04)` computes away
//! from the borders).
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{harris::Harris, App};
//! let app = Harris::build("hand").unwrap();
//! let inputs = app.make_inputs(24, 16, 1);
//! let out = app.run(&Target::host(), &inputs).unwrap();
//! assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The Harris detector's Funcs and input.
pub struct Harris {
    /// Gray `f32` input.
    pub input: ImageParam,
    /// Horizontal gradient.
    pub ix: Func,
    /// Vertical gradient.
    pub iy: Func,
    /// Gradient products.
    pub ixx: Func,
    /// Gradient products.
    pub iyy: Func,
    /// Gradient products.
    pub ixy: Func,
    /// 3×3 box sums of the products.
    pub sxx: Func,
    /// 3×3 box sums of the products.
    pub syy: Func,
    /// 3×3 box sums of the products.
    pub sxy: Func,
    /// The response: the output.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu"];
const SCALE: f32 = (1.0f64 / 12.0f64) as f32;

impl Default for Harris {
    fn default() -> Self {
        Harris::new()
    }
}

impl Harris {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Harris {
        let input = ImageParam::new(Type::f32(), 2, "input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let cl = boundary::repeat_edge(&input, &input.bounds());
        let c = |dx: i32, dy: i32| cl.at((x + dx, y + dy));
        let ix = Func::new("Ix");
        let iy = Func::new("Iy");
        ix.def((x, y), SCALE * ((c(1, -1) - c(-1, -1)) + 2.0f32 * (c(1, 0) - c(-1, 0)) + (c(1, 1) - c(-1, 1))));
        iy.def((x, y), SCALE * ((c(-1, 1) - c(-1, -1)) + 2.0f32 * (c(0, 1) - c(0, -1)) + (c(1, 1) - c(1, -1))));
        let ixx = Func::new("Ixx");
        let iyy = Func::new("Iyy");
        let ixy = Func::new("Ixy");
        ixx.def((x, y), ix.at((x, y)) * ix.at((x, y)));
        iyy.def((x, y), iy.at((x, y)) * iy.at((x, y)));
        ixy.def((x, y), ix.at((x, y)) * iy.at((x, y)));
        let boxed = |f: &Func, name: &str| {
            let g = Func::new(name);
            let mut e: Option<Expr> = None;
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let t = f.at((x + dx, y + dy));
                    e = Some(match e {
                        None => t,
                        Some(e) => e + t,
                    });
                }
            }
            g.def((x, y), e.expect("nine terms"));
            g
        };
        let sxx = boxed(&ixx, "Sxx");
        let syy = boxed(&iyy, "Syy");
        let sxy = boxed(&ixy, "Sxy");
        let out = Func::new("harris");
        let det = sxx.at((x, y)) * syy.at((x, y)) - sxy.at((x, y)) * sxy.at((x, y));
        let tr = sxx.at((x, y)) + syy.at((x, y));
        out.def((x, y), det - 0.04f32 * tr.clone() * tr);
        input.set_estimates(&[(0, 4256), (0, 2832)]);
        out.set_estimates(&[(0, 4256), (0, 2832)]);
        Harris { input, ix, iy, ixx, iyy, ixy, sxx, syy, sxy, out, x, y }
    }

    /// Builds the algorithm; Harris has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Harris> {
        config.resolve("harris", &[])?;
        Ok(Harris::new())
    }

    /// `halide_bench.py`'s hand schedule: strips of 32 rows in parallel, the gradients
    /// sliding down each strip, their loops fused (`Ix.compute_with(Iy, x)`, so each
    /// vector of the input is read once for both); everything else inlined into the output.
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        self.ix.store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, 8);
        self.iy.store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, 8);
        self.ix.compute_with(&self.iy, x);
    }

    /// For a GPU: the gradients, their products and the 3×3 sums at root as 16×16 tiles,
    /// each one kernel; the response per tile of the output.
    pub fn schedule_gpu(&self) {
        common::gpu_root_all(
            &[&self.ix, &self.iy, &self.ixx, &self.iyy, &self.ixy, &self.sxx, &self.syy, &self.sxy, &self.out],
            self.x,
            self.y,
            16,
            16,
        );
    }

    /// Every Func at root, serial and scalar (how the Halide fixture was made).
    pub fn schedule_root(&self) {
        common::root_all(&[
            &self.ix, &self.iy, &self.ixx, &self.iyy, &self.ixy, &self.sxx, &self.syy, &self.sxy, &self.out,
        ]);
    }

    /// The Harris response in plain Rust, the same operations in the same order (`input`
    /// has mins 0).
    pub fn reference(input: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (input.width(), input.height());
        let px = |x: i32, y: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1)]];
        // Gradients on [-1, w + 1) x [-1, h + 1).
        let (gw, gh) = (w + 2, h + 2);
        let mut ix = vec![0f32; (gw * gh) as usize];
        let mut iy = vec![0f32; (gw * gh) as usize];
        for y in -1..h + 1 {
            for x in -1..w + 1 {
                let c = |dx: i32, dy: i32| px(x + dx, y + dy);
                let i = ((y + 1) * gw + x + 1) as usize;
                ix[i] = SCALE * ((c(1, -1) - c(-1, -1)) + 2.0f32 * (c(1, 0) - c(-1, 0)) + (c(1, 1) - c(-1, 1)));
                iy[i] = SCALE * ((c(-1, 1) - c(-1, -1)) + 2.0f32 * (c(0, 1) - c(0, -1)) + (c(1, 1) - c(1, -1)));
            }
        }
        let at = |v: &[f32], x: i32, y: i32| v[((y + 1) * gw + x + 1) as usize];
        let boxed = |x: i32, y: i32, f: &dyn Fn(i32, i32) -> f32| {
            let mut e = f(x - 1, y - 1);
            for (dx, dy) in [(0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)] {
                e += f(x + dx, y + dy);
            }
            e
        };
        let ixx = |x: i32, y: i32| at(&ix, x, y) * at(&ix, x, y);
        let iyy = |x: i32, y: i32| at(&iy, x, y) * at(&iy, x, y);
        let ixy = |x: i32, y: i32| at(&ix, x, y) * at(&iy, x, y);
        Buffer::from_fn(&[w, h], |c| {
            let (x, y) = (c[0], c[1]);
            let (sxx, syy, sxy) = (boxed(x, y, &ixx), boxed(x, y, &iyy), boxed(x, y, &ixy));
            let det = sxx * syy - sxy * sxy;
            let tr = sxx + syy;
            det - 0.04f32 * tr * tr
        })
    }
}

impl App for Harris {
    fn name(&self) -> &'static str {
        "harris"
    }
    fn description(&self) -> &'static str {
        "Harris corner response, float32 gray, Sobel/12, 3x3 box sums, k = 0.04, repeat_edge"
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
            _ => return Err(common::unknown_schedule("harris", name, SCHEDULES)),
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
        common::count("harris", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("harris", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(common::input::<f32>("harris", inputs, 0, 2)?.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![crate::synth::random_f32(&[width, height], 0.0, 1.0, seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(Harris::reference(common::input::<f32>("harris", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Relative(1e-5)
    }
    /// Corners bright, edges dark, flat areas mid-gray: `0.5 ± 0.5 (|r| / max|r|)^(1/3)`.
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        let Some(b) = output.typed::<f32>() else { return output.clone() };
        let m = b.as_slice().iter().fold(0f32, |m, v| m.max(v.abs())).max(1e-30);
        let mut d = b.clone();
        for v in d.as_mut_slice() {
            *v = 0.5 + 0.5 * v.signum() * (v.abs() / m).cbrt();
        }
        d.into()
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Harris::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
