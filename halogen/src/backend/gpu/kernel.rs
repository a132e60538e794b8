//! The shape of one kernel, read from the loop nest it is outlined from: which GPU loop
//! is which block or thread dimension, the extents the host launches it with, and the
//! storage it allocates in block-shared memory.
//!
//! A kernel is an outermost `gpu_blocks` loop with the block loops directly inside it
//! (lets between them are fine): the innermost block loop is dimension 0, as in Halide.
//! Inside, any number of thread-loop nests; a thread loop's dimension is the number of
//! thread loops nested in it (the innermost is 0), and the block's size in each dimension
//! is the largest extent of that dimension's loops, each loop guarding its own extent.
//! Storage allocated inside a thread loop is the thread's own (registers or private
//! memory); storage allocated in the block but outside the thread loops is shared by the
//! block, with a barrier after each thread-loop nest so that every thread sees what the
//! others wrote before it reads. Both need a constant size.

use super::super::c::captures::captures;
use crate::analysis::constant_bound::constant_upper_bound;
use crate::analysis::substitute::{expr_uses_var, free_vars, substitute};
use crate::error::{Error, Result};
use crate::ir::{Expr, ForKind, Name, Stmt, Type, Visitor};
use crate::lower::loop_kinds::split_loop_name;
use std::collections::{HashMap, HashSet};

/// The most block or thread dimensions a kernel has.
pub const MAX_GPU_DIMENSIONS: usize = 3;

/// What the host needs to launch a kernel and the kernel printer to print it.
#[derive(Debug, Default)]
pub struct LaunchShape {
    /// The block loops, outermost first: name and extent.
    pub blocks: Vec<(Name, Expr)>,
    /// For each thread dimension, the extents of its loops (the block size is their
    /// largest).
    pub threads: [Vec<Expr>; MAX_GPU_DIMENSIONS],
    /// The dimension of every GPU loop variable.
    pub dims: HashMap<Name, usize>,
    /// Storage shared by a block: name, element type and constant size in elements.
    pub shared: Vec<(Name, Type, i64)>,
    /// Storage of one thread: name and constant size in elements.
    pub private: Vec<(Name, i64)>,
    /// The variables and buffers the kernel uses from outside: its arguments.
    pub vars: Vec<Name>,
    /// Buffers the kernel reads or writes, with whether it writes each.
    pub buffers: Vec<(Name, bool)>,
}

