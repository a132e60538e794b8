//! Every app's `distributed` schedules on 1 to 4 ranks (threads of this process, through
//! `InProcessRanks`), on the interpreter and the C back end: each rank computes its slice,
//! the slices gathered equal the plain-Rust reference. A distributed schedule run as one
//! process, with no communicator, computes everything and equals it too.

use halogen::prelude::*;
use halogen::runtime::distributed::InProcessRanks;
use halogen_apps::{app_names, build, create, is_distributed_schedule, Config};

#[test]
fn distributed_schedules_give_the_reference_pixels_on_every_rank_count() {
    let mut checked = 0;
    for name in app_names() {
        let schedules = create(name, &Config::default()).unwrap().schedules();
        for schedule in schedules.iter().filter(|s| is_distributed_schedule(s)) {
            for target in ["interp-mpi", "host-mpi"] {
                let target: Target = target.parse().unwrap();
                let app = build(name, schedule, &Config::default()).unwrap();
                let inputs = app.make_inputs(40, 24, 7);
                let expected = app.reference(&inputs).unwrap();
                let compiled = app.compile(&target).unwrap_or_else(|e| panic!("{name}/{schedule}: {e}"));
                let alone = app.realize(&compiled, &inputs).unwrap();
                if let Err(m) = alone.compare(&expected, app.tolerance()) {
                    panic!("{name}/{schedule} on {target} as one process: {m}");
                }
                // The interpreter is slow: two rank counts there, all four on the host.
                let counts: &[i32] = if target.is_interp() { &[2, 3] } else { &[1, 2, 3, 4] };
                for &ranks in counts {
                    // An app is not shared between threads: each rank builds its own (the
                    // compiled pipeline is shared).
                    let outs = InProcessRanks::run(ranks, |comm| {
                        let app = build(name, schedule, &Config::default()).unwrap();
                        app.realize_on_rank(&compiled, &inputs, comm)
                    });
                    for (r, out) in outs.into_iter().enumerate() {
                        let out =
                            out.unwrap_or_else(|e| panic!("{name}/{schedule} on {target}, rank {r} of {ranks}: {e}"));
                        if let Err(m) = out.compare(&expected, app.tolerance()) {
                            panic!("{name}/{schedule} on {target}, rank {r} of {ranks}: {m}");
                        }
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 8, "only {checked} distributed app schedules");
}
