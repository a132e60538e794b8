//! Unit tests of the simplifier's rules.

use super::*;
use crate::analysis::interval::{Interval, Scope};
use crate::ir::{CmpOp, ForKind, Intrinsic, MsgPart};

fn x() -> Expr {
    Expr::var(Type::i32(), "x")
}
// `y` and `n` are run-time parameters, so that statements print them without annotation.
fn y() -> Expr {
    Expr::param(Type::i32(), "y")
}
fn n() -> Expr {
    Expr::param(Type::i32(), "n")
}
fn i(v: i64) -> Expr {
    Expr::i32(v)
}
fn s(e: &Expr) -> String {
    simplify(e).to_string()
}
fn add(a: Expr, b: Expr) -> Expr {
    Expr::add(a, b)
}
fn sub(a: Expr, b: Expr) -> Expr {
    Expr::sub(a, b)
}
fn mul(a: Expr, b: Expr) -> Expr {
    Expr::mul(a, b)
}

#[test]
fn folds_constants_with_pinned_semantics() {
    assert_eq!(simplify(&add(i(3), i(4))), i(7));
    assert_eq!(simplify(&Expr::div(i(-7), i(2))), i(-4));
    assert_eq!(simplify(&Expr::rem(i(-7), i(2))), i(1));
    assert_eq!(simplify(&Expr::div(i(7), i(-2))), i(-3));
    assert_eq!(simplify(&Expr::rem(i(-7), i(-2))), i(1));
    assert_eq!(simplify(&Expr::div(x(), i(0))), i(0));
    assert_eq!(simplify(&Expr::rem(x(), i(0))), i(0));
    let u8c = |v| Expr::int_imm(Type::u8(), v);
    assert_eq!(simplify(&add(u8c(250), u8c(10))), u8c(4));
    assert_eq!(simplify(&Expr::binary(BinOp::Shl, i(1), i(33))), i(2));
    assert_eq!(
        simplify(&Expr::binary(BinOp::Shr, Expr::int_imm(Type::i8(), -128), Expr::int_imm(Type::i8(), 1))),
        Expr::int_imm(Type::i8(), -64)
    );
    let f = |v| Expr::float_imm(Type::f32(), v);
    assert_eq!(simplify(&add(f(0.1), f(0.2))), f((0.1f32 + 0.2f32) as f64));
    assert_eq!(simplify(&Expr::cast(Type::i32(), f(-2.9))), i(-2));
    assert_eq!(simplify(&Expr::cast(Type::u8(), f(300.0))), u8c(255));
    assert_eq!(simplify(&Expr::cast(Type::u8(), i(-1))), u8c(255));
    assert_eq!(simplify(&Expr::intrinsic(Type::f32(), Intrinsic::Round, vec![f(2.5)])), f(2.0));
    assert_eq!(simplify(&Expr::intrinsic(Type::u8(), Intrinsic::Abs, vec![Expr::int_imm(Type::i8(), -128)])), u8c(128));
    assert!(simplify(&Expr::lt(i(1), i(2))).is_true());
}

#[test]
fn canonicalizes_and_cancels() {
    assert_eq!(s(&add(i(3), x())), "(x + 3)");
    assert_eq!(s(&add(add(x(), i(1)), i(2))), "(x + 3)");
    assert_eq!(s(&add(x(), i(-1))), "(x - 1)");
    assert_eq!(s(&sub(x(), x())), "0");
    assert_eq!(s(&sub(add(x(), y()), x())), "y");
    assert_eq!(s(&sub(add(x(), i(3)), add(y(), i(3)))), "(x - y)");
    assert_eq!(s(&sub(add(x(), i(5)), add(x(), i(2)))), "3");
    assert_eq!(s(&add(sub(x(), y()), y())), "x");
    assert_eq!(s(&mul(x(), i(0))), "0");
    assert_eq!(s(&mul(x(), i(1))), "x");
    assert_eq!(s(&mul(i(4), x())), "(x * 4)");
    assert_eq!(s(&mul(mul(x(), i(2)), i(3))), "(x * 6)");
    assert_eq!(s(&mul(add(x(), i(2)), i(3))), "((x * 3) + 6)");
    assert_eq!(s(&Expr::div(x(), i(1))), "x");
    assert_eq!(s(&add(x(), x())), "(x * 2)");
    assert_eq!(s(&sub(n(), add(n(), i(1)))), "-1");
}

