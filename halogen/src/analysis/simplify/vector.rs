//! Rules for ramps and broadcasts, and for operators on them.

use super::info;
use super::{is_int, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Simplifies `ramp(base, stride, lanes)`.
pub(super) fn visit_ramp(s: &mut Simplifier, e: &Expr, base: &Expr, stride: &Expr, lanes: u16) -> S {
    let (b, bi) = s.mutate(base);
    let (st, si) = s.mutate(stride);
    if st.is_zero() && is_int(st.ty()) {
        return s.remutate(Expr::broadcast(b, lanes));
    }
    let node = if b.same_as(base) && st.same_as(stride) { e.clone() } else { Expr::ramp(b, st, lanes) };
    let bnd = info::ramp(node.ty(), bi, si, lanes);
    (node, bnd)
}

/// Simplifies `broadcast(value, lanes)`.
pub(super) fn visit_broadcast(s: &mut Simplifier, e: &Expr, value: &Expr, lanes: u16) -> S {
    let (v, vi) = s.mutate(value);
    if lanes == 1 {
        return (v, vi);
    }
    let node = if v.same_as(value) { e.clone() } else { Expr::broadcast(v, lanes) };
    (node, vi)
}

/// The broadcast's scalar, if `e` is a broadcast.
pub(super) fn as_broadcast(e: &Expr) -> Option<&Expr> {
    match e.kind() {
        ExprKind::Broadcast { value, .. } => Some(value),
        _ => None,
    }
}

/// `x op y` rewritten lane-wise where one or both are broadcasts or ramps:
/// `broadcast(a) op broadcast(b) -> broadcast(a op b)`, and for integers
/// `ramp(b, s) + broadcast(c) -> ramp(b + c, s)`, `ramp * broadcast`, `ramp + ramp`, ...
/// (exact modulo 2^bits, so for every integer type).
pub(super) fn binary(op: BinOp, x: &Expr, y: &Expr) -> Option<Expr> {
    if !x.ty().is_vector() {
        return None;
    }
    let lanes = x.ty().lanes;
    if let (Some(a), Some(b)) = (as_broadcast(x), as_broadcast(y)) {
        if a.ty().is_scalar() && b.ty().is_scalar() {
            return Some(Expr::broadcast(Expr::binary(op, a.clone(), b.clone()), lanes));
        }
    }
    if !is_int(x.ty()) {
        return None;
    }
    let ramp_parts = |e: &Expr| match e.kind() {
        ExprKind::Ramp { base, stride, .. } => Some((base.clone(), stride.clone())),
        _ => None,
    };
    let zero = |e: &Expr| Expr::const_of(e.ty(), 0);
    match op {
        BinOp::Add | BinOp::Sub => {
            let (xb, xs) = match (ramp_parts(x), as_broadcast(x)) {
                (Some(r), _) => r,
                (None, Some(v)) if v.ty().is_scalar() => (v.clone(), zero(v)),
                _ => return None,
            };
            let (yb, ys) = match (ramp_parts(y), as_broadcast(y)) {
                (Some(r), _) => r,
                (None, Some(v)) if v.ty().is_scalar() => (v.clone(), zero(v)),
                _ => return None,
            };
            // At least one side is a ramp here (two broadcasts were handled above).
            Some(Expr::ramp(Expr::binary(op, xb, yb), Expr::binary(op, xs, ys), lanes))
        }
        BinOp::Mul => {
            if let (Some((b, s)), Some(c)) = (ramp_parts(x), as_broadcast(y)) {
                if c.ty().is_scalar() {
                    return Some(Expr::ramp(Expr::mul(b, c.clone()), Expr::mul(s, c.clone()), lanes));
                }
            }
            if let (Some(c), Some((b, s))) = (as_broadcast(x), ramp_parts(y)) {
                if c.ty().is_scalar() {
                    return Some(Expr::ramp(Expr::mul(c.clone(), b), Expr::mul(c.clone(), s), lanes));
                }
            }
            None
        }
        _ => None,
    }
}
