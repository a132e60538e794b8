//! A pipeline read from a `.halogen` file (see [`halogen::text`]) as an [`App`], so that
//! the `halogen` command runs, benchmarks and lowers it like the built-in apps
//! (`--pipeline FILE`).
//!
//! A text pipeline has no plain-Rust reference: its reference is the interpreter running
//! the same file unscheduled, the oracle every schedule must match. Its schedules are the
//! file's `schedule` blocks, plus `naive` (nothing scheduled) when the file has no schedule
//! of that name. Its parameters are the file's `param`s.
//!
//! The [`App`] interface names things with `&'static str`; a `TextApp` keeps its names for
//! the life of the process (a few short strings per file loaded).

use crate::synth::Rng;
use crate::{App, AppError, Config, DynBuffer, InputSpec, ParamKind, ParamSpec, Result, Tolerance};
use halogen::prelude::*;
use halogen::text::TextPipeline;

/// A text pipeline as an app.
///
/// ```
/// use halogen::prelude::*;
/// use halogen_apps::{text_app::TextApp, App};
/// let src = "input a : u8[2]\nf(x, y) = a(x, y) / 2\noutput f\nschedule fast { f.vectorize(x, 8) }";
/// let app = TextApp::from_source(src, "half.halogen", &Default::default()).unwrap();
/// app.apply_schedule("fast").unwrap();
/// let inputs = app.make_inputs(16, 4, 1);
/// let out = app.run(&Target::interp(), &inputs).unwrap();
/// assert!(out.compare(&app.reference(&inputs).unwrap(), app.tolerance()).is_ok());
/// assert_eq!(app.schedules(), &["fast", "naive"]);
/// ```
pub struct TextApp {
    source: String,
    file: String,
    name: &'static str,
    schedules: &'static [&'static str],
    params: &'static [ParamSpec],
    values: Vec<f64>,
    pipeline: TextPipeline,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The element types a text app's inputs and output may have (those of [`DynBuffer`]).
fn supported(ty: Type) -> bool {
    DynBuffer::TYPES.contains(&ty)
}

impl TextApp {
    /// Reads the pipeline in `path`, with no schedule applied yet.
    pub fn load(path: &std::path::Path, config: &Config) -> Result<TextApp> {
        let source = std::fs::read_to_string(path).map_err(|e| AppError::Input {
            app: "text pipeline",
            message: format!("cannot read '{}': {e}", path.display()),
        })?;
        TextApp::from_source(&source, &path.display().to_string(), config)
    }

    /// Builds the pipeline in `source` (`file` names it in messages), with the parameters
    /// of `config` in place of the file's defaults and no schedule applied yet.
    pub fn from_source(source: &str, file: &str, config: &Config) -> Result<TextApp> {
        let pipeline = halogen::text::parse_pipeline(source, file)?;
        let stem = std::path::Path::new(file).file_stem().and_then(|s| s.to_str()).unwrap_or(file);
        let name = leak(stem.to_string());
        for i in pipeline.inputs() {
            if !supported(i.ty) {
                return Err(AppError::Input {
                    app: name,
                    message: format!(
                        "input '{}' is {}; the halogen command runs u8, u16, i32 and f32 images",
                        i.name, i.ty
                    ),
                });
            }
        }
        let out_ty = halogen::pipeline::output_type(pipeline.output()).unwrap_or(Type::i32());
        if !supported(out_ty) {
            return Err(AppError::Input {
                app: name,
                message: format!("the output is {out_ty}; the halogen command writes u8, u16, i32 and f32 images"),
            });
        }
        let mut names: Vec<&'static str> = pipeline.schedule_names().into_iter().map(|s| leak(s.to_string())).collect();
        if !names.contains(&"naive") {
            names.push("naive");
        }
        let schedules: &'static [&'static str] = Box::leak(names.into_boxed_slice());
        let params: Vec<ParamSpec> = pipeline
            .params()
            .iter()
            .map(|p| {
                let (lo, hi) = p.range.unwrap_or((f64::MIN, f64::MAX));
                ParamSpec {
                    name: leak(p.name.clone()),
                    default: p.default,
                    help: "a parameter of the pipeline file",
                    min: lo,
                    max: hi,
                    kind: if p.ty.is_float() { ParamKind::Real } else { ParamKind::Integer },
                }
            })
            .collect();
        let params: &'static [ParamSpec] = Box::leak(params.into_boxed_slice());
        let values = config.resolve(name, params)?;
        Ok(TextApp { source: source.to_string(), file: file.to_string(), name, schedules, params, values, pipeline })
    }

    /// The parsed pipeline.
    pub fn text(&self) -> &TextPipeline {
        &self.pipeline
    }
}

