//! Every user mistake is an `Err` that names the thing and the numbers; none panics, on
//! any target under test.

mod common;

use common::{compile_error, targets_under_test};
use halogen::prelude::*;

fn brighten() -> (ImageParam, Param<u8>, Func) {
    let input = ImageParam::new(Type::u8(), 2, "photo");
    let gain = Param::<u8>::new("gain");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let f = Func::new("brighter");
    f.def((x, y), input.at((x + 1, y)) * gain.expr());
    (input, gain, f)
}

#[test]
fn too_small_input_names_buffer_dimension_and_numbers() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u8>::new(&[10, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("dimension 0"), "{target}: {e}");
        assert!(e.contains("[1, 10]") && e.contains("[0, 9]"), "{target}: {e}");
    }
}

#[test]
fn wrong_element_type() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u16>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("uint16") && e.contains("uint8"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<f32>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'brighter'") && e.contains("float32") && e.contains("uint8"), "{target}: {e}");
    }
}

#[test]
fn wrong_dimension_count() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let img = Buffer::<u8>::new(&[11, 8, 3]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'photo'") && e.contains("3 dimensions") && e.contains("2"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[10]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("'brighter'") && e.contains("1 dimensions"), "{target}: {e}");
    }
}

#[test]
fn missing_bindings() {
    let (input, gain, f) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        let mut out = Buffer::<u8>::new(&[10, 8]);
        let mut args = Args::new();
        args.param(&gain, 2);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("ImageParam 'photo'"), "{target}: {e}");

        let img = Buffer::<u8>::new(&[11, 8]);
        let mut args = Args::new();
        args.image(&input, &img);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(e.contains("Param 'gain'"), "{target}: {e}");
    }
}

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
fn buffers_reaching_toward_the_integer_limits_are_errors() {
    // A vectorized output ending at i32::MAX once wrote past its heap block on the host.
    let x = Var::new("x");
    let f = Func::new("ramp");
    f.def(x, x + 1);
    f.vectorize(x, 8);
    let (input, gain, brighter) = brighten();
    for target in targets_under_test() {
        let c = Pipeline::new(&[&f]).compile(&target).unwrap();
        for (min, extent) in [(i32::MAX - 4, 5), (i32::MIN, 3), (1 << 30, 1), (-(1 << 30) - 1, 2)] {
            let mut out = Buffer::<i32>::with_min(&[min], &[extent]);
            let e = c.realize(&Args::new(), &mut out).unwrap_err().to_string();
            let last = min as i64 + extent as i64 - 1;
            assert!(
                e.contains(&format!("output buffer for Func 'ramp' dimension 0 covers [{min}, {last}]"))
                    && e.contains("[-1073741824, 1073741823]"),
                "{target}: {e}"
            );
        }
        // The edges of the range are fine.
        for (min, extent) in [((1 << 30) - 9, 9), (-(1 << 30), 9)] {
            let mut out = Buffer::<i32>::with_min(&[min], &[extent]);
            c.realize(&Args::new(), &mut out).unwrap();
            assert_eq!(out.as_slice(), &(min + 1..min + 1 + extent).collect::<Vec<_>>()[..], "{target}");
        }
        // Inputs too.
        let c = Pipeline::new(&[&brighter]).compile(&target).unwrap();
        let img = Buffer::<u8>::with_min(&[i32::MAX - 10, 0], &[11, 2]);
        let mut args = Args::new();
        args.image(&input, &img).param(&gain, 2);
        let mut out = Buffer::<u8>::new(&[4, 2]);
        let e = c.realize(&args, &mut out).unwrap_err().to_string();
        assert!(
            e.contains("input buffer for ImageParam 'photo' dimension 0 covers [2147483637, 2147483647]"),
            "{target}: {e}"
        );
    }
}
