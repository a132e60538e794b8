//! Back ends: ways to run a lowered pipeline.
//!
//! [`interp`] executes the lowered loop nest directly, checking every load and store; it is
//! the oracle every other back end is compared with.

pub mod interp;

pub use interp::Interpreter;
