//! The benchmark pipelines of the Halide papers, written with Halogen.
//!
//! Each app lives in its own module and provides:
//!
//! - a struct holding its inputs (`ImageParam`s), its output `Func` and the Funcs a schedule
//!   names, built by `new()` (or `with_config` for apps with construction-time constants);
//! - schedule methods named after the schedules they apply (`schedule_hand`, ...), written
//!   in Halide's vocabulary and translated from `shared/anchors/halide_bench.py` where that
//!   file has the app;
//! - a plain-Rust `reference` implementation on [`Buffer`]s that computes the same values
//!   in the same order of operations, so integer apps match exactly and float apps to the
//!   last bit or very nearly.
//!
//! All of them implement [`App`], the object-safe interface the `halogen` command uses to
//! list apps, build one with a named schedule, make inputs of a given size, run it and
//! compare the result with the reference:
//!
//! ```
//! use halogen::prelude::*;
//! use halogen_apps::{build, Config};
//! let app = build("blur", "hand", &Config::default()).unwrap();
//! let inputs = app.make_inputs(32, 16, 7);
//! let out = app.run(&Target::interp(), &inputs).unwrap();
//! let expected = app.reference(&inputs).unwrap();
//! assert!(out.compare(&expected, app.tolerance()).is_ok());
//! ```
//!
//! The six apps that `halide_bench.py` also builds (blur, unsharp, harris, bilateral_grid,
//! hist_eq, local_laplacian) compute exactly what its classes of the same name compute:
//! same types, constants, boundary conditions and rounding.

pub mod bilateral_grid;
pub mod blur;
pub mod camera_pipe;
pub mod canny;
pub mod conv_layer;
pub mod dynbuf;
pub mod exposure_fusion;
pub mod harris;
pub mod hist_eq;
pub mod interpolate;
pub mod local_laplacian;
pub mod max_filter;
pub mod nl_means;
pub mod npy;
pub mod pyramid;
pub mod pyramid_blend;
pub mod resize;
pub mod sobel;
pub mod synth;
pub mod text_app;
pub mod transpose;
pub mod unsharp;
pub mod wavelet;

mod common;

pub use dynbuf::{DynBuffer, DynDeviceBuffer, Mismatch, Tolerance};

use halogen::prelude::*;
use std::collections::BTreeMap;

