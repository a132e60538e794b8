//! Stack growth for the recursions over user-sized structures.
//!
//! Expression trees, statement trees and the Func call graph are as deep as the user makes
//! them: a chain of hundreds of stages or an expression of thousands of terms. The walkers
//! over them recurse, and a thread's stack (2 MiB for `cargo test` threads and many
//! servers) would overflow. Each recursion point calls [`guard`], which checks the stack
//! left and, when little is, runs the rest of the recursion on a fresh heap segment
//! (`stacker`, as rustc does), so depth is limited by memory, not by the thread's stack.

/// The stack a recursion step may use before the next [`guard`]: when less is left, the
/// next step runs on a new segment. It covers the largest frames between two guards (the
/// simplifier's rule functions in unoptimized builds among them).
pub const RED_ZONE: usize = 256 * 1024;

/// The size of each new stack segment.
pub const SEGMENT: usize = 2 * 1024 * 1024;

/// Runs `f` here if at least [`RED_ZONE`] of stack is left, else on a new segment of
/// [`SEGMENT`] bytes. One call per level of a recursion keeps any depth from overflowing;
/// the check is a comparison of the stack pointer with a thread-local limit.
///
/// ```
/// use halogen::ir::stack::guard;
/// fn depth(n: u64) -> u64 {
///     if n == 0 { 0 } else { guard(|| 1 + depth(n - 1)) }
/// }
/// // A hundred thousand frames: far past this thread's stack without the guard.
/// let d = std::thread::Builder::new().stack_size(256 << 10).spawn(|| depth(100_000)).unwrap().join().unwrap();
/// assert_eq!(d, 100_000);
/// ```
#[inline]
pub fn guard<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}
