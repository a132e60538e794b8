//! Sobel edge magnitude of `u8` gray (Forma's example): `min(|Gx| + |Gy|, 255)` with the
//! 3×3 Sobel kernels written separably (`[1 2 1]` smoothing across, `[-1 0 1]` difference
//! along), `repeat_edge` at the borders, `i16` arithmetic.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{sobel::Sobel, App};
//! let app = Sobel::build("hand").unwrap();
//! let inputs = app.make_inputs(40, 24, 3);
//! assert_eq!(app.run(&Target::host(), &inputs).unwrap(), app.reference(&inputs).unwrap());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The Sobel filter's Funcs and input.
pub struct Sobel {
    /// Gray `u8` input.
    pub input: ImageParam,
    /// `[1 2 1]` vertical smoothing (for `Gx`), `i16`.
    pub smooth_y: Func,
    /// `[1 2 1]` horizontal smoothing (for `Gy`), `i16`.
    pub smooth_x: Func,
    /// Horizontal gradient.
    pub gx: Func,
    /// Vertical gradient.
    pub gy: Func,
    /// The magnitude: the output.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand", "gpu", "gpu_shared", "distributed"];

impl Default for Sobel {
    fn default() -> Self {
        Sobel::new()
    }
}

impl Sobel {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Sobel {
        let input = ImageParam::new(Type::u8(), 2, "input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let cl = boundary::repeat_edge(&input, &input.bounds());
        let i = |dx: i32, dy: i32| cl.at((x + dx, y + dy)).cast::<i16>();
        let smooth_y = Func::new("smooth_y");
        let smooth_x = Func::new("smooth_x");
        smooth_y.def((x, y), i(0, -1) + 2 * i(0, 0) + i(0, 1));
        smooth_x.def((x, y), i(-1, 0) + 2 * i(0, 0) + i(1, 0));
        let gx = Func::new("gx");
        let gy = Func::new("gy");
        gx.def((x, y), smooth_y.at((x + 1, y)) - smooth_y.at((x - 1, y)));
        gy.def((x, y), smooth_x.at((x, y + 1)) - smooth_x.at((x, y - 1)));
        let out = Func::new("sobel");
        out.def((x, y), min(abs(gx.at((x, y))) + abs(gy.at((x, y))), 255).cast::<u8>());
        input.set_estimates(&[(0, 4000), (0, 3000)]);
        out.set_estimates(&[(0, 4000), (0, 3000)]);
        Sobel { input, smooth_y, smooth_x, gx, gy, out, x, y }
    }

    /// Builds the algorithm; Sobel has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Sobel> {
        config.resolve("sobel", &[])?;
        Ok(Sobel::new())
    }

    /// Strips of 32 rows in parallel, vectorized by 16; the horizontal smoothing slides
    /// down each strip (each of its rows is needed by three output rows), the vertical one
    /// is computed per row.
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 16);
        self.smooth_x.store_at(&self.out, yo).compute_at(&self.out, yi).vectorize(x, 16);
        self.smooth_y.compute_at(&self.out, yi).vectorize(x, 16);
    }

    /// Over the ranks of a distributed run: each rank computes its slice of the output's
    /// rows in parallel; the two smoothings are distributed the same way and exchange one
    /// row of border with each neighbour (the vertical one is only read along rows, and
    /// needs none).
    pub fn schedule_distributed(&self) {
        let (x, y) = (self.x, self.y);
        self.out.parallel(y).distribute(y).vectorize(x, 16);
        for f in [&self.smooth_x, &self.smooth_y] {
            f.compute_root().parallel(y).distribute(y).vectorize(x, 16);
        }
    }

    /// For a GPU: 32×8 tiles of the output are blocks of threads; each block computes the
    /// two smoothings its tile needs into shared memory first, one thread per point.
    pub fn schedule_gpu_shared(&self) {
        let (x, y) = (self.x, self.y);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.out.gpu_tile(x, y, xo, yo, xi, yi, 32, 8);
        self.smooth_x.compute_at(&self.out, xo).gpu_threads(x).gpu_threads(y);
        self.smooth_y.compute_at(&self.out, xo).gpu_threads(x).gpu_threads(y);
    }

    /// For a GPU, as blur's `gpu` schedule: 64×32 tiles of the output are blocks of 64×8
    /// threads, each computing four rows of its column, unrolled, with the smoothings
    /// inlined (no shared memory, no barrier). On an H200 its kernel took 0.053 ms at
    /// 4000×3000, [`Sobel::schedule_gpu_shared`]'s 0.111 ms.
    pub fn schedule_gpu(&self) {
        common::gpu_rows_per_thread(&self.out, self.x, self.y, 64, 32, 4);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.smooth_y, &self.smooth_x, &self.gx, &self.gy, &self.out]);
    }

    /// Sobel magnitude in plain Rust (`input` has mins 0).
    pub fn reference(input: &Buffer<u8>) -> Buffer<u8> {
        let (w, h) = (input.width(), input.height());
        let i = |x: i32, y: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1)]] as i16;
        let sy = |x: i32, y: i32| i(x, y - 1) + 2 * i(x, y) + i(x, y + 1);
        let sx = |x: i32, y: i32| i(x - 1, y) + 2 * i(x, y) + i(x + 1, y);
        Buffer::from_fn(&[w, h], |c| {
            let (x, y) = (c[0], c[1]);
            let gx = sy(x + 1, y) - sy(x - 1, y);
            let gy = sx(x, y + 1) - sx(x, y - 1);
            (gx.unsigned_abs() + gy.unsigned_abs()).min(255) as u8
        })
    }
}

impl App for Sobel {
    fn name(&self) -> &'static str {
        "sobel"
    }
    fn description(&self) -> &'static str {
        "Sobel edge magnitude min(|Gx| + |Gy|, 255), uint8 gray, separable 3x3, repeat_edge"
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
            "gpu_shared" => self.schedule_gpu_shared(),
            "distributed" => self.schedule_distributed(),
            _ => return Err(common::unknown_schedule("sobel", name, SCHEDULES)),
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
        common::count("sobel", inputs, 1)?;
        args.image(&self.input, common::input::<u8>("sobel", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(common::input::<u8>("sobel", inputs, 0, 2)?.extents())
    }
    fn output_type(&self) -> Type {
        Type::u8()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        let g = crate::synth::smooth_gray(width, height, seed);
        vec![common::from_unit(&g, Type::u8())]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(Sobel::reference(common::input::<u8>("sobel", inputs, 0, 2)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Sobel::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
