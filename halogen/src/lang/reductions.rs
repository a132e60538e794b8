//! Inline reductions (Halide's `InlineReductions`): `sum`, `product`, `minimum`,
//! `maximum`, `argmin`, `argmax` over the reduction domain appearing in an expression.
//!
//! Each call makes an anonymous Func over the expression's free pure variables, defined as
//! the reduction's identity and updated once per point of the domain; the result is a call
//! to that Func at those variables. Like any Func with an update, it is computed at root
//! unless scheduled otherwise.
//!
//! ```
//! use halogen::prelude::*;
//! let input = ImageParam::new(Type::f32(), 2, "input");
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let r = RDom::new(&[(Expr::from(-1), Expr::from(3))]);
//! let blur = Func::new("blur");
//! blur.def((x, y), sum(input.at((x + r.x(), y))) / 3.0f32);
//! assert_eq!(blur.output_types(), vec![Type::f32()]);
//! ```

use super::func::Func;
use crate::error::Error;
use crate::ir::stack;
use crate::ir::{BinOp, CmpOp, Expr, ExprKind, Name, ReductionRef, Type, VarBinding};
use std::collections::HashSet;

/// The free pure variables of `e` in order of first appearance (names bound by a `Let`
/// inside `e` are not free).
fn free_vars(e: &Expr) -> Vec<Expr> {
    fn walk(e: &Expr, bound: &mut Vec<Name>, seen: &mut HashSet<Name>, out: &mut Vec<Expr>) {
        stack::guard(|| match e.kind() {
            ExprKind::Var { name, binding: VarBinding::Plain } => {
                if !bound.contains(name) && seen.insert(name.clone()) {
                    out.push(e.clone());
                }
            }
            ExprKind::Let { name, value, body } => {
                walk(value, bound, seen, out);
                bound.push(name.clone());
                walk(body, bound, seen, out);
                bound.pop();
            }
            _ => e.for_each_child(|c| walk(c, bound, seen, out)),
        })
    }
    let mut out = Vec::new();
    walk(e, &mut Vec::new(), &mut HashSet::new(), &mut out);
    out
}

/// The reduction domains used in `e`, in order of first appearance.
fn rdoms_of(e: &Expr) -> Vec<ReductionRef> {
    fn walk(e: &Expr, out: &mut Vec<ReductionRef>) {
        if let ExprKind::Var { binding: VarBinding::Reduction(r), .. } = e.kind() {
            if !out.contains(r) {
                out.push(r.clone());
            }
        }
        e.for_each_child(|c| walk(c, out));
    }
    let mut out = Vec::new();
    walk(e, &mut out);
    out
}

/// The largest value of `t` (`+inf` for floats, `true` for bools).
fn type_max(t: Type) -> Expr {
    let t = t.element();
    if t.is_float() {
        Expr::float_imm(t, f64::INFINITY)
    } else {
        // u64's maximum is all ones, i.e. -1 stored by its bits.
        Expr::int_imm(t, t.max_int().unwrap_or(-1))
    }
}

/// The smallest value of `t` (`-inf` for floats, `false` for bools).
fn type_min(t: Type) -> Expr {
    let t = t.element();
    if t.is_float() {
        Expr::float_imm(t, f64::NEG_INFINITY)
    } else {
        Expr::int_imm(t, t.min_int().unwrap_or(0))
    }
}

/// Checks that `e` uses exactly one RDom; records the problem in `f` otherwise.
fn single_rdom(what: &str, f: &Func, e: &Expr) -> Option<ReductionRef> {
    let rdoms = rdoms_of(e);
    let msg = match rdoms.len() {
        1 => return rdoms.into_iter().next(),
        0 => format!("{what}: the expression has no RDom (in '{e}')"),
        n => format!("{what}: the expression uses {n} RDoms; an inline reduction takes exactly one (in '{e}')"),
    };
    f.func_ref().lock().errors.push(Error::Definition(msg));
    None
}

