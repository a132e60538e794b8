//! Tests of `bounds_of_expr_in_scope`.

use super::*;
use crate::analysis::test_eval::{has_near_limit_const, random_env, Eval, Gen, Rng};
use crate::ir::semantics::{self, Scalar};
use proptest::prelude::*;

fn x() -> Expr {
    Expr::var(Type::i32(), "x")
}
fn y() -> Expr {
    Expr::var(Type::i32(), "y")
}
fn i(v: i64) -> Expr {
    Expr::i32(v)
}

fn scope_x(lo: i64, hi: i64) -> Scope {
    let mut s = Scope::new();
    s.insert("x".into(), Interval::bounded(i(lo), i(hi)));
    s
}

fn show(e: &Expr, scope: &Scope) -> String {
    bounds_of_expr_in_scope(e, scope).to_string()
}

#[test]
fn arithmetic() {
    let s = scope_x(0, 9);
    assert_eq!(show(&Expr::add(Expr::mul(x(), i(2)), i(1)), &s), "[1, 19]");
    assert_eq!(show(&Expr::mul(x(), i(-2)), &s), "[-18, 0]");
    assert_eq!(show(&Expr::div(x(), i(2)), &s), "[0, 4]");
    assert_eq!(show(&Expr::div(x(), i(-2)), &s), "[-4, 0]");
    assert_eq!(show(&Expr::div(Expr::sub(x(), i(5)), i(2)), &s), "[-3, 2]");
    assert_eq!(show(&Expr::rem(x(), i(4)), &s), "[0, 3]");
    assert_eq!(show(&Expr::rem(x(), i(16)), &s), "[0, 9]");
    assert_eq!(show(&Expr::rem(x(), i(-4)), &s), "[0, 3]");
    assert_eq!(show(&Expr::min(x(), i(5)), &s), "[0, 5]");
    assert_eq!(show(&Expr::max(x(), i(5)), &s), "[5, 9]");
    let c = Expr::lt(y(), i(3));
    assert_eq!(show(&Expr::select(c, x(), Expr::add(x(), i(20))), &s), "[0, 29]");
    let mut s2 = s.clone();
    s2.insert("y".into(), Interval::bounded(i(-3), i(2)));
    assert_eq!(show(&Expr::sub(x(), y()), &s2), "[-2, 12]");
    assert_eq!(show(&Expr::mul(x(), y()), &s2), "[-27, 18]");
    assert_eq!(show(&Expr::div(i(100), y()), &s2), "[-100, 100]");
    assert_eq!(show(&Expr::rem(i(100), y()), &s2), "[0, 2]");
}

#[test]
fn symbolic() {
    let n = Expr::var(Type::i32(), "n");
    // A variable not in scope stands for itself.
    assert_eq!(show(&Expr::add(x(), n.clone()), &scope_x(0, 9)), "[n, (n + 9)]");
    // x in [0, n - 1]: x - n in [-n, -1].
    let mut s = Scope::new();
    s.insert("x".into(), Interval::bounded(i(0), Expr::sub(n.clone(), i(1))));
    assert_eq!(show(&Expr::sub(x(), n.clone()), &s), "[(0 - n), -1]");
    // Corners of a product with an unknown sign.
    assert_eq!(show(&Expr::mul(x(), y()), &scope_x(0, 9)), "[min((y * 9), 0), max((y * 9), 0)]");
    // Unbounded on one side.
    let mut s = Scope::new();
    s.insert("x".into(), Interval::new(Some(i(0)), None));
    assert_eq!(show(&Expr::sub(x(), i(1)), &s), "[-1, +inf]");
    // An unbounded side of an int32 reaches 2147483647, where x + 1 wraps around.
    assert_eq!(show(&Expr::add(x(), i(1)), &s), "[-inf, +inf]");
    assert_eq!(show(&Expr::min(x(), i(7)), &s), "[0, 7]");
    assert_eq!(show(&Expr::rem(x(), i(7)), &s), "[0, 6]");
}

