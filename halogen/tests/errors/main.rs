//! The user-mistake suite, after Halide's `test/error/`: one file per family of mistakes,
//! each case run on every target in `targets_under_test()` and asserting the exact error
//! (or, where the input is legal, the exact pixels). Nothing here may panic, crash, hang
//! or touch memory outside a buffer.
//!
//! - `bindings`: arguments that do not match the pipeline.
//! - `coordinates`: buffers and index expressions near the limits of 32-bit integers.
//! - `names`: Funcs, images and parameters that share a name.
//! - `definitions`: algorithms the language must refuse (float coordinates, bit operations
//!   on floats, cycles, malformed reduction domains).
//! - `schedules`: directives that do not fit the algorithm or the loop nest.
//! - `limits`: sizes that would hang the compiler or the C compiler.
//! - `texts`: snapshots of the messages themselves.

#[path = "../common/mod.rs"]
mod common;

mod bindings;
mod coordinates;
mod definitions;
mod limits;
mod names;
mod schedules;
mod texts;
