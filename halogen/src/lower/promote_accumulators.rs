//! Accumulators in registers.
//!
//! A reduction's update `f(x) = f(x) + g(x + r)` becomes, inside the loops over its
//! reduction domain, `f[i] = f[i] + …` with an index `i` that does not change from one
//! iteration of those loops to the next. Left so, every iteration loads `f[i]` and stores
//! it back: the next iteration waits on the store (a store-to-load forwarding chain of
//! several cycles per step), and the C compiler cannot keep the value in a register
//! because the loop may run no times at all, or the loads of other buffers might read
//! `f` (it cannot see that they do not).
//!
//! This pass finds the outermost serial loop inside which every access to a buffer is
//! one of a few unpredicated elements `b[i]` (or vectors of elements), each `i` computed
//! outside the loop and no two overlapping (`b[ramp(0, 1, 8)]` and `b[ramp(8, 1, 8)]`:
//! the channels of a reduction unrolled over `c`), and the stores to it are not under a
//! condition. It then loads each `b[i]` once into a small stack buffer of its own before
//! the loop, runs the loop on those, and stores them back after:
//!
//! ```text
//! for r.y { for r.x { f[i] = f[i] + g[..] } }
//! ```
//! becomes (only when the loop runs at least once, so that nothing is touched otherwise)
//! ```text
//! if 0 < extent { allocate f.acc[lanes]; f.acc[0..] = f[i]; for r.y { for r.x {
//!     f.acc[0..] = f.acc[0..] + g[..] } }; f[i] = f.acc[0..] }
//! ```
//! The stack buffer is never addressed otherwise, so the C compiler keeps it in a
//! register. GPU kernels are left alone: their accumulators are private already, and an
//! atomic update must stay one read-modify-write per step.

use crate::analysis::{free_vars, simplify, substitute_map};
use crate::ir::{stack, Expr, ExprKind, ForKind, Mutator, Name, Stmt, Type, Visitor};
use std::collections::{HashMap, HashSet};

/// Promotes loop-invariant accumulators to stack buffers the C compiler keeps in registers.
///
/// ```
/// use halogen::ir::parse::parse_stmt;
/// use halogen::lower::promote_accumulators::promote_accumulators;
/// let s = parse_stmt("for (r, 0, 3) {\n  f[x] = (f:int32[x] + g:int32[(x + r)])\n}\n").unwrap();
/// let promoted = promote_accumulators(s);
/// let out = promoted.to_string();
/// // The printed form reads back to the same statement.
/// assert_eq!(parse_stmt(&out).unwrap(), promoted);
/// assert!(out.contains("allocate f.acc0[int32 * 1]"), "{out}");
/// assert!(out.contains("f.acc0[0] = (f.acc0[0] + g:int32[(x + r)])"), "{out}");
/// assert!(out.contains("f[x] = f.acc0[0]"), "{out}");
/// ```
pub fn promote_accumulators(s: Stmt) -> Stmt {
    Promote { in_gpu: false, made: HashSet::new() }.mutate_stmt(&s)
}

struct Promote {
    /// Inside a GPU kernel's loops.
    in_gpu: bool,
    /// The accumulators made so far (numbered in order): never promoted again.
    made: HashSet<Name>,
}

