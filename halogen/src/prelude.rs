//! Everything a pipeline author needs, in one import: `use halogen::prelude::*;`.
//!
//! The boundary conditions are not here (their names are short and generic); import
//! `halogen::boundary`.
//!
//! ```
//! use halogen::prelude::*;
//! let input = ImageParam::new(Type::u8(), 2, "input");
//! let (x, y) = (Var::new("x"), Var::new("y"));
//! let f = Func::new("f");
//! f.def((x, y), clamp(input.at((x, y)).cast::<i32>() * 2, 0, 255).cast::<u8>());
//! assert_eq!(f.output_types(), vec![Type::u8()]);
//! ```

pub use crate::error::{Error, Result};
pub use crate::ir::{Expr, Type};
pub use crate::lang::args::IntoArgs;
pub use crate::lang::expr_ops::ExprMethods;
pub use crate::lang::func::{Func, Stage};
pub use crate::lang::math::{
    abs, absd, atan, atan2, cast, ceil, clamp, cos, exp, fast_exp, fast_log, fast_pow, floor, lerp, log, max, min, pow,
    round, select, sin, sqrt, tan, tanh, trunc,
};
pub use crate::lang::param::{ImageParam, Param};
pub use crate::lang::reductions::{argmax, argmin, maximum, minimum, product, sum};
pub use crate::lang::var::{RDom, RVar, Var, VarOrRVar};
pub use crate::pipeline::{Args, Compiled, OutputBuffer, Pipeline};
pub use crate::runtime::{Buffer, Element};
pub use crate::schedule::TailStrategy;
pub use crate::target::{MachineParams, Target};
