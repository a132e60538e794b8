//! The regions of Funcs and images that a statement reads and writes, by symbolic
//! interval arithmetic over its loops and lets (the heart of bounds inference).

use crate::analysis::{bounds_of_expr_in_scope, simplify, substitute, Interval, Scope};
use crate::ir::stack;
use crate::ir::{is_buffer_shape, BinOp, CallKind, Expr, ExprKind, Name, Stmt, Type, COORDINATE_LIMIT};
use std::collections::HashMap;

/// A multi-dimensional region: one inclusive interval per dimension.
pub type Region = Vec<Interval>;

/// A call whose index could not be bounded.
#[derive(Clone, Debug)]
pub struct Unbounded {
    /// The Func or image called.
    pub callee: Name,
    /// The dimension.
    pub dim: usize,
    /// The Func whose definition makes the call, if known.
    pub caller: Option<Name>,
    /// The index expression.
    pub index: Expr,
}

/// What a statement touches.
#[derive(Default, Debug)]
pub struct Touched {
    /// Regions read through calls, by callee.
    pub calls: HashMap<Name, Region>,
    /// Regions written through `Provide`, by Func.
    pub provides: HashMap<Name, Region>,
    /// Calls with an index that has no bound.
    pub unbounded: Vec<Unbounded>,
    /// The products and long sums inside call indices (`x * 65536` in
    /// `input(clamp(x * 65536, lo, hi))`, `x + y + z`) with the values they take, when
    /// asked for (see [`touched_with_products`]).
    pub products: HashMap<Expr, Interval>,
}

fn union_side(a: &Option<Expr>, b: &Option<Expr>, take_min: bool) -> Option<Expr> {
    match (a, b) {
        (Some(x), Some(y)) if x == y => Some(x.clone()),
        (Some(x), Some(y)) => {
            Some(if take_min { Expr::min(x.clone(), y.clone()) } else { Expr::max(x.clone(), y.clone()) })
        }
        _ => None,
    }
}

/// The operands of the chain of 32-bit `+` and `-` at the top of `e`, left to right
/// (iteratively: a user's sum may have thousands of terms).
fn sum_terms<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    let mut todo = vec![e];
    while let Some(e) = todo.pop() {
        match e.kind() {
            ExprKind::Binary(BinOp::Add | BinOp::Sub, a, b) if e.ty() == Type::i32() => {
                todo.push(b);
                todo.push(a);
            }
            _ => out.push(e),
        }
    }
}

/// The smallest interval holding both.
pub fn union(a: &Interval, b: &Interval) -> Interval {
    Interval { min: union_side(&a.min, &b.min, true), max: union_side(&a.max, &b.max, false) }
}

/// Dimension-wise union of two regions of equal rank.
pub fn union_region(a: &Region, b: &Region) -> Region {
    a.iter().zip(b).map(|(x, y)| union(x, y)).collect()
}

fn merge(map: &mut HashMap<Name, Region>, name: &Name, region: Region) {
    match map.get_mut(name) {
        Some(old) if old.len() == region.len() => *old = union_region(old, &region),
        Some(_) => {}
        None => {
            map.insert(name.clone(), region);
        }
    }
}

struct Walker<'a> {
    scope: Scope,
    out: Touched,
    caller: Vec<Name>,
    /// When set, only this callee's regions are gathered: bounds inference asks about one
    /// Func at a time, and carrying every other region through each `let` on the way out
    /// would make a pipeline of N Funcs cost O(N³).
    only: Option<&'a Name>,
    /// Whether to gather `Touched::products`.
    products: bool,
}

