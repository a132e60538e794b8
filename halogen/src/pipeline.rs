//! `Pipeline`, `Compiled`, `Target` and `Args`: compiling Funcs and running them.

use crate::backend::interp::Interpreter;
use crate::backend::jit::JitModule;
use crate::error::{Error, Result};
use crate::ir::{Expr, Name, Stmt, Type};
use crate::lang::func::Func;
use crate::lang::param::{ImageParam, Param};
use crate::lower::{lower, Lowered};
use crate::runtime::{Buffer, BufferDim, Element, RawBuffer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where compiled code runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Target {
    kind: TargetKind,
    fast_math: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum TargetKind {
    Interp,
    Host,
}

impl Target {
    /// The reference interpreter: every load and store checked; the oracle for every
    /// other back end.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// assert!(Target::interp().is_interp());
    /// ```
    pub fn interp() -> Target {
        Target { kind: TargetKind::Interp, fast_math: false }
    }

    /// Native code for this machine: generated C compiled by the system C compiler
    /// (`$HALOGEN_CC`, else `clang`, else `cc`), vectorized and multi-threaded; see
    /// [`crate::backend::jit`].
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let _t = Target::host();
    /// ```
    pub fn host() -> Target {
        Target { kind: TargetKind::Host, fast_math: false }
    }

    /// True for the interpreter target.
    pub fn is_interp(&self) -> bool {
        self.kind == TargetKind::Interp
    }

    /// This target, allowed to contract `a * b + c` into fused multiply-adds (as Halide
    /// does by default). Float results may then differ from the interpreter's in the last
    /// bits; without it native code matches the interpreter bit for bit. The interpreter
    /// ignores it.
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let t = Target::host().with_fast_math();
    /// assert!(t.fast_math() && !Target::host().fast_math());
    /// ```
    pub fn with_fast_math(mut self) -> Target {
        self.fast_math = true;
        self
    }

    /// Whether fused multiply-adds are allowed (see [`Target::with_fast_math`]).
    pub fn fast_math(&self) -> bool {
        self.fast_math
    }
}

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

    /// Lowers the pipeline and prepares it for `target`. Definition and schedule mistakes
    /// come back here as `Err`, naming the Func and the directive.
    pub fn compile(&self, target: &Target) -> Result<Compiled> {
        if self.outputs.is_empty() {
            return Err(Error::Definition("a pipeline needs at least one output Func".into()));
        }
        let refs: Vec<_> = self.outputs.iter().map(|f| f.func_ref().clone()).collect();
        let lowered = lower(&refs)?;
        let native = match target.kind {
            TargetKind::Host => Some(Arc::new(JitModule::compile_with(&lowered, target.fast_math)?)),
            TargetKind::Interp => None,
        };
        Ok(Compiled { lowered, target: target.clone(), native })
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

/// What the interpreter saw while running: for tests and tools.
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Values (lanes) stored into each buffer.
    pub stores: BTreeMap<Name, u64>,
    /// Elements of each allocation (largest instance).
    pub allocations: BTreeMap<Name, u64>,
}

/// A compiled pipeline: reusable, and safe to share between threads.
#[derive(Clone, Debug)]
pub struct Compiled {
    lowered: Lowered,
    target: Target,
    /// The loaded native code, for host targets.
    native: Option<Arc<JitModule>>,
}

fn bind_shape(interp: &mut Interpreter<'_>, name: &str, dims: &[BufferDim]) {
    for (d, dim) in dims.iter().enumerate() {
        interp.bind_scalar(&format!("{name}.min.{d}"), Expr::i32(dim.min as i64));
        interp.bind_scalar(&format!("{name}.extent.{d}"), Expr::i32(dim.extent as i64));
        interp.bind_scalar(&format!("{name}.stride.{d}"), Expr::i32(dim.stride as i64));
    }
}

impl Compiled {
    /// The final loop nest (print it with `{}`).
    pub fn lowered_stmt(&self) -> &Stmt {
        &self.lowered.stmt
    }

    /// The generated C of a host target (`None` for the interpreter); see
    /// [`Compiled::compile_to_c`] for any target.
    pub fn c_source(&self) -> Option<&str> {
        self.native.as_deref().map(JitModule::source)
    }

    /// Writes the pipeline as C for ahead-of-time builds: `path` (the `.c` file) and the
    /// header beside it (`.h`), with a C ABI entry point named after the file's stem; see
    /// [`crate::backend::aot`].
    pub fn compile_to_c(&self, path: impl AsRef<std::path::Path>) -> Result<()> {
        crate::backend::aot::compile_to_c(&self.lowered, path.as_ref())
    }

    /// Builds the pipeline into `dir/lib<name>.a` and `dir/<name>.h` with the C ABI entry
    /// point `name`; see [`crate::backend::aot`].
    pub fn compile_to_static_library(&self, dir: impl AsRef<std::path::Path>, name: &str) -> Result<()> {
        crate::backend::aot::compile_to_static_library(&self.lowered, dir.as_ref(), name)
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

    /// Like [`Compiled::realize`], and reports what the interpreter stored and allocated.
    pub fn realize_with_stats<T: Element>(&self, args: &Args<'_>, out: &mut Buffer<T>) -> Result<RunStats> {
        let env = &self.lowered.env;
        if env.outputs.len() != 1 {
            return Err(Error::Argument(format!(
                "this pipeline has {} outputs; realize computes a single output",
                env.outputs.len()
            )));
        }
        let name = env.outputs[0].clone();
        let f = &env.funcs[&name];
        if f.types[0] != T::TYPE {
            return Err(Error::Buffer(format!(
                "output buffer for Func '{name}' holds {} but '{name}' produces {}",
                T::TYPE,
                f.types[0]
            )));
        }
        if out.dimensions() != f.args.len() {
            return Err(Error::Buffer(format!(
                "output buffer for Func '{name}' has {} dimensions but '{name}' has {}",
                out.dimensions(),
                f.args.len()
            )));
        }
        let mut interp = Interpreter::new();
        let mut bound: std::collections::HashSet<String> = std::collections::HashSet::new();
        for (img, raw) in &args.images {
            if let Some(u) = env.images.get(img) {
                if u.ty != raw.ty {
                    return Err(Error::Buffer(format!(
                        "input buffer for ImageParam '{img}' holds {} but '{img}' has type {}",
                        raw.ty, u.ty
                    )));
                }
                if u.dims != raw.dims.len() {
                    return Err(Error::Buffer(format!(
                        "input buffer for ImageParam '{img}' has {} dimensions but '{img}' is used with {}",
                        raw.dims.len(),
                        u.dims
                    )));
                }
            }
            bind_shape(&mut interp, img, &raw.dims);
            for d in 0..raw.dims.len() {
                for w in ["min", "extent", "stride"] {
                    bound.insert(format!("{img}.{w}.{d}"));
                }
            }
            interp.bind_buffer(img, raw.ty, raw.bytes);
        }
        for img in env.images.keys() {
            if !args.images.contains_key(img) {
                return Err(Error::Argument(format!(
                    "no buffer given for ImageParam '{img}'; bind it with args.image(&{img}, &buffer)"
                )));
            }
        }
        let dims = out.dims().to_vec();
        bind_shape(&mut interp, &name, &dims);
        for d in 0..dims.len() {
            for w in ["min", "extent", "stride"] {
                bound.insert(format!("{name}.{w}.{d}"));
            }
        }
        for (p, ty) in &env.params {
            if bound.contains(&**p) {
                continue;
            }
            match args.params.get(p) {
                Some(v) if v.ty() == *ty => interp.bind_scalar(p, v.clone()),
                Some(v) => {
                    return Err(Error::Argument(format!(
                        "Param '{p}' has type {ty} but was given a value of type {}",
                        v.ty()
                    )))
                }
                None => {
                    let image = ["min", "extent", "stride"]
                        .iter()
                        .find_map(|w| p.split_once(&format!(".{w}.")).map(|(img, _)| img.to_string()));
                    return Err(match image {
                        Some(img) => Error::Argument(format!(
                            "no buffer given for ImageParam '{img}' (the pipeline uses its shape '{p}')"
                        )),
                        None => Error::Argument(format!(
                            "no value given for Param '{p}'; bind it with args.param(&{p}, value)"
                        )),
                    });
                }
            }
        }
        if let Some(native) = &self.native {
            native.run(&args.images, &args.params, &name, out.raw_mut())?;
            return Ok(RunStats::default());
        }
        let raw = out.raw_mut();
        interp.bind_buffer_mut(&name, raw.ty, raw.bytes);
        interp.run(&self.lowered.stmt)?;
        let mut stats = RunStats::default();
        for (n, size) in interp.allocation_sizes() {
            stats.stores.insert(n.clone(), interp.store_count(&n));
            stats.allocations.insert(n, size);
        }
        stats.stores.insert(name.clone(), interp.store_count(&name));
        Ok(stats)
    }
}

/// Element type of a Func's first value (for tools).
pub fn output_type(f: &Func) -> Option<Type> {
    f.output_types().first().copied()
}
