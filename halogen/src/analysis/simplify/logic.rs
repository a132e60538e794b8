//! Rules for `&&`, `||` and `!`.

use super::cmp::{negate, swap};
use super::info::Info;
use super::{fold_binary, vector, Simplifier, S};
use crate::ir::{BinOp, CmpOp, Expr, ExprKind};

/// True if `a` is `!b` or `b` is `!a`, or they are opposite comparisons (`x < y` and
/// `x >= y`, or `y <= x`) of totally ordered values.
fn complementary(a: &Expr, b: &Expr) -> bool {
    if matches!(a.kind(), ExprKind::Not(n) if n == b) || matches!(b.kind(), ExprKind::Not(n) if n == a) {
        return true;
    }
    if let (ExprKind::Cmp(o1, p1, q1), ExprKind::Cmp(o2, p2, q2)) = (a.kind(), b.kind()) {
        let ordered = !p1.ty().element().is_float() || matches!(o1, CmpOp::Eq | CmpOp::Ne);
        return ordered
            && ((negate(*o1) == *o2 && p1 == p2 && q1 == q2) || (swap(negate(*o1)) == *o2 && p1 == q2 && q1 == p2));
    }
    false
}

/// Rewrites `a && b` / `a || b` (operands simplified), or `None` to keep the node.
pub(super) fn rules(_s: &mut Simplifier, op: BinOp, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    if let Some(r) = fold_binary(op, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(op, x, y) {
        return Some(r);
    }
    let ty = x.ty();
    let is_and = op == BinOp::And;
    // The constant that decides the result (false for &&, true for ||).
    let absorbing = |e: &Expr| if is_and { e.is_false() } else { e.is_true() };
    let identity = |e: &Expr| if is_and { e.is_true() } else { e.is_false() };
    if absorbing(x) {
        return Some(x.clone());
    }
    if absorbing(y) {
        return Some(y.clone());
    }
    if identity(x) {
        return Some(y.clone());
    }
    if identity(y) {
        return Some(x.clone());
    }
    if x == y {
        return Some(x.clone());
    }
    if complementary(x, y) {
        return Some(Expr::const_of(ty, !is_and as i64));
    }
    None
}

/// Simplifies `!a`.
pub(super) fn visit_not(s: &mut Simplifier, e: &Expr, a: &Expr) -> S {
    let (x, xi) = s.mutate(a);
    if let Some(v) = x.as_int() {
        let v = (v == 0) as i128;
        return (Expr::const_of(x.ty(), v as i64), Some(Info::point(v)));
    }
    match x.kind() {
        ExprKind::Not(inner) => return s.remutate(inner.clone()),
        // !(a < b) is a >= b only for totally ordered values (not floats: NaN).
        ExprKind::Cmp(op, p, q) if !p.ty().element().is_float() || matches!(op, CmpOp::Eq | CmpOp::Ne) => {
            return s.remutate(Expr::cmp(negate(*op), p.clone(), q.clone()));
        }
        ExprKind::Broadcast { value, lanes } if value.ty().is_scalar() => {
            return s.remutate(Expr::broadcast(Expr::not(value.clone()), *lanes));
        }
        _ => {}
    }
    let node = if x.same_as(a) { e.clone() } else { Expr::not(x) };
    if let Some(v) = s.known(&node) {
        return (Expr::const_of(node.ty(), v as i64), Some(Info::point(v as i128)));
    }
    let b = xi.map(|i| Info::new(1 - i.max, 1 - i.min));
    (node, b)
}
