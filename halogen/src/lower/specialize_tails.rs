//! Pass 5: specialize vector tails. A split with the ShiftInwards tail clamps its variable
//! (`min(v, last)`) and guards its body for regions smaller than the factor. In a vector
//! loop both are per lane: the clamp turns dense loads and stores into gathers and
//! scatters, the guard into masks. Whenever the region is at least the factor (nearly
//! always) neither can fire, so the loop outside the vector loop is specialized:
//! `if (factor <= extent) { loop without clamp or guard } else { loop as it was }`.
//! Bounds inference ran on the guarded form, so the regions it found stay exact.

use super::LowerCtx;
use crate::analysis::simplify;
use crate::error::Result;
use crate::ir::{mutate_expr_children, mutate_stmt_children, Expr, Mutator, Name, Stmt};

/// A ShiftInwards split whose inner loop is vectorized.
#[derive(Clone, Debug)]
pub struct VectorTail {
    /// The loop just outside the vector loop, where the specialization goes.
    pub outer_loop: Name,
    /// When it holds, the clamp and the guard change nothing: `factor <= extent` for
    /// ShiftInwards; for GuardWithIf, that the last lane of this vector is in range.
    pub condition: Expr,
    /// The guard's term that `condition` makes true.
    pub guard_term: Expr,
    /// GuardWithIf: `condition` depends on the loop's variable, so the specialization
    /// goes inside the loop, around its body.
    pub per_iteration: bool,
    /// The let defining the split variable, `min(value, last)` in the general case.
    pub var: Name,
    /// Its value without the clamp.
    pub unclamped: Expr,
}

/// The body of the fast version: the clamps dropped, the conditions known true.
struct Assume<'a> {
    tails: Vec<&'a VectorTail>,
}

impl Mutator for Assume<'_> {
    fn mutate_expr(&mut self, e: &Expr) -> Expr {
        if self.tails.iter().any(|t| t.guard_term == *e) {
            return Expr::bool_imm(true);
        }
        mutate_expr_children(self, e)
    }

    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        match s {
            Stmt::LetStmt { name, body, .. } => match self.tails.iter().find(|t| t.var == *name) {
                Some(t) => Stmt::let_stmt(name.clone(), t.unclamped.clone(), self.mutate_stmt(body)),
                None => mutate_stmt_children(self, s),
            },
            _ => mutate_stmt_children(self, s),
        }
    }
}

struct Specialize<'a> {
    tails: &'a [VectorTail],
}

impl Mutator for Specialize<'_> {
    fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
        let s = mutate_stmt_children(self, s);
        let Stmt::For { name, .. } = &s else { return s };
        let name = name.clone();
        let here = |per_iteration: bool| -> Vec<&VectorTail> {
            self.tails.iter().filter(|t| t.outer_loop == name && t.per_iteration == per_iteration).collect()
        };
        let specialize = |tails: Vec<&VectorTail>, s: Stmt| -> Stmt {
            let Some(condition) = tails.iter().map(|t| t.condition.clone()).reduce(Expr::and) else { return s };
            let fast = simplify_guards(Assume { tails }.mutate_stmt(&s));
            Stmt::IfThenElse { condition, then_case: Box::new(fast), else_case: Some(Box::new(s)) }
        };
        let s = match s {
            Stmt::For { name: n, min, extent, kind, body } => {
                let body = specialize(here(true), *body);
                Stmt::For { name: n, min, extent, kind, body: Box::new(body) }
            }
            s => s,
        };
        specialize(here(false), s)
    }
}

/// Folds the guards that became `true || ...` (the later simplification does the rest).
fn simplify_guards(s: Stmt) -> Stmt {
    struct Guards;
    impl Mutator for Guards {
        fn mutate_stmt(&mut self, s: &Stmt) -> Stmt {
            match mutate_stmt_children(self, s) {
                Stmt::IfThenElse { condition, then_case, else_case } => {
                    let condition = simplify(&condition);
                    match (condition.ty().is_bool(), condition.as_int()) {
                        (true, Some(1)) => *then_case,
                        _ => Stmt::IfThenElse { condition, then_case, else_case },
                    }
                }
                other => other,
            }
        }
    }
    Guards.mutate_stmt(&s)
}

/// Runs the pass.
pub fn specialize_tails(s: Stmt, ctx: &LowerCtx) -> Result<Stmt> {
    if ctx.vector_tails.is_empty() {
        return Ok(s);
    }
    Ok(Specialize { tails: &ctx.vector_tails }.mutate_stmt(&s))
}