/// What can go wrong when building or running an app.
///
/// ```
/// use halogen_apps::{build, AppError, Config};
/// let Err(e) = build("blur", "no_such_schedule", &Config::default()) else { panic!() };
/// assert!(matches!(e, AppError::UnknownSchedule { .. }));
/// assert!(e.to_string().contains("hand"));
/// ```
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// An error from the compiler or the runtime.
    #[error(transparent)]
    Halogen(#[from] halogen::Error),
    /// No app has this name.
    #[error("unknown app '{name}'; the apps are: {}", available.join(", "))]
    UnknownApp {
        /// The name asked for.
        name: String,
        /// The names that exist.
        available: Vec<&'static str>,
    },
    /// The app has no schedule of this name.
    #[error("app '{app}' has no schedule '{schedule}'; its schedules are: {}", available.join(", "))]
    UnknownSchedule {
        /// The app.
        app: &'static str,
        /// The schedule asked for.
        schedule: String,
        /// The schedules that exist.
        available: Vec<&'static str>,
    },
    /// A construction parameter is unknown or has a bad value.
    #[error("app '{app}': {message}")]
    Param {
        /// The app.
        app: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The inputs given do not fit the app (count, type, dimensions, size).
    #[error("app '{app}': {message}")]
    Input {
        /// The app.
        app: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Shorthand for results with [`AppError`].
pub type Result<T, E = AppError> = std::result::Result<T, E>;

/// One construction parameter an app accepts (`halogen run APP ... --param name=value`),
/// with the values it accepts: every one of them builds an app that compiles and runs.
///
/// ```
/// let app = halogen_apps::build("bilateral_grid", "naive", &Default::default()).unwrap();
/// let names: Vec<&str> = app.params().iter().map(|p| p.name).collect();
/// assert_eq!(names, ["s_sigma", "r_sigma"]);
/// assert_eq!(app.params()[1].range_text(), "a number from 0.01 to 1");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamSpec {
    /// The key.
    pub name: &'static str,
    /// The value used when none is given.
    pub default: f64,
    /// What it means.
    pub help: &'static str,
    /// The smallest value accepted.
    pub min: f64,
    /// The largest value accepted.
    pub max: f64,
    /// Which numbers from `min` to `max` are accepted.
    pub kind: ParamKind,
}

/// Which numbers a [`ParamSpec`] accepts between its `min` and `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Any number.
    Real,
    /// Whole numbers.
    Integer,
    /// Odd whole numbers.
    OddInteger,
}

impl ParamSpec {
    /// The accepted values in words: `a number from 0.01 to 1`, `an integer from 1 to 16`.
    pub fn range_text(&self) -> String {
        let what = match self.kind {
            ParamKind::Real => "a number",
            ParamKind::Integer => "an integer",
            ParamKind::OddInteger => "an odd integer",
        };
        format!("{what} from {} to {}", self.min, self.max)
    }

    /// Whether `value` is one this parameter accepts.
    ///
    /// ```
    /// use halogen_apps::{ParamKind, ParamSpec};
    /// let p = ParamSpec { name: "k", default: 3.0, help: "", min: 1.0, max: 15.0, kind: ParamKind::OddInteger };
    /// assert!(p.accepts(15.0) && !p.accepts(4.0) && !p.accepts(17.0) && !p.accepts(f64::NAN));
    /// ```
    pub fn accepts(&self, value: f64) -> bool {
        // NaN fails the range test.
        let in_range = value >= self.min && value <= self.max;
        in_range
            && match self.kind {
                ParamKind::Real => true,
                ParamKind::Integer => value.fract() == 0.0,
                ParamKind::OddInteger => value.fract() == 0.0 && value.rem_euclid(2.0) == 1.0,
            }
    }
}

/// Construction parameters given by name (`k=v` pairs); each app reads the ones it
/// declares in [`App::params`] and rejects any other.
///
/// ```
/// use halogen_apps::Config;
/// let c = Config::parse(&["s_sigma=4", "r_sigma=0.2"]).unwrap();
/// assert_eq!(c.get("s_sigma"), Some("4"));
/// assert!(Config::parse(&["oops"]).is_err());
/// assert!(Config::parse(&["k=1", "k=2"]).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    values: BTreeMap<String, String>,
}

impl Config {
    /// Parses `key=value` strings. A key given twice is an error, not the last one winning.
    pub fn parse<S: AsRef<str>>(pairs: &[S]) -> std::result::Result<Config, String> {
        let mut c = Config::default();
        for p in pairs {
            let p = p.as_ref();
            let (k, v) = p.split_once('=').ok_or_else(|| format!("parameter '{p}' is not of the form name=value"))?;
            let (k, v) = (k.trim(), v.trim());
            if k.is_empty() {
                return Err(format!("parameter '{p}' has an empty name"));
            }
            if let Some(first) = c.values.get(k) {
                return Err(format!("parameter '{k}' is given twice ({k}={first} and {k}={v})"));
            }
            c.values.insert(k.to_string(), v.to_string());
        }
        Ok(c)
    }

    /// Sets `key` to `value`.
    ///
    /// ```
    /// let mut c = halogen_apps::Config::default();
    /// c.set("radius", 3);
    /// assert_eq!(c.get("radius"), Some("3"));
    /// ```
    pub fn set(&mut self, key: &str, value: impl ToString) -> &mut Self {
        self.values.insert(key.to_string(), value.to_string());
        self
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(|s| s.as_str())
    }

