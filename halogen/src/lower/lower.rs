//! The pass pipeline, in order. `HALOGEN_DEBUG=lower` prints the loop nest after each;
//! `HALOGEN_DEBUG=lower-time` prints the time each pass took.
//!
//! Lowering receives the [`Target`]: what only some targets can run is gated here, by the
//! target's features, as Halide's `lower` gates its GPU and distribution passes: every
//! scheduled loop kind needs a feature that runs it ([`check_loop_kinds`]), and distributed
//! Funcs need `mpi` ([`super::distribute::check_target`]). Distribution itself happens in
//! scheduling (loops sliced by the symbolic rank) and bounds inference (global regions and
//! border exchanges; see [`super::distribute`]); GPU kernels are outlined by the C back
//! end.

use super::bounds_inference::bounds_inference;
use super::compute_with::fuse_compute_with;
use super::environment::{build_environment, Environment};
use super::loop_kinds::check_loop_kinds;
use super::partition_loops::partition_loops;
use super::promote_accumulators::promote_accumulators;
use super::schedule_functions::schedule_functions;
use super::sliding_window::sliding_window;
use super::specialize_tails::specialize_tails;
use super::storage_flattening::storage_flattening;
use super::unroll::unroll;
use super::vectorize::vectorize;
use super::verify::{verify_enabled, verify_with_funcs, Phase};
use super::LowerCtx;
use crate::analysis::{cse_stmt, simplify_stmt};
use crate::error::Result;
use crate::ir::{Name, Stmt};
use crate::lang::func::FuncRef;
use crate::target::Target;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::time::Instant;

/// The result of lowering: the final loop nest and what the runtime must bind.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The loop nest.
    pub stmt: Stmt,
    /// The algorithm's environment (outputs, images, parameters).
    pub env: Environment,
}

fn debug_enabled() -> bool {
    debug_flag("lower")
}

fn debug_flag(flag: &str) -> bool {
    std::env::var("HALOGEN_DEBUG").is_ok_and(|v| v.split(',').any(|p| p.trim() == flag))
}

thread_local! {
    /// The nests recorded by [`record_passes`] on this thread, when it is running.
    static RECORDED: RefCell<Option<Vec<(String, Stmt)>>> = const { RefCell::new(None) };
    /// When the pass running on this thread started, when pass times are asked for
    /// (`HALOGEN_DEBUG=lower-time`).
    static PASS_START: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Starts the clock of the next pass when pass times are asked for.
fn start_pass_clock() {
    if debug_flag("lower-time") {
        PASS_START.with(|t| t.set(Some(Instant::now())));
    }
}

/// Runs `run` and returns, with its result, the loop nest after each pass of every
/// lowering it did on this thread, named by pass (for tests of the passes and the printer).
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, Expr::from(x) * 2);
/// let (compiled, passes) = halogen::lower::lower::record_passes(|| Pipeline::new(&[&f]).compile(&Target::interp()));
/// assert!(compiled.is_ok());
/// assert_eq!(passes.first().map(|p| p.0.as_str()), Some("schedule functions"));
/// assert_eq!(passes.last().map(|p| p.0.as_str()), Some("simplify and CSE"));
/// ```
pub fn record_passes<R>(run: impl FnOnce() -> R) -> (R, Vec<(String, Stmt)>) {
    let outer = RECORDED.with(|r| r.replace(Some(Vec::new())));
    let result = run();
    let recorded = RECORDED.with(|r| r.replace(outer)).unwrap_or_default();
    (result, recorded)
}