/// Reads the shape of the kernel whose outermost block loop is `kernel`.
///
/// ```
/// use halogen::backend::gpu::kernel::launch_shape;
/// use halogen::ir::{ForKind, Stmt};
/// use halogen::{Expr, Type};
/// let (n, t) = (Expr::var(Type::i32(), "n"), Expr::var(Type::i32(), "f.s0.x.xi"));
/// let store = Stmt::Store { buffer: "f".into(), value: t.clone(), index: t, predicate: None };
/// let threads = Stmt::for_loop("f.s0.x.xi", Expr::i32(0), Expr::i32(64), ForKind::GpuThread, store);
/// let kernel = Stmt::for_loop("f.s0.x.xo", Expr::i32(0), n, ForKind::GpuBlock, threads);
/// let shape = launch_shape(&kernel).unwrap();
/// assert_eq!((shape.blocks.len(), shape.threads[0].len()), (1, 1));
/// assert_eq!(shape.dims["f.s0.x.xi"], 0);
/// assert_eq!(shape.buffers, vec![("f".into(), true)]);
/// ```
pub fn launch_shape(kernel: &Stmt) -> Result<LaunchShape> {
    let used = captures(kernel, &[]);
    let outside: HashSet<&Name> = used.vars.iter().collect();
    let mut shape = LaunchShape { vars: used.vars.clone(), ..LaunchShape::default() };
    let stored = stored_buffers(kernel);
    for b in &used.buffers {
        shape.buffers.push((b.clone(), stored.contains(b)));
    }
    let host_evaluable = |what: &str, loop_name: &Name, e: &Expr| -> Result<()> {
        if let Some(v) = free_vars(e).into_iter().find(|v| !outside.contains(v)) {
            let (func, var) = split_loop_name(loop_name);
            return Err(Error::Schedule(format!(
                "Func '{func}': the extent of {what}({var}) depends on '{v}', which is computed inside the GPU kernel; \
                 the host must know every block and thread count before the launch (give the loop a constant \
                 extent, e.g. with gpu_tile)"
            )));
        }
        Ok(())
    };

    // The chain of block loops.
    let mut s = kernel;
    let mut lets = Vec::new();
    loop {
        match s {
            Stmt::For { name, extent, kind: ForKind::GpuBlock, body, .. } => {
                host_evaluable("gpu_blocks", name, extent)?;
                shape.blocks.push((name.clone(), extent.clone()));
                s = body;
            }
            Stmt::LetStmt { name, value, body } => {
                lets.push((name.clone(), value.clone()));
                s = body;
            }
            Stmt::ProducerConsumer { body, .. } => s = body,
            _ => break,
        }
    }
    if shape.blocks.len() > MAX_GPU_DIMENSIONS {
        let (func, _) = split_loop_name(&shape.blocks[0].0);
        return Err(Error::Schedule(format!(
            "Func '{func}': {} gpu_blocks loops in one kernel; a GPU has at most {MAX_GPU_DIMENSIONS} block dimensions",
            shape.blocks.len()
        )));
    }
    let n = shape.blocks.len();
    for (i, (name, _)) in shape.blocks.iter().enumerate() {
        shape.dims.insert(name.clone(), n - 1 - i);
    }
    let mut walk = Walk { shape: &mut shape, thread_depth: 0, outside: &outside, lets };
    walk.stmt(s)?;
    Ok(shape)
}

struct Walk<'a> {
    shape: &'a mut LaunchShape,
    /// Thread loops around the statement being read.
    thread_depth: usize,
    /// The kernel's arguments.
    outside: &'a HashSet<&'a Name>,
    /// The lets of the kernel around the statement being read, outermost first.
    lets: Vec<(Name, Expr)>,
}

