//! Rules for `a / b` and `a % b` (Euclidean for integers: `/` rounds so that the
//! remainder is in `[0, |b|)`, which for `b > 0` is floor division; `x / 0 == x % 0 == 0`).

use super::info::const_int;
use super::linear::{self, Linear};
use super::{fold_binary, is_int, make_int, no_overflow, vector, Simplifier, S};
use crate::ir::{BinOp, Expr, ExprKind};

/// `1 / c` if `c` is a power of two (of either sign) whose reciprocal a float of `bits`
/// bits holds exactly.
fn exact_reciprocal(c: f64, bits: u8) -> Option<f64> {
    if !c.is_finite() || c == 0.0 || c.abs().to_bits() & ((1u64 << 52) - 1) != 0 {
        return None;
    }
    let inv = 1.0 / c;
    let exact = match bits {
        32 => inv.is_finite() && f64::from(inv as f32) == inv,
        64 => inv.is_finite() && inv != 0.0,
        _ => false,
    };
    exact.then_some(inv)
}

/// Rewrites `a / b` (operands simplified), or `None` to keep the node.
pub(super) fn div(_s: &mut Simplifier, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(BinOp::Div, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(BinOp::Div, x, y) {
        return Some(r);
    }
    if ty.element().is_float() {
        if y.as_float() == Some(1.0) {
            return Some(x.clone());
        }
        // x / 2^k is x * 2^-k, bit for bit, wherever 2^-k is exact in the type: both round
        // the same real number (NaN, infinities, signed zeros and subnormals included).
        // A multiplication is several times cheaper than a division.
        let scalar = vector::as_broadcast(y).unwrap_or(y);
        if let Some(inv) = scalar.as_float().and_then(|c| exact_reciprocal(c, ty.bits)) {
            let inv = Expr::float_imm(ty.element(), inv);
            let inv = if ty.is_scalar() { inv } else { Expr::broadcast(inv, ty.lanes) };
            return Some(Expr::mul(x.clone(), inv));
        }
        return None;
    }
    if !is_int(ty) {
        return None;
    }
    let c = const_int(y)?;
    if c == 0 {
        return Some(make_int(ty, 0));
    }
    if c == 1 {
        return Some(x.clone());
    }
    // All values of x give the same quotient.
    if let Some(ai) = a.1 {
        let (q0, q1) = (ai.min.div_euclid(c), ai.max.div_euclid(c));
        if q0 == q1 {
            return Some(make_int(ty, q0));
        }
    }
    if c > 0 {
        // (p / c1) / c2 -> p / (c1 * c2): floor division composes (no overflow possible).
        if let ExprKind::Binary(BinOp::Div, p, q) = x.kind() {
            if let Some(c1) = const_int(q) {
                if c1 > 0 && ty.element().can_represent_int((c1 * c) as i64) && c1.checked_mul(c).is_some() {
                    return Some(Expr::div(p.clone(), make_int(ty, c1 * c)));
                }
            }
        }
        if no_overflow(ty) {
            // (p / c1 + k) / c2 -> (p + k * c1) / (c1 * c2): floor((floor(p / c1) + k) / c2)
            // is floor((p + k c1) / (c1 c2)) for positive c1, c2, and nested pyramid
            // levels' bounds then compare (min(t / 8, (t / 4 + 1) / 2) is t / 8).
            if let ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), inner, k) = x.kind() {
                if let (ExprKind::Binary(BinOp::Div, p, q), Some(k)) = (inner.kind(), const_int(k)) {
                    let k = if *op == BinOp::Add { k } else { -k };
                    if let (Some(c1), false) = (const_int(q), p.ty().is_vector()) {
                        let fits = |v: Option<i128>| v.filter(|v| ty.element().can_represent_int(*v as i64));
                        if let (true, Some(kc1), Some(c1c)) = (c1 > 0, fits(k.checked_mul(c1)), fits(c1.checked_mul(c)))
                        {
                            return Some(Expr::div(Expr::add(p.clone(), make_int(ty, kc1)), make_int(ty, c1c)));
                        }
                    }
                }
            }
            if let Some(r) = ramp_div(x, c) {
                return Some(r);
            }
            // (p * 8 + q + 16) / 8 -> p + (q + 16) / 8 etc: multiples of c come out.
            if let Some(lin) = linear::collect(x).filter(|l| l.exact) {
                if let Some(r) = pull_multiples(ty, &lin, c as i64) {
                    return Some(r);
                }
            }
        }
    }
    None
}

