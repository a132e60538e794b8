//! `Pipeline`, `Compiled`, `Target` and `Args`: compiling Funcs and running them.

use crate::backend::{self, Bindings, Executable};
use crate::error::{Error, Result};
use crate::ir::{Expr, Name, Stmt, Type};
use crate::lang::func::{explain_internal_names, Func};
use crate::lang::param::{ImageParam, Param};
use crate::lower::{lower, Lowered};
use crate::runtime::{Buffer, Element, RawBuffer};
use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::backend::RunStats;
pub use crate::target::Target;

/// The outputs of a pipeline, ready to compile.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, x * x);
/// let p = Pipeline::new(&[&f]);
/// let c = p.compile(&Target::interp()).unwrap();
/// let mut out = Buffer::<i32>::new(&[5]);
/// c.realize(&Args::new(), &mut out).unwrap();
/// assert_eq!(out.as_slice(), &[0, 1, 4, 9, 16]);
/// ```
#[derive(Clone, Debug)]
pub struct Pipeline {
    outputs: Vec<Func>,
}

impl Pipeline {
    /// A pipeline computing `outputs`.
    pub fn new(outputs: &[&Func]) -> Pipeline {
        Pipeline { outputs: outputs.iter().map(|f| (*f).clone()).collect() }
    }

    /// The output Funcs.
    pub fn outputs(&self) -> &[Func] {
        &self.outputs
    }

    /// Lowers the pipeline for `target` and prepares it on the back end that runs that
    /// target ([`crate::backend::select`]). Definition and schedule mistakes come back here
    /// as `Err`, naming the Func and the directive.
    pub fn compile(&self, target: &Target) -> Result<Compiled> {
        let lowered = self.lower(target)?;
        let executable = backend::select(target, &lowered)
            .and_then(|b| b.compile(&lowered, target))
            .map_err(|e| e.map_message(explain_internal_names))?;
        Ok(Compiled { lowered, target: target.clone(), executable })
    }

    /// Lowers the pipeline for `target` without compiling it.
    pub fn lower(&self, target: &Target) -> Result<Lowered> {
        if self.outputs.is_empty() {
            return Err(Error::Definition("a pipeline needs at least one output Func".into()));
        }
        let refs: Vec<_> = self.outputs.iter().map(|f| f.func_ref().clone()).collect();
        lower(&refs, target).map_err(|e| e.map_message(explain_internal_names))
    }
}

/// Values for a pipeline's inputs: images for `ImageParam`s and scalars for `Param`s.
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 1, "in");
/// let gain = Param::<u8>::new("gain");
/// let x = Var::new("x");
/// let f = Func::new("scaled");
/// f.def(x, input.at(x) * gain.expr());
/// let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
/// let img = Buffer::<u8>::from_vec(vec![1, 2, 3], &[3]).unwrap();
/// let mut args = Args::new();
/// args.image(&input, &img).param(&gain, 3);
/// let mut out = Buffer::<u8>::new(&[3]);
/// c.realize(&args, &mut out).unwrap();
/// assert_eq!(out.as_slice(), &[3, 6, 9]);
/// ```
#[derive(Default)]
pub struct Args<'a> {
    images: BTreeMap<Name, RawBuffer<'a>>,
    params: BTreeMap<Name, Expr>,
}

impl<'a> Args<'a> {
    /// No bindings yet.
    pub fn new() -> Args<'a> {
        Args::default()
    }

    /// Binds an input image.
    pub fn image<T: Element>(&mut self, param: &ImageParam, buffer: &'a Buffer<T>) -> &mut Self {
        self.images.insert(param.name(), buffer.raw());
        self
    }

    /// Binds a scalar parameter.
    pub fn param<T: Element>(&mut self, param: &Param<T>, value: T) -> &mut Self {
        self.params.insert(param.name(), scalar_expr(value));
        self
    }
}

/// The constant expression of a value of an element type.
pub(crate) fn scalar_expr<T: Element>(v: T) -> Expr {
    let b = bytemuck::bytes_of(&v);
    let t = T::TYPE;
    let mut raw = [0u8; 8];
    raw[..b.len()].copy_from_slice(b);
    let bits = u64::from_ne_bytes(raw);
    if t.is_float() {
        let x = if t.bits == 32 { f32::from_bits(bits as u32) as f64 } else { f64::from_bits(bits) };
        Expr::float_imm(t, x)
    } else {
        // Sign-extend signed types; wrap_int does the rest.
        let v = match (t.is_int(), t.bits) {
            (true, 8) => bits as u8 as i8 as i64,
            (true, 16) => bits as u16 as i16 as i64,
            (true, 32) => bits as u32 as i32 as i64,
            _ => bits as i64,
        };
        Expr::int_imm(t, v)
    }
}

/// A compiled pipeline: reusable, and safe to share between threads.
#[derive(Clone, Debug)]
pub struct Compiled {
    lowered: Lowered,
    target: Target,
    /// What the target's back end made of it.
    executable: Arc<dyn Executable>,
}

impl Compiled {
    /// The final loop nest (print it with `{}`).
    pub fn lowered_stmt(&self) -> &Stmt {
        &self.lowered.stmt
    }

    /// The generated C of a host target (`None` for the interpreter); see
    /// [`Compiled::compile_to_c`] for any target.
    pub fn c_source(&self) -> Option<&str> {
        self.executable.source()
    }

    /// Writes the pipeline as C for ahead-of-time builds: `path` (the `.c` file) and the
    /// header beside it (`.h`), with a C ABI entry point named after the file's stem; see
    /// [`crate::backend::aot`].
    pub fn compile_to_c(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::backend::aot::compile_to_c(&self.lowered, path.as_ref(), &self.target)
    }

    /// Builds the pipeline into `dir/lib<name>.a` and `dir/<name>.h` with the C ABI entry
    /// point `name`; see [`crate::backend::aot`].
    pub fn compile_to_static_library(&self, dir: impl AsRef<std::path::Path>, name: &str) -> Result<()> {
        crate::backend::aot::compile_to_static_library(&self.lowered, dir.as_ref(), name, &self.target)
    }

    /// The target it was compiled for.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// Names of the pipeline's outputs.
    pub fn outputs(&self) -> &[Name] {
        &self.lowered.env.outputs
    }

    /// Computes the output over the region `out` covers (its mins and extents).
    pub fn realize<T: Element>(&self, args: &Args<'_>, out: &mut Buffer<T>) -> Result<()> {
        self.realize_with_stats(args, out).map(|_| ())
    }

    /// Like [`Compiled::realize`], and reports what the interpreter stored and allocated
    /// (other back ends report nothing).
    pub fn realize_with_stats<T: Element>(&self, args: &Args<'_>, out: &mut Buffer<T>) -> Result<RunStats> {
        let outputs = &self.lowered.env.outputs;
        if outputs.len() != 1 {
            return Err(Error::Argument(format!(
                "this pipeline has {} outputs; realize computes a single output",
                outputs.len()
            )));
        }
        let bindings = Bindings::check(&self.lowered, &args.images, &args.params, vec![out.raw_mut()])?;
        self.executable.run(bindings).map_err(|e| e.map_message(explain_internal_names))
    }
}

/// Element type of a Func's first value (for tools).
pub fn output_type(f: &Func) -> Option<Type> {
    f.output_types().first().copied()
}
