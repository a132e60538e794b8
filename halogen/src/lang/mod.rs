//! The language users write algorithms in: Vars, Funcs, RDoms, parameters, boundary
//! conditions, inline reductions and math.

pub mod args;
pub mod boundary;
pub mod expr_ops;
pub mod func;
pub mod math;
pub mod param;
pub mod reductions;
pub mod rfactor;
pub mod var;