    /// Whether no parameter is set.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Checks every key against `specs` and every value against its spec's range, and
    /// returns the value of each spec, in order (the default where none is given). Errors
    /// name the app, the parameter, the value and what is accepted.
    ///
    /// ```
    /// use halogen_apps::{Config, ParamKind, ParamSpec};
    /// const SPECS: &[ParamSpec] =
    ///     &[ParamSpec { name: "k", default: 2.0, help: "", min: 1.0, max: 8.0, kind: ParamKind::Integer }];
    /// assert_eq!(Config::default().resolve("demo", SPECS).unwrap(), vec![2.0]);
    /// let c = Config::parse(&["k=5"]).unwrap();
    /// assert_eq!(c.resolve("demo", SPECS).unwrap(), vec![5.0]);
    /// let bad = Config::parse(&["j=5"]).unwrap();
    /// assert!(bad.resolve("demo", SPECS).unwrap_err().to_string().contains("'j'"));
    /// let big = Config::parse(&["k=9"]).unwrap();
    /// assert_eq!(
    ///     big.resolve("demo", SPECS).unwrap_err().to_string(),
    ///     "app 'demo': parameter 'k' must be an integer from 1 to 8, got 9"
    /// );
    /// ```
    pub fn resolve(&self, app: &'static str, specs: &[ParamSpec]) -> Result<Vec<f64>> {
        for k in self.values.keys() {
            if !specs.iter().any(|s| s.name == k) {
                let known: Vec<&str> = specs.iter().map(|s| s.name).collect();
                let message = if known.is_empty() {
                    format!("unknown parameter '{k}'; this app takes no parameters")
                } else {
                    format!("unknown parameter '{k}'; its parameters are: {}", known.join(", "))
                };
                return Err(AppError::Param { app, message });
            }
        }
        specs
            .iter()
            .map(|s| match self.values.get(s.name) {
                None => Ok(s.default),
                Some(v) => v.parse::<f64>().ok().filter(|&x| s.accepts(x)).ok_or_else(|| {
                    let got = if v.is_empty() { "nothing" } else { v.as_str() };
                    AppError::Param {
                        app,
                        message: format!("parameter '{}' must be {}, got {got}", s.name, s.range_text()),
                    }
                }),
            })
            .collect()
    }
}

/// The element type and shape of one input of an app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputSpec {
    /// The ImageParam's name.
    pub name: String,
    /// The element type.
    pub ty: Type,
    /// The extent of the channel dimension: 1 for a 2-D gray image `(x, y)`, 3 (RGB) or 4
    /// (RGBA) for a planar colour image `(x, y, c)`; 0 for an input that is not a picture
    /// (a tensor, a filter, `values` gives its layout), which only the app's own
    /// [`App::inputs_from_rgb`] knows how to make.
    pub channels: i32,
    /// Description of the values expected (range, meaning).
    pub values: &'static str,
}

/// A benchmark pipeline: its algorithm with one schedule applied, its inputs and its
/// plain-Rust reference.
///
/// Object safe, so the command-line tool keeps `Box<dyn App>`s; [`App::build`] is the
/// typed constructor for code that knows the app.
pub trait App: Send {
    /// The app's name (`blur`, `harris`, ...).
    fn name(&self) -> &'static str;

    /// One line saying what it computes.
    fn description(&self) -> &'static str;

