//! Rules for bitwise operators and shifts.

use super::fold::shift_amount;
use super::info::const_int;
use super::linear::norm;
use super::{fold_binary, is_int, make_int, vector, Simplifier, S};
use crate::ir::{BinOp, Expr};

/// Rewrites `a & b`, `a | b`, `a ^ b`, `a << b`, `a >> b` (operands simplified), or
/// `None` to keep the node.
pub(super) fn rules(_s: &mut Simplifier, op: BinOp, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(op, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(op, x, y) {
        return Some(r);
    }
    if !is_int(ty) {
        return None;
    }
    let all_ones = |e: &Expr| e.as_int().is_some_and(|v| norm(ty, v) == -1);
    match op {
        BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor => {
            if x.is_const() && !y.is_const() {
                return Some(Expr::binary(op, y.clone(), x.clone()));
            }
            match op {
                BinOp::BitAnd if y.is_zero() || all_ones(x) => Some(y.clone()),
                BinOp::BitAnd if all_ones(y) || x == y => Some(x.clone()),
                BinOp::BitOr if y.is_zero() || x == y => Some(x.clone()),
                BinOp::BitOr if all_ones(y) => Some(y.clone()),
                BinOp::BitXor if y.is_zero() => Some(x.clone()),
                BinOp::BitXor if x == y => Some(make_int(ty, 0)),
                _ => None,
            }
        }
        BinOp::Shl | BinOp::Shr => {
            let amt = shift_amount(ty.bits as u32, const_int(y)? as i64);
            if amt == 0 {
                return Some(x.clone());
            }
            // Shifting left multiplies by 2^amt modulo 2^bits, for every integer type; as
            // a product it takes part in term collection. Not when 2^amt is the sign bit:
            // x * MIN is the same bits, but reasoning that assumes no overflow would read
            // it as a negative factor.
            if op == BinOp::Shl && (ty.element().is_uint() || amt + 1 < ty.bits as u32) {
                return Some(Expr::mul(x.clone(), Expr::const_of(ty, 1i64 << amt)));
            }
            None
        }
        _ => None,
    }
}