impl Mutator for Promote {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| match s {
            Stmt::For { kind: ForKind::GpuBlock | ForKind::GpuThread, .. } => {
                let was = std::mem::replace(&mut self.in_gpu, true);
                let r = crate::ir::mutate_stmt_children(self, s);
                self.in_gpu = was;
                r
            }
            Stmt::For { name, min, extent, kind: kind @ ForKind::Serial, tails, body } if !self.in_gpu => {
                let Some((buffer, elements, elem)) = self.candidate(name, body) else {
                    return crate::ir::mutate_stmt_children(self, s);
                };
                let accs: Vec<Name> = elements
                    .iter()
                    .map(|_| {
                        let acc: Name = format!("{buffer}.acc{}", self.made.len()).into();
                        self.made.insert(acc.clone());
                        acc
                    })
                    .collect();
                let lanes = elements[0].ty().lanes;
                let at = if lanes > 1 { Expr::ramp(Expr::i32(0), Expr::i32(1), lanes) } else { Expr::i32(0) };
                let mut rename = Rename {
                    from: &buffer,
                    elements: &elements,
                    accumulators: &accs,
                    at: &at,
                    scope: Scope { lets: Vec::new(), bound: vec![name.clone()] },
                };
                let body = rename.mutate_stmt(body);
                // The loop, with the accumulators in place of the buffer; its other
                // buffers may have accumulators of their own.
                let looped = self.mutate_stmt(&Stmt::For {
                    name: name.clone(),
                    min: min.clone(),
                    extent: extent.clone(),
                    kind: *kind,
                    tails: tails.clone(),
                    body: Box::new(body),
                });
                let copy = |to: &Name, to_index: &Expr, from: &Name, from_index: &Expr| Stmt::Store {
                    buffer: to.clone(),
                    value: Expr::load(elem, from.clone(), from_index.clone(), None),
                    index: to_index.clone(),
                    predicate: None,
                };
                let mut steps: Vec<Stmt> =
                    elements.iter().zip(&accs).map(|(outside, acc)| copy(acc, &at, &buffer, outside)).collect();
                steps.push(looped);
                steps.extend(elements.iter().zip(&accs).map(|(outside, acc)| copy(&buffer, outside, acc, &at)));
                let promoted = accs.iter().rev().fold(Stmt::Block(steps), |body, acc| Stmt::Allocate {
                    name: acc.clone(),
                    ty: elem,
                    extents: vec![Expr::i32(i64::from(lanes))],
                    body: Box::new(body),
                });
                if extent.as_int().is_some_and(|e| e > 0) {
                    promoted
                } else {
                    let runs = Expr::lt(Expr::i32(0), extent.clone());
                    Stmt::IfThenElse { condition: runs, then_case: Box::new(promoted), else_case: None }
                }
            }
            _ => crate::ir::mutate_stmt_children(self, s),
        })
    }
}

impl Promote {
    /// The first buffer of loop `var`'s body whose accesses are all to a few invariant
    /// elements that do not overlap (see the module documentation): its name, each
    /// element's index as computed outside the loop, and its element type.
    fn candidate(&self, var: &Name, body: &Stmt) -> Option<(Name, Vec<Expr>, Type)> {
        let mut scan = Accesses::default();
        scan.scope.bound.push(var.clone());
        scan.visit_stmt(body);
        let mut tried = HashSet::new();
        scan.stores.iter().find_map(|store| {
            let buffer = &store.buffer;
            if !tried.insert(buffer.clone()) {
                return None;
            }
            let ok = !self.made.contains(buffer)
                && !scan.allocated.contains(buffer)
                && scan.stores.iter().all(|a| a.buffer != *buffer || !a.conditional)
                && scan.loads.iter().all(|a| a.buffer != *buffer || !a.conditional)
                && !scan.other_uses.contains(buffer);
            if !ok {
                return None;
            }
            let lanes = store.lanes;
            let mut elements: Vec<Expr> = Vec::new();
            for access in scan.stores.iter().chain(&scan.loads).filter(|a| a.buffer == *buffer) {
                let outside = access.outside.as_ref()?;
                if access.lanes != lanes {
                    return None;
                }
                if elements.contains(outside) {
                    continue;
                }
                if elements.len() == MAX_ACCUMULATORS || !elements.iter().all(|o| disjoint(o, outside)) {
                    return None;
                }
                elements.push(outside.clone());
            }
            Some((buffer.clone(), elements, store.elem))
        })
    }
}

/// The most elements of one buffer promoted around one loop: each takes a register.
const MAX_ACCUMULATORS: usize = 16;

