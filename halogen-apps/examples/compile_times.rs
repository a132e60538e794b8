//! Compile times of pipelines that stress the compiler: a chain of `N` root stencils, and
//! the local Laplacian filter with a growing number of pyramid levels under its root and
//! hand schedules. Compile time is a cost users feel (Halide's worst complaint); this shows
//! how it grows.
//!
//! ```text
//! cargo run --release -p halogen-apps --example compile_times            # chain up to 40, LL up to 3 levels
//! cargo run --release -p halogen-apps --example compile_times -- 80 8    # bigger
//! ```

use halogen::prelude::*;
use halogen_apps::local_laplacian::LocalLaplacian;
use halogen_apps::App;
use std::time::Instant;

fn chain(n: usize) -> Func {
    let input = ImageParam::new(Type::f32(), 2, "input");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let mut prev = Func::new("f0");
    prev.def((x, y), input.at((clamp(x, 0, 99), clamp(y, 0, 99))));
    prev.compute_root();
    for i in 1..n {
        let f = Func::new(&format!("f{i}"));
        f.def((x, y), prev.at((x - 1, y)) + prev.at((x + 1, y)) + prev.at((x, y + 1)));
        f.compute_root();
        prev = f;
    }
    prev
}

fn main() {
    let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let max_chain = args.first().copied().unwrap_or(40);
    let max_levels = args.get(1).copied().unwrap_or(3);
    let mut n = 10;
    while n <= max_chain {
        let out = chain(n);
        let t = Instant::now();
        let ok = Pipeline::new(&[&out]).compile(&Target::interp()).is_ok();
        println!("chain of {n:3} root Funcs:            {:10.3} s (ok: {ok})", t.elapsed().as_secs_f64());
        n *= 2;
    }
    for levels in 1..=max_levels {
        for schedule in ["root", "hand"] {
            let app = LocalLaplacian::with_levels(levels, 4, 1.0, 1.0);
            if let Err(e) = app.apply_schedule(schedule) {
                println!("local_laplacian: {e}");
                continue;
            }
            let t = Instant::now();
            let ok = app.compile(&Target::interp()).is_ok();
            println!(
                "local_laplacian J={levels} {schedule:<5} ({:3} Funcs): {:10.3} s (ok: {ok})",
                app.funcs.len(),
                t.elapsed().as_secs_f64()
            );
        }
    }
}