/// `ramp(b, s, n) / c` as a ramp or a broadcast when the lanes divide evenly.
fn ramp_div(x: &Expr, c: i128) -> Option<Expr> {
    let ExprKind::Ramp { base, stride, lanes } = x.kind() else { return None };
    let s = const_int(stride)?;
    let ety = base.ty();
    if s % c == 0 {
        return Some(Expr::ramp(Expr::div(base.clone(), make_int(ety, c)), make_int(ety, s / c), *lanes));
    }
    // base a multiple of c and every lane within the same block of c.
    let lin = linear::collect(base).filter(|l| l.exact)?;
    if linear::divisible_by(&lin, c as i64) && s >= 0 && s * (*lanes as i128 - 1) < c {
        return Some(Expr::broadcast(Expr::div(base.clone(), make_int(ety, c)), *lanes));
    }
    None
}

/// Splits `(sum of terms + k) / c` into the terms whose coefficient `c` divides, divided,
/// plus the division of the rest; `None` if nothing divides.
fn pull_multiples(ty: crate::ir::Type, lin: &Linear, c: i64) -> Option<Expr> {
    let mut q: Vec<(Expr, i64)> = Vec::new();
    let mut r: Vec<(Expr, i64)> = Vec::new();
    for (t, k) in &lin.terms {
        if *k != 0 && k % c == 0 {
            q.push((t.clone(), k / c));
        } else if *k != 0 {
            r.push((t.clone(), *k));
        }
    }
    let (mut qk, mut rk) = (0, lin.constant);
    if lin.constant % c == 0 {
        qk = lin.constant / c;
        rk = 0;
    }
    if q.is_empty() && qk == 0 {
        return None;
    }
    let quotient = linear::emit(ty, &q, qk);
    if r.is_empty() {
        // rk is in the range of a remainder only if it was not pulled; fold it.
        return Some(if rk == 0 {
            quotient
        } else {
            Expr::add(quotient, make_int(ty, (rk as i128).div_euclid(c as i128)))
        });
    }
    let rest = Expr::div(linear::emit(ty, &r, rk), Expr::const_of(ty, c));
    Some(Expr::add(quotient, rest))
}

/// Rewrites `a % b` (operands simplified), or `None` to keep the node.
pub(super) fn rem(_s: &mut Simplifier, a: &S, b: &S) -> Option<Expr> {
    let (x, y) = (&a.0, &b.0);
    let ty = x.ty();
    if let Some(r) = fold_binary(BinOp::Mod, x, y) {
        return Some(r);
    }
    if let Some(r) = vector::binary(BinOp::Mod, x, y) {
        return Some(r);
    }
    if !is_int(ty) {
        return None;
    }
    let c = const_int(y)?;
    if c == 0 || c == 1 || c == -1 {
        return Some(make_int(ty, 0));
    }
    let m = c.abs();
    // Already a remainder.
    if let Some(ai) = a.1 {
        if ai.min >= 0 && ai.max < m {
            return Some(x.clone());
        }
    }
    if c > 0 {
        // (p % c1) % c2 -> p % c2 when c2 divides c1.
        if let ExprKind::Binary(BinOp::Mod, p, q) = x.kind() {
            if let Some(c1) = const_int(q) {
                if c1 > 0 && c1 % c == 0 {
                    return Some(Expr::rem(p.clone(), y.clone()));
                }
            }
        }
        if no_overflow(ty) {
            if let ExprKind::Ramp { base, stride, lanes } = x.kind() {
                let s = const_int(stride)?;
                let ety = base.ty();
                if s % c == 0 {
                    return Some(Expr::broadcast(Expr::rem(base.clone(), make_int(ety, c)), *lanes));
                }
                let lin = linear::collect(base).filter(|l| l.exact)?;
                if linear::divisible_by(&lin, c as i64) && s >= 0 && s * (*lanes as i128 - 1) < c {
                    return Some(Expr::ramp(make_int(ety, 0), stride.clone(), *lanes));
                }
                return None;
            }
            // (p * 8 + q + 17) % 8 -> (q + 1) % 8.
            let lin = linear::collect(x).filter(|l| l.exact)?;
            let c64 = c as i64;
            let keep: Vec<(Expr, i64)> = lin.terms.iter().filter(|(_, k)| *k != 0 && k % c64 != 0).cloned().collect();
            // Reduce the constant only where that brings it closer to zero (a larger one
            // could overflow where the original did not).
            let k = lin.constant.rem_euclid(c64);
            let k = if k.unsigned_abs() < lin.constant.unsigned_abs() { k } else { lin.constant };
            let dropped = keep.len() < lin.terms.iter().filter(|(_, k)| *k != 0).count();
            if dropped || k != lin.constant {
                if keep.is_empty() {
                    return Some(make_int(ty, lin.constant.rem_euclid(c64) as i128));
                }
                return Some(Expr::rem(linear::emit(ty, &keep, k), y.clone()));
            }
        }
    }
    None
}
