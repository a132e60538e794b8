//! The runtime of distributed execution (after Distributed Halide): the ranks of a
//! distributed run each compute their slice of a distributed loop, and before a stage runs
//! they swap the borders (ghost zones) of its inputs that other ranks own, in a *border
//! exchange*.
//!
//! The pieces, from the bottom up:
//!
//! - A [`Communicator`] connects one rank to the others. Its [`Communicator::exchange`]
//!   carries out one border exchange: all of the rank's sends and receives are started
//!   together and completed together, so no order of posting can deadlock. Three
//!   transports implement it: [`SingleRank`] (a run of one rank), [`InProcessRanks`] (N
//!   ranks as N threads of one process, for tests and for trying a distribution without
//!   MPI) and, with the `mpi` cargo feature, `MpiSession` (MPI's `MPI_COMM_WORLD`: the
//!   transport of real runs, one process per rank under `mpirun`).
//! - A [`StridedRegion`] is a box of a buffer (any strides, any sign); [`StridedRegion::pack`]
//!   and [`StridedRegion::unpack`] copy it to and from a message's contiguous bytes,
//!   innermost dimension first.
//! - An [`Exchange`] gathers the sends and receives that generated code posts for one
//!   border exchange and completes them with one call of [`Communicator::exchange`],
//!   unpacking each received message into its region.
//! - [`halogen_exchange`] is the `exchange` entry of the runtime table
//!   ([`super::ffi::HalogenRuntime`]) through which generated code posts and completes
//!   exchanges, with the communicator of its [`super::ffi::RunContext`].
//!
//! Matching rules (the same on every transport): every rank completes the same sequence of
//! exchanges, in the same order, including exchanges in which it has nothing to send or
//! receive (as generated code does: each rank runs every border exchange of the
//! pipeline); within one exchange, the messages from one rank to another are matched in
//! the order they are posted; a rank may send to itself (the message is copied). Each
//! message carries its exchange's sequence number, so one exchange never takes a message
//! of another: a mismatch is an `Err` that names both ranks.
//!
//! ```
//! use halogen::runtime::distributed::{Exchange, InProcessRanks, StridedRegion};
//! // Two ranks each own four i32s; each sends its first element to the other and receives
//! // the other's into its last element.
//! let out = InProcessRanks::run(2, |comm| {
//!     let r = comm.rank();
//!     let mut data = [10 * r, 10 * r + 1, 10 * r + 2, -1];
//!     let base = data.as_mut_ptr().cast::<u8>();
//!     let first = StridedRegion { base, elem_bytes: 4, extents: vec![1], strides: vec![1] };
//!     // SAFETY: the last element, valid and unaliased until finish.
//!     let last = StridedRegion { base: unsafe { base.add(12) }, ..first.clone() };
//!     let mut ex = Exchange::default();
//!     // SAFETY: both regions lie inside `data`, which outlives the exchange.
//!     unsafe {
//!         ex.post_send(1 - r, &first);
//!         ex.post_receive(1 - r, last);
//!     }
//!     ex.finish(&*comm).unwrap();
//!     data
//! });
//! assert_eq!(out, vec![[0, 1, 2, 10], [10, 11, 12, 0]]);
//! ```

use super::ffi::{exchange_op, RunContext};
use crate::error::{Error, Result};
use crate::ir::CombineOp;
use std::collections::VecDeque;
use std::ffi::{c_int, c_void};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

/// What one rank has sent to and received from the other ranks in exchanges, cumulatively
/// ([`Communicator::stats`]). A rank's messages to itself are copies and are not counted,
/// nor is the traffic of [`Communicator::all_reduce_sum_i64`] and
/// [`Communicator::barrier`].
///
/// ```
/// use halogen::runtime::distributed::{Communicator, SingleRank, TransferStats};
/// assert_eq!(SingleRank.stats(), TransferStats::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Messages this rank sent to other ranks.
    pub messages_sent: u64,
    /// Bytes in those messages.
    pub bytes_sent: u64,
    /// Messages this rank received from other ranks.
    pub messages_received: u64,
    /// Bytes in those messages.
    pub bytes_received: u64,
}

impl TransferStats {
    fn count_send(&mut self, bytes: usize) {
        self.messages_sent += 1;
        self.bytes_sent += bytes as u64;
    }

    fn count_receive(&mut self, bytes: usize) {
        self.messages_received += 1;
        self.bytes_received += bytes as u64;
    }
}

/// One rank's connection to the ranks of a distributed run.
///
/// Every rank must call [`exchange`](Communicator::exchange),
/// [`all_reduce_sum_i64`](Communicator::all_reduce_sum_i64) and
/// [`barrier`](Communicator::barrier) in the same order as the others (see the module's
/// matching rules). Calls on one communicator from several threads are serialized.
///
/// ```
/// use halogen::runtime::distributed::InProcessRanks;
/// // Each rank sends its number to the next rank of a ring and receives the previous one's.
/// let got = InProcessRanks::run(3, |comm| {
///     let (r, n) = (comm.rank(), comm.ranks());
///     let next = (r + 1) % n;
///     let prev = (r + n - 1) % n;
///     let received = comm.exchange(vec![(next, vec![r as u8])], &[(prev, 1)]).unwrap();
///     received[0][0]
/// });
/// assert_eq!(got, vec![2, 0, 1]);
/// ```
pub trait Communicator: Send + Sync + std::fmt::Debug {
    /// This rank's number, in `[0, ranks())`.
    fn rank(&self) -> i32;

    /// The number of ranks of the run.
    fn ranks(&self) -> i32;

    /// Carries out one border exchange: sends each `(peer, bytes)` of `sends` to its peer
    /// and receives one message from each `(peer, bytes)` of `receives`, which must hold
    /// exactly that many bytes. All transfers are started before any is waited for, so the
    /// order of `sends` and `receives` cannot deadlock. Returns the received messages in
    /// the order of `receives`.
    ///
    /// # Errors
    /// `Error::Runtime` naming the peer when a peer is not a rank of the run, when a
    /// received message's size differs from the expected one (with both numbers), when a
    /// message belongs to another exchange, or (in process) when the peer has finished
    /// without sending. After an error the ranks' exchanges are out of step: the run
    /// should end.
    fn exchange(&self, sends: Vec<(i32, Vec<u8>)>, receives: &[(i32, usize)]) -> Result<Vec<Vec<u8>>>;

