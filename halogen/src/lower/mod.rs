//! Lowering: from Funcs and their schedules to one loop nest. `lower.rs` runs the passes
//! in order; each pass lives in its own file.

pub mod bounds_inference;
pub mod boxes;
pub mod environment;
#[allow(clippy::module_inception)]
pub mod lower;
pub mod partition_loops;
pub mod passes;
pub mod schedule_functions;
pub mod sliding_window;
pub mod specialize_tails;
pub mod storage_flattening;
pub mod storage_folding;
pub mod unroll;
pub mod vectorize;
pub mod verify;

use crate::analysis::Interval;
use crate::ir::Name;
use std::collections::HashMap;

pub use lower::{lower, Lowered};

/// State shared by the passes of one lowering.
#[derive(Debug)]
pub struct LowerCtx {
    /// The algorithm and the resolved schedule.
    pub env: environment::Environment,
    /// Which Func, stage and user variable each generated loop belongs to.
    pub loops: HashMap<Name, schedule_functions::LoopInfo>,
    /// The region of each Func realized per iteration of its compute level.
    pub realized: HashMap<Name, Vec<Interval>>,
    /// Funcs that slide, and along which dimension.
    pub slides: HashMap<Name, sliding_window::Slide>,
    /// Folded storage.
    pub folds: HashMap<Name, storage_folding::Fold>,
    /// ShiftInwards splits of vector loops, for specialization.
    pub vector_tails: Vec<specialize_tails::VectorTail>,
}

impl LowerCtx {
    /// A context for this environment.
    pub fn new(env: environment::Environment) -> LowerCtx {
        LowerCtx {
            env,
            loops: HashMap::new(),
            realized: HashMap::new(),
            slides: HashMap::new(),
            folds: HashMap::new(),
            vector_tails: Vec::new(),
        }
    }
}
