//! The pass pipeline, in order. `HALOGEN_DEBUG=lower` prints the loop nest after each.
//!
//! Lowering receives the [`Target`]: passes that only some targets need are gated here, by
//! the target's features, as Halide's `lower` gates its GPU and distribution passes. Today
//! the gate is the check that every scheduled loop kind has a target feature to run it
//! ([`check_loop_kinds`]); the GPU and MPI passes will join the list behind
//! `target.has_gpu_feature()` and `target.has_feature(Feature::Mpi)`.

use super::bounds_inference::bounds_inference;
use super::environment::{build_environment, Environment};
use super::loop_kinds::check_loop_kinds;
use super::partition_loops::partition_loops;
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
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// The result of lowering: the final loop nest and what the runtime must bind.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The loop nest.
    pub stmt: Stmt,
    /// The algorithm's environment (outputs, images, parameters).
    pub env: Environment,
}

fn debug_enabled() -> bool {
    std::env::var("HALOGEN_DEBUG").is_ok_and(|v| v.split(',').any(|p| p.trim() == "lower"))
}

thread_local! {
    /// The nests recorded by [`record_passes`] on this thread, when it is running.
    static RECORDED: RefCell<Option<Vec<(String, Stmt)>>> = const { RefCell::new(None) };
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
    let env = build_environment(outputs)?;
    let ctx = LowerCtx::new(env);
    let s = schedule_functions(&ctx)?;
    after("schedule functions", &s, &ctx, Phase::Scheduled)?;
    check_loop_kinds(&s, target)?;
    let s = bounds_inference(s, &ctx)?;
    after("bounds inference", &s, &ctx, Phase::BoundsInferred)?;
    let s = sliding_window(s, &ctx.env)?;
    after("sliding window and storage folding", &s, &ctx, Phase::BoundsInferred)?;
    let s = storage_flattening(s, &ctx.env)?;
    after("storage flattening", &s, &ctx, Phase::Flattened)?;
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
    let s = simplify_stmt(&s);
    let s = cse_stmt(&s);
    after("simplify and CSE", &s, &ctx, Phase::Vectorized)?;
    Ok(Lowered { stmt: s, env: ctx.env })
}
