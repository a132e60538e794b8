//! One test per rule: a hand-built bad statement is rejected with the rule's message, and
//! the corrected statement passes.

use super::{verify, verify_with_funcs, Phase};
use crate::ir::{
    CallKind, Expr, ExprKind, Fold, ForKind, FuncId, Intrinsic, MsgPart, Range, Stmt, TailPlace, Type, VectorTail,
};
use std::collections::{HashMap, HashSet};

fn i32v(n: &str) -> Expr {
    Expr::var(Type::i32(), n)
}

fn external() -> HashSet<crate::ir::Name> {
    ["out".into(), "input".into()].into_iter().collect()
}

fn store(value: Expr, index: Expr) -> Stmt {
    Stmt::Store { buffer: "out".into(), value, index, predicate: None }
}

fn in_loop(name: &str, body: Stmt) -> Stmt {
    Stmt::for_loop(name, Expr::i32(0), Expr::i32(8), ForKind::Serial, body)
}

fn check(s: &Stmt, phase: Phase) -> Result<(), String> {
    verify(s, "test pass", &external(), phase).map_err(|e| e.to_string())
}

#[track_caller]
fn rejects(s: &Stmt, phase: Phase, needle: &str) {
    let err = check(s, phase).expect_err("the verifier accepted a bad statement");
    assert!(err.contains(needle), "expected '{needle}' in:\n{err}");
    assert!(err.starts_with("internal error in test pass: "), "{err}");
}

#[track_caller]
fn accepts(s: &Stmt, phase: Phase) {
    if let Err(e) = check(s, phase) {
        panic!("the verifier rejected a good statement:\n{e}");
    }
}

#[test]
fn unbound_variables_are_rejected_once_bounds_are_inferred() {
    let bad = store(i32v("x"), Expr::i32(0));
    rejects(&bad, Phase::BoundsInferred, "variable 'x' is used outside any let or loop");
    accepts(&bad, Phase::Scheduled);
    accepts(&in_loop("x", bad.clone()), Phase::Vectorized);
    accepts(&store(Expr::param(Type::i32(), "n"), Expr::i32(0)), Phase::Vectorized);
}

#[test]
fn unknown_buffers_are_rejected() {
    let bad = Stmt::Store { buffer: "tmp".into(), value: Expr::i32(1), index: Expr::i32(0), predicate: None };
    rejects(&bad, Phase::Vectorized, "store to 'tmp', which is neither allocated here nor a pipeline buffer");
    let good = Stmt::Allocate { name: "tmp".into(), ty: Type::i32(), extents: vec![Expr::i32(4)], body: Box::new(bad) };
    accepts(&good, Phase::Vectorized);
    let load = store(Expr::load(Type::i32(), "nowhere", Expr::i32(0), None), Expr::i32(0));
    rejects(&load, Phase::Vectorized, "load from 'nowhere'");
}

#[test]
fn loads_and_stores_match_the_allocation_type() {
    let s = |ty: Type| Stmt::Allocate {
        name: "tmp".into(),
        ty,
        extents: vec![Expr::i32(4)],
        body: Box::new(Stmt::Store {
            buffer: "tmp".into(),
            value: Expr::int_imm(Type::u8(), 3),
            index: Expr::i32(0),
            predicate: None,
        }),
    };
    rejects(&s(Type::u16()), Phase::Vectorized, "store to of uint8 elements on 'tmp', which is allocated with uint16");
    accepts(&s(Type::u8()), Phase::Vectorized);
}

#[test]
fn binary_operands_must_agree_and_give_the_result_type() {
    let a = Expr::i32(1);
    let b = Expr::int_imm(Type::i16(), 2);
    let bad = Expr::make(Type::i32(), crate::ir::ExprKind::Binary(crate::ir::BinOp::Add, a.clone(), b));
    rejects(&store(bad, Expr::i32(0)), Phase::Vectorized, "operands of Add differ in type: int32 and int16");
    let bad = Expr::make(Type::i16(), crate::ir::ExprKind::Binary(crate::ir::BinOp::Add, a.clone(), a.clone()));
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "Add of int32 operands has type int16");
    let bad = Expr::make(Type::i32(), crate::ir::ExprKind::Binary(crate::ir::BinOp::And, a.clone(), a.clone()));
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "operands of And are int32, not bool");
    accepts(&store(Expr::add(a.clone(), a), Expr::i32(0)), Phase::Vectorized);
}