#[test]
fn min_max() {
    assert_eq!(s(&Expr::min(i(3), i(5))), "3");
    assert_eq!(s(&Expr::max(i(3), i(5))), "5");
    assert_eq!(s(&Expr::min(x(), x())), "x");
    assert_eq!(s(&Expr::min(add(x(), i(1)), add(x(), i(3)))), "(x + 1)");
    assert_eq!(s(&Expr::max(add(x(), i(1)), add(x(), i(3)))), "(x + 3)");
    assert_eq!(s(&Expr::min(x(), add(x(), i(4)))), "x");
    assert_eq!(s(&Expr::max(sub(x(), i(2)), x())), "x");
    assert_eq!(s(&Expr::min(Expr::min(x(), i(4)), i(2))), "min(x, 2)");
    assert_eq!(s(&Expr::min(Expr::max(x(), i(9)), i(2))), "2");
    assert_eq!(s(&Expr::max(y(), Expr::min(y(), x()))), "y");
    // Shared operands.
    assert_eq!(s(&Expr::min(Expr::min(x(), n()), Expr::min(add(x(), i(63)), n()))), "min(x, n)");
    assert_eq!(s(&Expr::max(Expr::min(x(), n()), Expr::min(x(), y()))), "min(max(n, y), x)");
    // Constant bounds of a u8 value.
    let u = Expr::cast(Type::i32(), Expr::var(Type::u8(), "u"));
    assert_eq!(s(&Expr::min(u.clone(), i(300))), "int32(u)");
    assert_eq!(s(&Expr::max(u.clone(), i(-1))), "int32(u)");
    // min(p, q) - q style, for a buffer's shape, which is checked against the coordinate
    // limit; a user's parameter may be anything, and x - n could wrap.
    let e = Expr::param(Type::i32(), "in.extent.0");
    assert_eq!(s(&sub(Expr::min(x(), sub(e.clone(), i(1))), e)), "min((x - in.extent.0), -1)");
    assert_eq!(s(&sub(Expr::min(x(), sub(n(), i(1))), n())), "(min(x, (n - 1)) - n)");
    // Nor inside a clamp of loaded data.
    let v = Expr::load(Type::i32(), "data", x(), None);
    assert_eq!(s(&sub(Expr::max(Expr::min(v, add(y(), i(9))), y()), y())), "(max(min(data[x], (y + 9)), y) - y)");
}

/// A union of many call sites: a chain of one operator whose terms repeat or differ by
/// constants keeps one term per base, however the chain is nested.
#[test]
fn min_max_chains_merge_terms_that_differ_by_a_constant() {
    let base = Expr::div(add(x(), n()), i(2));
    let tap = |k: i64| add(base.clone(), i(k));
    let mut chain = Expr::min(i(0).clone(), x());
    for round in 0..12 {
        for k in [3, -2, 1, 0, 2, -1] {
            let t = if round % 2 == 0 { Expr::min(chain.clone(), tap(k)) } else { Expr::min(tap(k), chain.clone()) };
            chain = t;
        }
    }
    assert_eq!(s(&chain), "min(min((((x + n) / 2) - 2), x), 0)");
    let max_chain = Expr::max(Expr::max(tap(4), y()), Expr::max(tap(-3), tap(4)));
    assert_eq!(s(&max_chain), "max((((x + n) / 2) + 4), y)");
    // A loaded value may be anything: `v + 1` may wrap below `v - 1`, so only exact
    // repeats go.
    let v = Expr::load(Type::i32(), "data", x(), None);
    let loaded = Expr::min(Expr::min(add(v.clone(), i(1)), y()), Expr::min(sub(v.clone(), i(1)), add(v, i(1))));
    assert_eq!(s(&loaded), "min(min((data[x] + 1), y), (data[x] - 1))");
}

