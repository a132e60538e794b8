use super::*;
use crate::runtime::ffi::{HalogenRuntime, RUNTIME};

/// The bytes of `r` element by element, by index arithmetic alone (the reference for pack).
fn naive_pack(mem: &[u8], origin: usize, r: &StridedRegion) -> Vec<u8> {
    let mut out = Vec::new();
    if r.extents.iter().any(|&e| e <= 0) {
        return out;
    }
    let mut index = vec![0i64; r.extents.len()];
    loop {
        let off = origin as i64 + index.iter().zip(&r.strides).map(|(i, s)| i * s).sum::<i64>() * r.elem_bytes as i64;
        out.extend_from_slice(&mem[off as usize..off as usize + r.elem_bytes]);
        let mut d = 0;
        loop {
            if d == index.len() {
                return out;
            }
            index[d] += 1;
            if index[d] < r.extents[d] {
                break;
            }
            index[d] = 0;
            d += 1;
        }
    }
}

/// Packs a region of a patterned buffer and compares with the reference; unpacks other
/// bytes into it and checks exactly the region's bytes changed.
fn round_trip(elem_bytes: usize, extents: &[i64], strides: &[i64], origin_elems: usize, len_elems: usize) {
    let mut mem: Vec<u8> = (0..len_elems * elem_bytes).map(|i| (i * 7 % 251) as u8).collect();
    let origin = origin_elems * elem_bytes;
    let region = StridedRegion {
        base: mem[origin..].as_mut_ptr(),
        elem_bytes,
        extents: extents.to_vec(),
        strides: strides.to_vec(),
    };
    let expected = naive_pack(&mem, origin, &region);
    assert_eq!(region.bytes(), expected.len(), "{extents:?} {strides:?}");
    // SAFETY: every element of the region lies inside `mem` (the reference indexed them).
    let packed = unsafe { region.pack() };
    assert_eq!(packed, expected, "pack of {extents:?} {strides:?} x{elem_bytes}");
    let fresh: Vec<u8> = (0..packed.len()).map(|i| (i as u8).wrapping_mul(13).wrapping_add(1)).collect();
    let before = mem.clone();
    // SAFETY: as above.
    unsafe { region.unpack(&fresh) };
    // SAFETY: as above.
    assert_eq!(unsafe { region.pack() }, fresh);
    // Outside the region nothing changed: unpack the old bytes back and compare all of it.
    // SAFETY: as above.
    unsafe { region.unpack(&expected) };
    assert_eq!(mem, before);
}

#[test]
fn pack_and_unpack_2d() {
    for e in [1, 2, 3, 4, 8] {
        // A 3x2 box of a 5x4 row-major image at (1, 1).
        round_trip(e, &[3, 2], &[1, 5], 6, 20);
        // The whole image: one dense row.
        round_trip(e, &[5, 4], &[1, 5], 0, 20);
        // A column (strided rows).
        round_trip(e, &[1, 4], &[1, 5], 2, 20);
        // Transposed: x along the slow dimension.
        round_trip(e, &[4, 5], &[5, 1], 0, 20);
    }
}

#[test]
fn pack_and_unpack_3d() {
    for e in [1, 2, 4, 8, 12] {
        // A 2x3x2 box of a 4x5x3 volume at (1, 1, 1).
        round_trip(e, &[2, 3, 2], &[1, 4, 20], 1 + 4 + 20, 60);
        // Dense planes merge into one row.
        round_trip(e, &[4, 5, 3], &[1, 4, 20], 0, 60);
        // Extent-1 dimensions in between.
        round_trip(e, &[1, 5, 1], &[1, 4, 20], 21, 60);
        // Channels innermost with stride 3 (interleaved).
        round_trip(e, &[2, 2, 2], &[20, 1, 4], 0, 60);
    }
}

