//! Serial reductions made parallel with `rfactor` (Suriana et al. 2017), before planning.
//!
//! An update whose pure variables cannot run in parallel (a histogram, whose left-hand
//! side is computed; a sum into a scalar) runs on one thread, however large its domain.
//! Where [`crate::lang::func::Stage::rfactor`] accepts it (an integer or bool reduction),
//! the outermost reduction variable is split into one strip per task and the strips
//! become the parallel pure variable `u` of an intermediate Func, merged afterwards:
//! Halide's hand schedule of histogram equalization. Planning then sees the intermediate
//! as one more Func with an update, parallel over `u`.
//!
//! Factoring rewrites the update's definition (the values stay exactly the same), so a
//! second `auto_schedule` finds a merge that is already parallel over its pure variables
//! and leaves it alone.

use super::apply::{ident, reduction_iterations, Source};
use super::footprint::{eval_range, volume, Regions};
use super::graph::Graph;
use super::tiling::PARALLEL_MIN_WORK;
use super::MachineParams;
use crate::analysis::Scope;
use crate::lang::func::Func;
use crate::lang::var::Var;

/// Partial reductions per core: enough that one late task leaves little idle time.
const TASKS_PER_CORE: usize = 8;

/// The most bytes the partial results (one copy of the Func's region per task) may take.
const MAX_PARTIAL_BYTES: f64 = 16.0 * 1024.0 * 1024.0;

/// Factors every large serial reduction of the non-hand-scheduled Funcs of `g`; returns
/// whether it changed any (then the graph must be built again), and writes each
/// `rfactor` into `src`.
pub(crate) fn factor_serial_reductions(
    g: &Graph,
    scope: &Scope,
    root: &Regions,
    m: &MachineParams,
    src: &mut Source,
) -> bool {
    if m.cores < 2 {
        return false;
    }
    let tasks = TASKS_PER_CORE * m.cores;
    let mut changed = false;
    for &i in &g.order {
        let node = &g.nodes[i];
        if node.fixed {
            continue;
        }
        for k in 1..node.stages.len() {
            let stage = &node.stages[k];
            if stage.rvars.is_empty() || stage.pure.iter().any(|(d, _)| node.update_var_is_independent(k, *d)) {
                continue;
            }
            // The outermost reduction variable, with a known extent of at least two rows
            // per task.
            let Some((rvar, _, extent)) = stage.rvars.last() else { continue };
            let Some((_, rows)) = eval_range(extent, scope) else { continue };
            if rows < 2 * tasks as i64 {
                continue;
            }
            if reduction_iterations(stage, scope, 1.0) * node.stage_ops[k] < PARALLEL_MIN_WORK {
                continue;
            }
            let region = root.funcs[i].as_ref().map_or(1.0, volume);
            if region * tasks as f64 * node.elem_bytes() as f64 > MAX_PARTIAL_BYTES {
                continue;
            }
            let st = Func(node.fref.clone()).update_stage(k - 1);
            if !st.factorable() {
                continue;
            }
            let factor = (rows as usize).div_ceil(tasks) as i32;
            let taken: Vec<&str> = node.args.iter().map(|a| &**a).collect();
            let u_name = ["u", "u_rf", "u_rfactor"].into_iter().find(|n| !taken.contains(n)).unwrap_or("u_rf_");
            let (outer, inner, u) = (Var::new(&format!("{rvar}o")), Var::new(&format!("{rvar}i")), Var::new(u_name));
            let errors = node.fref.lock().errors.len();
            let intm = st.split(Var::new(rvar), outer, inner, factor).rfactor(&[(outer, u)]);
            if node.fref.lock().errors.len() != errors {
                // Not expected after `factorable`; the pipeline keeps its error for compile.
                continue;
            }
            // The merge is ours, not the user's: plan the Func like any other (the Func
            // was not scheduled by hand, or it would be fixed).
            {
                let mut d = node.fref.lock();
                d.schedule.touched = false;
                d.updates[k - 1].schedule.touched = false;
            }
            let (rv, o, n, uv) = (src.var(rvar), src.var(&outer.name()), src.var(&inner.name()), src.var(&u.name()));
            src.push(format!(
                "let {} = {}.update_stage({}).split({rv}, {o}, {n}, {factor}).rfactor(&[({o}, {uv})]);",
                ident(&intm.name()),
                ident(&node.name),
                k - 1
            ));
            changed = true;
        }
    }
    changed
}