    /// The schedules [`App::apply_schedule`] knows. Every app has `naive` (no schedule:
    /// everything inlined into the output, except Funcs with updates, which go to root;
    /// not offered where that recomputes exponentially), `root` (every Func computed at
    /// root, serial and scalar) and `hand`.
    fn schedules(&self) -> &'static [&'static str];

    /// The construction parameters it accepts.
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }

    /// Applies the schedule called `name` to the Funcs (once, on a freshly built app).
    fn apply_schedule(&self, name: &str) -> Result<()>;

    /// The output Func.
    fn output(&self) -> &Func;

    /// The inputs, in the order [`App::make_inputs`] and [`App::realize`] use.
    fn input_specs(&self) -> Vec<InputSpec>;

    /// Binds `inputs` (in [`App::input_specs`] order) to the pipeline's parameters.
    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()>;

    /// The extents of the output for these inputs.
    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>>;

    /// The element type of the output.
    fn output_type(&self) -> Type;

    /// Test inputs for an output of about `width × height`, the same kind of data
    /// `halide_bench.py` makes (random, or smooth plus noise), deterministic in `seed`.
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer>;

    /// The app's inputs made from a colour picture (planar RGB `f32` in `[0, 1]`,
    /// `(x, y, c)`): converted to gray where the app is gray, to the input's type, and
    /// grown where the app reads outside its output (blur).
    fn inputs_from_rgb(&self, rgb: &Buffer<f32>) -> Result<Vec<DynBuffer>> {
        self.input_specs().iter().map(|s| common::convert_picture(self.name(), rgb, s)).collect()
    }

    /// The plain-Rust reference result for `inputs`.
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer>;

    /// How closely the pipeline must match [`App::reference`].
    fn tolerance(&self) -> Tolerance;

    /// A version of an output that looks right as a picture (in `[0, 1]` for floats). Most
    /// outputs are pictures already; a corner response or a gradient magnitude is not.
    fn display(&self, output: &DynBuffer) -> DynBuffer {
        output.clone()
    }

    /// The pipeline computing the output.
    fn pipeline(&self) -> Pipeline {
        Pipeline::new(&[self.output()])
    }

    /// Lowers and compiles the pipeline.
    fn compile(&self, target: &Target) -> Result<Compiled> {
        Ok(self.pipeline().compile(target)?)
    }

    /// Runs a compiled pipeline on `inputs` into a new output buffer.
    fn realize(&self, compiled: &Compiled, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        let mut out = DynBuffer::zeros(self.output_type(), &self.output_extents(inputs)?)?;
        self.realize_into(compiled, inputs, &mut out)?;
        Ok(out)
    }

    /// Runs a compiled pipeline on `inputs` into `out` (for benchmarks: no allocation).
    fn realize_into(&self, compiled: &Compiled, inputs: &[DynBuffer], out: &mut DynBuffer) -> Result<()> {
        let mut args = Args::new();
        self.bind(inputs, &mut args)?;
        out.realize(compiled, &args)?;
        Ok(())
    }

    /// How a `distributed` schedule splits the output across ranks: the dimension whose
    /// loop it distributes and the group of coordinates of one iteration of that loop (1
    /// when the output's own variable is distributed, `k` for the outer loop of a split
    /// by `k`). By default rows, one by one.
    fn distributed_slices(&self) -> (usize, i32) {
        (1, 1)
    }

    /// The app's input images in the order of its inputs, for the ranks of a distributed
    /// run to find those the schedule distributes (`ImageParam::distribute`), whose
    /// buffers then hold only the rank's block ([`App::rank_inputs`]). Empty by default:
    /// no input is distributed.
    fn input_params(&self) -> Vec<ImageParam> {
        Vec::new()
    }

    /// What rank `rank` of `ranks` binds of `inputs`: for each input the schedule
    /// distributes, the rank's block of it (`halogen::lower::distribute::input_block`) and
    /// the whole image's region (for `Args::global_input`); the others whole.
    fn rank_inputs(&self, inputs: &[DynBuffer], rank: i32, ranks: i32) -> Result<RankInputs> {
        let params = self.input_params();
        let mut mine = RankInputs::default();
        for (i, input) in inputs.iter().enumerate() {
            let Some(dims) = params.get(i).map(|p| p.distributed_dims()).filter(|d| !d.is_empty()) else { continue };
            let whole: Vec<(i32, i32)> = input.mins().into_iter().zip(input.extents()).collect();
            let block = halogen::lower::distribute::input_block(&whole, &dims, rank, ranks);
            let mut cropped = input.clone();
            for (d, (&(min, extent), &(whole_min, whole_extent))) in block.iter().zip(&whole).enumerate() {
                if (min, extent) != (whole_min, whole_extent) {
                    cropped = cropped.crop(d, min, extent)?;
                }
            }
            mine.blocks.push(InputBlock { index: i, block: cropped, whole });
        }
        Ok(mine)
    }

    /// Binds `inputs` as one rank holds them (`mine`, from [`App::rank_inputs`]): the
    /// blocks of the distributed inputs, with their whole regions, and the others whole.
    fn bind_on_rank<'a>(&self, inputs: &'a [DynBuffer], mine: &'a RankInputs, args: &mut Args<'a>) -> Result<()> {
        self.bind(inputs, args)?;
        let params = self.input_params();
        for b in &mine.blocks {
            b.block.bind(&params[b.index], args);
            args.global_input(&params[b.index], &b.whole);
        }
        Ok(())
    }

    /// Runs a compiled `distributed` pipeline as one rank of `communicator`: the rank
    /// holds its block of each distributed input ([`App::rank_inputs`]) and computes its
    /// slice of the output, and every rank then holds the whole output.
    fn realize_on_rank(
        &self,
        compiled: &Compiled,
        inputs: &[DynBuffer],
        communicator: std::sync::Arc<dyn halogen::runtime::distributed::Communicator>,
    ) -> Result<DynBuffer> {
        let mut out = DynBuffer::zeros(self.output_type(), &self.output_extents(inputs)?)?;
        let mine = self.rank_inputs(inputs, communicator.rank(), communicator.ranks())?;
        let mut args = Args::new();
        self.bind_on_rank(inputs, &mine, &mut args)?;
        args.communicator(communicator.clone());
        out.realize(compiled, &args)?;
        let (dim, granule) = self.distributed_slices();
        out.all_gather_slices(&*communicator, dim, granule)?;
        Ok(out)
    }

    /// Compiles and runs once.
    fn run(&self, target: &Target, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        let compiled = self.compile(target)?;
        self.realize(&compiled, inputs)
    }

    /// Builds the app with its default parameters and the schedule called `schedule`.
    fn build(schedule: &str) -> Result<Self>
    where
        Self: Sized;
}

