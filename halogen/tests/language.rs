//! Language features end to end: tuples, inline reductions, argmin, boundary conditions,
//! reduction schedules, bounds and storage order, on every target under test.

mod common;

use common::{assert_pixels, realize, targets_under_test};
use halogen::boundary;
use halogen::prelude::*;

/// Checks that `f` over [0, extent) is `expected` on every target.
#[track_caller]
fn check_1d<T: Element>(f: &Func, extent: i32, args: &Args, expected: &[T]) {
    for target in targets_under_test() {
        let got = realize::<T>(&target, f, args, &[0], &[extent]);
        assert_pixels(&got, expected, format_args!("'{}' on {target}", f.name()));
    }
}

#[test]
fn tuple_valued_func() {
    let x = Var::new("x");
    let pair = Func::new("pair");
    pair.def_tuple(x, &[x * 2, Expr::from(x) * 0.5f32]);
    pair.compute_root();
    let out = Func::new("combined");
    out.def(x, pair.at_tuple(x, 0).cast::<f32>() + pair.at_tuple(x, 1));
    check_1d::<f32>(&out, 5, &Args::new(), &[0.0, 2.5, 5.0, 7.5, 10.0]);
}

#[test]
fn inline_reductions() {
    let input = ImageParam::new(Type::i32(), 1, "values");
    let x = Var::new("x");
    let r = RDom::new(&[(Expr::from(0), Expr::from(4))]);
    let s = Func::new("window_sum");
    s.def(x, sum(input.at(x + r.x())));
    let m = Func::new("window_max");
    m.def(x, maximum(input.at(x + r.x())));
    let data = Buffer::<i32>::from_vec(vec![3, -1, 4, 1, -5, 9, 2, 6], &[8]).unwrap();
    let mut args = Args::new();
    args.image(&input, &data);
    check_1d::<i32>(&s, 5, &args, &[7, -1, 9, 7, 12]);
    check_1d::<i32>(&m, 5, &args, &[4, 4, 9, 9, 9]);
}

#[test]
fn argmin_finds_first_minimum() {
    let input = ImageParam::new(Type::i32(), 1, "values");
    let r = RDom::new(&[(Expr::from(0), input.width())]);
    let am = argmin(input.at(r.x()));
    let f = Func::new("where");
    f.def((), am[0].clone());
    let g = Func::new("what");
    g.def((), am[1].clone());
    let data = Buffer::<i32>::from_vec(vec![5, 2, 7, 2, 9], &[5]).unwrap();
    let mut args = Args::new();
    args.image(&input, &data);
    for (func, expected) in [(&f, 1), (&g, 2)] {
        for target in targets_under_test() {
            let out = realize::<i32>(&target, func, &args, &[], &[]);
            assert_pixels(&out, &[expected], format_args!("'{}' on {target}", func.name()));
        }
    }
}

#[test]
fn boundary_conditions() {
    let input = ImageParam::new(Type::u8(), 1, "row");
    let x = Var::new("x");
    let data = Buffer::<u8>::from_vec(vec![10, 20, 30], &[3]).unwrap();
    let region = input.bounds();
    let cases: Vec<(Func, Vec<u8>)> = vec![
        (boundary::repeat_edge(&input, &region), vec![10, 10, 10, 20, 30, 30, 30]),
        (boundary::constant_exterior(&input, 7, &region), vec![7, 7, 10, 20, 30, 7, 7]),
        (boundary::repeat_image(&input, &region), vec![20, 30, 10, 20, 30, 10, 20]),
        (boundary::mirror_image(&input, &region), vec![20, 10, 10, 20, 30, 30, 20]),
        (boundary::mirror_interior(&input, &region), vec![30, 20, 10, 20, 30, 20, 10]),
    ];
    for (bc, expected) in cases {
        let out = Func::new(&format!("{}_shifted", bc.name()));
        out.def(x, bc.at(x - 2));
        let mut args = Args::new();
        args.image(&input, &data);
        check_1d::<u8>(&out, 7, &args, &expected);
    }
}

