//! The C back end's source printer: a lowered pipeline as one C11 file using GCC/Clang
//! vector extensions, with one entry point that takes the buffers and scalar parameters.
//!
//! This is the host dialect of C: its vector types and helpers ([`types`], [`prelude`]),
//! the CPU runtime's entry point, parallel-loop closures ([`captures`]) and allocations,
//! and streaming stores ([`streaming`]), printed by [`printer`]. Identifiers, literals and
//! operators come from [`crate::backend::c_like`], which other C dialects share, and the
//! access patterns loads and stores are printed by from [`crate::analysis::access`].
//!
//! The generated entry point has this C signature (the types are in
//! [`prelude::RUNTIME_TYPES`] and mirrored in [`crate::runtime::ffi`]):
//!
//! ```c
//! int NAME(const struct halogen_runtime *rt, void *ctx,
//!          struct halogen_buffer *const *buffers, const union halogen_scalar *params);
//! ```
//!
//! `buffers` holds the input images in name order, then the output(s) ([`CModule::buffers`]);
//! `params` holds the scalar `Param`s in name order ([`CModule::params`]). Each buffer's
//! `name.min.d`, `name.extent.d` and `name.stride.d` are read from its descriptor, as
//! `Compiled::realize` binds them for the interpreter. The function returns 0, or nonzero
//! after passing the failure's message to `rt->error` (a failed assertion gives the same
//! text as the interpreter).
//!
//! An output that the pipeline stores and never reads back, and that is at least the size
//! of the last-level cache (`H_STREAM_MIN_BYTES`, which the compiler command line may set),
//! is written with streaming (non-temporal) stores wherever a dense vector store steps
//! along the innermost loop: its cache lines are written whole without first being read
//! from memory. The values stored are the same either way.
//!
//! ```
//! use halogen::prelude::*;
//! let x = Var::new("x");
//! let f = Func::new("f");
//! f.def(x, x * 2);
//! let lowered = halogen::lower::lower(&[f.func_ref().clone()], &halogen::Target::host()).unwrap();
//! let m = halogen::backend::c::generate(&lowered, "double_it", &Target::host()).unwrap();
//! assert!(m.source.contains("int double_it(const struct halogen_runtime *rt"));
//! assert_eq!(m.buffers.len(), 1);
//! assert_eq!(&*m.buffers[0].name, "f");
//! ```

pub mod abi;
pub mod captures;
pub mod prelude;
pub mod printer;
pub mod streaming;
pub mod types;

/// The namer moved to the code shared by C dialects; this keeps its old path.
pub use crate::backend::c_like::names;

use crate::error::Result;
use crate::ir::{Name, Stmt, Type};
use crate::lower::Lowered;
use crate::target::Target;
use printer::{Binding, EntryBuffer, Printer};

/// A buffer argument of the generated entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferArg {
    /// The buffer's name (an `ImageParam`'s, or the output Func's storage name).
    pub name: Name,
    /// The element type.
    pub elem: Type,
    /// Number of dimensions.
    pub dims: usize,
    /// True for an output.
    pub is_output: bool,
}

/// A scalar parameter of the generated entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamArg {
    /// The `Param`'s name.
    pub name: Name,
    /// Its type.
    pub ty: Type,
}

/// A pipeline printed as C.
#[derive(Clone, Debug)]
pub struct CModule {
    /// The C source.
    pub source: String,
    /// The entry point's name.
    pub entry: String,
    /// The entry point's buffers, in the order it takes them.
    pub buffers: Vec<BufferArg>,
    /// The entry point's scalar parameters, in the order it takes them.
    pub params: Vec<ParamArg>,
    /// The same code as translation units to compile in parallel and link together, or
    /// empty (see [`printer::CFile::units`]).
    pub units: Vec<String>,
    /// For a GPU target, the kernels' source (OpenCL C or CUDA C), which `source` carries
    /// as a string (see [`crate::backend::gpu`]).
    pub kernel_source: Option<String>,
}

