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
use super::verify::verify;
use super::LowerCtx;
use crate::analysis::{cse_stmt, simplify_stmt};
use crate::error::Result;
use crate::ir::{Name, Stmt};
use crate::lang::func::FuncRef;
use crate::target::Target;
use std::collections::HashSet;

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

/// Prints the nest after `pass` when asked, and verifies it in debug builds.
fn after(pass: &str, s: &Stmt, ctx: &LowerCtx, check_scopes: bool) -> Result<()> {
    if debug_enabled() {
        eprintln!("=== after {pass} ===\n{s}");
    }
    if cfg!(debug_assertions) {
        let mut external: HashSet<Name> = ctx.env.images.keys().cloned().collect();
        external.extend(ctx.env.outputs.iter().cloned());
        verify(s, pass, &external, check_scopes)?;
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
    after("schedule functions", &s, &ctx, false)?;
    check_loop_kinds(&s, target)?;
    let s = bounds_inference(s, &ctx)?;
    after("bounds inference", &s, &ctx, true)?;
    let s = sliding_window(s, &ctx.env)?;
    after("sliding window and storage folding", &s, &ctx, true)?;
    let s = storage_flattening(s, &ctx.env)?;
    after("storage flattening", &s, &ctx, true)?;
    let s = specialize_tails(s)?;
    after("specialize vector tails", &s, &ctx, true)?;
    let s = simplify_stmt(&s);
    after("simplify", &s, &ctx, true)?;
    let s = unroll(s)?;
    after("unroll", &s, &ctx, true)?;
    let s = vectorize(s)?;
    after("vectorize", &s, &ctx, true)?;
    let s = partition_loops(s);
    after("partition loops", &s, &ctx, true)?;
    let s = simplify_stmt(&s);
    let s = cse_stmt(&s);
    after("simplify and CSE", &s, &ctx, true)?;
    Ok(Lowered { stmt: s, env: ctx.env })
}