/// The blocks of the distributed inputs one rank holds ([`App::rank_inputs`]).
#[derive(Debug, Default)]
pub struct RankInputs {
    /// One per distributed input.
    pub blocks: Vec<InputBlock>,
}

/// One rank's block of a distributed input.
#[derive(Debug)]
pub struct InputBlock {
    /// The input's index among the app's inputs.
    pub index: usize,
    /// The rank's block of it, with its coordinates kept.
    pub block: DynBuffer,
    /// The whole image's `(min, extent)` per dimension.
    pub whole: Vec<(i32, i32)>,
}

/// Everything the registry knows about one app without building it.
struct Entry {
    name: &'static str,
    make: fn(&Config) -> Result<Box<dyn App>>,
}

fn boxed<A: App + 'static>(a: Result<A>) -> Result<Box<dyn App>> {
    a.map(|a| Box::new(a) as Box<dyn App>)
}

const REGISTRY: &[Entry] = &[
    Entry { name: "blur", make: |c| boxed(blur::Blur::with_config(c)) },
    Entry { name: "unsharp", make: |c| boxed(unsharp::Unsharp::with_config(c)) },
    Entry { name: "harris", make: |c| boxed(harris::Harris::with_config(c)) },
    Entry { name: "bilateral_grid", make: |c| boxed(bilateral_grid::BilateralGrid::with_config(c)) },
    Entry { name: "hist_eq", make: |c| boxed(hist_eq::HistEq::with_config(c)) },
    Entry { name: "local_laplacian", make: |c| boxed(local_laplacian::LocalLaplacian::with_config(c)) },
    Entry { name: "sobel", make: |c| boxed(sobel::Sobel::with_config(c)) },
    Entry { name: "max_filter", make: |c| boxed(max_filter::MaxFilter::with_config(c)) },
    Entry { name: "transpose", make: |c| boxed(transpose::Transpose::with_config(c)) },
    Entry { name: "resize", make: |c| boxed(resize::Resize::with_config(c)) },
    Entry { name: "camera_pipe", make: |c| boxed(camera_pipe::CameraPipe::with_config(c)) },
    Entry { name: "canny", make: |c| boxed(canny::Canny::with_config(c)) },
    Entry { name: "interpolate", make: |c| boxed(interpolate::Interpolate::with_config(c)) },
    Entry { name: "nl_means", make: |c| boxed(nl_means::NlMeans::with_config(c)) },
    Entry { name: "conv_layer", make: |c| boxed(conv_layer::ConvLayer::with_config(c)) },
    Entry { name: "wavelet", make: |c| boxed(wavelet::Wavelet::with_config(c)) },
    Entry { name: "pyramid_blend", make: |c| boxed(pyramid_blend::PyramidBlend::with_config(c)) },
    Entry { name: "exposure_fusion", make: |c| boxed(exposure_fusion::ExposureFusion::with_config(c)) },
];