/// The names `name.min.d`, `name.extent.d` and `name.stride.d` a buffer binds.
fn shape_names(name: &str, dims: usize) -> impl Iterator<Item = (String, usize, &'static str)> + '_ {
    (0..dims).flat_map(move |d| ["min", "extent", "stride"].into_iter().map(move |w| (format!("{name}.{w}.{d}"), d, w)))
}

/// Prints the lowered pipeline as C with the entry point `entry` (a C identifier), for the
/// machine of `target` (its last-level cache decides which outputs stream).
pub fn generate(lowered: &Lowered, entry: &str, target: &Target) -> Result<CModule> {
    let env = &lowered.env;
    let mut buffers = Vec::new();
    // (shape name, index of the descriptor holding the shape, dims)
    let mut shapes: Vec<(Name, usize, usize)> = Vec::new();
    for (name, u) in &env.images {
        shapes.push((name.clone(), buffers.len(), u.dims));
        buffers.push(BufferArg { name: name.clone(), elem: u.ty.element(), dims: u.dims, is_output: false });
    }
    for out in &env.outputs {
        let Some(f) = env.funcs.get(out) else { continue };
        // A tuple's buffers share the Func's shape (each binds its own too, which the code
        // checks against it).
        shapes.push((out.clone(), buffers.len(), f.args.len()));
        for (b, ty) in f.buffer_names().into_iter().zip(&f.types) {
            if f.types.len() > 1 {
                shapes.push((b.clone(), buffers.len(), f.args.len()));
            }
            buffers.push(BufferArg { name: b, elem: ty.element(), dims: f.args.len(), is_output: true });
        }
    }
    let shape_set: Vec<String> = shapes.iter().flat_map(|(n, _, d)| shape_names(n, *d).map(|(s, _, _)| s)).collect();
    let params: Vec<ParamArg> = env
        .params
        .iter()
        .filter(|(n, _)| !shape_set.iter().any(|s| s.as_str() == &***n))
        .map(|(n, t)| ParamArg { name: n.clone(), ty: *t })
        .collect();
    // The buffers of Funcs with atomic updates: kernels add to them atomically.
    let atomic: Vec<Name> = env
        .funcs
        .values()
        .filter(|f| f.stages.iter().any(|s| s.schedule.atomic))
        .flat_map(|f| f.buffer_names())
        .collect();
    print(&lowered.stmt, entry, buffers, &shapes, params, target, &atomic)
}

/// Prints any lowered statement as C with the entry point `entry`, taking `buffers` and
/// `params` in the order given; each buffer binds its own `name.min.d`, `name.extent.d`
/// and `name.stride.d`. The code is for this machine (as [`Target::host`]).
///
/// ```
/// use halogen::backend::c::{generate_stmt, BufferArg};
/// use halogen::ir::{ForKind, Stmt};
/// use halogen::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let store = Stmt::Store { buffer: "out".into(), value: x.clone(), index: x, predicate: None };
/// let extent = Expr::var(Type::i32(), "out.extent.0");
/// let s = Stmt::for_loop("x", Expr::i32(0), extent, ForKind::Parallel, store);
/// let out = BufferArg { name: "out".into(), elem: Type::i32(), dims: 1, is_output: true };
/// let m = generate_stmt(&s, "iota", vec![out], vec![]).unwrap();
/// assert!(m.source.contains("static int body_0(void *ctx, int32_t index, void *closure)"));
/// ```
pub fn generate_stmt(s: &Stmt, entry: &str, buffers: Vec<BufferArg>, params: Vec<ParamArg>) -> Result<CModule> {
    let shapes: Vec<(Name, usize, usize)> =
        buffers.iter().enumerate().map(|(i, b)| (b.name.clone(), i, b.dims)).collect();
    print(s, entry, buffers, &shapes, params, &Target::host(), &[])
}

fn print(
    s: &Stmt,
    entry: &str,
    buffers: Vec<BufferArg>,
    shapes: &[(Name, usize, usize)],
    params: Vec<ParamArg>,
    target: &Target,
    atomic: &[Name],
) -> Result<CModule> {
    let mut scalars: Vec<(Name, Type, Binding)> = Vec::new();
    for (name, index, dims) in shapes {
        for (s, dim, field) in shape_names(name, *dims) {
            scalars.push((s.into(), Type::i32(), Binding::Shape { buffer: *index, dim, field }));
        }
    }
    for (index, p) in params.iter().enumerate() {
        scalars.push((p.name.clone(), p.ty, Binding::Param { index }));
    }
    let entry_buffers: Vec<EntryBuffer> = buffers
        .iter()
        .map(|b| EntryBuffer { name: b.name.clone(), elem: b.elem, dims: b.dims, is_output: b.is_output })
        .collect();
    let mut comment = String::from("/* Generated by Halogen: do not edit.\n *\n * buffers:\n");
    for (i, b) in buffers.iter().enumerate() {
        comment.push_str(&format!(
            " *   [{i}] {} '{}': {} in {} dimensions\n",
            if b.is_output { "output" } else { "input" },
            b.name,
            b.elem,
            b.dims
        ));
    }
    if !params.is_empty() {
        comment.push_str(" * params:\n");
        for (i, p) in params.iter().enumerate() {
            comment.push_str(&format!(" *   [{i}] '{}': {} (.{})\n", p.name, p.ty, printer::union_field(p.ty)));
        }
    }
    comment.push_str(" */\n");
    let mut printer = Printer::new(target.machine());
    if let Some((flavor, api)) = crate::backend::gpu::flavor_of(target) {
        printer = printer.with_gpu(flavor, api, target.has_feature(crate::target::Feature::FastMath), atomic);
    }
    let file = printer.file(s, entry, &entry_buffers, &scalars, &comment)?;
    Ok(CModule {
        source: file.source,
        units: file.units,
        kernel_source: file.kernel_source,
        entry: entry.to_string(),
        buffers,
        params,
    })
}
