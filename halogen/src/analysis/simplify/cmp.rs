//! Rules for comparisons.

use super::info::Info;
use super::linear::{self, norm, Linear};
use super::{fold, is_int, no_overflow, scalar_of, Simplifier, S};
use crate::ir::{CmpOp, Expr, ExprKind, Type};

/// The comparison with its operands swapped: `a op b == b (swap op) a`.
pub(crate) fn swap(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Gt,
        CmpOp::Le => CmpOp::Ge,
        CmpOp::Gt => CmpOp::Lt,
        CmpOp::Ge => CmpOp::Le,
        o => o,
    }
}

/// The comparison that is true exactly when `op` is false (for totally ordered types).
pub(crate) fn negate(op: CmpOp) -> CmpOp {
    match op {
        CmpOp::Lt => CmpOp::Ge,
        CmpOp::Le => CmpOp::Gt,
        CmpOp::Gt => CmpOp::Le,
        CmpOp::Ge => CmpOp::Lt,
        CmpOp::Eq => CmpOp::Ne,
        CmpOp::Ne => CmpOp::Eq,
    }
}

/// Decides `a op b` for every a and b in the given bounds, if the bounds allow.
pub(crate) fn decide(op: CmpOp, a: Info, b: Info) -> Option<bool> {
    match op {
        CmpOp::Lt if a.max < b.min => Some(true),
        CmpOp::Lt if a.min >= b.max => Some(false),
        CmpOp::Le if a.max <= b.min => Some(true),
        CmpOp::Le if a.min > b.max => Some(false),
        CmpOp::Gt if a.min > b.max => Some(true),
        CmpOp::Gt if a.max <= b.min => Some(false),
        CmpOp::Ge if a.min >= b.max => Some(true),
        CmpOp::Ge if a.max < b.min => Some(false),
        CmpOp::Eq | CmpOp::Ne => {
            let disjoint = a.max < b.min || b.max < a.min;
            let same_point = a.min == a.max && b.min == b.max && a.min == b.min;
            let eq = if disjoint {
                Some(false)
            } else if same_point {
                Some(true)
            } else {
                None
            };
            eq.map(|v| v == (op == CmpOp::Eq))
        }
        _ => None,
    }
}

fn bool_const(ty: Type, v: bool) -> Expr {
    Expr::const_of(Type::bool().with_lanes(ty.lanes), v as i64)
}

/// Simplifies `a op b` (operands simplified).
pub(super) fn visit(s: &mut Simplifier, e: &Expr, op: CmpOp, a: S, b: S) -> S {
    if let Some(r) = rules(s, op, &a, &b) {
        return s.remutate(r);
    }
    let node = match e.kind() {
        ExprKind::Cmp(_, ea, eb) if ea.same_as(&a.0) && eb.same_as(&b.0) => e.clone(),
        _ => Expr::cmp(op, a.0, b.0),
    };
    if let Some(v) = s.known(&node) {
        return (bool_const(node.ty(), v), Some(Info::point(v as i128)));
    }
    (node, Some(Info::new(0, 1)))
}

