//! Auto-schedule invariance: random pipelines of 3–8 stages (stencils, up/down-sampling,
//! histograms, scans, inline reductions), with random estimates, random machines and a
//! few hand-scheduled Funcs, give exactly the pixels of the unscheduled pipeline when
//! auto-scheduled, at a size unrelated to the estimates. `PROPTEST_CASES` sets the number
//! of cases (64 by default). The generator is `common/random_pipeline.rs`, as for
//! `schedule_invariance.rs`; the auto-scheduled pipeline runs on every target under test.

mod common;

use common::random_pipeline::{self as rp, StageKind};
use common::targets_under_test;
use halogen::prelude::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Case {
    stages: Vec<StageKind>,
    /// Stages computed at root by hand (the auto-scheduler must leave them alone).
    hand_root: Vec<bool>,
    estimates: (i32, i32),
    machine: (usize, usize, usize, usize),
    out_min: (i32, i32),
    out_extent: (i32, i32),
}

fn case() -> impl Strategy<Value = Case> {
    rp::stage_count()
        .prop_flat_map(|n| {
            (
                rp::stage_kinds(n, rp::AUTO_SCHEDULE_MIX),
                prop::collection::vec(prop::bool::weighted(0.1), n),
                (1..3000i32, 1..3000i32),
                (1..33usize, prop::sample::select(vec![16usize, 32, 64]), 0..3usize, 0..3usize),
                rp::output_region(),
            )
        })
        .prop_map(|(mut stages, mut hand_root, estimates, machine, (out_min, out_extent))| {
            if rp::end_with_pure_stage(&mut stages) {
                hand_root.push(false);
            }
            Case { stages, hand_root, estimates, machine, out_min, out_extent }
        })
}

/// Small caches too, so that groups get split (Algorithm 5).
fn machine(c: &Case) -> MachineParams {
    let (cores, vector, l2, llc) = c.machine;
    let l2 = [4 << 10, 64 << 10, 1 << 20][l2];
    let llc = [32 << 10, 1 << 20, 32 << 20][llc].max(l2);
    MachineParams::new(cores, vector, 32 << 10, l2, llc)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: rp::case_count("PROPTEST_CASES", 64), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn auto_scheduled_pipelines_give_the_unscheduled_pixels(c in case()) {
        let reference = rp::realize(&rp::build(&c.stages), c.out_min, c.out_extent, &Target::interp());
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}\n{:?}", reference, c.stages);
        let b = rp::build(&c.stages);
        let n = b.funcs.len();
        for (i, f) in b.funcs.iter().enumerate().skip(1) {
            if c.hand_root[i - 1] && i + 1 < n {
                f.compute_root();
            }
        }
        b.input.set_estimates(&[(0, c.estimates.0), (0, c.estimates.1)]);
        b.funcs[n - 1].set_estimates(&[(0, c.estimates.0), (0, c.estimates.1)]);
        let p = Pipeline::new(&[&b.funcs[n - 1]]);
        let source = p.auto_schedule_with_source(&machine(&c));
        prop_assert!(source.is_ok(), "auto_schedule failed: {:?}\nstages {:?}", source, c.stages);
        let source = source.unwrap();
        prop_assert!(!source.contains("could not apply"), "{}", source);
        let reference = reference.unwrap();
        for target in targets_under_test() {
            let got = rp::realize(&b, c.out_min, c.out_extent, &target);
            prop_assert!(got.is_ok(), "schedule\n{source}failed: {}\nstages {:?}", got.unwrap_err(), c.stages);
            prop_assert_eq!(got.unwrap(), reference.clone(), "schedule\n{}changed the pixels on {:?}; stages {:?}", source, target, c.stages);
        }
    }
}
