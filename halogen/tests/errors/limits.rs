//! Sizes that would make the compiler, the C compiler or the generated loops run for good:
//! each is a clear error, or (a split factor far beyond the region) runs only the useful
//! iterations.

use crate::common::{compile_error, realize, targets_under_test};
use halogen::prelude::*;

fn ramp_func(name: &str) -> (Var, Func) {
    let x = Var::new("x");
    let f = Func::new(name);
    f.def(x, x + 1);
    (x, f)
}

#[test]
fn split_factors_beyond_the_coordinate_range() {
    let (x, f) = ramp_func("split_max");
    f.split(x, Var::new("xo"), Var::new("xi"), i32::MAX);
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(
            e.starts_with(
                "schedule error: Func 'split_max': split: the factor 2147483647 is over 1073741824, the widest region \
                 Halogen computes (at "
            ),
            "{target}: {e}"
        );
    }
}

#[test]
fn a_split_factor_far_beyond_the_region_runs_only_the_region() {
    // Pure (ShiftInwards) and update (GuardWithIf) stages, each split by 2^30 over 5 points.
    let (x, f) = ramp_func("wide_split");
    f.split(x, Var::new("xo"), Var::new("xi"), 1 << 30);
    let r = RDom::new(&[(Expr::from(0), Expr::from(3))]);
    f.update(x, f.at(x) + r.x());
    f.update_stage(0).split(x, Var::new("xo"), Var::new("xi"), 1 << 30);
    for target in targets_under_test() {
        let out = realize::<i32>(&target, &f, &Args::new(), &[-2], &[5]);
        assert_eq!(out.as_slice(), &[2, 3, 4, 5, 6], "{target}");
    }
}

#[test]
fn unrolling_too_far() {
    let (x, f) = ramp_func("unrolled");
    f.unroll(x, 20000);
    let (y, g) = ramp_func("unrolled_whole");
    g.bound(y, 0, 100_000).unroll_full(y);
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(
            e.starts_with(
                "schedule error: Func 'unrolled': unroll: the factor 20000 is over 256: an unrolled loop repeats its \
                 body once per iteration in the generated code"
            ),
            "{target}: {e}"
        );
        let e = compile_error(&target, &g);
        assert!(e.contains("has 100000 iterations, over 256"), "{target}: {e}");
    }
}

#[test]
fn vectors_too_wide() {
    let (x, f) = ramp_func("too_wide");
    f.vectorize(x, 1 << 20);
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(
            e.starts_with(
                "schedule error: Func 'too_wide': vectorize: the factor 1048576 is over 1024, the widest vector \
                 Halogen makes"
            ),
            "{target}: {e}"
        );
    }
}