#[test]
fn pack_and_unpack_negative_strides() {
    for e in [1, 2, 4, 8] {
        // Row-flipped: y runs backwards from the last row.
        round_trip(e, &[5, 4], &[1, -5], 15, 20);
        // x backwards from the end of the row.
        round_trip(e, &[5, 4], &[-1, 5], 4, 20);
        // Both, in 3-D.
        round_trip(e, &[2, 3, 2], &[-1, -4, 20], 1 + 8, 60);
    }
}

#[test]
fn zero_extents_have_no_bytes() {
    round_trip(4, &[0, 3], &[1, 5], 0, 20);
    round_trip(4, &[3, 0], &[1, 5], 0, 20);
    round_trip(2, &[3, -2], &[1, 5], 0, 20);
    let r = StridedRegion { base: std::ptr::null_mut(), elem_bytes: 4, extents: vec![100, 0], strides: vec![1, 100] };
    assert_eq!(r.bytes(), 0);
    // SAFETY: an empty region touches no memory.
    assert!(unsafe { r.pack() }.is_empty());
    // SAFETY: as above.
    unsafe { r.unpack(&[]) };
    // No dimensions: one element.
    round_trip(4, &[], &[], 3, 5);
}

/// A 2-D strip of `w` x `h` interior rows of i32 with a ghost row above and below, owned by
/// one rank: rows 1..=h hold `rank * 1000 + y * w + x`.
fn strip(rank: i32, w: usize, h: usize) -> Vec<i32> {
    let mut v = vec![-1; w * (h + 2)];
    for y in 0..h {
        for x in 0..w {
            v[(y + 1) * w + x] = rank * 1000 + (y * w + x) as i32;
        }
    }
    v
}

fn row_region(v: &mut [i32], w: usize, row: usize) -> StridedRegion {
    StridedRegion {
        base: v[row * w..].as_mut_ptr().cast(),
        elem_bytes: 4,
        extents: vec![w as i64, 1],
        strides: vec![1, w as i64],
    }
}

/// Each rank sends its top row to the rank before it and its bottom row to the rank after
/// it in a ring, and receives their bottom and top rows into its ghost rows.
fn ring(ranks: i32) {
    let (w, h) = (6usize, 4usize);
    let results = InProcessRanks::run(ranks, |comm| {
        let (r, n) = (comm.rank(), comm.ranks());
        assert_eq!(n, ranks);
        let (prev, next) = ((r + n - 1) % n, (r + 1) % n);
        let mut v = strip(r, w, h);
        let mut ex = Exchange::default();
        // SAFETY: the rows lie inside `v`, which outlives the exchange.
        unsafe {
            // To the next rank first, then the previous one; receives from the previous
            // rank first: with two ranks both messages go to the same peer, matched in order.
            ex.post_send(next, &row_region(&mut v, w, h));
            ex.post_send(prev, &row_region(&mut v, w, 1));
            ex.post_receive(prev, row_region(&mut v, w, 0));
            ex.post_receive(next, row_region(&mut v, w, h + 1));
        }
        ex.finish(&*comm).unwrap();
        assert!(ex.is_empty());
        // A second exchange in the other direction order, to check sequencing.
        let got = comm.exchange(vec![(next, vec![r as u8; 3])], &[(prev, 3)]).unwrap();
        assert_eq!(got, vec![vec![prev as u8; 3]]);
        (v, comm.stats())
    });
    assert_eq!(results.len(), ranks as usize);
    for (r, (v, stats)) in results.into_iter().enumerate() {
        let r = r as i32;
        let (prev, next) = ((r + ranks - 1) % ranks, (r + 1) % ranks);
        let top: Vec<i32> = (0..w).map(|x| prev * 1000 + ((h - 1) * w + x) as i32).collect();
        let bottom: Vec<i32> = (0..w).map(|x| next * 1000 + x as i32).collect();
        assert_eq!(&v[..w], &top[..], "rank {r} of {ranks}: top ghost row");
        assert_eq!(&v[(h + 1) * w..], &bottom[..], "rank {r} of {ranks}: bottom ghost row");
        assert_eq!(&v[w..(h + 1) * w], &strip(r, w, h)[w..(h + 1) * w], "rank {r}: interior");
        // Messages to itself (one rank) are not counted.
        let expected = if ranks == 1 {
            TransferStats::default()
        } else {
            let bytes = 2 * w as u64 * 4 + 3;
            TransferStats { messages_sent: 3, bytes_sent: bytes, messages_received: 3, bytes_received: bytes }
        };
        assert_eq!(stats, expected, "rank {r} of {ranks}");
    }
}