/// The common shape of `sum`, `product`, `minimum`, `maximum`.
#[track_caller]
fn reduce(what: &str, e: Expr, init: Expr, combine: impl FnOnce(Expr, Expr) -> Expr) -> Expr {
    let f = Func::made_for(what, format!("the {what}(...) at {}", std::panic::Location::caller()));
    let vars = free_vars(&e);
    f.def(vars.clone(), init);
    if single_rdom(what, &f, &e).is_some() {
        let acc = f.at(vars.clone());
        f.update(vars.clone(), combine(acc, e));
    }
    f.at(vars)
}

/// The sum of `e` over its RDom, in `e`'s type (cast first to sum in a wider type).
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let r = RDom::new(&[(Expr::from(0), Expr::from(10))]);
/// let s = sum(x * r.x());
/// assert_eq!(s.ty(), Type::i32());
/// assert!(s.to_string().starts_with("sum$"));
/// ```
#[track_caller]
pub fn sum(e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let zero = Expr::const_of(e.ty(), 0);
    reduce("sum", e, zero, |a, b| Expr::binary(BinOp::Add, a, b))
}

/// The product of `e` over its RDom, in `e`'s type.
///
/// ```
/// use halogen::prelude::*;
/// let r = RDom::new(&[(Expr::from(1), Expr::from(5))]);
/// assert_eq!(product(r.x()).ty(), Type::i32());
/// ```
#[track_caller]
pub fn product(e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let one = Expr::const_of(e.ty(), 1);
    reduce("product", e, one, |a, b| Expr::binary(BinOp::Mul, a, b))
}

/// The smallest value of `e` over its RDom (the type's maximum, or `+inf`, if the domain
/// is empty).
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
/// let lo = minimum(input.at((r.x(), r.y())));
/// assert_eq!(lo.ty(), Type::u8());
/// ```
#[track_caller]
pub fn minimum(e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let init = type_max(e.ty());
    reduce("minimum", e, init, |a, b| Expr::binary(BinOp::Min, a, b))
}

/// The largest value of `e` over its RDom (the type's minimum, or `-inf`, if the domain
/// is empty).
///
/// ```
/// use halogen::prelude::*;
/// let r = RDom::new(&[(Expr::from(0), Expr::from(8))]);
/// assert_eq!(maximum(r.x() * 0.5).ty(), Type::f32());
/// ```
#[track_caller]
pub fn maximum(e: impl Into<Expr>) -> Expr {
    let e = e.into();
    let init = type_min(e.ty());
    reduce("maximum", e, init, |a, b| Expr::binary(BinOp::Max, a, b))
}

/// The common shape of `argmin` and `argmax`: a tuple Func of the RDom's coordinates and
/// the best value so far, replaced only by a strictly better value (the first wins ties).
#[track_caller]
fn arg_reduce(what: &str, e: Expr, init: Expr, better: CmpOp) -> Vec<Expr> {
    let f = Func::made_for(what, format!("the {what}(...) at {}", std::panic::Location::caller()));
    let vars = free_vars(&e);
    let rdom = single_rdom(what, &f, &e);
    let dims: Vec<(Expr, Expr)> = match &rdom {
        Some(r) => {
            r.0.vars
                .iter()
                .map(|rv| {
                    let v = Expr::make(
                        Type::i32(),
                        ExprKind::Var { name: rv.name.clone(), binding: VarBinding::Reduction(r.clone()) },
                    );
                    (v, rv.min.clone())
                })
                .collect()
        }
        // Without a domain there are no coordinates; the Func holds just the value.
        None => Vec::new(),
    };
    let mut init_values: Vec<Expr> = dims.iter().map(|(_, min)| min.clone()).collect();
    init_values.push(init);
    f.def_tuple(vars.clone(), &init_values);
    let n = dims.len();
    if rdom.is_some() {
        let current = f.at_tuple(vars.clone(), n);
        let is_better = Expr::cmp(better, e.clone(), current);
        let mut updates: Vec<Expr> = dims
            .iter()
            .enumerate()
            .map(|(i, (v, _))| Expr::select(is_better.clone(), v.clone(), f.at_tuple(vars.clone(), i)))
            .collect();
        updates.push(Expr::select(is_better, e, f.at_tuple(vars.clone(), n)));
        f.update_tuple(vars.clone(), &updates);
    }
    (0..=n).map(|i| f.at_tuple(vars.clone(), i)).collect()
}

