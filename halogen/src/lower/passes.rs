//! The passes that are functions of the statement alone, by name, for tests that run one
//! pass on a nest written as text (`halogen/tests/lower/*.hal`).
//!
//! Each entry names the [`Phase`] its output is in, so the verifier checks it as lowering
//! would. Sliding window (with storage folding) and storage flattening also read the Funcs'
//! facts (arguments, stages, schedules, value types) from an [`Environment`]: they are
//! [`ENV_PASSES`], which a test runs with the environment of a pipeline it builds. So do
//! bounds inference (its input is the nest schedule functions builds) and schedule
//! functions itself, whose input is the environment alone: it ignores the statement.

use super::bounds_inference::bounds_inference;
use super::compute_with::fuse_compute_with;
use super::environment::Environment;
use super::partition_loops::partition_loops;
use super::promote_accumulators::promote_accumulators;
use super::schedule_functions::schedule_functions;
use super::sliding_window::sliding_window;
use super::specialize_tails::specialize_tails;
use super::storage_flattening::storage_flattening;
use super::unroll::unroll;
use super::vectorize::vectorize;
use super::verify::Phase;
use super::LowerCtx;
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
    StmtPass { name: "promote accumulators", phase: Phase::Vectorized, run: |s| Ok(promote_accumulators(s)) },
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

/// A pass that maps a statement to a statement with the facts of the pipeline's Funcs.
#[derive(Clone, Copy, Debug)]
pub struct EnvPass {
    /// The name filetests use (`; pass: storage flattening`).
    pub name: &'static str,
    /// The phase of lowering its output is in.
    pub phase: Phase,
    /// The pass.
    pub run: fn(Stmt, &Environment) -> Result<Stmt>,
}

/// Every pass that takes a statement and the [`Environment`], in lowering order.
pub const ENV_PASSES: &[EnvPass] = &[
    EnvPass {
        name: "schedule functions",
        phase: Phase::Scheduled,
        run: |_, env| schedule_functions(&LowerCtx::new(env.clone())),
    },
    EnvPass {
        name: "bounds inference",
        phase: Phase::BoundsInferred,
        run: |s, env| bounds_inference(s, &LowerCtx::new(env.clone())),
    },
    EnvPass { name: "sliding window and storage folding", phase: Phase::BoundsInferred, run: sliding_window },
    EnvPass { name: "storage flattening", phase: Phase::Flattened, run: storage_flattening },
    EnvPass { name: "compute with", phase: Phase::Flattened, run: fuse_compute_with },
];

/// The pass called `name` that reads the [`Environment`].
///
/// ```
/// use halogen::ir::parse::parse_stmt;
/// use halogen::lower::environment::build_environment;
/// use halogen::lower::passes::env_pass;
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, Expr::from(x) * 2);
/// let env = build_environment(&[f.func_ref().clone()]).unwrap();
/// let pass = env_pass("storage flattening").unwrap();
/// let s = parse_stmt("for (f.s0.x, 0, 4) {\n  f(f.s0.x) = (f.s0.x * 2)\n}\n").unwrap();
/// let flat = (pass.run)(s, &env).unwrap().to_string();
/// assert!(flat.contains("f[((f.s0.x - f.min.0) * 1)] = (f.s0.x * 2)"), "{flat}");
/// assert!(env_pass("simplify").is_none());
/// ```
pub fn env_pass(name: &str) -> Option<&'static EnvPass> {
    ENV_PASSES.iter().find(|p| p.name == name)
}
