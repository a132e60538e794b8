//! Directives that do not fit the algorithm or the loop nest: each names the Func and the
//! directive.

use crate::common::{compile_error, targets_under_test};
use halogen::prelude::*;

#[test]
fn unbounded_data_dependent_index() {
    let lut = ImageParam::new(Type::i32(), 1, "lut");
    let idx = ImageParam::new(Type::i32(), 1, "indices");
    let x = Var::new("x");
    let f = Func::new("gathered");
    f.def(x, lut.at(idx.at(x)));
    // Clamped, the same index is fine.
    let g = Func::new("clamped_gather");
    g.def(x, lut.at(clamp(idx.at(x), 0, 9)));
    for target in targets_under_test() {
        let e = compile_error(&target, &f);
        assert!(e.contains("'lut'") && e.contains("dimension 0") && e.contains("gathered"), "{target}: {e}");
        assert!(Pipeline::new(&[&g]).compile(&target).is_ok(), "{target}");
    }
}

#[test]
fn schedule_mistakes_name_func_and_directive() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let a = Func::new("a");
    let b = Func::new("b");
    let unrelated = Func::new("unrelated");
    a.def((x, y), x + y);
    b.def((x, y), a.at((x, y)) * 2);
    unrelated.def((x, y), x - y);
    a.compute_at(&unrelated, x);

    let c = Func::new("c");
    c.def((x, y), x * y);
    c.split(Var::new("z"), Var::new("zo"), Var::new("zi"), 4);

    // A scan: each value depends on the previous one along x.
    let s = Func::new("scan");
    let r = RDom::new(&[(Expr::from(1), Expr::from(9))]);
    s.def((x, y), x + y);
    s.update((r.x(), y), s.at((r.x() - 1, y)) + s.at((r.x(), y)));
    s.update_stage(0).parallel(r.x());

    // Parallel over y is fine for the same scan.
    let s2 = Func::new("scan2");
    s2.def((x, y), x + y);
    s2.update((r.x(), y), s2.at((r.x() - 1, y)) + s2.at((r.x(), y)));
    s2.update_stage(0).parallel(y);

    // But not over x when the update reads a neighbour in x.
    let s3 = Func::new("smear");
    s3.def((x, y), x + y);
    s3.update((x, y), s3.at((x - 1, y)) + 1);
    s3.update_stage(0).vectorize(x, 4);

    for target in targets_under_test() {
        let e = compile_error(&target, &b);
        assert!(e.contains("'a'") && e.contains("compute_at") && e.contains("unrelated"), "{target}: {e}");
        let e = compile_error(&target, &c);
        assert!(e.contains("'c'") && e.contains("split") && e.contains("'z'"), "{target}: {e}");
        let e = compile_error(&target, &s);
        assert!(e.contains("'scan'") && e.contains("parallel"), "{target}: {e}");
        assert!(Pipeline::new(&[&s2]).compile(&target).is_ok(), "{target}");
        let e = compile_error(&target, &s3);
        assert!(e.contains("'smear'") && e.contains("vectorize"), "{target}: {e}");
    }
}

#[test]
fn storage_inside_the_compute_level() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let g = Func::new("stored_inside");
    let h = Func::new("h");
    g.def((x, y), x + y);
    h.def((x, y), g.at((x, y)) * 2);
    g.compute_root().store_at(&h, y);
    for target in targets_under_test() {
        assert_eq!(
            compile_error(&target, &h),
            "schedule error: Func 'stored_inside': store_at(h, y) is inside its compute level, root; a Func is \
             stored at or outside the level where it is computed",
            "{target}"
        );
    }
}

#[test]
fn storage_inside_a_compute_loop() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let g = Func::new("stored_deeper");
    let h = Func::new("h2");
    g.def((x, y), x + y);
    h.def((x, y), g.at((x, y)) * 2);
    // y is the outer loop of h: storing per x while computing per row.
    g.compute_at(&h, y).store_at(&h, x);
    for target in targets_under_test() {
        let e = compile_error(&target, &h);
        assert!(e.contains("'stored_deeper'") && e.contains("store_at"), "{target}: {e}");
    }
}
