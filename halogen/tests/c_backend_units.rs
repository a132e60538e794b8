//! A large pipeline's C is also printed as translation units that the JIT compiles side by
//! side and links: the units hold the same code as the single file, and the library built
//! from them computes the interpreter's values. (On a machine with one core the JIT
//! compiles the single file; the units are still checked here.)

use halogen::backend::c;
use halogen::prelude::*;

/// A chain of `stages` Funcs, each computed at root with parallel rows and vectors: one
/// parallel body per stage, and the entry point calling them in order.
fn chain(stages: usize) -> (ImageParam, Func) {
    let input = ImageParam::new(Type::i32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = Func::new("clamped");
    clamped.def((x, y), input.at((clamp(x, 0, 63), clamp(y, 0, 47))));
    let mut prev = clamped;
    for i in 0..stages {
        let f = Func::new(&format!("stage{i}"));
        let k = i as i32 + 1;
        f.def(
            (x, y),
            (prev.at((x - 1, y)) * k + prev.at((x + 1, y)) - prev.at((x, y - 1)) + prev.at((x, y + 1)) * 3) / 5 + k,
        );
        f.compute_root().parallel(y).vectorize(x, 8);
        prev = f;
    }
    (input, prev)
}

#[test]
fn a_large_pipeline_compiles_as_units_and_computes_the_interpreters_values() {
    let (input, out) = chain(40);
    let lowered = Pipeline::new(&[&out]).lower(&Target::host()).unwrap();
    let module = c::generate(&lowered, "split_chain", &Target::host()).unwrap();
    assert!(module.units.len() > 1, "{} bytes of C in one unit", module.source.len());
    // Every body is defined once across the units, hidden, and static in the single file.
    let bodies = module.source.matches("\nstatic int body_").count();
    assert!(bodies >= 40, "{bodies} bodies");
    let defined: usize =
        module.units.iter().map(|u| u.matches("__attribute__((visibility(\"hidden\"))) int body_").count()).sum();
    let declared = module.units.len() * bodies;
    assert_eq!(defined, declared + bodies, "each unit declares every body; one defines each");
    assert_eq!(module.units.iter().filter(|u| u.contains("int split_chain(")).count(), 1);

    let img = Buffer::<i32>::from_fn(&[64, 48], |c| (c[0] * 7 + c[1] * 13) % 101 - 50);
    let run = |t: &Target| {
        let compiled = Pipeline::new(&[&out]).compile(t).unwrap();
        let mut result = Buffer::<i32>::new(&[64, 48]);
        let mut args = Args::new();
        args.image(&input, &img);
        compiled.realize(&args, &mut result).unwrap();
        (result.into_vec(), compiled.c_source().map(str::to_string))
    };
    let (host, source) = run(&Target::host());
    // What the JIT keeps for reading is the single file.
    assert_eq!(source.map(|s| s.matches("\nstatic int body_").count()), Some(bodies));
    assert_eq!(host, run(&Target::interp()).0);
}

#[test]
fn a_small_pipeline_is_one_file() {
    let (_, out) = chain(2);
    let lowered = Pipeline::new(&[&out]).lower(&Target::host()).unwrap();
    let module = c::generate(&lowered, "small", &Target::host()).unwrap();
    assert!(module.units.is_empty());
}
