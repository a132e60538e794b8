//! Statement simplification.
//!
//! Carries what the enclosing statements say about variables: the interval
//! `[min, min + extent - 1]` of each `For` loop variable, the interval of each `LetStmt`
//! value, and the conditions of enclosing `if`s (as facts, and as tighter intervals for
//! `var < e`-style conditions). Comparisons are proven with them, so guards that always
//! hold disappear, as do branches never taken, loops that never run, lets nobody uses and
//! empty blocks.

use super::cmp::negate;
use super::info::{const_int, type_range, Info};
use super::let_::is_trivial;
use super::{no_overflow, Binding, Saved, Simplifier};
use crate::analysis::interval::{bounds_assuming_no_overflow, Interval};
use crate::analysis::substitute::{free_vars, stmt_binds_any, stmt_free_vars};
use crate::ir::stack;
use crate::ir::{BinOp, CmpOp, Expr, ExprKind, ForKind, MsgPart, Name, Range, Stmt, VectorTail};
use std::collections::HashSet;

impl Simplifier {
    /// Simplifies a statement in the current context.
    pub(crate) fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        stack::guard(|| {
            match s {
                Stmt::LetStmt { name, value, body } => self.let_stmt(name, value, body),
                Stmt::For { name, min, extent, kind, tails, body } => {
                    self.for_loop(name, min, extent, *kind, tails, body)
                }
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    self.if_then_else(condition, then_case, else_case.as_deref())
                }
                Stmt::Assert { condition, message } => {
                    let (c, _) = self.mutate(condition);
                    if c.is_true() {
                        return Stmt::no_op();
                    }
                    let message = message
                        .iter()
                        .map(|m| match m {
                            MsgPart::Value(e) => MsgPart::Value(self.mutate(e).0),
                            t => t.clone(),
                        })
                        .collect();
                    Stmt::Assert { condition: c, message }
                }
                Stmt::ProducerConsumer { name, is_producer, body } => {
                    let b = self.mutate_stmt(body);
                    if b.is_no_op() {
                        return b;
                    }
                    Stmt::ProducerConsumer { name: name.clone(), is_producer: *is_producer, body: Box::new(b) }
                }
                Stmt::Realize { name, types, bounds, fold, body } => {
                    let b = self.mutate_stmt(body);
                    if b.is_no_op() {
                        return b;
                    }
                    let bounds =
                        bounds.iter().map(|r| Range::new(self.mutate(&r.min).0, self.mutate(&r.extent).0)).collect();
                    Stmt::Realize { name: name.clone(), types: types.clone(), bounds, fold: *fold, body: Box::new(b) }
                }
                Stmt::Allocate { name, ty, extents, body } => {
                    let b = self.mutate_stmt(body);
                    if b.is_no_op() {
                        return b;
                    }
                    let extents = extents.iter().map(|e| self.mutate(e).0).collect();
                    Stmt::Allocate { name: name.clone(), ty: *ty, extents, body: Box::new(b) }
                }
                Stmt::Store { buffer, value, index, predicate } => {
                    let p = predicate.as_ref().map(|p| self.mutate(p).0);
                    if p.as_ref().is_some_and(|p| p.is_false()) {
                        return Stmt::no_op();
                    }
                    let predicate = p.filter(|p| !p.is_true());
                    Stmt::Store {
                        buffer: buffer.clone(),
                        value: self.mutate(value).0,
                        index: self.mutate(index).0,
                        predicate,
                    }
                }
                Stmt::Evaluate(e) => {
                    let (v, _) = self.mutate(e);
                    // A constant or a variable has no effect.
                    if v.is_const() || v.as_var().is_some() {
                        return Stmt::no_op();
                    }
                    Stmt::Evaluate(v)
                }
                Stmt::Block(v) => Stmt::block(v.iter().map(|s| self.mutate_stmt(s)).collect()),
                Stmt::Provide { name, values, args } => Stmt::Provide {
                    name: name.clone(),
                    values: values.iter().map(|e| self.mutate(e).0).collect(),
                    args: args.iter().map(|e| self.mutate(e).0).collect(),
                },
                Stmt::Free { .. } | Stmt::TransferWait => s.clone(),
                Stmt::Transfer { .. } => {
                    let t = s.map_children(|c| c.clone(), |e| self.mutate(e).0);
                    // An empty box moves nothing.
                    let Stmt::Transfer { extents, .. } = &t else { unreachable!() };
                    if extents.iter().any(|e| e.as_int().is_some_and(|n| n <= 0)) {
                        return Stmt::no_op();
                    }
                    t
                }
            }
        })
    }

    /// Simplifies a chain of `LetStmt`s (iteratively: lowering makes long ones).
    fn let_stmt(&mut self, name: &Name, value: &Expr, body: &Stmt) -> Stmt {
        let mut frames: Vec<(Name, Expr, bool, Saved)> = Vec::new();
        let (mut name, mut value, mut body) = (name, value, body);
        loop {
            let (v, vi) = self.mutate(value);
            let inline = is_trivial(&v) && !stmt_binds_any(body, &free_vars(&v));
            let binding = if inline {
                Binding::Replace(v.clone(), vi)
            } else {
                // Keep the value's interval when it says more than "the value itself".
                let iv = if v.ty().is_scalar() && v.ty().is_int_or_uint() {
                    let iv = bounds_assuming_no_overflow(&v, &self.scope);
                    let informative = iv.min.as_ref().is_some_and(|e| e.is_const())
                        || iv.max.as_ref().is_some_and(|e| e.is_const())
                        || !iv.is_single_point();
                    informative.then_some(iv)
                } else {
                    None
                };
                let vi = vi.filter(|b| Some(*b) != type_range(v.ty().element()));
                Binding::Bounded(vi, iv)
            };
            let saved = self.enter_binder(name, binding);
            if !inline && self.may_hold_any(&v) {
                self.unchecked_lets.insert(name.clone());
            }
            if !inline && is_small_linear(&v) {
                self.linear_lets.insert(name.clone(), v.clone());
            }
            frames.push((name.clone(), v, !inline, saved));
            match body {
                Stmt::LetStmt { name: n, value: v, body: b } => {
                    (name, value, body) = (n, v, b);
                }
                _ => break,
            }
        }
        let mut b = self.mutate_stmt(body);
        let mut used: Option<HashSet<Name>> = None;
        while let Some((name, v, kept, saved)) = frames.pop() {
            self.restore(saved);
            if !kept {
                continue;
            }
            // The names the body uses, computed once and updated as lets wrap it.
            let u = used.get_or_insert_with(|| stmt_free_vars(&b));
            if !u.contains(&name) {
                continue;
            }
            u.remove(&name);
            u.extend(free_vars(&v));
            b = Stmt::LetStmt { name, value: v, body: Box::new(b) };
        }
        b
    }

    fn for_loop(
        &mut self,
        name: &Name,
        min: &Expr,
        extent: &Expr,
        kind: ForKind,
        tails: &[VectorTail],
        body: &Stmt,
    ) -> Stmt {
        let (mn, mi) = self.mutate(min);
        let (ex, exi) = self.mutate(extent);
        if exi.is_some_and(|i| i.max <= 0) {
            return Stmt::no_op();
        }
        // A loop of one iteration is its body with the variable bound (GPU and
        // distributed loops stay: they carry meaning beyond iteration).
        let plain = matches!(kind, ForKind::Serial | ForKind::Parallel | ForKind::Vectorized | ForKind::Unrolled);
        if ex.is_one() && plain {
            return self.let_stmt(name, &mn, body);
        }
        let (max, _) = self.mutate(&Expr::sub(Expr::add(mn.clone(), ex.clone()), Expr::const_of(ex.ty(), 1)));
        let info = match (mi, exi) {
            (Some(m), Some(e)) if e.min >= 1 => Some(Info::new(m.min, m.max + e.max - 1)),
            _ => None,
        };
        let iv = Interval::new(Some(mn.clone()), Some(max));
        let b = self.with_binder(name, Binding::Bounded(info, Some(iv)), |s| s.mutate_stmt(body));
        if b.is_no_op() {
            return b;
        }
        Stmt::For { name: name.clone(), min: mn, extent: ex, kind, tails: tails.to_vec(), body: Box::new(b) }
    }

    fn if_then_else(&mut self, condition: &Expr, then_case: &Stmt, else_case: Option<&Stmt>) -> Stmt {
        let (c, _) = self.mutate(condition);
        if c.is_true() {
            return self.mutate_stmt(then_case);
        }
        if c.is_false() {
            return else_case.map(|e| self.mutate_stmt(e)).unwrap_or_else(Stmt::no_op);
        }
        let t = self.with_context(|s| s.learn(&c, true), |s| s.mutate_stmt(then_case));
        let e = else_case
            .map(|e| self.with_context(|s| s.learn(&c, false), |s| s.mutate_stmt(e)))
            .filter(|e| !e.is_no_op());
        match (t.is_no_op(), e) {
            (true, None) => Stmt::no_op(),
            (true, Some(e)) => {
                let (nc, _) = self.mutate(&Expr::not(c));
                Stmt::IfThenElse { condition: nc, then_case: Box::new(e), else_case: None }
            }
            (false, e) => Stmt::IfThenElse { condition: c, then_case: Box::new(t), else_case: e.map(Box::new) },
        }
    }

    /// Records that `c` has the value `truth` here, and narrows the intervals of the
    /// variables it compares.
    pub(crate) fn learn(&mut self, c: &Expr, truth: bool) {
        stack::guard(|| {
            if !c.ty().is_scalar() {
                return;
            }
            match c.kind() {
                ExprKind::Binary(BinOp::And, a, b) if truth => {
                    self.learn(a, true);
                    self.learn(b, true);
                }
                ExprKind::Binary(BinOp::Or, a, b) if !truth => {
                    self.learn(a, false);
                    self.learn(b, false);
                }
                ExprKind::Not(a) => self.learn(a, !truth),
                ExprKind::Cmp(op, a, b) if no_overflow(a.ty()) => {
                    let op = if truth { *op } else { negate(*op) };
                    self.narrow(op, a, b);
                    self.narrow(super::cmp::swap(op), b, a);
                    self.learn_linear(op, a, b);
                }
                _ => {}
            }
            self.facts.push((c.clone(), truth));
        })
    }

    /// Narrows the interval of `a` (if a variable) knowing `a op b`.
    fn narrow(&mut self, op: CmpOp, a: &Expr, b: &Expr) {
        let Some(name) = a.as_var() else { return };
        if self.replacements.contains_key(name) {
            return;
        }
        // Bound by constants and free parameters only: `n > x` must not turn the
        // parameter n into an interval over the loop variable x (it would lose the
        // identity that cancels n - n).
        if free_vars(b).iter().any(|v| self.scope.contains_key(v)) {
            return;
        }
        let one = Expr::const_of(b.ty(), 1);
        let (lo, hi) = match op {
            CmpOp::Lt => (None, Some(Expr::sub(b.clone(), one))),
            CmpOp::Le => (None, Some(b.clone())),
            CmpOp::Gt => (Some(Expr::add(b.clone(), one)), None),
            CmpOp::Ge => (Some(b.clone()), None),
            CmpOp::Eq => (Some(b.clone()), Some(b.clone())),
            CmpOp::Ne => return,
        };
        let lo = lo.map(|e| self.mutate(&e).0);
        let hi = hi.map(|e| self.mutate(&e).0);
        let learned = Interval::new(lo, hi);
        let iv = match self.scope.get(name) {
            Some(old) => old.intersect(&learned),
            None => learned,
        };
        // The variable's constant bounds follow the interval.
        if let (Some(lo), Some(hi)) = (iv.min.as_ref().and_then(const_int), iv.max.as_ref().and_then(const_int)) {
            let b = Info::new(lo, hi);
            let b = self.var_info.get(name).map(|o| o.intersect(b)).unwrap_or(b);
            self.var_info.insert(name.clone(), b);
        }
        self.scope.insert(name.clone(), iv);
    }
}

/// True if `e` is a sum of at most three terms (variables, or variables times constants)
/// and a constant: cheap to substitute where differences of lets are compared.
fn is_small_linear(e: &Expr) -> bool {
    let of_vars = |e: &Expr| {
        super::linear::collect(e).is_some_and(|l| {
            l.exact
                && l.terms.iter().filter(|(_, k)| *k != 0).count() <= 3
                && l.terms.iter().all(|(t, _)| t.as_var().is_some())
        })
    };
    // A term may also be a `min` or `max` of two such combinations: the start of a
    // clamped tile, `min(16 * tx + n.min, n.max - 15)`, which every bound of the tile's
    // producers shares.
    let small_term = |t: &Expr| match t.kind() {
        ExprKind::Binary(BinOp::Min | BinOp::Max, a, b) => of_vars(a) && of_vars(b),
        _ => t.as_var().is_some(),
    };
    super::linear::collect(e).is_some_and(|l| {
        l.exact && l.terms.iter().filter(|(_, k)| *k != 0).count() <= 3 && l.terms.iter().all(|(t, _)| small_term(t))
    })
}