#[test]
fn div_mod() {
    assert_eq!(s(&Expr::div(mul(x(), i(8)), i(4))), "(x * 2)");
    assert_eq!(s(&Expr::div(add(mul(x(), i(8)), i(16)), i(8))), "(x + 2)");
    assert_eq!(s(&Expr::div(add(x(), i(8)), i(8))), "((x / 8) + 1)");
    assert_eq!(s(&Expr::div(add(mul(x(), i(8)), y()), i(8))), "(x + (y / 8))");
    assert_eq!(s(&Expr::rem(add(mul(x(), i(8)), add(y(), i(17))), i(8))), "((y + 1) % 8)");
    assert_eq!(s(&Expr::rem(mul(x(), i(6)), i(3))), "0");
    assert_eq!(s(&Expr::div(Expr::div(x(), i(2)), i(3))), "(x / 6)");
    assert_eq!(s(&Expr::rem(Expr::rem(x(), i(8)), i(4))), "(x % 4)");
    assert_eq!(s(&Expr::rem(Expr::rem(x(), i(8)), i(16))), "(x % 8)");
    assert_eq!(s(&Expr::div(Expr::rem(x(), i(8)), i(8))), "0");
    // Not for wrapping types: (x * 8) / 4 in u8 can overflow.
    let u = Expr::var(Type::u8(), "u");
    let c = |v| Expr::int_imm(Type::u8(), v);
    assert_eq!(s(&Expr::div(mul(u.clone(), c(8)), c(4))), "((u * (uint8)8) / (uint8)4)");
}

#[test]
fn vectors() {
    let r = Expr::ramp(x(), i(1), 4);
    let b = |e: Expr| Expr::broadcast(e, 4);
    assert_eq!(s(&add(r.clone(), b(y()))), "ramp((x + y), 1, 4)");
    assert_eq!(s(&add(b(i(1)), b(i(2)))), "x4(3)");
    assert_eq!(s(&mul(r.clone(), b(i(2)))), "ramp((x * 2), 2, 4)");
    assert_eq!(s(&sub(r.clone(), r.clone())), "x4(0)");
    assert_eq!(s(&add(r.clone(), Expr::ramp(y(), i(2), 4))), "ramp((x + y), 3, 4)");
    assert_eq!(s(&Expr::ramp(x(), i(0), 4)), "x4(x)");
    let r8 = Expr::ramp(mul(x(), i(8)), i(1), 8);
    assert_eq!(s(&Expr::div(r8.clone(), b8(i(8)))), "x8(x)");
    assert_eq!(s(&Expr::rem(r8, b8(i(8)))), "ramp(0, 1, 8)");
    assert!(simplify(&Expr::lt(b(i(1)), b(i(2)))).is_true());
}

fn b8(e: Expr) -> Expr {
    Expr::broadcast(e, 8)
}

#[test]
fn comparisons() {
    assert!(can_prove(&Expr::lt(add(x(), i(1)), add(x(), i(2)))));
    assert!(simplify(&Expr::lt(add(x(), i(2)), add(x(), i(1)))).is_false());
    assert!(can_prove(&Expr::eq_(x(), x())));
    assert_eq!(s(&Expr::lt(add(x(), i(1)), add(y(), i(3)))), "(x < (y + 2))");
    assert_eq!(s(&Expr::lt(i(3), x())), "(x > 3)");
    assert_eq!(s(&Expr::lt(add(x(), i(3)), i(5))), "(x < 2)");
    // Wrap-around: x + 1 < x + 2 is false for x = 254 in u8.
    let u = Expr::var(Type::u8(), "u");
    let c = |v| Expr::int_imm(Type::u8(), v);
    assert!(!simplify(&Expr::lt(add(u.clone(), c(1)), add(u.clone(), c(2)))).is_const());
    // ... but == is exact in every ring.
    assert_eq!(s(&Expr::eq_(add(u.clone(), c(1)), c(3))), "(u == (uint8)2)");
    // Bounds of the type decide some comparisons.
    assert!(can_prove(&Expr::le(u.clone(), c(255))));
    assert!(can_prove(&Expr::cmp(CmpOp::Ge, Expr::cast(Type::i32(), u.clone()), i(0))));
    // Floats: no algebra (NaN).
    let f = Expr::var(Type::f32(), "f");
    assert!(!simplify(&Expr::eq_(f.clone(), f.clone())).is_const());
}

