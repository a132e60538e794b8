//! Rules for `let name = value in body`: inlining of trivial values, removal of unused
//! names.

use super::{Binding, Simplifier, S};
use crate::analysis::interval::bounds_of_expr_in_scope;
use crate::analysis::substitute::{expr_binds_any, expr_uses_var, free_vars};
use crate::ir::{Expr, ExprKind, Name};

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

/// Simplifies a let expression.
pub(super) fn visit(s: &mut Simplifier, e: &Expr, name: &Name, value: &Expr, body: &Expr) -> S {
    let (v, vi) = s.mutate(value);
    // Inlining is only safe if no binder in the body captures a variable of the value.
    if is_trivial(&v) && !expr_binds_any(body, &free_vars(&v)) {
        return s.with_binder(name, Binding::Replace(v, vi), |s| s.mutate(body));
    }
    let iv = if !s.scope.is_empty() && v.ty().is_scalar() { Some(bounds_of_expr_in_scope(&v, &s.scope)) } else { None };
    let (b, bi) = s.with_binder(name, Binding::Bounded(vi, iv), |s| s.mutate(body));
    if !expr_uses_var(&b, name) {
        return (b, bi);
    }
    let node = if v.same_as(value) && b.same_as(body) { e.clone() } else { Expr::let_in(name.clone(), v, b) };
    (node, bi)
}
