//! Rules for `select(c, t, f)`.

use super::{Simplifier, S};
use crate::ir::{Expr, ExprKind};

/// Simplifies `select(c, t, f)`.
pub(super) fn visit(s: &mut Simplifier, e: &Expr, c: &Expr, t: &Expr, f: &Expr) -> S {
    let (cond, _) = s.mutate(c);
    // A constant condition picks a branch (the other is never simplified).
    if cond.is_true() {
        return s.mutate(t);
    }
    if cond.is_false() {
        return s.mutate(f);
    }
    let (tv, ti) = s.mutate(t);
    let (fv, fi) = s.mutate(f);
    if tv == fv {
        return (tv, ti);
    }
    if let Some(r) = rules(&cond, &tv, &fv) {
        return s.remutate(r);
    }
    let node = if cond.same_as(c) && tv.same_as(t) && fv.same_as(f) { e.clone() } else { Expr::select(cond, tv, fv) };
    let b = match (ti, fi) {
        (Some(a), Some(b)) => Some(a.union(b)),
        _ => None,
    };
    (node, b)
}

fn rules(c: &Expr, t: &Expr, f: &Expr) -> Option<Expr> {
    // select(!c, t, f) -> select(c, f, t)
    if let ExprKind::Not(inner) = c.kind() {
        return Some(Expr::select(inner.clone(), f.clone(), t.clone()));
    }
    // Boolean selects are the condition itself (lanes must match).
    if t.ty().element().is_bool() && c.ty() == t.ty() {
        if t.is_true() && f.is_false() {
            return Some(c.clone());
        }
        if t.is_false() && f.is_true() {
            return Some(Expr::not(c.clone()));
        }
    }
    // select(c, select(c, a, b), d) -> select(c, a, d); likewise in the false branch.
    if let ExprKind::Select(c2, a, _) = t.kind() {
        if c2 == c {
            return Some(Expr::select(c.clone(), a.clone(), f.clone()));
        }
    }
    if let ExprKind::Select(c2, _, b) = f.kind() {
        if c2 == c {
            return Some(Expr::select(c.clone(), t.clone(), b.clone()));
        }
    }
    None
}
