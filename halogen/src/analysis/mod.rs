//! Analyses and rewrites every lowering pass leans on: substitution, symbolic interval
//! arithmetic (bounds), the simplifier, and common-subexpression elimination; and the
//! access patterns of loads and stores ([`access`]) that back ends print by.

pub mod access;
pub mod constant_bound;
pub mod cse;
pub mod interval;
pub mod simplify;
pub mod substitute;
pub mod widen;

#[cfg(test)]
pub(crate) mod test_eval;

pub use cse::{cse, cse_stmt};
pub use interval::{bounds_of_expr_in_scope, type_interval, Interval, Scope};
pub use simplify::{can_prove, can_prove_in_scope, simplify, simplify_in_scope, simplify_stmt};
pub use substitute::{
    expr_uses_var, free_vars, stmt_free_vars, stmt_uses_var, substitute, substitute_in_stmt, substitute_map,
    substitute_map_in_stmt,
};
pub use widen::widen_to_i64;
