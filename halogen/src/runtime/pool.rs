//! The pooled heap behind generated code's top-level intermediate buffers (`alloc` and
//! `free` of `struct halogen_runtime`; buffers inside loops and parallel tasks come from
//! `malloc`, whose per-thread caches serve those better).
//!
//! A pipeline run allocates its root-level intermediates afresh each time, and large
//! blocks come straight from the operating system: every page of them faults and is
//! zeroed again on each run (a local Laplacian filter at 4 MP touches 150 MB of fresh
//! pages per run, about a third of its time). Freed blocks of at least
//! [`POOLED_MIN_BYTES`] are kept instead and handed out again to requests they fit, up to
//! [`POOL_CAPACITY_BYTES`] in all; smaller blocks go to `malloc` and `free` directly, whose
//! own free lists serve them well.
//!
//! With `HALOGEN_SANITIZE=1` nothing is pooled, so that AddressSanitizer sees every block
//! at its exact size.
//!
//! ```
//! use halogen::runtime::pool;
//! // Blocks freed by pipeline runs stay cached for the next run until released.
//! pool::release_cached_memory();
//! assert_eq!(pool::cached_bytes(), 0);
//! ```

use super::block_cache::BlockCache;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};

/// Blocks at least this large are kept for reuse when freed.
pub const POOLED_MIN_BYTES: usize = 256 * 1024;

/// The most bytes the pool keeps in freed blocks; beyond it, the largest go back to
/// `free`.
pub const POOL_CAPACITY_BYTES: usize = 1 << 30;

struct Pool {
    /// Blocks handed out that may be cached when freed: address → capacity.
    live: HashMap<usize, usize>,
    /// Freed blocks waiting for reuse, by address.
    cached: BlockCache,
}

static POOL: OnceLock<Mutex<Pool>> = OnceLock::new();

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.get_or_init(|| Mutex::new(Pool { live: HashMap::new(), cached: BlockCache::new(POOL_CAPACITY_BYTES) }))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

fn pooling() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| !super::config::sanitize_enabled())
}

/// Blocks start on a cache line. The generated code's own heap blocks and stack arrays
/// are aligned the same (`H_ALIGN` in the C prelude is this value).
pub const BLOCK_ALIGN: usize = 64;

/// `bytes` bytes from the system allocator at a multiple of [`BLOCK_ALIGN`], or null;
/// released with `free`.
fn aligned_malloc(bytes: usize) -> *mut c_void {
    let mut block = std::ptr::null_mut();
    // SAFETY: posix_memalign writes `block` only on success; the alignment is a power of
    // two and a multiple of the pointer size.
    match unsafe { libc::posix_memalign(&mut block, BLOCK_ALIGN, bytes) } {
        0 => block,
        _ => std::ptr::null_mut(),
    }
}

/// `alloc` of the runtime table: `bytes` bytes (at least one), uninitialized, or null.
///
/// # Safety
/// Callable from any thread; the block must be released with [`pool_free`].
pub unsafe extern "C" fn pool_alloc(_ctx: *mut c_void, bytes: usize) -> *mut c_void {
    let bytes = bytes.max(1);
    if bytes < POOLED_MIN_BYTES || !pooling() {
        return aligned_malloc(bytes);
    }
    let mut p = pool();
    if let Some((cap, addr)) = p.cached.take(bytes) {
        p.live.insert(addr as usize, cap);
        return addr as usize as *mut c_void;
    }
    drop(p);
    let block = aligned_malloc(bytes);
    super::huge_pages::advise(block.cast(), bytes);
    if !block.is_null() {
        pool().live.insert(block as usize, bytes);
    }
    block
}

/// `free` of the runtime table: releases a block from [`pool_alloc`] (null is ignored).
///
/// # Safety
/// `block` must be null or come from [`pool_alloc`] and not have been freed since.
pub unsafe extern "C" fn pool_free(_ctx: *mut c_void, block: *mut c_void) {
    if block.is_null() {
        return;
    }
    let mut p = pool();
    let Some(cap) = p.live.remove(&(block as usize)) else {
        drop(p);
        // SAFETY: a block pool_alloc got from malloc and did not record.
        unsafe { libc::free(block) };
        return;
    };
    let release = p.cached.put(cap, block as usize as u64);
    drop(p);
    for addr in release {
        // SAFETY: a cached block from malloc, no longer referenced by the pool.
        unsafe { libc::free(addr as usize as *mut c_void) };
    }
}

/// Bytes held in freed blocks kept for reuse.
pub fn cached_bytes() -> usize {
    pool().cached.bytes()
}

/// Returns every cached block to the system allocator (blocks in use are unaffected).
pub fn release_cached_memory() {
    let blocks = pool().cached.take_all();
    for addr in blocks {
        // SAFETY: cached blocks came from malloc and nothing references them.
        unsafe { libc::free(addr as usize as *mut c_void) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_freed_large_block_serves_the_next_request_it_fits() {
        let bytes = POOLED_MIN_BYTES * 3;
        // SAFETY: blocks from pool_alloc, freed once each, written within their size.
        unsafe {
            let a = pool_alloc(std::ptr::null_mut(), bytes);
            assert!(!a.is_null());
            std::ptr::write_bytes(a as *mut u8, 7, bytes);
            pool_free(std::ptr::null_mut(), a);
            assert!(cached_bytes() >= bytes);
            // Other tests may take it first; if this one gets a block it is a full one.
            let b = pool_alloc(std::ptr::null_mut(), bytes - 100);
            std::ptr::write_bytes(b as *mut u8, 1, bytes - 100);
            // Far smaller requests do not take the block.
            let c = pool_alloc(std::ptr::null_mut(), POOLED_MIN_BYTES);
            assert_ne!(c, a);
            pool_free(std::ptr::null_mut(), c);
            pool_free(std::ptr::null_mut(), b);
            let small = pool_alloc(std::ptr::null_mut(), 10);
            pool_free(std::ptr::null_mut(), small);
            pool_free(std::ptr::null_mut(), std::ptr::null_mut());
        }
    }
}
