//! Round trips of hand-built statements with every kind of node, and the parser's errors.

use super::{parse_expr, parse_stmt, parse_stmt_with_funcs};
use crate::ir::{
    CallKind, Expr, ExprKind, Fold, ForKind, FuncId, Intrinsic, MsgPart, Range, Stmt, TailPlace, Type, VarBinding,
    VectorTail,
};
use std::collections::HashMap;

#[track_caller]
fn round_trip(s: &Stmt) {
    let text = s.to_string();
    let back = parse_stmt(&text).unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"));
    assert_eq!(&back, s, "--- text ---\n{text}--- reprinted ---\n{back}");
}

fn i(v: i64) -> Expr {
    Expr::i32(v)
}

fn var(n: &str) -> Expr {
    Expr::var(Type::i32(), n)
}

#[test]
fn constants_of_every_type() {
    let consts = vec![
        i(-7),
        Expr::int_imm(Type::u8(), 255),
        Expr::int_imm(Type::i64(), i64::MIN),
        Expr::int_imm(Type::u64(), -1),
        Expr::int_imm(Type::i16(), -3),
        Expr::bool_imm(true),
        Expr::bool_imm(false),
        Expr::float_imm(Type::f32(), 1.5),
        Expr::float_imm(Type::f32(), -0.0),
        Expr::float_imm(Type::f32(), 1e-7),
        Expr::float_imm(Type::f64(), 1e300),
        Expr::float_imm(Type::f64(), f64::INFINITY),
        Expr::float_imm(Type::f32(), f64::NEG_INFINITY),
        Expr::float_imm(Type::f64(), 0.1),
    ];
    for c in consts {
        round_trip(&Stmt::Evaluate(c));
    }
}

#[test]
fn every_intrinsic() {
    let f = Expr::cast(Type::f32(), var("x"));
    for which in Intrinsic::ALL {
        let e = match which {
            Intrinsic::Pow | Intrinsic::Atan2 | Intrinsic::FastPow => {
                Expr::intrinsic(Type::f32(), which, vec![f.clone(), f.clone()])
            }
            Intrinsic::Reinterpret => Expr::intrinsic(Type::u32(), which, vec![f.clone()]),
            Intrinsic::BitNot => Expr::intrinsic(Type::i32(), which, vec![var("x")]),
            _ => Expr::intrinsic(Type::f32(), which, vec![f.clone()]),
        };
        round_trip(&Stmt::Evaluate(e));
    }
}

#[test]
fn operators_and_vectors() {
    let x = var("x");
    let v = Expr::ramp(x.clone(), i(2), 8);
    let b = Expr::broadcast(Expr::param(Type::i32(), "n"), 8);
    let f = Expr::cast(Type::f32().with_lanes(8), Expr::add(v.clone(), b.clone()));
    let c = Expr::lt(v.clone(), b.clone());
    let body = Stmt::block(vec![
        Stmt::Evaluate(Expr::select(c.clone(), v.clone(), Expr::min(v.clone(), b.clone()))),
        Stmt::Evaluate(Expr::not(Expr::and(c.clone(), Expr::or(c.clone(), c)))),
        Stmt::Evaluate(Expr::intrinsic(f.ty(), Intrinsic::Sqrt, vec![f.clone()])),
        Stmt::Evaluate(Expr::intrinsic(Type::u32(), Intrinsic::Abs, vec![x.clone()])),
        Stmt::Evaluate(Expr::binary(crate::ir::BinOp::Shl, x.clone(), Expr::sub(x.clone(), i(-1)))),
        Stmt::Evaluate(Expr::let_in("t", v.clone(), Expr::max(Expr::var(v.ty(), "t"), b))),
    ]);
    round_trip(&Stmt::for_loop("x", i(0), i(4), ForKind::Serial, body));
}

