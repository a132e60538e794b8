//! Times one app's schedule on the ranks of an MPI run: `distributed_bench APP WIDTH HEIGHT
//! SCHEDULE RUNS`. Each run starts after a barrier and ends when the slowest rank is done
//! (the output's slices are not gathered: a distributed output stays distributed). Rank 0
//! prints one line: the fastest run's milliseconds, the bytes all ranks sent in one run,
//! and, for blur, transpose and hist_eq, the bytes the ghost-zone (or all-reduce) formula
//! says they must send. A
//! schedule that is not distributed runs as one process (every rank alone).
//!
//! ```text
//! cargo build --release -p halogen-apps --features mpi --example distributed_bench
//! HALOGEN_NUM_THREADS=1 mpirun -np 2 target/release/examples/distributed_bench blur 6400 4800 distributed_exchange 10
//! ```
//! `bench/mpi_scaling.sh` runs the comparison the README reports.

use halogen::prelude::*;
use halogen::runtime::distributed::MpiSession;
use halogen::runtime::gather::block_slice;
use halogen_apps::{build, is_distributed_schedule, Config, DynBuffer};
use std::process::ExitCode;
use std::time::Instant;

/// The bytes the ghost-zone formula says all ranks send together in one run, where it is
/// known: `H(r) ∩ N(r')` summed over pairs of ranks.
fn formula_bytes(app: &str, schedule: &str, w: i64, h: i64, ranks: i32) -> Option<i64> {
    let overlap = |a: (i32, i32), b: (i32, i32)| i64::from((a.1.min(b.1) - a.0.max(b.0)).max(0));
    let pairs = |per_pair: &dyn Fn(i32, i32) -> i64| -> i64 {
        (0..ranks)
            .flat_map(|r| (0..ranks).filter(move |&p| p != r).map(move |p| (r, p)))
            .map(|(r, p)| per_pair(r, p))
            .sum()
    };
    match (app, schedule) {
        // blur_x's h + 2 rows are sliced; each rank needs its output rows and the two after.
        ("blur", "distributed_exchange") => Some(pairs(&|r, p| {
            let (lo, hi) = block_slice(h as i32, p, ranks);
            let need = if lo < hi { (lo, hi + 2) } else { (0, 0) };
            overlap(block_slice(h as i32 + 2, r, ranks), need) * w * 2
        })),
        ("blur", "distributed") | ("transpose", "distributed_columns") => Some(0),
        // The copy (the output's width in rows) is sliced by rows; each rank needs the
        // copy's columns of its output rows, from every rank.
        ("transpose", "distributed") => Some(pairs(&|r, p| {
            let (a, b) = (block_slice(w as i32, r, ranks), block_slice(h as i32, p, ranks));
            i64::from(a.1 - a.0) * i64::from(b.1 - b.0) * 2
        })),
        // Each rank's whole histogram (256 i32 counts) goes to every other rank.
        ("hist_eq", "distributed") => Some(pairs(&|_, _| 256 * 4)),
        _ => None,
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, app_name, width, height, schedule, runs] = &args[..] else {
        eprintln!("usage: distributed_bench APP WIDTH HEIGHT SCHEDULE RUNS");
        return ExitCode::FAILURE;
    };
    let (Ok(width), Ok(height), Ok(runs)) = (width.parse::<i32>(), height.parse::<i32>(), runs.parse::<usize>()) else {
        eprintln!("distributed_bench: WIDTH, HEIGHT and RUNS are numbers");
        return ExitCode::FAILURE;
    };
    let session = match MpiSession::init() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("distributed_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let comm = session.communicator();
    let distributed = is_distributed_schedule(schedule);
    let target: Target = if distributed { "host-mpi" } else { "host" }.parse().expect("a target");
    let app = match build(app_name, schedule, &Config::default()) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("distributed_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let inputs = app.make_inputs(width, height, 1);
    let compiled = app.compile(&target).expect("a compiled pipeline");
    let extents = app.output_extents(&inputs).expect("output extents");
    let mut out = DynBuffer::zeros(app.output_type(), &extents).expect("an output");
    // Each rank holds its block of each distributed input, as in a distributed run.
    let mine = app.rank_inputs(&inputs, comm.rank(), comm.ranks()).expect("the rank's inputs");
    let mut args = Args::new();
    if distributed {
        app.bind_on_rank(&inputs, &mine, &mut args).expect("bound inputs");
        args.communicator(comm.clone());
    } else {
        app.bind(&inputs, &mut args).expect("bound inputs");
    }
    let mut best = f64::INFINITY;
    let mut sent = 0u64;
    for _ in 0..runs.max(1) {
        comm.barrier().expect("a barrier");
        let before = comm.stats().bytes_sent;
        let t = Instant::now();
        out.realize(&compiled, &args).expect("a run");
        comm.barrier().expect("a barrier");
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        sent = comm.stats().bytes_sent - before;
    }
    let mut total = [sent as i64];
    comm.all_reduce_sum_i64(&mut total).expect("an all-reduce");
    if comm.rank() == 0 {
        let (w, h) = (i64::from(extents[0]), i64::from(extents[1]));
        let formula = formula_bytes(app_name, schedule, w, h, comm.ranks()).map_or("-".into(), |b| b.to_string());
        let threads = halogen::runtime::thread_pool::num_threads();
        println!(
            "{app_name} {schedule} {}x{} ranks {} threads {threads} min_ms {best:.3} bytes_sent {} formula_bytes {formula}",
            extents[0],
            extents[1],
            comm.ranks(),
            total[0]
        );
    }
    ExitCode::SUCCESS
}
