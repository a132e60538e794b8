//! The schedule of each Func and each of its stages: where it is computed and stored, and
//! how its loops are split, ordered and run.

use crate::ir::{Expr, ForKind, Name};

/// The most iterations `unroll` may copy: an unrolled loop repeats its body once per
/// iteration in the generated code (20000 copies kept the C compiler busy for good).
pub const MAX_UNROLL: i32 = 256;
/// The most lanes `vectorize` may ask for.
pub const MAX_VECTOR_LANES: i32 = 1024;

/// How a split handles an extent that the factor does not divide.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TailStrategy {
    /// Chosen by the compiler as Halide's `Auto` does (round up inside, guard or shift at
    /// the edges of outputs and for reduction variables).
    Auto,
    /// Compute a little more than required (the realization grows to a multiple).
    RoundUp,
    /// Guard the body with an `if` so nothing outside the region is computed.
    GuardWithIf,
    /// Move the last iteration inwards so it ends at the region's end (recomputes a few values).
    ShiftInwards,
}

/// Where a Func is computed or stored.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum LoopLevel {
    /// Substituted into every caller.
    Inlined,
    /// Outside every loop.
    Root,
    /// Inside the loop `var` of Func `func`.
    At {
        /// The Func whose loop it is.
        func: Name,
        /// The loop variable's (short) name.
        var: Name,
    },
}

/// A transformation of a stage's loop variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Split {
    /// `old` becomes `outer * factor + inner`.
    Split { old: Name, outer: Name, inner: Name, factor: i32, tail: TailStrategy },
    /// `inner` and `outer` become one loop `fused` (inner varies fastest).
    Fuse { inner: Name, outer: Name, fused: Name },
}

/// One loop of a stage, as the user sees it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dim {
    /// Loop variable name (unique within the stage).
    pub var: Name,
    /// How the loop runs.
    pub kind: ForKind,
    /// True if it comes from a reduction variable.
    pub is_rvar: bool,
}

/// A user-given constant bound on a pure variable (`Func::bound`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Bound {
    /// The pure variable.
    pub var: Name,
    /// First value.
    pub min: Expr,
    /// Number of values.
    pub extent: Expr,
}

/// The loop structure of one stage (the pure definition or one update).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct StageSchedule {
    /// Splits and fuses, in the order given.
    pub splits: Vec<Split>,
    /// Loops, innermost first.
    pub dims: Vec<Dim>,
    /// Set once the user gives any directive for this stage.
    pub touched: bool,
    /// The update's read-modify-writes are atomic (`Stage::atomic`): its GPU loops may run
    /// iterations that write the same point at once.
    pub atomic: bool,
    /// `gpu_single_thread()`: the stage's loops run one after another in a kernel of one
    /// block of one thread, so that a small stage between GPU stages keeps its data on the
    /// device.
    pub single_gpu_thread: bool,
    /// `distribute(v)`: the loops whose iterations are split into one contiguous slice per
    /// rank of a distributed run (innermost first, as in `dims`). The loop keeps its kind
    /// within the slice: `parallel(y).distribute(y)` runs each rank's rows in parallel.
    pub distributed: Vec<Name>,
}

/// Where a Func is computed and stored, and how its storage is laid out.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct FuncSchedule {
    /// Where it is computed; `None` means the default (inline without updates, else root).
    pub compute_level: Option<LoopLevel>,
    /// Where its storage lives; `None` means at the compute level.
    pub store_level: Option<LoopLevel>,
    /// Storage order of the pure variables, innermost first (empty = definition order).
    pub storage_order: Vec<Name>,
    /// Constant bounds the user promised.
    pub bounds: Vec<Bound>,
    /// Set once the user gives any directive (the auto-scheduler leaves such Funcs alone).
    pub touched: bool,
    /// `compute_with(parent, var)`: its loops are the parent's, from the outermost down to
    /// and including the parent's loop `var` (parent Func, loop variable).
    pub compute_with: Option<(Name, Name)>,
    /// `compute_rank()`: computed at the root, over the region the consumers on this rank
    /// of a distributed run need (without it, a root Func that is not distributed is
    /// computed over the region every rank together needs).
    pub compute_rank: bool,
}
