//! Pass 4b: storage folding. A Func that slides along a dimension needs only the rows of
//! one iteration alive at a time, so its storage along that dimension becomes a circular
//! buffer of that many rows (coordinate modulo the fold factor). The sliding-window pass
//! decides each fold here as it slides a Func, and records it on the Func's `Realize`;
//! flattening applies it.

use super::sliding_window::Slide;
use crate::analysis::{bounds_of_expr_in_scope, Scope};
use crate::ir::{Name, Range, Stmt};

pub use crate::ir::Fold;

/// The fold of a Func's storage over `bounds` that slides as `slide` says, if folding
/// pays: the factor must be a constant upper bound of the rows one iteration needs, and
/// smaller than the storage's extent.
///
/// ```
/// use halogen::ir::{Expr, Fold, Range};
/// use halogen::lower::sliding_window::Slide;
/// use halogen::lower::storage_folding::fold_for;
/// let bounds = vec![Range::new(Expr::i32(0), Expr::i32(64)), Range::new(Expr::i32(0), Expr::i32(48))];
/// let slide = Slide { dim: 1, extent: Expr::i32(3) };
/// assert_eq!(fold_for(&slide, &bounds), Some(Fold { dim: 1, factor: 3 }));
/// let small = vec![bounds[0].clone(), Range::new(Expr::i32(0), Expr::i32(2))];
/// assert_eq!(fold_for(&slide, &small), None);
/// ```
pub fn fold_for(slide: &Slide, bounds: &[Range]) -> Option<Fold> {
    let factor = slide
        .extent
        .as_int()
        .or_else(|| bounds_of_expr_in_scope(&slide.extent, &Scope::new()).max.and_then(|m| m.as_int()))?;
    if factor < 1 {
        return None;
    }
    // Folding only pays when the storage would be larger.
    if bounds[slide.dim].extent.as_int().is_some_and(|e| e <= factor) {
        return None;
    }
    Some(Fold { dim: slide.dim, factor })
}

/// The folds the `Realize`s of a loop nest record, by Func, outermost first.
///
/// ```
/// use halogen::ir::{Expr, Fold, Range, Stmt, Type};
/// use halogen::lower::storage_folding::folds;
/// let bounds = vec![Range::new(Expr::i32(0), Expr::i32(64))];
/// let realize = |name: &str, fold, body| Stmt::Realize {
///     name: name.into(),
///     types: vec![Type::u8()],
///     bounds: bounds.clone(),
///     fold,
///     body: Box::new(body),
/// };
/// let s = realize("f", None, realize("g", Some(Fold { dim: 0, factor: 2 }), Stmt::no_op()));
/// assert_eq!(folds(&s), vec![("g".into(), Fold { dim: 0, factor: 2 })]);
/// ```
pub fn folds(s: &Stmt) -> Vec<(Name, Fold)> {
    fn collect(s: &Stmt, out: &mut Vec<(Name, Fold)>) {
        if let Stmt::Realize { name, fold: Some(f), .. } = s {
            out.push((name.clone(), *f));
        }
        s.for_each_child(|c| collect(c, out), |_| {});
    }
    let mut out = Vec::new();
    collect(s, &mut out);
    out
}
