//! Values that the checks at the pipeline's root do not hold to the coordinate limit.
//!
//! Rules that assume `Int(32)` arithmetic does not overflow are sound for coordinates:
//! before anything runs, every buffer's shape, every region and every product inside an
//! index is checked to lie within ±2^30 ([`crate::ir::COORDINATE_LIMIT`]), so the sum or
//! difference of two of them fits. A value loaded from memory, a scalar parameter or a
//! conversion from a float or a wider integer can be anything: there a clamp is what
//! brings an index into range, and a rule that moves arithmetic inside the clamp
//! (`max(min(v, hi), lo) - lo` as `max(min(v, hi) - lo, 0)`) can wrap for `v` near
//! `i32::MIN` and carry the index out of the buffer. Such rules ask [`may_hold_any`] first.

use super::Simplifier;
use crate::ir::{is_buffer_shape, CallKind, Expr, ExprKind, Type, VarBinding, COORDINATE_LIMIT};
use std::collections::HashMap;

impl Simplifier {
    /// True if `e` may hold a 32- or 64-bit integer the root checks do not bound: a
    /// constant past the limit, a load, a call, a scalar parameter (other than a buffer's
    /// shape), a conversion from a float or a wide integer, or a let-bound name of one of
    /// those. Answers are remembered by node (expressions share their sub-trees, so a walk
    /// without it is exponential in the depth of an inlined pipeline), until a let makes a
    /// name unchecked.
    pub(super) fn may_hold_any(&self, e: &Expr) -> bool {
        let mut memo = self.unchecked_memo.borrow_mut();
        if memo.lets != self.unchecked_lets.len() {
            memo.answers.clear();
            memo.lets = self.unchecked_lets.len();
        }
        self.walk_unchecked(e, &mut memo.answers)
    }

    fn walk_unchecked(&self, e: &Expr, memo: &mut HashMap<usize, (Expr, bool)>) -> bool {
        let key = e.ptr() as usize;
        if let Some((_, v)) = memo.get(&key) {
            return *v;
        }
        let v = crate::ir::stack::guard(|| match e.kind() {
            // A constant is not a coordinate once past the limit (a product that wrapped
            // and was folded, say).
            ExprKind::IntImm(v) => v.unsigned_abs() >= COORDINATE_LIMIT as u64,
            ExprKind::FloatImm(_) => false,
            ExprKind::Var { name, binding } => match binding {
                VarBinding::Param => !is_buffer_shape(e),
                _ => self.unchecked_lets.contains(name) && !narrow(e.ty()),
            },
            ExprKind::Load { .. } => !narrow(e.ty()),
            ExprKind::Call { kind: CallKind::Intrinsic(_), .. } => self.any_child_unchecked(e, memo),
            ExprKind::Call { .. } => !narrow(e.ty()),
            ExprKind::Cast(v) => !narrow(v.ty()) && (v.ty().is_float() || self.walk_unchecked(v, memo)),
            _ => self.any_child_unchecked(e, memo),
        });
        // The node is kept alive with its answer, so that its address is not reused.
        memo.insert(key, (e.clone(), v));
        v
    }

    fn any_child_unchecked(&self, e: &Expr, memo: &mut HashMap<usize, (Expr, bool)>) -> bool {
        let mut any = false;
        e.for_each_child(|c| any = any || self.walk_unchecked(c, memo));
        any
    }
}

/// What [`Simplifier::may_hold_any`] has found, for the set of unchecked lets it had.
#[derive(Default)]
pub(super) struct UncheckedMemo {
    lets: usize,
    answers: HashMap<usize, (Expr, bool)>,
}

/// True for types whose every value lies well inside the coordinate limit (integers of
/// 16 bits or fewer, bools).
fn narrow(ty: Type) -> bool {
    let el = ty.element();
    (el.is_int_or_uint() || el.is_bool()) && el.bits <= 16
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_params_and_wide_casts_may_hold_any_value() {
        let s = Simplifier::new();
        let x = Expr::var(Type::i32(), "x");
        let load = Expr::load(Type::i32(), "data", x.clone(), None);
        let small = Expr::cast(Type::i32(), Expr::load(Type::u16(), "data", x.clone(), None));
        let user = Expr::param(Type::i32(), "bound");
        let shape = Expr::param(Type::i32(), "input.extent.1");
        assert!(s.may_hold_any(&Expr::add(x.clone(), load)));
        assert!(s.may_hold_any(&Expr::min(x.clone(), user)));
        assert!(s.may_hold_any(&Expr::cast(Type::i32(), Expr::var(Type::f32(), "v"))));
        assert!(!s.may_hold_any(&Expr::add(x.clone(), small)));
        assert!(!s.may_hold_any(&Expr::sub(x.clone(), shape)));
        assert!(s.may_hold_any(&Expr::min(x.clone(), Expr::i32(-2147483643))));
        assert!(!s.may_hold_any(&Expr::min(x, Expr::i32(1 << 29))));
        let p = |n: &str| Expr::param(Type::i32(), n);
        assert!(!is_buffer_shape(&p("extent.1")) && !is_buffer_shape(&p("in.min.z")));
    }
}