#[test]
fn logic_and_select() {
    let p = Expr::lt(x(), y());
    assert_eq!(simplify(&Expr::and(Expr::bool_imm(true), p.clone())), p);
    assert!(simplify(&Expr::and(Expr::bool_imm(false), p.clone())).is_false());
    assert_eq!(simplify(&Expr::or(Expr::bool_imm(false), p.clone())), p);
    assert!(simplify(&Expr::or(p.clone(), Expr::bool_imm(true))).is_true());
    assert_eq!(simplify(&Expr::and(p.clone(), p.clone())), p);
    assert!(simplify(&Expr::and(p.clone(), Expr::not(p.clone()))).is_false());
    assert_eq!(s(&Expr::not(p.clone())), "(x >= y)");
    assert_eq!(simplify(&Expr::not(Expr::not(p.clone()))), p);
    assert_eq!(simplify(&Expr::select(Expr::bool_imm(true), x(), y())), x());
    assert_eq!(simplify(&Expr::select(Expr::bool_imm(false), x(), y())), y());
    assert_eq!(simplify(&Expr::select(p.clone(), x(), x())), x());
    let b = Expr::var(Type::bool(), "b");
    assert_eq!(s(&Expr::select(Expr::not(b.clone()), x(), y())), "select(b, y, x)");
    assert_eq!(simplify(&Expr::select(p.clone(), Expr::bool_imm(true), Expr::bool_imm(false))), p);
}

#[test]
fn floats_stay_exact() {
    let f = Expr::var(Type::f32(), "f");
    let c = |v| Expr::float_imm(Type::f32(), v);
    // x + 0.0 is not x for x = -0.0.
    assert_eq!(s(&add(f.clone(), c(0.0))), "(f + 0.0f)");
    assert_eq!(simplify(&add(f.clone(), c(-0.0))), f);
    assert_eq!(simplify(&sub(f.clone(), c(0.0))), f);
    assert_eq!(simplify(&mul(f.clone(), c(1.0))), f);
    // No reassociation.
    assert_eq!(s(&add(add(f.clone(), c(1.0)), c(2.0))), "((f + 1.0f) + 2.0f)");
    assert_eq!(s(&mul(f.clone(), c(0.0))), "(f * 0.0f)");
    assert_eq!(s(&sub(f.clone(), f.clone())), "(f - f)");
}

#[test]
fn casts() {
    let u = Expr::var(Type::u8(), "u");
    // u8 -> i32 -> u8 is the identity.
    assert_eq!(simplify(&Expr::cast(Type::u8(), Expr::cast(Type::i32(), u.clone()))), u);
    // i32 -> i16 -> i8 is i32 -> i8.
    assert_eq!(s(&Expr::cast(Type::i8(), Expr::cast(Type::i16(), x()))), "int8(x)");
    // i32 -> u8 -> i32 is not the identity.
    assert_eq!(s(&Expr::cast(Type::i32(), Expr::cast(Type::u8(), x()))), "int32(uint8(x))");
    assert_eq!(s(&Expr::cast(Type::i32().with_lanes(4), Expr::broadcast(u.clone(), 4))), "x4(int32(u))");
}

