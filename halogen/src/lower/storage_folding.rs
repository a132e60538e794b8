//! Pass 4b: storage folding. A Func that slides along a dimension needs only the rows of
//! one iteration alive at a time, so its storage along that dimension becomes a circular
//! buffer of that many rows (coordinate modulo the fold factor).

use super::LowerCtx;
use crate::analysis::{bounds_of_expr_in_scope, Scope};
use crate::error::Result;
use crate::ir::{Name, Stmt};

/// How a Func's storage is folded: along `dim`, modulo `factor`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    /// The folded dimension.
    pub dim: usize,
    /// Rows kept.
    pub factor: i64,
}

fn collect_realizes(s: &Stmt, out: &mut Vec<(Name, Vec<crate::ir::Range>)>) {
    if let Stmt::Realize { name, bounds, .. } = s {
        out.push((name.clone(), bounds.clone()));
    }
    s.for_each_child(|c| collect_realizes(c, out), |_| {});
}

/// Decides the folds; flattening applies them.
pub fn storage_folding(s: Stmt, ctx: &mut LowerCtx) -> Result<Stmt> {
    let mut realizes = Vec::new();
    collect_realizes(&s, &mut realizes);
    for (name, bounds) in realizes {
        let Some(slide) = ctx.slides.get(&name) else { continue };
        // The fold factor must be a constant upper bound of the rows one iteration needs.
        let factor = slide
            .extent
            .as_int()
            .or_else(|| bounds_of_expr_in_scope(&slide.extent, &Scope::new()).max.and_then(|m| m.as_int()));
        let Some(factor) = factor else { continue };
        if factor < 1 {
            continue;
        }
        // Folding only pays when the storage would be larger.
        if bounds[slide.dim].extent.as_int().is_some_and(|e| e <= factor) {
            continue;
        }
        ctx.folds.insert(name, Fold { dim: slide.dim, factor });
    }
    Ok(s)
}
