//! What a parsed `.halogen` file gives: the inputs, parameters, Funcs, output and named
//! schedules of one pipeline.

use super::schedule::Directive;
use super::TextError;
use crate::error::{Error, Result};
use crate::lang::func::Func;
use crate::lang::param::{ImageParam, Param};
use crate::pipeline::{Args, Pipeline};
use crate::Type;

/// An input image of a text pipeline.
#[derive(Clone, Debug)]
pub struct TextInput {
    /// Its name in the file (and the `ImageParam`'s).
    pub name: String,
    /// The image parameter.
    pub param: ImageParam,
    /// The element type.
    pub ty: Type,
    /// The number of dimensions.
    pub dims: usize,
    /// `(min, extent)` per dimension, where the file gives them.
    pub estimates: Option<Vec<(i32, i32)>>,
    /// The range of test values, where the file gives it (`values [lo, hi]`).
    pub values: Option<(f64, f64)>,
}

/// A scalar parameter of a text pipeline.
#[derive(Clone, Debug)]
pub struct TextParam {
    /// Its name in the file (and the `Param`'s).
    pub name: String,
    /// Its type.
    pub ty: Type,
    /// The value used when none is given (also its estimate).
    pub default: f64,
    /// The values accepted, where the file gives them (`range [lo, hi]`).
    pub range: Option<(f64, f64)>,
    pub(super) param: AnyParam,
}

/// A `Param` of any element type.
#[derive(Clone, Debug)]
pub(super) enum AnyParam {
    U8(Param<u8>),
    U16(Param<u16>),
    U32(Param<u32>),
    I8(Param<i8>),
    I16(Param<i16>),
    I32(Param<i32>),
    F32(Param<f32>),
    F64(Param<f64>),
}

macro_rules! each_param {
    ($p:expr, $v:ident => $body:expr) => {
        match $p {
            AnyParam::U8($v) => $body,
            AnyParam::U16($v) => $body,
            AnyParam::U32($v) => $body,
            AnyParam::I8($v) => $body,
            AnyParam::I16($v) => $body,
            AnyParam::I32($v) => $body,
            AnyParam::F32($v) => $body,
            AnyParam::F64($v) => $body,
        }
    };
}

impl AnyParam {
    /// A parameter called `name` of type `ty` with estimate `value` (already checked to
    /// be a value of the type), or `None` for a type a parameter cannot have.
    pub(super) fn new(name: &str, ty: Type, value: f64) -> Option<AnyParam> {
        macro_rules! make {
            ($variant:ident, $t:ty) => {{
                let p = Param::<$t>::new(name);
                p.set_estimate(value as $t);
                AnyParam::$variant(p)
            }};
        }
        Some(match (ty.code, ty.bits) {
            (crate::ir::TypeCode::UInt, 8) => make!(U8, u8),
            (crate::ir::TypeCode::UInt, 16) => make!(U16, u16),
            (crate::ir::TypeCode::UInt, 32) => make!(U32, u32),
            (crate::ir::TypeCode::Int, 8) => make!(I8, i8),
            (crate::ir::TypeCode::Int, 16) => make!(I16, i16),
            (crate::ir::TypeCode::Int, 32) => make!(I32, i32),
            (crate::ir::TypeCode::Float, 32) => make!(F32, f32),
            (crate::ir::TypeCode::Float, 64) => make!(F64, f64),
            _ => return None,
        })
    }

    pub(super) fn expr(&self) -> crate::Expr {
        each_param!(self, p => p.expr())
    }
}

/// Whether `v` is a value of `ty` (integral and in range for integers).
pub(super) fn fits(ty: Type, v: f64) -> bool {
    // Every f64 converts to a float type (rounded, or to an infinity).
    if ty.is_float() {
        return true;
    }
    if v.fract() != 0.0 || !v.is_finite() {
        return false;
    }
    match crate::analysis::simplify::info::type_range(ty) {
        Some(r) => v >= r.min as f64 && v <= r.max as f64,
        None => false,
    }
}