#[test]
fn lets() {
    let body = add(Expr::var(Type::i32(), "a"), x());
    assert_eq!(s(&Expr::let_in("a", i(3), body.clone())), "(x + 3)");
    assert_eq!(s(&Expr::let_in("a", y(), body.clone())), "(y + x)");
    assert_eq!(s(&Expr::let_in("a", mul(x(), y()), i(5))), "5");
    let a = Expr::var(Type::i32(), "a");
    let kept = Expr::let_in("a", mul(x(), y()), add(a.clone(), a.clone()));
    assert_eq!(s(&kept), "(let a = (x * y) in (a * 2))");
    // Inlining y would be captured by the inner let of y: kept.
    let capture = Expr::let_in("a", y(), Expr::let_in("y", mul(x(), x()), add(a.clone(), y())));
    assert_eq!(s(&capture), "(let a = y in (let y = (x * x) in (a + y)))");
}

fn store(buf: &str, index: Expr, value: Expr) -> Stmt {
    Stmt::Store { buffer: buf.into(), value, index, predicate: None }
}

fn for_(name: &str, min: Expr, extent: Expr, body: Stmt) -> Stmt {
    Stmt::for_loop(name, min, extent, ForKind::Serial, body)
}

#[test]
fn stmt_guards_proven_by_loop_bounds() {
    let body = Stmt::if_then(Expr::lt(x(), i(10)), store("f", x(), i(1)));
    let st = for_("x", i(0), i(10), body);
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, 10) {\n  f[x] = 1\n}\n");
    // Symbolic extent.
    let body = Stmt::if_then(Expr::lt(x(), n()), store("f", x(), i(1)));
    let st = for_("x", i(0), n(), body);
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, n) {\n  f[x] = 1\n}\n");
    // A branch never taken.
    let body = Stmt::IfThenElse {
        condition: Expr::cmp(CmpOp::Ge, add(x(), y()), add(n(), y())),
        then_case: Box::new(store("f", x(), i(1))),
        else_case: Some(Box::new(store("f", x(), i(2)))),
    };
    let st = for_("x", i(0), n(), body);
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, n) {\n  f[x] = 2\n}\n");
    // Not provable: kept.
    let body = Stmt::if_then(Expr::lt(x(), i(9)), store("f", x(), i(1)));
    let st = for_("x", i(0), i(10), body);
    assert!(simplify_stmt(&st).to_string().contains("if ((x < 9))"));
    // min/max of loop variables.
    let st = for_("x", i(0), i(10), store("f", Expr::min(x(), i(20)), Expr::max(x(), i(-1))));
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, 10) {\n  f[x] = x\n}\n");
}

#[test]
fn stmt_structure() {
    // Extent 0: gone. Extent 1: the variable is bound to min (and inlined).
    assert!(simplify_stmt(&for_("x", i(0), i(0), store("f", x(), i(1)))).is_no_op());
    assert_eq!(simplify_stmt(&for_("x", i(5), i(1), store("f", x(), i(1)))).to_string(), "f[5] = 1\n");
    assert_eq!(simplify_stmt(&for_("x", y(), i(1), store("f", x(), i(1)))).to_string(), "f[y] = 1\n");
    // Unused and constant lets.
    let st = Stmt::let_stmt("a", mul(x(), y()), store("f", i(0), i(1)));
    assert_eq!(simplify_stmt(&st).to_string(), "f[0] = 1\n");
    let st = Stmt::let_stmt("a", i(7), store("f", Expr::var(Type::i32(), "a"), i(1)));
    assert_eq!(simplify_stmt(&st).to_string(), "f[7] = 1\n");
    // Asserts proven true vanish; empty blocks too.
    let st = Stmt::block(vec![
        Stmt::Assert { condition: Expr::le(i(0), i(1)), message: vec![MsgPart::Text("no".into())] },
        Stmt::Block(vec![]),
        store("f", i(0), i(1)),
    ]);
    assert_eq!(simplify_stmt(&st).to_string(), "f[0] = 1\n");
    // A let with constant bounds proves guards.
    let st = for_(
        "x",
        i(0),
        i(8),
        Stmt::let_stmt(
            "a",
            add(mul(x(), i(2)), i(1)),
            Stmt::if_then(Expr::lt(Expr::var(Type::i32(), "a"), i(16)), store("f", Expr::var(Type::i32(), "a"), i(1))),
        ),
    );
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, 8) {\n  let a = ((x * 2) + 1)\n  f[a] = 1\n}\n");
}

