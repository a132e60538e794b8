//! Rules for `a * b`.

use super::{fold_binary, folds_exactly, is_int, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Rewrites `a * b` (operands simplified), or `None` to keep the node.
pub(super) fn rules(_s: &mut Simplifier, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(BinOp::Mul, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(BinOp::Mul, x, y) {
        return Some(r);
    }
    if ty.element().is_float() {
        // x * 1.0 == x exactly; x * 0.0 is not 0 (NaN, infinities, -0.0).
        if y.as_float() == Some(1.0) {
            return Some(x.clone());
        }
        if x.as_float() == Some(1.0) {
            return Some(y.clone());
        }
        return None;
    }
    if !is_int(ty) {
        return None;
    }
    if y.is_zero() {
        return Some(y.clone());
    }
    if x.is_zero() {
        return Some(x.clone());
    }
    if y.is_one() {
        return Some(x.clone());
    }
    if x.is_one() {
        return Some(y.clone());
    }
    if x.is_const() && !y.is_const() {
        return Some(Expr::mul(y.clone(), x.clone()));
    }
    // Integer +, - and * are a ring modulo 2^bits: these hold under wrap-around. For
    // Int(32)/Int(64) only where the folded constant does not wrap: later rules reason
    // about those values as integers, and a wrapped constant would mislead them.
    if y.is_const() {
        if let ExprKind::Binary(op, p, q) = x.kind() {
            let exact = |c: &Expr| !no_overflow(ty) || folds_exactly(BinOp::Mul, c, y);
            match op {
                // (p * c1) * c2 -> p * (c1 * c2)
                BinOp::Mul if q.is_const() && exact(q) => {
                    return Some(Expr::mul(p.clone(), fold_binary(BinOp::Mul, q, y)?));
                }
                // (p + c1) * c2 -> p * c2 + c1 * c2 (and -)
                BinOp::Add | BinOp::Sub if q.is_const() && exact(q) => {
                    return Some(Expr::binary(*op, Expr::mul(p.clone(), y.clone()), fold_binary(BinOp::Mul, q, y)?));
                }
                // (c1 - q) * c2 -> c1 * c2 - q * c2
                BinOp::Sub if p.is_const() && exact(p) => {
                    return Some(Expr::sub(fold_binary(BinOp::Mul, p, y)?, Expr::mul(q.clone(), y.clone())));
                }
                _ => {}
            }
        }
    }
    None
}
