//! A constant upper bound of an integer expression whatever its variables hold, where one
//! can be proven (Halide's `find_constant_bound`): what a GPU kernel needs for the size of
//! its storage and of its blocks, whose extents are symbolic (`min(t + 7, m) - min(t, m) +
//! 1`, a tile clamped at the image's edge) but never above a tile's size.
//!
//! Beyond interval arithmetic, which knows nothing of a variable it has no bounds for, a
//! difference of two `min`s (or two `max`es) is bounded by the larger of the differences
//! of their operands, pairwise: `min(p, q) - min(r, s) <= max(p - r, q - s)`, since the
//! subtracted `min` is one of `r`, `s`, and the other `min` is at most the matching one of
//! `p`, `q`. The pairwise differences then often simplify to constants.
//!
//! ```
//! use halogen::analysis::constant_bound::constant_upper_bound;
//! use halogen::ir::{Expr, Type};
//! let (t, m) = (Expr::var(Type::i32(), "t"), Expr::var(Type::i32(), "m"));
//! // The extent of a tile of 8 clamped to an edge `m`.
//! let extent = Expr::add(Expr::sub(Expr::min(Expr::add(t.clone(), Expr::i32(7)), m.clone()), Expr::min(t, m)), Expr::i32(1));
//! assert_eq!(constant_upper_bound(&extent), Some(8));
//! assert_eq!(constant_upper_bound(&Expr::var(Type::i32(), "n")), None);
//! ```

use super::interval::{bounds_of_expr_in_scope, Scope};
use super::simplify::simplify;
use super::substitute::substitute;
use crate::ir::{stack, BinOp, Expr, ExprKind};

/// The largest value `e` (a scalar integer) can take, if a constant bound is found.
pub fn constant_upper_bound(e: &Expr) -> Option<i64> {
    bound(&simplify(e), true)
}

/// The smallest value `e` can take, if a constant bound is found.
pub fn constant_lower_bound(e: &Expr) -> Option<i64> {
    bound(&simplify(e), false)
}

fn bound(e: &Expr, upper: bool) -> Option<i64> {
    stack::guard(|| {
        if let Some(v) = e.as_int() {
            return Some(v);
        }
        let direct = || {
            let iv = bounds_of_expr_in_scope(e, &Scope::new());
            let side = if upper { iv.max } else { iv.min };
            side.and_then(|x| x.as_int())
        };
        let found = match e.kind() {
            ExprKind::Binary(BinOp::Add, a, b) => {
                bound(a, upper).zip(bound(b, upper)).and_then(|(x, y)| x.checked_add(y))
            }
            ExprKind::Binary(BinOp::Sub, a, b) => difference(a, b, upper)
                .or_else(|| bound(a, upper).zip(bound(b, !upper)).and_then(|(x, y)| x.checked_sub(y))),
            ExprKind::Binary(BinOp::Mul, a, b) => match (a.as_int(), b.as_int()) {
                (_, Some(c)) if c >= 0 => bound(a, upper).and_then(|x| x.checked_mul(c)),
                (Some(c), _) if c >= 0 => bound(b, upper).and_then(|x| x.checked_mul(c)),
                _ => None,
            },
            // Division rounds down (and a remainder is never negative) for a positive
            // divisor, so a quotient grows with its dividend: a split loop's extent,
            // `(max - min) / f + 1`, is bounded where `max - min` is.
            ExprKind::Binary(BinOp::Div, a, b) => match b.as_int() {
                Some(c) if c > 0 => bound(a, upper).map(|x| x.div_euclid(c)),
                _ => None,
            },
            ExprKind::Binary(BinOp::Mod, _, b) => match b.as_int() {
                Some(c) if c > 0 => Some(if upper { c - 1 } else { 0 }),
                _ => None,
            },
            ExprKind::Binary(op @ (BinOp::Min | BinOp::Max), a, b) => {
                let (x, y) = (bound(a, upper), bound(b, upper));
                // An upper bound of a min needs one side; of a max, both (and the reverse
                // for lower bounds).
                match (*op == BinOp::Min) == upper {
                    true => match (x, y) {
                        (Some(x), Some(y)) => Some(if upper { x.min(y) } else { x.max(y) }),
                        (x, y) => x.or(y),
                    },
                    false => x.zip(y).map(|(x, y)| if upper { x.max(y) } else { x.min(y) }),
                }
            }
            ExprKind::Let { name, value, body } => bound(&simplify(&substitute(name, value, body)), upper),
            _ => None,
        };
        found.or_else(direct)
    })
}

