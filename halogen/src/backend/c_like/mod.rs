//! What every C-like back end prints alike, apart from the dialect it prints in.
//!
//! The host back end ([`crate::backend::c`]) prints C11 with GCC/Clang vector extensions,
//! x86 intrinsics and the CPU runtime's entry point, closures and allocations. Kernels in
//! OpenCL C or CUDA C are written in other dialects of the same language: the same
//! statements, operators, literals and identifier rules, with other vector types, memory
//! accesses, parallel loops and runtime calls. This module holds the part they share:
//! - [`names`]: IR names as unique C identifiers that never shadow one another, and C
//!   string literals;
//! - [`types`]: the C spellings of scalar types (`int32_t`, `uint8_t` storage for bools)
//!   and the short names (`i32`, `f64`) that helpers are named by;
//! - `syntax` (crate-internal): operator symbols, parenthesization, and integer and float
//!   literals that read back as exactly the IR's constants;
//! - `writer` (crate-internal): one function's text, its indentation and the identifiers
//!   declared in its open blocks;
//! - `printer` (crate-internal): the walk over a lowered statement, printing blocks, `if`,
//!   serial loops, `Let`s, assertions and scalar expressions in plain C, and calling the
//!   dialect for everything else;
//! - `dialect` (crate-internal): the `Dialect` trait, what a dialect prints its own way:
//!   vector types and operations (broadcast, ramp, select, casts, arithmetic, lane-wise
//!   helpers), loads and stores, parallel loops, storage, the error exit, math functions,
//!   and the scope of names it keeps.
//!
//! The host dialect is [`crate::backend::c`]'s printer. The walk and the trait are
//! crate-internal until a second dialect shows which of the host's choices are shared.
//!
//! Which memory accesses are dense, strided, clamped or narrow-indexed is decided on the IR,
//! by [`crate::analysis::access`], for every dialect to print in its own way.
//!
//! ```
//! use halogen::backend::c_like::names::{c_string, Namer};
//! let mut n = Namer::new();
//! assert_eq!(n.fresh("blur_y.s0.x"), "blur_y_s0_x");
//! assert_eq!(c_string("a\n"), "\"a\\n\"");
//! ```

pub(crate) mod dialect;
pub mod names;
pub(crate) mod printer;
pub(crate) mod scalar_helpers;
pub(crate) mod syntax;
pub mod types;
pub(crate) mod writer;
