//! The pass pipeline, in order. `HALOGEN_DEBUG=lower` prints the loop nest after each.

use super::bounds_inference::bounds_inference;
use super::environment::{build_environment, Environment};
use super::schedule_functions::schedule_functions;
use super::sliding_window::sliding_window;
use super::storage_flattening::storage_flattening;
use super::storage_folding::{storage_folding, Fold};
use super::unroll::unroll;
use super::vectorize::vectorize;
use super::LowerCtx;
use crate::analysis::{cse_stmt, simplify_stmt};
use crate::error::Result;
use crate::ir::{Name, Stmt};
use crate::lang::func::FuncRef;
use std::collections::HashMap;

/// The result of lowering: the final loop nest and what the runtime must bind.
#[derive(Clone, Debug)]
pub struct Lowered {
    /// The loop nest.
    pub stmt: Stmt,
    /// The algorithm's environment (outputs, images, parameters).
    pub env: Environment,
    /// Folded storage, by Func.
    pub folds: HashMap<Name, Fold>,
}

fn debug_enabled() -> bool {
    std::env::var("HALOGEN_DEBUG").is_ok_and(|v| v.split(',').any(|p| p.trim() == "lower"))
}

fn show(pass: &str, s: &Stmt) {
    if debug_enabled() {
        eprintln!("=== after {pass} ===\n{s}");
    }
}

/// Lowers the pipeline with these outputs.
pub fn lower(outputs: &[FuncRef]) -> Result<Lowered> {
    let env = build_environment(outputs)?;
    let mut ctx = LowerCtx::new(env);
    let s = schedule_functions(&mut ctx)?;
    show("schedule functions", &s);
    let s = bounds_inference(s, &mut ctx)?;
    show("bounds inference", &s);
    let s = sliding_window(s, &mut ctx)?;
    show("sliding window", &s);
    let s = storage_folding(s, &mut ctx)?;
    show("storage folding", &s);
    let s = storage_flattening(s, &mut ctx)?;
    show("storage flattening", &s);
    let s = simplify_stmt(&s);
    show("simplify", &s);
    let s = unroll(s)?;
    show("unroll", &s);
    let s = vectorize(s)?;
    show("vectorize", &s);
    let s = simplify_stmt(&s);
    let s = cse_stmt(&s);
    show("simplify and CSE", &s);
    Ok(Lowered { stmt: s, env: ctx.env, folds: ctx.folds })
}