    /// The messages and bytes this rank has exchanged with other ranks so far.
    fn stats(&self) -> TransferStats;

    /// Replaces each of `values` with its sum (wrapping) over all ranks; every rank passes
    /// the same number of values.
    ///
    /// # Errors
    /// `Error::Runtime` when a peer cannot be reached or (in process) passes another number
    /// of values.
    fn all_reduce_sum_i64(&self, values: &mut [i64]) -> Result<()>;

    /// Returns once every rank has called it.
    ///
    /// # Errors
    /// `Error::Runtime` when a peer cannot be reached.
    fn barrier(&self) -> Result<()>;
}

fn runtime(message: String) -> Error {
    Error::Runtime(message)
}

/// Checks that every peer of an exchange is a rank of the run.
fn check_peers(rank: i32, ranks: i32, sends: &[(i32, Vec<u8>)], receives: &[(i32, usize)]) -> Result<()> {
    let sent = sends.iter().map(|s| (s.0, "send to"));
    let received = receives.iter().map(|r| (r.0, "receive from"));
    for (peer, what) in sent.chain(received) {
        if !(0..ranks).contains(&peer) {
            return Err(runtime(format!(
                "rank {rank}: exchange: cannot {what} rank {peer}: the run has {ranks} rank{} (0 to {})",
                if ranks == 1 { "" } else { "s" },
                ranks - 1
            )));
        }
    }
    Ok(())
}

fn size_mismatch(rank: i32, peer: i32, expected: usize, got: usize) -> Error {
    runtime(format!(
        "rank {rank}: exchange: the message from rank {peer} has {got} bytes but {expected} bytes were expected"
    ))
}

/// The communicator of a run of one rank (rank 0 of 1): exchanges have no peers, though
/// the rank may send to itself.
///
/// ```
/// use halogen::runtime::distributed::{Communicator, SingleRank};
/// let c = SingleRank;
/// assert_eq!((c.rank(), c.ranks()), (0, 1));
/// assert_eq!(c.exchange(vec![(0, vec![7])], &[(0, 1)]).unwrap(), vec![vec![7]]);
/// assert!(c.exchange(vec![(1, vec![7])], &[]).is_err());
/// let mut v = [3];
/// c.all_reduce_sum_i64(&mut v).unwrap();
/// assert_eq!(v, [3]);
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SingleRank;

impl Communicator for SingleRank {
    fn rank(&self) -> i32 {
        0
    }

    fn ranks(&self) -> i32 {
        1
    }

    fn exchange(&self, sends: Vec<(i32, Vec<u8>)>, receives: &[(i32, usize)]) -> Result<Vec<Vec<u8>>> {
        check_peers(0, 1, &sends, receives)?;
        // Every peer is rank 0 itself: sends match receives in order.
        let mut queue: VecDeque<Vec<u8>> = sends.into_iter().map(|(_, bytes)| bytes).collect();
        let mut out = Vec::with_capacity(receives.len());
        for &(_, expected) in receives {
            let Some(bytes) = queue.pop_front() else {
                return Err(runtime(format!(
                    "rank 0: exchange: {} receives from rank 0 but {} sends to it",
                    receives.len(),
                    out.len()
                )));
            };
            if bytes.len() != expected {
                return Err(size_mismatch(0, 0, expected, bytes.len()));
            }
            out.push(bytes);
        }
        if !queue.is_empty() {
            return Err(runtime(format!(
                "rank 0: exchange: {} sends to rank 0 but {} receives from it",
                out.len() + queue.len(),
                receives.len()
            )));
        }
        Ok(out)
    }

    fn stats(&self) -> TransferStats {
        TransferStats::default()
    }

    fn all_reduce_sum_i64(&self, _values: &mut [i64]) -> Result<()> {
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        Ok(())
    }
}

/// How long an in-process rank waits for a message before giving up (a last resort: a
/// peer that finished or panicked is noticed at once).
const RECEIVE_TIMEOUT: Duration = Duration::from_secs(60);

/// What an in-process message belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Exchange,
    Reduce,
}

/// One in-process message: its kind and sequence number (the sender's count of calls of
/// that kind before this one), and its bytes.
#[derive(Debug)]
struct Packet {
    kind: Kind,
    seq: u64,
    bytes: Vec<u8>,
}

/// A rank's channel ends: `to[p]` sends to rank `p`, `from[p]` receives from rank `p`.
#[derive(Debug)]
struct Links {
    to: Vec<Sender<Packet>>,
    from: Vec<Receiver<Packet>>,
}

#[derive(Debug)]
struct RankState {
    /// `None` once the rank's function has returned or panicked: its peers then see their
    /// channels from it disconnected.
    links: Option<Links>,
    exchanges: u64,
    reductions: u64,
}

/// One rank of [`InProcessRanks`].
#[derive(Debug)]
struct InProcessRank {
    rank: i32,
    ranks: i32,
    timeout: Duration,
    state: Mutex<RankState>,
    stats: Mutex<TransferStats>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl InProcessRank {
    fn links<'a>(&self, state: &'a RankState) -> Result<&'a Links> {
        state.links.as_ref().ok_or_else(|| {
            runtime(format!("rank {}: the communicator was used after its rank's function returned", self.rank))
        })
    }

    fn send(&self, links: &Links, peer: i32, kind: Kind, seq: u64, bytes: Vec<u8>) -> Result<()> {
        links.to[peer as usize].send(Packet { kind, seq, bytes }).map_err(|_| {
            runtime(format!("rank {}: cannot send to rank {peer}: its function has returned or panicked", self.rank))
        })
    }

    fn receive(&self, links: &Links, peer: i32, kind: Kind, seq: u64) -> Result<Vec<u8>> {
        let what = match kind {
            Kind::Exchange => "exchange",
            Kind::Reduce => "all-reduce or barrier",
        };
        let me = self.rank;
        match links.from[peer as usize].recv_timeout(self.timeout) {
            Ok(p) if p.kind == kind && p.seq == seq => Ok(p.bytes),
            Ok(p) => {
                let theirs = match p.kind {
                    Kind::Exchange => "exchange",
                    Kind::Reduce => "all-reduce or barrier",
                };
                Err(runtime(format!(
                    "rank {me}: in {what} {seq} it received from rank {peer} a message of its {theirs} {}: \
                     every rank must complete the same exchanges and reductions in the same order",
                    p.seq
                )))
            }
            Err(RecvTimeoutError::Disconnected) => Err(runtime(format!(
                "rank {me}: in {what} {seq} it expects a message from rank {peer}, whose function has \
                 returned or panicked without sending it"
            ))),
            Err(RecvTimeoutError::Timeout) => Err(runtime(format!(
                "rank {me}: in {what} {seq} no message came from rank {peer} within {} s",
                self.timeout.as_secs_f64()
            ))),
        }
    }
}