#[test]
fn variables_carry_their_type_and_binding_where_the_scope_does_not_say() {
    let gain = Expr::param(Type::f32(), "gain");
    let free_plain = var("f.s0.x.min");
    let param_in_scope = Expr::param(Type::i32(), "x");
    let odd = Expr::var(Type::i16(), "x");
    let s = Stmt::block(vec![
        Stmt::Evaluate(gain),
        Stmt::Evaluate(free_plain),
        Stmt::for_loop(
            "x",
            i(0),
            i(4),
            ForKind::Parallel,
            Stmt::block(vec![Stmt::Evaluate(param_in_scope), Stmt::Evaluate(odd)]),
        ),
    ]);
    let text = s.to_string();
    assert!(text.contains("gain:float32\n"), "{text}");
    assert!(text.contains("f.s0.x.min:var:int32\n"), "{text}");
    assert!(text.contains("x:param:int32\n") && text.contains("x:int16\n"), "{text}");
    round_trip(&s);
}

#[test]
fn loads_stores_and_allocations() {
    let x = var("x");
    let idx = Expr::ramp(x.clone(), i(1), 4);
    let pred = Expr::lt(idx.clone(), Expr::broadcast(i(10), 4));
    let input = Expr::load(Type::u16(), "input", idx.clone(), Some(pred.clone()));
    let tmp = Expr::load(Type::u16(), "tmp", idx.clone(), None);
    let body = Stmt::block(vec![
        Stmt::Store { buffer: "tmp".into(), value: input.clone(), index: idx.clone(), predicate: None },
        Stmt::Store { buffer: "out".into(), value: Expr::add(tmp, input), index: idx, predicate: Some(pred) },
        Stmt::Free { name: "tmp".into() },
    ]);
    let s = Stmt::Allocate {
        name: "tmp".into(),
        ty: Type::u16(),
        extents: vec![Expr::param(Type::i32(), "w"), i(3)],
        body: Box::new(Stmt::for_loop("x", i(0), i(4), ForKind::Vectorized, body)),
    };
    let text = s.to_string();
    assert!(text.contains("input:uint16[ramp(x, 1, 4) if (ramp(x, 1, 4) < x4(10))]"), "{text}");
    assert!(text.contains("(tmp[ramp(x, 1, 4)] + "), "{text}");
    round_trip(&s);
}

#[test]
fn border_exchanges_in_both_forms() {
    let peer = var("p");
    let boxed = Stmt::Transfer {
        op: crate::ir::TransferOp::Receive,
        peer: peer.clone(),
        buffer: "f".into(),
        ty: Type::u16(),
        mins: vec![i(0), var("y")],
        extents: vec![i(8), i(2)],
        strides: vec![],
    };
    let flat = Stmt::Transfer {
        op: crate::ir::TransferOp::Send,
        peer: peer.clone(),
        buffer: "f".into(),
        ty: Type::u16(),
        mins: vec![Expr::mul(var("y"), i(8))],
        extents: vec![i(8), i(2)],
        strides: vec![i(1), i(8)],
    };
    let combined = Stmt::Transfer {
        op: crate::ir::TransferOp::Combine(crate::ir::CombineOp::Max),
        peer: peer.clone(),
        buffer: "h".into(),
        ty: Type::i32(),
        mins: vec![i(0)],
        extents: vec![i(256)],
        strides: vec![],
    };
    let s = Stmt::block(vec![
        Stmt::for_loop(
            "p",
            i(0),
            Expr::param(Type::i32(), "__ranks"),
            ForKind::Serial,
            Stmt::block(vec![boxed, flat, combined]),
        ),
        Stmt::TransferWait,
    ]);
    let text = s.to_string();
    assert!(text.contains("receive f:uint16([0, 8], [y:var:int32, 2]) from rank p"), "{text}");
    assert!(text.contains("combine max h:int32([0, 256]) from rank p"), "{text}");
    assert!(text.contains("send f:uint16[(y:var:int32 * 8)] extents [8, 2] strides [1, 8] to rank p"), "{text}");
    assert!(text.contains("wait transfers"), "{text}");
    round_trip(&s);
}