fn rules(s: &mut Simplifier, op: CmpOp, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    let el = ty.element();
    if let (Some(p), Some(q)) = (scalar_of(x), scalar_of(y)) {
        return Some(bool_const(ty, fold::compare(op, el, p, q)));
    }
    if let (ExprKind::Broadcast { value: p, lanes }, ExprKind::Broadcast { value: q, .. }) = (x.kind(), y.kind()) {
        if p.ty().is_scalar() {
            return Some(Expr::broadcast(Expr::cmp(op, p.clone(), q.clone()), *lanes));
        }
    }
    // Constants go to the right.
    if x.is_const() && !y.is_const() {
        return Some(Expr::cmp(swap(op), y.clone(), x.clone()));
    }
    if el.is_bool() {
        // b == true -> b, b == false -> !b, and the != forms.
        if let Some(c) = y.as_int() {
            let keep = (c != 0) == (op == CmpOp::Eq);
            if matches!(op, CmpOp::Eq | CmpOp::Ne) {
                return Some(if keep { x.clone() } else { Expr::not(x.clone()) });
            }
        }
    }
    if !(is_int(ty) || el.is_bool()) {
        return None;
    }
    if x == y {
        return Some(bool_const(ty, matches!(op, CmpOp::Eq | CmpOp::Le | CmpOp::Ge)));
    }
    if let (Some(ai), Some(bi)) = (a.1, b.1) {
        if let Some(v) = decide(op, ai, bi) {
            return Some(bool_const(ty, v));
        }
    }
    if !is_int(ty) {
        return None;
    }
    // a op b through the difference a - b. For == and != this is exact in the ring of
    // every integer type; the orderings need the no-overflow assumption.
    let ordering = !matches!(op, CmpOp::Eq | CmpOp::Ne);
    if ordering && !no_overflow(ty) {
        return None;
    }
    let lin = linear::collect(&Expr::sub(x.clone(), y.clone()))?;
    // Orderings through a difference whose constants wrapped would be wrong; so would the
    // bounds of such a difference in a no-overflow type (x - MIN written as x + MIN has
    // bounds that exclude 0), even for == and !=.
    if !lin.exact && (ordering || no_overflow(ty)) {
        return None;
    }
    let zero = Info::point(0);
    if let Some(d) = lin.as_const() {
        return Some(bool_const(ty, decide(op, Info::point(d as i128), zero)?));
    }
    let (lo, hi) = s.difference_range(&lin);
    if lo.is_some() || hi.is_some() {
        let known = Info::new(lo.unwrap_or(i128::MIN), hi.unwrap_or(i128::MAX));
        if let Some(v) = decide(op, known, zero) {
            return Some(bool_const(ty, v));
        }
    }
    let (diff, di) = s.mutate(&linear::emit_linear(ty, &lin));
    if let Some(v) = di.and_then(|di| decide(op, di, zero)) {
        return Some(bool_const(ty, v));
    }
    if let Some(v) = s.bounds_in_scope(&diff).and_then(|b| decide(op, b, zero)) {
        return Some(bool_const(ty, v));
    }
    if lin.occurrences > rebalanced_size(&lin) && (!no_overflow(ty) || !rebalance_wraps(ty, &lin)) {
        return Some(rebalance(ty, op, &lin));
    }
    None
}

/// Terms and constants [`rebalance`] writes.
fn rebalanced_size(lin: &Linear) -> usize {
    let pos = lin.terms.iter().filter(|(_, k)| *k > 0).count();
    let neg = lin.terms.iter().filter(|(_, k)| *k < 0).count();
    if pos == 0 {
        neg + 1
    } else {
        pos + neg + (lin.constant != 0 || neg == 0) as usize
    }
}

/// True if [`rebalance`] would negate the type's smallest value (-MIN wraps to MIN): fine
/// modulo 2^bits, but later rules take `Int(32)`/`Int(64)` constants at their value.
fn rebalance_wraps(ty: Type, lin: &Linear) -> bool {
    let wraps = |v: i64| v != 0 && norm(ty, v.wrapping_neg()) == v;
    let has_pos = lin.terms.iter().any(|(_, k)| *k > 0);
    lin.terms.iter().any(|(_, k)| *k < 0 && wraps(*k)) || (has_pos && wraps(lin.constant))
}

/// `P - N + c op 0` written as `P op N - c` (or `N swap(op) c` when P is empty).
fn rebalance(ty: Type, op: CmpOp, lin: &Linear) -> Expr {
    let pos: Vec<(Expr, i64)> = lin.terms.iter().filter(|(_, k)| *k > 0).cloned().collect();
    let neg: Vec<(Expr, i64)> =
        lin.terms.iter().filter(|(_, k)| *k < 0).map(|(t, k)| (t.clone(), k.wrapping_neg())).collect();
    let c = lin.constant;
    if pos.is_empty() {
        // c - N op 0  <=>  N swap(op) c
        return Expr::cmp(swap(op), linear::emit(ty, &neg, 0), Expr::const_of(ty, c));
    }
    Expr::cmp(op, linear::emit(ty, &pos, 0), linear::emit(ty, &neg, c.wrapping_neg()))
}
