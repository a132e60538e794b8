//! Rules for conversions.

use super::info::{self, type_range};
use super::{fold, make_scalar, scalar_of, Simplifier, S};
use crate::ir::{Expr, ExprKind, Type};

/// True if every value of integer type `from` is a value of integer type `to`.
fn lossless(from: Type, to: Type) -> bool {
    match (type_range(from), type_range(to)) {
        (Some(f), Some(t)) => f.min >= t.min && f.max <= t.max,
        _ => false,
    }
}

/// Simplifies a conversion of `a` to `e`'s type.
pub(super) fn visit(s: &mut Simplifier, e: &Expr, a: &Expr) -> S {
    let (x, xi) = s.mutate(a);
    let to = e.ty();
    let from = x.ty();
    if to == from {
        return (x, xi);
    }
    if let Some(v) = scalar_of(&x) {
        let r = make_scalar(to, fold::cast(from.element(), to.element(), v));
        let b = info::of_leaf(&r);
        return (r, b);
    }
    if let ExprKind::Broadcast { value, lanes } = x.kind() {
        if value.ty().is_scalar() {
            return s.remutate(Expr::broadcast(Expr::cast(to.element(), value.clone()), *lanes));
        }
    }
    let (f, t) = (from.element(), to.element());
    if let ExprKind::Cast(inner) = x.kind() {
        let t0 = inner.ty().element();
        let ints = |ty: Type| ty.is_int_or_uint();
        // An integer conversion keeps the value modulo 2^bits of its target, so a chain of
        // them is one conversion when the middle step is lossless or at least as wide as
        // the last.
        if ints(t0) && ints(f) && ints(t) && (lossless(t0, f) || t.bits <= f.bits) {
            return s.remutate(Expr::cast(to, inner.clone()));
        }
    }
    let node = if x.same_as(a) { e.clone() } else { Expr::cast(to, x) };
    let b = info::cast(from, to, xi);
    (node, b)
}