impl Walk<'_> {
    /// `e` with the kernel's lets around it written out.
    fn inline_lets(&self, e: &Expr) -> Expr {
        let mut e = e.clone();
        for (n, v) in self.lets.iter().rev() {
            if expr_uses_var(&e, n) {
                e = substitute(n, v, &e);
            }
        }
        e
    }

    /// The block size a thread loop of `extent` needs: the extent where the host can
    /// compute it, else a constant bound of it (the loop guards its own extent).
    fn thread_count(&self, loop_name: &Name, extent: &Expr) -> Result<Expr> {
        if free_vars(extent).iter().all(|v| self.outside.contains(v)) {
            return Ok(extent.clone());
        }
        match constant_upper_bound(&self.inline_lets(extent)) {
            Some(c) => Ok(Expr::i32(c.clamp(0, i32::MAX as i64))),
            None => {
                let (func, var) = split_loop_name(loop_name);
                Err(Error::Schedule(format!(
                    "Func '{func}': the extent of gpu_threads({var}) is {extent}, which changes from block to block \
                     and has no constant bound; the block size must be known at launch (tile the loop with a \
                     constant size)"
                )))
            }
        }
    }
    /// Reads `s`; returns the deepest nesting of thread loops in it.
    fn stmt(&mut self, s: &Stmt) -> Result<usize> {
        match s {
            Stmt::For { name, extent, kind, body, .. } => match kind {
                ForKind::GpuThread => {
                    let count = self.thread_count(name, extent)?;
                    self.thread_depth += 1;
                    let inner = self.stmt(body);
                    self.thread_depth -= 1;
                    let dim = inner?;
                    if dim >= MAX_GPU_DIMENSIONS {
                        let (func, _) = split_loop_name(name);
                        return Err(Error::Schedule(format!(
                            "Func '{func}': more than {MAX_GPU_DIMENSIONS} gpu_threads loops nested in one kernel"
                        )));
                    }
                    self.shape.dims.insert(name.clone(), dim);
                    self.shape.threads[dim].push(count);
                    Ok(dim + 1)
                }
                ForKind::GpuBlock => {
                    let (func, var) = split_loop_name(name);
                    Err(Error::Schedule(format!(
                        "Func '{func}': gpu_blocks({var}) is not directly inside the kernel's other block loops; \
                         block loops must be the outermost loops of a kernel, one inside the other"
                    )))
                }
                ForKind::Serial | ForKind::Unrolled => self.stmt(body),
                ForKind::Parallel | ForKind::Vectorized | ForKind::Distributed => {
                    let (func, var) = split_loop_name(name);
                    Err(Error::Schedule(format!(
                        "Func '{func}': loop '{var}' is a {kind:?} loop inside a GPU kernel, which the GPU back end \
                         does not run; inside gpu_blocks/gpu_threads loops use serial or unrolled loops"
                    )))
                }
            },
            Stmt::Allocate { name, ty, extents, body } => {
                let size = extents.iter().try_fold(1i64, |acc, e| {
                    constant_upper_bound(&self.inline_lets(e)).and_then(|v| acc.checked_mul(v.max(0)))
                });
                let Some(size) = size else {
                    let text: Vec<String> = extents.iter().map(|e| e.to_string()).collect();
                    return Err(Error::Schedule(format!(
                        "Func '{name}' is stored inside a GPU kernel with extents [{}], which are not constants; \
                         storage in a kernel needs a constant size (compute it at a loop whose tile has constant \
                         extents)",
                        text.join(", ")
                    )));
                };
                if self.thread_depth == 0 {
                    self.shape.shared.push((name.clone(), ty.element(), size));
                } else {
                    self.shape.private.push((name.clone(), size));
                }
                self.stmt(body)
            }
            Stmt::Store { buffer, .. } if self.thread_depth == 0 => Err(Error::Schedule(format!(
                "buffer '{buffer}' is written inside a GPU kernel's blocks but outside its thread loops, where every \
                 thread of the block would write it; give the Func that computes it gpu_threads loops, or compute \
                 it inside the consumer's thread loops"
            ))),
            Stmt::LetStmt { name, value, body } => {
                self.lets.push((name.clone(), value.clone()));
                let r = self.stmt(body);
                self.lets.pop();
                r
            }
            Stmt::ProducerConsumer { body, .. } => self.stmt(body),
            Stmt::Block(v) => v.iter().try_fold(0, |m, s| Ok(m.max(self.stmt(s)?))),
            Stmt::IfThenElse { then_case, else_case, .. } => {
                let a = self.stmt(then_case)?;
                let b = else_case.as_deref().map(|e| self.stmt(e)).transpose()?.unwrap_or(0);
                Ok(a.max(b))
            }
            Stmt::Store { .. } | Stmt::Free { .. } | Stmt::Evaluate(_) | Stmt::Assert { .. } => Ok(0),
            Stmt::Provide { .. } | Stmt::Realize { .. } => Ok(0),
            Stmt::Transfer { buffer, .. } => Err(Error::Schedule(format!(
                "the border exchange of '{buffer}' is inside a GPU kernel; a distributed Func is computed at the \
                 root, outside GPU loops"
            ))),
            Stmt::TransferWait => Err(Error::Schedule(
                "a border exchange is inside a GPU kernel; a distributed Func is computed at the root, outside GPU \
                 loops"
                    .into(),
            )),
        }
    }
}

/// The buffers `s` stores to.
fn stored_buffers(s: &Stmt) -> HashSet<Name> {
    struct Find(HashSet<Name>);
    impl Visitor for Find {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let Stmt::Store { buffer, .. } = s {
                self.0.insert(buffer.clone());
            }
            crate::ir::walk_stmt(self, s)
        }
    }
    let mut f = Find(HashSet::new());
    f.visit_stmt(s);
    f.0
}
