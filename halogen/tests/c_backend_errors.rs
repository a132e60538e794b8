//! Failures in native code come back as `Err` with the interpreter's text, never as a
//! crash: failed bounds assertions, assertions inside (nested) parallel loops, bad
//! allocation sizes, and mismatched arguments. The mistakes a user can make through the
//! public API are checked on every target under test.

mod common;

use common::targets_under_test;
use halogen::backend::c::{generate_stmt, BufferArg, ParamArg};
use halogen::backend::jit::JitModule;
use halogen::ir::{CmpOp, ForKind, MsgPart, Stmt};
use halogen::prelude::*;
use halogen::runtime::{Buffer as RtBuffer, RawBuffer};
use std::collections::BTreeMap;

fn blur() -> (ImageParam, Func) {
    let input = ImageParam::new(Type::u16(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let bx = Func::new("blur_x");
    let by = Func::new("blur_y");
    bx.def((x, y), (input.at((x - 1, y)) + input.at((x, y)) + input.at((x + 1, y))) / 3);
    by.def((x, y), (bx.at((x, y - 1)) + bx.at((x, y)) + bx.at((x, y + 1))) / 3);
    let yo = Var::new("yo");
    by.split(y, yo, y, 4).parallel(yo).vectorize(x, 8);
    bx.compute_at(&by, yo);
    (input, by)
}

fn realize_err(target: &Target, input_extent: [i32; 2]) -> Error {
    let (input, f) = blur();
    let c = Pipeline::new(&[&f]).compile(target).unwrap();
    let img = Buffer::<u16>::new(&input_extent);
    let mut out = Buffer::<u16>::new(&[16, 16]);
    let mut args = Args::new();
    args.image(&input, &img);
    c.realize(&args, &mut out).unwrap_err()
}

#[test]
fn too_small_input_gives_the_interpreters_message() {
    for extent in [[16, 18], [18, 16], [5, 5]] {
        let expected = realize_err(&Target::interp(), extent);
        for target in targets_under_test() {
            let got = realize_err(&target, extent);
            assert!(matches!(got, Error::Runtime(_)), "{target}: {got}");
            assert_eq!(got, expected, "{target}");
            assert!(got.to_string().contains("'input' is too small"), "{target}: {got}");
        }
    }
}

#[test]
fn argument_mistakes_are_caught_before_native_code_runs() {
    let (input, f) = blur();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let mut out = Buffer::<u16>::new(&[16, 16]);
        let e = c.realize(&Args::new(), &mut out).unwrap_err().to_string();
        assert!(e.contains("no buffer given for ImageParam 'input'"), "{target}: {e}");
        let wrong = Buffer::<u8>::new(&[18, 18]);
        let mut args = Args::new();
        args.image(&input, &wrong);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("holds uint8"), "{target}: {e}");
        let mut out3 = Buffer::<u16>::new(&[4, 4, 4]);
        let img = Buffer::<u16>::new(&[18, 18]);
        let mut args = Args::new();
        args.image(&input, &img);
        let e = c.realize(&args, &mut out3).unwrap_err().to_string();
        assert!(e.contains("3 dimensions"), "{target}: {e}");
    }
}

/// `for y in [0, h) parallel { for x in [0, w) parallel { assert(x * y != bad, ...); out[..] = x + y } }`
fn nested_parallel_assert() -> Stmt {
    let (x, y) = (Expr::var(Type::i32(), "x"), Expr::var(Type::i32(), "y"));
    let bad = Expr::var(Type::i32(), "bad");
    let prod = Expr::mul(x.clone(), y.clone());
    let check = Stmt::Assert {
        condition: Expr::cmp(CmpOp::Ne, prod.clone(), bad),
        message: vec![
            MsgPart::Text("iteration (".into()),
            MsgPart::Value(x.clone()),
            MsgPart::Text(", ".into()),
            MsgPart::Value(y.clone()),
            MsgPart::Text(") hit ".into()),
            MsgPart::Value(prod),
        ],
    };
    let w = Expr::var(Type::i32(), "out.extent.0");
    let h = Expr::var(Type::i32(), "out.extent.1");
    let index = Expr::add(x.clone(), Expr::mul(y.clone(), Expr::var(Type::i32(), "out.stride.1")));
    // A heap allocation per row, so the error path must free it.
    let tmp = Stmt::Allocate {
        name: "tmp".into(),
        ty: Type::i32(),
        extents: vec![w.clone()],
        body: Box::new(Stmt::block(vec![
            Stmt::Store { buffer: "tmp".into(), value: x.clone(), index: x.clone(), predicate: None },
            check,
            Stmt::Store {
                buffer: "out".into(),
                value: Expr::add(Expr::load(Type::i32(), "tmp", x.clone(), None), y.clone()),
                index,
                predicate: None,
            },
        ])),
    };
    let inner = Stmt::for_loop("x", Expr::i32(0), w, ForKind::Parallel, tmp);
    Stmt::for_loop("y", Expr::i32(0), h, ForKind::Parallel, inner)
}

