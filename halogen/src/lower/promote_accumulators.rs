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
//! the same unpredicated element `b[i]` (or vector of elements), `i` computed outside the
//! loop, and the stores to it are not under a condition. It then loads `b[i]` once into a
//! small stack buffer before the loop, runs the loop on that, and stores it back after:
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

use crate::analysis::{free_vars, substitute_map};
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
                let Some((buffer, index, outside, elem)) = self.candidate(name, body) else {
                    return crate::ir::mutate_stmt_children(self, s);
                };
                let acc: Name = format!("{buffer}.acc{}", self.made.len()).into();
                self.made.insert(acc.clone());
                let lanes = index.ty().lanes;
                let at = if lanes > 1 { Expr::ramp(Expr::i32(0), Expr::i32(1), lanes) } else { Expr::i32(0) };
                let body = Rename { from: &buffer, index: &index, to: &acc, at: &at }.mutate_stmt(body);
                // The loop, with the accumulator in place of the buffer; its other
                // buffers may have accumulators of their own.
                let looped = self.mutate_stmt(&Stmt::For {
                    name: name.clone(),
                    min: min.clone(),
                    extent: extent.clone(),
                    kind: *kind,
                    tails: tails.clone(),
                    body: Box::new(body),
                });
                let promoted = Stmt::Allocate {
                    name: acc.clone(),
                    ty: elem,
                    extents: vec![Expr::i32(i64::from(lanes))],
                    body: Box::new(Stmt::Block(vec![
                        Stmt::Store {
                            buffer: acc.clone(),
                            value: Expr::load(elem, buffer.clone(), outside.clone(), None),
                            index: at.clone(),
                            predicate: None,
                        },
                        looped,
                        Stmt::Store { buffer, value: Expr::load(elem, acc, at, None), index: outside, predicate: None },
                    ])),
                };
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
    /// The first buffer of loop `var`'s body whose accesses are all one invariant element
    /// (see the module documentation): its name, its index as written inside the loop and
    /// as computed outside it, and its element type.
    fn candidate(&self, var: &Name, body: &Stmt) -> Option<(Name, Expr, Expr, Type)> {
        let mut scan = Accesses::default();
        scan.visit_stmt(body);
        scan.bound.insert(var.clone());
        scan.stores.iter().find_map(|(buffer, index, elem, conditional)| {
            let ok = !conditional
                && !self.made.contains(buffer)
                && !scan.allocated.contains(buffer)
                && scan.stores.iter().all(|(b, i, _, c)| b != buffer || (i == index && !c))
                && scan.loads.iter().all(|(b, i, p)| b != buffer || (i == index && !p))
                && !scan.other_uses.contains(buffer);
            if !ok {
                return None;
            }
            let outside = invariant(index, &scan.bound, &scan.lets, 0)?;
            Some((buffer.clone(), index.clone(), outside, *elem))
        })
    }
}

/// `e` as computed outside the loop: the lets bound inside it substituted where each is
/// bound to one value that is itself invariant (the vector loop's `x = ramp(..)`, which
/// vectorization and partitioning repeat inside the reduction's loops). `None` where `e`
/// depends on the loop's variable or on anything else bound inside it.
fn invariant(e: &Expr, bound: &HashSet<Name>, lets: &HashMap<Name, Vec<Expr>>, depth: usize) -> Option<Expr> {
    const MAX_DEPTH: usize = 8;
    let mut map = HashMap::new();
    for v in free_vars(e) {
        if let Some(values) = lets.get(&v) {
            let first = values.first()?;
            if depth >= MAX_DEPTH || values.iter().any(|x| x != first) {
                return None;
            }
            map.insert(v, invariant(first, bound, lets, depth + 1)?);
        } else if bound.contains(&v) {
            return None;
        }
    }
    Some(if map.is_empty() { e.clone() } else { substitute_map(&map, e) })
}

/// Every access to memory in a statement, and the names it binds.
#[derive(Default)]
struct Accesses {
    /// Buffer, index, element type, and whether it is under a condition.
    stores: Vec<(Name, Expr, Type, bool)>,
    /// Buffer, index, and whether it is predicated.
    loads: Vec<(Name, Expr, bool)>,
    /// Buffers written with a predicate, or named other than by loads and stores.
    other_uses: HashSet<Name>,
    /// Loop variables bound inside.
    bound: HashSet<Name>,
    /// Lets bound inside, with every value each is bound to.
    lets: HashMap<Name, Vec<Expr>>,
    allocated: HashSet<Name>,
    /// How many conditions enclose the statement being visited.
    conditions: usize,
}

impl Visitor for Accesses {
    fn visit_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Store { buffer, value, index, predicate } => {
                if predicate.is_some() {
                    self.other_uses.insert(buffer.clone());
                }
                self.stores.push((buffer.clone(), index.clone(), value.ty().element(), self.conditions > 0));
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
            Stmt::LetStmt { name, value, .. } => {
                self.lets.entry(name.clone()).or_default().push(value.clone());
                crate::ir::walk_stmt(self, s);
            }
            Stmt::For { name, .. } => {
                self.bound.insert(name.clone());
                crate::ir::walk_stmt(self, s);
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
                self.loads.push((buffer.clone(), index.clone(), predicate.is_some()));
            }
            ExprKind::Var { name, .. } => {
                // A buffer's own name as a value (its descriptor passed to a call).
                self.other_uses.insert(name.clone());
            }
            _ => {}
        }
        crate::ir::walk_expr(self, e)
    }
}

/// Replaces the accesses to `from[index]` by `to[at]`.
struct Rename<'a> {
    from: &'a Name,
    index: &'a Expr,
    to: &'a Name,
    at: &'a Expr,
}

impl Mutator for Rename<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::Store { buffer, value, index, predicate: None } if buffer == self.from && index == self.index => {
                Stmt::Store {
                    buffer: self.to.clone(),
                    value: self.mutate_expr(value),
                    index: self.at.clone(),
                    predicate: None,
                }
            }
            _ => crate::ir::mutate_stmt_children(self, s),
        }
    }
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        match e.kind() {
            ExprKind::Load { buffer, index, predicate: None } if buffer == self.from && index == self.index => {
                Expr::load(e.ty().element(), self.to.clone(), self.at.clone(), None)
            }
            _ => crate::ir::mutate_expr_children(self, e),
        }
    }
}