impl Communicator for InProcessRank {
    fn rank(&self) -> i32 {
        self.rank
    }

    fn ranks(&self) -> i32 {
        self.ranks
    }

    fn exchange(&self, sends: Vec<(i32, Vec<u8>)>, receives: &[(i32, usize)]) -> Result<Vec<Vec<u8>>> {
        check_peers(self.rank, self.ranks, &sends, receives)?;
        let mut state = lock(&self.state);
        let seq = state.exchanges;
        state.exchanges += 1;
        let links = self.links(&state)?;
        // Channels never block a sender: every send is under way before the first receive.
        for (peer, bytes) in sends {
            let n = bytes.len();
            self.send(links, peer, Kind::Exchange, seq, bytes)?;
            if peer != self.rank {
                lock(&self.stats).count_send(n);
            }
        }
        let mut out = Vec::with_capacity(receives.len());
        for &(peer, expected) in receives {
            let bytes = self.receive(links, peer, Kind::Exchange, seq)?;
            if bytes.len() != expected {
                return Err(size_mismatch(self.rank, peer, expected, bytes.len()));
            }
            if peer != self.rank {
                lock(&self.stats).count_receive(bytes.len());
            }
            out.push(bytes);
        }
        Ok(out)
    }

    fn stats(&self) -> TransferStats {
        *lock(&self.stats)
    }

    fn all_reduce_sum_i64(&self, values: &mut [i64]) -> Result<()> {
        let mut state = lock(&self.state);
        let seq = state.reductions;
        state.reductions += 1;
        let links = self.links(&state)?;
        let mine: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let peers = (0..self.ranks).filter(|&p| p != self.rank);
        for peer in peers.clone() {
            self.send(links, peer, Kind::Reduce, seq, mine.clone())?;
        }
        let mut sums = values.to_vec();
        for peer in peers {
            let theirs = self.receive(links, peer, Kind::Reduce, seq)?;
            if theirs.len() != mine.len() {
                return Err(runtime(format!(
                    "rank {}: all-reduce {seq}: rank {peer} passed {} values but this rank {}",
                    self.rank,
                    theirs.len() / 8,
                    values.len()
                )));
            }
            for (s, chunk) in sums.iter_mut().zip(theirs.chunks_exact(8)) {
                *s = s.wrapping_add(i64::from_le_bytes(chunk.try_into().expect("8 bytes")));
            }
        }
        values.copy_from_slice(&sums);
        Ok(())
    }

    fn barrier(&self) -> Result<()> {
        self.all_reduce_sum_i64(&mut [])
    }
}

/// Closes a rank's channels when its function returns or panics, so that its peers get an
/// error instead of waiting.
struct CloseOnExit(Arc<InProcessRank>);

impl Drop for CloseOnExit {
    fn drop(&mut self) {
        lock(&self.0.state).links = None;
    }
}

/// Runs the ranks of a distributed run as threads of one process, connected by channels:
/// for tests of distributed pipelines, and for trying a distribution on one machine
/// without MPI. Real runs use MPI (`MpiSession`, behind the `mpi` cargo feature) with one
/// process per rank.
///
/// A rank never waits forever: when a peer's function has returned or panicked, a receive
/// from it is an error that names it, and a receive that gets no message for 60 s fails
/// too.
///
/// ```
/// use halogen::runtime::distributed::InProcessRanks;
/// let sums = InProcessRanks::run(4, |comm| {
///     let mut v = [comm.rank() as i64, 1];
///     comm.all_reduce_sum_i64(&mut v).unwrap();
///     v
/// });
/// assert_eq!(sums, vec![[6, 4]; 4]);
/// ```
#[derive(Debug)]
pub struct InProcessRanks;

impl InProcessRanks {
    /// Runs `f` on `ranks` threads, each with the communicator of its rank, and returns
    /// their results in rank order. A panic of a rank's function is resumed here once
    /// every rank has finished.
    ///
    /// # Panics
    /// When `ranks < 1`, or when a rank's function panics.
    pub fn run<R: Send>(ranks: i32, f: impl Fn(Arc<dyn Communicator>) -> R + Sync) -> Vec<R> {
        InProcessRanks::run_with_timeout(ranks, RECEIVE_TIMEOUT, f)
    }

    /// [`InProcessRanks::run`] whose receives give up after `timeout`.
    pub(crate) fn run_with_timeout<R: Send>(
        ranks: i32,
        timeout: Duration,
        f: impl Fn(Arc<dyn Communicator>) -> R + Sync,
    ) -> Vec<R> {
        assert!(ranks >= 1, "InProcessRanks::run needs at least one rank, not {ranks}");
        let n = ranks as usize;
        let mut to: Vec<Vec<Sender<Packet>>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        let mut from: Vec<Vec<Receiver<Packet>>> = (0..n).map(|_| Vec::with_capacity(n)).collect();
        // Channel (i -> j) for every pair, pushed so that to[i][j] and from[j][i] are its ends.
        for to_i in to.iter_mut() {
            for from_j in from.iter_mut() {
                let (s, r) = channel();
                to_i.push(s);
                from_j.push(r);
            }
        }
        let comms: Vec<Arc<InProcessRank>> = to
            .into_iter()
            .zip(from)
            .enumerate()
            .map(|(rank, (to, from))| {
                Arc::new(InProcessRank {
                    rank: rank as i32,
                    ranks,
                    timeout,
                    state: Mutex::new(RankState { links: Some(Links { to, from }), exchanges: 0, reductions: 0 }),
                    stats: Mutex::new(TransferStats::default()),
                })
            })
            .collect();
        let f = &f;
        std::thread::scope(|scope| {
            let handles: Vec<_> = comms
                .into_iter()
                .map(|comm| {
                    std::thread::Builder::new()
                        .name(format!("halogen rank {}", comm.rank))
                        // Room for compiling a pipeline on the rank's thread.
                        .stack_size(16 << 20)
                        .spawn_scoped(scope, move || {
                            let _close = CloseOnExit(comm.clone());
                            f(comm)
                        })
                        .expect("start a rank's thread")
                })
                .collect();
            let mut results = Vec::with_capacity(n);
            let mut panic = None;
            for h in handles {
                match h.join() {
                    Ok(r) => results.push(r),
                    Err(payload) => {
                        panic.get_or_insert(payload);
                    }
                }
            }
            if let Some(payload) = panic {
                std::panic::resume_unwind(payload);
            }
            results
        })
    }
}

