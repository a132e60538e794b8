//! The thread pool parallel loops of generated code run on: a rayon pool of
//! `HALOGEN_NUM_THREADS` threads (default: one per core), created on first use.
//!
//! Parallel loops may nest: an iteration running on a worker that starts another parallel
//! loop shares the same pool (rayon's work stealing keeps every thread busy, and waiting
//! threads steal work instead of blocking). The first failing iteration's code is returned;
//! iterations not yet started when one fails may be skipped.

use super::ffi::HalogenTask;
use rayon::prelude::*;
use std::ffi::{c_int, c_void};
use std::sync::OnceLock;

static POOL: OnceLock<rayon::ThreadPool> = OnceLock::new();

/// Worker stack size: generated code keeps small constant-size allocations on the stack.
const STACK_BYTES: usize = 8 << 20;

/// The number of threads `HALOGEN_NUM_THREADS` asks for, if it is a positive integer.
fn requested_threads() -> Option<usize> {
    std::env::var("HALOGEN_NUM_THREADS").ok()?.trim().parse::<usize>().ok().filter(|n| *n > 0)
}

fn pool() -> &'static rayon::ThreadPool {
    POOL.get_or_init(|| {
        let build = |n: Option<usize>| {
            let mut b = rayon::ThreadPoolBuilder::new().thread_name(|i| format!("halogen-{i}")).stack_size(STACK_BYTES);
            if let Some(n) = n {
                b = b.num_threads(n);
            }
            b.build()
        };
        // Building only fails if threads cannot be spawned; one thread is the last resort.
        build(requested_threads())
            .or_else(|_| build(Some(1)))
            .expect("cannot start any thread for the Halogen thread pool")
    })
}

/// Number of threads parallel loops run on (`HALOGEN_NUM_THREADS`, read once, or the
/// number of cores).
///
/// ```
/// assert!(halogen::runtime::thread_pool::num_threads() >= 1);
/// ```
pub fn num_threads() -> usize {
    pool().current_num_threads()
}

/// Runs `body(i)` for every `i` in `[min, min + extent)` on the pool, in any order;
/// returns 0, or the nonzero code of a failed iteration.
///
/// ```
/// use halogen::runtime::thread_pool::par_for;
/// use std::sync::atomic::{AtomicI64, Ordering};
/// let sum = AtomicI64::new(0);
/// assert_eq!(par_for(10, 5, |i| { sum.fetch_add(i as i64, Ordering::Relaxed); 0 }), 0);
/// assert_eq!(sum.into_inner(), 10 + 11 + 12 + 13 + 14);
/// assert_eq!(par_for(0, 100, |i| if i == 42 { 7 } else { 0 }), 7);
/// ```
pub fn par_for(min: i32, extent: i32, body: impl Fn(i32) -> c_int + Sync) -> c_int {
    if extent <= 0 {
        return 0;
    }
    let at = |i: i64| (min as i64 + i) as i32;
    if extent == 1 || num_threads() == 1 {
        for i in 0..extent as i64 {
            let r = body(at(i));
            if r != 0 {
                return r;
            }
        }
        return 0;
    }
    let run = || {
        (0..extent as i64).into_par_iter().try_for_each(|i| match body(at(i)) {
            0 => Ok(()),
            r => Err(r),
        })
    };
    match pool().install(run) {
        Ok(()) => 0,
        Err(r) => r,
    }
}

/// A pointer generated code passes to every iteration; the code it belongs to is written
/// for concurrent iterations (each writes its own part of the buffers).
#[derive(Clone, Copy)]
struct Shared(*mut c_void);
// SAFETY: the pointers are only passed back to the generated body, which is written to be
// called from several threads at once.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// `par_for` of the runtime table ([`super::ffi::RUNTIME`]).
///
/// # Safety
/// `body` must be safe to call concurrently with `ctx`, each index and `closure`.
pub(crate) unsafe extern "C" fn halogen_par_for(
    ctx: *mut c_void,
    body: HalogenTask,
    min: i32,
    extent: i32,
    closure: *mut c_void,
) -> c_int {
    let (ctx, closure) = (Shared(ctx), Shared(closure));
    let run = || {
        par_for(min, extent, |i| {
            let (ctx, closure) = (ctx, closure);
            // SAFETY: the generated code passes a body that accepts its own ctx and closure
            // for every index of the loop, concurrently.
            unsafe { body(ctx.0, i, closure.0) }
        })
    };
    // Never unwind into C.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)).unwrap_or(-1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn nested_loops_cover_every_pair() {
        let hits: Vec<AtomicUsize> = (0..64).map(|_| AtomicUsize::new(0)).collect();
        let r = par_for(0, 8, |y| {
            par_for(0, 8, |x| {
                hits[(y * 8 + x) as usize].fetch_add(1, Ordering::Relaxed);
                0
            })
        });
        assert_eq!(r, 0);
        assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
    }

    #[test]
    fn an_inner_failure_propagates() {
        let r = par_for(-3, 6, |y| par_for(0, 4, |x| if y == 1 && x == 2 { -1 } else { 0 }));
        assert_eq!(r, -1);
        assert_eq!(par_for(0, 0, |_| 1), 0);
    }
}
