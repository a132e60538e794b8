//! Rules for `min(a, b)` and `max(a, b)`.
//!
//! The pinned meanings are `min(a, b) = if b < a { b } else { a }` and
//! `max(a, b) = if a < b { b } else { a }`; for floats these are not commutative when a
//! NaN is involved, so float operands are never reordered.

use super::info::const_int;
use super::linear;
use super::{fold_binary, is_int, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// Rewrites `min(a, b)` / `max(a, b)` (operands simplified), or `None` to keep the node.
pub(super) fn rules(s: &mut Simplifier, op: BinOp, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    let is_min = op == BinOp::Min;
    if let Some(r) = fold_binary(op, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(op, x, y) {
        return Some(r);
    }
    if x == y {
        return Some(x.clone());
    }
    if !is_int(ty) {
        return None;
    }
    if x.is_const() && !y.is_const() {
        return Some(Expr::binary(op, y.clone(), x.clone()));
    }
    // Decided by the operands' bounds.
    if let (Some(ai), Some(bi)) = (a.1, b.1) {
        if ai.max <= bi.min {
            return Some(if is_min { x.clone() } else { y.clone() });
        }
        if bi.max <= ai.min {
            return Some(if is_min { y.clone() } else { x.clone() });
        }
    }
    // Decided by the difference: a constant (min(x, x + 3)), or bounded by the
    // enclosing loops (min(x, n - 1) in a loop over x < n).
    if no_overflow(ty) {
        if let Some(lin) = linear::collect(&Expr::sub(x.clone(), y.clone())).filter(|l| l.exact) {
            if let Some(d) = lin.as_const() {
                return Some(if (d <= 0) == is_min { x.clone() } else { y.clone() });
            }
            // Or by what enclosing ifs and lets say about the difference.
            match s.difference_range(&lin) {
                (_, Some(hi)) if hi <= 0 => return Some(if is_min { x.clone() } else { y.clone() }),
                (Some(lo), _) if lo >= 0 => return Some(if is_min { y.clone() } else { x.clone() }),
                _ => {}
            }
            let diff = s.mutate(&linear::emit_linear(ty, &lin)).0;
            if let Some(b) = s.bounds_in_scope(&diff) {
                if b.max <= 0 {
                    return Some(if is_min { x.clone() } else { y.clone() });
                }
                if b.min >= 0 {
                    return Some(if is_min { y.clone() } else { x.clone() });
                }
            }
        }
    }
    let other = if is_min { BinOp::Max } else { BinOp::Min };
    if let ExprKind::Binary(xop, p, q) = x.kind() {
        if *xop == op {
            // min(min(p, c1), c2) -> min(p, min(c1, c2))
            if q.is_const() && y.is_const() {
                return Some(Expr::binary(op, p.clone(), fold_binary(op, q, y)?));
            }
            // min(min(p, q), p) -> min(p, q)
            if p == y || q == y {
                return Some(x.clone());
            }
        }
        if *xop == other {
            // min(max(p, q), p) -> p
            if p == y || q == y {
                return Some(y.clone());
            }
            // min(max(p, c1), c2) -> c2 when c1 >= c2 (and the max version).
            if let (Some(c1), Some(c2)) = (const_int(q), const_int(y)) {
                if (is_min && c1 >= c2) || (!is_min && c1 <= c2) {
                    return Some(y.clone());
                }
            }
        }
    }
    // A shared operand comes out (ints form a distributive lattice):
    // min(min(a, k), min(c, k)) -> min(min(a, c), k), min(max(a, k), max(c, k)) -> max(min(a, c), k).
    if let (ExprKind::Binary(xop, a, b), ExprKind::Binary(yop, c, d)) = (x.kind(), y.kind()) {
        if xop == yop && matches!(xop, BinOp::Min | BinOp::Max) {
            let shared = if b == d {
                Some((a, c, b))
            } else if a == c {
                Some((b, d, a))
            } else if a == d {
                Some((b, c, a))
            } else if b == c {
                Some((a, d, b))
            } else {
                None
            };
            if let Some((p, q, k)) = shared {
                return Some(Expr::binary(*xop, Expr::binary(op, p.clone(), q.clone()), k.clone()));
            }
        }
    }
    if let ExprKind::Binary(yop, p, q) = y.kind() {
        // min(p, min(p, q)) -> min(p, q); min(p, max(p, q)) -> p
        if (*yop == op || *yop == other) && (p == x || q == x) {
            return Some(if *yop == op { y.clone() } else { x.clone() });
        }
    }
    None
}
