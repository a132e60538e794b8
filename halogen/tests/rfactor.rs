//! `Stage::rfactor`: factored reductions give exactly the unfactored values on every
//! target under test, for whole and split reduction variables, parallel partial
//! reductions, several operators and zero-dimensional results; misuse is a clear error.

mod common;

use common::{assert_pixels, targets_under_test};
use halogen::prelude::*;

fn image(w: i32, h: i32) -> Buffer<u8> {
    Buffer::from_fn(&[w, h], |c| ((c[0] * 7 + c[1] * 13 + c[0] * c[1]) % 23) as u8)
}

/// A histogram of `input` into `bins` bins, as the pipeline will compute it.
fn histogram(img: &Buffer<u8>, bins: usize) -> Vec<i32> {
    let mut h = vec![0; bins];
    for &p in img.as_slice() {
        h[p as usize % bins] += 1;
    }
    h
}

struct Hist {
    input: ImageParam,
    hist: Func,
    r: RDom,
    i: Var,
}

fn hist_pipeline() -> Hist {
    let input = ImageParam::new(Type::u8(), 2, "input");
    let i = Var::new("i");
    let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
    let hist = Func::new("hist");
    hist.def(i, 0);
    let bin = input.at((r.x(), r.y())).cast::<i32>() % 32;
    hist.update(bin.clone(), hist.at(bin) + 1);
    Hist { input, hist, r, i }
}

fn realize_hist(h: &Hist, target: &Target, img: &Buffer<u8>) -> Buffer<i32> {
    let mut args = Args::new();
    args.image(&h.input, img);
    common::realize(target, &h.hist, &args, &[0], &[32])
}

#[test]
fn a_histogram_factored_by_row_strips_counts_every_pixel_once() {
    // 37 rows: the last strip of 16 is partial.
    let img = image(45, 37);
    let expected = histogram(&img, 32);
    for target in targets_under_test() {
        let h = hist_pipeline();
        let (ryo, ryi, u) = (Var::new("ryo"), Var::new("ryi"), Var::new("u"));
        let partial = h.hist.update_stage(0).split(h.r.y(), ryo, ryi, 16).rfactor(&[(ryo, u)]);
        partial.compute_root().vectorize(h.i, 8);
        partial.update_stage(0).parallel(u);
        h.hist.compute_root().update_stage(0).vectorize(h.i, 8);
        assert_pixels(&realize_hist(&h, &target, &img), &expected, format_args!("{target}"));
    }
}

#[test]
fn a_whole_reduction_variable_factors_into_one_partial_result_per_value() {
    let img = image(19, 11);
    let expected = histogram(&img, 32);
    for target in targets_under_test() {
        let h = hist_pipeline();
        let u = Var::new("u");
        let partial = h.hist.update_stage(0).rfactor(&[(h.r.y(), u)]);
        partial.compute_root().update_stage(0).parallel(u);
        assert_pixels(&realize_hist(&h, &target, &img), &expected, format_args!("{target}"));
    }
}

#[test]
fn both_variables_factored_leave_an_update_without_a_domain() {
    let img = image(9, 6);
    let expected = histogram(&img, 32);
    for target in targets_under_test() {
        let h = hist_pipeline();
        let (u, v) = (Var::new("u"), Var::new("v"));
        h.hist.update_stage(0).rfactor(&[(h.r.x(), u), (h.r.y(), v)]);
        assert_pixels(&realize_hist(&h, &target, &img), &expected, format_args!("{target}"));
    }
}

#[test]
fn column_sums_min_max_and_any_factor_exactly() {
    let (w, h) = (23, 41);
    let img = image(w, h);
    let px = |x: i32, y: i32| img.as_slice()[(y * w + x) as usize];
    for target in targets_under_test() {
        let input = ImageParam::new(Type::u8(), 2, "input");
        let x = Var::new("x");
        let r = RDom::new(&[(Expr::from(0), input.height())]);
        // Column sums (wrapping u8 arithmetic), smallest and largest value, any value 22.
        let sums = Func::new("sums");
        sums.def(x, Expr::from(0u8));
        sums.update(x, sums.at(x) + input.at((x, r.x())));
        let lo = Func::new("lo");
        lo.def(x, Expr::from(255u8));
        lo.update(x, min(input.at((x, r.x())), lo.at(x)));
        let hi = Func::new("hi");
        hi.def(x, Expr::from(0u8));
        hi.update(x, max(hi.at(x), input.at((x, r.x()))));
        let any = Func::new("any");
        any.def(x, Expr::from(false));
        any.update(x, any.at(x) | input.at((x, r.x())).eq(22u8));
        let (ro, ri, u) = (Var::new("ro"), Var::new("ri"), Var::new("u"));
        for f in [&sums, &lo, &hi, &any] {
            let partial = f.update_stage(0).split(r.x(), ro, ri, 8).rfactor(&[(ro, u)]);
            partial.compute_root().update_stage(0).parallel(u);
        }
        let out = Func::new("out");
        out.def(
            x,
            sums.at(x).cast::<i32>()
                + lo.at(x).cast::<i32>() * 1000
                + hi.at(x).cast::<i32>() * 100_000
                + any.at(x).cast::<i32>() * 10_000_000,
        );
        for f in [&sums, &lo, &hi, &any] {
            f.compute_root();
        }
        let c = Pipeline::new(&[&out]).compile(&target).unwrap_or_else(|e| panic!("{e}"));
        let mut got = Buffer::<i32>::new(&[w]);
        let mut args = Args::new();
        args.image(&input, &img);
        c.realize(&args, &mut got).unwrap_or_else(|e| panic!("{e}"));
        for xx in 0..w {
            let col: Vec<u8> = (0..h).map(|y| px(xx, y)).collect();
            let s = col.iter().fold(0u8, |a, &b| a.wrapping_add(b)) as i32;
            let l = *col.iter().min().unwrap() as i32;
            let m = *col.iter().max().unwrap() as i32;
            let a = col.contains(&22) as i32;
            assert_eq!(got[[xx]], s + l * 1000 + m * 100_000 + a * 10_000_000, "column {xx} on {target}");
        }
    }
}

