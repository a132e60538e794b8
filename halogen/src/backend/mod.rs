//! Back ends: ways to run a lowered pipeline.
//!
//! Every back end implements [`Backend`]: it compiles a [`Lowered`] pipeline for a
//! [`Target`] into an [`Executable`], which runs over checked [`Bindings`]. The back ends
//! are listed once, in [`BACKENDS`]; [`select`] picks the one that runs a target and a
//! pipeline, from the target's architecture and features and the loop kinds the pipeline
//! schedules. Adding a back end is a folder (or file) of its own and one line in
//! [`BACKENDS`].
//!
//! - [`interp`] executes the lowered loop nest directly, checking every load and store; it
//!   is the oracle every other back end is compared with.
//! - [`host`] runs native code: [`c`] prints the loop nest as C, [`jit`] compiles and loads
//!   it; [`aot`] writes the same C out for ahead-of-time builds. [`c_like`] holds what the C
//!   back end shares with other C dialects (OpenCL C, CUDA C): identifiers, literals,
//!   operators and the function text being printed.
//!
//! ```
//! use halogen::prelude::*;
//! let x = Var::new("x");
//! let f = Func::new("f");
//! f.def(x, x * 3);
//! let lowered = halogen::lower::lower(&[f.func_ref().clone()], &Target::interp()).unwrap();
//! let backend = halogen::backend::select(&Target::interp(), &lowered).unwrap();
//! assert_eq!(backend.name(), "interpreter");
//! ```

pub mod aot;
pub mod bindings;
pub mod c;
pub mod c_like;
pub mod gpu;
pub mod host;
pub mod interp;
pub mod jit;

pub use bindings::Bindings;
pub use interp::Interpreter;

use crate::error::{Error, Result};
use crate::ir::Name;
use crate::lower::loop_kinds::loops_of_kind;
use crate::lower::Lowered;
use crate::target::Target;
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

/// What a run observed, where a back end can tell (the interpreter counts every store).
#[derive(Clone, Debug, Default)]
pub struct RunStats {
    /// Values (lanes) stored into each buffer.
    pub stores: BTreeMap<Name, u64>,
    /// Elements of each allocation (largest instance).
    pub allocations: BTreeMap<Name, u64>,
}

/// A way to run lowered pipelines.
pub trait Backend: Send + Sync {
    /// A short name, for messages.
    fn name(&self) -> &'static str;

    /// Whether this back end runs pipelines compiled for `target`.
    fn runs(&self, target: &Target) -> bool;

    /// Prepares `lowered` to run. Mistakes the user can make surface as `Err`.
    fn compile(&self, lowered: &Lowered, target: &Target) -> Result<Arc<dyn Executable>>;

    /// [`Backend::compile`], also remembering the result under `fingerprint` (a digest of
    /// the pipeline before lowering, [`crate::lower::Scheduled::fingerprint`]) where this
    /// back end keeps compiled code, for [`Backend::load_compiled`].
    fn compile_and_remember(
        &self,
        lowered: &Lowered,
        target: &Target,
        _fingerprint: &str,
    ) -> Result<Arc<dyn Executable>> {
        self.compile(lowered, target)
    }

    /// What an earlier [`Backend::compile_and_remember`] made of the pipeline with this
    /// fingerprint, if this back end still has it: a compile without lowering.
    fn load_compiled(&self, _fingerprint: &str, _target: &Target) -> Option<Arc<dyn Executable>> {
        None
    }
}

/// A compiled pipeline of one back end: reusable, and safe to share between threads.
pub trait Executable: Send + Sync + Debug {
    /// Runs over checked arguments.
    fn run(&self, bindings: Bindings<'_, '_>) -> Result<RunStats>;

    /// The generated source, for back ends that print one.
    fn source(&self) -> Option<&str> {
        None
    }
}

/// Every back end, in the order [`select`] asks them.
pub static BACKENDS: &[&dyn Backend] = &[&interp::InterpBackend, &host::HostBackend];

/// The back end that runs `lowered` for `target`. A target whose device feature is asked
/// to run GPU loops needs a back end for that device; until one is listed that is an
/// `Err` naming the Func and the directive.
pub fn select(target: &Target, lowered: &Lowered) -> Result<&'static dyn Backend> {
    select_for_nest(target, &lowered.stmt)
}

/// [`select`] for a loop nest at any step of lowering (the loop kinds are known once the
/// schedule is resolved).
pub fn select_for_nest(target: &Target, stmt: &crate::ir::Stmt) -> Result<&'static dyn Backend> {
    // GPU loops run where the host C back end outlines them as kernels: `lower` has
    // already refused them on a target without a GPU feature. Distributed loops never get
    // here as such: scheduling slices them by rank (`lower::distribute`), and every back
    // end runs the slices and their border exchanges.
    let distributed = loops_of_kind(stmt, |k| k == crate::ir::ForKind::Distributed);
    if let Some(l) = distributed.first() {
        return Err(Error::internal(
            "backend::select",
            format!("Func '{}': a {} loop was not sliced by rank", l.func, l.directive()),
        ));
    }
    BACKENDS.iter().copied().find(|b| b.runs(target)).ok_or_else(|| {
        Error::Target(format!("no back end runs target '{target}' (architecture '{}')", target.arch().name()))
    })
}
