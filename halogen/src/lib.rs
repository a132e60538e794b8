//! Halogen: an image-pipeline compiler. Write the algorithm once as pure functions over an
//! infinite integer grid, and choose separately how it runs (tiling, fusion, storage,
//! vectors, threads).
//!
//! ```
//! use halogen::prelude::*;
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let f = Func::new("f");
//! f.def((x, y), x * 2 + y);
//! let compiled = Pipeline::new(&[&f]).compile(&Target::interp()).unwrap();
//! let mut out = Buffer::<i32>::new(&[4, 4]);
//! compiled.realize(&Args::new(), &mut out).unwrap();
//! assert_eq!(out[[3, 1]], 7);
//! ```

pub mod analysis;
pub mod autoschedule;
pub mod backend;
pub mod build;
pub mod error;
pub mod ir;
pub mod lang;
pub mod lower;
pub mod pipeline;
pub mod prelude;
pub mod runtime;
pub mod schedule;
pub mod target;
pub mod text;

pub use error::{Error, Result};
pub use ir::{Expr, Type};
pub use lang::boundary;
pub use pipeline::{Args, Compiled, OutputBuffer, Pipeline, UploadedArgs};
pub use runtime::gpu::DeviceBuffer;
pub use runtime::{Buffer, Element};
pub use target::{MachineParams, Target};