#[test]
fn comparisons_give_bool_of_the_operand_lanes() {
    let v = Expr::ramp(Expr::i32(0), Expr::i32(1), 4);
    let bad = Expr::make(Type::bool(), crate::ir::ExprKind::Cmp(crate::ir::CmpOp::Lt, v.clone(), v.clone()));
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "comparison of int32x4 operands has type bool");
    accepts(&Stmt::Evaluate(Expr::lt(v.clone(), v)), Phase::Vectorized);
}

#[test]
fn select_needs_a_bool_condition_and_equal_sides() {
    let sel = |c: Expr, a: Expr, b: Expr| {
        let t = a.ty();
        Stmt::Evaluate(Expr::make(t, crate::ir::ExprKind::Select(c, a, b)))
    };
    let one = Expr::i32(1);
    rejects(&sel(one.clone(), one.clone(), one.clone()), Phase::Vectorized, "select condition is int32");
    let c4 = Expr::broadcast(Expr::bool_imm(true), 4);
    rejects(
        &sel(c4, one.clone(), one.clone()),
        Phase::Vectorized,
        "select condition is boolx4, not bool of 1 or 1 lanes",
    );
    let half = Expr::int_imm(Type::i16(), 1);
    rejects(&sel(Expr::bool_imm(true), one.clone(), half), Phase::Vectorized, "select sides are int32 and int16");
    accepts(&sel(Expr::bool_imm(true), one.clone(), one), Phase::Vectorized);
}

#[test]
fn load_and_store_indices_are_int32_of_the_value_lanes() {
    let idx16 = Expr::int_imm(Type::i16(), 0);
    let bad = Expr::make(
        Type::u16(),
        crate::ir::ExprKind::Load { buffer: "input".into(), index: idx16.clone(), predicate: None },
    );
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "load index is int16, not int32");
    rejects(&store(Expr::i32(0), idx16), Phase::Vectorized, "store index is int16, not int32");
    let ramp = Expr::ramp(Expr::i32(0), Expr::i32(1), 4);
    rejects(
        &store(Expr::i32(0), ramp.clone()),
        Phase::Vectorized,
        "store index is int32x4, not int32 of the value's 1 lanes",
    );
    let pred = Some(Expr::bool_imm(true));
    let bad = Stmt::Store {
        buffer: "out".into(),
        value: Expr::broadcast(Expr::i32(0), 4),
        index: ramp.clone(),
        predicate: pred,
    };
    rejects(&bad, Phase::Vectorized, "store predicate is bool, not bool of 4 lanes");
    let good = Stmt::Store {
        buffer: "out".into(),
        value: Expr::load(Type::i32(), "input", ramp.clone(), None),
        index: ramp.clone(),
        predicate: Some(Expr::lt(ramp.clone(), Expr::broadcast(Expr::i32(3), 4))),
    };
    accepts(&good, Phase::Vectorized);
}

#[test]
fn ramps_and_broadcasts_have_consistent_lanes() {
    let bad = Expr::make(
        Type::i32().with_lanes(8),
        crate::ir::ExprKind::Ramp { base: Expr::i32(0), stride: Expr::i32(1), lanes: 4 },
    );
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "ramp of 4 lanes has type int32x8");
    let bad = Expr::make(
        Type::i32().with_lanes(4),
        crate::ir::ExprKind::Ramp { base: Expr::i32(0), stride: Expr::int_imm(Type::i16(), 1), lanes: 4 },
    );
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "ramp base int32 and stride int16");
    let bad = Expr::make(Type::i32().with_lanes(8), crate::ir::ExprKind::Broadcast { value: Expr::i32(0), lanes: 4 });
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "broadcast of int32 to 4 lanes has type int32x8");
    let nested = Expr::make(
        Type::i32().with_lanes(16),
        crate::ir::ExprKind::Broadcast { value: Expr::ramp(Expr::i32(0), Expr::i32(1), 4), lanes: 16 },
    );
    rejects(&Stmt::Evaluate(nested), Phase::Vectorized, "broadcast of int32x4 to 16 lanes");
    accepts(&Stmt::Evaluate(Expr::broadcast(Expr::i32(0), 4)), Phase::Vectorized);
}

#[test]
fn uses_of_a_let_have_the_type_of_its_value() {
    let body = store(Expr::var(Type::i16(), "t"), Expr::i32(0));
    let bad = Stmt::let_stmt("t", Expr::i32(3), body.clone());
    rejects(&bad, Phase::Vectorized, "variable 't' is used as int16 but its let or loop binds a int32");
    accepts(&Stmt::let_stmt("t", Expr::int_imm(Type::i16(), 3), body), Phase::BoundsInferred);
    let bad = Expr::let_in("u", Expr::bool_imm(true), Expr::add(i32v("u"), Expr::i32(1)));
    rejects(
        &store(bad, Expr::i32(0)),
        Phase::Vectorized,
        "variable 'u' is used as int32 but its let or loop binds a bool",
    );
}

