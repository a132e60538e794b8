//! Back ends: ways to run a lowered pipeline.
//!
//! [`interp`] executes the lowered loop nest directly, checking every load and store; it is
//! the oracle every other back end is compared with. [`c`] prints the loop nest as C,
//! [`jit`] compiles and loads that C for `Target::host()`, and [`aot`] writes it out for
//! ahead-of-time builds.

pub mod aot;
pub mod c;
pub mod interp;
pub mod jit;

pub use interp::Interpreter;
