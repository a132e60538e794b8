//! Max filter (grayscale dilation) over a `(2r + 1)²` square of `f32` planar RGB, written
//! separably as two reductions over an `RDom` (each starts from its first tap, so no
//! infinities are involved), `repeat_edge` borders.
//!
//! The reductions are explicit Funcs rather than the inline `maximum(..)`: an inline
//! reduction's Func is anonymous and, having an update, is computed at root, so a schedule
//! could not place the horizontal pass inside the output's loops.
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{max_filter::MaxFilter, App};
//! let app = MaxFilter::with_radius(2);
//! app.schedule_hand();
//! let inputs = app.make_inputs(24, 16, 3);
//! assert_eq!(app.run(&Target::host(), &inputs).unwrap(), app.reference(&inputs).unwrap());
//! ```

use crate::common;
use crate::{App, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::boundary;
use halogen::prelude::*;

/// The max filter's Funcs and input.
pub struct MaxFilter {
    /// Planar RGB `f32` input.
    pub input: ImageParam,
    /// The maximum along `x` (a reduction).
    pub max_x: Func,
    /// The maximum of `max_x` along `y` (a reduction).
    pub max_y: Func,
    /// The output (`max_y`).
    pub out: Func,
    /// Pure variables.
    pub x: Var,
    /// Pure variables.
    pub y: Var,
    /// Pure variables.
    pub c: Var,
    /// The radius.
    pub radius: i32,
}

const SCHEDULES: &[&str] = &["naive", "root", "hand"];
const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "radius",
    default: 4.0,
    help: "half-width of the square",
    min: 0.0,
    max: 64.0,
    kind: ParamKind::Integer,
}];

impl Default for MaxFilter {
    fn default() -> Self {
        MaxFilter::with_radius(4)
    }
}

impl MaxFilter {
    /// Builds the algorithm with radius `r` (no schedule).
    pub fn with_radius(radius: i32) -> MaxFilter {
        let input = ImageParam::new(Type::f32(), 3, "input");
        let (x, y, c) = (Var::new("x"), Var::new("y"), Var::new("c"));
        let cl = boundary::repeat_edge(&input, &input.bounds()[..2]);
        // Taps -r + 1 ..= r; tap -r is the initial value.
        let rx = RDom::new(&[(Expr::from(1 - radius), Expr::from(2 * radius))]);
        let max_x = Func::new("max_x");
        max_x.def((x, y, c), cl.at((x - radius, y, c)));
        max_x.update((x, y, c), max(max_x.at((x, y, c)), cl.at((x + rx.x(), y, c))));
        let ry = RDom::new(&[(Expr::from(1 - radius), Expr::from(2 * radius))]);
        let max_y = Func::new("max_y");
        max_y.def((x, y, c), max_x.at((x, y - radius, c)));
        max_y.update((x, y, c), max(max_y.at((x, y, c)), max_x.at((x, y + ry.x(), c))));
        let out = Func::new("max_filter");
        out.def((x, y, c), max_y.at((x, y, c)));
        input.set_estimates(&[(0, 1920), (0, 1080), (0, 3)]);
        out.set_estimates(&[(0, 1920), (0, 1080), (0, 3)]);
        MaxFilter { input, max_x, max_y, out, x, y, c, radius }
    }

    /// Builds the algorithm from `config` (`radius`).
    pub fn with_config(config: &Config) -> Result<MaxFilter> {
        let v = config.resolve("max_filter", PARAMS)?;
        Ok(MaxFilter::with_radius(v[0] as i32))
    }

    /// Strips of 32 rows in parallel, vectorized by 8: the horizontal maximum computed for
    /// each strip (its rows plus the `2r` rows around it), the vertical one per vector of
    /// output pixels, both vectorized across `x` in both of their stages.
    pub fn schedule_hand(&self) {
        let (x, y) = (self.x, self.y);
        let (yo, yi) = (Var::new("yo"), Var::new("yi"));
        self.out.split(y, yo, yi, 32).parallel(yo).vectorize(x, 8);
        self.max_y.compute_at(&self.out, x).vectorize(x, 8);
        self.max_y.update_stage(0).vectorize(x, 8);
        self.max_x.compute_at(&self.out, yo).vectorize(x, 8);
        self.max_x.update_stage(0).vectorize(x, 8);
    }

    /// Every Func at root, serial and scalar.
    pub fn schedule_root(&self) {
        common::root_all(&[&self.max_x, &self.max_y, &self.out]);
    }

    /// The max filter in plain Rust (`input` has mins 0).
    pub fn reference_on(&self, input: &Buffer<f32>) -> Buffer<f32> {
        let (w, h) = (input.width(), input.height());
        let r = self.radius;
        let px = |x: i32, y: i32, c: i32| input[[x.clamp(0, w - 1), y.clamp(0, h - 1), c]];
        let mx = |x: i32, y: i32, c: i32| (1 - r..=r).fold(px(x - r, y, c), |m, d| m.max(px(x + d, y, c)));
        Buffer::from_fn(&input.extents(), |p| {
            let (x, y, c) = (p[0], p[1], p[2]);
            (1 - r..=r).fold(mx(x, y - r, c), |m, d| m.max(mx(x, y + d, c)))
        })
    }
}

impl App for MaxFilter {
    fn name(&self) -> &'static str {
        "max_filter"
    }
    fn description(&self) -> &'static str {
        "max filter (dilation) over a (2r+1)^2 square, float32 planar RGB, two separable reductions"
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
            _ => return Err(common::unknown_schedule("max_filter", name, SCHEDULES)),
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
        common::count("max_filter", inputs, 1)?;
        args.image(&self.input, common::input::<f32>("max_filter", inputs, 0, 3)?);
        Ok(())
    }
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        Ok(common::input::<f32>("max_filter", inputs, 0, 3)?.extents())
    }
    fn output_type(&self) -> Type {
        Type::f32()
    }
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        vec![crate::synth::random_f32(&[width, height, 3], 0.0, 1.0, seed).into()]
    }
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        Ok(self.reference_on(common::input::<f32>("max_filter", inputs, 0, 3)?).into())
    }
    fn tolerance(&self) -> Tolerance {
        Tolerance::Exact
    }
    fn build(schedule: &str) -> Result<Self> {
        let a = MaxFilter::default();
        a.apply_schedule(schedule)?;
        Ok(a)
    }
}