/// A bound of `a - b` where both are `min`s or both `max`es: the pairwise differences of
/// their operands (in either pairing).
fn difference(a: &Expr, b: &Expr, upper: bool) -> Option<i64> {
    let (ExprKind::Binary(op_a, p, q), ExprKind::Binary(op_b, r, s)) = (a.kind(), b.kind()) else {
        return None;
    };
    if op_a != op_b || !matches!(op_a, BinOp::Min | BinOp::Max) {
        return None;
    }
    // min(p, q) - min(r, s) <= max(p - r, q - s), and >= min(p - r, q - s); the same holds
    // for max.
    let pair = |x: &Expr, y: &Expr, z: &Expr, w: &Expr| {
        let d1 = bound(&simplify(&Expr::sub(x.clone(), z.clone())), upper)?;
        let d2 = bound(&simplify(&Expr::sub(y.clone(), w.clone())), upper)?;
        Some(if upper { d1.max(d2) } else { d1.min(d2) })
    };
    let straight = pair(p, q, r, s);
    let crossed = pair(p, q, s, r);
    match (straight, crossed) {
        (Some(x), Some(y)) => Some(if upper { x.min(y) } else { x.max(y) }),
        (x, y) => x.or(y),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Type;

    fn v(n: &str) -> Expr {
        Expr::var(Type::i32(), n)
    }

    #[test]
    fn clamped_tiles_and_their_halos_have_constant_bounds() {
        let (t, m) = (v("t"), v("m"));
        // A tile of 8 plus a halo of one on each side.
        let lo = Expr::sub(Expr::min(t.clone(), m.clone()), Expr::i32(1));
        let hi = Expr::add(Expr::min(Expr::add(t.clone(), Expr::i32(7)), m.clone()), Expr::i32(1));
        let extent = Expr::add(Expr::sub(hi, lo), Expr::i32(1));
        assert_eq!(constant_upper_bound(&extent), Some(10));
        assert_eq!(constant_upper_bound(&Expr::max(Expr::i32(3), Expr::min(v("a"), Expr::i32(5)))), Some(5));
        assert_eq!(constant_upper_bound(&Expr::mul(Expr::min(v("a"), Expr::i32(4)), Expr::i32(3))), Some(12));
        // Nothing bounds a free variable, nor a max with a free side.
        assert_eq!(constant_upper_bound(&Expr::max(v("a"), Expr::i32(5))), None);
        assert_eq!(constant_lower_bound(&Expr::max(v("a"), Expr::i32(5))), Some(5));
    }

    #[test]
    fn quotients_and_remainders_by_positive_constants_are_bounded() {
        let (t, m) = (v("t"), v("m"));
        // A clamped tile of 32 split by 4: (max - min) / 4 + 1 <= 8.
        let span = Expr::sub(Expr::min(Expr::add(t.clone(), Expr::i32(31)), m.clone()), Expr::min(t, m));
        let extent = Expr::add(Expr::div(span.clone(), Expr::i32(4)), Expr::i32(1));
        assert_eq!(constant_upper_bound(&extent), Some(8));
        // Rounding down: a span of at most 9 split by 4 has at most 3 outer iterations.
        let ten = Expr::add(span, Expr::i32(-22));
        assert_eq!(constant_upper_bound(&Expr::add(Expr::div(ten, Expr::i32(4)), Expr::i32(1))), Some(3));
        assert_eq!(constant_upper_bound(&Expr::rem(v("a"), Expr::i32(6))), Some(5));
        assert_eq!(constant_lower_bound(&Expr::rem(v("a"), Expr::i32(6))), Some(0));
        // No bound for a divisor that is not a positive constant, or a free dividend.
        assert_eq!(constant_upper_bound(&Expr::div(Expr::i32(8), v("d"))), None);
        assert_eq!(constant_upper_bound(&Expr::div(v("a"), Expr::i32(2))), None);
    }
}