#[test]
fn scheduled_reduction_and_bound() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let r = RDom::new(&[(Expr::from(0), Expr::from(10)), (Expr::from(0), Expr::from(3))]);
    let f = Func::new("accumulated");
    f.def((x, y), x + y);
    f.update((x, y), f.at((x, y)) + r.x() * r.y() + x);
    let (ro, ri) = (r.x(), Var::new("ri"));
    f.update_stage(0)
        .split(ro, ro, ri, 4)
        .reorder(&[VarOrRVar::from(x), ri.into(), ro.into()])
        .vectorize(x, 4)
        .parallel(y);
    f.bound(x, 0, 6).bound(y, 0, 2).reorder_storage(&[y, x]);
    let g = Func::new("g");
    g.def((x, y), f.at((x, y)));
    f.compute_root();
    // sum over r.x in [0,10), r.y in [0,3) of r.x*r.y = 45 * 3, plus 30 * x.
    let expected = Buffer::<i32>::from_fn(&[6, 2], |c| c[0] + c[1] + 135 + 30 * c[0]);
    for target in targets_under_test() {
        let c = Pipeline::new(&[&g]).compile(&target).unwrap();
        let mut out = Buffer::<i32>::new(&[6, 2]);
        c.realize(&Args::new(), &mut out).unwrap();
        assert_pixels(&out, expected.as_slice(), format_args!("{target}"));
        // A consumer that needs more than the bound is an error naming the Func.
        let mut big = Buffer::<i32>::new(&[7, 2]);
        let e = c.realize(&Args::new(), &mut big).unwrap_err().to_string();
        assert!(e.contains("accumulated"), "{target}: {e}");
    }
}

#[test]
fn unroll_full_and_float_params() {
    let (x, c) = (Var::new("x"), Var::new("c"));
    let gain = Param::<f32>::new("gain");
    let f = Func::new("planar");
    f.def((x, c), (Expr::from(x) + Expr::from(c) * 10) * gain.expr());
    f.bound(c, 0, 3).reorder(&[c, x]).unroll_full(c);
    let mut args = Args::new();
    args.param(&gain, 0.5);
    for target in targets_under_test() {
        let out = realize::<f32>(&target, &f, &args, &[0, 0], &[2, 3]);
        assert_pixels(&out, &[0.0, 0.5, 5.0, 5.5, 10.0, 10.5], format_args!("{target}"));
    }
}

#[test]
fn parallel_tasks_split_a_loop_into_parallel_tasks() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let r = RDom::new(&[(Expr::from(0), Expr::from(5))]);
    let f = Func::new("tasks");
    f.def((x, y), x * 3 + y);
    f.update((x, y), f.at((x, y)) + r.x() * y);
    // Tasks of 4 rows over 23 rows: the last task is shifted inwards, as a split is.
    f.parallel_tasks(y, 4).vectorize(x, 8);
    f.update_stage(0).parallel_tasks(y, 3);
    let expected = Buffer::<i32>::from_fn(&[13, 23], |c| c[0] * 3 + c[1] + 10 * c[1]);
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let nest = c.lowered_stmt().to_string();
        assert!(nest.contains("parallel (tasks.s0.y.y, ") && nest.contains("for (tasks.s0.y.y_ti, 0, 4)"), "{nest}");
        let mut out = Buffer::<i32>::new(&[13, 23]);
        c.realize(&Args::new(), &mut out).unwrap();
        assert_pixels(&out, expected.as_slice(), format_args!("{target}"));
    }
    let g = Func::new("no_tasks");
    g.def(x, x);
    g.parallel_tasks(x, 0);
    let e = common::compile_error(&Target::interp(), &g);
    assert!(e.contains("Func 'no_tasks': parallel_tasks: the factor must be at least 1, got 0"), "{e}");
}