#[test]
fn stmt_facts_from_enclosing_ifs() {
    let c = Expr::lt(x(), n());
    let inner = Stmt::IfThenElse {
        condition: c.clone(),
        then_case: Box::new(store("f", x(), i(1))),
        else_case: Some(Box::new(store("f", x(), i(2)))),
    };
    let st = for_("x", i(0), i(100), Stmt::if_then(c.clone(), inner));
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, 100) {\n  if ((x < n)) {\n    f[x] = 1\n  }\n}\n");
    // The narrowed interval proves a weaker guard.
    let inner = Stmt::if_then(Expr::lt(x(), add(n(), i(5))), store("f", x(), i(1)));
    let st = for_("x", i(0), i(100), Stmt::if_then(c.clone(), inner));
    assert_eq!(simplify_stmt(&st).to_string(), "for (x, 0, 100) {\n  if ((x < n)) {\n    f[x] = 1\n  }\n}\n");
    // Shadowing: a loop over n inside forgets what was known of the outer n.
    let inner = for_("n", i(0), i(1000), Stmt::if_then(c.clone(), store("f", x(), i(1))));
    let st = for_("x", i(0), i(100), Stmt::if_then(c.clone(), inner));
    let r = simplify_stmt(&st).to_string();
    assert_eq!(r.matches("if ((x < n").count(), 2, "{r}");
}

#[test]
fn stmt_shadowed_loop_bounds() {
    // The inner loop's extent mentions the outer p.
    let p = || Expr::var(Type::i32(), "p");
    let inner =
        for_("p", i(0), Expr::min(p(), i(4)), Stmt::if_then(Expr::lt(i(4), add(p(), p())), store("out", i(1), p())));
    let st = for_("p", i(1), i(4), inner);
    let r = simplify_stmt(&st).to_string();
    assert!(r.contains("out[1] = p"), "{r}");
}

#[test]
fn long_let_chains() {
    // t_k = t_{k-1} * y, 3000 deep (CSE output is like this): no deep recursion.
    let n = 3000;
    let mut body = add(Expr::var(Type::i32(), format!("t{}", n - 1)), i(0));
    for k in (0..n).rev() {
        let prev = if k == 0 { x() } else { Expr::var(Type::i32(), format!("t{}", k - 1)) };
        body = Expr::let_in(format!("t{k}"), mul(prev, y()), body);
    }
    let r = std::thread::Builder::new().stack_size(1 << 20).spawn(move || simplify(&body)).unwrap().join().unwrap();
    let mut depth = 0;
    let mut cur = r;
    while let ExprKind::Let { body, .. } = cur.kind() {
        depth += 1;
        let next = body.clone();
        cur = next;
    }
    assert_eq!(depth, n);
    // LetStmt chains too.
    let mut st = store("f", Expr::var(Type::i32(), format!("t{}", n - 1)), i(1));
    for k in (0..n).rev() {
        let prev = if k == 0 { x() } else { Expr::var(Type::i32(), format!("t{}", k - 1)) };
        st = Stmt::let_stmt(format!("t{k}"), mul(prev, y()), st);
    }
    let r = std::thread::Builder::new().stack_size(1 << 20).spawn(move || simplify_stmt(&st)).unwrap().join().unwrap();
    assert!(matches!(r, Stmt::LetStmt { .. }));
}