impl TextParam {
    /// Binds `value` to this parameter in `args`: `Err` naming the parameter if the value
    /// is not one of its type or lies outside its `range`.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let p = halogen::text::parse_pipeline(
    ///     "param k : i32 = 2 range [1, 8]\nf(x) = x * k\noutput f",
    ///     "k.halogen",
    /// )
    /// .unwrap();
    /// let mut args = Args::new();
    /// p.params()[0].bind(&mut args, 5.0).unwrap();
    /// assert!(p.params()[0].bind(&mut args, 9.0).unwrap_err().to_string().contains("'k'"));
    /// assert!(p.params()[0].bind(&mut args, 2.5).is_err());
    /// ```
    pub fn bind(&self, args: &mut Args<'_>, value: f64) -> Result<()> {
        if !fits(self.ty, value) {
            return Err(Error::Argument(format!("parameter '{}' is of type {}, but got {value}", self.name, self.ty)));
        }
        if let Some((lo, hi)) = self.range {
            if !(value >= lo && value <= hi) {
                return Err(Error::Argument(format!(
                    "parameter '{}' must lie in [{lo}, {hi}], but got {value}",
                    self.name
                )));
            }
        }
        each_param!(&self.param, p => { args.param(p, value as _); });
        Ok(())
    }
}

/// The output's extents as the file writes them, from the inputs' and parameters' values.
#[derive(Clone, Debug)]
pub(super) enum SizeExpr {
    Int(i64),
    /// Extent `dim` of input `input` (an index into the inputs).
    Extent {
        input: usize,
        dim: usize,
    },
    /// The value of parameter `0` (an index into the parameters).
    Param(usize),
    Neg(Box<SizeExpr>),
    Bin(char, Box<SizeExpr>, Box<SizeExpr>),
}

impl SizeExpr {
    fn eval(&self, extents: &[Vec<i32>], params: &[f64]) -> Option<i64> {
        Some(match self {
            SizeExpr::Int(v) => *v,
            SizeExpr::Extent { input, dim } => *extents.get(*input)?.get(*dim)? as i64,
            SizeExpr::Param(p) => *params.get(*p)? as i64,
            SizeExpr::Neg(a) => a.eval(extents, params)?.checked_neg()?,
            SizeExpr::Bin(op, a, b) => {
                let (a, b) = (a.eval(extents, params)?, b.eval(extents, params)?);
                match op {
                    '+' => a.checked_add(b)?,
                    '-' => a.checked_sub(b)?,
                    '*' => a.checked_mul(b)?,
                    _ => a.checked_div_euclid(b)?,
                }
            }
        })
    }
}

/// A pipeline read from a `.halogen` file.
///
/// ```
/// let p = halogen::text::parse_pipeline("f(x) = x * 2\noutput f", "two.halogen").unwrap();
/// assert_eq!(&*p.output().name(), "f");
/// assert_eq!(format!("{p:?}"), "TextPipeline { file: \"two.halogen\", inputs: [], funcs: [\"f\"], output: \"f\" }");
/// ```
pub struct TextPipeline {
    pub(super) file: String,
    pub(super) inputs: Vec<TextInput>,
    pub(super) params: Vec<TextParam>,
    pub(super) funcs: Vec<(String, Func)>,
    pub(super) output: Func,
    pub(super) output_size: Option<Vec<SizeExpr>>,
    pub(super) schedules: Vec<(String, Vec<Directive>)>,
}

impl std::fmt::Debug for TextPipeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let inputs: Vec<&str> = self.inputs.iter().map(|i| i.name.as_str()).collect();
        let funcs: Vec<&str> = self.funcs.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("TextPipeline")
            .field("file", &self.file)
            .field("inputs", &inputs)
            .field("funcs", &funcs)
            .field("output", &&*self.output.name())
            .finish()
    }
}

impl TextPipeline {
    /// The file's name, as given to the parser.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// The inputs, in the order the file declares them.
    pub fn inputs(&self) -> &[TextInput] {
        &self.inputs
    }

    /// The input called `name`.
    pub fn input(&self, name: &str) -> Option<&ImageParam> {
        self.inputs.iter().find(|i| i.name == name).map(|i| &i.param)
    }