/// A box of a buffer's elements: `extents[d]` coordinates along dimension `d`, whose
/// neighbours are `strides[d]` elements apart (any sign), from the element at `base`. A
/// region with a zero (or negative) extent has no elements. A message holds the region's
/// bytes innermost dimension first (dimension 0 varies fastest).
///
/// ```
/// use halogen::runtime::distributed::StridedRegion;
/// // Column 1 of a 3x2 row-major u16 image.
/// let mut img: [u16; 6] = [0, 1, 2, 3, 4, 5];
/// let col = StridedRegion {
///     base: img[1..].as_mut_ptr().cast(),
///     elem_bytes: 2,
///     extents: vec![1, 2],
///     strides: vec![1, 3],
/// };
/// assert_eq!(col.bytes(), 4);
/// // SAFETY: the region's elements lie inside `img`.
/// let bytes = unsafe { col.pack() };
/// assert_eq!(bytes, [1, 0, 4, 0]);
/// unsafe { col.unpack(&[9, 0, 8, 0]) };
/// assert_eq!(img, [0, 9, 2, 3, 8, 5]);
/// ```
#[derive(Clone, Debug)]
pub struct StridedRegion {
    /// The region's first element (coordinates 0 in every dimension).
    pub base: *mut u8,
    /// Bytes per element.
    pub elem_bytes: usize,
    /// Coordinates per dimension, innermost first.
    pub extents: Vec<i64>,
    /// Elements between neighbours per dimension (the same number of dimensions).
    pub strides: Vec<i64>,
}

/// How to walk a region: rows of `row_elems` elements `row_stride` bytes apart, at the
/// offsets of the outer dimensions' `(extent, stride in bytes)`.
struct Walk {
    row_elems: usize,
    row_stride: isize,
    outer: Vec<(i64, isize)>,
}

/// Copies `n` elements of `N` bytes, `stride` bytes apart from `src`, to `dst` (dense).
///
/// # Safety
/// The `n` elements and `n * N` bytes at `dst` are valid and do not overlap.
unsafe fn gather<const N: usize>(src: *const u8, stride: isize, dst: *mut u8, n: usize) {
    for i in 0..n {
        // SAFETY: the caller's promise.
        unsafe {
            let v = src.wrapping_offset(i as isize * stride).cast::<[u8; N]>().read_unaligned();
            dst.add(i * N).cast::<[u8; N]>().write_unaligned(v);
        }
    }
}

/// Copies `n` dense elements of `N` bytes from `src` to elements `stride` bytes apart at `dst`.
///
/// # Safety
/// As for [`gather`], the other way.
unsafe fn scatter<const N: usize>(src: *const u8, dst: *mut u8, stride: isize, n: usize) {
    for i in 0..n {
        // SAFETY: the caller's promise.
        unsafe {
            let v = src.add(i * N).cast::<[u8; N]>().read_unaligned();
            dst.wrapping_offset(i as isize * stride).cast::<[u8; N]>().write_unaligned(v);
        }
    }
}

impl StridedRegion {
    /// The region's size in bytes (0 when an extent is 0 or less).
    ///
    /// # Panics
    /// When the size overflows `usize`.
    pub fn bytes(&self) -> usize {
        if self.extents.iter().any(|&e| e <= 0) {
            return 0;
        }
        self.extents
            .iter()
            .try_fold(self.elem_bytes, |acc, &e| acc.checked_mul(usize::try_from(e).ok()?))
            .expect("a region's size in bytes overflows usize")
    }

    /// The rows to copy: dimension 0 (or the first dimension of more than one coordinate)
    /// makes the rows, with the dimensions after it merged in while the rows stay dense.
    fn walk(&self) -> Walk {
        assert_eq!(
            self.extents.len(),
            self.strides.len(),
            "a region has {} extents but {} strides",
            self.extents.len(),
            self.strides.len()
        );
        let e = self.elem_bytes as isize;
        let mut w = Walk { row_elems: 1, row_stride: e, outer: Vec::new() };
        for (&extent, &stride) in self.extents.iter().zip(&self.strides) {
            if extent == 1 {
                continue;
            }
            let bytes = stride as isize * e;
            if w.outer.is_empty() {
                if w.row_elems == 1 {
                    (w.row_elems, w.row_stride) = (extent as usize, bytes);
                    continue;
                }
                if w.row_stride == e && bytes == w.row_elems as isize * e {
                    w.row_elems *= extent as usize;
                    continue;
                }
            }
            w.outer.push((extent, bytes));
        }
        w
    }

    /// Calls `row(first element, offset in the packed bytes)` for each row of `w`, in
    /// packed order.
    fn for_each_row(&self, w: &Walk, mut row: impl FnMut(*mut u8, usize)) {
        let row_bytes = w.row_elems * self.elem_bytes;
        let mut index = vec![0i64; w.outer.len()];
        let (mut offset, mut packed) = (0isize, 0usize);
        loop {
            row(self.base.wrapping_offset(offset), packed);
            packed += row_bytes;
            let mut d = 0;
            loop {
                let Some(&(extent, stride)) = w.outer.get(d) else { return };
                index[d] += 1;
                offset += stride;
                if index[d] < extent {
                    break;
                }
                offset -= stride * extent as isize;
                index[d] = 0;
                d += 1;
            }
        }
    }