#[test]
fn simplify_in_scope_uses_intervals() {
    let mut scope = Scope::new();
    scope.insert("x".into(), Interval::bounded(i(0), sub(n(), i(1))));
    assert!(can_prove_in_scope(&Expr::lt(x(), n()), &scope));
    assert!(can_prove_in_scope(&Expr::cmp(CmpOp::Ge, add(x(), i(1)), i(1)), &scope));
    assert_eq!(simplify_in_scope(&Expr::min(x(), sub(n(), i(1))), &scope).to_string(), "x");
    assert!(!can_prove_in_scope(&Expr::lt(x(), sub(n(), i(1))), &scope));
}

#[test]
fn stmt_guards_bound_differences_with_the_same_terms() {
    // The full-vector guard of a vector loop, and the bounds of a producer inside it.
    let base = || add(n(), mul(x(), i(8)));
    let w_max = Expr::min(add(base(), i(7)), y());
    let guard = Expr::le(add(base(), i(7)), y());
    let st = for_("x", i(0), i(100), Stmt::if_then(guard.clone(), store("f", x(), w_max.clone())));
    let r = simplify_stmt(&st).to_string();
    assert!(r.contains("f[x] = ((n + (x * 8)) + 7)"), "{r}");
    // The else branch knows the opposite; after the if, nothing is known.
    let st = for_(
        "x",
        i(0),
        i(100),
        Stmt::Block(vec![
            Stmt::IfThenElse {
                condition: guard,
                then_case: Box::new(store("f", x(), i(0))),
                else_case: Some(Box::new(store("g", x(), w_max.clone()))),
            },
            store("h", x(), w_max),
        ]),
    );
    let r = simplify_stmt(&st).to_string();
    assert!(r.contains("g[x] = y"), "{r}");
    assert!(r.contains("h[x] = min("), "{r}");
    // A strict guard the other way: n + 8x > y - 3 makes max(n + 8x, y - 3) the first.
    let st = for_(
        "x",
        i(0),
        i(100),
        Stmt::if_then(Expr::cmp(CmpOp::Gt, base(), sub(y(), i(3))), store("f", x(), Expr::max(base(), sub(y(), i(3))))),
    );
    let r = simplify_stmt(&st).to_string();
    assert!(r.contains("f[x] = (n + (x * 8))"), "{r}");
}

#[test]
fn stmt_lets_of_one_base_cancel() {
    // lo = n + 8x, hi = lo' + 7 written out: hi - lo is 7 and min(lo, hi) is lo.
    let v = |name: &str| Expr::var(Type::i32(), name);
    let body = Stmt::Block(vec![store("e", x(), sub(v("hi"), v("lo"))), store("m", x(), Expr::min(v("lo"), v("hi")))]);
    let in_lets = |inner: Stmt| {
        let hi = Stmt::let_stmt("hi", add(add(n(), mul(x(), i(8))), i(7)), inner);
        for_("x", i(0), i(100), Stmt::let_stmt("lo", add(n(), mul(x(), i(8))), hi))
    };
    let r = simplify_stmt(&in_lets(body.clone())).to_string();
    assert!(r.contains("e[x] = 7"), "{r}");
    assert!(r.contains("m[x] = lo"), "{r}");
    // A let rebound inside forgets the outer value.
    let st = in_lets(for_("lo", i(0), i(3), body));
    let r = simplify_stmt(&st).to_string();
    assert!(!r.contains("e[x] = 7"), "{r}");
}