#[test]
fn ring_exchanges_of_1_to_4_ranks() {
    for ranks in 1..=4 {
        ring(ranks);
    }
}

#[test]
fn a_rank_that_returns_without_exchanging_fails_its_peers() {
    let results = InProcessRanks::run(3, |comm| {
        if comm.rank() == 1 {
            return Ok(Vec::new());
        }
        // Both others expect a message from rank 1, which has returned (or will).
        comm.exchange(vec![(1, vec![0; 8])], &[(1, 8)])
    });
    assert!(results[1].is_ok());
    for r in [0, 2] {
        let e = results[r].as_ref().unwrap_err().to_string();
        assert!(e.contains(&format!("rank {r}:")) && e.contains("rank 1"), "{e}");
        assert!(e.contains("returned or panicked"), "{e}");
    }
}

#[test]
fn a_panicking_rank_fails_its_peers_and_the_run() {
    let errors = Mutex::new(Vec::new());
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        InProcessRanks::run(2, |comm| {
            if comm.rank() == 0 {
                panic!("rank 0 fails");
            }
            let e = comm.exchange(Vec::new(), &[(0, 4)]).unwrap_err();
            errors.lock().unwrap().push(e.to_string());
        })
    }));
    let payload = run.unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"rank 0 fails"));
    let errors = errors.into_inner().unwrap();
    assert_eq!(errors.len(), 1);
    assert!(errors[0].contains("rank 1:") && errors[0].contains("rank 0"), "{}", errors[0]);
}

#[test]
fn a_silent_peer_times_out() {
    let results = InProcessRanks::run_with_timeout(2, Duration::from_millis(200), |comm| {
        if comm.rank() == 1 {
            // Alive but never sending.
            std::thread::sleep(Duration::from_millis(1500));
            return Ok(Vec::new());
        }
        comm.exchange(Vec::new(), &[(1, 1)])
    });
    let e = results[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("no message came from rank 1 within 0.2 s"), "{e}");
}

#[test]
fn wrong_sizes_and_peers_are_errors() {
    let results = InProcessRanks::run(2, |comm| {
        let other = 1 - comm.rank();
        // Rank 0 sends 3 bytes, rank 1 sends 4; each expects 4.
        let n = if comm.rank() == 0 { 3 } else { 4 };
        comm.exchange(vec![(other, vec![1; n])], &[(other, 4)])
    });
    let e = results[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("rank 1: exchange: the message from rank 0 has 3 bytes but 4 bytes were expected"), "{e}");
    assert!(results[0].is_ok());
    let e = InProcessRanks::run(2, |comm| comm.exchange(vec![(2, vec![])], &[]).unwrap_err().to_string());
    assert!(e[0].contains("cannot send to rank 2: the run has 2 ranks (0 to 1)"), "{}", e[0]);
    let e = SingleRank.exchange(Vec::new(), &[(-1, 0)]).unwrap_err().to_string();
    assert!(e.contains("cannot receive from rank -1: the run has 1 rank (0 to 0)"), "{e}");
}

