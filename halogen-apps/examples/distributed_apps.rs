//! Every app's `distributed` schedules over MPI, one process per rank: each rank computes
//! its slice, the gathered output equals the plain-Rust reference on every rank, and each
//! rank sends and receives exactly the messages and bytes that the same run on in-process
//! ranks does (whose volumes `halogen/tests/distributed.rs` checks against the ghost-zone
//! formula). Prints one line per schedule on rank 0; exits nonzero on any difference.
//!
//! ```text
//! cargo build -p halogen-apps --features mpi --example distributed_apps
//! mpirun -np 3 target/debug/examples/distributed_apps
//! ```

use halogen::prelude::*;
use halogen::runtime::distributed::{Communicator, InProcessRanks, MpiSession, TransferStats};
use halogen_apps::{app_names, build, create, is_distributed_schedule, Config};
use std::process::ExitCode;
use std::sync::Arc;

/// The messages and bytes `comm` moved during `run`.
fn moved<R>(comm: &dyn Communicator, run: impl FnOnce() -> R) -> (R, TransferStats) {
    let before = comm.stats();
    let r = run();
    let after = comm.stats();
    let d = TransferStats {
        messages_sent: after.messages_sent - before.messages_sent,
        bytes_sent: after.bytes_sent - before.bytes_sent,
        messages_received: after.messages_received - before.messages_received,
        bytes_received: after.bytes_received - before.bytes_received,
    };
    (r, d)
}

fn main() -> ExitCode {
    let session = match MpiSession::init() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("distributed_apps: {e}");
            return ExitCode::FAILURE;
        }
    };
    let comm = session.communicator();
    let (rank, ranks) = (comm.rank(), comm.ranks());
    let target: Target = "host-mpi".parse().expect("a target");
    let mut failures = 0i64;
    for name in app_names() {
        let schedules = create(name, &Config::default()).expect("an app").schedules();
        for schedule in schedules.iter().filter(|s| is_distributed_schedule(s)) {
            let app = build(name, schedule, &Config::default()).expect("an app");
            let inputs = app.make_inputs(61, 43, 11);
            let expected = app.reference(&inputs).expect("a reference");
            let compiled = app.compile(&target).expect("a compiled pipeline");
            let (out, stats) = moved(&*comm, || app.realize_on_rank(&compiled, &inputs, comm.clone()));
            let verdict = match out
                .map_err(|e| e.to_string())
                .and_then(|o| o.compare(&expected, app.tolerance()).map_err(|m| m.to_string()))
            {
                Ok(_) => String::new(),
                Err(e) => format!("pixels: {e}"),
            };
            // The same run on in-process ranks, for this rank's expected traffic.
            let simulated = InProcessRanks::run(ranks, |c: Arc<dyn Communicator>| {
                let app = build(name, schedule, &Config::default()).expect("an app");
                moved(&*c, || app.realize_on_rank(&compiled, &inputs, c.clone()).map(|_| ())).1
            });
            let traffic = if stats == simulated[rank as usize] {
                String::new()
            } else {
                format!("traffic {stats:?}, in-process ranks {:?}", simulated[rank as usize])
            };
            let bad = !verdict.is_empty() || !traffic.is_empty();
            if bad {
                eprintln!("distributed_apps: {name}/{schedule} rank {rank} of {ranks}: {verdict} {traffic}");
            }
            let mut count = [i64::from(bad)];
            comm.all_reduce_sum_i64(&mut count).expect("an all-reduce");
            failures += count[0];
            if rank == 0 {
                let word = if count[0] == 0 { "ok" } else { "FAILED" };
                println!("{name}/{schedule} on {ranks} ranks: {word} (rank 0 sent {} bytes)", stats.bytes_sent);
            }
        }
    }
    if failures > 0 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
