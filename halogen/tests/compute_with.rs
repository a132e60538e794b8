//! `compute_with`: two Funcs computed in one loop nest give the pixels they give apart, on
//! every target, at root and inside a consumer's loop, with equal and with different
//! regions; the rules it needs are errors naming the Funcs.

mod common;

use common::{compile_error, targets_under_test};
use halogen::prelude::*;

struct Gradients {
    input: ImageParam,
    ix: Func,
    iy: Func,
    out: Func,
}

/// Harris' gradients: `out` reads `ix` one column further right than `iy`, so the two
/// cover different regions.
fn gradients() -> Gradients {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let input = ImageParam::new(Type::f32(), 2, "in");
    let c = halogen::boundary::repeat_edge(&input, &input.bounds());
    let ix = Func::new("ix");
    ix.def((x, y), c.at((x + 1, y)) - c.at((x - 1, y)));
    let iy = Func::new("iy");
    iy.def((x, y), c.at((x, y + 1)) * 0.5f32 - c.at((x, y - 1)));
    let out = Func::new("out");
    out.def((x, y), ix.at((x + 1, y)) * iy.at((x, y)) + ix.at((x, y - 2)));
    Gradients { input, ix, iy, out }
}

fn image() -> Buffer<f32> {
    Buffer::from_fn(&[41, 29], |c| ((c[0] * 37 + c[1] * 101) % 97) as f32 * 0.25)
}

fn run(g: &Gradients, target: &Target) -> Buffer<f32> {
    let c = Pipeline::new(&[&g.out]).compile(target).unwrap_or_else(|e| panic!("{target}: {e}"));
    let input = image();
    let mut args = Args::new();
    args.image(&g.input, &input);
    let mut out = Buffer::<f32>::with_min(&[2, 3], &[35, 23]);
    c.realize(&args, &mut out).unwrap_or_else(|e| panic!("{target}: {e}"));
    out
}

#[test]
fn funcs_computed_with_each_other_give_the_same_pixels() {
    let expected = run(&gradients(), &Target::interp());
    let (x, y, xi, yi) = (Var::new("x"), Var::new("y"), Var::new("xi"), Var::new("yi"));
    type Schedule = fn(&Gradients, Var, Var, Var, Var);
    // Each schedule, and the Func whose loops become the other's.
    let schedules: [(&str, &str, Schedule); 6] = [
        // Halide's harris: stored per strip of rows, computed per row, sliding down the strip.
        ("sliding rows", "ix", |g, x, y, _, yi| {
            g.out.split(y, y, yi, 8).parallel(y).vectorize(x, 8);
            g.ix.store_at(&g.out, y).compute_at(&g.out, yi).vectorize(x, 8);
            g.iy.store_at(&g.out, y).compute_at(&g.out, yi).vectorize(x, 8);
            g.ix.compute_with(&g.iy, x);
        }),
        ("rows at root", "iy", |g, x, y, _, _| {
            g.ix.compute_root();
            g.iy.compute_root().compute_with(&g.ix, y);
            let _ = x;
        }),
        ("vectors at root", "iy", |g, x, _, _, _| {
            g.ix.compute_root().vectorize(x, 8);
            g.iy.compute_root().vectorize(x, 8).compute_with(&g.ix, x);
        }),
        ("parallel rows", "iy", |g, x, y, _, _| {
            g.ix.compute_root().vectorize(x, 4).parallel(y);
            g.iy.compute_root().vectorize(x, 8).parallel(y).compute_with(&g.ix, y);
        }),
        ("tiles inside the consumer", "iy", |g, x, y, xi, yi| {
            g.out.tile(x, y, xi, yi, 16, 8).vectorize(xi, 4).parallel(y);
            g.ix.compute_at(&g.out, x).vectorize(x, 4);
            g.iy.compute_at(&g.out, x).vectorize(x, 4).compute_with(&g.ix, x);
        }),
        ("split rows", "iy", |g, x, y, _, yi| {
            g.ix.compute_root().split(y, y, yi, 4);
            g.iy.compute_root().split(y, y, yi, 2).compute_with(&g.ix, yi);
            let _ = x;
        }),
    ];
    for (name, child, schedule) in schedules {
        for t in targets_under_test() {
            let g = gradients();
            schedule(&g, x, y, xi, yi);
            let nest = Pipeline::new(&[&g.out]).compile(&t).unwrap().lowered_stmt().to_string();
            assert!(!nest.contains(&format!("for ({child}.s0.y")), "{name}: {child} has loops of its own:\n{nest}");
            let got = run(&g, &t);
            assert_eq!(got.as_slice(), expected.as_slice(), "{name} on {t}");
        }
    }
}

#[test]
fn compute_with_rules_are_errors() {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let check = |g: &Gradients, want: &str| {
        let e = compile_error(&Target::interp(), &g.out);
        assert!(e.contains(want), "want: {want}\ngot:  {e}");
    };
    let g = gradients();
    g.ix.compute_root();
    g.iy.compute_with(&g.ix, y);
    check(&g, "Func 'iy': compute_with(ix, y): 'iy' is computed inline");

    let g = gradients();
    g.ix.compute_root();
    g.iy.compute_at(&g.out, y).compute_with(&g.ix, y);
    check(&g, "both must be computed at one level and stored at one level, but 'iy' is computed at out.y");

    let g = gradients();
    g.ix.compute_root();
    g.iy.compute_root().compute_with(&g.ix, Var::new("z"));
    check(&g, "'ix' has no loop 'z' (its loops, outermost first: y, x)");

    let xi = Var::new("xi");
    let g = gradients();
    g.ix.compute_root().split(x, x, xi, 8).vectorize(xi, 8);
    g.iy.compute_root().compute_with(&g.ix, xi);
    check(&g, "'ix' has 3 loops down to 'xi' but 'iy' has only 2 loops to fuse them with");
    let g = gradients();
    g.ix.compute_root().vectorize(x, 8);
    g.iy.compute_root().vectorize(x, 8).compute_with(&g.ix, Var::new("x_vi"));
    check(&g, "loop 2 from the outside is 'x_vi' (Vectorized) in 'ix' and 'x_vi' (Vectorized) in 'iy'; fused loops must both be serial");

    let g = gradients();
    g.ix.compute_root().parallel(y);
    g.iy.compute_root().compute_with(&g.ix, y);
    check(&g, "loop 0 from the outside is 'y' (Parallel) in 'ix' and 'y' (Serial) in 'iy'");

    // A Func that reads the other.
    let g = gradients();
    let uses = Func::new("uses_ix");
    uses.def((x, y), g.ix.at((x, y)) * 2.0f32);
    let out = Func::new("out2");
    out.def((x, y), uses.at((x, y)) + g.iy.at((x, y)));
    g.ix.compute_root();
    uses.compute_root().compute_with(&g.ix, y);
    g.iy.compute_root();
    let e = compile_error(&Target::interp(), &out);
    assert!(
        e.contains("'uses_ix' reads 'ix' (uses_ix -> ix); Funcs that share loops must not depend on each other"),
        "{e}"
    );

    // Updates and outputs.
    let g = gradients();
    let r = RDom::new(&[(Expr::from(0), Expr::from(2))]);
    g.ix.update((x, y), g.ix.at((x, y)) + r.x());
    g.ix.compute_root();
    g.iy.compute_root().compute_with(&g.ix, y);
    check(&g, "'ix' has update definitions; only pure definitions share loops");
    let g = gradients();
    g.ix.compute_root();
    g.out.compute_with(&g.ix, y);
    check(&g, "'out' is a pipeline output");
}
