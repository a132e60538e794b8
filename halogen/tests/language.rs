//! Language features end to end: tuples, inline reductions, argmin, boundary conditions,
//! reduction schedules, bounds and storage order.

use halogen::boundary;
use halogen::prelude::*;

fn realize_1d<T: Element>(f: &Func, extent: i32, args: &Args) -> Vec<T> {
    let c = Pipeline::new(&[f]).compile(&Target::interp()).unwrap();
    let mut out = Buffer::<T>::new(&[extent]);
    c.realize(args, &mut out).unwrap();
    out.as_slice().to_vec()
}

#[test]
fn tuple_valued_func() {
    let x = Var::new("x");
    let pair = Func::new("pair");
    pair.def_tuple(x, &[x * 2, Expr::from(x) * 0.5f32]);
    pair.compute_root();
    let out = Func::new("combined");
    out.def(x, pair.at_tuple(x, 0).cast::<f32>() + pair.at_tuple(x, 1));
    let got: Vec<f32> = realize_1d(&out, 5, &Args::new());
    assert_eq!(got, vec![0.0, 2.5, 5.0, 7.5, 10.0]);
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
    let sums: Vec<i32> = realize_1d(&s, 5, &args);
    assert_eq!(sums, vec![7, -1, 9, 7, 12]);
    let maxes: Vec<i32> = realize_1d(&m, 5, &args);
    assert_eq!(maxes, vec![4, 4, 9, 9, 9]);
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
        let c = Pipeline::new(&[func]).compile(&Target::interp()).unwrap();
        let mut out = Buffer::<i32>::new(&[]);
        c.realize(&args, &mut out).unwrap();
        assert_eq!(out.as_slice(), &[expected]);
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
        let out = Func::new("shifted");
        out.def(x, bc.at(x - 2));
        let mut args = Args::new();
        args.image(&input, &data);
        let got: Vec<u8> = realize_1d(&out, 7, &args);
        assert_eq!(got, expected, "{}", bc.name());
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
    f.update_stage(0).split(ro, ro, ri, 4).reorder(&[x.into(), ri.into(), ro.into()]).vectorize(x, 4).parallel(y);
    f.bound(x, 0, 6).bound(y, 0, 2).reorder_storage(&[y, x]);
    let g = Func::new("g");
    g.def((x, y), f.at((x, y)));
    f.compute_root();
    let c = Pipeline::new(&[&g]).compile(&Target::interp()).unwrap();
    let mut out = Buffer::<i32>::new(&[6, 2]);
    c.realize(&Args::new(), &mut out).unwrap();
    for yy in 0..2 {
        for xx in 0..6 {
            // sum over r.x in [0,10), r.y in [0,3) of r.x*r.y = 45 * 3, plus 30 * x.
            assert_eq!(out[[xx, yy]], xx + yy + 135 + 30 * xx);
        }
    }
    // A consumer that needs more than the bound is an error naming the Func.
    let mut big = Buffer::<i32>::new(&[7, 2]);
    let e = c.realize(&Args::new(), &mut big).unwrap_err().to_string();
    assert!(e.contains("accumulated"), "{e}");
}

#[test]
fn unroll_full_and_float_params() {
    let (x, c) = (Var::new("x"), Var::new("c"));
    let gain = Param::<f32>::new("gain");
    let f = Func::new("planar");
    f.def((x, c), (Expr::from(x) + Expr::from(c) * 10) * gain.expr());
    f.bound(c, 0, 3).reorder(&[c.into(), x.into()]).unroll_full(c);
    let comp = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let mut out = Buffer::<f32>::new(&[2, 3]);
    let mut args = Args::new();
    args.param(&gain, 0.5);
    comp.realize(&args, &mut out).unwrap();
    assert_eq!(out.as_slice(), &[0.0, 0.5, 5.0, 5.5, 10.0, 10.5]);
}