#[test]
fn narrow_types_and_data() {
    // A u8 load used as an index (a histogram): [0, 255].
    let ld = Expr::load(Type::u8(), "in", x(), None);
    let idx = Expr::add(Expr::cast(Type::i32(), ld.clone()), i(1));
    assert_eq!(show(&idx, &scope_x(0, 9)), "[1, 256]");
    // An i32 load is unbounded.
    assert_eq!(show(&Expr::load(Type::i32(), "in", x(), None), &Scope::new()), "[-inf, +inf]");
    // Wrap-around in u8.
    let u = Expr::var(Type::u8(), "u");
    let c = |v| Expr::int_imm(Type::u8(), v);
    let mut s = Scope::new();
    s.insert("u".into(), Interval::bounded(c(0), c(10)));
    assert_eq!(show(&Expr::add(u.clone(), c(5)), &s), "[(uint8)5, (uint8)15]");
    assert_eq!(show(&Expr::add(u.clone(), c(250)), &s), "[(uint8)0, (uint8)255]");
    assert_eq!(show(&Expr::sub(u.clone(), c(1)), &s), "[(uint8)0, (uint8)255]");
    // Casts: narrowing keeps constant bounds that fit.
    assert_eq!(show(&Expr::cast(Type::u8(), x()), &scope_x(0, 100)), "[(uint8)0, (uint8)100]");
    assert_eq!(show(&Expr::cast(Type::u8(), x()), &scope_x(0, 300)), "[(uint8)0, (uint8)255]");
    assert_eq!(show(&Expr::cast(Type::u8(), x()), &Scope::new()), "[uint8(x), uint8(x)]");
    // A Func call of a narrow type.
    let f = Expr::make(
        Type::u16(),
        crate::ir::ExprKind::Call { name: "img".into(), args: vec![x()], kind: crate::ir::CallKind::Image },
    );
    assert_eq!(show(&f, &Scope::new()), "[(uint16)0, (uint16)65535]");
    // abs of a signed int is unsigned.
    let a = Expr::intrinsic(Type::u32(), Intrinsic::Abs, vec![x()]);
    assert_eq!(show(&a, &scope_x(-5, 3)), "[(uint32)0, (uint32)5]");
}

#[test]
fn lets_vectors_bools() {
    let t = Expr::var(Type::i32(), "t");
    let e = Expr::let_in("t", Expr::mul(x(), i(2)), Expr::add(t.clone(), i(1)));
    assert_eq!(show(&e, &scope_x(0, 9)), "[1, 19]");
    assert_eq!(show(&Expr::ramp(x(), i(2), 4), &scope_x(0, 9)), "[0, 15]");
    assert_eq!(show(&Expr::ramp(x(), i(-1), 4), &scope_x(0, 9)), "[-3, 9]");
    assert_eq!(show(&Expr::broadcast(x(), 8), &scope_x(0, 9)), "[0, 9]");
    assert_eq!(show(&Expr::lt(x(), i(10)), &scope_x(0, 9)), "[true, true]");
    assert_eq!(show(&Expr::lt(x(), i(0)), &scope_x(0, 9)), "[false, false]");
    assert_eq!(show(&Expr::lt(x(), i(5)), &scope_x(0, 9)), "[false, true]");
    let f = Expr::var(Type::f32(), "f");
    let mut s = Scope::new();
    s.insert("f".into(), Interval::bounded(Expr::float_imm(Type::f32(), 0.5), Expr::float_imm(Type::f32(), 2.0)));
    assert_eq!(show(&Expr::mul(f.clone(), Expr::float_imm(Type::f32(), 2.0)), &s), "[1.0f, 4.0f]");
    assert_eq!(show(&Expr::cast(Type::i32(), f.clone()), &s), "[0, 2]");
}

#[test]
fn interval_ops() {
    let a = Interval::bounded(i(0), i(5));
    let b = Interval::bounded(i(3), i(9));
    assert_eq!(a.union(&b), Interval::bounded(i(0), i(9)));
    assert_eq!(a.intersect(&b), Interval::bounded(i(3), i(5)));
    assert_eq!(a.union(&Interval::everything()), Interval::everything());
    assert_eq!(a.intersect(&Interval::everything()), a);
    assert!(a.is_bounded() && !Interval::everything().is_bounded());
    assert!(Interval::point(x()).is_single_point());
}

