//! Schedule invariance on a GPU: random pipelines of 3–8 stages (the generator of
//! `common/random_pipeline.rs`) under random GPU schedules on OpenCL give exactly the
//! unscheduled pixels of the interpreter, or one of the documented errors of schedules the
//! GPU back end cannot run (storage or threads without a constant bound).
//!
//! Each Func is inlined, computed at root on the CPU, computed at root as GPU tiles, or, when
//! its one consumer is GPU tiles, computed per block in shared memory (with threads of its
//! own) or per thread. Updates stay on the CPU, so CPU and GPU stages alternate. 32 cases by
//! default (`HALOGEN_GPU_CASES` sets it); without an OpenCL device the test skips, unless
//! `HALOGEN_REQUIRE_OPENCL=1`.

mod common;

use common::random_pipeline::{self as rp, StageKind};
use halogen::prelude::*;
use proptest::prelude::*;

/// Where one Func is computed, and its tile.
#[derive(Clone, Debug)]
struct GpuChoice {
    /// 0 inline, 1 root on the CPU, 2 root as GPU tiles, 3 per block of its consumer's
    /// tiles, 4 per thread of them.
    kind: u8,
    w: i32,
    h: i32,
}

type Case = rp::ChoiceCase<GpuChoice>;

fn case() -> impl Strategy<Value = Case> {
    rp::choice_case((0..5u8, 1..17i32, 1..17i32).prop_map(|(kind, w, h)| GpuChoice { kind, w, h }))
}

/// Applies the choices, made legal, from the output back; returns the directives.
fn apply(stages: &[StageKind], choices: &[GpuChoice], b: &rp::Built) -> String {
    let (x, y) = (Var::new("x"), Var::new("y"));
    let (xo, yo, xi, yi) = (Var::new("xo"), Var::new("yo"), Var::new("xi"), Var::new("yi"));
    let n = b.funcs.len();
    let mut realized = vec![false; n];
    let mut tiled = vec![false; n];
    let mut log = String::new();
    for s in (1..n).rev() {
        let f = &b.funcs[s];
        let c = &choices[s];
        let updates = stages[s - 1].has_update();
        let consumers: Vec<usize> =
            stages.iter().enumerate().filter(|(_, k)| k.sources().contains(&s)).map(|(i, _)| i + 1).collect();
        let single = (consumers.len() == 1
            && realized[consumers[0]]
            && !matches!(stages[consumers[0] - 1], StageKind::Sum { .. } | StageKind::Histogram { .. }))
        .then(|| consumers[0]);
        let mut kind = if s == n - 1 { 1 + c.kind % 2 } else { c.kind };
        if kind == 0 && updates {
            kind = 1;
        }
        if kind >= 3 && (updates || !single.is_some_and(|k| tiled[k])) {
            kind = 2;
        }
        let name = f.name();
        match kind {
            1 => {
                if s != n - 1 {
                    f.compute_root();
                }
                log += &format!("{name}: root on the CPU; ");
            }
            2 => {
                if s != n - 1 {
                    f.compute_root();
                }
                f.gpu_tile(x, y, xo, yo, xi, yi, c.w, c.h);
                log += &format!("{name}: root, gpu_tile {}x{}; ", c.w, c.h);
            }
            3 => {
                let k = &b.funcs[single.unwrap()];
                f.compute_at(k, xo).gpu_threads(x).gpu_threads(y);
                log += &format!("{name}: per block of {}; ", k.name());
            }
            4 => {
                let k = &b.funcs[single.unwrap()];
                f.compute_at(k, xi);
                log += &format!("{name}: per thread of {}; ", k.name());
            }
            _ => log += &format!("{name}: inline; "),
        }
        realized[s] = kind != 0;
        tiled[s] = kind == 2;
    }
    log
}

/// The errors of GPU schedules the back end refuses by design.
const REFUSED: [&str; 3] = ["which are not constants", "has no constant bound", "threads per block"];

proptest! {
    #![proptest_config(ProptestConfig { cases: rp::case_count("HALOGEN_GPU_CASES", 32), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_gpu_schedule_gives_the_unscheduled_pixels(c in case()) {
        let Some(opencl) = common::gpu::opencl_target() else { return Ok(()) };
        let reference = rp::realize(&rp::build(&c.stages), c.out_min, c.out_extent, &Target::interp());
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}", reference);
        let b = rp::build(&c.stages);
        let log = apply(&c.stages, &c.choices, &b);
        let got = rp::realize(&b, c.out_min, c.out_extent, &opencl);
        if std::env::var("HALOGEN_TRACE_CASES").is_ok() {
            eprintln!("CASE {log} -> {}", got.as_ref().map(|_| "ran".to_string()).unwrap_or_else(|e| e.lines().next().unwrap_or("").to_string()));
        }
        match got {
            Ok(got) => prop_assert_eq!(got, reference.unwrap(), "{} changed the pixels; stages {:?}", log, c.stages),
            Err(e) => prop_assert!(REFUSED.iter().any(|r| e.contains(r)), "{log} failed: {e}\nstages {:?}", c.stages),
        }
    }
}