/// Whether the elements at indices `a` and `b` (scalars, or vectors of the same lanes)
/// provably share none: their difference is a constant, and for ramps of one stride it
/// falls between or past the other's lanes.
fn disjoint(a: &Expr, b: &Expr) -> bool {
    match (a.kind(), b.kind()) {
        (
            ExprKind::Ramp { base: base_a, stride: stride_a, lanes },
            ExprKind::Ramp { base: base_b, stride: stride_b, .. },
        ) => {
            let (Some(s), Some(t)) = (stride_a.as_int(), stride_b.as_int()) else { return false };
            let Some(d) = simplify(&Expr::sub(base_b.clone(), base_a.clone())).as_int() else { return false };
            s == t && s != 0 && (d % s != 0 || d.abs() >= i64::from(*lanes) * s.abs())
        }
        _ if a.ty().is_scalar() => simplify(&Expr::sub(b.clone(), a.clone())).as_int().is_some_and(|d| d != 0),
        _ => false,
    }
}

/// The names bound inside the loop at a point of its body: the lets, innermost last, and
/// the names whose values are unknown outside it (loop variables, lets inside
/// expressions).
#[derive(Default)]
struct Scope {
    lets: Vec<(Name, Expr)>,
    bound: Vec<Name>,
}

impl Scope {
    /// `e` as computed outside the loop, simplified so that equal indices compare equal:
    /// the lets bound inside substituted (the vector loop's `x = ramp(..)`, which
    /// vectorization and partitioning repeat inside the reduction's loops; an unrolled
    /// channel's `c = 2`). `None` where `e` depends on the loop's variable or on anything
    /// else whose value is not known outside.
    fn outside(&self, e: &Expr) -> Option<Expr> {
        let resolved = self.resolve(e, self.lets.len(), 0)?;
        // An index read from memory may change inside the loop.
        (!reads_memory(&resolved)).then(|| simplify(&resolved))
    }

    fn resolve(&self, e: &Expr, depth: usize, nesting: usize) -> Option<Expr> {
        const MAX_NESTING: usize = 8;
        let mut map = HashMap::new();
        for v in free_vars(e) {
            if let Some(i) = self.lets[..depth].iter().rposition(|(n, _)| *n == v) {
                if nesting >= MAX_NESTING {
                    return None;
                }
                map.insert(v, self.resolve(&self.lets[i].1, i, nesting + 1)?);
            } else if self.bound.contains(&v) {
                return None;
            }
        }
        Some(if map.is_empty() { e.clone() } else { substitute_map(&map, e) })
    }
}

/// Whether `e` loads from a buffer.
fn reads_memory(e: &Expr) -> bool {
    stack::guard(|| {
        let mut found = matches!(e.kind(), ExprKind::Load { .. });
        e.for_each_child(|c| found = found || reads_memory(c));
        found
    })
}

/// One load or store.
struct Access {
    buffer: Name,
    /// Its index as computed outside the loop (see [`Scope::outside`]).
    outside: Option<Expr>,
    lanes: u16,
    elem: Type,
    /// A store under a condition or with a predicate, or a predicated load.
    conditional: bool,
}

/// Every access to memory in a statement, and the names it binds.
#[derive(Default)]
struct Accesses {
    stores: Vec<Access>,
    loads: Vec<Access>,
    /// Buffers named other than by loads and stores.
    other_uses: HashSet<Name>,
    allocated: HashSet<Name>,
    scope: Scope,
    /// How many conditions enclose the statement being visited.
    conditions: usize,
}