#[test]
fn lets_and_allocations_that_end_before_their_block_are_braced() {
    let e = Stmt::Evaluate(var("y"));
    let s = Stmt::Block(vec![
        Stmt::let_stmt("y", i(1), e.clone()),
        Stmt::Allocate { name: "b".into(), ty: Type::f32(), extents: vec![], body: Box::new(Stmt::no_op()) },
        Stmt::Block(vec![]),
        Stmt::let_stmt("y", i(2), Stmt::block(vec![e.clone(), e])),
    ]);
    let text = s.to_string();
    assert!(text.starts_with("{\n  let y = 1\n  y\n}\n{\n  allocate b[float32 * ]\n}\n{\n}\nlet y = 2\n"), "{text}");
    round_trip(&s);
}

#[test]
fn every_statement_kind() {
    let x = var("x");
    let msg = vec![
        MsgPart::Text("x is {odd} ".into()),
        MsgPart::Value(Expr::add(x.clone(), i(1))),
        MsgPart::Text(" \"quoted\"\n".into()),
    ];
    let provide = Stmt::Provide { name: "f".into(), values: vec![x.clone()], args: vec![x.clone(), i(0)] };
    let tuple = Stmt::Provide {
        name: "g".into(),
        values: vec![x.clone(), Expr::float_imm(Type::f32(), 2.0)],
        args: vec![x.clone()],
    };
    let image =
        Expr::make(Type::u8(), ExprKind::Call { name: "img".into(), args: vec![x.clone()], kind: CallKind::Image });
    let body = Stmt::block(vec![
        Stmt::Assert { condition: Expr::le(x.clone(), i(9)), message: msg },
        Stmt::ProducerConsumer { name: "f".into(), is_producer: true, body: Box::new(provide) },
        Stmt::ProducerConsumer { name: "f".into(), is_producer: false, body: Box::new(Stmt::no_op()) },
        Stmt::IfThenElse {
            condition: Expr::eq_(x.clone(), i(0)),
            then_case: Box::new(tuple),
            else_case: Some(Box::new(Stmt::Evaluate(image))),
        },
        Stmt::if_then(Expr::bool_imm(false), Stmt::no_op()),
    ]);
    let realize = Stmt::Realize {
        name: "f".into(),
        types: vec![Type::i32(), Type::f32()],
        bounds: vec![Range::new(i(0), i(8)), Range::new(Expr::param(Type::i32(), "m"), i(2))],
        fold: None,
        body: Box::new(body),
    };
    let mut s = realize;
    for (k, kind) in
        [ForKind::Unrolled, ForKind::GpuThread, ForKind::GpuBlock, ForKind::Distributed].into_iter().enumerate()
    {
        s = Stmt::for_loop(format!("l{k}"), i(0), i(2), kind, s);
    }
    round_trip(&Stmt::for_loop("x", i(0), i(10), ForKind::Serial, s));
}

#[test]
fn loop_tails_and_folded_realizes() {
    let (xo, n) = (var("xo"), Expr::param(Type::i32(), "n"));
    let fits = Expr::le(i(8), n.clone());
    // A per-iteration tail reads the loop's variable, and its guard a variable bound inside.
    let last = Expr::le(Expr::add(Expr::mul(xo.clone(), i(8)), i(8)), n.clone());
    let inner = Expr::lt(var("x.v"), n.clone());
    let tails = vec![
        VectorTail {
            condition: fits.clone(),
            guard_term: fits,
            place: TailPlace::Loop,
            var: "x".into(),
            unclamped: i(0),
        },
        VectorTail {
            condition: last,
            guard_term: inner,
            place: TailPlace::EachIteration,
            var: "x.v".into(),
            unclamped: Expr::mul(xo.clone(), i(8)),
        },
    ];
    let body = Stmt::Provide { name: "f".into(), values: vec![xo.clone()], args: vec![xo.clone(), i(0)] };
    let mut s = Stmt::for_loop("xo", i(0), Expr::div(n.clone(), i(8)), ForKind::Serial, body);
    if let Stmt::For { tails: t, .. } = &mut s {
        *t = tails;
    }
    let s = Stmt::Realize {
        name: "f".into(),
        types: vec![Type::f32()],
        bounds: vec![Range::new(i(0), n.clone()), Range::new(i(0), i(3))],
        fold: Some(Fold { dim: 1, factor: 4 }),
        body: Box::new(s),
    };
    let text = s.to_string();
    assert!(text.starts_with("realize f([0, n], [0, 3]) : float32 fold(1, 4) {\n  for (xo, 0, (n / 8)) tail((8 <= n), (8 <= n), x = 0) tail_each((((xo * 8) + 8) <= n), (x.v:var:int32 < n), x.v = (xo * 8)) {\n"), "{text}");
    round_trip(&s);
    let err = parse_stmt("realize f([0, 4]) : int32 fold(x, 2) {\n}\n").unwrap_err().to_string();
    assert!(err.contains("expected a dimension, found 'x'"), "{err}");
}