    /// The region's elements, innermost dimension first, as [`StridedRegion::bytes`]
    /// bytes. Dense rows are copied whole.
    ///
    /// # Safety
    /// Every element of the region (`elem_bytes` bytes at `base` plus the sum of
    /// `index[d] * strides[d] * elem_bytes` for each index inside the extents) must be
    /// readable memory of one allocation.
    pub unsafe fn pack(&self) -> Vec<u8> {
        let n = self.bytes();
        let mut out = vec![0u8; n];
        if n == 0 {
            return out;
        }
        let w = self.walk();
        let (e, dst) = (self.elem_bytes, out.as_mut_ptr());
        self.for_each_row(&w, |src, at| {
            // SAFETY: the row's elements are readable (the caller's promise) and `out` has
            // room for the row at `at` (the rows fill it in order); `out` is new memory.
            unsafe {
                let dst = dst.add(at);
                if w.row_stride == e as isize {
                    std::ptr::copy_nonoverlapping(src, dst, w.row_elems * e);
                } else {
                    match e {
                        1 => gather::<1>(src, w.row_stride, dst, w.row_elems),
                        2 => gather::<2>(src, w.row_stride, dst, w.row_elems),
                        4 => gather::<4>(src, w.row_stride, dst, w.row_elems),
                        8 => gather::<8>(src, w.row_stride, dst, w.row_elems),
                        _ => {
                            for i in 0..w.row_elems {
                                let s = src.wrapping_offset(i as isize * w.row_stride);
                                std::ptr::copy_nonoverlapping(s, dst.add(i * e), e);
                            }
                        }
                    }
                }
            }
        });
        out
    }

    /// Writes `bytes` (as [`StridedRegion::pack`] lays them out) into the region's elements.
    ///
    /// # Safety
    /// Every element of the region (see [`StridedRegion::pack`]) must be writable memory
    /// of one allocation that does not overlap `bytes`.
    ///
    /// # Panics
    /// When `bytes.len()` differs from [`StridedRegion::bytes`].
    pub unsafe fn unpack(&self, bytes: &[u8]) {
        let n = self.bytes();
        assert_eq!(bytes.len(), n, "unpacking {} bytes into a region of {n} bytes", bytes.len());
        if n == 0 {
            return;
        }
        let w = self.walk();
        let (e, src) = (self.elem_bytes, bytes.as_ptr());
        self.for_each_row(&w, |dst, at| {
            // SAFETY: the row's elements are writable (the caller's promise) and `bytes`
            // holds the row at `at`; the two do not overlap.
            unsafe {
                let src = src.add(at);
                if w.row_stride == e as isize {
                    std::ptr::copy_nonoverlapping(src, dst, w.row_elems * e);
                } else {
                    match e {
                        1 => scatter::<1>(src, dst, w.row_stride, w.row_elems),
                        2 => scatter::<2>(src, dst, w.row_stride, w.row_elems),
                        4 => scatter::<4>(src, dst, w.row_stride, w.row_elems),
                        8 => scatter::<8>(src, dst, w.row_stride, w.row_elems),
                        _ => {
                            for i in 0..w.row_elems {
                                let d = dst.wrapping_offset(i as isize * w.row_stride);
                                std::ptr::copy_nonoverlapping(src.add(i * e), d, e);
                            }
                        }
                    }
                }
            }
        });
    }
}

/// The transfers of one border exchange as they are posted: the packed bytes of each send
/// and the region each receive goes to. [`Exchange::finish`] carries them out.
///
/// ```
/// use halogen::runtime::distributed::{Exchange, SingleRank, StridedRegion};
/// let mut a = [1u8, 2, 3];
/// let mut b = [0u8; 3];
/// let region = |p: *mut u8| StridedRegion { base: p, elem_bytes: 1, extents: vec![3], strides: vec![1] };
/// let mut ex = Exchange::default();
/// // SAFETY: `a` and `b` outlive the exchange; a rank may send to itself.
/// unsafe {
///     ex.post_send(0, &region(a.as_mut_ptr()));
///     ex.post_receive(0, region(b.as_mut_ptr()));
/// }
/// ex.finish(&SingleRank).unwrap();
/// assert_eq!(b, [1, 2, 3]);
/// assert!(ex.is_empty());
/// ```
#[derive(Debug, Default)]
pub struct Exchange {
    sends: Vec<(i32, Vec<u8>)>,
    receives: Vec<(i32, StridedRegion, Option<Combiner>)>,
}

// SAFETY: the regions' pointers are only dereferenced by `finish`, on whichever thread
// calls it; `post_receive`'s caller promises they stay valid and unaliased until then,
// whatever the thread (generated code posts and finishes an exchange on the thread that
// runs the pipeline's top level).
unsafe impl Send for Exchange {}

impl Exchange {
    /// Packs `region` now and queues it to be sent to rank `peer`.
    ///
    /// # Safety
    /// As for [`StridedRegion::pack`].
    pub unsafe fn post_send(&mut self, peer: i32, region: &StridedRegion) {
        // SAFETY: the caller's promise.
        let bytes = unsafe { region.pack() };
        self.sends.push((peer, bytes));
    }

    /// Queues a receive from rank `peer` of [`StridedRegion::bytes`] bytes into `region`.
    ///
    /// # Safety
    /// As for [`StridedRegion::unpack`], until [`Exchange::finish`] returns or the
    /// exchange is dropped.
    pub unsafe fn post_receive(&mut self, peer: i32, region: StridedRegion) {
        self.receives.push((peer, region, None));
    }

    /// Queues a receive from rank `peer` whose elements are combined into `region`'s by
    /// `combiner` when the exchange finishes (one side of an all-reduce). Sends are packed
    /// when posted, so what this rank sends is its own elements, whatever it receives.
    ///
    /// # Safety
    /// As for [`Exchange::post_receive`]; the region must also be readable.
    pub unsafe fn post_combine(&mut self, peer: i32, region: StridedRegion, combiner: Combiner) {
        self.receives.push((peer, region, Some(combiner)));
    }

    /// Whether nothing is posted.
    pub fn is_empty(&self) -> bool {
        self.sends.is_empty() && self.receives.is_empty()
    }

    /// Carries out the posted transfers with one [`Communicator::exchange`] and unpacks
    /// each received message into its region. The exchange is empty afterwards, whether
    /// it succeeded or not.
    ///
    /// # Errors
    /// The communicator's error.
    pub fn finish(&mut self, comm: &dyn Communicator) -> Result<()> {
        let sends = std::mem::take(&mut self.sends);
        let receives = std::mem::take(&mut self.receives);
        let expected: Vec<(i32, usize)> = receives.iter().map(|(peer, r, _)| (*peer, r.bytes())).collect();
        let messages = comm.exchange(sends, &expected)?;
        for ((_, region, combiner), bytes) in receives.iter().zip(&messages) {
            // SAFETY: the posts' callers promised the region is readable and writable until
            // now; the message is a separate allocation of exactly the region's size.
            unsafe { receive_into(region, *combiner, bytes)? };
        }
        Ok(())
    }
}

