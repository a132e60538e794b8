//! Fuzzing: a simplified expression (or statement) must compute exactly what the
//! original computes, for random programs and random variable values.

use super::{simplify, simplify_in_scope, simplify_stmt};
use crate::analysis::interval::{Interval, Scope};
use crate::analysis::substitute::free_vars;
use crate::analysis::test_eval::{random_env, same_lanes, Env, Eval, Gen, Rng, INT_TYPES};
use crate::ir::semantics::Scalar;
use crate::ir::{BinOp, CmpOp, Expr, ForKind, MsgPart, Stmt, Type};
use proptest::prelude::*;

/// Evaluates `e` and its simplification under a few environments.
fn check(e: &Expr, rng: &mut Rng, small: bool) -> Result<(), TestCaseError> {
    let r = simplify(e);
    prop_assert_eq!(r.ty(), e.ty(), "type changed: {} -> {}", e, r);
    for _ in 0..8 {
        let env = random_env(rng, small);
        let mut ev = Eval::new();
        let a = ev.eval(e, &env);
        // The simplifier may assume that Int(32)/Int(64) arithmetic does not overflow...
        if ev.overflowed {
            continue;
        }
        let mut ev2 = Eval::new();
        let b = ev2.eval(&r, &env);
        // Nor that rewriting does not bring a value closer to the limits (x + -5 may
        // become x + 2147483642 under % 2147483647).
        if ev2.overflowed {
            continue;
        }
        if !same_lanes(&a, &b) {
            let vars: Vec<String> = free_vars(e).iter().map(|v| format!("{v} = {:?}", env[v])).collect();
            prop_assert!(
                false,
                "{}\n  simplified to {}\n  with {}\n  gives {:?}, expected {:?}",
                e,
                r,
                vars.join(", "),
                b,
                a
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Every integer type, bools and f32, with every operator.
    #[test]
    fn scalar_expressions(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut types = INT_TYPES.to_vec();
        types.extend([Type::bool(), Type::f32(), Type::i32(), Type::i32()]);
        let ty = rng.pick(&types);
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: true, simple: false, small_consts: true }.expr(ty, 5);
        check(&e, &mut rng, false)?;
    }

    /// Coordinate arithmetic: i32 with + - * / % min max, select and lets.
    #[test]
    fn coordinate_expressions(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let ty = if rng.chance(80) { Type::i32() } else { Type::bool() };
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: false, simple: true, small_consts: true }.expr(ty, 5);
        check(&e, &mut rng, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Vectors of 4 lanes: ramps, broadcasts, lane-wise operators.
    #[test]
    fn vector_expressions(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let simple = rng.chance(50);
        let ty = rng.pick(&[Type::i32(), Type::i32(), Type::u8(), Type::i16(), Type::bool()]).with_lanes(4);
        let ty = if simple && !ty.element().is_bool() { Type::i32().with_lanes(4) } else { ty };
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: false, simple, small_consts: true }.expr(ty, 4);
        check(&e, &mut rng, simple)?;
    }

    /// `simplify_in_scope`: equal values at every point of the intervals (constant and
    /// symbolic ones).
    #[test]
    fn expressions_in_scope(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let ty = if rng.chance(70) { Type::i32() } else { Type::bool() };
        let e = Gen { rng: &mut rng, lets: Vec::new(), next_let: 0, floats: false, simple: true, small_consts: true }.expr(ty, 4);
        let p = Expr::var(Type::i32(), "p");
        let lo = rng.range(-10, 10);
        let w = rng.range(0, 10);
        let mut scope = Scope::new();
        scope.insert("aint32".into(), Interval::bounded(Expr::i32(lo), Expr::i32(lo + w)));
        scope.insert("bint32".into(), Interval::bounded(Expr::i32(0), Expr::sub(p.clone(), Expr::i32(1))));
        let r = simplify_in_scope(&e, &scope);
        for _ in 0..6 {
            let mut env = random_env(&mut rng, true);
            let pv = rng.range(1, 12);
            env.insert("p".into(), vec![Scalar::Int(pv)]);
            env.insert("aint32".into(), vec![Scalar::Int(rng.range(lo, lo + w))]);
            env.insert("bint32".into(), vec![Scalar::Int(rng.range(0, pv - 1))]);
            let mut ev = Eval::new();
            let a = ev.eval(&e, &env);
            let mut ev2 = Eval::new();
            let b = ev2.eval(&r, &env);
            if ev.overflowed || ev2.overflowed {
                continue;
            }
            prop_assert!(same_lanes(&a, &b), "{}\n  in scope simplified to {}\n  with {:?}: {:?} vs {:?}", e, r, env, a, b);
        }
    }

    /// Statements: loop nests with guards, lets and asserts must store the same values in
    /// the same order (and fail at the same assert).
    #[test]
    fn statements(seed in any::<u64>()) {
        let mut rng = Rng(seed);
        let mut g = StmtGen { rng: &mut rng, vars: vec!["p".into(), "q".into()], label: 0, next_var: 0 };
        let s = g.stmt(3);
        let r = simplify_stmt(&s);
        for _ in 0..4 {
            let mut env = Env::new();
            env.insert("p".into(), vec![Scalar::Int(rng.range(-4, 6))]);
            env.insert("q".into(), vec![Scalar::Int(rng.range(0, 5))]);
            let (mut t1, mut t2) = (Vec::new(), Vec::new());
            let ok1 = exec(&s, &env, &mut t1);
            let ok2 = exec(&r, &env, &mut t2);
            prop_assert!(ok1 == ok2 && t1 == t2, "{}\nsimplified to\n{}\nwith {:?}: {:?} {:?} vs {:?} {:?}", s, r, env, ok1, t1, ok2, t2);
        }
    }
}

struct StmtGen<'a> {
    rng: &'a mut Rng,
    vars: Vec<String>,
    label: i64,
    next_var: usize,
}

impl StmtGen<'_> {
    fn var(&mut self) -> Expr {
        let v = self.rng.pick(&self.vars);
        Expr::var(Type::i32(), v)
    }

    fn expr(&mut self, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(30) {
            return if self.rng.chance(60) { self.var() } else { Expr::i32(self.rng.range(-3, 8)) };
        }
        let op = self.rng.pick(&[
            BinOp::Add,
            BinOp::Add,
            BinOp::Sub,
            BinOp::Mul,
            BinOp::Div,
            BinOp::Mod,
            BinOp::Min,
            BinOp::Max,
        ]);
        let a = self.expr(depth - 1);
        let b = if matches!(op, BinOp::Mul | BinOp::Div | BinOp::Mod) {
            Expr::i32(self.rng.range(-3, 4))
        } else {
            self.expr(depth - 1)
        };
        Expr::binary(op, a, b)
    }

    fn cond(&mut self) -> Expr {
        let op = self.rng.pick(&[CmpOp::Lt, CmpOp::Le, CmpOp::Gt, CmpOp::Ge, CmpOp::Eq, CmpOp::Ne]);
        let a = self.expr(1);
        let b = self.expr(1);
        let c = Expr::cmp(op, a, b);
        match self.rng.below(6) {
            0 => Expr::and(c, self.cond_leaf()),
            1 => Expr::or(c, self.cond_leaf()),
            2 => Expr::not(c),
            _ => c,
        }
    }

    fn cond_leaf(&mut self) -> Expr {
        let a = self.var();
        let b = self.expr(1);
        Expr::lt(a, b)
    }

    fn stmt(&mut self, depth: u32) -> Stmt {
        if depth == 0 {
            self.label += 1;
            let v = self.expr(2);
            return Stmt::Store { buffer: "out".into(), value: v, index: Expr::i32(self.label), predicate: None };
        }
        let d = depth - 1;
        match self.rng.below(7) {
            0 | 1 => {
                // Sometimes reuse an enclosing name (shadowing).
                let name = if self.rng.chance(15) {
                    self.rng.pick(&self.vars)
                } else {
                    self.next_var += 1;
                    format!("i{}", self.next_var)
                };
                let min = if self.rng.chance(70) { Expr::i32(self.rng.range(-2, 3)) } else { self.expr(1) };
                let extent = if self.rng.chance(70) {
                    Expr::i32(self.rng.range(0, 4))
                } else {
                    Expr::min(self.var(), Expr::i32(4))
                };
                self.vars.push(name.clone());
                let body = self.stmt(d);
                self.vars.pop();
                Stmt::for_loop(name, min, extent, ForKind::Serial, body)
            }
            2 | 3 => {
                let c = self.cond();
                let t = self.stmt(d);
                let e = if self.rng.chance(50) { Some(Box::new(self.stmt(d))) } else { None };
                Stmt::IfThenElse { condition: c, then_case: Box::new(t), else_case: e }
            }
            4 => {
                self.next_var += 1;
                let name = format!("v{}", self.next_var);
                let value = self.expr(2);
                self.vars.push(name.clone());
                let body = self.stmt(d);
                self.vars.pop();
                Stmt::let_stmt(name, value, body)
            }
            5 => {
                let c = self.cond();
                let a = Stmt::Assert { condition: c, message: vec![MsgPart::Text("failed".into())] };
                let rest = self.stmt(d);
                Stmt::block(vec![a, rest])
            }
            _ => {
                let a = self.stmt(d);
                let b = self.stmt(d);
                Stmt::block(vec![a, b, Stmt::no_op()])
            }
        }
    }
}