#[test]
fn func_calls_need_the_funcs() {
    // `f` has one int32 value; value 1 of the tuple `g` is a float32.
    let (f, g) = (FuncId(3), FuncId(4));
    let call = |name: &str, ty: Type, func, value_index, tuple| {
        let kind = CallKind::Func { func, value_index, tuple };
        Expr::make(ty, ExprKind::Call { name: name.into(), args: vec![var("x")], kind })
    };
    let call_f = call("f", Type::i32(), f, 0, false);
    let call_g = call("g", Type::f32(), g, 1, true);
    let s = Stmt::for_loop(
        "x",
        i(0),
        i(4),
        ForKind::Serial,
        Stmt::block(vec![Stmt::Evaluate(call_f), Stmt::Evaluate(call_g)]),
    );
    let text = s.to_string();
    // The IR does not know a Func's value types: a Func call always says its type.
    assert!(text.contains("  f:int32(x)\n  g.1:float32(x)\n"), "{text}");
    let funcs = HashMap::from([("f".into(), f), ("g".into(), g)]);
    assert_eq!(parse_stmt_with_funcs(&text, &funcs).unwrap(), s);
    // Without the Funcs, a typed call is an image's.
    let images = parse_stmt(&text).unwrap();
    assert_ne!(images, s);
    assert_eq!(images.to_string(), text);
    let err = parse_stmt("f(x)\n").unwrap_err().to_string();
    assert!(err.contains("'f' is neither a Func given to the parser nor an intrinsic"), "{err}");
    let err = parse_stmt_with_funcs("f(0)\n", &funcs).unwrap_err().to_string();
    assert!(err.contains("the call to Func 'f' needs its type (f:TYPE(...))"), "{err}");
}

#[test]
fn errors_name_the_line_and_what_was_expected() {
    let err = parse_stmt("for (x, 0, 4) {\n  out[x] = (x + )\n}\n").unwrap_err().to_string();
    assert!(err.contains("line 2, column 17: expected an expression, found ')'"), "{err}");
    let err = parse_stmt("out[0] = input[0]\n").unwrap_err().to_string();
    assert!(err.contains("needs its element type"), "{err}");
    let err = parse_stmt("for (x, 0, 4) {\n").unwrap_err().to_string();
    assert!(err.contains("expected '}', found the end of the text"), "{err}");
    assert!(parse_expr("(1 ? 2)").is_err());
}

#[test]
fn free_variables_default_to_int32_parameters() {
    let e = parse_expr("(a + b:param:int32)").unwrap();
    let ExprKind::Binary(_, a, b) = e.kind() else { panic!("{e}") };
    assert_eq!(*a, Expr::param(Type::i32(), "a"));
    assert_eq!(*b, Expr::param(Type::i32(), "b"));
    assert!(matches!(a.kind(), ExprKind::Var { binding: VarBinding::Param, .. }));
}

#[test]
fn comments_are_skipped() {
    let s = parse_stmt("; a comment\nout[0] = 1 ; another\n").unwrap();
    assert_eq!(s, Stmt::Store { buffer: "out".into(), value: i(1), index: i(0), predicate: None });
}