/// Writes a received message into `region`, or combines it with the region's elements.
///
/// # Safety
/// As for [`StridedRegion::pack`] and [`StridedRegion::unpack`].
unsafe fn receive_into(region: &StridedRegion, combiner: Option<Combiner>, bytes: &[u8]) -> Result<()> {
    match combiner {
        // SAFETY: the caller's promise.
        None => unsafe { region.unpack(bytes) },
        Some(c) => {
            // SAFETY: the caller's promise.
            let mut mine = unsafe { region.pack() };
            c.apply(region.elem_bytes, &mut mine, bytes)?;
            // SAFETY: the caller's promise.
            unsafe { region.unpack(&mine) };
        }
    }
    Ok(())
}

/// How a combining receive merges a peer's elements into this rank's: the operation, and
/// whether the elements are signed integers (for `min` and `max`; the others give the same
/// bits either way).
///
/// ```
/// use halogen::ir::CombineOp;
/// use halogen::runtime::distributed::Combiner;
/// let c = Combiner { op: CombineOp::Min, signed: true };
/// assert_eq!(Combiner::from_code(c.code()), Some(c));
/// let mut mine = (-3i16).to_le_bytes().to_vec();
/// c.apply(2, &mut mine, &5i16.to_le_bytes()).unwrap();
/// assert_eq!(mine, (-3i16).to_le_bytes());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Combiner {
    /// The operation.
    pub op: CombineOp,
    /// Whether the elements are signed integers.
    pub signed: bool,
}

/// `mine[i] = mine[i] ⊕ theirs[i]` over little-endian elements of one integer type.
macro_rules! combine_as {
    ($t:ty, $op:expr, $mine:expr, $theirs:expr) => {{
        const N: usize = std::mem::size_of::<$t>();
        for (m, t) in $mine.chunks_exact_mut(N).zip($theirs.chunks_exact(N)) {
            let a = <$t>::from_le_bytes(m.try_into().expect("N bytes"));
            let b = <$t>::from_le_bytes(t.try_into().expect("N bytes"));
            let v = match $op {
                CombineOp::Add => a.wrapping_add(b),
                CombineOp::Mul => a.wrapping_mul(b),
                CombineOp::Min => a.min(b),
                CombineOp::Max => a.max(b),
                CombineOp::BitAnd => a & b,
                CombineOp::BitOr => a | b,
                CombineOp::BitXor => a ^ b,
            };
            m.copy_from_slice(&v.to_le_bytes());
        }
    }};
}

impl Combiner {
    /// Its operation code for the runtime table's `exchange` ([`exchange_op::COMBINE`]).
    pub fn code(self) -> i32 {
        let k = CombineOp::ALL.iter().position(|&o| o == self.op).expect("every operation is listed") as i32;
        exchange_op::COMBINE + 2 * k + i32::from(self.signed)
    }

    /// The combiner of an operation code, if it is one.
    pub fn from_code(code: i32) -> Option<Combiner> {
        let k = code.checked_sub(exchange_op::COMBINE)?;
        let op = *CombineOp::ALL.get(usize::try_from(k / 2).ok()?)?;
        Some(Combiner { op, signed: k % 2 == 1 })
    }

    /// Combines `theirs` into `mine`, elements of `elem_bytes` bytes (1, 2, 4 or 8) in
    /// little-endian order, as the machine stores them.
    ///
    /// # Errors
    /// `Error::Runtime` for another element size or messages of different sizes.
    pub fn apply(self, elem_bytes: usize, mine: &mut [u8], theirs: &[u8]) -> Result<()> {
        if mine.len() != theirs.len() || ![1, 2, 4, 8].contains(&elem_bytes) || !mine.len().is_multiple_of(elem_bytes) {
            return Err(runtime(format!(
                "combine: {} bytes into {} bytes of {elem_bytes}-byte elements",
                theirs.len(),
                mine.len()
            )));
        }
        match (elem_bytes, self.signed) {
            (1, true) => combine_as!(i8, self.op, mine, theirs),
            (1, false) => combine_as!(u8, self.op, mine, theirs),
            (2, true) => combine_as!(i16, self.op, mine, theirs),
            (2, false) => combine_as!(u16, self.op, mine, theirs),
            (4, true) => combine_as!(i32, self.op, mine, theirs),
            (4, false) => combine_as!(u32, self.op, mine, theirs),
            (8, true) => combine_as!(i64, self.op, mine, theirs),
            _ => combine_as!(u64, self.op, mine, theirs),
        }
        Ok(())
    }
}

/// What a [`RunContext`] of a distributed run holds: the rank's communicator and the
/// border exchange being posted.
#[derive(Debug)]
pub(crate) struct DistributedRun {
    pub(crate) comm: Arc<dyn Communicator>,
    pub(crate) pending: Exchange,
}

impl DistributedRun {
    pub(crate) fn new(comm: Arc<dyn Communicator>) -> DistributedRun {
        DistributedRun { comm, pending: Exchange::default() }
    }
}

/// The message of a run of generated code with distributed loops but no communicator.
pub(crate) const NO_COMMUNICATOR: &str = "the pipeline has distributed loops but runs without a communicator; \
     realize it with a communicator (Args::communicator), e.g. an MPI session's or InProcessRanks'";

/// An error of a run whose entry point returned 0 with transfers still posted.
pub(crate) fn check_no_pending_exchange(run: &RunContext) -> Result<()> {
    let mut guard = run.distributed();
    let Some(d) = guard.as_mut() else { return Ok(()) };
    if d.pending.is_empty() {
        return Ok(());
    }
    let (sends, receives) = (d.pending.sends.len(), d.pending.receives.len());
    d.pending = Exchange::default();
    Err(runtime(format!(
        "rank {}: the pipeline posted {sends} sends and {receives} receives of a border exchange \
         but never completed it",
        d.comm.rank()
    )))
}