impl App for TextApp {
    fn name(&self) -> &'static str {
        self.name
    }

    fn description(&self) -> &'static str {
        "a pipeline read from a .halogen file"
    }

    fn schedules(&self) -> &'static [&'static str] {
        self.schedules
    }

    fn params(&self) -> &'static [ParamSpec] {
        self.params
    }

    fn apply_schedule(&self, name: &str) -> Result<()> {
        if name == "naive" && !self.pipeline.schedule_names().contains(&"naive") {
            return Ok(());
        }
        if !self.schedules.contains(&name) {
            return Err(AppError::UnknownSchedule {
                app: self.name,
                schedule: name.to_string(),
                available: self.schedules.to_vec(),
            });
        }
        Ok(self.pipeline.apply_schedule(name)?)
    }

    fn output(&self) -> &Func {
        self.pipeline.output()
    }

    fn input_specs(&self) -> Vec<InputSpec> {
        self.pipeline
            .inputs()
            .iter()
            .map(|i| InputSpec {
                name: i.name.clone(),
                ty: i.ty,
                channels: match i.dims {
                    2 => 1,
                    3 => i.estimates.as_ref().map_or(3, |e| e[2].1),
                    _ => 0,
                },
                values: "as the pipeline file says",
            })
            .collect()
    }

    fn bind<'a>(&self, inputs: &'a [DynBuffer], args: &mut Args<'a>) -> Result<()> {
        let declared = self.pipeline.inputs();
        if inputs.len() != declared.len() {
            return Err(AppError::Input {
                app: self.name,
                message: format!("the pipeline takes {} inputs, but {} were given", declared.len(), inputs.len()),
            });
        }
        for (buf, i) in inputs.iter().zip(declared) {
            if buf.ty() != i.ty || buf.dimensions() != i.dims {
                return Err(AppError::Input {
                    app: self.name,
                    message: format!(
                        "input '{}' is {} with {} dimensions, but a {} buffer with {} was given",
                        i.name,
                        i.ty,
                        i.dims,
                        buf.ty(),
                        buf.dimensions()
                    ),
                });
            }
            buf.bind(&i.param, args);
        }
        for (p, &v) in self.pipeline.params().iter().zip(&self.values) {
            p.bind(args, v)?;
        }
        Ok(())
    }

    fn output_extents(&self, inputs: &[DynBuffer]) -> Result<Vec<i32>> {
        let extents: Vec<Vec<i32>> = inputs.iter().map(|b| b.extents()).collect();
        Ok(self.pipeline.output_extents(&extents, &self.values)?)
    }

    fn output_type(&self) -> Type {
        halogen::pipeline::output_type(self.pipeline.output()).unwrap_or(Type::i32())
    }

    /// Random inputs: `width × height` in the first two dimensions (grown where the
    /// output's size is smaller than its inputs'), a dimension's estimated extent (else 3)
    /// beyond them; values uniform over the input's `values` range, else over [0, 1] for
    /// floats and the type's range for u8 and u16, [-1000, 1000] for i32.
    fn make_inputs(&self, width: i32, height: i32, seed: u64) -> Vec<DynBuffer> {
        let target = [width.max(1), height.max(1)];
        let mut extents: Vec<Vec<i32>> = self
            .pipeline
            .inputs()
            .iter()
            .map(|i| {
                (0..i.dims)
                    .map(|d| match d {
                        0 | 1 => target[d],
                        _ => i.estimates.as_ref().map_or(3, |e| e[d].1.max(1)),
                    })
                    .collect()
            })
            .collect();
        // Grow the inputs by what the output loses (`size [in.width - 2, ...]`).
        if let Ok(out) = self.pipeline.output_extents(&extents, &self.values) {
            for (d, t) in target.iter().enumerate().take(out.len()) {
                let lack = (t - out[d]).max(0);
                for e in extents.iter_mut() {
                    if let Some(v) = e.get_mut(d) {
                        *v += lack;
                    }
                }
            }
        }
        let mut rng = Rng::new(seed);
        self.pipeline
            .inputs()
            .iter()
            .zip(extents)
            .map(|(i, ext)| {
                let (lo, hi) = i.values.unwrap_or(if i.ty.is_float() {
                    (0.0, 1.0)
                } else if i.ty == Type::u8() {
                    (0.0, 255.0)
                } else if i.ty == Type::u16() {
                    (0.0, 65535.0)
                } else {
                    (-1000.0, 1000.0)
                });
                let whole = |u: f64| (lo + ((hi - lo + 1.0) * u).floor()).min(hi);
                if i.ty == Type::u8() {
                    Buffer::<u8>::from_fn(&ext, |_| whole(rng.uniform()) as u8).into()
                } else if i.ty == Type::u16() {
                    Buffer::<u16>::from_fn(&ext, |_| whole(rng.uniform()) as u16).into()
                } else if i.ty == Type::i32() {
                    Buffer::<i32>::from_fn(&ext, |_| whole(rng.uniform()) as i32).into()
                } else {
                    Buffer::<f32>::from_fn(&ext, |_| (lo + (hi - lo) * rng.uniform()) as f32).into()
                }
            })
            .collect()
    }

    /// The interpreter running the same file with no schedule.
    fn reference(&self, inputs: &[DynBuffer]) -> Result<DynBuffer> {
        let mut config = Config::default();
        for (p, v) in self.params.iter().zip(&self.values) {
            config.set(p.name, v);
        }
        let plain = TextApp::from_source(&self.source, &self.file, &config)?;
        plain.run(&Target::interp(), inputs)
    }

    fn tolerance(&self) -> Tolerance {
        if self.output_type().is_float() {
            Tolerance::Relative(1e-5)
        } else {
            Tolerance::Exact
        }
    }

    fn build(_schedule: &str) -> Result<Self> {
        Err(AppError::Param {
            app: "text pipeline",
            message: "a text pipeline is built from its file: use TextApp::load".into(),
        })
    }
}
