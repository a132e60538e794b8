//! Distribution invariance: random pipelines of 3–8 stages (the generator of
//! `common/random_pipeline.rs`) under random distributed schedules, on 1 to 4 in-process
//! ranks, give exactly the unscheduled pixels of the interpreter on every rank once the
//! output's slices are gathered.
//!
//! Each Func is inlined, computed at root on every rank (the region all ranks need),
//! `compute_rank`, or computed at root and distributed: by rows, by strips of rows (the
//! outer loop of a split) or over a grid of ranks. Funcs with updates are never
//! distributed themselves, but a histogram's reduction domain may be: by rows, by strips
//! of rows, or over a grid of ranks, completed by an all-reduce. The output is distributed
//! by rows or by strips. 24 cases by default
//! (`HALOGEN_DISTRIBUTED_CASES` sets it) on the interpreter (`interp-mpi`;
//! `HALOGEN_DISTRIBUTED_TARGET=host-mpi` runs them as C).

mod common;

use common::random_pipeline::{self as rp, StageKind};
use halogen::prelude::*;
use halogen::runtime::distributed::InProcessRanks;
use halogen::runtime::gather::all_gather_slices;
use proptest::prelude::*;

/// Where one Func is computed: 0 inline, 1 root, 2 compute_rank, 3 distributed rows,
/// 4 distributed strips of `strip` rows, 5 distributed over a grid; for the output, even
/// kinds distribute rows and odd ones strips.
#[derive(Clone, Debug)]
struct Choice {
    kind: u8,
    strip: i32,
    parallel: bool,
}

type Case = rp::ChoiceCase<Choice>;

fn case() -> impl Strategy<Value = Case> {
    rp::choice_case((0..6u8, 1..6i32, any::<bool>()).prop_map(|(kind, strip, parallel)| Choice {
        kind,
        strip,
        parallel,
    }))
}

/// Applies the choices, made legal; returns the directives and the output's strip.
fn apply(stages: &[StageKind], choices: &[Choice], b: &rp::Built) -> (String, i32) {
    let (x, y, yi) = (Var::new("x"), Var::new("y"), Var::new("yi"));
    let n = b.funcs.len();
    let mut log = String::new();
    let out = &b.funcs[n - 1];
    let c = &choices[n - 1];
    let strip = if c.kind % 2 == 1 { c.strip } else { 1 };
    if strip > 1 {
        out.split(y, y, yi, strip);
    }
    if c.parallel {
        out.parallel(y);
    }
    out.distribute(y);
    log += &format!("{}: distributed by {strip} rows; ", out.name());
    for s in 1..n - 1 {
        let f = &b.funcs[s];
        let c = &choices[s];
        let updates = stages[s - 1].has_update();
        let kind = match c.kind {
            0 if updates => 1,
            3..=5 if updates => 2,
            k => k,
        };
        let name = f.name();
        if let (Some(r), 3..=5) = (&b.domains[s], c.kind) {
            // The histogram computed on every rank, each running its part of the domain.
            let stage = f.compute_root().update_stage(0);
            match c.kind {
                3 => stage.distribute(r.y()),
                4 => stage.split(r.y(), Var::new("ryo"), Var::new("ryi"), c.strip).distribute(Var::new("ryo")),
                _ => stage.distribute(r.x()).distribute(r.y()),
            };
            log += &format!("{name}: root, its reduction domain distributed ({}); ", c.kind);
            if c.parallel {
                f.parallel(y);
            }
            continue;
        }
        match kind {
            1 => {
                f.compute_root();
                log += &format!("{name}: root; ");
            }
            2 => {
                f.compute_rank();
                log += &format!("{name}: compute_rank; ");
            }
            3 => {
                f.compute_root().distribute(y);
                log += &format!("{name}: distributed rows; ");
            }
            4 => {
                f.compute_root().split(y, y, yi, c.strip).distribute(y);
                log += &format!("{name}: distributed strips of {}; ", c.strip);
            }
            5 => {
                f.compute_root().distribute(x).distribute(y);
                log += &format!("{name}: distributed over a grid; ");
            }
            _ => log += &format!("{name}: inline; "),
        }
        if c.parallel && kind >= 1 {
            f.parallel(y);
        }
    }
    (log, strip)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: rp::case_count("HALOGEN_DISTRIBUTED_CASES", 24), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_distributed_schedule_gives_the_unscheduled_pixels(c in case()) {
        let reference = rp::realize(&rp::build(&c.stages), c.out_min, c.out_extent, &Target::interp());
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}", reference);
        let reference = reference.unwrap();
        let b = rp::build(&c.stages);
        let (log, strip) = apply(&c.stages, &c.choices, &b);
        let target: Target = std::env::var("HALOGEN_DISTRIBUTED_TARGET").unwrap_or_else(|_| "interp-mpi".into()).parse().unwrap();
        let compiled = Pipeline::new(&[b.funcs.last().unwrap()]).compile(&target);
        prop_assert!(compiled.is_ok(), "{log}: {:?}", compiled.err());
        let compiled = compiled.unwrap();
        let img = rp::input_image();
        for ranks in 1..=4 {
            let outs = InProcessRanks::run(ranks, |comm| {
                let mut out = Buffer::<i32>::with_min(&[c.out_min.0, c.out_min.1], &[c.out_extent.0, c.out_extent.1]);
                let mut args = Args::new();
                args.image(&b.input, &img).communicator(comm.clone());
                compiled.realize(&args, &mut out).map_err(|e| e.to_string())?;
                all_gather_slices(&*comm, &mut out, 1, strip).map_err(|e| e.to_string())?;
                Ok::<Vec<i32>, String>(out.as_slice().to_vec())
            });
            for (r, got) in outs.into_iter().enumerate() {
                prop_assert!(got.is_ok(), "{log} on rank {r} of {ranks}: {:?}\nstages {:?}", got, c.stages);
                prop_assert_eq!(got.unwrap(), reference.clone(), "{} changed the pixels on rank {} of {}; stages {:?}", log, r, ranks, c.stages);
            }
        }
    }
}