/// `exchange` of the runtime table ([`super::ffi::HalogenRuntime`]): with `op`
/// [`exchange_op::SEND`] packs the region (`dims` dimensions of `extents` and `strides`,
/// in elements of `elem_bytes` bytes, from `base`) and posts it to rank `peer`; with
/// [`exchange_op::RECEIVE`] posts a receive from `peer` into the region; with a
/// combining code ([`Combiner::code`]) posts a receive combined into the region
/// ([`Exchange::post_combine`]); with [`exchange_op::FINISH`] carries out the posted transfers ([`Exchange::finish`]) and
/// ignores the other arguments. Returns 0, or nonzero after reporting the error through
/// the run's context (a run without a communicator is one).
///
/// # Safety
/// `ctx` is the context pointer of the run in progress; for a send or receive, `extents`
/// and `strides` point to `dims` values each and the region is valid as
/// [`Exchange::post_send`] or [`Exchange::post_receive`] requires.
pub unsafe extern "C" fn halogen_exchange(
    ctx: *mut c_void,
    op: i32,
    peer: i32,
    base: *mut c_void,
    elem_bytes: i32,
    dims: i32,
    extents: *const i64,
    strides: *const i64,
) -> c_int {
    // SAFETY: generated code passes back the ctx pointer the run made.
    let Some(run) = (unsafe { RunContext::from_raw(ctx) }) else { return -1 };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: the caller's promise.
        unsafe { exchange_call(run, op, peer, base, elem_bytes, dims, extents, strides) }
    }));
    let message = match result {
        Ok(Ok(())) => return 0,
        Ok(Err(Error::Runtime(m))) => m,
        Ok(Err(e)) => e.to_string(),
        Err(_) => "the border exchange panicked".to_string(),
    };
    run.report(message);
    -1
}

/// The work of [`halogen_exchange`].
///
/// # Safety
/// As for [`halogen_exchange`].
#[allow(clippy::too_many_arguments)]
unsafe fn exchange_call(
    run: &RunContext,
    op: i32,
    peer: i32,
    base: *mut c_void,
    elem_bytes: i32,
    dims: i32,
    extents: *const i64,
    strides: *const i64,
) -> Result<()> {
    let mut guard = run.distributed();
    let Some(d) = guard.as_mut() else { return Err(runtime(NO_COMMUNICATOR.to_string())) };
    let combiner = Combiner::from_code(op);
    match op {
        _ if op == exchange_op::SEND || op == exchange_op::RECEIVE || combiner.is_some() => {
            if elem_bytes <= 0 || dims < 0 || (dims > 0 && (extents.is_null() || strides.is_null())) {
                return Err(runtime(format!(
                    "exchange with rank {peer}: a region of {dims} dimensions of {elem_bytes}-byte elements"
                )));
            }
            let n = dims as usize;
            // SAFETY: `dims` values each (the caller's promise).
            let (extents, strides) = unsafe {
                if n == 0 {
                    (Vec::new(), Vec::new())
                } else {
                    (std::slice::from_raw_parts(extents, n).to_vec(), std::slice::from_raw_parts(strides, n).to_vec())
                }
            };
            let region = StridedRegion { base: base.cast(), elem_bytes: elem_bytes as usize, extents, strides };
            if base.is_null() && region.bytes() > 0 {
                return Err(runtime(format!("exchange with rank {peer}: a region of a null buffer")));
            }
            // SAFETY: the region is valid as the posts require (the caller's promise).
            unsafe {
                match combiner {
                    Some(c) => d.pending.post_combine(peer, region, c),
                    None if op == exchange_op::SEND => d.pending.post_send(peer, &region),
                    None => d.pending.post_receive(peer, region),
                }
            }
            Ok(())
        }
        exchange_op::FINISH => {
            let comm = d.comm.clone();
            d.pending.finish(&*comm)
        }
        _ => Err(runtime(format!(
            "exchange: unknown operation {op} (0 posts a send, 1 a receive, 2 completes the exchange, {} and \
             above a combining receive)",
            exchange_op::COMBINE
        ))),
    }
}

/// The line [`print_stats_if_asked`] prints.
fn stats_line(comm: &dyn Communicator) -> String {
    let s = comm.stats();
    format!(
        "halogen mpi rank {}/{}: sent {} messages {} bytes, received {} messages {} bytes",
        comm.rank(),
        comm.ranks(),
        s.messages_sent,
        s.bytes_sent,
        s.messages_received,
        s.bytes_received
    )
}

/// Prints the communicator's [`TransferStats`] as one line to stderr when
/// `HALOGEN_MPI_STATS=1` ([`super::config::mpi_stats_enabled`]):
/// `halogen mpi rank R/N: sent M messages B bytes, received M messages B bytes`.
///
/// ```
/// use halogen::runtime::distributed::{print_stats_if_asked, SingleRank};
/// print_stats_if_asked(&SingleRank);
/// ```
pub fn print_stats_if_asked(comm: &dyn Communicator) {
    if super::config::mpi_stats_enabled() {
        eprintln!("{}", stats_line(comm));
    }
}

#[cfg(feature = "mpi")]
pub use self::mpi_transport::MpiSession;

/// The MPI transport.
#[cfg(feature = "mpi")]
mod mpi_transport {
    use super::{check_peers, lock, runtime, size_mismatch, Communicator, TransferStats};
    use crate::error::Result;
    use mpi::collective::SystemOperation;
    use mpi::datatype::Equivalence;
    use mpi::environment::Universe;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::Communicator as _;
    use mpi::traits::*;
    use mpi::Threading;
    use std::sync::{Arc, Mutex};

    /// Tags of exchanges repeat after this many (MPI guarantees tags up to 32767); with
    /// MPI's in-order delivery between two ranks that is enough to tell an exchange's
    /// messages from those of the next ones.
    const TAG_PERIOD: u64 = 32768;

    /// MPI for the process: initialized by [`MpiSession::init`], finalized when the session
    /// is dropped. Its [`communicator`](MpiSession::communicator) connects the ranks of
    /// `MPI_COMM_WORLD` (through a duplicate of it, so the pipeline's messages never mix
    /// with other MPI traffic of the program).
    ///
    /// MPI is initialized with the thread level `MPI_THREAD_SERIALIZED`: exchanges run on
    /// the thread that realizes the pipeline (never inside its parallel loops), and the
    /// communicator serializes its calls with a lock. MPI reports failures by aborting the
    /// job (its default error handler), and a rank whose peer never joins an exchange waits
    /// for it: after an `Err` from a communicator, end the job ([`MpiSession::abort`]).
    ///
    /// ```no_run
    /// use halogen::runtime::distributed::MpiSession;
    /// let mpi = MpiSession::init().unwrap();
    /// let comm = mpi.communicator();
    /// let n = comm.ranks();
    /// let next = (comm.rank() + 1) % n;
    /// let prev = (comm.rank() + n - 1) % n;
    /// let got = comm.exchange(vec![(next, vec![1, 2])], &[(prev, 2)]).unwrap();
    /// assert_eq!(got, vec![vec![1, 2]]);
    /// // Dropping `mpi` finalizes MPI.
    /// ```
    pub struct MpiSession {
        comm: Arc<MpiCommunicator>,
        universe: Option<Universe>,
    }