#[test]
fn loop_bounds_are_int32_scalars() {
    let body = store(i32v("x"), i32v("x"));
    let bad = Stmt::for_loop("x", Expr::int_imm(Type::i64(), 0), Expr::i32(4), ForKind::Serial, body.clone());
    rejects(&bad, Phase::Vectorized, "min of loop 'x' '(int64)0' is int64, not an int32 scalar");
    let bad = Stmt::for_loop("x", Expr::i32(0), Expr::broadcast(Expr::i32(4), 2), ForKind::Serial, body);
    rejects(&bad, Phase::Vectorized, "extent of loop 'x'");
}

#[test]
fn conditions_are_scalar_bools() {
    let bad = Stmt::if_then(Expr::i32(1), Stmt::Evaluate(Expr::i32(0)));
    rejects(&bad, Phase::Vectorized, "if condition '1' is int32, not a bool scalar");
    let bad = Stmt::Assert { condition: Expr::broadcast(Expr::bool_imm(true), 4), message: vec![] };
    rejects(&bad, Phase::Vectorized, "assert condition 'x4(true)' is boolx4");
    let good = Stmt::Assert {
        condition: Expr::bool_imm(true),
        message: vec![MsgPart::Text("n is ".into()), MsgPart::Value(Expr::param(Type::i32(), "n"))],
    };
    accepts(&good, Phase::Vectorized);
}

#[test]
fn casts_keep_lanes_and_intrinsics_match_lanes() {
    let bad = Expr::make(Type::f32().with_lanes(4), crate::ir::ExprKind::Cast(Expr::i32(1)));
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "cast from int32 to float32x4 changes the lanes");
    let v = Expr::broadcast(Expr::float_imm(Type::f32(), 2.0), 8);
    let bad = Expr::intrinsic(Type::f32().with_lanes(4), Intrinsic::Sqrt, vec![v.clone()]);
    rejects(&Stmt::Evaluate(bad), Phase::Vectorized, "has 8 lanes for a float32x4 result");
    accepts(&Stmt::Evaluate(Expr::intrinsic(v.ty(), Intrinsic::Sqrt, vec![v])), Phase::Vectorized);
}

#[test]
fn provide_and_realize_are_gone_after_flattening() {
    let provide = Stmt::Provide { name: "f".into(), values: vec![Expr::i32(1)], args: vec![Expr::i32(0)] };
    let realize = Stmt::Realize {
        name: "f".into(),
        types: vec![Type::i32()],
        bounds: vec![Range::new(Expr::i32(0), Expr::i32(4))],
        fold: None,
        body: Box::new(provide.clone()),
    };
    accepts(&realize, Phase::BoundsInferred);
    rejects(&realize, Phase::Flattened, "realize of 'f' remains after storage flattening");
    rejects(&provide, Phase::Flattened, "provide to 'f' remains after storage flattening");
    let call = Expr::make(
        Type::u16(),
        crate::ir::ExprKind::Call { name: "input".into(), args: vec![Expr::i32(0)], kind: crate::ir::CallKind::Image },
    );
    accepts(&Stmt::Evaluate(call.clone()), Phase::BoundsInferred);
    rejects(&Stmt::Evaluate(call), Phase::Flattened, "call to 'input' remains after storage flattening");
}

#[test]
fn gpu_and_distributed_loops_nest_in_order() {
    let loop_ = |name: &str, kind: ForKind, body: Stmt| Stmt::for_loop(name, Expr::i32(0), Expr::i32(4), kind, body);
    let leaf = Stmt::no_op();
    let thread = loop_("t", ForKind::GpuThread, leaf.clone());
    rejects(&thread, Phase::Vectorized, "GPU thread loop 't' is not inside a GPU block loop");
    accepts(&loop_("b", ForKind::GpuBlock, thread.clone()), Phase::Vectorized);
    let block_in_thread =
        loop_("b", ForKind::GpuBlock, loop_("t", ForKind::GpuThread, loop_("b2", ForKind::GpuBlock, leaf.clone())));
    rejects(&block_in_thread, Phase::Vectorized, "GPU block loop 'b2' is inside a GPU thread loop");
    let dist_in_gpu = loop_("b", ForKind::GpuBlock, loop_("d", ForKind::Distributed, leaf.clone()));
    rejects(&dist_in_gpu, Phase::Vectorized, "distributed loop 'd' is inside a GPU loop");
    accepts(&loop_("d", ForKind::Distributed, loop_("b", ForKind::GpuBlock, thread)), Phase::Vectorized);
}