/// Input `spec` of `app` made from a picture (planar RGB `f32` in `[0, 1]`, `(x, y, c)`) by
/// the conversion [`App::inputs_from_rgb`] applies by default: to gray for one channel,
/// to the input's type. An input that is not a picture (`channels == 0`) is an error.
///
/// ```
/// use halogen::prelude::*;
/// let app = halogen_apps::create("pyramid_blend", &Default::default()).unwrap();
/// let rgb = Buffer::<f32>::from_fn(&[4, 3, 3], |c| c[2] as f32 / 2.0);
/// let mask = halogen_apps::picture_input(app.name(), &rgb, &app.input_specs()[2]).unwrap();
/// assert_eq!(mask.extents(), vec![4, 3]);
/// ```
pub fn picture_input(app: &'static str, rgb: &Buffer<f32>, spec: &InputSpec) -> Result<DynBuffer> {
    if spec.channels == 0 {
        return Err(AppError::Input {
            app,
            message: format!("input '{}' ({}) is not a picture; give it as a .npy array", spec.name, spec.values),
        });
    }
    common::convert_picture(app, rgb, spec)
}

/// The names of every app, in the order the tools list them.
///
/// ```
/// let names = halogen_apps::app_names();
/// assert!(names.contains(&"blur") && names.contains(&"local_laplacian"));
/// ```
pub fn app_names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name).collect()
}

/// The app called `name`, built with `config`, with no schedule applied yet. A name
/// ending in `.halogen` is the path of a pipeline file (see [`text_app`]).
///
/// ```
/// let app = halogen_apps::create("harris", &Default::default()).unwrap();
/// assert!(app.schedules().contains(&"hand"));
/// assert!(halogen_apps::create("nope", &Default::default()).is_err());
/// ```
pub fn create(name: &str, config: &Config) -> Result<Box<dyn App>> {
    if name.ends_with(".halogen") {
        return Ok(Box::new(text_app::TextApp::load(std::path::Path::new(name), config)?));
    }
    let entry = REGISTRY
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| AppError::UnknownApp { name: name.to_string(), available: app_names() })?;
    (entry.make)(config)
}

/// Whether the schedule called `schedule` puts loops on a GPU (its name starts with
/// `gpu`): it then compiles only for a target with a GPU feature (`host-opencl`,
/// `host-cuda`).
///
/// ```
/// assert!(halogen_apps::is_gpu_schedule("gpu") && !halogen_apps::is_gpu_schedule("hand"));
/// ```
pub fn is_gpu_schedule(schedule: &str) -> bool {
    schedule.starts_with("gpu")
}

/// Whether the schedule called `schedule` distributes loops over the ranks of a
/// distributed run (its name starts with `distributed`): it then compiles only for a
/// target with the `mpi` feature (`host-mpi`), and runs as one rank per process under
/// `mpirun` ([`App::realize_on_rank`]), or as one rank alone.
///
/// ```
/// assert!(halogen_apps::is_distributed_schedule("distributed") && !halogen_apps::is_distributed_schedule("hand"));
/// ```
pub fn is_distributed_schedule(schedule: &str) -> bool {
    schedule.starts_with("distributed")
}

/// The app called `name`, built with `config` and the schedule called `schedule`.
///
/// ```
/// let app = halogen_apps::build("unsharp", "hand", &Default::default()).unwrap();
/// assert_eq!(app.name(), "unsharp");
/// ```
pub fn build(name: &str, schedule: &str, config: &Config) -> Result<Box<dyn App>> {
    let app = create(name, config)?;
    app.apply_schedule(schedule)?;
    Ok(app)
}
