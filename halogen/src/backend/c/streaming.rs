//! Which stores stream: the policy behind the printer's streaming (non-temporal) stores.
//!
//! A streaming store writes a cache line to memory without first reading it, and without
//! keeping it in cache. For a loop that does little more than move data (a blur, a
//! transpose, a resampling), that removes a third of the memory traffic: the line is no
//! longer read before it is overwritten. For a loop that computes a lot per byte it stores,
//! memory is not the bottleneck and streaming gains nothing; on Zen 4 it costs 3 to 13%.
//! So a store streams only where all of these hold:
//! - its buffer is an output the pipeline never reads ([`write_only`]) and is at least
//!   `H_STREAM_MIN_BYTES` (decided at run time, see the prelude);
//! - it is a dense vector store of a whole number of 16-byte blocks, and the innermost loop
//!   around it steps it by exactly one vector over at least [`CACHE_LINE_BYTES`] (all of a
//!   row, or a tile's row), so cache lines are filled whole and in order (a transpose's
//!   16×16 tiles of 16-bit values write half a line per row: streamed, 1.3× slower);
//! - that loop does at most [`MAX_VECTOR_OPS_PER_BYTE`] vector operations per byte it
//!   stores ([`Work`]).

use crate::ir::{walk_expr, walk_stmt, Expr, ExprKind, Name, Stmt, Visitor};
use std::collections::HashSet;

/// The shortest run of bytes the innermost loop must store for its stores to stream.
pub const CACHE_LINE_BYTES: i64 = 64;

/// The most vector operations per byte stored for which a loop's stores stream. Measured
/// on the apps (operations as [`Work`] counts them, per byte): blur 0.4, unsharp 0.4,
/// resampling 0.25, transpose 0.5, interpolate (auto-scheduled) 0.35 and the wavelet 0.6
/// to 1.4 gain 4 to 45% from streaming; Harris at 3.3 and interpolate (hand-scheduled) at
/// 1.8 lose 3 to 13%; the pyramids at 2.2 to 3 come out even.
pub const MAX_VECTOR_OPS_PER_BYTE: f64 = 1.5;

/// What one iteration of a loop body does: its vector operations (every vector expression
/// node, loads included, but variables, broadcasts and `Let`s, whose values count once
/// where they are bound; scalar index arithmetic the C compiler mostly hoists) and the
/// bytes its stores write.
///
/// ```
/// use halogen::backend::c::streaming::work;
/// use halogen::ir::Stmt;
/// use halogen::{Expr, Type};
/// let x = Expr::ramp(Expr::var(Type::i32(), "x"), Expr::i32(1), 8);
/// let load = Expr::load(Type::f32().with_lanes(8), "in", x.clone(), None);
/// let two = Expr::broadcast(Expr::float_imm(Type::f32(), 2.0), 8);
/// let s = Stmt::Store { buffer: "out".into(), value: Expr::mul(load, two), index: x, predicate: None };
/// let w = work(&s);
/// // the ramp (in the load's index and in the store's), the load and the multiply, for
/// // 32 bytes stored
/// assert_eq!((w.vector_ops, w.stored_bytes), (4, 32));
/// assert!(w.streams());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// Vector operations per iteration.
    pub vector_ops: usize,
    /// Bytes stored per iteration.
    pub stored_bytes: usize,
}

impl Work {
    /// Whether this little work per byte stored leaves the loop bound by memory, where
    /// streaming stores pay.
    pub fn streams(&self) -> bool {
        self.stored_bytes > 0 && self.vector_ops as f64 <= MAX_VECTOR_OPS_PER_BYTE * self.stored_bytes as f64
    }
}

impl Visitor for Work {
    fn visit_expr(&mut self, e: &Expr) {
        let counted = !matches!(e.kind(), ExprKind::Var { .. } | ExprKind::Broadcast { .. } | ExprKind::Let { .. });
        if counted && e.ty().is_vector() {
            self.vector_ops += 1;
        }
        walk_expr(self, e)
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        if let Stmt::Store { value, .. } = s {
            self.stored_bytes += value.ty().lanes as usize * value.ty().element().bytes();
        }
        walk_stmt(self, s)
    }
}

/// The [`Work`] of one iteration of `body`.
pub fn work(body: &Stmt) -> Work {
    let mut w = Work::default();
    w.visit_stmt(body);
    w
}

/// Collects the buffers a statement stores to and those it loads from.
#[derive(Default)]
struct Accesses {
    stored: Vec<Name>,
    loaded: HashSet<Name>,
}

impl Visitor for Accesses {
    fn visit_expr(&mut self, e: &Expr) {
        if let ExprKind::Load { buffer, .. } = e.kind() {
            self.loaded.insert(buffer.clone());
        }
        walk_expr(self, e)
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        if let Stmt::Store { buffer, .. } = s {
            if !self.stored.contains(buffer) {
                self.stored.push(buffer.clone());
            }
        }
        walk_stmt(self, s)
    }
}

/// The buffers `s` stores to and never loads from, in order of first store: outputs whose
/// stores nothing in the pipeline reads back.
///
/// ```
/// use halogen::backend::c::streaming::write_only;
/// use halogen::ir::Stmt;
/// use halogen::{Expr, Type};
/// let x = Expr::var(Type::i32(), "x");
/// let load = |b: &str| Expr::load(Type::i32(), b, x.clone(), None);
/// let store = |b: &str, v: Expr| Stmt::Store { buffer: b.into(), value: v, index: x.clone(), predicate: None };
/// // acc is stored and read back (an update); out is only stored
/// let s = Stmt::block(vec![store("acc", load("in")), store("acc", load("acc")), store("out", load("acc"))]);
/// assert_eq!(write_only(&s), vec!["out".into()]);
/// ```
pub fn write_only(s: &Stmt) -> Vec<Name> {
    let mut a = Accesses::default();
    a.visit_stmt(s);
    a.stored.into_iter().filter(|b| !a.loaded.contains(b)).collect()
}
