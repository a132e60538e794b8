//! Putting a distributed output back together: each rank of a distributed run computes
//! its slice of the output (the block distribution of one dimension, as `distribute`
//! splits a loop over the output's pure variable), and [`all_gather_slices`] gives every
//! rank the whole buffer, for a caller that writes one file or compares with one result.

use super::distributed::{Communicator, Exchange, StridedRegion};
use super::{Buffer, Element};
use crate::error::{Error, Result};

/// The slice `[lo, hi)` of `[0, extent)` that rank `rank` of `ranks` owns in the block
/// distribution (Distributed Halide, section 3.2): slices of `⌈extent / ranks⌉`, the last
/// ones shorter or empty.
///
/// ```
/// use halogen::runtime::gather::block_slice;
/// assert_eq!(block_slice(10, 0, 3), (0, 4));
/// assert_eq!(block_slice(10, 2, 3), (8, 10));
/// assert_eq!(block_slice(2, 3, 4), (2, 2));
/// ```
pub fn block_slice(extent: i32, rank: i32, ranks: i32) -> (i32, i32) {
    let extent = extent.max(0) as i64;
    let ranks = ranks.max(1) as i64;
    let size = (extent + ranks - 1) / ranks;
    let lo = (rank as i64 * size).min(extent);
    (lo as i32, (lo + size).min(extent) as i32)
}

/// The coordinates `[lo, hi)` of `[0, extent)` that rank `rank` of `ranks` computes when a
/// loop over groups of `granule` coordinates is distributed (the outer loop of a split by
/// `granule`): the groups of its [`block_slice`], the last group cut at `extent`.
///
/// ```
/// use halogen::runtime::gather::granule_slice;
/// // 10 rows in groups of 4 (3 groups) over 2 ranks: groups [0, 2) and [2, 3).
/// assert_eq!(granule_slice(10, 4, 0, 2), (0, 8));
/// assert_eq!(granule_slice(10, 4, 1, 2), (8, 10));
/// assert_eq!(granule_slice(10, 1, 1, 2), (5, 10));
/// ```
pub fn granule_slice(extent: i32, granule: i32, rank: i32, ranks: i32) -> (i32, i32) {
    let g = granule.max(1) as i64;
    let groups = (extent.max(0) as i64 + g - 1) / g;
    let (lo, hi) = block_slice(groups as i32, rank, ranks);
    let clamp = |v: i64| v.min(extent.max(0) as i64) as i32;
    (clamp(lo as i64 * g), clamp(hi as i64 * g))
}

/// Gives every rank all of `buffer`, where each rank computed its slice of dimension `dim`
/// (and the rest of its buffer may hold anything): each rank sends its slice to every
/// other and receives theirs. The slices are those of a distributed loop over groups of
/// `granule` coordinates ([`granule_slice`]): 1 for `distribute(y)` on the output's own
/// variable, `k` for the outer loop of a split of it by `k`.
///
/// ```
/// use halogen::runtime::distributed::InProcessRanks;
/// use halogen::runtime::gather::{all_gather_slices, block_slice};
/// use halogen::Buffer;
/// let whole = InProcessRanks::run(3, |comm| {
///     let mut b = Buffer::<u8>::new(&[2, 7]);
///     let (lo, hi) = block_slice(7, comm.rank(), comm.ranks());
///     for y in lo..hi {
///         b[[0, y]] = y as u8;
///         b[[1, y]] = 10 * y as u8;
///     }
///     all_gather_slices(&*comm, &mut b, 1, 1).unwrap();
///     b
/// });
/// for b in whole {
///     assert_eq!(b.as_slice(), &[0, 0, 1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60]);
/// }
/// ```
pub fn all_gather_slices<T: Element>(
    comm: &dyn Communicator,
    buffer: &mut Buffer<T>,
    dim: usize,
    granule: i32,
) -> Result<()> {
    let (me, ranks) = (comm.rank(), comm.ranks());
    let raw = buffer.raw_mut();
    let dims = raw.dims.clone();
    let Some(along) = dims.get(dim) else {
        return Err(Error::Argument(format!(
            "gathering slices of dimension {dim} of a buffer of {} dimensions",
            dims.len()
        )));
    };
    let elem_bytes = raw.ty.bytes();
    let base = raw.bytes.as_mut_ptr();
    let region = |rank: i32| {
        let (lo, hi) = granule_slice(along.extent, granule, rank, ranks);
        StridedRegion {
            base: base.wrapping_add(lo as usize * along.stride as usize * elem_bytes),
            elem_bytes,
            extents: dims
                .iter()
                .enumerate()
                .map(|(d, x)| if d == dim { (hi - lo) as i64 } else { x.extent as i64 })
                .collect(),
            strides: dims.iter().map(|x| x.stride as i64).collect(),
        }
    };
    let mut exchange = Exchange::default();
    for peer in (0..ranks).filter(|&p| p != me) {
        // SAFETY: each region is a slice of the buffer's own elements (block_slice stays
        // within its extent), and the buffer is borrowed mutably until `finish` returns.
        unsafe {
            exchange.post_send(peer, &region(me));
            exchange.post_receive(peer, region(peer));
        }
    }
    exchange.finish(comm)
}
