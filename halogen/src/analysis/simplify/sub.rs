//! Rules for `a - b`.

use super::add::cancels;
use super::linear::{self, norm};
use super::{fold_binary, folds_exactly, is_int, is_pos_zero, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Rewrites `a - b` (operands simplified), or `None` to keep the node.
pub(super) fn rules(s: &mut Simplifier, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(BinOp::Sub, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(BinOp::Sub, x, y) {
        return Some(r);
    }
    if ty.element().is_float() {
        // x - +0.0 == x for every x; nothing else is exact.
        if is_pos_zero(y) {
            return Some(x.clone());
        }
        return None;
    }
    if !is_int(ty) {
        return None;
    }
    if y.is_zero() {
        return Some(x.clone());
    }
    if x == y {
        return Some(Expr::const_of(ty, 0));
    }
    // x - (-c) is written x + c.
    if let Some(c) = y.as_int() {
        let c = norm(ty, c);
        if c < 0 && norm(ty, c.wrapping_neg()) > 0 {
            return Some(Expr::add(x.clone(), Expr::const_of(ty, c.wrapping_neg())));
        }
    }
    // Cancel terms: (a + b) - a, (a + c) - (b + c), ...
    let diff = Expr::sub(x.clone(), y.clone());
    if let Some(lin) = linear::collect(&diff) {
        // Not where constants wrapped in a no-overflow type (see `add.rs`).
        if lin.is_reduced() && (lin.exact || !no_overflow(ty)) {
            return Some(linear::emit_linear(ty, &lin));
        }
        // Lets of one base: `w.max - w.min` with `w.max = base + 7`, `w.min = base` is 7.
        if lin.exact && no_overflow(ty) {
            if let Some(c) = s.expand_lets(&lin).and_then(|l| l.as_const()) {
                return Some(Expr::const_of(ty, c));
            }
        }
    }
    // Not where a side may hold any value (see `unchecked.rs`): p - y may wrap where
    // min(p, q) - y does not, and carry a clamped index out of its buffer.
    let checked = |s: &Simplifier| !s.may_hold_any(x) && !s.may_hold_any(y);
    if no_overflow(ty) {
        // min(p, q) - y -> min(p - y, q - y) when a term cancels in either side.
        if let ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), p, q) = x.kind() {
            if folds_exactly(BinOp::Sub, p, y) && folds_exactly(BinOp::Sub, q, y) {
                let (ps, qs) = (Expr::sub(p.clone(), y.clone()), Expr::sub(q.clone(), y.clone()));
                if (cancels(&ps) || cancels(&qs)) && checked(s) {
                    return Some(Expr::binary(*op, ps, qs));
                }
            }
        }
        // x - min(p, q) -> max(x - p, x - q), likewise.
        if let ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), p, q) = y.kind() {
            if !x.is_const() && folds_exactly(BinOp::Sub, x, p) && folds_exactly(BinOp::Sub, x, q) {
                let (ps, qs) = (Expr::sub(x.clone(), p.clone()), Expr::sub(x.clone(), q.clone()));
                if (cancels(&ps) || cancels(&qs)) && checked(s) {
                    let flipped = if *op == BinOp::Min { BinOp::Max } else { BinOp::Min };
                    return Some(Expr::binary(flipped, ps, qs));
                }
            }
        }
    }
    None
}