    impl std::fmt::Debug for MpiSession {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("MpiSession").field("rank", &self.comm.rank).field("ranks", &self.comm.ranks).finish()
        }
    }

    impl MpiSession {
        /// Initializes MPI (collective: every rank of the job calls it).
        ///
        /// # Errors
        /// `Error::Runtime` when MPI is already initialized in this process (it can be
        /// initialized once, also after a session ended) or cannot start.
        pub fn init() -> Result<MpiSession> {
            if mpi::is_initialized() {
                return Err(runtime(
                    "MPI is already initialized in this process (it can be initialized once)".to_string(),
                ));
            }
            let Some((universe, _threading)) = mpi::initialize_with_threading(Threading::Serialized) else {
                return Err(runtime("MPI could not be initialized".to_string()));
            };
            let world = universe.world();
            let comm = world.duplicate();
            let (rank, ranks) = (comm.rank(), comm.size());
            let state = MpiState { comm: Some(comm), exchanges: 0, stats: TransferStats::default() };
            Ok(MpiSession {
                comm: Arc::new(MpiCommunicator { rank, ranks, state: Mutex::new(state) }),
                universe: Some(universe),
            })
        }

        /// The communicator of the job's ranks. After the session is dropped it fails
        /// every call.
        pub fn communicator(&self) -> Arc<dyn Communicator> {
            self.comm.clone()
        }

        /// Ends every rank of the job with exit code `code` (`MPI_Abort`).
        pub fn abort(&self, code: i32) -> ! {
            let state = lock(&self.comm.state);
            match &state.comm {
                Some(c) => c.abort(code),
                None => std::process::abort(),
            }
        }
    }

    impl Drop for MpiSession {
        fn drop(&mut self) {
            // The communicator is freed while MPI is still initialized; then MPI_Finalize.
            lock(&self.comm.state).comm = None;
            drop(self.universe.take());
        }
    }

    struct MpiState {
        /// `None` once the session has ended.
        comm: Option<SimpleCommunicator>,
        exchanges: u64,
        stats: TransferStats,
    }

    // SAFETY: the MPI communicator handle is only used under the `MpiCommunicator`'s lock,
    // so MPI is called by one thread at a time, as MPI_THREAD_SERIALIZED allows.
    unsafe impl Send for MpiState {}

    struct MpiCommunicator {
        rank: i32,
        ranks: i32,
        state: Mutex<MpiState>,
    }

    impl std::fmt::Debug for MpiCommunicator {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("MpiCommunicator").field("rank", &self.rank).field("ranks", &self.ranks).finish()
        }
    }

    fn ended(rank: i32) -> crate::error::Error {
        runtime(format!("rank {rank}: the MPI session has ended"))
    }

    impl Communicator for MpiCommunicator {
        fn rank(&self) -> i32 {
            self.rank
        }

        fn ranks(&self) -> i32 {
            self.ranks
        }

        fn exchange(&self, sends: Vec<(i32, Vec<u8>)>, receives: &[(i32, usize)]) -> Result<Vec<Vec<u8>>> {
            check_peers(self.rank, self.ranks, &sends, receives)?;
            let mut guard = lock(&self.state);
            let state = &mut *guard;
            let Some(comm) = state.comm.as_ref() else { return Err(ended(self.rank)) };
            let seq = state.exchanges;
            state.exchanges += 1;
            let tag = (seq % TAG_PERIOD) as mpi::Tag;
            let me = self.rank;
            let mut out: Vec<Vec<u8>> = receives.iter().map(|&(_, n)| vec![0u8; n]).collect();
            let mut error = None;
            mpi::request::multiple_scope(sends.len(), |scope, requests| {
                // Every send is under way before the first receive waits.
                for (peer, bytes) in &sends {
                    requests.add(comm.process_at_rank(*peer).immediate_send_with_tag(scope, &bytes[..], tag));
                }
                // Receives in order: each probes the next message from its peer (MPI keeps
                // the order of one sender's messages) and takes it once its size and
                // exchange are checked, so a wrong message never overruns a buffer.
                for (&(peer, expected), buf) in receives.iter().zip(out.iter_mut()) {
                    let (message, status) = comm.process_at_rank(peer).matched_probe();
                    let got = status.count(u8::equivalent_datatype()).max(0) as usize;
                    if peer != me {
                        state.stats.count_receive(got);
                    }
                    if status.tag() == tag && got == expected {
                        message.matched_receive_into(&mut buf[..]);
                        continue;
                    }
                    let mut scratch = vec![0u8; got];
                    message.matched_receive_into(&mut scratch[..]);
                    error.get_or_insert_with(|| {
                        if status.tag() != tag {
                            runtime(format!(
                                "rank {me}: in exchange {seq} it received from rank {peer} a message of another \
                                 exchange (tag {} instead of {tag}): every rank must complete the same exchanges \
                                 in the same order",
                                status.tag()
                            ))
                        } else {
                            size_mismatch(me, peer, expected, got)
                        }
                    });
                }
                let mut done = Vec::with_capacity(sends.len());
                requests.wait_all(&mut done);
            });
            for (peer, bytes) in &sends {
                if *peer != me {
                    state.stats.count_send(bytes.len());
                }
            }
            match error {
                Some(e) => Err(e),
                None => Ok(out),
            }
        }

        fn stats(&self) -> TransferStats {
            lock(&self.state).stats
        }

        fn all_reduce_sum_i64(&self, values: &mut [i64]) -> Result<()> {
            let state = lock(&self.state);
            let Some(comm) = state.comm.as_ref() else { return Err(ended(self.rank)) };
            let mine = values.to_vec();
            comm.all_reduce_into(&mine[..], values, SystemOperation::sum());
            Ok(())
        }

        fn barrier(&self) -> Result<()> {
            let state = lock(&self.state);
            let Some(comm) = state.comm.as_ref() else { return Err(ended(self.rank)) };
            comm.barrier();
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
