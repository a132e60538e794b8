//! The Halide paper's example: a separable 3×3 box blur of `u16` pixels.
//!
//! Exactly `halide_bench.py`'s `Blur`: no boundary condition (the output `(x, y)` reads the
//! input at `x..=x+2, y..=y+2`, so the input is 2 pixels wider and taller than the output),
//! `u16` sums that wrap, and `/ 3` (floor) after each pass.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::blur::Blur;
//! let app = Blur::new();
//! app.schedule_hand();
//! let input = Buffer::<u16>::from_fn(&[34, 18], |c| (c[0] * 3 + c[1]) as u16);
//! let c = Pipeline::new(&[&app.blur_y]).compile(&Target::host()).unwrap();
//! let mut out = Buffer::<u16>::new(&[32, 16]);
//! let mut args = Args::new();
//! args.image(&app.input, &input);
//! c.realize(&args, &mut out).unwrap();
//! assert_eq!(out, Blur::reference(&input));
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::prelude::*;

/// The blur's Funcs and inputs.
pub struct Blur {
    /// The `u16` input, `(W + 2) × (H + 2)`.
    pub input: ImageParam,
    /// The horizontal pass.
    pub blur_x: Func,
    /// The vertical pass: the output.
    pub blur_y: Func,
    /// The pure variables.
    pub x: Var,
    /// The pure variables.
    pub y: Var,
}

const SCHEDULES: &[&str] =
    &["naive", "root", "hand", "hand_sliding", "gpu", "gpu_shared", "distributed", "distributed_exchange"];

impl Default for Blur {
    fn default() -> Self {
        Blur::new()
    }
}

impl Blur {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Blur {
        let input = ImageParam::new(Type::u16(), 2, "input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let blur_x = Func::new("blur_x");
        let blur_y = Func::new("blur_y");
        blur_x.def((x, y), (input.at((x, y)) + input.at((x + 1, y)) + input.at((x + 2, y))) / 3);
        blur_y.def((x, y), (blur_x.at((x, y)) + blur_x.at((x, y + 1)) + blur_x.at((x, y + 2))) / 3);
        input.set_estimates(&[(0, 6402), (0, 4802)]);
        blur_y.set_estimates(&[(0, 6400), (0, 4800)]);
        Blur { input, blur_x, blur_y, x, y }
    }

    /// Builds the algorithm; the blur has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Blur> {
        config.resolve("blur", &[])?;
        Ok(Blur::new())
    }

    /// The Halide paper's schedule: 256×32 tiles in parallel, the producer computed per
    /// tile, both vectorized by 16 (16 × u16 = one AVX2 vector).
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        self.blur_y.tile(x, y, xi, yi, 256, 32).vectorize(xi, 16).parallel(y);
        self.blur_x.compute_at(&self.blur_y, x).vectorize(x, 16);
    }

    /// Strips of 32 rows in parallel; the producer slides down each strip (stored per
    /// strip, computed per row: each row of `blur_x` is computed once).
    pub fn schedule_hand_sliding(&self) {
        let (x, y) = (self.x, self.y);
        let yi = Var::new("yi");
        self.blur_y.split(y, y, yi, 32).parallel(y).vectorize(x, 16);
        self.blur_x.store_at(&self.blur_y, y).compute_at(&self.blur_y, yi).vectorize(x, 16);
    }

    /// For a GPU: 64×32 tiles of the output are blocks of 64×8 threads, each thread
    /// computing four rows of its column, unrolled, with `blur_x` inlined (its loads are
    /// cached; nothing is shared, so there is no barrier). On an H200 its kernel took half
    /// the time of [`Blur::schedule_gpu_shared`]'s (0.088 against 0.176 ms at 6400×4800).
    pub fn schedule_gpu(&self) {
        common::gpu_rows_per_thread(&self.blur_y, self.x, self.y, 64, 32, 4);
    }

    /// For a GPU (Halide's GPU schedule of the blur): 32×8 tiles of the output are blocks
    /// of threads, and each block first computes the rows of `blur_x` its tile needs into
    /// shared memory, one thread per point.
    pub fn schedule_gpu_shared(&self) {
        let (x, y) = (self.x, self.y);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.blur_y.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.blur_x.compute_at(&self.blur_y, xo).gpu_threads(x).gpu_threads(y);
    }

    /// Over the ranks of a distributed run (Distributed Halide's blur, section 3.4): each
    /// rank computes its slice of the output's rows in parallel, and the rows of `blur_x`
    /// each output row needs, again (no communication; every rank reads the input rows it
    /// needs).
    pub fn schedule_distributed(&self) {
        let (x, y) = (self.x, self.y);
        self.blur_y.parallel(y).distribute(y).vectorize(x, 16);
        self.blur_x.compute_at(&self.blur_y, y).vectorize(x, 16);
    }

    /// Over the ranks of a distributed run, with no computation repeated: `blur_x` is
    /// distributed too, and each rank receives from the next the two rows of it that its
    /// last output rows read (a border exchange).
    pub fn schedule_distributed_exchange(&self) {
        let (x, y) = (self.x, self.y);
        self.blur_y.parallel(y).distribute(y).vectorize(x, 16);
        self.blur_x.compute_root().parallel(y).distribute(y).vectorize(x, 16);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.blur_x, &self.blur_y]);
    }

    /// The blur in plain Rust: `input` is `(W + 2) × (H + 2)` with mins 0, the result
    /// `W × H`.
    pub fn reference(input: &Buffer<u16>) -> Buffer<u16> {
        let (w, h) = (input.width() - 2, input.height() - 2);
        let at = |x: i32, y: i32| input[[x, y]];
        let bx = |x: i32, y: i32| at(x, y).wrapping_add(at(x + 1, y)).wrapping_add(at(x + 2, y)) / 3;
        Buffer::from_fn(&[w.max(0), h.max(0)], |c| {
            let (x, y) = (c[0], c[1]);
            bx(x, y).wrapping_add(bx(x, y + 1)).wrapping_add(bx(x, y + 2)) / 3
        })
    }
}

impl App for Blur {
    fn name(&self) -> &'static str {
        "blur"
    }
    fn description(&self) -> &'static str {
        "3x3 box blur, separable, uint16, no boundary condition (the Halide paper's example)"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "hand_sliding" => self.schedule_hand_sliding(),
            "gpu" => self.schedule_gpu(),
            "gpu_shared" => self.schedule_gpu_shared(),
            "distributed" => self.schedule_distributed(),
            "distributed_exchange" => self.schedule_distributed_exchange(),
            _ => return Err(common::unknown_schedule("blur", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.blur_y
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec {
            name: "input".into(),
            ty: Type::u16(),
            channels: 1,
            values: "any u16 (sums wrap); 2 pixels wider and taller than the output",
        }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("blur", inputs, 1)?;
        args.image(&self.input, common::input::<u16>("blur", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<u16>("blur", inputs, 0, 2)?;
        if i.width() < 3 || i.height() < 3 {
            return Err(common::too_small("blur", format!("the input must be at least 3x3, got {:?}", i.extents())));
        }
        Ok(vec![i.width() - 2, i.height() - 2])
    }
    fn output_type(&self) -> Type {
        Type::u16()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![crate::synth::random_u16(&[width + 2, height + 2], seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(Blur::reference(common::input::<u16>("blur", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let b = Blur::new();
        b.apply_schedule(schedule)?;
        Ok(b)
    }
}
