//! Rules for calls (intrinsics are folded on constants) and loads.

use super::info::{self, type_range, Bnd};
use super::{fold, make_scalar, scalar_of, Simplifier, S};
use crate::ir::{CallKind, Expr, ExprKind, Intrinsic, Name};

/// Simplifies a call's arguments and folds intrinsics of constants.
pub(super) fn visit_call(s: &mut Simplifier, e: &Expr, args: &[Expr]) -> S {
    let ExprKind::Call { name, kind, .. } = e.kind() else { unreachable!("visit_call on a non-call") };
    let mut new_args = Vec::with_capacity(args.len());
    let mut infos: Vec<Bnd> = Vec::with_capacity(args.len());
    for a in args {
        let (x, xi) = s.mutate(a);
        new_args.push(x);
        infos.push(xi);
    }
    let ty = e.ty();
    if let CallKind::Intrinsic(which) = kind {
        let consts: Option<Vec<fold::Scalar>> = new_args.iter().map(scalar_of).collect();
        if let Some(consts) = consts {
            let arg_types: Vec<_> = new_args.iter().map(|a| a.ty().element()).collect();
            if let Some(v) = fold::intrinsic(*which, &arg_types, ty.element(), &consts) {
                let r = make_scalar(ty, v);
                let b = info::of_leaf(&r);
                return (r, b);
            }
        }
        // |x| of an unsigned x is x.
        if *which == Intrinsic::Abs && new_args.len() == 1 && new_args[0].ty() == ty && ty.element().is_uint() {
            let a = new_args.pop().expect("one argument");
            return (a, infos[0]);
        }
    }
    let unchanged = new_args.iter().zip(args).all(|(a, b)| a.same_as(b));
    let node = if unchanged {
        e.clone()
    } else {
        Expr::make(ty, ExprKind::Call { name: name.clone(), args: new_args, kind: kind.clone() })
    };
    let b = match kind {
        CallKind::Intrinsic(which) => info::intrinsic(*which, ty, &infos),
        _ => type_range(ty.element()),
    };
    (node, b)
}

/// Simplifies a load's index and predicate.
pub(super) fn visit_load(s: &mut Simplifier, e: &Expr, buffer: &Name, index: &Expr, predicate: Option<&Expr>) -> S {
    let (i, _) = s.mutate(index);
    let p = predicate.map(|p| s.mutate(p).0);
    let ty = e.ty();
    // Masked-off lanes read nothing and give zero.
    if p.as_ref().is_some_and(|p| p.is_false()) {
        let z = if ty.element().is_float() { make_scalar(ty, fold::Scalar::Float(0.0)) } else { Expr::const_of(ty, 0) };
        let b = info::of_leaf(&z);
        return (z, b);
    }
    let p = p.filter(|p| !p.is_true());
    let unchanged = i.same_as(index)
        && match (predicate, &p) {
            (Some(a), Some(b)) => a.same_as(b),
            (None, None) => true,
            _ => false,
        };
    let node = if unchanged { e.clone() } else { Expr::load(ty.element(), buffer.clone(), i, p) };
    (node, type_range(ty.element()))
}
