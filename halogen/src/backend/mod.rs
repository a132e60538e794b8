//! Back ends: ways to run a lowered pipeline.
//!
//! [`interp`] executes the lowered loop nest directly, checking every load and store; it is
//! the oracle every other back end is compared with. [`c`] prints the loop nest as C,
//! [`jit`] compiles and loads that C for `Target::host()`, and [`aot`] writes it out for
//! ahead-of-time builds. [`c_like`] holds what the C back end shares with other C dialects
//! (OpenCL C, CUDA C): identifiers, literals, operators and the function text being
//! printed.

pub mod aot;
pub mod c;
pub mod c_like;
pub mod interp;
pub mod jit;

pub use interp::Interpreter;