#[test]
fn one_exchange_never_takes_a_later_ones_message() {
    let results = InProcessRanks::run(2, |comm| {
        if comm.rank() == 0 {
            // Exchange 0 sends to rank 1.
            comm.exchange(vec![(1, vec![5])], &[]).map(|_| ())
        } else {
            // Rank 1 skips exchange 0 (an empty exchange of its own) and expects the
            // message in exchange 1: an error, not data of another exchange.
            comm.exchange(Vec::new(), &[])?;
            comm.exchange(Vec::new(), &[(0, 1)]).map(|_| ())
        }
    });
    assert!(results[0].is_ok());
    let e = results[1].as_ref().unwrap_err().to_string();
    assert!(e.contains("rank 1: in exchange 1 it received from rank 0 a message of its exchange 0"), "{e}");
}

#[test]
fn all_reduce_and_barrier() {
    let out = InProcessRanks::run(3, |comm| {
        comm.barrier().unwrap();
        let mut v = [comm.rank() as i64, 10, i64::MAX];
        comm.all_reduce_sum_i64(&mut v).unwrap();
        comm.barrier().unwrap();
        // Exchanges and reductions interleave.
        let n = comm.ranks();
        let next = (comm.rank() + 1) % n;
        let prev = (comm.rank() + n - 1) % n;
        let got = comm.exchange(vec![(next, vec![1, 2])], &[(prev, 2)]).unwrap();
        let mut w = [1i64];
        comm.all_reduce_sum_i64(&mut w).unwrap();
        (v, got, w)
    });
    for (v, got, w) in out {
        assert_eq!(v, [3, 30, i64::MAX.wrapping_mul(3)]);
        assert_eq!(got, vec![vec![1, 2]]);
        assert_eq!(w, [3]);
    }
    let e = InProcessRanks::run(2, |comm| {
        let mut v = vec![1i64; comm.rank() as usize + 1];
        comm.all_reduce_sum_i64(&mut v).map_err(|e| e.to_string())
    });
    assert!(e.iter().any(|r| r.as_ref().is_err_and(|m| m.contains("passed"))), "{e:?}");
}

#[test]
fn single_rank() {
    let c = SingleRank;
    assert_eq!((c.rank(), c.ranks()), (0, 1));
    assert_eq!(c.exchange(Vec::new(), &[]).unwrap(), Vec::<Vec<u8>>::new());
    let got = c.exchange(vec![(0, vec![1]), (0, vec![2, 3])], &[(0, 1), (0, 2)]).unwrap();
    assert_eq!(got, vec![vec![1], vec![2, 3]]);
    assert!(c.exchange(vec![(1, vec![1])], &[]).unwrap_err().to_string().contains("rank 1"));
    assert!(c.exchange(Vec::new(), &[(1, 1)]).is_err());
    let e = c.exchange(vec![(0, vec![1])], &[(0, 2)]).unwrap_err().to_string();
    assert!(e.contains("has 1 bytes but 2 bytes were expected"), "{e}");
    assert!(c.exchange(vec![(0, vec![1])], &[]).is_err());
    assert!(c.exchange(Vec::new(), &[(0, 1)]).is_err());
    c.barrier().unwrap();
    assert_eq!(c.stats(), TransferStats::default());
}

#[test]
fn stats_line_format() {
    let line = InProcessRanks::run(2, |comm| {
        let other = 1 - comm.rank();
        comm.exchange(vec![(other, vec![0; 10])], &[(other, 10)]).unwrap();
        stats_line(&*comm)
    });
    assert_eq!(line[1], "halogen mpi rank 1/2: sent 1 messages 10 bytes, received 1 messages 10 bytes");
}

/// Calls the runtime table's `exchange` as generated code would.
///
/// # Safety
/// `ctx` is a live RunContext; the region is valid.
unsafe fn table_exchange(
    ctx: &RunContext,
    op: i32,
    peer: i32,
    base: *mut u8,
    extents: &[i64],
    strides: &[i64],
) -> c_int {
    let rt: &HalogenRuntime = &RUNTIME;
    let f = rt.exchange.expect("the Rust runtime exchanges");
    let ctx = ctx as *const RunContext as *mut c_void;
    // SAFETY: the caller's promise.
    unsafe { f(ctx, op, peer, base.cast(), 4, extents.len() as i32, extents.as_ptr(), strides.as_ptr()) }
}