#[test]
fn float_division_by_a_power_of_two_is_a_multiplication() {
    let f = || Expr::var(Type::f32(), "f");
    let d = || Expr::var(Type::f64(), "d");
    assert_eq!(
        s(&Expr::div(f(), Expr::float_imm(Type::f32(), 2.0))),
        s(&Expr::mul(f(), Expr::float_imm(Type::f32(), 0.5)))
    );
    assert_eq!(
        s(&Expr::div(d(), Expr::float_imm(Type::f64(), -0.25))),
        s(&Expr::mul(d(), Expr::float_imm(Type::f64(), -4.0)))
    );
    let v = Expr::broadcast(Expr::float_imm(Type::f32(), 8.0), 4);
    assert!(s(&Expr::div(Expr::broadcast(f(), 4), v)).contains('*'));
    // Not a power of two, or one whose reciprocal f32 cannot hold (2^149 overflows).
    assert!(s(&Expr::div(f(), Expr::float_imm(Type::f32(), 3.0))).contains('/'));
    assert!(s(&Expr::div(f(), Expr::float_imm(Type::f32(), 2f64.powi(-149)))).contains('/'));
    // The premise, checked on values of every kind.
    let xs = [0.0f32, -0.0, 1.0, -3.7, f32::MIN_POSITIVE, 1e-40, f32::MAX, f32::INFINITY, f32::NAN, 123_456.79];
    for k in -126..=126 {
        let c = 2f32.powi(k);
        for &x in &xs {
            assert_eq!((x / c).to_bits(), (x * (1.0 / c)).to_bits(), "{x} / 2^{k}");
        }
    }
}

/// The rules this file's expressions exercise give the same value as the unsimplified
/// expression at every `x` and `n` of a grid around zero (floor division of negatives
/// included).
fn same_values(e: &Expr) {
    use crate::ir::semantics::{binary, Scalar};
    fn eval(e: &Expr, x: i64, n: i64) -> i64 {
        match e.kind() {
            ExprKind::IntImm(v) => *v,
            ExprKind::Var { name, .. } if &**name == "x" => x,
            ExprKind::Var { name, .. } if &**name == "n" => n,
            ExprKind::Binary(op, a, b) => {
                match binary(*op, Type::i32(), Scalar::Int(eval(a, x, n)), Scalar::Int(eval(b, x, n))) {
                    Scalar::Int(v) => v,
                    other => panic!("{other:?}"),
                }
            }
            _ => panic!("unexpected {e}"),
        }
    }
    let r = simplify(e);
    for x in -40..40 {
        for n in [-7, 0, 5] {
            assert_eq!(eval(&r, x, n), eval(e, x, n), "{e} -> {r} at x = {x}, n = {n}");
        }
    }
}

#[test]
fn divisions_by_positive_constants_commute_with_min_and_max_and_compose() {
    let div = |a: Expr, k: i64| Expr::div(a, i(k));
    let nv = Expr::var(Type::i32(), "n");
    // min(x / 2, (x + 1) / 2) is x / 2: an up-sampled stage's bounds
    let e = Expr::min(div(x(), 2), div(add(x(), i(1)), 2));
    assert_eq!(s(&e), "(x / 2)");
    same_values(&e);
    let e = Expr::max(div(x(), 2), div(add(x(), i(1)), 2));
    assert_eq!(s(&e), "((x + 1) / 2)");
    same_values(&e);
    let e = Expr::min(div(x(), 4), div(nv.clone(), 4));
    assert_eq!(s(&e), "(min(x, n) / 4)");
    same_values(&e);
    // (x / 4 + 1) / 2 is (x + 4) / 8, and (x / 4 - 3) / 2 is (x - 12) / 8
    let e = div(add(div(x(), 4), i(1)), 2);
    assert_eq!(s(&e), "((x + 4) / 8)");
    same_values(&e);
    let e = div(sub(div(x(), 4), i(3)), 2);
    assert_eq!(s(&e), "((x - 12) / 8)");
    same_values(&e);
    // so nested pyramid levels' bounds compare
    let e = Expr::min(div(x(), 8), div(add(div(x(), 4), i(1)), 2));
    assert_eq!(s(&e), "(x / 8)");
    same_values(&e);
    // not for a negative or a non-constant divisor
    assert_eq!(s(&Expr::min(div(x(), -2), div(add(x(), i(1)), -2))), "min((x / -2), ((x + 1) / -2))");
    assert_eq!(s(&Expr::min(Expr::div(x(), nv.clone()), Expr::div(y(), nv))), "min((x / n), (y / n))");
}