#[test]
fn unrolled_and_vectorized_loops_have_constant_extents_after_their_passes() {
    let n = Expr::param(Type::i32(), "n");
    let unrolled = Stmt::for_loop("x", Expr::i32(0), n.clone(), ForKind::Unrolled, Stmt::no_op());
    accepts(&unrolled, Phase::Flattened);
    rejects(&unrolled, Phase::Unrolled, "unrolled loop 'x' has non-constant extent 'n' after unrolling");
    let vectorized = Stmt::for_loop("x", Expr::i32(0), n, ForKind::Vectorized, Stmt::no_op());
    accepts(&vectorized, Phase::Unrolled);
    rejects(&vectorized, Phase::Vectorized, "vectorized loop 'x' has non-constant extent 'n' after vectorization");
    let constant = Stmt::for_loop("x", Expr::i32(0), Expr::i32(8), ForKind::Vectorized, Stmt::no_op());
    accepts(&constant, Phase::Vectorized);
}

#[test]
fn the_excerpt_shows_the_statement() {
    let bad = in_loop("x", store(i32v("y"), i32v("x")));
    let err = check(&bad, Phase::Vectorized).unwrap_err();
    assert!(err.contains("for (x, 0, 8) {"), "{err}");
}

#[test]
fn func_calls_have_the_type_of_the_value_they_name() {
    let call = |ty: Type, value_index, tuple| {
        let kind = CallKind::Func { func: FuncId(0), value_index, tuple };
        Stmt::Evaluate(Expr::make(ty, ExprKind::Call { name: "f".into(), args: vec![Expr::i32(0)], kind }))
    };
    let types = HashMap::from([("f".into(), vec![Type::u8(), Type::f32()])]);
    let check_f = |s: &Stmt| {
        verify_with_funcs(s, "test pass", &external(), &types, Phase::BoundsInferred).map_err(|e| e.to_string())
    };
    assert_eq!(check_f(&call(Type::f32(), 1, true)), Ok(()));
    let err = check_f(&call(Type::u8(), 1, true)).unwrap_err();
    assert!(err.contains("call to value 1 of 'f', a float32, has type uint8"), "{err}");
    let err = check_f(&call(Type::f32(), 2, true)).unwrap_err();
    assert!(err.contains("call to value 2 of 'f', which has 2 values"), "{err}");
    let err = check_f(&call(Type::u8(), 0, false)).unwrap_err();
    assert!(err.contains("call to 'f' (of 2 values) is marked tuple: false"), "{err}");
    // Without the Funcs' types, only the phase rules apply to the call.
    accepts(&call(Type::u8(), 1, true), Phase::BoundsInferred);
}

#[test]
fn a_fold_names_a_dimension_and_keeps_rows() {
    let realize = |fold| Stmt::Realize {
        name: "f".into(),
        types: vec![Type::i32()],
        bounds: vec![Range::new(Expr::i32(0), Expr::i32(4)), Range::new(Expr::i32(0), Expr::i32(4))],
        fold,
        body: Box::new(Stmt::no_op()),
    };
    accepts(&realize(Some(Fold { dim: 1, factor: 2 })), Phase::BoundsInferred);
    rejects(&realize(Some(Fold { dim: 2, factor: 2 })), Phase::BoundsInferred, "realize of 'f' over 2 dimensions");
    rejects(
        &realize(Some(Fold { dim: 0, factor: 0 })),
        Phase::BoundsInferred,
        "is folded by Fold { dim: 0, factor: 0 }",
    );
}

#[test]
fn loop_tails_are_conditions_and_an_int32_value() {
    let with_tail = |unclamped: Expr| {
        let fits = Expr::le(Expr::i32(8), Expr::param(Type::i32(), "n"));
        let tail = VectorTail {
            condition: fits.clone(),
            guard_term: fits,
            place: TailPlace::Loop,
            var: "v".into(),
            unclamped,
        };
        let mut s = in_loop("x", Stmt::no_op());
        if let Stmt::For { tails, .. } = &mut s {
            tails.push(tail);
        }
        s
    };
    accepts(&with_tail(i32v("x")), Phase::Flattened);
    let bad = with_tail(Expr::float_imm(Type::f32(), 1.0));
    rejects(&bad, Phase::Flattened, "tail of loop 'x' for 'v' has types bool, bool, float32, not bool, bool, int32");
}