/// Runs a statement, recording stores; false if an assertion failed (execution stops).
fn exec(s: &Stmt, env: &Env, trace: &mut Vec<(i64, Scalar)>) -> bool {
    let ev = |e: &Expr| Eval::new().eval(e, env)[0];
    match s {
        Stmt::Store { index, value, .. } => {
            trace.push((ev(index).as_i64(), ev(value)));
            true
        }
        Stmt::For { name, min, extent, body, .. } => {
            let (m, x) = (ev(min).as_i64(), ev(extent).as_i64());
            for i in m..m + x {
                let mut env2 = env.clone();
                env2.insert(name.clone(), vec![Scalar::Int(i)]);
                if !exec(body, &env2, trace) {
                    return false;
                }
            }
            true
        }
        Stmt::LetStmt { name, value, body } => {
            let mut env2 = env.clone();
            env2.insert(name.clone(), vec![ev(value)]);
            exec(body, &env2, trace)
        }
        Stmt::IfThenElse { condition, then_case, else_case } => {
            if ev(condition).is_true() {
                exec(then_case, env, trace)
            } else if let Some(e) = else_case {
                exec(e, env, trace)
            } else {
                true
            }
        }
        Stmt::Assert { condition, .. } => ev(condition).is_true(),
        Stmt::Block(v) => v.iter().all(|s| exec(s, env, trace)),
        other => panic!("not generated: {other}"),
    }
}