/// Prints the nest after `pass` when asked, records it for [`record_passes`], and verifies
/// it when the verifier is on.
fn after(pass: &str, s: &Stmt, ctx: &LowerCtx, phase: Phase) -> Result<()> {
    if let Some(start) = PASS_START.with(|t| t.take()) {
        eprintln!("lower-time {pass}: {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
    }
    if debug_enabled() {
        eprintln!("=== after {pass} ===\n{s}");
    }
    RECORDED.with(|r| {
        if let Some(v) = r.borrow_mut().as_mut() {
            v.push((pass.to_string(), s.clone()));
        }
    });
    if verify_enabled() {
        let mut external: HashSet<Name> = ctx.env.images.keys().cloned().collect();
        for out in &ctx.env.outputs {
            let n = ctx.env.funcs.get(out).map_or(1, |f| f.types.len());
            external.extend(super::environment::buffer_names(out, n));
        }
        let func_types: HashMap<Name, Vec<_>> =
            ctx.env.funcs.iter().map(|(name, f)| (name.clone(), f.types.clone())).collect();
        verify_with_funcs(s, pass, &external, &func_types, phase)?;
    }
    start_pass_clock();
    Ok(())
}

/// Lowers the pipeline with these outputs for `target`.
///
/// ```
/// use halogen::prelude::*;
/// let x = Var::new("x");
/// let f = Func::new("f");
/// f.def(x, x * 2);
/// let lowered = halogen::lower::lower(&[f.func_ref().clone()], &Target::host()).unwrap();
/// assert!(lowered.stmt.to_string().contains("f.s0.x"));
/// f.gpu_blocks(x);
/// let e = halogen::lower::lower(&[f.func_ref().clone()], &Target::host()).unwrap_err();
/// assert!(e.to_string().contains("Func 'f': gpu_blocks(x) needs a GPU target"));
/// ```
pub fn lower(outputs: &[FuncRef], target: &Target) -> Result<Lowered> {
    finish_lowering(schedule(outputs, target)?)
}

/// The first step of lowering: the algorithm and its schedule resolved into the loop nest
/// of every Func, before bounds inference. Everything the later passes read is here (they
/// see no Func handle), so [`Scheduled::fingerprint`] identifies what lowering will make
/// of it.
#[derive(Clone, Debug)]
pub struct Scheduled {
    /// The loop nest after scheduling.
    pub stmt: Stmt,
    /// The algorithm's environment.
    pub env: Environment,
}

impl Scheduled {
    /// A digest of the nest, the environment, the target and this build of the compiler:
    /// equal fingerprints lower to the same code, so a compiled pipeline can be found in a
    /// cache without lowering it again. (Names numbered by a process-wide counter, such as
    /// an inline reduction's, make a pipeline built twice in one process look different:
    /// that costs a compile, never a wrong result.)
    ///
    /// ```
    /// use halogen::prelude::*;
    /// let x = Var::new("x");
    /// let f = Func::new("f");
    /// f.def(x, x * 2);
    /// let refs = [f.func_ref().clone()];
    /// let a = halogen::lower::lower::schedule(&refs, &Target::host()).unwrap().fingerprint(&Target::host());
    /// f.vectorize(x, 8);
    /// let b = halogen::lower::lower::schedule(&refs, &Target::host()).unwrap().fingerprint(&Target::host());
    /// assert_ne!(a, b);
    /// ```
    pub fn fingerprint(&self, target: &Target) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(env!("HALOGEN_BUILD_ID"));
        h.update(format!("\0{target:?}\0{}\0{:?}", self.stmt, self.env));
        h.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
    }
}

/// Builds the environment, resolves the schedule into loop nests and checks that the target
/// runs every loop kind used (the first step of [`lower`]).
pub fn schedule(outputs: &[FuncRef], target: &Target) -> Result<Scheduled> {
    let env = build_environment(outputs)?;
    let ctx = LowerCtx::new(env);
    start_pass_clock();
    let s = schedule_functions(&ctx)?;
    after("schedule functions", &s, &ctx, Phase::Scheduled)?;
    check_loop_kinds(&s, target)?;
    super::distribute::check_target(&ctx.env, target)?;
    Ok(Scheduled { stmt: s, env: ctx.env })
}

/// How many times this process has run the passes after scheduling (a compile that finds
/// its code by fingerprint runs none of them).
pub fn lowerings() -> u64 {
    LOWERINGS.load(std::sync::atomic::Ordering::Relaxed)
}

static LOWERINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The passes after scheduling (the rest of [`lower`]).
pub fn finish_lowering(scheduled: Scheduled) -> Result<Lowered> {
    LOWERINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let ctx = LowerCtx::new(scheduled.env);
    start_pass_clock();
    let s = bounds_inference(scheduled.stmt, &ctx)?;
    after("bounds inference", &s, &ctx, Phase::BoundsInferred)?;
    let s = sliding_window(s, &ctx.env)?;
    after("sliding window and storage folding", &s, &ctx, Phase::BoundsInferred)?;
    let s = storage_flattening(s, &ctx.env)?;
    after("storage flattening", &s, &ctx, Phase::Flattened)?;
    let s = fuse_compute_with(s, &ctx.env)?;
    after("compute with", &s, &ctx, Phase::Flattened)?;
    let s = specialize_tails(s)?;
    after("specialize vector tails", &s, &ctx, Phase::Flattened)?;
    let s = simplify_stmt(&s);
    after("simplify", &s, &ctx, Phase::Flattened)?;
    let s = unroll(s)?;
    after("unroll", &s, &ctx, Phase::Unrolled)?;
    let s = vectorize(s)?;
    after("vectorize", &s, &ctx, Phase::Vectorized)?;
    let s = partition_loops(s);
    after("partition loops", &s, &ctx, Phase::Vectorized)?;
    let s = promote_accumulators(s);
    after("promote accumulators", &s, &ctx, Phase::Vectorized)?;
    let s = simplify_stmt(&s);
    let s = cse_stmt(&s);
    after("simplify and CSE", &s, &ctx, Phase::Vectorized)?;
    Ok(Lowered { stmt: s, env: ctx.env })
}

/// True when lowering is being watched (`HALOGEN_DEBUG=lower`, [`record_passes`]): then
/// every pass must run, and nothing is taken from a cache.
pub fn passes_are_watched() -> bool {
    debug_enabled() || RECORDED.with(|r| r.borrow().is_some())
}