#[test]
fn a_zero_dimensional_reduction_factors() {
    let img = image(31, 17);
    let expected = img.as_slice().iter().map(|&p| p as i64).sum::<i64>() as i32;
    for target in targets_under_test() {
        let input = ImageParam::new(Type::u8(), 2, "input");
        let r = RDom::new(&[(Expr::from(0), input.width()), (Expr::from(0), input.height())]);
        let total = Func::new("total");
        total.def((), 0);
        total.update((), total.at(()) + input.at((r.x(), r.y())).cast::<i32>());
        let (ryo, ryi, u) = (Var::new("ryo"), Var::new("ryi"), Var::new("u"));
        let partial = total.update_stage(0).split(r.y(), ryo, ryi, 4).rfactor(&[(ryo, u)]);
        partial.compute_root().update_stage(0).parallel(u);
        let c = Pipeline::new(&[&total]).compile(&target).unwrap_or_else(|e| panic!("{e}"));
        let mut got = Buffer::<i32>::new(&[]);
        let mut args = Args::new();
        args.image(&input, &img);
        c.realize(&args, &mut got).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.as_slice(), &[expected], "{target}");
    }
}

/// The messages of `f`'s failed compilation on every target under test.
fn compile_errors(f: &Func) -> Vec<(Target, String)> {
    targets_under_test().into_iter().map(|t| (t.clone(), common::compile_error(&t, f))).collect()
}

/// Compiling after `schedule` fails on every target with a message containing each of
/// `needles`.
fn rfactor_error(schedule: impl Fn(&Hist), needles: &[&str]) {
    for target in targets_under_test() {
        let h = hist_pipeline();
        schedule(&h);
        let err = common::compile_error(&target, &h.hist);
        for n in needles {
            assert!(err.contains(n), "'{n}' not in, on {target}: {err}");
        }
    }
}

#[test]
fn misuse_is_a_clear_error() {
    let u = Var::new("u");
    rfactor_error(|h| drop(h.hist.pure_stage().rfactor(&[(h.r.x(), u)])), &["rfactor", "pure one"]);
    rfactor_error(|h| drop(h.hist.update_stage(0).rfactor(&[(Var::new("nope"), u)])), &["'nope'", "neither"]);
    rfactor_error(|h| drop(h.hist.update_stage(0).rfactor(&[(h.r.x(), h.i)])), &["new variable 'i'"]);
    rfactor_error(
        |h| {
            h.hist.update_stage(0).parallel(h.r.y());
            drop(h.hist.update_stage(0).rfactor(&[(h.r.x(), u)]));
        },
        &["already Parallel"],
    );
    rfactor_error(|h| drop(h.hist.update_stage(0).rfactor(&[(h.r.x(), u), (h.r.x(), Var::new("v"))])), &["twice"]);

    // Float sums would round differently once regrouped.
    let input = ImageParam::new(Type::f32(), 1, "input");
    let r = RDom::new(&[(Expr::from(0), input.width())]);
    let total = Func::new("total");
    total.def((), 0.0f32);
    total.update((), total.at(()) + input.at(r.x()));
    total.update_stage(0).rfactor(&[(r.x(), u)]);
    for (target, err) in compile_errors(&total) {
        assert!(err.contains("float32") && err.contains("rounding"), "{target}: {err}");
    }

    // Not of the form f = f ⊕ e.
    let input = ImageParam::new(Type::i32(), 1, "input");
    let r = RDom::new(&[(Expr::from(0), input.width())]);
    let poly = Func::new("poly");
    poly.def((), 0);
    poly.update((), poly.at(()) * 2 + input.at(r.x()));
    poly.update_stage(0).rfactor(&[(r.x(), u)]);
    for (target, err) in compile_errors(&poly) {
        assert!(err.contains("must have the form"), "{target}: {err}");
    }
}
