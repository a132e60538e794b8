//! The passes that are functions of the statement alone, by name, for tests that run one
//! pass on a nest written as text (`halogen/tests/lower/*.hal`).
//!
//! Each entry names the [`Phase`] its output is in, so the verifier checks it as lowering
//! would. Schedule functions and bounds inference build the nest from the Funcs' schedules;
//! sliding window (with storage folding) and storage flattening read the Funcs' facts from
//! the `Environment` as well as the statement, so they are not here.

use super::partition_loops::partition_loops;
use super::specialize_tails::specialize_tails;
use super::unroll::unroll;
use super::vectorize::vectorize;
use super::verify::Phase;
use crate::analysis::{cse_stmt, simplify_stmt};
use crate::error::Result;
use crate::ir::Stmt;

/// A pass that maps a statement to a statement.
#[derive(Clone, Copy, Debug)]
pub struct StmtPass {
    /// The name filetests use (`; pass: simplify`).
    pub name: &'static str,
    /// The phase of lowering its output is in.
    pub phase: Phase,
    /// The pass.
    pub run: fn(Stmt) -> Result<Stmt>,
}

/// Every pass that takes only a statement, in lowering order.
pub const STMT_PASSES: &[StmtPass] = &[
    StmtPass { name: "specialize tails", phase: Phase::Flattened, run: specialize_tails },
    StmtPass { name: "simplify", phase: Phase::Flattened, run: |s| Ok(simplify_stmt(&s)) },
    StmtPass { name: "unroll", phase: Phase::Unrolled, run: unroll },
    StmtPass { name: "vectorize", phase: Phase::Vectorized, run: vectorize },
    StmtPass { name: "partition loops", phase: Phase::Vectorized, run: |s| Ok(partition_loops(s)) },
    StmtPass { name: "cse", phase: Phase::Vectorized, run: |s| Ok(cse_stmt(&s)) },
];

/// The pass called `name`.
///
/// ```
/// use halogen::ir::parse::parse_stmt;
/// use halogen::lower::passes::stmt_pass;
/// let pass = stmt_pass("simplify").unwrap();
/// let s = parse_stmt("out[0] = (1 + 2)\n").unwrap();
/// assert_eq!((pass.run)(s).unwrap().to_string(), "out[0] = 3\n");
/// assert!(stmt_pass("no such pass").is_none());
/// ```
pub fn stmt_pass(name: &str) -> Option<&'static StmtPass> {
    STMT_PASSES.iter().find(|p| p.name == name)
}
