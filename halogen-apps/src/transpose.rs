//! Matrix transpose of `u16` pixels: `out(x, y) = in(y, x)`. All memory traffic, no
//! arithmetic: what matters is the loop order and the size of the blocks.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{transpose::Transpose, App};
//! let app = Transpose::build("hand_staged").unwrap();
//! let inputs = app.make_inputs(40, 24, 3);
//! assert_eq!(app.run(&Target::host(), &inputs).unwrap(), app.reference(&inputs).unwrap());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, Result, Tolerance};
use halogen::prelude::*;

/// The transpose's Funcs and input.
pub struct Transpose {
    /// Gray `u16` input.
    pub input: ImageParam,
    /// A copy of the input, for schedules that stage blocks of it.
    pub block: Func,
    /// The transposed image: the output.
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
}

/// The tiles of the distributed schedules: the output's rows are distributed in groups
/// of this many.
const DISTRIBUTED_TILE: i32 = 16;

const SCHEDULES: &[&str] =
    &["naive", "root", "hand", "hand_staged", "gpu", "gpu_square", "distributed", "distributed_columns"];

impl Default for Transpose {
    fn default() -> Self {
        Transpose::new()
    }
}

impl Transpose {
    /// Builds the algorithm (no schedule).
    pub fn new() -> Transpose {
        let input = ImageParam::new(Type::u16(), 2, "input");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let block = Func::new("block");
        block.def((x, y), input.at((x, y)));
        let out = Func::new("transpose");
        out.def((x, y), block.at((y, x)));
        input.set_estimates(&[(0, 4096), (0, 4096)]);
        out.set_estimates(&[(0, 4096), (0, 4096)]);
        Transpose { input, block, out, x, y }
    }

    /// Builds the algorithm; transpose has no parameters, so `config` must be empty.
    pub fn with_config(config: &Config) -> Result<Transpose> {
        config.resolve("transpose", &[])?;
        Ok(Transpose::new())
    }

    /// Over the ranks of a distributed run, the input's copy distributed by rows (the
    /// first distribution of Distributed Halide's Table 3): each rank's rows of the output
    /// are columns of every rank's rows of the copy, so every rank sends every other a
    /// block (an all-to-all exchange). The output runs in the hand schedule's 16×16 tiles,
    /// its rows of tiles distributed.
    pub fn schedule_distributed(&self) {
        let (x, y) = (self.x, self.y);
        self.block.compute_root().parallel(y).distribute(y).vectorize(x, 16);
        self.distributed_tiles();
    }

    /// Over the ranks of a distributed run, the input's copy distributed by columns (Table
    /// 3's second distribution), in groups of 16: each rank's columns of the copy are
    /// exactly the rows of the output it computes, so nothing is exchanged.
    pub fn schedule_distributed_columns(&self) {
        let (x, y) = (self.x, self.y);
        let xi = Var::new("xi");
        self.block
            .compute_root()
            .split(x, x, xi, DISTRIBUTED_TILE)
            .reorder(&[xi, y, x])
            .parallel(x)
            .distribute(x)
            .vectorize(xi, 16);
        self.distributed_tiles();
    }

    /// The output of the distributed schedules: tiles in parallel rows of tiles, the rows
    /// distributed.
    fn distributed_tiles(&self) {
        let (x, y) = (self.x, self.y);
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        self.out.tile(x, y, xi, yi, DISTRIBUTED_TILE, DISTRIBUTED_TILE).vectorize(xi, 8).parallel(y).distribute(y);
    }

    /// 16×16 tiles in parallel rows of tiles, vectorized by 8 along the output rows
    /// (strided reads, dense writes, both within a cache-sized block).
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        self.out.tile(x, y, xi, yi, 16, 16).vectorize(xi, 8).parallel(y);
    }

    /// For a GPU (the classic shared-memory transpose): 32×32 tiles of the output are
    /// blocks of threads; each block first copies its tile of the input into shared memory
    /// with reads along the input's rows, then writes the output's rows from there.
    pub fn schedule_gpu_square(&self) {
        let (x, y) = (self.x, self.y);
        let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
        self.out.gpu_tile(x, y, xo, yo, xi, yi, 32, 32);
        self.block.compute_at(&self.out, xo).gpu_threads(x).gpu_threads(y);
    }

    /// For a GPU: [`Transpose::schedule_gpu_square`] with a quarter of the threads, blocks
    /// of 32×8 threads, each copying and writing four rows of the 32×32 tile, unrolled. On
    /// an H200 its kernel took 0.057 ms at 4096×4096, the square blocks' 0.135 ms.
    pub fn schedule_gpu(&self) {
        let (x, y, yy) = (self.x, self.y, Var::new("yy"));
        let xo = common::gpu_rows_per_thread(&self.out, x, y, 32, 32, 4);
        self.block.compute_at(&self.out, xo).split(y, y, yy, 4).unroll_full(yy).gpu_threads(x).gpu_threads(y);
    }

    /// As `hand`, and each 16×16 block of the input is first copied with dense, vectorized
    /// reads into a small buffer, then read transposed from there.
    pub fn schedule_hand_staged(&self) {
        let (x, y) = (self.x, self.y);
        let (xi, yi) = (Var::new("xi"), Var::new("yi"));
        self.out.tile(x, y, xi, yi, 16, 16).vectorize(xi, 8).parallel(y);
        self.block.compute_at(&self.out, x).vectorize(x, 8);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.block, &self.out]);
    }

    /// The transpose in plain Rust (`input` has mins 0).
    pub fn reference(input: &Buffer<u16>) -> Buffer<u16> {
        Buffer::from_fn(&[input.height(), input.width()], |c| input[[c[1], c[0]]])
    }
}

impl App for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    fn description(&self) -> &'static str {
        "matrix transpose, uint16 (memory traffic only: loop order and blocking)"
    }
    fn schedules(&self) -> &'static [&'static str] {
        SCHEDULES
    }
    fn apply_schedule(&self, name: &str) -> Result<()> {
        match name {
            "naive" => common::naive(),
            "root" => self.schedule_root(),
            "hand" => self.schedule_hand(),
            "hand_staged" => self.schedule_hand_staged(),
            "gpu" => self.schedule_gpu(),
            "gpu_square" => self.schedule_gpu_square(),
            "distributed" => self.schedule_distributed(),
            "distributed_columns" => self.schedule_distributed_columns(),
            _ => return Err(common::unknown_schedule("transpose", name, SCHEDULES)),
        }
        Ok(())
    }
    fn output(&self) -> &Func {
        &self.out
    }
    fn input_specs(&self) -> Vec<InputSpec> {
        vec![InputSpec { name: "input".into(), ty: Type::u16(), channels: 1, values: "any u16" }]
    }
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        common::count("transpose", inputs, 1)?;
        args.image(&self.input, common::input::<u16>("transpose", inputs, 0, 2)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let i = common::input::<u16>("transpose", inputs, 0, 2)?;
        Ok(vec![i.height(), i.width()])
    }
    fn output_type(&self) -> Type {
        Type::u16()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        // The output is width x height, so the input is height x width.
        vec![crate::synth::random_u16(&[height, width], seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(Transpose::reference(common::input::<u16>("transpose", inputs, 0, 2)?).into())
    }
    fn distributed_slices(&self) -> (usize, i32) {
        (1, DISTRIBUTED_TILE)
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = Transpose::new();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