impl Visitor for Accesses {
    fn visit_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Store { buffer, value, index, predicate } => {
                self.stores.push(Access {
                    buffer: buffer.clone(),
                    outside: self.scope.outside(index),
                    lanes: index.ty().lanes,
                    elem: value.ty().element(),
                    conditional: self.conditions > 0 || predicate.is_some(),
                });
                crate::ir::walk_stmt(self, s);
            }
            Stmt::IfThenElse { condition, then_case, else_case } => {
                self.visit_expr(condition);
                self.conditions += 1;
                self.visit_stmt(then_case);
                if let Some(e) = else_case {
                    self.visit_stmt(e);
                }
                self.conditions -= 1;
            }
            Stmt::LetStmt { name, value, body } => {
                self.visit_expr(value);
                self.scope.lets.push((name.clone(), value.clone()));
                self.visit_stmt(body);
                self.scope.lets.pop();
            }
            Stmt::For { name, .. } => {
                self.scope.bound.push(name.clone());
                crate::ir::walk_stmt(self, s);
                self.scope.bound.pop();
            }
            Stmt::Allocate { name, .. } => {
                self.allocated.insert(name.clone());
                crate::ir::walk_stmt(self, s);
            }
            Stmt::Free { name } => {
                self.other_uses.insert(name.clone());
            }
            Stmt::ProducerConsumer { name, .. } => {
                self.other_uses.insert(name.clone());
                crate::ir::walk_stmt(self, s);
            }
            _ => crate::ir::walk_stmt(self, s),
        }
    }
    fn visit_expr(&mut self, e: &Expr) {
        match e.kind() {
            ExprKind::Load { buffer, index, predicate } => {
                self.loads.push(Access {
                    buffer: buffer.clone(),
                    outside: self.scope.outside(index),
                    lanes: index.ty().lanes,
                    elem: e.ty().element(),
                    conditional: predicate.is_some(),
                });
            }
            ExprKind::Var { name, .. } => {
                // A buffer's own name as a value (its descriptor passed to a call).
                self.other_uses.insert(name.clone());
            }
            ExprKind::Let { name, value, body } => {
                // Names bound inside an expression are not followed: an index that uses
                // one is not promoted.
                self.visit_expr(value);
                self.scope.bound.push(name.clone());
                self.visit_expr(body);
                self.scope.bound.pop();
                return;
            }
            _ => {}
        }
        crate::ir::walk_expr(self, e)
    }
}

/// Replaces each access to `from` at the element `elements[k]` (as computed outside the
/// loop) by `accumulators[k][at]`.
struct Rename<'a> {
    from: &'a Name,
    elements: &'a [Expr],
    accumulators: &'a [Name],
    at: &'a Expr,
    scope: Scope,
}

impl Rename<'_> {
    fn accumulator(&self, buffer: &Name, index: &Expr) -> Option<Name> {
        if buffer != self.from {
            return None;
        }
        let outside = self.scope.outside(index)?;
        let k = self.elements.iter().position(|e| *e == outside)?;
        Some(self.accumulators[k].clone())
    }
}

impl Mutator for Rename<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| match s {
            Stmt::Store { buffer, value, index, predicate: None } => match self.accumulator(buffer, index) {
                Some(acc) => {
                    Stmt::Store { buffer: acc, value: self.mutate_expr(value), index: self.at.clone(), predicate: None }
                }
                None => crate::ir::mutate_stmt_children(self, s),
            },
            Stmt::LetStmt { name, value, body } => {
                let value = self.mutate_expr(value);
                self.scope.lets.push((name.clone(), value.clone()));
                let body = self.mutate_stmt(body);
                self.scope.lets.pop();
                Stmt::LetStmt { name: name.clone(), value, body: Box::new(body) }
            }
            Stmt::For { name, .. } => {
                self.scope.bound.push(name.clone());
                let r = crate::ir::mutate_stmt_children(self, s);
                self.scope.bound.pop();
                r
            }
            _ => crate::ir::mutate_stmt_children(self, s),
        })
    }
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Load { buffer, index, predicate: None } => match self.accumulator(buffer, index) {
                Some(acc) => Expr::load(e.ty().element(), acc, self.at.clone(), None),
                None => crate::ir::mutate_expr_children(self, e),
            },
            _ => crate::ir::mutate_expr_children(self, e),
        }
    }
}
