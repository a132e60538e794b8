//! Lowering: from Funcs and their schedules to one loop nest. `lower.rs` runs the passes
//! in order; each pass lives in its own file.

pub mod bounds_inference;
pub mod boxes;
pub mod compute_with;
pub mod distribute;
pub mod environment;
pub mod loop_kinds;
#[allow(clippy::module_inception)]
pub mod lower;
pub mod partition_loops;
pub mod passes;
pub mod promote_accumulators;
pub mod schedule_functions;
pub mod sliding_window;
pub mod specialize_tails;
pub mod storage_flattening;
pub mod storage_folding;
pub mod unroll;
pub mod vectorize;
pub mod verify;

pub use lower::{lower, Lowered, Scheduled};

/// State shared by the passes of one lowering. The passes exchange their facts through the
/// loop nest itself (a `Realize`'s fold, a loop's vector tails), so each pass after bounds
/// inference is a function of the statement and the environment.
#[derive(Debug)]
pub struct LowerCtx {
    /// The algorithm and the resolved schedule.
    pub env: environment::Environment,
}

impl LowerCtx {
    /// A context for this environment.
    pub fn new(env: environment::Environment) -> LowerCtx {
        LowerCtx { env }
    }
}
