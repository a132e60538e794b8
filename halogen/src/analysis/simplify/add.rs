//! Rules for `a + b`.

use super::linear::{self, norm};
use super::{fold_binary, folds_exactly, is_int, is_neg_zero, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Rewrites `a + b` (operands simplified), or `None` to keep the node.
pub(super) fn rules(s: &mut Simplifier, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(BinOp::Add, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(BinOp::Add, x, y) {
        return Some(r);
    }
    if ty.element().is_float() {
        // x + -0.0 == x for every x, -0.0 included; x + 0.0 is not (-0.0 + 0.0 is +0.0).
        if is_neg_zero(y) {
            return Some(x.clone());
        }
        if is_neg_zero(x) {
            return Some(y.clone());
        }
        return None;
    }
    if !is_int(ty) {
        return None;
    }
    if y.is_zero() {
        return Some(x.clone());
    }
    if x.is_zero() {
        return Some(y.clone());
    }
    // Constants go to the right.
    if x.is_const() && !y.is_const() {
        return Some(Expr::add(y.clone(), x.clone()));
    }
    // x + (-c) is written x - c.
    if let Some(c) = y.as_int() {
        let c = norm(ty, c);
        if c < 0 && norm(ty, c.wrapping_neg()) > 0 {
            return Some(Expr::sub(x.clone(), Expr::const_of(ty, c.wrapping_neg())));
        }
    }
    // Collect terms: (a + c1) + c2, (a - b) + b, x + x, ...
    let sum = Expr::add(x.clone(), y.clone());
    if let Some(lin) = linear::collect(&sum) {
        // Where constants wrapped, the combination is only equal modulo 2^bits: later
        // rules reason about Int(32)/Int(64) values as integers, so keep it as written.
        if lin.is_reduced() && (lin.exact || !no_overflow(ty)) {
            return Some(linear::emit_linear(ty, &lin));
        }
    }
    if no_overflow(ty) {
        // min(p, q) + y -> min(p + y, q + y) when one side cancels to a constant.
        if let Some(r) = distribute_min_max(s, x, y) {
            return Some(r);
        }
        if let Some(r) = distribute_min_max(s, y, x) {
            return Some(r);
        }
    }
    None
}

/// `min(p, q) + y` (or max) as `min(p + y, q + y)` if a term cancels in either sum
/// (`min(x, 5) + 3 -> min(x + 3, 8)`, `min(x, n - 1) - n -> min(x - n, -1)`, and Halide's
/// `x + min(y, z - x) -> min(x + y, z)`: a tile's start clamped to the image's last tile,
/// `m + min(8 * t, (M - m) - 7)`, becomes `min(m + 8 * t, M - 7)`, whose distance to `M`
/// the enclosing guards decide).
fn distribute_min_max(s: &Simplifier, m: &Expr, y: &Expr) -> Option<Expr> {
    if let ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), p, q) = m.kind() {
        if !folds_exactly(BinOp::Add, p, y) || !folds_exactly(BinOp::Add, q, y) {
            return None;
        }
        let (ps, qs) = (Expr::add(p.clone(), y.clone()), Expr::add(q.clone(), y.clone()));
        // Not inside a clamp of a value that may be anything: p + y may wrap where
        // min(p, q) + y does not.
        if (cancels(&ps) || cancels(&qs)) && !s.may_hold_any(m) && !s.may_hold_any(y) {
            return Some(Expr::binary(*op, ps, qs));
        }
    }
    None
}

/// True if a term of `e` cancels: every term (a constant) or at least one (checked on the
/// linear form, without simplifying: trying the full simplifier on both sides of every
/// min would be exponential in their nesting). Distributing over a `min` then leaves one
/// side with fewer terms than it had, so the rewrite never grows a side without shrinking
/// the other.
pub(super) fn cancels(e: &Expr) -> bool {
    linear::collect(e).is_some_and(|l| l.exact && (l.as_const().is_some() || l.terms.iter().any(|(_, c)| *c == 0)))
}