/// Where `e` is smallest over its RDom: the RDom's coordinates (one per dimension), then
/// the value. The first point in iteration order (first dimension innermost) wins ties.
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::f32(), 1, "input");
/// let r = RDom::new(&[(Expr::from(0), input.width())]);
/// let m = argmin(input.at(r.x()));
/// assert_eq!(m.len(), 2);
/// assert_eq!((m[0].ty(), m[1].ty()), (Type::i32(), Type::f32()));
/// ```
#[track_caller]
pub fn argmin(e: impl Into<Expr>) -> Vec<Expr> {
    let e = e.into();
    let init = type_max(e.ty());
    arg_reduce("argmin", e, init, CmpOp::Lt)
}

/// Where `e` is largest over its RDom: the RDom's coordinates (one per dimension), then
/// the value. The first point in iteration order (first dimension innermost) wins ties.
///
/// ```
/// use halogen::prelude::*;
/// let input = ImageParam::new(Type::u8(), 2, "input");
/// let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
/// let m = argmax(input.at((r.x(), r.y())));
/// assert_eq!(m.len(), 3);
/// assert_eq!(m[2].ty(), Type::u8());
/// ```
#[track_caller]
pub fn argmax(e: impl Into<Expr>) -> Vec<Expr> {
    let e = e.into();
    let init = type_min(e.ty());
    arg_reduce("argmax", e, init, CmpOp::Gt)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::CallKind;
    use crate::lang::expr_ops::ExprMethods;
    use crate::lang::func::FuncRef;
    use crate::lang::param::ImageParam;
    use crate::lang::var::{RDom, Var};

    fn called_func(e: &Expr) -> FuncRef {
        match e.kind() {
            ExprKind::Call { kind: CallKind::Func { func, .. }, .. } => FuncRef::from_id(*func),
            _ => panic!("not a Func call: {e}"),
        }
    }

    #[test]
    fn sum_makes_a_func_over_free_vars() {
        let img = ImageParam::new(Type::u16(), 2, "red_sum_img");
        let (x, y) = (Var::new("x"), Var::new("y"));
        let r = RDom::new(&[(Expr::from(-1), Expr::from(3))]);
        let s = sum(img.at((x + r.x(), y)).cast::<u32>());
        assert_eq!(s.ty(), Type::u32());
        let f = called_func(&s);
        // Copy out before printing: printing a call locks the Func.
        let (name, args, pure, updates, errors) = {
            let d = f.lock();
            (d.name.clone(), d.args.clone(), d.pure.clone().unwrap(), d.updates.clone(), d.errors.clone())
        };
        assert!(name.starts_with("sum$"));
        assert_eq!(args.iter().map(|n| n.to_string()).collect::<Vec<_>>(), vec!["x", "y"]);
        assert_eq!(pure.values[0].to_string(), "(uint32)0");
        assert_eq!(updates.len(), 1);
        assert!(errors.is_empty(), "{errors:?}");
        let u = &updates[0];
        assert!(u.rdom.is_some());
        assert!(
            u.values[0].to_string().starts_with(&format!("({name}(x, y) + uint32(red_sum_img(")),
            "{}",
            u.values[0]
        );
        // The call is at the free variables, in order of first appearance.
        match s.kind() {
            ExprKind::Call { args, .. } => {
                assert_eq!(args.iter().map(|a| a.to_string()).collect::<Vec<_>>(), vec!["x", "y"])
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn free_vars_in_order_of_appearance() {
        let (x, y, z) = (Var::new("x"), Var::new("y"), Var::new("z"));
        let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
        let p = product(y * r.x() + z * x + y);
        let f = called_func(&p);
        assert_eq!(f.lock().args.iter().map(|n| n.to_string()).collect::<Vec<_>>(), vec!["y", "z", "x"]);
        assert_eq!(f.lock().pure.as_ref().unwrap().values[0].to_string(), "1");
    }

    #[test]
    fn identities_of_min_and_max() {
        let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
        let lo = minimum(r.x().cast::<u8>());
        let hi = maximum(r.x() * 0.5);
        let init = |e: &Expr| called_func(e).lock().pure.as_ref().unwrap().values[0].clone();
        assert_eq!(init(&lo).as_int(), Some(255));
        assert_eq!(init(&hi).as_float(), Some(f64::NEG_INFINITY));
        assert_eq!(type_max(Type::u64()).to_string(), "(uint64)18446744073709551615");
        assert_eq!(type_min(Type::i16()).as_int(), Some(-32768));
        assert_eq!(type_max(Type::f32()).as_float(), Some(f64::INFINITY));
        // A scalar result: no free variables, a zero-dimensional Func.
        assert_eq!(called_func(&lo).dimensions(), 0);
    }

    #[test]
    fn argmax_is_a_tuple_of_coordinates_and_value() {
        let img = ImageParam::new(Type::f32(), 2, "red_argmax_img");
        let r = RDom::new(&[(Expr::from(2), Expr::from(5)), (Expr::from(1), Expr::from(4))]);
        let m = argmax(img.at((r.x(), r.y())));
        assert_eq!(m.len(), 3);
        let f = called_func(&m[0]);
        assert!(m.iter().all(|e| called_func(e) == f));
        let (pure, updates, errors) = {
            let d = f.lock();
            (d.pure.clone().unwrap(), d.updates.clone(), d.errors.clone())
        };
        assert!(errors.is_empty(), "{errors:?}");
        let init: Vec<String> = pure.values.iter().map(|v| v.to_string()).collect();
        assert_eq!(init, vec!["2", "1", "-inff"]);
        let upd = &updates[0].values;
        assert_eq!(upd.len(), 3);
        // Strict comparison: ties keep the first point.
        assert!(upd[2].to_string().starts_with("select((red_argmax_img("), "{}", upd[2]);
        assert!(upd[2].to_string().contains(" > "), "{}", upd[2]);
        let m = argmin(img.at((r.x(), r.y())));
        let upd0 = called_func(&m[0]).lock().updates[0].values[0].clone();
        let upd0 = upd0.to_string();
        assert!(upd0.contains(" < "), "{upd0}");
    }

    #[test]
    fn no_rdom_is_recorded() {
        let x = Var::new("x");
        let s = sum(x * 2);
        let f = called_func(&s);
        let errs = f.lock().errors.clone();
        assert_eq!(errs.len(), 1);
        assert!(errs[0].to_string().contains("sum: the expression has no RDom"), "{errs:?}");
        assert!(f.lock().updates.is_empty());
        let m = argmin(x + 1);
        assert_eq!(m.len(), 1);
        assert!(called_func(&m[0]).lock().errors[0].to_string().contains("argmin: the expression has no RDom"));
    }

    #[test]
    fn two_rdoms_are_recorded() {
        let r1 = RDom::new(&[(Expr::from(0), Expr::from(3))]);
        let r2 = RDom::new(&[(Expr::from(0), Expr::from(3))]);
        let s = maximum(r1.x() + r2.x());
        let errs = called_func(&s).lock().errors.clone();
        assert!(errs[0].to_string().contains("uses 2 RDoms"), "{errs:?}");
    }
}