    /// The scalar parameters, in the order the file declares them.
    pub fn params(&self) -> &[TextParam] {
        &self.params
    }

    /// The Func called `name` (boundary conditions included).
    pub fn func(&self, name: &str) -> Option<&Func> {
        self.funcs.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The Funcs, in the order the file defines them.
    pub fn funcs(&self) -> impl Iterator<Item = &Func> {
        self.funcs.iter().map(|(_, f)| f)
    }

    /// The output Func.
    pub fn output(&self) -> &Func {
        &self.output
    }

    /// The pipeline computing the output.
    pub fn pipeline(&self) -> Pipeline {
        Pipeline::new(&[&self.output])
    }

    /// The names of the file's schedules, in order.
    pub fn schedule_names(&self) -> Vec<&str> {
        self.schedules.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Applies the schedule called `name` (once, to a freshly parsed pipeline). A mistake
    /// in a directive is an `Err` naming the file, line and column.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let p = halogen::text::parse_pipeline(
    ///     "f(x, y) = x + y\noutput f\nschedule fast {\n  f.vectorize(q, 8)\n}",
    ///     "s.halogen",
    /// )
    /// .unwrap();
    /// let e = p.apply_schedule("fast").unwrap_err().to_string();
    /// assert!(e.starts_with("schedule error: s.halogen:4:5:") && e.contains("'q'"), "{e}");
    /// assert!(p.apply_schedule("slow").unwrap_err().to_string().contains("fast"));
    /// ```
    pub fn apply_schedule(&self, name: &str) -> Result<()> {
        let Some((_, directives)) = self.schedules.iter().find(|(n, _)| n == name) else {
            let known = self.schedule_names();
            let list = if known.is_empty() {
                "it has none".to_string()
            } else {
                format!("its schedules are: {}", known.join(", "))
            };
            return Err(Error::Argument(format!("pipeline '{}' has no schedule '{name}'; {list}", self.file)));
        };
        for d in directives {
            d.apply(self).map_err(|e: TextError| Error::Schedule(format!("{}:{e}", self.file)))?;
        }
        Ok(())
    }

    /// The output's extents for inputs of `extents` (one list per input, in order) and
    /// parameters of `values` (in order): the file's `size`, or else the first input's
    /// extents.
    ///
    /// ```
    /// let p = halogen::text::parse_pipeline(
    ///     "input a : u8[2]\nf(x, y) = a(x, y) + a(x + 2, y)\noutput f size [a.width - 2, a.height]",
    ///     "f.halogen",
    /// )
    /// .unwrap();
    /// assert_eq!(p.output_extents(&[vec![10, 4]], &[]).unwrap(), vec![8, 4]);
    /// assert!(p.output_extents(&[vec![1, 4]], &[]).is_err());
    /// ```
    pub fn output_extents(&self, extents: &[Vec<i32>], params: &[f64]) -> Result<Vec<i32>> {
        let dims = self.output.dimensions();
        let sizes: Vec<i64> = match &self.output_size {
            Some(size) => size
                .iter()
                .map(|s| s.eval(extents, params))
                .collect::<Option<_>>()
                .ok_or_else(|| Error::Argument(format!("{}: the output's size overflows", self.file)))?,
            None => {
                let first = extents.first().ok_or_else(|| {
                    Error::Argument(format!("{}: the pipeline has no input; give the output a size", self.file))
                })?;
                if first.len() < dims {
                    return Err(Error::Argument(format!(
                        "{}: the output has {dims} dimensions but the first input {}; give the output a size",
                        self.file,
                        first.len()
                    )));
                }
                first[..dims].iter().map(|&e| e as i64).collect()
            }
        };
        sizes
            .iter()
            .enumerate()
            .map(|(d, &e)| {
                i32::try_from(e).ok().filter(|&e| e > 0).ok_or_else(|| {
                    Error::Argument(format!("{}: the output's extent in dimension {d} would be {e}", self.file))
                })
            })
            .collect()
    }
}