/// Checks that `e`'s value at points of `scope` lies within its bounds.
fn check_contains(
    e: &Expr,
    scope: &Scope,
    rng: &mut Rng,
    pick: &mut dyn FnMut(&mut Rng) -> crate::analysis::test_eval::Env,
) -> Result<(), TestCaseError> {
    let b = bounds_of_expr_in_scope(e, scope);
    if b.min.as_ref().is_some_and(has_near_limit_const) || b.max.as_ref().is_some_and(has_near_limit_const) {
        return Ok(());
    }
    for _ in 0..8 {
        let env = pick(rng);
        let mut ev = Eval::new();
        let v = ev.eval(e, &env);
        let lo = b.min.as_ref().map(|m| ev.eval(m, &env)[0]);
        let hi = b.max.as_ref().map(|m| ev.eval(m, &env)[0]);
        // Bounds assume no Int(32) overflow and no NaN.
        if ev.overflowed || ev.nan_seen {
            continue;
        }
        let el = e.ty().element();
        for lane in v {
            if let Scalar::Float(f) = lane {
                if f.is_nan() {
                    continue;
                }
            }
            if let Some(lo) = lo {
                prop_assert!(
                    semantics::compare(crate::ir::CmpOp::Le, el, lo, lane),
                    "{} in {}: {:?} below min {:?}",
                    e,
                    b,
                    lane,
                    lo
                );
            }
            if let Some(hi) = hi {
                prop_assert!(
                    semantics::compare(crate::ir::CmpOp::Le, el, lane, hi),
                    "{} in {}: {:?} above max {:?}",
                    e,
                    b,
                    lane,
                    hi
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    /// i32 expressions over variables with random constant intervals.
    #[test]
    fn bounds_contain_values(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let simple = rng.chance(60);
        let ty = if !simple && rng.chance(30) { rng.pick(&[Type::u8(), Type::i16(), Type::u32(), Type::f32()]) } else { Type::i32() };
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: true, simple, small_consts: false }.expr(ty, 4);
        let names = ["aint32", "bint32", "cint32"];
        let mut scope = Scope::new();
        let mut ranges = Vec::new();
        for n in names {
            let lo = rng.range(-20, 20);
            let hi = lo + rng.range(0, 20);
            scope.insert(n.into(), Interval::bounded(i(lo), i(hi)));
            ranges.push((n, lo, hi));
        }
        let mut pick = |rng: &mut Rng| {
            let mut env = random_env(rng, true);
            for (n, lo, hi) in &ranges {
                env.insert((*n).into(), vec![Scalar::Int(rng.range(*lo, *hi))]);
            }
            env
        };
        check_contains(&e, &scope, &mut rng, &mut pick)?;
    }

    /// Intervals with symbolic bounds: a in [0, p], b in [p - 5, p + 3].
    #[test]
    fn symbolic_bounds_contain_values(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: false, simple: true, small_consts: true }.expr(Type::i32(), 4);
        let p = Expr::var(Type::i32(), "p");
        let mut scope = Scope::new();
        scope.insert("aint32".into(), Interval::bounded(i(0), p.clone()));
        scope.insert("bint32".into(), Interval::bounded(Expr::sub(p.clone(), i(5)), Expr::add(p.clone(), i(3))));
        let mut pick = |rng: &mut Rng| {
            let mut env = random_env(rng, true);
            let pv = rng.range(0, 20);
            env.insert("p".into(), vec![Scalar::Int(pv)]);
            env.insert("aint32".into(), vec![Scalar::Int(rng.range(0, pv))]);
            env.insert("bint32".into(), vec![Scalar::Int(rng.range(pv - 5, pv + 3))]);
            env
        };
        check_contains(&e, &scope, &mut rng, &mut pick)?;
    }
}
