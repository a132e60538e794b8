//! Every user mistake is an `Err` that names the thing and the numbers; none panics.

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
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let img = Buffer::<u8>::new(&[10, 8]);
    let mut args = Args::new();
    args.image(&input, &img).param(&gain, 2);
    let mut out = Buffer::<u8>::new(&[10, 8]);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("'photo'") && e.contains("dimension 0"), "{e}");
    assert!(e.contains("[1, 10]") && e.contains("[0, 9]"), "{e}");
}

#[test]
fn wrong_element_type() {
    let (input, gain, f) = brighten();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let img = Buffer::<u16>::new(&[11, 8]);
    let mut args = Args::new();
    args.image(&input, &img).param(&gain, 2);
    let mut out = Buffer::<u8>::new(&[10, 8]);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("'photo'") && e.contains("uint16") && e.contains("uint8"), "{e}");

    let img = Buffer::<u8>::new(&[11, 8]);
    let mut args = Args::new();
    args.image(&input, &img).param(&gain, 2);
    let mut out = Buffer::<f32>::new(&[10, 8]);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("'brighter'") && e.contains("float32") && e.contains("uint8"), "{e}");
}

#[test]
fn wrong_dimension_count() {
    let (input, gain, f) = brighten();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let img = Buffer::<u8>::new(&[11, 8, 3]);
    let mut args = Args::new();
    args.image(&input, &img).param(&gain, 2);
    let mut out = Buffer::<u8>::new(&[10, 8]);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("'photo'") && e.contains("3 dimensions") && e.contains("2"), "{e}");

    let img = Buffer::<u8>::new(&[11, 8]);
    let mut args = Args::new();
    args.image(&input, &img).param(&gain, 2);
    let mut out = Buffer::<u8>::new(&[10]);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("'brighter'") && e.contains("1 dimensions"), "{e}");
}

#[test]
fn missing_bindings() {
    let (input, gain, f) = brighten();
    let c = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
    let mut out = Buffer::<u8>::new(&[10, 8]);
    let mut args = Args::new();
    args.param(&gain, 2);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("ImageParam 'photo'"), "{e}");

    let img = Buffer::<u8>::new(&[11, 8]);
    let mut args = Args::new();
    args.image(&input, &img);
    let e = c.realize(&args, &mut out).unwrap_err().to_string();
    assert!(e.contains("Param 'gain'"), "{e}");
}

#[test]
fn unbounded_data_dependent_index() {
    let lut = ImageParam::new(Type::i32(), 1, "lut");
    let idx = ImageParam::new(Type::i32(), 1, "indices");
    let x = Var::new("x");
    let f = Func::new("gathered");
    f.def(x, lut.at(idx.at(x)));
    let e = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap_err().to_string();
    assert!(e.contains("'lut'") && e.contains("dimension 0") && e.contains("gathered"), "{e}");

    // Clamped, the same index is fine.
    let g = Func::new("clamped_gather");
    g.def(x, lut.at(clamp(idx.at(x), 0, 9)));
    assert!(Pipeline::new(&[&g]).compile(&Target::interp()).is_ok());
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
    let e = Pipeline::new(&[&b]).compile(&Target::interp()).unwrap_err().to_string();
    assert!(e.contains("'a'") && e.contains("compute_at") && e.contains("unrelated"), "{e}");

    let c = Func::new("c");
    c.def((x, y), x * y);
    c.split(Var::new("z"), Var::new("zo"), Var::new("zi"), 4);
    let e = Pipeline::new(&[&c]).compile(&Target::interp()).unwrap_err().to_string();
    assert!(e.contains("'c'") && e.contains("split") && e.contains("'z'"), "{e}");

    // A scan: each value depends on the previous one along x.
    let s = Func::new("scan");
    let r = RDom::new(&[(Expr::from(1), Expr::from(9))]);
    s.def((x, y), x + y);
    s.update((r.x(), y), s.at((r.x() - 1, y)) + s.at((r.x(), y)));
    s.update_stage(0).parallel(r.x());
    let e = Pipeline::new(&[&s]).compile(&Target::interp()).unwrap_err().to_string();
    assert!(e.contains("'scan'") && e.contains("parallel"), "{e}");

    // Parallel over y is fine for the same scan.
    let s2 = Func::new("scan2");
    s2.def((x, y), x + y);
    s2.update((r.x(), y), s2.at((r.x() - 1, y)) + s2.at((r.x(), y)));
    s2.update_stage(0).parallel(y);
    assert!(Pipeline::new(&[&s2]).compile(&Target::interp()).is_ok());

    // But not over x when the update reads a neighbour in x.
    let s3 = Func::new("smear");
    s3.def((x, y), x + y);
    s3.update((x, y), s3.at((x - 1, y)) + 1);
    s3.update_stage(0).vectorize(x, 4);
    let e = Pipeline::new(&[&s3]).compile(&Target::interp()).unwrap_err().to_string();
    assert!(e.contains("'smear'") && e.contains("vectorize"), "{e}");
}
