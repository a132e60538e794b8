//! Schedule invariance: random pipelines of 3–8 stages under random legal schedules give
//! exactly the pixels of the unscheduled pipeline on the interpreter, on every target under
//! test. `PROPTEST_CASES` sets the number of cases (CI runs 256).

mod common;

use common::random_pipeline::{self as rp, StageKind, StageSchedule};
use common::targets_under_test;
use halogen::prelude::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Case {
    stages: Vec<StageKind>,
    /// One per Func, the clamped input's unused.
    schedules: Vec<StageSchedule>,
    out_min: (i32, i32),
    out_extent: (i32, i32),
}

fn case() -> impl Strategy<Value = Case> {
    rp::stage_count()
        .prop_flat_map(|n| {
            (rp::stage_kinds(n, rp::SCHEDULE_MIX), prop::collection::vec(rp::schedule(), n), rp::output_region())
        })
        .prop_map(|(mut stages, mut schedules, (out_min, out_extent))| {
            if rp::end_with_pure_stage(&mut stages) {
                schedules.push(schedules[0].clone());
            }
            Case { stages, schedules, out_min, out_extent }
        })
}

proptest! {
    #![proptest_config(ProptestConfig { failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_schedule_gives_the_unscheduled_pixels(c in case()) {
        if std::env::var("HALOGEN_TRACE_CASES").is_ok() { eprintln!("CASE {c:?}"); }
        let reference = rp::realize(&rp::build(&c.stages), c.out_min, c.out_extent, &Target::interp());
        prop_assert!(reference.is_ok(), "unscheduled pipeline failed: {:?}\n{:?}", reference, c.stages);
        let reference = reference.unwrap();
        for target in targets_under_test() {
            let b = rp::build(&c.stages);
            let log = rp::apply_schedule(&c.stages, &c.schedules, &b);
            let got = rp::realize(&b, c.out_min, c.out_extent, &target);
            prop_assert!(got.is_ok(), "schedule {log} failed: {}\nstages {:?}", got.unwrap_err(), c.stages);
            prop_assert_eq!(got.unwrap(), reference.clone(), "schedule {} changed the pixels on {:?}; stages {:?}", log, target, c.stages);
        }
    }
}