impl<'a> Walker<'a> {
    fn new(scope: &Scope, only: Option<&'a Name>, products: bool) -> Walker<'a> {
        Walker { scope: scope.clone(), out: Touched::default(), caller: Vec::new(), only, products }
    }

    fn push(&mut self, name: &Name, iv: Interval) -> Option<Interval> {
        self.scope.insert(name.clone(), iv)
    }
    fn pop(&mut self, name: &Name, old: Option<Interval>) {
        match old {
            Some(o) => {
                self.scope.insert(name.clone(), o);
            }
            None => {
                self.scope.remove(name);
            }
        }
    }

    fn substitute_results(&mut self, name: &Name, value: &Expr) {
        let sub = |iv: &mut Interval| {
            if let Some(m) = &iv.min {
                iv.min = Some(substitute(name, value, m));
            }
            if let Some(m) = &iv.max {
                iv.max = Some(substitute(name, value, m));
            }
        };
        for r in self.out.calls.values_mut().chain(self.out.provides.values_mut()) {
            r.iter_mut().for_each(sub);
        }
        for u in self.out.unbounded.iter_mut() {
            u.index = substitute(name, value, &u.index);
        }
        for iv in self.out.products.values_mut() {
            sub(iv);
        }
    }

    /// Records the values of the 32-bit products and long sums in `e` (an index), down to
    /// nested calls and lets, whose own indices and values are walked on their own. A
    /// whole index is its region, checked already; `whole` says `e` is one.
    fn gather_products(&mut self, e: &Expr, whole: bool) {
        stack::guard(|| match e.kind() {
            ExprKind::Call { .. } | ExprKind::Let { .. } => {}
            ExprKind::Binary(BinOp::Mul | BinOp::Shl, ..) if e.ty() == Type::i32() => {
                self.record_value(e);
                e.for_each_child(|c| self.gather_products(c, false));
            }
            ExprKind::Binary(BinOp::Add | BinOp::Sub, ..) if e.ty() == Type::i32() => {
                // Two coordinates within the limit always sum or subtract within 32 bits;
                // a third term, a constant beside two, or a constant as large as a
                // coordinate can pass 2^31. Only the whole chain is recorded: wrapping
                // is exact modulo 2^32, so partial sums that wrap cancel out.
                let mut terms = Vec::new();
                sum_terms(e, &mut terms);
                let constant =
                    terms.iter().filter_map(|t| t.as_int()).fold(0u64, |s, c| s.saturating_add(c.unsigned_abs()));
                let variables = terms.iter().filter(|t| t.as_int().is_none()).count();
                // A buffer's own end (`in.min.0 + in.extent.0 - 1`) is checked when it is bound.
                let shape_only = terms.iter().all(|t| t.as_int().is_some() || is_buffer_shape(t));
                let may_wrap =
                    variables >= 3 || (variables == 2 && constant != 0) || constant >= COORDINATE_LIMIT as u64;
                if !whole && may_wrap && !shape_only {
                    self.record_value(e);
                }
                for t in terms {
                    self.gather_products(t, false);
                }
            }
            _ => e.for_each_child(|c| self.gather_products(c, false)),
        })
    }

    /// Records the values `e` takes, if it has bounds.
    fn record_value(&mut self, e: &Expr) {
        let iv = bounds_of_expr_in_scope(e, &self.scope);
        if iv.is_bounded() {
            match self.out.products.get_mut(e) {
                Some(old) => *old = union(old, &iv),
                None => {
                    self.out.products.insert(e.clone(), iv);
                }
            }
        }
    }

    fn region_of(&mut self, callee: &Name, args: &[Expr]) -> Region {
        if self.products {
            args.iter().for_each(|a| self.gather_products(a, true));
        }
        let mut region = Vec::with_capacity(args.len());
        for (d, a) in args.iter().enumerate() {
            let iv = bounds_of_expr_in_scope(a, &self.scope);
            if iv.min.is_none() || iv.max.is_none() {
                self.out.unbounded.push(Unbounded {
                    callee: callee.clone(),
                    dim: d,
                    caller: self.caller.last().cloned(),
                    index: a.clone(),
                });
            }
            region.push(iv);
        }
        region
    }

    fn expr(&mut self, e: &Expr) {
        stack::guard(|| match e.kind() {
            ExprKind::Let { name, value, body } => {
                self.expr(value);
                let iv = bounds_of_expr_in_scope(value, &self.scope);
                let old = self.push(name, iv);
                self.expr(body);
                self.pop(name, old);
            }
            ExprKind::Call { name, args, kind: CallKind::Func { .. } | CallKind::Image } => {
                args.iter().for_each(|a| self.expr(a));
                if self.only.is_some_and(|o| o != name) {
                    return;
                }
                let r = self.region_of(name, args);
                merge(&mut self.out.calls, name, r);
            }
            _ => e.for_each_child(|c| self.expr(c)),
        })
    }

    fn stmt(&mut self, s: &Stmt) {
        stack::guard(|| {
            match s {
                Stmt::LetStmt { name, value, body } => {
                    self.expr(value);
                    let value = simplify(value);
                    let iv = bounds_of_expr_in_scope(&value, &self.scope);
                    if iv.min.is_some() && iv.min == iv.max {
                        // A single value: keep the name symbolic inside, so expressions that
                        // use it twice stay correlated, and substitute it on the way out.
                        // (The point is the value with enclosing ranges applied, so it only
                        // names variables from outside the statement.)
                        let point = iv.min.clone().unwrap();
                        let old = self.scope.remove(name);
                        self.stmt(body);
                        self.pop(name, old);
                        self.substitute_results(name, &point);
                    } else {
                        let old = self.push(name, iv);
                        self.stmt(body);
                        self.pop(name, old);
                    }
                }
                Stmt::For { name, min, extent, body, .. } => {
                    self.expr(min);
                    self.expr(extent);
                    let lo = bounds_of_expr_in_scope(&simplify(min), &self.scope);
                    let last = simplify(&Expr::sub(Expr::add(min.clone(), extent.clone()), Expr::i32(1)));
                    let hi = bounds_of_expr_in_scope(&last, &self.scope);
                    let old = self.push(name, Interval { min: lo.min, max: hi.max });
                    self.stmt(body);
                    self.pop(name, old);
                }
                Stmt::Provide { name, values, args } => {
                    values.iter().chain(args.iter()).for_each(|e| self.expr(e));
                    if self.only.is_some_and(|o| o != name) {
                        return;
                    }
                    let r = self.region_of(name, args);
                    merge(&mut self.out.provides, name, r);
                }
                Stmt::ProducerConsumer { name, is_producer: true, body } => {
                    self.caller.push(name.clone());
                    self.stmt(body);
                    self.caller.pop();
                }
                Stmt::ProducerConsumer { body, .. } => self.stmt(body),
                Stmt::Assert { condition, .. } => self.expr(condition),
                Stmt::Realize { bounds, body, .. } => {
                    for b in bounds {
                        self.expr(&b.min);
                        self.expr(&b.extent);
                    }
                    self.stmt(body)
                }
                Stmt::Store { value, index, predicate, .. } => {
                    self.expr(value);
                    self.expr(index);
                    if let Some(p) = predicate {
                        self.expr(p)
                    }
                }
                Stmt::Allocate { extents, body, .. } => {
                    extents.iter().for_each(|e| self.expr(e));
                    self.stmt(body)
                }
                Stmt::Free { .. } => {}
                Stmt::Block(v) => v.iter().for_each(|c| self.stmt(c)),
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    self.expr(condition);
                    self.stmt(then_case);
                    if let Some(e) = else_case {
                        self.stmt(e)
                    }
                }
                Stmt::Evaluate(e) => self.expr(e),
                // A border exchange moves values a producer already computed on some rank
                // within its storage: it adds to no region.
                Stmt::Transfer { .. } | Stmt::TransferWait => {}
            }
        })
    }
}

/// What `s` reads and writes, with variables bound outside `s` treated as symbols and
/// those in `scope` as ranges.
pub fn touched(s: &Stmt, scope: &Scope) -> Touched {
    let mut w = Walker::new(scope, None, false);
    w.stmt(s);
    w.out
}

/// [`touched`], and the values of the products and long sums inside call indices: they
/// can leave the coordinate limit although the index they are part of is clamped back
/// into range.
pub fn touched_with_products(s: &Stmt, scope: &Scope) -> Touched {
    let mut w = Walker::new(scope, None, true);
    w.stmt(s);
    w.out
}

/// What `s` reads and writes of `callee` alone (the other entries stay empty).
pub fn touched_only(s: &Stmt, scope: &Scope, callee: &Name) -> Touched {
    let mut w = Walker::new(scope, Some(callee), false);
    w.stmt(s);
    w.out
}

/// What the expression `e` reads.
pub fn touched_by_expr(e: &Expr, scope: &Scope) -> Touched {
    let mut w = Walker::new(scope, None, false);
    w.expr(e);
    w.out
}