#[test]
fn the_runtime_tables_exchange() {
    // Two ranks swap the first column of a 3x2 i32 image into the other's last column.
    let out = InProcessRanks::run(2, |comm| {
        let r = comm.rank();
        let ctx = RunContext::with_communicator(comm);
        let mut img: Vec<i32> = (0..6).map(|i| r * 100 + i).collect();
        let base = img.as_mut_ptr().cast::<u8>();
        let (ext, str) = ([1i64, 2], [1i64, 3]);
        // SAFETY: the columns lie inside `img`.
        unsafe {
            assert_eq!(table_exchange(&ctx, exchange_op::SEND, 1 - r, base, &ext, &str), 0);
            assert_eq!(table_exchange(&ctx, exchange_op::RECEIVE, 1 - r, base.add(8), &ext, &str), 0);
            assert_eq!(table_exchange(&ctx, exchange_op::FINISH, -1, std::ptr::null_mut(), &[], &[]), 0);
        }
        assert!(ctx.take_error().is_none());
        assert!(check_no_pending_exchange(&ctx).is_ok());
        img
    });
    assert_eq!(out[0], vec![0, 1, 100, 3, 4, 103]);
    assert_eq!(out[1], vec![100, 101, 0, 103, 104, 3]);
}

#[test]
fn the_runtime_tables_exchange_reports_errors() {
    let mut x = [0i32; 2];
    let base = x.as_mut_ptr().cast::<u8>();
    // No communicator.
    let ctx = RunContext::new();
    // SAFETY: the region lies inside `x`.
    assert_ne!(unsafe { table_exchange(&ctx, exchange_op::SEND, 0, base, &[2], &[1]) }, 0);
    let e = ctx.take_error().unwrap();
    assert!(e.starts_with("the pipeline has distributed loops but runs without a communicator"), "{e}");
    assert!(e.contains("Args::communicator"), "{e}");
    // A bad operation, a bad peer, and a posted exchange never finished.
    let ctx = RunContext::with_communicator(Arc::new(SingleRank));
    // SAFETY: as above.
    assert_ne!(unsafe { table_exchange(&ctx, 7, 0, base, &[2], &[1]) }, 0);
    assert!(ctx.take_error().unwrap().contains("unknown operation 7"));
    // SAFETY: as above.
    unsafe {
        assert_eq!(table_exchange(&ctx, exchange_op::SEND, 3, base, &[2], &[1]), 0);
        assert_ne!(table_exchange(&ctx, exchange_op::FINISH, 0, std::ptr::null_mut(), &[], &[]), 0);
    }
    let e = ctx.take_error().unwrap();
    assert!(e.contains("cannot send to rank 3: the run has 1 rank"), "{e}");
    assert!(!e.starts_with("runtime error"), "{e}");
    // SAFETY: as above.
    unsafe { assert_eq!(table_exchange(&ctx, exchange_op::RECEIVE, 0, base, &[2], &[1]), 0) };
    let e = check_no_pending_exchange(&ctx).unwrap_err().to_string();
    assert!(e.contains("posted 0 sends and 1 receives of a border exchange but never completed it"), "{e}");
    assert!(check_no_pending_exchange(&ctx).is_ok());
    assert_eq!(x, [0, 0]);
}

#[test]
fn exchange_is_emptied_by_a_failed_finish() {
    let mut a = [1u8; 4];
    let mut ex = Exchange::default();
    let region = StridedRegion { base: a.as_mut_ptr(), elem_bytes: 1, extents: vec![4], strides: vec![1] };
    // SAFETY: `a` outlives the exchange.
    unsafe { ex.post_receive(0, region) };
    assert!(!ex.is_empty());
    assert!(ex.finish(&SingleRank).is_err());
    assert!(ex.is_empty());
    assert_eq!(a, [1; 4]);
}
