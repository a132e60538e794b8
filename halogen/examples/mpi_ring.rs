//! A ring of border exchanges over MPI: each rank owns a strip of rows of an image, sends
//! its first and last rows to the ranks before and after it, and receives theirs into its
//! ghost rows. Prints `OK` on rank 0 when every rank got what it expected.
//!
//! ```text
//! cargo build -p halogen --features mpi --example mpi_ring
//! mpirun -np 3 target/debug/examples/mpi_ring
//! ```

use halogen::runtime::distributed::{print_stats_if_asked, Exchange, MpiSession, StridedRegion};
use std::process::ExitCode;

const W: usize = 7;
const H: usize = 5;

/// The value rank `r` holds at (x, y) of its interior.
fn value(r: i32, x: usize, y: usize) -> i32 {
    r * 1000 + (y * W + x) as i32
}

fn row(v: &mut [i32], y: usize) -> StridedRegion {
    StridedRegion { base: v[y * W..].as_mut_ptr().cast(), elem_bytes: 4, extents: vec![W as i64], strides: vec![1] }
}

fn main() -> ExitCode {
    let mpi = match MpiSession::init() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpi_ring: {e}");
            return ExitCode::FAILURE;
        }
    };
    // MPI is initialized once per process.
    let again = MpiSession::init();
    if again.is_ok() {
        eprintln!("mpi_ring: MPI initialized twice");
        return ExitCode::FAILURE;
    }
    let comm = mpi.communicator();
    let (r, n) = (comm.rank(), comm.ranks());
    let (prev, next) = ((r + n - 1) % n, (r + 1) % n);
    // Rows 1..=H are this rank's; rows 0 and H + 1 are ghost rows.
    let mut v = vec![-1i32; W * (H + 2)];
    for y in 0..H {
        for x in 0..W {
            v[(y + 1) * W + x] = value(r, x, y);
        }
    }
    let mut failures = 0i64;
    for round in 0..3 {
        let mut ex = Exchange::default();
        // SAFETY: the rows lie inside `v`, which outlives the exchange.
        unsafe {
            ex.post_send(next, &row(&mut v, H));
            ex.post_send(prev, &row(&mut v, 1));
            ex.post_receive(prev, row(&mut v, 0));
            ex.post_receive(next, row(&mut v, H + 1));
        }
        if let Err(e) = ex.finish(&*comm) {
            eprintln!("mpi_ring: rank {r}: round {round}: {e}");
            mpi.abort(2);
        }
        let top_ok = (0..W).all(|x| v[x] == value(prev, x, H - 1));
        let bottom_ok = (0..W).all(|x| v[(H + 1) * W + x] == value(next, x, 0));
        if !(top_ok && bottom_ok) {
            eprintln!("mpi_ring: rank {r}: round {round}: wrong ghost rows");
            failures += 1;
        }
        v[..W].fill(-1);
        v[(H + 1) * W..].fill(-1);
    }
    // A wrong size is an error, not a truncated message.
    let wrong = comm.exchange(vec![(next, vec![0; 3])], &[(prev, 4)]);
    match wrong {
        Err(e) if e.to_string().contains(&format!("from rank {prev} has 3 bytes but 4 bytes were expected")) => {}
        other => {
            eprintln!("mpi_ring: rank {r}: a 3-byte message received as 4 bytes gave {other:?}");
            failures += 1;
        }
    }
    // Three rounds of two messages each way, and the wrong-size one; none to itself.
    let expected_messages = if n > 1 { 7 } else { 0 };
    let stats = comm.stats();
    if stats.messages_sent != expected_messages || stats.messages_received != expected_messages {
        eprintln!("mpi_ring: rank {r}: stats {stats:?}, expected {expected_messages} messages each way");
        failures += 1;
    }
    let mut total = [failures];
    if let Err(e) = comm.all_reduce_sum_i64(&mut total) {
        eprintln!("mpi_ring: rank {r}: {e}");
        mpi.abort(2);
    }
    print_stats_if_asked(&*comm);
    comm.barrier().expect("barrier");
    if r == 0 {
        if total[0] == 0 {
            println!("OK ({n} rank{})", if n == 1 { "" } else { "s" });
        } else {
            println!("FAILED ({} failures)", total[0]);
        }
    }
    if total[0] == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