fn run_nested(bad: i32) -> (Result<(), Error>, Vec<i32>) {
    let out_arg = BufferArg { name: "out".into(), elem: Type::i32(), dims: 2, is_output: true };
    let bad_arg = ParamArg { name: "bad".into(), ty: Type::i32() };
    let m = generate_stmt(&nested_parallel_assert(), "nested", vec![out_arg], vec![bad_arg]).unwrap();
    let jit = JitModule::load(m).unwrap();
    let mut out = RtBuffer::<i32>::new(&[16, 9]);
    let mut params = BTreeMap::new();
    params.insert("bad".into(), Expr::i32(bad as i64));
    let images: BTreeMap<halogen::ir::Name, RawBuffer<'_>> = BTreeMap::new();
    let r = jit.run(&images, &params, vec![("out".into(), out.raw_mut())]);
    (r, out.into_vec())
}

#[test]
fn an_assert_in_nested_parallel_loops_fails_the_whole_run() {
    let (r, out) = run_nested(-1);
    r.unwrap();
    for y in 0..9 {
        for x in 0..16 {
            assert_eq!(out[(y * 16 + x) as usize], x + y);
        }
    }
    // 35 = 7 * 5 = 5 * 7 is hit by exactly two iterations; either may fail first.
    let e = run_nested(35).0.unwrap_err();
    assert!(
        [Error::Runtime("iteration (7, 5) hit 35".into()), Error::Runtime("iteration (5, 7) hit 35".into())]
            .contains(&e),
        "{e}"
    );
    // 12 is hit by several; whichever fails first reports.
    let e = run_nested(12).0.unwrap_err().to_string();
    assert!(e.contains(") hit 12"), "{e}");
}

#[test]
fn a_negative_allocation_size_is_the_interpreters_error() {
    let (x, n) = (Expr::var(Type::i32(), "x"), Expr::var(Type::i32(), "n"));
    let body = Stmt::for_loop(
        "x",
        Expr::i32(0),
        Expr::i32(1),
        ForKind::Serial,
        Stmt::Store { buffer: "big".into(), value: x.clone(), index: x, predicate: None },
    );
    let s =
        Stmt::Allocate { name: "big".into(), ty: Type::i32(), extents: vec![Expr::i32(4), n], body: Box::new(body) };
    let m = generate_stmt(&s, "alloc", vec![], vec![ParamArg { name: "n".into(), ty: Type::i32() }]).unwrap();
    let jit = JitModule::load(m).unwrap();
    let images = BTreeMap::new();
    for (n, expected) in [
        (-3, "allocation of 'big': extent 1 is negative (-3)"),
        (1 << 30, "allocation of 'big' asks for 4294967296 elements, more than the limit of 2147483648"),
    ] {
        let mut params = BTreeMap::new();
        params.insert("n".into(), Expr::i32(n));
        let e = jit.run(&images, &params, Vec::new()).unwrap_err();
        assert_eq!(e, Error::Runtime(expected.into()));
        // The interpreter says the same.
        let mut it = halogen::backend::Interpreter::new();
        it.bind_scalar("n", Expr::i32(n));
        assert_eq!(it.run(&s).unwrap_err(), e);
    }
}
