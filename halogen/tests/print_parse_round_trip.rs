//! The printed loop nest parses back to the same statement, after every pass of lowering,
//! for pipelines that together use every kind of node the passes produce: inline, root,
//! chunk and sliding-window schedules, tiles, vectors, unrolling, guarded tails, tuples,
//! updates over reduction domains and vectorized updates, boundary conditions, float and
//! bool values, parameters; and with them the vector tails and storage folds in the IR.

mod common;

use halogen::ir::parse::parse_stmt_with_funcs;
use halogen::ir::{FuncId, Name};
use halogen::lower::lower::record_passes;
use halogen::prelude::*;
use std::collections::HashMap;

/// A pipeline: its output first, then every other Func it defines.
type Funcs = Vec<Func>;

/// The ids of the pipeline's Funcs by name, as the parser takes them (the statement's calls
/// know their Func only by id).
fn func_ids(funcs: &[Func]) -> HashMap<Name, FuncId> {
    funcs.iter().map(|f| (f.name(), f.func_ref().id())).collect()
}

fn blur(schedule: &str) -> Funcs {
    let common::Blur { blur_x, blur_y, x, y, .. } = common::blur();
    let (xi, yi) = (Var::new("xi"), Var::new("yi"));
    match schedule {
        "root" => {
            blur_x.compute_root();
        }
        "chunk" => {
            blur_x.compute_at(&blur_y, y);
        }
        "sliding" => {
            blur_x.store_root().compute_at(&blur_y, y);
        }
        "tiled" => {
            blur_y.tile(x, y, xi, yi, 64, 32).vectorize(xi, 8).parallel(y);
            blur_x.compute_at(&blur_y, x).vectorize(x, 8);
        }
        "guarded" => {
            blur_y.split_with(x, x, xi, 7, TailStrategy::GuardWithIf).unroll(y, 2);
            blur_x.compute_root().vectorize(x, 4);
        }
        _ => {}
    }
    vec![blur_y, blur_x]
}

fn tuple_and_reduction() -> Funcs {
    let input = ImageParam::new(Type::u8(), 2, "img");
    let gain = Param::<f32>::new("gain");
    let (x, y) = (Var::new("x"), Var::new("y"));
    let clamped = halogen::boundary::repeat_edge(&input, &input.bounds());
    let pair = Func::new("pair");
    pair.def_tuple(
        (x, y),
        &[clamped.at((x, y)).cast::<f32>() * Expr::from(&gain), clamped.at((x + 1, y)).cast::<f32>()],
    );
    let hist = Func::new("hist");
    let r = RDom::new(&[(Expr::from(0), Expr::from(8)), (Expr::from(0), Expr::from(2))]);
    let bucket = clamped.at((r.x(), r.y())).cast::<i32>() % 4;
    hist.def(x, Expr::from(0i32));
    hist.update(bucket.clone(), hist.at(bucket) + 1);
    hist.compute_root();
    let out = Func::new("out");
    out.def(
        (x, y),
        select(
            pair.at_tuple((x, y), 0).gt(pair.at_tuple((x, y), 1)),
            sqrt(pair.at_tuple((x, y), 0)),
            hist.at(x % 4).cast::<f32>(),
        ),
    );
    // An update's vector split guards its tail (GuardWithIf), decided per vector.
    out.update((x, y), out.at((x, y)) * Expr::from(2.0f32));
    pair.compute_at(&out, y).unroll(x, 2);
    out.vectorize(x, 4);
    out.update_stage(0).vectorize(x, 4);
    vec![out, pair, hist, clamped]
}

#[test]
fn every_pass_output_parses_back_to_itself() {
    let mut pipelines: Vec<(String, Funcs)> = ["inline", "root", "chunk", "sliding", "tiled", "guarded"]
        .iter()
        .map(|s| (format!("blur {s}"), blur(s)))
        .collect();
    pipelines.push(("tuple and reduction".into(), tuple_and_reduction()));
    let mut checked = 0;
    // The facts lowering writes into the IR are among what round-trips.
    let (mut tails, mut tails_each, mut folds) = (0, 0, 0);
    for (what, funcs) in &pipelines {
        let ids = func_ids(funcs);
        let (compiled, passes) = record_passes(|| Pipeline::new(&[&funcs[0]]).compile(&Target::interp()));
        if let Err(e) = compiled {
            panic!("{what}: {e}");
        }
        assert_eq!(passes.len(), 12, "{what}: every pass is recorded");
        for (pass, s) in &passes {
            let text = s.to_string();
            tails += text.matches(") tail(").count();
            tails_each += text.matches(") tail_each(").count();
            folds += text.matches(" fold(").count();
            let back = parse_stmt_with_funcs(&text, &ids)
                .unwrap_or_else(|e| panic!("{what}, after {pass}: {e}\n--- text ---\n{text}"));
            if &back != s {
                let reprinted = back.to_string();
                let line = text.lines().zip(reprinted.lines()).position(|(a, b)| a != b);
                panic!("{what}, after {pass}: the parsed statement differs (first differing line {line:?})\n{text}\n--- reprinted ---\n{reprinted}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 12 * pipelines.len());
    assert!(tails > 0 && tails_each > 0 && folds > 0, "tails {tails}, tails_each {tails_each}, folds {folds}");
}
