//! Rules for `let name = value in body`: inlining of trivial values, removal of unused
//! names.
//!
//! A chain of nested lets (what CSE and lowering produce, hundreds deep) is walked with a
//! loop rather than by recursion, and the names each rebuilt body uses are tracked as a
//! set, so long chains cost neither stack nor quadratic time.

use super::info::type_range;
use super::{Binding, Simplifier, S};
use crate::analysis::interval::bounds_assuming_no_overflow;
use crate::analysis::substitute::{expr_binds_any, free_vars};
use crate::ir::{Expr, ExprKind, Name};
use std::collections::HashSet;

/// True for values that are cheaper to repeat than to name: constants, variables, and
/// broadcasts and ramps of those.
pub(crate) fn is_trivial(e: &Expr) -> bool {
    match e.kind() {
        ExprKind::IntImm(_) | ExprKind::FloatImm(_) | ExprKind::Var { .. } => true,
        ExprKind::Broadcast { value, .. } => is_trivial(value),
        ExprKind::Ramp { base, stride, .. } => is_trivial(base) && stride.is_const(),
        _ => false,
    }
}

/// One let of a chain, entered.
struct Frame {
    orig: Expr,
    name: Name,
    value: Expr,
    /// False if the value was inlined (no let remains).
    kept: bool,
}

/// Simplifies a let expression (and the lets directly in its body).
pub(super) fn visit(s: &mut Simplifier, e: &Expr) -> S {
    let mut frames: Vec<Frame> = Vec::new();
    let mut saved = Vec::new();
    let mut cur = e.clone();
    while let ExprKind::Let { name, value, body } = cur.kind() {
        let (v, vi) = s.mutate(value);
        // Inlining is only safe if no binder in the body captures a variable of the value.
        let inline = is_trivial(&v) && !expr_binds_any(body, &free_vars(&v));
        let binding = if inline {
            Binding::Replace(v.clone(), vi)
        } else {
            let iv = if !s.scope.is_empty() && v.ty().is_scalar() {
                Some(bounds_assuming_no_overflow(&v, &s.scope))
            } else {
                None
            };
            // Bounds that say no more than the type are not worth carrying.
            let vi = vi.filter(|b| Some(*b) != type_range(v.ty().element()));
            Binding::Bounded(vi, iv)
        };
        saved.push(s.enter_binder(name, binding));
        if !inline && s.may_hold_any(&v) {
            s.unchecked_lets.insert(name.clone());
        }
        frames.push(Frame { orig: cur.clone(), name: name.clone(), value: v, kept: !inline });
        let next = body.clone();
        cur = next;
    }
    let (mut b, bi) = s.mutate(&cur);
    let mut used: HashSet<Name> = free_vars(&b).into_iter().collect();
    let mut unchanged = b.same_as(&cur);
    while let (Some(f), Some(sv)) = (frames.pop(), saved.pop()) {
        s.restore(sv);
        if !f.kept || !used.contains(&f.name) {
            unchanged = false;
            continue;
        }
        used.remove(&f.name);
        used.extend(free_vars(&f.value));
        let ExprKind::Let { value, .. } = f.orig.kind() else { unreachable!("frames hold lets") };
        b = if unchanged && f.value.same_as(value) {
            f.orig.clone()
        } else {
            unchanged = false;
            Expr::let_in(f.name, f.value, b)
        };
    }
    (b, bi)
}
