//! Transparent huge pages for large buffers.
//!
//! A tiled schedule touches many rows of a large image per tile, each row on its own
//! 4 KiB page, so with ordinary pages the walk through a 6400-wide `u16` image misses the
//! TLB on almost every row of every tile. Linux backs memory with 2 MiB pages where a
//! program asks for them (`madvise(MADV_HUGEPAGE)`) when its
//! `/sys/kernel/mm/transparent_hugepage/enabled` is `madvise`, the common default. NumPy
//! asks for every array of 4 MiB or more, so without this a pipeline fed with Rust
//! buffers would run slower than the same machine code fed with NumPy arrays (10–15% on
//! the tiled blur and the Harris detector).
//!
//! [`advise`] is called on every [`Buffer`](crate::runtime::Buffer) and every pooled
//! intermediate of at least [`HUGE_PAGE_MIN_BYTES`], before its pages are first
//! touched. `HALOGEN_HUGE_PAGES=0` turns it off; elsewhere than Linux it does nothing.
//!
//! ```
//! use halogen::runtime::huge_pages;
//! let mut v = Vec::<u16>::with_capacity(4 << 20);
//! huge_pages::advise(v.as_mut_ptr().cast(), v.capacity() * 2);
//! v.resize(4 << 20, 0);
//! assert_eq!(v[123], 0);
//! ```

/// Blocks smaller than this are left alone (the threshold NumPy uses).
pub const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// Whether huge pages are asked for: not when `HALOGEN_HUGE_PAGES` is `0`.
pub fn enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("HALOGEN_HUGE_PAGES").map_or(true, |v| v.trim() != "0"))
}

/// Asks the kernel to back the whole 4 KiB pages inside `bytes` bytes at `ptr` with huge
/// pages, if the block is at least [`HUGE_PAGE_MIN_BYTES`]. Only a hint: its failure is
/// ignored, and the memory's contents and validity do not change.
pub fn advise(ptr: *mut u8, bytes: usize) {
    if bytes < HUGE_PAGE_MIN_BYTES || ptr.is_null() || !enabled() {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + bytes) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside a block the caller owns; MADV_HUGEPAGE changes
            // only how the kernel backs it, never its contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
}
